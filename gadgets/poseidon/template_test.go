package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/num"
)

// preimageBuilder allocates a preimage whose slots may repeat variables or
// be public inputs, to exercise the template's head merging.
func preimageBuilder(arity int, layout []int, inputs bool) func(sys cs.ConstraintSystem) ([]num.AllocatedNum, error) {
	return func(sys cs.ConstraintSystem) ([]num.AllocatedNum, error) {
		rng := xorshift.New(xorshift.TestSeed)
		distinct := map[int]num.AllocatedNum{}
		out := make([]num.AllocatedNum, arity)
		// Allocate in reverse slot order so variable order differs from slot order.
		for i := arity - 1; i >= 0; i-- {
			id := layout[i]
			if a, ok := distinct[id]; ok {
				out[i] = a
				continue
			}
			sys.PushIndexed("x ", id)
			var a num.AllocatedNum
			var err error
			if inputs && id%2 == 0 {
				a, err = num.AllocInput(sys, rng.Fr())
			} else {
				a, err = num.Alloc(sys, rng.Fr())
			}
			sys.Pop()
			if err != nil {
				return nil, err
			}
			distinct[id] = a
			out[i] = a
		}
		return out, nil
	}
}

func TestTemplateMatchesDirect(t *testing.T) {
	cases := []struct {
		arity  int
		ht     HashType
		layout []int
		inputs bool
	}{
		{2, HashType{Kind: MerkleTree}, []int{0, 0}, false},
		{2, SnapDealsType, []int{1, 0}, true},
		{4, HashType{Kind: MerkleTree}, []int{3, 1, 3, 0}, true},
		{8, HashType{Kind: MerkleTree}, []int{0, 1, 2, 3, 4, 5, 6, 7}, false},
		{8, HashType{Kind: ConstantLength, Param: 8}, []int{5, 5, 5, 5, 5, 5, 5, 5}, false},
		{11, HashType{Kind: MerkleTree}, []int{0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7}, true},
	}
	for _, tc := range cases {
		c, err := New(tc.arity, Standard, tc.ht)
		if err != nil {
			t.Fatal(err)
		}
		alloc := preimageBuilder(tc.arity, tc.layout, tc.inputs)
		run := func(direct bool) (*cs.TestConstraintSystem, fr.Element) {
			var out fr.Element
			sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
				in, err := alloc(sys)
				if err != nil {
					return err
				}
				var h num.AllocatedNum
				if direct {
					h, err = hashCircuitDirect(sys, in, c)
				} else {
					h, err = HashCircuit(sys, in, c)
				}
				if sys.WitnessMode() {
					out = h.Value
				}
				return err
			})
			return sys, out
		}
		d, dv := run(true)
		tm, tv := run(false)
		if err := tm.Check(); err != nil {
			t.Fatalf("arity %d %v: %v", tc.arity, tc.layout, err)
		}
		if d.Hash() != tm.Hash() || !dv.Equal(&tv) || d.NumConstraints() != tm.NumConstraints() {
			t.Fatalf("arity %d %v: template differs from direct synthesis", tc.arity, tc.layout)
		}
		for i := 0; i < d.NumConstraints(); i++ {
			if d.ConstraintPath(i) != tm.ConstraintPath(i) {
				t.Fatalf("constraint %d named %q vs %q", i, tm.ConstraintPath(i), d.ConstraintPath(i))
			}
		}
		for i := 0; i < d.NumAux(); i++ {
			if d.AuxName(i) != tm.AuxName(i) {
				t.Fatalf("aux %d named %q vs %q", i, tm.AuxName(i), d.AuxName(i))
			}
		}
	}
}

// Templates are shared by concurrent syntheses (one per partition).
func TestTemplateConcurrent(t *testing.T) {
	c := MustMerkle(8)
	want := ""
	errs := make(chan error, 4)
	hashes := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func() {
			sys := cs.NewTestConstraintSystem()
			if err := buildHash(c, nil, nil)(sys); err != nil {
				errs <- err
				return
			}
			if err := sys.Check(); err != nil {
				errs <- err
				return
			}
			errs <- nil
			hashes <- sys.Hash()
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for g := 0; g < 4; g++ {
		h := <-hashes
		if want == "" {
			want = h
		}
		if h != want {
			t.Fatal("concurrent syntheses differ")
		}
	}
}
