package cs

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/internal/fuzzedit"
)

// mixBlocks is a blocked circuit whose structure is the same in every block (values differ):
// bits, products, a multi-term sum with large and small coefficients, zero terms, reads of
// prefix inputs and aux, and (with inputs) a public input per block.
type mixBlocks struct {
	n      int
	inputs bool
	seed   uint64
	// moving blocks also read a prefix variable that depends on the block index.
	moving bool
}

func (c mixBlocks) prefix(s ConstraintSystem) (BlockFunc, error) {
	x, err := s.AllocInputValue("x", ptr(elem(int64(c.seed%97+3))))
	if err != nil {
		return nil, err
	}
	p := []Variable{x}
	for k := int64(0); k < 3; k++ {
		v, err := s.AllocValue("p", ptr(elem(int64(c.seed%13)+k)))
		if err != nil {
			return nil, err
		}
		p = append(p, v)
	}
	var big fr.Element
	big.SetString("0x1234567890abcdef1234567890abcdef1234567890abcdef")
	s.Enforce("p", NewLC(0).AddTerm(&big, p[1]).AddCoeff(3, p[2]), LCOf(One), NewLC(0).AddTerm(&big, p[1]).AddCoeff(3, p[2]))
	return func(s ConstraintSystem, i int) error { return c.block(s, p, i) }, nil
}

func (c mixBlocks) block(s ConstraintSystem, p []Variable, i int) error {
	rng := rand.New(rand.NewPCG(c.seed, uint64(i)))
	var sum LinearCombination
	val := int64(0)
	for k := 0; k < 8; k++ {
		bit := int64(rng.IntN(2))
		v, err := s.AllocValue("bit", ptr(elem(bit)))
		if err != nil {
			return err
		}
		s.Enforce("boolean", NewLC(0).Add(One).Sub(v), LCOf(v), nil)
		sum = sum.AddCoeff(1<<k, v)
		val += bit << k
	}
	packed, err := s.Alloc("packed", func() (fr.Element, error) { return elem(val), nil })
	if err != nil {
		return err
	}
	s.Enforce("pack", sum, LCOf(One), LCOf(packed))
	in := One
	if c.inputs {
		if in, err = s.AllocInputValue("in", ptr(elem(val))); err != nil {
			return err
		}
		s.Enforce("in", LCOf(in), LCOf(One), LCOf(packed))
	}
	// prod = packed · x, with a zero term and prefix aux reads in B.
	xv := elem(int64(c.seed%97 + 3))
	var prod fr.Element
	prod.Mul(ptr(elem(val)), &xv)
	pv, err := s.AllocValue("prod", &prod)
	if err != nil {
		return err
	}
	s.Enforce("prod", LCOf(packed), NewLC(0).Add(p[0]).AddCoeff(0, p[2]), LCOf(pv))
	s.Enforce("prefix", NewLC(0).Add(p[3]).Sub(p[3]), NewLC(0).Add(p[1]).Add(in), nil)
	if c.moving {
		q := p[1+(i*i)%3]
		s.Enforce("moving a", NewLC(0).AddCoeff(5, q).Add(packed), LCOf(One), NewLC(0).AddCoeff(5, q).Add(packed))
		s.Enforce("moving b", LCOf(One), LCOf(q), LCOf(q))
	}
	return nil
}

