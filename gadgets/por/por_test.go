package por

import (
	"fmt"
	"os"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/num"
)

func buildTree(t *testing.T, h merkle.Hasher, shape merkle.Shape, leaves int) *merkle.Tree {
	t.Helper()
	rng := xorshift.New(xorshift.TestSeed)
	data := make([]fr.Element, leaves)
	for i := range data {
		data[i] = rng.Fr()
		if _, ok := h.(merkle.Poseidon); !ok {
			// Sha256 and Blake2s domains are below 2^254.
			b := data[i].Bits()
			b[3] &= 1<<62 - 1
			data[i] = fr.Element{}
			data[i].SetBigInt(bitsToBig(b))
		}
	}
	tr, err := merkle.Build(h, shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// PoR counts of storage-proofs-core tests/por_circuit.rs (circuit-fingerprints.md §4).
func TestPoRCircuit(t *testing.T) {
	exhaustive := os.Getenv("GADGETS_EXHAUSTIVE") == "1"
	cases := []struct {
		name        string
		hasher      string
		shape       merkle.Shape
		leaves      int
		private     bool
		inputs      int
		constraints int
		heavy       bool
		digest      string
	}{
		{"poseidon_base_2", "poseidon", merkle.Shape{Base: 2}, 64, false, 3, 1887, false, "e4a6b97ab322b5265befdbededdd16353db058e22cd88a9a9960f0f32efb95e9"},
		{"poseidon_base_4", "poseidon", merkle.Shape{Base: 4}, 64, false, 3, 1164, false, "ec45a446c4037ab2077accf70eff6ac48a5beba219648491be3e67a3f4b0c68c"},
		{"poseidon_base_8", "poseidon", merkle.Shape{Base: 8}, 64, false, 3, 1063, false, "3bd8cb4719e1ce8b020c078159a77bd5cf9d8eca04ed094eaca290c621f10a20"},
		{"poseidon_sub_8_2", "poseidon", merkle.Shape{Base: 8, Sub: 2}, 128, false, 3, 1377, false, "a04df283d7f0ecff20e7c42f6bb497b2714c70c4124f5489e881c23e67814070"},
		{"poseidon_top_8_4_2", "poseidon", merkle.Shape{Base: 8, Sub: 4, Top: 2}, 512, false, 3, 1764, false, "6badd752fa6a04dc492ae54080ea68de802e67510aaad087c7a83abb2158624a"},
		{"poseidon_sub_8_8", "poseidon", merkle.Shape{Base: 8, Sub: 8}, 512, false, 3, 1593, false, "eca5c6440650cc590e477789dbbcc685627355c9c5dc6008dcb9fc6bfb8d34b8"},
		{"poseidon_top_8_8_2", "poseidon", merkle.Shape{Base: 8, Sub: 8, Top: 2}, 1024, false, 3, 1907, false, "1aaf5b3ff8221455ad5ba57746f23db956a2de780213b68d65d8ea0165607e84"},
		{"poseidon_top_8_2_4", "poseidon", merkle.Shape{Base: 8, Sub: 2, Top: 4}, 512, false, 3, 1764, false, "ac74fcc017176bc18e77b5582225cf900dd5a8d3b82cd21462608906eb16baf1"},
		{"poseidon_base_2_private_root", "poseidon", merkle.Shape{Base: 2}, 64, true, 2, 1886, false, "50591f837498dec42fd5f021c2ef48eaa3ab858a3aae9dbf522abae3b31d29a8"},
		{"poseidon_base_4_private_root", "poseidon", merkle.Shape{Base: 4}, 64, true, 2, 1163, false, "2e0954a592b49c6cd0ce01f7a0ee913cddcc0fb964c7490bfb14a2c9511f0764"},
		{"poseidon_base_8_private_root", "poseidon", merkle.Shape{Base: 8}, 64, true, 2, 1062, false, "a87d5c076c5882911c7073da19dba3a6bc1cfb7bd107afae8a18337734146519"},
		{"sha256_base_2", "sha256", merkle.Shape{Base: 2}, 64, false, 3, 272295, false, "06101b213e985a06aa97367fb756d504912d2edfa7169fe7390f3563e2b7bdbf"},
		{"sha256_base_4", "sha256", merkle.Shape{Base: 4}, 64, false, 3, 216258, true, "5e289198928d86549f36c81cfc167c6446d861f562620ff9289a00c931123960"},
		{"sha256_base_8", "sha256", merkle.Shape{Base: 8}, 64, false, 3, 250987, true, "f496fb64a3a535a75ff431c0d4618b6d49624f14a09d27b3ae62cade470307c0"},
		{"blake2s_base_2", "blake2s", merkle.Shape{Base: 2}, 64, false, 3, 129135, true, "4d1b2b5e2ec35bdfae28353d59c3db2883da1d3493fa3912e05e92f78d328288"},
		{"blake2s_base_4", "blake2s", merkle.Shape{Base: 4}, 64, false, 3, 130296, true, "90c935c540858a32d1a68c94b5698644af5e62737abe9233f23a688609dc265f"},
		{"blake2s_base_8", "blake2s", merkle.Shape{Base: 8}, 64, false, 3, 174503, true, "381292978c6bddbcc4ea6341a6de2f582f3a57ab326d9aca82470f31018d2fe9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !exhaustive && (tc.heavy || tc.hasher != "poseidon" && gadgettest.Light()) {
				t.Skip("heavy SHA-256 PoR: set GADGETS_EXHAUSTIVE=1")
			}
			var nh merkle.Hasher = merkle.Poseidon{}
			var ch Hasher = PoseidonHasher{}
			switch tc.hasher {
			case "sha256":
				nh, ch = merkle.Sha254{}, Sha256Hasher{}
			case "blake2s":
				nh, ch = merkle.Blake2s{}, Blake2sHasher{}
			}
			tr := buildTree(t, nh, tc.shape, tc.leaves)
			levels, err := BaseLevels(tc.shape, tc.leaves)
			if err != nil {
				t.Fatal(err)
			}
			challenges := []int{0, tc.leaves/2 + 3, tc.leaves - 1}
			if tc.hasher != "poseidon" {
				challenges = []int{tc.leaves/2 + 3}
			}
			for k, challenge := range challenges {
				p, err := tr.Proof(challenge)
				if err != nil {
					t.Fatal(err)
				}
				circuit := &Circuit{Hasher: ch, Shape: tc.shape, BaseLevels: levels,
					Leaf: Value{Val: p.Leaf}, Path: p.Path, Root: Value{Val: p.Root}, Private: tc.private}
				sys := gadgettest.Run(t, circuit.Synthesize)
				if sys.NumInputs() != tc.inputs || sys.NumConstraints() != tc.constraints {
					t.Fatalf("challenge %d: %d inputs / %d constraints, want %d / %d",
						challenge, sys.NumInputs(), sys.NumConstraints(), tc.inputs, tc.constraints)
				}
				if err := sys.Check(); err != nil {
					t.Fatalf("challenge %d: %v", challenge, err)
				}
				in, err := sys.Get("path/input 0")
				if err != nil || in.Uint64() != uint64(challenge) || sys.InputName(1) != "path/input 0" {
					t.Fatalf("challenge %d: path input %v (%v)", challenge, in.Uint64(), err)
				}
				if !tc.private {
					r, _ := sys.Get("root/input variable")
					if !r.Equal(&p.Root) {
						t.Fatal("root input")
					}
				}
				if k == 0 {
					t.Logf("digest %s", sys.Hash())
					if tc.digest != "" && sys.Hash() != tc.digest {
						t.Fatalf("structure digest %s, recorded %s", sys.Hash(), tc.digest)
					}
				}
				// A wrong sibling is caught.
				bad := gadgettest.FlipAux(t, sys, "base/merkle tree hash 0/path element 0/num")
				if bad == "" {
					t.Fatal("corrupted sibling not caught")
				}
			}
		})
	}
}

