package poseidon

import (
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/num"
)

// A Poseidon circuit's constraints depend only on the constants: every
// variable it allocates is its own, so the whole structure is a template over
// ONE, the preimage slots and its local variables. Recording the template
// once per parameter set and replaying it avoids recomputing the sparse-matrix
// linear combinations (thousands of field multiplications per hash) on every
// call, while emitting exactly the same constraints, names and allocations.

// ref names a template variable: refOne, a preimage slot (0 ≤ ref < arity) or
// local variable ref − arity.
type ref = int32

const refOne ref = -1

type tmplTerm struct {
	coeff fr.Element
	ref   ref
}

// tmplLC is sorted by ref: ONE, slots, then locals in allocation order.
type tmplLC []tmplTerm

type evKind uint8

const (
	evPush evKind = iota
	evPushIndexed
	evPop
	evAlloc
	evEnforce
)

type event struct {
	kind    evKind
	name    string
	idx     int
	a, b, c tmplLC // enforce: the constraint; alloc: the defining A, B and C without the new variable
	local   int
}

type template struct {
	arity   int
	events  []event
	nLocals int
	// scratch lends replays their locals (*replayScratch): a WindowPoSt partition hashes
	// hundreds of thousands of times, and fresh locals per hash were most of its garbage.
	scratch sync.Pool
	// native lends nativeHash its state (*nativeState); nativeErr is nativeMatches' verdict on
	// checked, the constants the template was recorded from: the witness-only path runs
	// natively, with those constants, only when it is nil.
	native    sync.Pool
	nativeErr error
	checked   *Constants
}

// replayScratch is one replay's local values and variables; every local is written before it
// is read, so a reused one needs no clearing.
type replayScratch struct {
	vals []fr.Element
	vars []cs.Variable
}

// recorder is a blank ConstraintSystem that records a template.
type recorder struct {
	arity  int
	nAux   int
	events []event
	err    error
}

func (r *recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *recorder) Alloc(name string, _ cs.ValueFunc) (cs.Variable, error) {
	return r.AllocValue(name, nil)
}

func (r *recorder) AllocValue(name string, _ *fr.Element) (cs.Variable, error) {
	v := cs.AuxVariable(r.nAux)
	if r.nAux >= r.arity {
		r.events = append(r.events, event{kind: evAlloc, name: name, local: r.nAux - r.arity})
	}
	r.nAux++
	return v, nil
}

var errTemplateInput = errors.New("poseidon: template circuits allocate no inputs")

func (r *recorder) AllocInput(string, cs.ValueFunc) (cs.Variable, error) {
	return 0, errTemplateInput
}

func (r *recorder) AllocInputValue(string, *fr.Element) (cs.Variable, error) {
	return 0, errTemplateInput
}

func (r *recorder) convert(lc cs.LinearCombination) tmplLC {
	out := make(tmplLC, 0, len(lc))
	for _, t := range lc {
		var x ref
		switch {
		case t.Var == cs.One:
			x = refOne
		case t.Var.IsInput():
			r.fail(errTemplateInput)
		default:
			x = ref(t.Var.Index())
		}
		out = append(out, tmplTerm{coeff: t.Coeff, ref: x})
	}
	return out
}

func (r *recorder) Enforce(name string, a, b, c cs.LinearCombination) {
	r.events = append(r.events, event{kind: evEnforce, name: name, a: r.convert(a), b: r.convert(b), c: r.convert(c)})
}

func (r *recorder) Push(name string) { r.events = append(r.events, event{kind: evPush, name: name}) }

func (r *recorder) PushIndexed(prefix string, i int) {
	r.events = append(r.events, event{kind: evPushIndexed, name: prefix, idx: i})
}

func (r *recorder) Pop()              { r.events = append(r.events, event{kind: evPop}) }
func (r *recorder) WitnessMode() bool { return false }

// recordTemplate runs the direct circuit on symbolic inputs and attaches to
// every allocation the constraint that defines its value (c = v + rest with
// A and B free of v), so replay can compute witnesses.
func recordTemplate(c *Constants) (*template, error) {
	r := &recorder{arity: c.Arity}
	in := make([]num.AllocatedNum, c.Arity)
	for i := range in {
		v, _ := r.AllocValue("", nil)
		in[i] = num.AllocatedNum{Var: v}
	}
	out, err := hashCircuitDirect(r, in, c)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	t := &template{arity: c.Arity, events: r.events, nLocals: r.nAux - c.Arity}
	if int(out.Var.Index()) != r.nAux-1 {
		return nil, errors.New("poseidon: template result is not the last allocation")
	}
	for i := range t.events {
		ev := &t.events[i]
		if ev.kind != evAlloc {
			continue
		}
		me := ref(c.Arity + ev.local)
		found := false
		for j := i + 1; j < len(t.events) && !found; j++ {
			d := &t.events[j]
			if d.kind != evEnforce || !contains(d.c, me) {
				continue
			}
			if contains(d.a, me) || contains(d.b, me) || maxRef(d.a) > me || maxRef(d.b) > me || maxRef(d.c) > me {
				return nil, fmt.Errorf("poseidon: allocation %q is not defined by its constraint", ev.name)
			}
			var rest tmplLC
			for _, term := range d.c {
				if term.ref == me {
					if !term.coeff.IsOne() {
						return nil, fmt.Errorf("poseidon: allocation %q has coefficient %s", ev.name, term.coeff.String())
					}
					continue
				}
				rest = append(rest, term)
			}
			ev.a, ev.b, ev.c = d.a, d.b, rest
			found = true
		}
		if !found {
			return nil, fmt.Errorf("poseidon: allocation %q has no defining constraint", ev.name)
		}
	}
	return t, nil
}

