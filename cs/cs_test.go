package cs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func elem(v int64) fr.Element {
	var e fr.Element
	e.SetInt64(v)
	return e
}

// TestHashVectors checks cs.hash() against the values derived in circuit-fingerprints.md §13.
func TestHashVectors(t *testing.T) {
	empty := NewTestConstraintSystem()
	if got := empty.Hash(); got != "958191931feaed50efb8195a7e9084aba2c230e2886c2f11a2cff90a9117095e" {
		t.Errorf("empty hash %s", got)
	}

	bit := NewTestConstraintSystem()
	a, _ := bit.AllocValue("boolean", new(fr.Element).SetOne())
	// Built in a different order and with a duplicate to check merging and sorting.
	lcA := NewLC(0).Sub(a).Add(One).AddCoeff(2, a).AddCoeff(-2, a)
	bit.Enforce("boolean constraint", lcA, LCOf(a), nil)
	if got := bit.Hash(); got != "98d0daed948fd105b316b92d3bf903dd814f4f6d765d62d1e26c596ebd48e141" {
		t.Errorf("bit hash %s", got)
	}

	mul := NewTestConstraintSystem()
	x, _ := mul.AllocValue("a", ptr(elem(3)))
	y, _ := mul.AllocValue("b", ptr(elem(4)))
	z, _ := mul.AllocValue("product", ptr(elem(12)))
	mul.Enforce("mult", LCOf(x), LCOf(y), LCOf(z))
	if got := mul.Hash(); got != "85b87cd6cd6b828612bccc9d4a2dad373914e8c9ed53925bcac9e7ad58701975" {
		t.Errorf("a*b=c hash %s", got)
	}
	if !mul.IsSatisfied() {
		t.Error("a*b=c should be satisfied")
	}
}

func ptr(e fr.Element) *fr.Element { return &e }

func TestLinearCombinationMerge(t *testing.T) {
	lc := NewLC(0).Add(AuxVariable(3)).Add(InputVariable(2)).Add(AuxVariable(1)).Add(One).AddCoeff(4, AuxVariable(3))
	want := []Variable{One, InputVariable(2), AuxVariable(1), AuxVariable(3)}
	if len(lc) != len(want) {
		t.Fatalf("len %d, want %d", len(lc), len(want))
	}
	for i, v := range want {
		if lc[i].Var != v {
			t.Errorf("term %d is %v, want %v", i, lc[i].Var, v)
		}
	}
	if five := elem(5); !lc[3].Coeff.Equal(&five) {
		t.Errorf("merged coefficient %s, want 5", lc[3].Coeff.String())
	}
	lc = lc.SubLC(LCOf(InputVariable(2)))
	if !lc[1].Coeff.IsZero() || len(lc) != 4 {
		t.Errorf("cancelled term should stay as zero, got %v", lc)
	}
	ev := lc.Eval([]fr.Element{elem(1), elem(10), elem(100)}, []fr.Element{elem(0), elem(7), elem(0), elem(2)})
	if w := elem(1 + 7 + 5*2); !ev.Equal(&w) {
		t.Errorf("eval %s, want %s", ev.String(), w.String())
	}
	two := elem(2)
	sc := lc.Scaled(&two)
	if w := elem(10); !sc[3].Coeff.Equal(&w) || !lc[3].Coeff.Equal(ptr(elem(5))) {
		t.Error("Scaled must scale a copy")
	}
}

func TestVariableEncoding(t *testing.T) {
	for _, c := range []struct {
		v     Variable
		input bool
		idx   int
		s     string
	}{
		{One, true, 0, "input 0"},
		{InputVariable(7), true, 7, "input 7"},
		{AuxVariable(0), false, 0, "aux 0"},
		{AuxVariable(MaxVariables - 1), false, MaxVariables - 1, "aux 2147483646"},
	} {
		if c.v.IsInput() != c.input || c.v.Index() != c.idx || c.v.String() != c.s {
			t.Errorf("%v: input %v index %d", c.v, c.v.IsInput(), c.v.Index())
		}
	}
	if !(InputVariable(1000) < AuxVariable(0)) {
		t.Error("inputs must sort before aux")
	}
}

// densityCircuit exercises every density rule: inputs absent from B, aux absent from A, zero
// coefficients, a term cancelled to zero, ONE in B.
var densityCircuit = CircuitFunc(func(s ConstraintSystem) error {
	x, err := s.AllocInput("x", func() (fr.Element, error) { return elem(3), nil })
	if err != nil {
		return err
	}
	y, _ := s.AllocInputValue("y", ptr(elem(5)))
	a, _ := s.AllocValue("a", ptr(elem(2)))
	b, _ := s.AllocValue("b", ptr(elem(6)))
	c, _ := s.AllocValue("c", ptr(elem(0)))
	d, _ := s.AllocValue("d", ptr(elem(15)))
	s.Push("ns")
	defer s.Pop()
	s.Enforce("a*x=b", LCOf(a), LCOf(x), LCOf(b))   // x in B; a in A
	s.Enforce("1*y*x=d", LCOf(y), LCOf(x), LCOf(d)) // y only in A (an input)
	zero := fr.Element{}
	s.Enforce("zero coeff", NewLC(0).AddTerm(&zero, c), LCOf(One), NewLC(0)) // c: zero coeff in A; ONE in B
	cancelled := NewLC(0).Add(d).Sub(d).Add(One)
	s.Enforce("cancelled", LCOf(One), cancelled, LCOf(One)) // d cancels in B
	s.Enforce("c is zero", LCOf(c), LCOf(c), nil)           // c in A and B
	return nil
})