func TestPoRBadPath(t *testing.T) {
	tr := buildTree(t, merkle.Poseidon{}, merkle.Shape{Base: 4}, 64)
	p, _ := tr.Proof(5)
	levels, _ := BaseLevels(merkle.Shape{Base: 4}, 64)
	for name, mutate := range map[string]func(c *Circuit){
		"index":    func(c *Circuit) { c.Path[1].Index = 4 },
		"siblings": func(c *Circuit) { c.Path[0].Siblings = c.Path[0].Siblings[:2] },
		"levels":   func(c *Circuit) { c.Path = c.Path[:2] },
		"shape":    func(c *Circuit) { c.Shape = merkle.Shape{Base: 3} },
	} {
		path := make([]merkle.PathElement, len(p.Path))
		copy(path, p.Path)
		c := &Circuit{Hasher: PoseidonHasher{}, Shape: merkle.Shape{Base: 4}, BaseLevels: levels,
			Leaf: Value{Val: p.Leaf}, Path: path, Root: Value{Val: p.Root}}
		mutate(c)
		if err := c.Synthesize(cs.NewTestConstraintSystem()); err == nil {
			t.Errorf("%s: bad path accepted", name)
		}
	}
	if _, err := BaseLevels(merkle.Shape{Base: 8}, 100); err == nil {
		t.Error("100 leaves accepted for arity 8")
	}
}

