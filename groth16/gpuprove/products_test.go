package gpuprove

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/priority"
)

// blockCircuit is a blocked circuit in the style of the Filecoin ones: a prefix with a public
// input and a few aux values, then n blocks of bits packed into a number, a public input per
// block, a product with the prefix's input, large and small coefficients, and a term that reads
// the prefix variable its block's index picks (recorded as a moved term).
type blockCircuit struct {
	n    int
	seed uint64
}

func frOf(v int64) *fr.Element {
	var e fr.Element
	e.SetInt64(v)
	return &e
}

func (c blockCircuit) prefix(s cs.ConstraintSystem) (cs.BlockFunc, error) {
	x, err := s.AllocInputValue("x", frOf(int64(c.seed%97+3)))
	if err != nil {
		return nil, err
	}
	p := []cs.Variable{x}
	for k := int64(0); k < 3; k++ {
		v, err := s.AllocValue("p", frOf(int64(c.seed%13)+k))
		if err != nil {
			return nil, err
		}
		p = append(p, v)
	}
	var big fr.Element
	big.SetString("0x1234567890abcdef1234567890abcdef1234567890abcdef")
	s.Enforce("p", cs.NewLC(0).AddTerm(&big, p[1]).AddCoeff(3, p[2]), cs.LCOf(cs.One), cs.NewLC(0).AddTerm(&big, p[1]).AddCoeff(3, p[2]))
	return func(s cs.ConstraintSystem, i int) error { return c.block(s, p, i) }, nil
}

func (c blockCircuit) block(s cs.ConstraintSystem, p []cs.Variable, i int) error {
	rng := rand.New(rand.NewPCG(c.seed, uint64(i)))
	var sum cs.LinearCombination
	val := int64(0)
	for k := 0; k < 16; k++ {
		bit := int64(rng.IntN(2))
		v, err := s.AllocValue("bit", frOf(bit))
		if err != nil {
			return err
		}
		s.Enforce("boolean", cs.NewLC(0).Add(cs.One).Sub(v), cs.LCOf(v), nil)
		sum = sum.AddCoeff(1<<k, v)
		val += bit << k
	}
	packed, err := s.AllocValue("packed", frOf(val))
	if err != nil {
		return err
	}
	s.Enforce("pack", sum, cs.LCOf(cs.One), cs.LCOf(packed))
	in, err := s.AllocInputValue("in", frOf(val))
	if err != nil {
		return err
	}
	s.Enforce("in", cs.LCOf(in), cs.LCOf(cs.One), cs.LCOf(packed))
	var prod fr.Element
	prod.Mul(frOf(val), frOf(int64(c.seed%97+3)))
	pv, err := s.AllocValue("prod", &prod)
	if err != nil {
		return err
	}
	s.Enforce("prod", cs.LCOf(packed), cs.NewLC(0).Add(p[0]).AddCoeff(0, p[2]), cs.LCOf(pv))
	q := p[1+i%3]
	s.Enforce("moving a", cs.NewLC(0).AddCoeff(5, q).Add(packed), cs.LCOf(cs.One), cs.NewLC(0).AddCoeff(5, q).Add(packed))
	s.Enforce("moving b", cs.LCOf(cs.One), cs.LCOf(q), cs.LCOf(q))
	return nil
}

// Synthesize implements cs.Circuit.
func (c blockCircuit) Synthesize(s cs.ConstraintSystem) error {
	block, err := c.prefix(s)
	if err != nil {
		return err
	}
	for i := 0; i < c.n; i++ {
		if err := block(s, i); err != nil {
			return err
		}
	}
	return nil
}

var (
	blockSetupOnce sync.Once
	blockPK        *groth16.Parameters
	blockComp      *cs.Compiled
	blockSetupErr  error
)

// blockSetup returns the parameters and the compiled form of blockCircuit{n: 200, seed: 5}.
func blockSetup(t testing.TB) (blockCircuit, *groth16.Parameters, *cs.Compiled) {
	t.Helper()
	c := blockCircuit{n: 200, seed: 5}
	blockSetupOnce.Do(func() {
		ctx := context.Background()
		if blockPK, blockSetupErr = groth16.SetupFromSeed(ctx, c, []byte("deferred products")); blockSetupErr != nil {
			return
		}
		blockComp, blockSetupErr = cs.Compile(ctx, "block-test", c.prefix, c.n, 2)
	})
	if blockSetupErr != nil {
		t.Fatal(blockSetupErr)
	}
	if len(blockComp.Moved) == 0 || blockComp.Blocks != c.n {
		t.Fatalf("the test circuit has %d moved terms and %d blocks: not the shape the test needs", len(blockComp.Moved), blockComp.Blocks)
	}
	return c, blockPK, blockComp
}

// deferredWitness is the witness of c with its products deferred; corrupt changes one aux
// value of a block (the partition then has an unsatisfied row).
func deferredWitness(t testing.TB, c blockCircuit, comp *cs.Compiled, corrupt bool) *cs.ProvingAssignment {
	t.Helper()
	pa, err := cs.WitnessBlocks(context.Background(), comp, c.prefix, c.n, 4)
	if err != nil {
		t.Fatal(err)
	}
	if corrupt {
		pa.Aux[comp.PrefixAux+7*comp.BlockAux+3].SetUint64(2) // a bit of block 7
	}
	if err := comp.Defer(pa); err != nil {
		t.Fatal(err)
	}
	return pa
}

