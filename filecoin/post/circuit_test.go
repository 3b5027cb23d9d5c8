package post

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	gmerkle "github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/poseidon"
)

func randFr(r *rand.Rand) fr.Element {
	var e fr.Element
	e.SetUint64(r.Uint64())
	var m fr.Element
	m.SetUint64(r.Uint64())
	e.Mul(&e, &m)
	return e
}

// randomCircuit builds a satisfied witness of cfg from random trees, one tree per distinct
// sector (the last sector is repeated when pad is set, as short partitions are).
func randomCircuit(t testing.TB, cfg Config, seed uint64, pad int) (*Circuit, []fr.Element) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	shape := gmerkle.Shape{Base: cfg.Tree.Base, Sub: cfg.Tree.Sub, Top: cfg.Tree.Top}
	c := &Circuit{Config: cfg}
	var inputs []fr.Element
	for s := 0; s < cfg.Sectors-pad; s++ {
		leaves := make([]fr.Element, cfg.Nodes)
		for i := range leaves {
			leaves[i] = randFr(r)
		}
		tr, err := gmerkle.Build(gmerkle.Poseidon{}, shape, leaves)
		if err != nil {
			t.Fatal(err)
		}
		sec := CircuitSector{CommC: randFr(r), CommRLast: tr.Root()}
		if sec.CommR, err = poseidon.HashMerkle(sec.CommC, sec.CommRLast); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, sec.CommR)
		for j := 0; j < cfg.Challenges; j++ {
			leaf := r.IntN(int(cfg.Nodes))
			p, err := tr.Proof(leaf)
			if err != nil {
				t.Fatal(err)
			}
			sec.Leafs = append(sec.Leafs, p.Leaf)
			sec.Paths = append(sec.Paths, p.Path)
			inputs = append(inputs, fr.NewElement(uint64(leaf)))
		}
		c.Sectors = append(c.Sectors, sec)
	}
	per := 1 + cfg.Challenges
	for len(c.Sectors) < cfg.Sectors {
		c.Sectors = append(c.Sectors, c.Sectors[len(c.Sectors)-1])
		inputs = append(inputs, inputs[len(inputs)-per:]...)
	}
	return c, inputs
}

// The storage-proofs-post fallback circuit tests (circuit-fingerprints §6): 5 challenges per
// sector, trees of 64 × base-tree-count leaves.
func TestFallbackFingerprints(t *testing.T) {
	cases := []struct {
		name        string
		tree        prooftypes.TreeShape
		nodes       uint64
		sectors     int
		pad         int
		inputs      int
		constraints int
	}{
		{"single_partition_base_8", prooftypes.TreeShape{Base: 8}, 64, 3, 0, 19, 16869},
		{"single_partition_sub_8_4", prooftypes.TreeShape{Base: 8, Sub: 4}, 256, 3, 0, 19, 22674},
		{"single_partition_top_8_4_2", prooftypes.TreeShape{Base: 8, Sub: 4, Top: 2}, 512, 3, 0, 19, 27384},
		{"two_partitions_base_8", prooftypes.TreeShape{Base: 8}, 64, 2, 0, 13, 11246},
		{"single_partition_smaller_base_8", prooftypes.TreeShape{Base: 8}, 64, 3, 1, 19, 16869},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Sectors: tc.sectors, Challenges: 5, Tree: tc.tree, Nodes: tc.nodes}
			c, inputs := randomCircuit(t, cfg, 1, tc.pad)
			tcs := cs.NewTestConstraintSystem()
			if err := c.Synthesize(tcs); err != nil {
				t.Fatal(err)
			}
			if err := tcs.Check(); err != nil {
				t.Fatalf("not satisfied: %v", err)
			}
			if tcs.NumInputs() != tc.inputs || tcs.NumConstraints() != tc.constraints {
				t.Fatalf("%d inputs / %d constraints, want %d / %d", tcs.NumInputs(), tcs.NumConstraints(), tc.inputs, tc.constraints)
			}
			got := tcs.Inputs()
			if len(got) != len(inputs)+1 || !got[0].IsOne() {
				t.Fatalf("%d inputs", len(got))
			}
			for i := range inputs {
				if !got[i+1].Equal(&inputs[i]) {
					t.Fatalf("input %d (%s) differs from the public input", i+1, tcs.InputName(i+1))
				}
			}
			if n := tcs.InputName(1); n != "outer namespace/sector_0/comm_r_input/input variable" {
				t.Errorf("input 1 is %q", n)
			}
			if n := tcs.InputName(2); n != "outer namespace/sector_0/challenge_inclusion_0/path/input 0" {
				t.Errorf("input 2 is %q", n)
			}
			blank, err := cs.SynthesizeShape(context.Background(), Blank(cfg))
			if err != nil {
				t.Fatal(err)
			}
			if s := blank.Shape(); s.NumInputs != tc.inputs || s.NumConstraints != tc.constraints+tc.inputs || s.NumAux != tcs.NumAux() {
				t.Errorf("blank shape %+v, witness %d aux", s, tcs.NumAux())
			}
			// A wrong leaf breaks the circuit.
			bad := *c
			bad.Sectors = append([]CircuitSector(nil), c.Sectors...)
			bad.Sectors[0].Leafs = append([]fr.Element(nil), c.Sectors[0].Leafs...)
			bad.Sectors[0].Leafs[2].SetUint64(12345)
			tcs = cs.NewTestConstraintSystem()
			if err := bad.Synthesize(tcs); err != nil {
				t.Fatal(err)
			}
			if tcs.IsSatisfied() {
				t.Fatal("circuit with a wrong leaf is satisfied")
			}
		})
	}
}