func contains(lc tmplLC, x ref) bool {
	for _, t := range lc {
		if t.ref == x {
			return true
		}
	}
	return false
}

func maxRef(lc tmplLC) ref {
	m := refOne
	for _, t := range lc {
		m = max(m, t.ref)
	}
	return m
}

var log = logging.Logger("snarkd/poseidon")

type tmplKey struct {
	arity    int
	strength Strength
	ht       HashType
}

// templates holds the recorded templates. Every hash of a witness looks its template up, on
// every core at once, so a hit takes no lock; tmplMu keeps a template from being recorded twice.
var (
	tmplMu    sync.Mutex
	templates sync.Map // tmplKey → *template
)

func templateFor(c *Constants) (*template, error) {
	key := tmplKey{c.Arity, c.Strength, c.Type}
	if t, ok := templates.Load(key); ok {
		return t.(*template), nil
	}
	tmplMu.Lock()
	defer tmplMu.Unlock()
	if t, ok := templates.Load(key); ok {
		return t.(*template), nil
	}
	t, err := recordTemplate(c)
	if err != nil {
		return nil, err
	}
	t.checked = c
	if t.nativeErr = t.nativeMatches(c); t.nativeErr != nil {
		log.Errorw("witness-only hashes replay the template: the native path differs from it (a bug)",
			"arity", c.Arity, "strength", c.Strength, "type", c.Type, "err", t.nativeErr)
	}
	templates.Store(key, t)
	return t, nil
}

// replay emits the template into sys for the given preimage.
func (t *template) replay(sys cs.ConstraintSystem, preimage []num.AllocatedNum) (num.AllocatedNum, error) {
	witness, witnessOnly := sys.WitnessMode(), cs.WitnessOnly(sys)
	sc, _ := t.scratch.Get().(*replayScratch)
	if sc == nil {
		sc = &replayScratch{vals: make([]fr.Element, t.nLocals), vars: make([]cs.Variable, t.nLocals)}
	}
	defer t.scratch.Put(sc)
	vals, vars := sc.vals, sc.vars
	arity := ref(t.arity)
	value := func(x ref) *fr.Element {
		switch {
		case x == refOne:
			return nil
		case x < arity:
			return &preimage[x].Value
		default:
			return &vals[x-arity]
		}
	}
	eval := func(lc tmplLC) fr.Element {
		var acc, tmp fr.Element
		for i := range lc {
			v := value(lc[i].ref)
			switch {
			case v == nil:
				acc.Add(&acc, &lc[i].coeff)
			case lc[i].coeff.IsOne():
				acc.Add(&acc, v)
			default:
				tmp.Mul(&lc[i].coeff, v)
				acc.Add(&acc, &tmp)
			}
		}
		return acc
	}
	variable := func(x ref) cs.Variable {
		switch {
		case x == refOne:
			return cs.One
		case x < arity:
			return preimage[x].Var
		default:
			return vars[x-arity]
		}
	}
	// build maps a template combination onto real variables. ONE and slots
	// precede locals but may map to any variables (even the same one), so
	// that head is sorted and merged; locals are already in order.
	build := func(buf cs.LinearCombination, lc tmplLC) cs.LinearCombination {
		out := buf
		k := 0
		for ; k < len(lc) && lc[k].ref < arity; k++ {
			out = out.AddTerm(&lc[k].coeff, variable(lc[k].ref))
		}
		for ; k < len(lc); k++ {
			out = append(out, cs.Term{Coeff: lc[k].coeff, Var: vars[lc[k].ref-arity]})
		}
		return out
	}
	for i := range t.events {
		ev := &t.events[i]
		switch ev.kind {
		case evPush:
			sys.Push(ev.name)
		case evPushIndexed:
			sys.PushIndexed(ev.name, ev.idx)
		case evPop:
			sys.Pop()
		case evAlloc:
			// The value is computed in place: a local passed to AllocValue would escape, one
			// heap allocation per variable.
			v := &vals[ev.local]
			*v = fr.Element{}
			if witness {
				a, b, c := eval(ev.a), eval(ev.b), eval(ev.c)
				v.Mul(&a, &b)
				v.Sub(v, &c)
			}
			x, err := sys.AllocValue(ev.name, v)
			if err != nil {
				return num.AllocatedNum{}, err
			}
			vars[ev.local] = x
		case evEnforce:
			if witnessOnly {
				sys.Enforce(ev.name, nil, nil, nil)
				continue
			}
			n := len(ev.a) + len(ev.b) + len(ev.c)
			buf := make(cs.LinearCombination, 0, n)
			a := build(buf[0:0:len(ev.a)], ev.a)
			b := build(buf[len(ev.a):len(ev.a):len(ev.a)+len(ev.b)], ev.b)
			c := build(buf[len(ev.a)+len(ev.b):len(ev.a)+len(ev.b):n], ev.c)
			sys.Enforce(ev.name, a, b, c)
		}
	}
	last := t.nLocals - 1
	return num.AllocatedNum{Var: vars[last], Value: vals[last]}, nil
}
