package cs

import (
	"fmt"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestConstraintSystem records every variable and constraint under its namespace path, as
// bellpepper's TestConstraintSystem, for gadget tests: it checks satisfaction, names the first
// failing constraint, reads and overrides values by path, and computes cs.hash().
//
// Unlike the drivers it does not add the input_i·0=0 rows, so NumConstraints counts only the
// circuit's constraints (what bellpepper's tests assert). Paths must be unique; a duplicate path
// or a name containing '/' is recorded and reported by Err, Check and IsSatisfied.
type TestConstraintSystem struct {
	names       nameStack
	objects     map[string]namedObject
	constraints []testConstraint
	inputs      []fr.Element
	inputNames  []string
	aux         []fr.Element
	auxNames    []string
	err         error
}

type objectKind uint8

const (
	objConstraint objectKind = iota
	objVariable
	objNamespace
)

type namedObject struct {
	kind  objectKind
	index int
	v     Variable
}

type testConstraint struct {
	a, b, c LinearCombination
	path    string
}

// NewTestConstraintSystem returns a system holding only ONE (input 0, path "ONE").
func NewTestConstraintSystem() *TestConstraintSystem {
	t := &TestConstraintSystem{objects: map[string]namedObject{}}
	t.inputs = append(t.inputs, oneElement)
	t.inputNames = append(t.inputNames, "ONE")
	t.objects["ONE"] = namedObject{kind: objVariable, v: One}
	return t
}

func (t *TestConstraintSystem) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// register claims path for obj, recording an error on duplicates or bad names.
func (t *TestConstraintSystem) register(name string, obj namedObject) string {
	if strings.Contains(name, "/") {
		t.fail(fmt.Errorf("cs: name %q contains '/'", name))
	}
	path := t.names.path(name)
	if _, dup := t.objects[path]; dup {
		t.fail(fmt.Errorf("cs: path %q already exists", path))
		return path
	}
	t.objects[path] = obj
	return path
}

// Alloc implements ConstraintSystem.
func (t *TestConstraintSystem) Alloc(name string, value ValueFunc) (Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return t.AllocValue(name, &v)
}

// AllocValue implements ConstraintSystem.
func (t *TestConstraintSystem) AllocValue(name string, value *fr.Element) (Variable, error) {
	v := AuxVariable(len(t.aux))
	t.auxNames = append(t.auxNames, t.register(name, namedObject{kind: objVariable, v: v}))
	t.aux = append(t.aux, *value)
	return v, nil
}

// AllocInput implements ConstraintSystem.
func (t *TestConstraintSystem) AllocInput(name string, value ValueFunc) (Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return t.AllocInputValue(name, &v)
}

// AllocInputValue implements ConstraintSystem.
func (t *TestConstraintSystem) AllocInputValue(name string, value *fr.Element) (Variable, error) {
	v := InputVariable(len(t.inputs))
	t.inputNames = append(t.inputNames, t.register(name, namedObject{kind: objVariable, v: v}))
	t.inputs = append(t.inputs, *value)
	return v, nil
}

// Enforce implements ConstraintSystem. The combinations are copied, so callers may reuse them.
func (t *TestConstraintSystem) Enforce(name string, a, b, c LinearCombination) {
	path := t.register(name, namedObject{kind: objConstraint, index: len(t.constraints)})
	t.constraints = append(t.constraints, testConstraint{a: a.Clone(), b: b.Clone(), c: c.Clone(), path: path})
}

// Push implements ConstraintSystem.
func (t *TestConstraintSystem) Push(name string) {
	t.register(name, namedObject{kind: objNamespace})
	t.names.push(name)
}

// PushIndexed implements ConstraintSystem.
func (t *TestConstraintSystem) PushIndexed(prefix string, i int) {
	name := fmt.Sprintf("%s%d", prefix, i)
	t.Push(name)
}

// Pop implements ConstraintSystem.
func (t *TestConstraintSystem) Pop() { t.names.pop() }

// WitnessMode implements ConstraintSystem: true.
func (t *TestConstraintSystem) WitnessMode() bool { return true }

// Err returns the first naming error (duplicate path, '/' in a name), or nil.
func (t *TestConstraintSystem) Err() error { return t.err }

// NumConstraints returns the number of enforced constraints.
func (t *TestConstraintSystem) NumConstraints() int { return len(t.constraints) }

// NumInputs returns the number of inputs, ONE included.
func (t *TestConstraintSystem) NumInputs() int { return len(t.inputs) }

// NumAux returns the number of aux variables.
func (t *TestConstraintSystem) NumAux() int { return len(t.aux) }

// Inputs returns the input assignment (ONE first). Callers must not modify it.
func (t *TestConstraintSystem) Inputs() []fr.Element { return t.inputs }

// AuxValues returns the aux assignment. Callers must not modify it.
func (t *TestConstraintSystem) AuxValues() []fr.Element { return t.aux }

// WhichIsUnsatisfied returns the path of the first constraint that does not hold, and false if
// all hold.
func (t *TestConstraintSystem) WhichIsUnsatisfied() (string, bool) {
	if e := t.firstUnsatisfied(); e != nil {
		return e.Path, true
	}
	return "", false
}

func (t *TestConstraintSystem) firstUnsatisfied() *UnsatisfiedError {
	for i := range t.constraints {
		c := &t.constraints[i]
		a := c.a.Eval(t.inputs, t.aux)
		b := c.b.Eval(t.inputs, t.aux)
		cv := c.c.Eval(t.inputs, t.aux)
		a.Mul(&a, &b)
		if !a.Equal(&cv) {
			return &UnsatisfiedError{Path: c.path, AB: a, C: cv}
		}
	}
	return nil
}

// IsSatisfied reports whether there is no naming error and every constraint holds.
func (t *TestConstraintSystem) IsSatisfied() bool {
	_, bad := t.WhichIsUnsatisfied()
	return t.err == nil && !bad
}

// Check returns nil if the system is satisfied, else an error naming the problem.
func (t *TestConstraintSystem) Check() error {
	if t.err != nil {
		return t.err
	}
	if e := t.firstUnsatisfied(); e != nil {
		return e
	}
	return nil
}

// UnsatisfiedError names the first constraint that does not hold, with ⟨A,z⟩·⟨B,z⟩ and ⟨C,z⟩.
type UnsatisfiedError struct {
	Path  string
	AB, C fr.Element
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("cs: constraint %q is not satisfied: a·b = %s, c = %s", e.Path, e.AB.String(), e.C.String())
}

// Get returns the value of the variable at path.
func (t *TestConstraintSystem) Get(path string) (fr.Element, error) {
	obj, ok := t.objects[path]
	if !ok || obj.kind != objVariable {
		return fr.Element{}, fmt.Errorf("cs: no variable at path %q", path)
	}
	if obj.v.IsInput() {
		return t.inputs[obj.v.Index()], nil
	}
	return t.aux[obj.v.Index()], nil
}

// Set overrides the value of the variable at path (to test that constraints catch bad witnesses).
func (t *TestConstraintSystem) Set(path string, value fr.Element) error {
	obj, ok := t.objects[path]
	if !ok || obj.kind != objVariable {
		return fmt.Errorf("cs: no variable at path %q", path)
	}
	if obj.v.IsInput() {
		t.inputs[obj.v.Index()] = value
	} else {
		t.aux[obj.v.Index()] = value
	}
	return nil
}

// Variable returns the variable allocated at path.
func (t *TestConstraintSystem) Variable(path string) (Variable, bool) {
	obj, ok := t.objects[path]
	if !ok || obj.kind != objVariable {
		return 0, false
	}
	return obj.v, true
}

// InputName returns the path of input i.
func (t *TestConstraintSystem) InputName(i int) string { return t.inputNames[i] }

// AuxName returns the path of aux i.
func (t *TestConstraintSystem) AuxName(i int) string { return t.auxNames[i] }

// ConstraintPath returns the path of constraint i.
func (t *TestConstraintSystem) ConstraintPath(i int) string { return t.constraints[i].path }

// Constraint returns the linear combinations of the constraint at path.
func (t *TestConstraintSystem) Constraint(path string) (a, b, c LinearCombination, ok bool) {
	obj, found := t.objects[path]
	if !found || obj.kind != objConstraint {
		return nil, nil, nil, false
	}
	tc := &t.constraints[obj.index]
	return tc.a, tc.b, tc.c, true
}

// VerifyInputs reports whether the inputs after ONE equal expected (bellpepper's verify).
func (t *TestConstraintSystem) VerifyInputs(expected []fr.Element) bool {
	if len(expected)+1 != len(t.inputs) {
		return false
	}
	for i := range expected {
		if !expected[i].Equal(&t.inputs[i+1]) {
			return false
		}
	}
	return true
}

// PrettyPrintList returns bellpepper's pretty_print_list: "INPUT <path>" per input (ONE
// first), "AUX <path>" per aux variable, then every constraint path, in allocation order.
func (t *TestConstraintSystem) PrettyPrintList() []string {
	out := make([]string, 0, len(t.inputNames)+len(t.auxNames)+len(t.constraints))
	for _, n := range t.inputNames {
		out = append(out, "INPUT "+n)
	}
	for _, n := range t.auxNames {
		out = append(out, "AUX "+n)
	}
	for i := range t.constraints {
		out = append(out, t.constraints[i].path)
	}
	return out
}