// blockCPUProof is the CPU prover's proof of c's witness with r, s (products on the host).
func blockCPUProof(t testing.TB, c blockCircuit, pk *groth16.Parameters, comp *cs.Compiled, r, s fr.Element) []byte {
	t.Helper()
	pa, err := cs.WitnessBlocks(context.Background(), comp, c.prefix, c.n, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Complete(context.Background(), pa, 2); err != nil {
		t.Fatal(err)
	}
	pr, err := groth16.ProveAssignment(context.Background(), pk, pa, &r, &s)
	if err != nil {
		t.Fatal(err)
	}
	return proofBytes(pr)
}

// proveDeferred proves blockCircuit's deferred witness with p and r, s = fixedRS(i), and checks
// the proof bytes against the CPU prover's.
func proveDeferred(t *testing.T, p *Prover, i int) ProveResult {
	t.Helper()
	c, pk, comp := blockSetup(t)
	r, s := fixedRS(i)
	res, err := p.Prove(context.Background(), ProveRequest{JobID: "j", Kind: "snap-prove", Class: priority.Seal,
		PK: pk, PA: deferredWitness(t, c, comp, false), R: r, S: s})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(proofBytes(res.Proof), blockCPUProof(t, c, pk, comp, r, s)) {
		t.Errorf("plan %s: proof differs from the CPU prover's with the same r, s", res.Run.Plan)
	}
	return res
}

// proveCorrupted proves blockCircuit's witness with a corrupted bit (deferredWitness) with p.
func proveCorrupted(t *testing.T, p *Prover) (ProveResult, error) {
	t.Helper()
	c, pk, comp := blockSetup(t)
	r, s := fixedRS(0)
	return p.Prove(context.Background(), ProveRequest{JobID: "j", Kind: "snap-prove", Class: priority.Seal,
		PK: pk, PA: deferredWitness(t, c, comp, true), R: r, S: s})
}

// TestDeferredProductsSimulated: a partition whose products were deferred gets a plan with the
// circuit's matrices resident where the device has room for the wide plan, and the host
// computes them before admission where not; the proof bytes equal the CPU prover's either way,
// and an unsatisfied row is reported as cs.ErrUnsatisfied.
func TestDeferredProductsSimulated(t *testing.T) {
	_, pk, comp := blockSetup(t)
	for i, tc := range []struct {
		name     string
		mem      uint64
		resident bool
		onDevice bool
	}{{"h200", 140 << 30, true, true}, {"no residency", 140 << 30, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			dev := sim.New(sim.Config{Name: "sim", TotalMem: tc.mem})
			sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: -1,
				SRSResidency: tc.resident})
			if err != nil {
				t.Fatal(err)
			}
			defer sched.Close()
			p := NewProver(sched)
			if got := p.ProductsOnDevice(pk, comp); got != tc.onDevice {
				t.Fatalf("ProductsOnDevice = %v, want %v", got, tc.onDevice)
			}
			res := proveDeferred(t, p, i)
			resident := false
			for _, rn := range res.Run.Plan.Resident {
				if rn.Key == gpu.CircuitKey(p.circuits.key(comp)) {
					resident = rn.Bytes == newCircuitImage(comp).size
				}
			}
			if resident != tc.onDevice {
				t.Errorf("plan %s: matrices resident %v, want %v", res.Run.Plan, resident, tc.onDevice)
			}
			_, err = proveCorrupted(t, p)
			var ue *cs.UnsatisfiedRowError
			if !errors.Is(err, cs.ErrUnsatisfied) || !errors.As(err, &ue) || ue.Row < comp.PrefixRows+7*comp.BlockRows {
				t.Errorf("corrupted witness: %v, want an unsatisfied row in block 7", err)
			}
		})
	}
}

// TestCircuitImage: the image's arrays do not overlap, stay inside it, and the moved terms
// regrouped by row keep every term once.
func TestCircuitImage(t *testing.T) {
	_, _, comp := blockSetup(t)
	im := newCircuitImage(comp)
	if !im.fits() || !im.hasMoved() {
		t.Fatalf("image of the test circuit: fits %v, moved %v", im.fits(), im.hasMoved())
	}
	end := uint64(0)
	for _, p := range im.parts() {
		if p.off < end || p.off%256 != 0 {
			t.Fatalf("part at %d overlaps the one before (ends at %d) or is unaligned", p.off, end)
		}
		end = p.off + uint64(len(p.b))
	}
	if end > im.size {
		t.Fatalf("parts end at %d, past the image's %d bytes", end, im.size)
	}
	start, term, cols := movedByRow(comp)
	if int(start[len(start)-1]) != len(comp.Moved) || len(term) != len(comp.Moved) || len(cols) != len(comp.Moved)*comp.Blocks {
		t.Fatalf("moved by row: %d entries, %d terms, %d cols for %d moved terms", start[len(start)-1], len(term), len(cols), len(comp.Moved))
	}
	for _, mv := range comp.Moved {
		found := false
		for e := start[mv.Row]; e < start[mv.Row+1]; e++ {
			if term[e] == uint32(mv.Matrix)<<16|uint32(mv.Coef) && cols[int(e)*comp.Blocks+3] == mv.Cols[3] {
				found = true
			}
		}
		if !found {
			t.Errorf("moved term of row %d (matrix %d) not in its row's entries", mv.Row, mv.Matrix)
		}
	}
}