// insertion.rs test_insert / test_select constraint counts.
func TestInsertSelect(t *testing.T) {
	for _, tc := range []struct{ size, insert int }{{2, 2}, {4, 8}, {8, 22}, {16, 240}} {
		nbits := log2(tc.size)
		for index := 0; index < tc.size; index++ {
			var got []num.AllocatedNum
			var elems []fr.Element
			var el fr.Element
			var bitCost, insertCost, selectCost int
			sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
				bits := make([]boolean.Boolean, nbits)
				for j := range bits {
					sys.PushIndexed("bit ", j)
					b, err := boolean.Alloc(sys, index>>uint(j)&1 == 1)
					sys.Pop()
					if err != nil {
						return err
					}
					bits[j] = boolean.Is(b)
				}
				bitCost = nbits
				el = fr.NewElement(1000)
				sys.Push("element")
				e, _ := num.Alloc(sys, el)
				sys.Pop()
				elems = nil
				var others []num.AllocatedNum
				for j := 0; j < tc.size-1; j++ {
					v := fr.NewElement(uint64(j + 1))
					elems = append(elems, v)
					sys.PushIndexed("other ", j)
					a, _ := num.Alloc(sys, v)
					sys.Pop()
					others = append(others, a)
				}
				before := len(others) // allocations cost no constraints
				_ = before
				sys.Push("insert")
				r, err := Insert(sys, e, bits, others)
				sys.Pop()
				if err != nil {
					return err
				}
				if sys.WitnessMode() {
					got = r
				}
				return nil
			})
			insertCost = sys.NumConstraints() - bitCost
			if insertCost != tc.insert {
				t.Fatalf("insert %d: %d constraints, want %d", tc.size, insertCost, tc.insert)
			}
			if err := sys.Check(); err != nil {
				t.Fatal(err)
			}
			k := 0
			for pos, g := range got {
				want := el
				if pos != index {
					want = elems[k]
					k++
				}
				if !g.Value.Equal(&want) {
					t.Fatalf("insert %d at %d: position %d wrong", tc.size, index, pos)
				}
			}
			// select: size − 1 constraints.
			sel := cs.NewTestConstraintSystem()
			bits := make([]boolean.Boolean, nbits)
			for j := range bits {
				sel.PushIndexed("bit ", j)
				b, _ := boolean.Alloc(sel, index>>uint(j)&1 == 1)
				sel.Pop()
				bits[j] = boolean.Is(b)
			}
			from := make([]num.AllocatedNum, tc.size)
			for j := range from {
				sel.PushIndexed("from ", j)
				from[j], _ = num.Alloc(sel, fr.NewElement(uint64(100+j)))
				sel.Pop()
			}
			r, err := Select(sel, from, bits)
			if err != nil {
				t.Fatal(err)
			}
			selectCost = sel.NumConstraints() - nbits
			if selectCost != tc.size-1 || r.Value.Uint64() != uint64(100+index) || sel.Check() != nil {
				t.Fatalf("select %d at %d: cost %d value %d", tc.size, index, selectCost, r.Value.Uint64())
			}
		}
	}
	if _, err := Insert(cs.NewTestConstraintSystem(), num.AllocatedNum{}, make([]boolean.Boolean, 2), make([]num.AllocatedNum, 2)); err == nil {
		t.Fatal("mismatched insert accepted")
	}
}