func (c mixBlocks) Synthesize(s ConstraintSystem) error {
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

// witness synthesizes c witness-only, blocks in parallel as the Filecoin circuits do.
func (c mixBlocks) witness(t *testing.T, comp *Compiled) *ProvingAssignment {
	t.Helper()
	ctx := context.Background()
	pa := NewWitnessAssignment(Shape{})
	if _, err := pa.AllocInputValue("ONE", &oneElement); err != nil {
		t.Fatal(err)
	}
	block, err := c.prefix(pa)
	if err != nil {
		t.Fatal(err)
	}
	layout := BlockLayout{Rows: comp.BlockRows, Aux: comp.BlockAux, Inputs: c.inputs}
	if err := SynthesizeBlocks(ctx, pa, layout, c.n, 3, block); err != nil {
		t.Fatal(err)
	}
	for i := range pa.Input {
		pa.Enforce("", LCOf(InputVariable(i)), nil, nil)
	}
	if err := comp.Complete(ctx, pa, 2); err != nil {
		t.Fatal(err)
	}
	return pa
}

func equalAssignments(t *testing.T, got, want *ProvingAssignment) {
	t.Helper()
	if err := got.Diff(want); err != nil {
		t.Fatal(err)
	}
}

// Witness-only synthesis completed from the compiled matrices equals witness-mode synthesis.
func TestCompiledMatchesProving(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      mixBlocks
		checkN int
	}{
		{"no blocks", mixBlocks{n: 0, seed: 1}, 0},
		{"one block", mixBlocks{n: 1, seed: 2}, 0},
		{"blocks", mixBlocks{n: 7, seed: 3}, 0},
		{"blocks with inputs", mixBlocks{n: 9, inputs: true, seed: 4}, 9},
		{"blocks reading moving prefix variables", mixBlocks{n: 9, inputs: true, seed: 12, moving: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			comp, err := Compile(ctx, "test/mix", tc.c.prefix, tc.c.n, tc.checkN)
			if err != nil {
				t.Fatal(err)
			}
			want, err := SynthesizeProving(ctx, tc.c, Shape{})
			if err != nil {
				t.Fatal(err)
			}
			if comp.Shape() != want.Shape() {
				t.Fatalf("compiled shape %+v, synthesis %+v", comp.Shape(), want.Shape())
			}
			if (len(comp.Moved) > 0) != tc.c.moving {
				t.Fatalf("%d moved terms", len(comp.Moved))
			}
			equalAssignments(t, tc.c.witness(t, comp), want)

			// Plain witness-only synthesis (no blocks run in parallel) completes the same way.
			pa, err := SynthesizeWitness(ctx, tc.c, Shape{})
			if err != nil {
				t.Fatal(err)
			}
			if !WitnessOnly(pa) || pa.Shape() != want.Shape() || len(pa.A) != 0 {
				t.Fatalf("witness-only assignment: shape %+v, %d rows kept", pa.Shape(), len(pa.A))
			}
			if err := comp.Complete(ctx, pa, 0); err != nil {
				t.Fatal(err)
			}
			equalAssignments(t, pa, want)
			if m := want.Shape().DomainSize(); cap(pa.A) < m || cap(pa.B) < m || cap(pa.C) < m {
				t.Fatalf("a, b, c have room for %d, %d, %d entries; the prover pads them to %d", cap(pa.A), cap(pa.B), cap(pa.C), m)
			}

			// The densities equal those of the recorded R1CS.
			r, err := RecordR1CS(ctx, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			ra, rbi, rba := r.Densities()
			ca, cbi, cba := comp.Densities()
			if !slices.Equal(ra.Words(), ca.Words()) || !slices.Equal(rbi.Words(), cbi.Words()) || !slices.Equal(rba.Words(), cba.Words()) {
				t.Fatal("densities differ from the recorded R1CS's")
			}
		})
	}
}

func TestCompiledBlocksOfDifferentStructure(t *testing.T) {
	c := toyBlocks{n: 4, extra: -1}
	prefix := func(s ConstraintSystem) (BlockFunc, error) {
		pre, err := c.prefix(s)
		return func(s ConstraintSystem, i int) error { return c.block(s, pre, i) }, err
	}
	ctx := context.Background()
	if _, err := Compile(ctx, "toy", prefix, c.n, 0); !errors.Is(err, ErrBlockStructure) {
		t.Fatalf("blocks whose rows depend on their index: %v", err)
	}

	// Such a circuit compiles flat, and witness-only synthesis completes to full synthesis's.
	comp, err := CompileFlat(ctx, "toy", prefix, c.n)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Block.A.Cols) != 0 || !comp.Flat {
		t.Fatal("a flat circuit kept a block template")
	}
	path := filepath.Join(t.TempDir(), "toy.r1cs")
	if err := comp.Store(path); err != nil {
		t.Fatal(err)
	}
	if comp, err = LoadCompiled(path, "toy", ""); err != nil {
		t.Fatal(err)
	}
	want, err := SynthesizeProving(ctx, c, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := WitnessBlocks(ctx, comp, prefix, c.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Complete(ctx, pa, 2); err != nil {
		t.Fatal(err)
	}
	equalAssignments(t, pa, want)

	// A block with a row more than block 0 is refused, flat or not.
	bad := toyBlocks{n: 3, extra: 1}
	badPrefix := func(s ConstraintSystem) (BlockFunc, error) {
		pre, err := bad.prefix(s)
		return func(s ConstraintSystem, i int) error { return bad.block(s, pre, i) }, err
	}
	if _, err := CompileFlat(ctx, "toy", badPrefix, bad.n); !errors.Is(err, ErrBlockShape) {
		t.Fatalf("a block of another size: %v", err)
	}
}

func TestCompleteRefusesWrongShape(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 3, seed: 5}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := SynthesizeWitness(ctx, mixBlocks{n: 2, seed: 5}, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Complete(ctx, other, 0); err == nil {
		t.Fatal("a witness of another shape was completed")
	}
	full, err := SynthesizeProving(ctx, c, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Complete(ctx, full, 0); err == nil {
		t.Fatal("a full assignment was completed")
	}
}

func TestCompiledStoreLoad(t *testing.T) {
	ctx := context.Background()
	var path string
	for _, c := range []mixBlocks{{n: 0, seed: 10}, {n: 1, seed: 11}, {n: 5, inputs: true, seed: 6}, {n: 6, seed: 13, moving: true}} {
		comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(t.TempDir(), "mix.r1cs")
		if err := comp.Store(path); err != nil {
			t.Fatal(err)
		}
		back, err := LoadCompiled(path, "test/mix", "")
		if err != nil {
			t.Fatalf("%d blocks: %v", c.n, err)
		}
		if _, err := LoadCompiled(path, "test/mix", back.Build+"-other"); !errors.Is(err, ErrCompiledFile) || !strings.Contains(err.Error(), "recorded by snarkd") {
			t.Fatalf("a file of another build: %v", err)
		}
		want, err := SynthesizeProving(ctx, c, Shape{})
		if err != nil {
			t.Fatal(err)
		}
		equalAssignments(t, c.witness(t, back), want)
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(t *testing.T, data []byte, key string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "bad.r1cs")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCompiled(p, key, "")
		var fe *CompiledFileError
		if !errors.As(err, &fe) || !errors.Is(err, ErrCompiledFile) || fe.Path != p {
			t.Fatalf("want a CompiledFileError naming %s, got %v", p, err)
		}
	}
	t.Run("another shape", func(t *testing.T) { refused(t, good, "test/other") })
	t.Run("empty", func(t *testing.T) { refused(t, nil, "test/mix") })
	for _, n := range []int{1, 20, len(good) / 2, len(good) - 1} {
		refused(t, good[:n], "test/mix")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for k := 0; k < 64; k++ {
		bad := bytes.Clone(good)
		bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		refused(t, bad, "test/mix")
	}
	t.Run("extended", func(t *testing.T) { refused(t, append(bytes.Clone(good), 0), "test/mix") })
}

// FuzzReadCompiled: edited compiled files and raw bytes are refused with a CompiledFileError or
// give a circuit whose products stay in range.
func FuzzReadCompiled(f *testing.F) {
	c := mixBlocks{n: 2, inputs: true, seed: 8}
	comp, err := Compile(context.Background(), "k", c.prefix, c.n, 0)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := comp.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	bases := [][]byte{nil, buf.Bytes()}
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    []byte
	}{
		{1, 0, 0, nil}, // the whole file
		{1, uint32(buf.Len() / 2), ^uint32(0), nil}, // truncated
		{1, uint32(buf.Len()), 0, []byte{0}},        // a trailing byte
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		data := fuzzedit.Splice(bases[int(base)%len(bases)], off, del, patch)
		got, err := ReadCompiled(bytes.NewReader(data), int64(len(data)), "fuzz", "k", "")
		if err != nil {
			var fe *CompiledFileError
			if !errors.As(err, &fe) || !errors.Is(err, ErrCompiledFile) {
				t.Fatalf("want a CompiledFileError, got %v", err)
			}
			return
		}
		in, aux := make([]fr.Element, got.NumInputs), make([]fr.Element, got.NumAux)
		n := got.NumConstraints()
		a, b, cv := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
		if err := got.Products(context.Background(), in, aux, a, b, cv, 1); err != nil {
			t.Fatal(err)
		}
	})
}

// Diff names the first difference between two assignments.
func TestDiff(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 3, inputs: true, seed: 14}
	want, err := SynthesizeProving(ctx, c, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, msg string
		edit      func(p *ProvingAssignment)
	}{
		{"same", "", func(*ProvingAssignment) {}},
		{"a value", "a[2] differs", func(p *ProvingAssignment) { p.A[2].SetUint64(99) }},
		{"c length", "c: ", func(p *ProvingAssignment) { p.C = p.C[:len(p.C)-1] }},
		{"aux value", "aux[0] differs", func(p *ProvingAssignment) { p.Aux[0].SetUint64(99) }},
		{"density", "b aux density", func(p *ProvingAssignment) { p.BAuxDensity = NewDensity(0) }},
	} {
		got, err := SynthesizeProving(ctx, c, Shape{})
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(got)
		err = got.Diff(want)
		if (tc.msg == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
}

// A recycled assignment's vectors serve the next assignment of the circuit whatever they hold:
// the same memory comes back and the completed assignment is unchanged.
func TestRecycledVectorsReused(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 9, inputs: true, seed: 5, moving: true}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := SynthesizeProving(ctx, c, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	witness := func() *ProvingAssignment {
		t.Helper()
		pa, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := comp.Complete(ctx, pa, 2); err != nil {
			t.Fatal(err)
		}
		return pa
	}
	pa := witness()
	equalAssignments(t, pa, want)
	var junk fr.Element
	junk.SetUint64(0xdead)
	held := map[*fr.Element]bool{}
	for _, v := range [][]fr.Element{pa.A, pa.B, pa.C, pa.Aux} {
		v = v[:cap(v)]
		for i := range v {
			v[i] = junk
		}
		held[&v[0]] = true
	}
	pa.Recycle()
	if pa.A != nil || pa.Aux != nil {
		t.Fatal("a recycled assignment kept its vectors")
	}
	pa.Recycle() // a second call does nothing
	again := witness()
	equalAssignments(t, again, want)
	if !held[&again.Aux[:1][0]] || !held[&again.A[:1][0]] {
		t.Fatal("the recycled vectors were not reused")
	}
	// A dropped circuit lets its kept vectors go.
	again.Recycle()
	comp.ReleaseVectors()
	if n := len(comp.vectors.free); n != 0 {
		t.Fatalf("%d vectors kept after ReleaseVectors", n)
	}

	// Full synthesis's assignments have no pool: Recycle leaves them alone.
	want.Recycle()
	if want.A == nil {
		t.Fatal("Recycle emptied an assignment from full synthesis")
	}
}

// CompleteChecked finds the row FirstUnsatisfied finds in the completed vectors, wherever the
// first wrong row is: a block row (a wrong witness value), a prefix row, or a row that moved
// terms change after the blocks' pass (wrong coefficients there).
func TestCompleteCheckedFindsFirstUnsatisfied(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 5, inputs: true, seed: 9, moving: true}
	for _, tc := range []struct {
		name   string
		where  string
		change func(comp *Compiled, pa *ProvingAssignment) bool
	}{
		{"satisfied", "", func(*Compiled, *ProvingAssignment) bool { return true }},
		{"witness value", "block", func(comp *Compiled, pa *ProvingAssignment) bool {
			pa.Aux[comp.PrefixAux+2*comp.BlockAux+3].SetUint64(12345)
			return true
		}},
		{"prefix coefficient", "prefix", func(comp *Compiled, _ *ProvingAssignment) bool {
			comp.Prefix.C.Coef[comp.Prefix.C.RowStart[0]] = 0
			return true
		}},
		{"moved coefficient", "moved", func(comp *Compiled, _ *ProvingAssignment) bool {
			for j := range comp.Moved {
				if comp.Moved[j].Matrix == 2 {
					comp.Moved[j].Coef = 0
					return true
				}
			}
			return false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
			if err != nil {
				t.Fatal(err)
			}
			pa, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.change(comp, pa) {
				t.Fatal("nothing to change")
			}
			row, err := comp.CompleteChecked(ctx, pa, 3)
			if err != nil {
				t.Fatal(err)
			}
			if want := FirstUnsatisfied(pa); row != want {
				t.Fatalf("CompleteChecked says row %d, FirstUnsatisfied %d", row, want)
			}
			moved := map[int]bool{}
			for i := 0; i < comp.Blocks; i++ {
				for _, mv := range comp.Moved {
					moved[comp.PrefixRows+i*comp.BlockRows+int(mv.Row)] = true
				}
			}
			where := ""
			switch {
			case row < 0:
			case row < comp.PrefixRows:
				where = "prefix"
			case moved[row]:
				where = "moved"
			default:
				where = "block"
			}
			if where != tc.where {
				t.Fatalf("first unsatisfied row %d is a %q row, want %q", row, where, tc.where)
			}
		})
	}
}

// The rows Products copies c into a for are exactly lc · ONE = v rows without moved terms, and
// the completed assignment still equals full synthesis's.
func TestLinearRows(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 4, inputs: true, seed: 3, moving: true}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	lin := comp.linearOf()
	moved := map[uint32]bool{}
	for _, mv := range comp.Moved {
		moved[mv.Row] = true
	}
	marked := 0
	for r := 0; r < comp.Block.A.Rows(); r++ {
		b, cc := &comp.Block.B, &comp.Block.C
		want := !moved[uint32(r)] && b.RowStart[r+1]-b.RowStart[r] == 1 && b.Cols[b.RowStart[r]] == 0 &&
			b.Coef[b.RowStart[r]] == 0 && cc.RowStart[r+1]-cc.RowStart[r] == 1 && cc.Coef[cc.RowStart[r]] == 0
		if got := isLinear(lin.block, r); got != want {
			t.Fatalf("block row %d: marked %v, want %v", r, got, want)
		}
		if want {
			marked++
		}
	}
	if marked < 2 {
		t.Fatalf("%d linear rows in the block template, want the packing and input rows", marked)
	}
	want, err := SynthesizeProving(ctx, c, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	if row, err := comp.CompleteChecked(ctx, pa, 2); err != nil || row >= 0 {
		t.Fatalf("row %d, %v", row, err)
	}
	equalAssignments(t, pa, want)
}

// Linear rows are copied, not evaluated, but the checked products sample them: a compiled
// circuit whose linear rows are not the witness's (here every block's packing row, negated) is
// still refused.
func TestCompleteCheckedSamplesLinearRows(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 64, seed: 11}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	lin := comp.linearOf()
	pack := -1
	for r := 0; r < comp.Block.A.Rows(); r++ {
		if isLinear(lin.block, r) && comp.Block.A.RowStart[r+1]-comp.Block.A.RowStart[r] == 8 {
			pack = r
		}
	}
	if pack < 0 {
		t.Fatal("no packing row among the linear rows")
	}
	for k := comp.Block.A.RowStart[pack]; k < comp.Block.A.RowStart[pack+1]; k++ {
		comp.Block.A.Coef[k] = 1 // −1: A·z is now −packed
	}
	pa, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	row, err := comp.CompleteChecked(ctx, pa, 3)
	if err != nil {
		t.Fatal(err)
	}
	if row < 0 || (row-comp.PrefixRows)%comp.BlockRows != pack || row%(linearSample+1) != 0 {
		t.Fatalf("first unsatisfied row %d, want a sampled packing row (block row %d of %d)", row, pack, comp.BlockRows)
	}
}

// A witness synthesis that fails hands its pooled aux back: a registration of that memory
// with a device is let go with the pool's, not kept by a dropped assignment.
func TestWitnessBlocksFailureRecycles(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 3, seed: 2}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	failing := func(sys ConstraintSystem) (BlockFunc, error) {
		block, err := c.prefix(sys)
		return func(sys ConstraintSystem, i int) error {
			if i == 2 {
				return errors.New("no witness for block 2")
			}
			return block(sys, i)
		}, err
	}
	if _, err := WitnessBlocks(ctx, comp, failing, c.n, 2); err == nil {
		t.Fatal("a failing block gave a witness")
	}
	comp.vectors.mu.Lock()
	free := len(comp.vectors.free)
	comp.vectors.mu.Unlock()
	if free != 1 {
		t.Fatalf("%d vectors back in the pool after a failed witness, want its aux", free)
	}
	comp.vectors.timer.Stop()
}
