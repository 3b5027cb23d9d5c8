package poseidon

import (
	"context"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/num"
)

// buildHash mirrors neptune's test_poseidon_hash_aux: arity random elements
// from TEST_SEED, each allocated in namespace "data i" (i from 1).
func buildHash(c *Constants, out *num.AllocatedNum, want *fr.Element) func(sys cs.ConstraintSystem) error {
	return func(sys cs.ConstraintSystem) error {
		rng := xorshift.New(xorshift.TestSeed)
		in := make([]num.AllocatedNum, c.Arity)
		vals := make([]fr.Element, c.Arity)
		for i := range in {
			vals[i] = rng.Fr()
			sys.PushIndexed("data ", i+1)
			a, err := num.Alloc(sys, vals[i])
			sys.Pop()
			if err != nil {
				return err
			}
			in[i] = a
		}
		if want != nil {
			*want = c.MustHash(vals)
		}
		h, err := HashCircuit(sys, in, c)
		if out != nil && sys.WitnessMode() {
			*out = h
		}
		return err
	}
}

// Constraint counts asserted by neptune circuit.rs test_poseidon_hash (and
// rust-fil-proofs for arity 11), with the structure digest of each system.
func TestPoseidonCircuit(t *testing.T) {
	cases := []struct {
		arity       int
		strength    Strength
		constraints int
		digest      string
	}{
		{2, Standard, 311, "658f013f99360e164ad8e7f96290944601cc064f93c153d9ea7ac1275927175f"},
		{4, Standard, 377, "2360602a7c4555d454b46891236273f4ae308090bc916fdcef1fb81d00ebbe70"},
		{8, Standard, 505, "ab50aeda63344f7125999ef5c4af7777380b9015ec82ad48bac2213e9353b163"},
		{11, Standard, 598, "e94a28106cbb9a718e525f0f2593ce3b138350047854ebcc3c83472ed482a6f6"},
		{16, Standard, 761, "8a505dae4403e57b9e890c342d06175b1277033ebb1977417179b9170815d9f7"},
		{24, Standard, 1009, "d2442574550d759d9931eb827be35995fabe934c7105e21f4c2af40ca8003f1f"},
		{36, Standard, 1385, "82a32bd5b41ed6413f3b858da811eb7f9a1519b160c082be307a21ff64364465"},
		{2, Strengthened, 367, "bf1c811af8c1909868b46cd4d666164b7fc54d89e0054bf0cb3afff0a5709a55"},
		{4, Strengthened, 433, "791f1044f20896272c7cc97009c916c28281b31af5d62a24cccd06c5cdbc791d"},
		{8, Strengthened, 565, "a672dac8723a1edba0b876996e42ec4e23bb83c571dbc4ae9c17d9f37e363089"},
		{16, Strengthened, 821, "19e8406c81dc0f3ba2f93f340df5fcda19c3fd567d2e11a3637630bbcca2baba"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d-%v", tc.arity, tc.strength), func(t *testing.T) {
			if gadgettest.Light() && (tc.arity > 16 || tc.strength == Strengthened) {
				t.Skip("large arity or strengthened in -short / -race")
			}
			c, err := New(tc.arity, tc.strength, HashType{Kind: MerkleTree})
			if err != nil {
				t.Fatal(err)
			}
			var out num.AllocatedNum
			var want fr.Element
			sys := gadgettest.Run(t, buildHash(c, &out, &want))
			w := c.Width
			formula := 3*(w*c.FullRounds+c.PartialRounds-1) + (w*c.FullRounds + c.PartialRounds - tc.arity)
			if n := sys.NumConstraints(); n != tc.constraints || n != formula {
				t.Fatalf("%d constraints, want %d (formula %d)", n, tc.constraints, formula)
			}
			if sys.NumInputs() != 1 {
				t.Fatalf("%d inputs", sys.NumInputs())
			}
			if err := sys.Check(); err != nil {
				t.Fatal(err)
			}
			if !out.Value.Equal(&want) {
				t.Fatalf("circuit %s, native %s", out.Value.Text(16), want.Text(16))
			}
			t.Logf("digest %s", sys.Hash())
			if tc.digest != "" && sys.Hash() != tc.digest {
				t.Fatalf("structure digest %s, recorded %s", sys.Hash(), tc.digest)
			}
			// A corrupted intermediate value is caught by the constraint using it.
			path := "partial round 0/solitary quintic s-box/l^2/squared num"
			if got := gadgettest.FlipAux(t, sys, path); got != "partial round 0/solitary quintic s-box/l^2/squaring constraint" {
				t.Fatalf("flip of %s caught at %q", path, got)
			}
		})
	}
}

