// Package cs is a rank-1 constraint system with bellpepper semantics over BLS12-381 Fr.
//
// A Circuit synthesizes itself into a ConstraintSystem by allocating variables (Alloc, AllocInput)
// and enforcing constraints A·B = C over linear combinations. Input 0 is the constant ONE.
// The same circuit code runs against several systems:
//
//   - ProvingAssignment: witness mode; evaluates every constraint immediately into the a, b, c
//     vectors and tracks the density bitsets that the Groth16 prover needs (bellperson's rules).
//   - ShapeSystem: blank mode; counts inputs, aux and constraints and tracks densities without
//     witness values, in memory proportional to the number of variables (bits, not field elements).
//   - R1CS: records the constraint matrices (for key generation and tests).
//   - TestConstraintSystem: records named constraints and values, checks satisfaction and names
//     the first failing constraint by its namespace path; computes bellpepper's cs.hash().
//
// The drivers (SynthesizeProving, SynthesizeShape, RecordR1CS) add the ONE input first and, after
// the circuit, one constraint input_i · 0 = 0 per input, exactly as bellperson does.
package cs
