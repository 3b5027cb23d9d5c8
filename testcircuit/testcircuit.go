// Package testcircuit builds deterministic synthetic circuits of any size whose witnesses look
// like Filecoin's: about 7/8 of the aux variables are bits (booleanity and XOR constraints, as
// SHA-256 gadgets produce), the rest are field elements from packed bits times earlier values.
// Benchmarks, the daemon's "test" proof kind and demos use them.
package testcircuit

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
)

// NumPublicInputs is the number of public inputs of every test circuit (ONE excluded).
const NumPublicInputs = 4

// MinConstraints is the smallest supported size: the input rows plus one circuit constraint.
const MinConstraints = NumPublicInputs + 2

// Circuit is a synthetic circuit. Its R1CS has exactly Constraints rows once the prover appends
// the input rows (so a power of two fills its FFT domain exactly); structure and witness depend
// only on Seed.
type Circuit struct {
	Constraints int
	Seed        uint64 // structure (and, when WitnessSeed is 0, the witness)
	WitnessSeed uint64 // witness values and public inputs; circuits differing only here share parameters
}

// New returns the circuit of the given total constraint count (including the input rows the
// prover appends) and seed.
func New(constraints int, seed uint64) *Circuit {
	return &Circuit{Constraints: constraints, Seed: seed}
}

// NewWithWitness returns the circuit of New(constraints, seed) with a different witness: same
// R1CS (same parameters), other bit values and public inputs.
func NewWithWitness(constraints int, seed, witnessSeed uint64) *Circuit {
	return &Circuit{Constraints: constraints, Seed: seed, WitnessSeed: witnessSeed}
}

func (c *Circuit) witnessSeed() uint64 {
	if c.WitnessSeed != 0 {
		return c.WitnessSeed
	}
	return c.Seed
}

// splitmix64 is a small deterministic generator.
type splitmix64 struct{ s uint64 }

func (r *splitmix64) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *splitmix64) element() fr.Element {
	var e fr.Element
	e.SetUint64(r.next())
	var h fr.Element
	h.SetUint64(r.next())
	var shift fr.Element
	shift.SetUint64(1 << 63)
	h.Mul(&h, &shift).Mul(&h, &shift) // spread over the field: h·2^126 + low
	return *e.Add(&e, &h)
}

// PublicInputs returns the circuit's public inputs (ONE excluded), in allocation order.
func (c *Circuit) PublicInputs() []fr.Element {
	vals := splitmix64{s: c.witnessSeed() ^ 0x5eed0f1a9e5}
	out := make([]fr.Element, NumPublicInputs)
	for i := range out {
		out[i] = vals.element()
	}
	return out
}

const (
	ringBits   = 64
	ringFields = 16
)

type slot struct {
	v   cs.Variable
	val fr.Element
}

// synth is the state of one synthesis: rings of recent bits and field values.
type synth struct {
	s       cs.ConstraintSystem
	witness bool
	shape   splitmix64 // drives the structure; identical in every mode
	vals    splitmix64 // drives bit values; used only in witness mode
	bits    [ringBits]slot
	fields  [ringFields]slot
	nb, nf  int

	// Reused combinations: Enforce does not retain them.
	la, lb, lc cs.LinearCombination
}

var coeffs = func() (c [8]fr.Element) {
	for i := range c {
		c[i].SetUint64(1 << i)
	}
	return c
}()

var two = fr.NewElement(2)

