package cs

import (
	"errors"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ValueFunc computes a variable's witness value. Blank systems never call it.
type ValueFunc func() (fr.Element, error)

// ErrAssignmentMissing is returned by value functions (and gadgets) that lack a witness value,
// bellpepper's SynthesisError::AssignmentMissing.
var ErrAssignmentMissing = errors.New("cs: assignment missing")

// ErrUnsatisfiable is bellpepper's SynthesisError::Unsatisfiable (e.g. inverting zero).
var ErrUnsatisfiable = errors.New("cs: constraint system is unsatisfiable")

// ErrDivisionByZero is bellpepper's SynthesisError::DivisionByZero.
var ErrDivisionByZero = errors.New("cs: division by zero")

// ConstraintSystem is what a Circuit synthesizes into (bellpepper's ConstraintSystem).
//
// Names are plain strings that must not contain '/'; only systems that keep names (the
// TestConstraintSystem) look at them, so in proving and blank modes they cost nothing. For
// indexed namespaces ("bit 3", "challenge_7") use PushIndexed, which formats lazily.
type ConstraintSystem interface {
	// Alloc allocates an aux variable. In witness mode value is called once; its error is returned.
	Alloc(name string, value ValueFunc) (Variable, error)
	// AllocValue allocates an aux variable with a known value (ignored in blank mode).
	AllocValue(name string, value *fr.Element) (Variable, error)
	// AllocInput allocates a public input variable.
	AllocInput(name string, value ValueFunc) (Variable, error)
	// AllocInputValue allocates a public input with a known value (ignored in blank mode).
	AllocInputValue(name string, value *fr.Element) (Variable, error)
	// Enforce adds the constraint a · b = c. Implementations do not retain a, b, c (they are
	// evaluated or copied), so callers may reuse their storage for the next constraint.
	Enforce(name string, a, b, c LinearCombination)
	// Push enters the namespace name; Pop leaves it.
	Push(name string)
	// PushIndexed enters the namespace prefix+strconv.Itoa(i), e.g. PushIndexed("bit ", 3).
	PushIndexed(prefix string, i int)
	// Pop leaves the innermost namespace.
	Pop()
	// WitnessMode reports whether the system computes witness values; gadgets may skip value work
	// when it is false.
	WitnessMode() bool
}

// Circuit is a synthesizable statement (bellpepper's Circuit).
type Circuit interface {
	Synthesize(cs ConstraintSystem) error
}

// CircuitFunc adapts a function to the Circuit interface.
type CircuitFunc func(cs ConstraintSystem) error

// Synthesize calls f(cs).
func (f CircuitFunc) Synthesize(cs ConstraintSystem) error { return f(cs) }

// Namespace runs fn inside namespace name, popping it on every path out.
func Namespace(cs ConstraintSystem, name string, fn func() error) error {
	cs.Push(name)
	defer cs.Pop()
	return fn()
}

// Shape is the size of a synthesized system, including the ONE input and the input constraints.
type Shape struct {
	NumInputs      int // public inputs, ONE included
	NumAux         int // private variables
	NumConstraints int // circuit constraints plus one input_i·0=0 row per input
}

// DomainSize returns the smallest power of two ≥ NumConstraints (the FFT domain m); at least 1.
func (s Shape) DomainSize() int {
	m := 1
	for m < s.NumConstraints {
		m <<= 1
	}
	return m
}

// nameStack keeps namespace paths for systems that record names.
type nameStack struct {
	parts []string
}

func (n *nameStack) push(name string) { n.parts = append(n.parts, name) }
func (n *nameStack) pushIndexed(prefix string, i int) {
	n.parts = append(n.parts, prefix+strconv.Itoa(i))
}
func (n *nameStack) pop() {
	if len(n.parts) == 0 {
		panic("cs: Pop without Push")
	}
	n.parts = n.parts[:len(n.parts)-1]
}

// path joins the namespaces and name with '/'.
func (n *nameStack) path(name string) string {
	size := len(name)
	for _, p := range n.parts {
		size += len(p) + 1
	}
	b := make([]byte, 0, size)
	for _, p := range n.parts {
		b = append(b, p...)
		b = append(b, '/')
	}
	b = append(b, name...)
	return string(b)
}