// test_fallback_post_circuit_poseidon_base_8_bench_cs: the blank circuit with a 2^30-leaf
// 8-0-0 tree, 10 challenges, 5 sectors.
func TestFallbackBlankBench(t *testing.T) {
	cfg := Config{Sectors: 5, Challenges: 10, Tree: prooftypes.TreeShape{Base: 8}, Nodes: 1 << 30}
	s, err := cs.SynthesizeShape(context.Background(), Blank(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Shape().NumConstraints - s.Shape().NumInputs; got != 266665 {
		t.Fatalf("%d constraints, want 266,665", got)
	}
	if s.Shape().NumInputs != cfg.PublicInputs() {
		t.Fatalf("%d inputs", s.Shape().NumInputs)
	}
}

func TestSynthesizeParallelEqualsSequential(t *testing.T) {
	cfg := Config{Sectors: 5, Challenges: 2, Tree: prooftypes.TreeShape{Base: 8}, Nodes: 64}
	c, _ := randomCircuit(t, cfg, 3, 1)
	ctx := context.Background()
	seq, err := cs.SynthesizeProving(ctx, c, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{0, 2, 3} {
		par, err := SynthesizeParallel(ctx, c, workers)
		if err != nil {
			t.Fatal(err)
		}
		if seq.Shape() != par.Shape() {
			t.Fatalf("workers %d: shape %+v vs %+v", workers, par.Shape(), seq.Shape())
		}
		for i := range seq.A {
			if seq.A[i] != par.A[i] || seq.B[i] != par.B[i] || seq.C[i] != par.C[i] {
				t.Fatalf("workers %d: row %d differs", workers, i)
			}
		}
		for i := range seq.Aux {
			if seq.Aux[i] != par.Aux[i] {
				t.Fatalf("workers %d: aux %d differs", workers, i)
			}
		}
		for i := range seq.Input {
			if seq.Input[i] != par.Input[i] {
				t.Fatalf("workers %d: input %d differs", workers, i)
			}
		}
		for k, d := range [][2]*cs.Density{{seq.AAuxDensity, par.AAuxDensity}, {seq.BInputDensity, par.BInputDensity}, {seq.BAuxDensity, par.BAuxDensity}} {
			if d[0].Len() != d[1].Len() || d[0].Count() != d[1].Count() {
				t.Fatalf("workers %d: density %d differs", workers, k)
			}
			for j := 0; j < d[0].Len(); j++ {
				if d[0].IsSet(j) != d[1].IsSet(j) {
					t.Fatalf("workers %d: density %d bit %d differs", workers, k, j)
				}
			}
		}
	}
	if _, err := SynthesizeParallel(ctx, Blank(cfg), 2); err == nil {
		t.Error("parallel synthesis of a blank circuit accepted")
	}
}

func TestConfigShape(t *testing.T) {
	for _, cfg := range []Config{
		{Sectors: 3, Challenges: 5, Tree: prooftypes.TreeShape{Base: 8, Sub: 4, Top: 2}, Nodes: 512},
		{Sectors: 66, Challenges: 1, Tree: prooftypes.TreeShape{Base: 8, Sub: 8}, Nodes: 1 << 30},
	} {
		got, err := cfg.Shape(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s, err := cs.SynthesizeShape(context.Background(), Blank(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if got != s.Shape() {
			t.Errorf("%+v: shape %+v, blank synthesis %+v", cfg, got, s.Shape())
		}
	}
}

// The WindowPoSt partition sizes published next to WINDOW_POST_SECTOR_COUNT in
// filecoin-proofs/src/constants.rs, from the blank circuit's per-sector block.
func TestWindowPoStProductionCounts(t *testing.T) {
	for _, c := range []struct {
		pt          abi.RegisteredPoStProof
		constraints int
	}{{abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1, 125279217}, {abi.RegisteredPoStProof_StackedDrgWindow64GiBV1_1, 129887900}} {
		p, _ := Lookup(c.pt)
		s, err := p.Config().Shape(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NumConstraints - s.NumInputs; got != c.constraints || s.NumInputs != p.PublicInputs() || s.DomainSize() != 1<<27 {
			t.Errorf("%s: %d constraints, %d inputs, domain %d; want %d", p.Name, got, s.NumInputs, s.DomainSize(), c.constraints)
		}
	}
}