func TestDensityRules(t *testing.T) {
	ctx := context.Background()
	pa, err := SynthesizeProving(ctx, densityCircuit, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	sh, err := SynthesizeShape(ctx, densityCircuit)
	if err != nil {
		t.Fatal(err)
	}
	r, err := RecordR1CS(ctx, densityCircuit)
	if err != nil {
		t.Fatal(err)
	}
	want := Shape{NumInputs: 3, NumAux: 4, NumConstraints: 5 + 3}
	for name, got := range map[string]Shape{"proving": pa.Shape(), "shape": sh.Shape(), "r1cs": r.Shape()} {
		if got != want {
			t.Errorf("%s shape %+v, want %+v", name, got, want)
		}
	}
	ra, rbi, rba := r.Densities()
	check := func(name string, d *Density, bits []bool) {
		t.Helper()
		if d.Len() != len(bits) {
			t.Fatalf("%s: len %d, want %d", name, d.Len(), len(bits))
		}
		n := 0
		for i, b := range bits {
			if d.IsSet(i) != b {
				t.Errorf("%s: bit %d = %v, want %v", name, i, d.IsSet(i), b)
			}
			if b {
				n++
			}
		}
		if d.Count() != n {
			t.Errorf("%s: count %d, want %d", name, d.Count(), n)
		}
	}
	for _, set := range []struct {
		name         string
		aA, bIn, bAx *Density
	}{{"proving", pa.AAuxDensity, pa.BInputDensity, pa.BAuxDensity}, {"shape", sh.AAuxDensity, sh.BInputDensity, sh.BAuxDensity}, {"r1cs", ra, rbi, rba}} {
		check(set.name+" a_aux", set.aA, []bool{true, false, true, false})
		check(set.name+" b_input", set.bIn, []bool{true, true, false})
		check(set.name+" b_aux", set.bAx, []bool{false, false, true, false})
	}
	if err := r.CheckSatisfied(pa.Input, pa.Aux); err != nil {
		t.Errorf("witness should satisfy the recorded R1CS: %v", err)
	}
	// a, b, c evaluations, including the appended input rows (a = input value, b = c = 0).
	wantA := []int64{2, 5, 0, 1, 0, 1, 3, 5}
	wantB := []int64{3, 3, 1, 1, 0, 0, 0, 0}
	wantC := []int64{6, 15, 0, 1, 0, 0, 0, 0}
	for k := range wantA {
		if !pa.A[k].Equal(ptr(elem(wantA[k]))) || !pa.B[k].Equal(ptr(elem(wantB[k]))) || !pa.C[k].Equal(ptr(elem(wantC[k]))) {
			t.Errorf("row %d: a,b,c = %s,%s,%s", k, pa.A[k].String(), pa.B[k].String(), pa.C[k].String())
		}
	}
}

func TestTestConstraintSystemPaths(t *testing.T) {
	tcs := NewTestConstraintSystem()
	if err := densityCircuit.Synthesize(tcs); err != nil {
		t.Fatal(err)
	}
	if err := tcs.Check(); err != nil {
		t.Fatalf("satisfied circuit: %v", err)
	}
	if tcs.NumConstraints() != 5 || tcs.NumInputs() != 3 || tcs.NumAux() != 4 {
		t.Errorf("counts %d %d %d", tcs.NumConstraints(), tcs.NumInputs(), tcs.NumAux())
	}
	if v, err := tcs.Get("b"); err != nil || !v.Equal(ptr(elem(6))) {
		t.Errorf("Get(b) = %v, %v", v.String(), err)
	}
	if err := tcs.Set("d", elem(16)); err != nil {
		t.Fatal(err)
	}
	path, bad := tcs.WhichIsUnsatisfied()
	if !bad || path != "ns/1*y*x=d" {
		t.Errorf("first failing constraint %q", path)
	}
	var ue *UnsatisfiedError
	if err := tcs.Check(); !errors.As(err, &ue) || ue.Path != "ns/1*y*x=d" || !ue.C.Equal(ptr(elem(16))) || !ue.AB.Equal(ptr(elem(15))) {
		t.Errorf("Check: %v", err)
	}
	if _, err := tcs.Get("nope"); err == nil {
		t.Error("Get of a missing path should fail")
	}
	if !tcs.VerifyInputs([]fr.Element{elem(3), elem(5)}) || tcs.VerifyInputs([]fr.Element{elem(3)}) {
		t.Error("VerifyInputs")
	}
	if _, _, _, ok := tcs.Constraint("ns/a*x=b"); !ok {
		t.Error("Constraint by path")
	}
	want := []string{"INPUT ONE", "INPUT x", "INPUT y", "AUX a", "AUX b", "AUX c", "AUX d",
		"ns/a*x=b", "ns/1*y*x=d", "ns/zero coeff", "ns/cancelled", "ns/c is zero"}
	if got := strings.Join(tcs.PrettyPrintList(), "|"); got != strings.Join(want, "|") {
		t.Errorf("PrettyPrintList = %s", got)
	}
}

func TestTestConstraintSystemNamingErrors(t *testing.T) {
	tcs := NewTestConstraintSystem()
	tcs.PushIndexed("bit ", 3)
	a, _ := tcs.AllocValue("v", ptr(elem(1)))
	tcs.Pop()
	if got := tcs.AuxName(0); got != "bit 3/v" {
		t.Errorf("path %q", got)
	}
	tcs.Enforce("c", LCOf(a), LCOf(One), LCOf(a))
	tcs.Enforce("c", LCOf(a), LCOf(One), LCOf(a))
	if err := tcs.Check(); err == nil || !strings.Contains(err.Error(), `"c" already exists`) {
		t.Errorf("duplicate path: %v", err)
	}
	t2 := NewTestConstraintSystem()
	t2.Push("a/b")
	t2.Pop()
	if t2.IsSatisfied() || t2.Err() == nil {
		t.Error("'/' in a name must be reported")
	}
}

func TestBlankModeNeverCallsValues(t *testing.T) {
	circuit := CircuitFunc(func(s ConstraintSystem) error {
		boom := func() (fr.Element, error) { return fr.Element{}, errors.New("called") }
		x, err := s.AllocInput("x", boom)
		if err != nil {
			return err
		}
		a, err := s.Alloc("a", boom)
		if err != nil {
			return err
		}
		s.Enforce("c", LCOf(a), LCOf(x), LCOf(a))
		return nil
	})
	if _, err := SynthesizeShape(context.Background(), circuit); err != nil {
		t.Errorf("shape: %v", err)
	}
	if _, err := RecordR1CS(context.Background(), circuit); err != nil {
		t.Errorf("r1cs: %v", err)
	}
	if _, err := SynthesizeProving(context.Background(), circuit, Shape{}); err == nil {
		t.Error("witness mode must surface the value error")
	}
}

func TestSynthesisCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := CircuitFunc(func(s ConstraintSystem) error {
		for i := 0; i < 1<<17; i++ {
			if _, err := s.AllocValue("", ptr(elem(1))); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := SynthesizeProving(ctx, big, Shape{}); !errors.Is(err, context.Canceled) {
		t.Errorf("proving: %v", err)
	}
	if _, err := SynthesizeShape(ctx, big); !errors.Is(err, context.Canceled) {
		t.Errorf("shape: %v", err)
	}
}

func TestExtendEqualsSequential(t *testing.T) {
	part := func(seed int64) Circuit {
		return CircuitFunc(func(s ConstraintSystem) error {
			x, _ := s.AllocInputValue("x", ptr(elem(seed)))
			a, _ := s.AllocValue("a", ptr(elem(seed+1)))
			p, _ := s.AllocValue("p", ptr(elem(seed*(seed+1))))
			s.Enforce("p", LCOf(x), LCOf(a), LCOf(p))
			s.Enforce("one", LCOf(One), LCOf(One), LCOf(One))
			return nil
		})
	}
	both := CircuitFunc(func(s ConstraintSystem) error {
		if err := part(2).Synthesize(s); err != nil {
			return err
		}
		return part(3).Synthesize(s)
	})
	ctx := context.Background()
	seq, _ := SynthesizeProving(ctx, both, Shape{})

	main := NewProvingAssignment(Shape{})
	main.AllocInputValue("ONE", &oneElement)
	for _, seed := range []int64{2, 3} {
		sub := NewProvingAssignment(Shape{})
		sub.AllocInputValue("ONE", &oneElement)
		if err := part(seed).Synthesize(sub); err != nil {
			t.Fatal(err)
		}
		main.Extend(sub)
	}
	enforceInputRows(main, len(main.Input))
	if seq.Shape() != main.Shape() {
		t.Fatalf("shapes %+v vs %+v", seq.Shape(), main.Shape())
	}
	for k := range seq.A {
		if seq.A[k] != main.A[k] || seq.B[k] != main.B[k] || seq.C[k] != main.C[k] {
			t.Errorf("row %d differs", k)
		}
	}
	for i, pair := range [][2]*Density{{seq.AAuxDensity, main.AAuxDensity}, {seq.BInputDensity, main.BInputDensity}, {seq.BAuxDensity, main.BAuxDensity}} {
		if pair[0].Count() != pair[1].Count() || pair[0].Len() != pair[1].Len() {
			t.Errorf("density %d differs", i)
		}
		for j := 0; j < pair[0].Len(); j++ {
			if pair[0].IsSet(j) != pair[1].IsSet(j) {
				t.Errorf("density %d bit %d differs", i, j)
			}
		}
	}
}