// por_no_challenge_input: per level insert + hash, one final constraint.
func TestNoChallengeInput(t *testing.T) {
	for _, tc := range []struct {
		shape  merkle.Shape
		leaves int
	}{
		// test_por_no_challenge_input_{2kib_8_0_0, 2kib_8_8_0, 8kib_8_4_0, 8kib_8_4_2, 32kib_8_8_2}
		{merkle.Shape{Base: 8}, 64},
		{merkle.Shape{Base: 8, Sub: 8}, 64},
		{merkle.Shape{Base: 8, Sub: 4}, 256},
		{merkle.Shape{Base: 8, Sub: 4, Top: 2}, 512},
		{merkle.Shape{Base: 8, Sub: 8, Top: 2}, 1024},
	} {
		tr := buildTree(t, merkle.Poseidon{}, tc.shape, tc.leaves)
		challenge := tc.leaves/3 + 1
		p, _ := tr.Proof(challenge)
		var nbits int
		sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
			var bits []boolean.AllocatedBit
			for j := 0; (1 << j) < tc.leaves; j++ {
				sys.PushIndexed("challenge bit ", j)
				b, err := boolean.Alloc(sys, challenge>>uint(j)&1 == 1)
				sys.Pop()
				if err != nil {
					return err
				}
				bits = append(bits, b)
			}
			nbits = len(bits)
			sys.Push("leaf")
			leaf, _ := num.Alloc(sys, p.Leaf)
			sys.Pop()
			var path [][]num.AllocatedNum
			for l, pe := range p.Path {
				var row []num.AllocatedNum
				for j, s := range pe.Siblings {
					sys.Push(fmt.Sprintf("sib %d %d", l, j))
					a, _ := num.Alloc(sys, s)
					sys.Pop()
					row = append(row, a)
				}
				path = append(path, row)
			}
			sys.Push("root")
			root, _ := num.Alloc(sys, p.Root)
			sys.Pop()
			return NoChallengeInput(sys, PoseidonHasher{}, tc.shape, bits, leaf, path, root)
		})
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		// Arity-8 levels cost insert_8 + P_8 = 527; others insert + P.
		want := nbits + 1
		for _, pe := range p.Path {
			switch len(pe.Siblings) + 1 {
			case 8:
				want += 22 + 505
			case 4:
				want += 8 + 377
			case 2:
				want += 2 + 311
			}
		}
		if sys.NumConstraints() != want || sys.NumInputs() != 1 {
			t.Fatalf("%v: %d constraints, want %d", tc.shape, sys.NumConstraints(), want)
		}
		_ = sys.Set("root/num", fr.NewElement(3))
		if bad, _ := sys.WhichIsUnsatisfied(); bad != "calculated root == provided root" {
			t.Fatalf("wrong root caught at %q", bad)
		}
	}
}