// The circuit must agree with the native hash for every tag kind.
func TestPoseidonCircuitTags(t *testing.T) {
	for _, ht := range []HashType{SnapDealsType, {Kind: ConstantLength, Param: 2}} {
		c, err := New(2, Standard, ht)
		if err != nil {
			t.Fatal(err)
		}
		var out num.AllocatedNum
		var want fr.Element
		sys := gadgettest.Run(t, buildHash(c, &out, &want))
		if err := sys.Check(); err != nil || !out.Value.Equal(&want) || sys.NumConstraints() != 311 {
			t.Fatalf("%v: err %v, %d constraints, match %v", ht, err, sys.NumConstraints(), out.Value.Equal(&want))
		}
	}
	c, _ := New(4, Standard, HashType{Kind: ConstantLength, Param: 2})
	if _, err := HashCircuit(cs.NewTestConstraintSystem(), make([]num.AllocatedNum, 4), c); err == nil {
		t.Fatal("short constant length accepted")
	}
	if _, err := HashCircuit(cs.NewTestConstraintSystem(), make([]num.AllocatedNum, 3), MustMerkle(2)); err == nil {
		t.Fatal("wrong preimage length accepted")
	}
}

// BenchmarkHashCircuitProving synthesizes one hash into a ProvingAssignment
// (witness mode, as the prover runs it), replaying the template ("template")
// and building from the constants as neptune does ("direct").
func BenchmarkHashCircuitProving(b *testing.B) {
	for _, arity := range []int{2, 8, 11} {
		c := MustMerkle(arity)
		rng := xorshift.New(xorshift.TestSeed)
		vals := make([]fr.Element, arity)
		for i := range vals {
			vals[i] = rng.Fr()
		}
		for _, mode := range []string{"template", "direct"} {
			hash := HashCircuit
			if mode == "direct" {
				hash = hashCircuitDirect
			}
			circuit := cs.CircuitFunc(func(sys cs.ConstraintSystem) error {
				in := make([]num.AllocatedNum, arity)
				for i := range in {
					a, err := num.Alloc(sys, vals[i])
					if err != nil {
						return err
					}
					in[i] = a
				}
				_, err := hash(sys, in, c)
				return err
			})
			shape, err := cs.SynthesizeShape(context.Background(), circuit)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%d/%s", arity, mode), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := cs.SynthesizeProving(context.Background(), circuit, shape.Shape()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHashWitness allocates one hash's locals into a witness-only assignment, as the
// compiled path's synthesis runs it: replaying the template ("template") and running the
// permutation natively ("native").
func BenchmarkHashWitness(b *testing.B) {
	for _, arity := range []int{2, 8, 11} {
		c := MustMerkle(arity)
		t, err := templateFor(c)
		if err != nil {
			b.Fatal(err)
		}
		rng := xorshift.New(xorshift.TestSeed)
		pre := make([]num.AllocatedNum, arity)
		for i := range pre {
			pre[i] = num.AllocatedNum{Var: cs.AuxVariable(i), Value: rng.Fr()}
		}
		for _, mode := range []string{"template", "native"} {
			b.Run(fmt.Sprintf("%d/%s", arity, mode), func(b *testing.B) {
				pa := cs.NewWitnessAssignment(cs.Shape{NumAux: t.nLocals})
				for b.Loop() {
					pa.Aux = pa.Aux[:0]
					var err error
					if mode == "native" {
						_, err = t.nativeHash(pa, pre, c)
					} else {
						_, err = t.replay(pa, pre)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		// Every goroutine hashes into its own witness-only assignment as the Merkle gadgets do
		// (constants looked up, then HashCircuit): how the witness scales with cores on this
		// host, shared lookups included (a partition's sectors run so, one goroutine each).
		b.Run(fmt.Sprintf("%d/circuit-parallel", arity), func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				pa := cs.NewWitnessAssignment(cs.Shape{NumAux: t.nLocals})
				for pb.Next() {
					pa.Aux = pa.Aux[:0]
					c, err := New(arity, Standard, HashType{Kind: MerkleTree})
					if err == nil {
						_, err = HashCircuit(pa, pre, c)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkMulParallel runs a chain of field multiplications on every goroutine: the host's
// arithmetic rate per core as more cores run, apart from any memory traffic.
func BenchmarkMulParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		rng := xorshift.New(xorshift.TestSeed)
		x, y := rng.Fr(), rng.Fr()
		for pb.Next() {
			for range 1000 {
				x.Mul(&x, &y)
			}
		}
		if x.IsZero() {
			b.Error("zero product")
		}
	})
}