// Synthesize implements cs.Circuit.
func (c *Circuit) Synthesize(s cs.ConstraintSystem) error {
	body := c.Constraints - NumPublicInputs - 1 // the prover adds one row per input, ONE included
	if body < 1 {
		return fmt.Errorf("testcircuit: %d constraints is below the minimum %d", c.Constraints, MinConstraints)
	}
	st := &synth{s: s, witness: s.WitnessMode(), shape: splitmix64{s: c.Seed}, vals: splitmix64{s: c.witnessSeed() ^ 0xb175}}
	for i, x := range c.PublicInputs() {
		v, err := s.AllocInputValue(fmt.Sprintf("input %d", i), &x)
		if err != nil {
			return err
		}
		st.fields[st.nf%ringFields] = slot{v, x}
		st.nf++
	}
	for i := 0; i < body; i++ {
		s.PushIndexed("step ", i)
		var err error
		if i < ringBits {
			err = st.freshBit() // fill the bit ring so that XOR and packing find operands
		} else {
			err = st.step()
		}
		s.Pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// step adds one constraint: 4/8 fresh bits, 3/8 XORs, 1/8 packed-bits products.
func (st *synth) step() error {
	t := st.shape.next()
	switch k := t & 7; {
	case k < 4:
		return st.freshBit()
	case k < 7: // XOR: (2a)·b = a + b − c
		a := &st.bits[(t>>8)%ringBits]
		b := &st.bits[(t>>16)%ringBits]
		var cv fr.Element
		if st.witness {
			var ab fr.Element
			ab.Mul(&a.val, &b.val).Mul(&ab, &two)
			cv.Add(&a.val, &b.val).Sub(&cv, &ab)
		}
		v, err := st.s.AllocValue("xor", &cv)
		if err != nil {
			return err
		}
		st.la = st.la[:0].AddTerm(&two, a.v)
		st.lb = st.lb[:0].Add(b.v)
		st.lc = st.lc[:0].Add(a.v).Add(b.v).Sub(v)
		st.s.Enforce("xor constraint", st.la, st.lb, st.lc)
		st.bits[st.nb%ringBits] = slot{v, cv}
		st.nb++
	default: // (Σ 2^i·bit_i + x)·y = z
		x := &st.fields[(t>>8)%uint64(min(st.nf, ringFields))]
		y := &st.fields[(t>>16)%uint64(min(st.nf, ringFields))]
		lc := st.la[:0]
		var packed fr.Element
		for i := 0; i < 8; i++ {
			bt := &st.bits[(int(t>>24)+i*7)%ringBits]
			lc = lc.AddTerm(&coeffs[i], bt.v)
			if st.witness {
				var tt fr.Element
				tt.Mul(&coeffs[i], &bt.val)
				packed.Add(&packed, &tt)
			}
		}
		lc = lc.Add(x.v)
		var zv fr.Element
		if st.witness {
			packed.Add(&packed, &x.val)
			zv.Mul(&packed, &y.val)
		}
		v, err := st.s.AllocValue("field", &zv)
		if err != nil {
			return err
		}
		st.la = lc
		st.lb = st.lb[:0].Add(y.v)
		st.lc = st.lc[:0].Add(v)
		st.s.Enforce("field constraint", lc, st.lb, st.lc)
		st.fields[st.nf%ringFields] = slot{v, zv}
		st.nf++
	}
	return nil
}

// freshBit allocates a bit with its booleanity constraint (1 − b)·b = 0.
func (st *synth) freshBit() error {
	var bv fr.Element
	if st.witness && st.vals.next()&1 == 1 {
		bv.SetOne()
	}
	v, err := st.s.AllocValue("bit", &bv)
	if err != nil {
		return err
	}
	st.la = st.la[:0].Add(cs.One).Sub(v)
	st.lb = st.lb[:0].Add(v)
	st.s.Enforce("boolean", st.la, st.lb, nil)
	st.bits[st.nb%ringBits] = slot{v, bv}
	st.nb++
	return nil
}

// DevnetParameters generates insecure parameters for New(constraints, seed) from paramSeed
// (see groth16.SetupFromSeed): for tests, benchmarks and devnets only.
func DevnetParameters(ctx context.Context, constraints int, seed uint64, paramSeed []byte) (*groth16.Parameters, error) {
	return groth16.SetupFromSeed(ctx, New(constraints, seed), paramSeed)
}
