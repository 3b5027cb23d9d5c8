package por

import (
	"fmt"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/num"
)

// Pick allocates "pick result" = condition ? a : b with
// "pick": (b − a)·condition = b − result.
func Pick(sys cs.ConstraintSystem, condition boolean.Boolean, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	v := b.Value
	if condition.Value() {
		v = a.Value
	}
	sys.Push("pick result")
	c, err := num.Alloc(sys, v)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("pick", nil, nil, nil)
		return c, nil
	}
	sys.Enforce("pick", cs.LCOf(b.Var).Sub(a.Var), condition.LC(), cs.LCOf(b.Var).Sub(c.Var))
	return c, nil
}

func pickNS(sys cs.ConstraintSystem, name string, condition boolean.Boolean, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	return Pick(sys, condition, a, b)
}

// Select returns from[index], index given by pathBits (least significant
// first), with size − 1 picks named "pick i, j".
func Select(sys cs.ConstraintSystem, from []num.AllocatedNum, pathBits []boolean.Boolean) (num.AllocatedNum, error) {
	if 1<<len(pathBits) != len(from) {
		return num.AllocatedNum{}, fmt.Errorf("por: select from %d elements with %d bits", len(from), len(pathBits))
	}
	state := append([]num.AllocatedNum(nil), from...)
	half := len(from) / 2
	for i := 0; i < len(pathBits); i++ {
		bit := pathBits[len(pathBits)-1-i]
		next := make([]num.AllocatedNum, half)
		for j := 0; j < half; j++ {
			p, err := pickNS(sys, fmt.Sprintf("pick %d, %d", i, j), bit, state[half+j], state[j])
			if err != nil {
				return num.AllocatedNum{}, err
			}
			next[j] = p
		}
		state = next
		half /= 2
	}
	return state[0], nil
}

// Insert places element among elements at the index given by bits (least
// significant first), with rust-fil-proofs' specialised circuits for 2, 4
// and 8 outputs and the generic select-based one otherwise.
func Insert(sys cs.ConstraintSystem, element num.AllocatedNum, bits []boolean.Boolean, elements []num.AllocatedNum) ([]num.AllocatedNum, error) {
	size := len(elements) + 1
	if 1<<len(bits) != size {
		return nil, fmt.Errorf("por: insert into %d elements with %d bits", len(elements), len(bits))
	}
	switch size {
	case 2:
		return insert2(sys, element, bits, elements)
	case 4:
		return insert4(sys, element, bits, elements)
	case 8:
		return insert8(sys, element, bits, elements)
	}
	out := make([]num.AllocatedNum, size)
	for pos := 0; pos < size; pos++ {
		choices := make([]num.AllocatedNum, size)
		for index := 0; index < size; index++ {
			switch {
			case pos < index:
				choices[index] = elements[pos]
			case pos == index:
				choices[index] = element
			default:
				choices[index] = elements[pos-1]
			}
		}
		sys.PushIndexed("choice at ", pos)
		r, err := Select(sys, choices, bits)
		sys.Pop()
		if err != nil {
			return nil, err
		}
		out[pos] = r
	}
	return out, nil
}

type pickStep struct {
	name string
	cond boolean.Boolean
	a, b *num.AllocatedNum
	out  *num.AllocatedNum
}

func runPicks(sys cs.ConstraintSystem, steps []pickStep) error {
	for _, s := range steps {
		r, err := pickNS(sys, s.name, s.cond, *s.a, *s.b)
		if err != nil {
			return err
		}
		*s.out = r
	}
	return nil
}

func insert2(sys cs.ConstraintSystem, element num.AllocatedNum, bits []boolean.Boolean, elements []num.AllocatedNum) ([]num.AllocatedNum, error) {
	out := make([]num.AllocatedNum, 2)
	err := runPicks(sys, []pickStep{
		{"binary insert 0", bits[0], &elements[0], &element, &out[0]},
		{"binary insert 1", bits[0], &element, &elements[0], &out[1]},
	})
	return out, err
}

func insert4(sys cs.ConstraintSystem, element num.AllocatedNum, bits []boolean.Boolean, elements []num.AllocatedNum) ([]num.AllocatedNum, error) {
	b0, b1 := bits[0], bits[1]
	a, b, c, d := &element, &elements[0], &elements[1], &elements[2]
	var p0x0, p0, p1x0, p1, p2x1, p2, p3x1, p3 num.AllocatedNum
	err := runPicks(sys, []pickStep{
		{"p0_x0", b0, b, a, &p0x0},
		{"p0", b1, b, &p0x0, &p0},
		{"p1_x0", b0, a, b, &p1x0},
		{"p1", b1, c, &p1x0, &p1},
		{"p2_x1", b0, d, a, &p2x1},
		{"p2", b1, &p2x1, c, &p2},
		{"p3_x1", b0, a, d, &p3x1},
		{"p3", b1, &p3x1, d, &p3},
	})
	return []num.AllocatedNum{p0, p1, p2, p3}, err
}

func insert8(sys cs.ConstraintSystem, element num.AllocatedNum, bits []boolean.Boolean, elements []num.AllocatedNum) ([]num.AllocatedNum, error) {
	b0, b1, b2 := bits[0], bits[1], bits[2]
	if b0.Kind != boolean.KindIs || b1.Kind != boolean.KindIs {
		return nil, fmt.Errorf("por: insert_8 needs allocated, unnegated bits")
	}
	sys.Push("b0 nor b1")
	nor, err := boolean.Nor(sys, b0.Bit, b1.Bit)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	sys.Push("b0 and b1")
	and, err := boolean.And(sys, b0.Bit, b1.Bit)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	b0NorB1, b0AndB1 := boolean.Is(nor), boolean.Is(and)
	a := &element
	b, c, d, e, f, g, h := &elements[0], &elements[1], &elements[2], &elements[3], &elements[4], &elements[5], &elements[6]
	var p0xx0, p0, p1x00, p1xx0, p1, p2x10, p2xx0, p2, p3xx0, p3, p4xx1, p4, p5x01, p5xx1, p5, p6x11, p6xx1, p6, p7xx1, p7 num.AllocatedNum
	err = runPicks(sys, []pickStep{
		{"p0_xx0", b0NorB1, a, b, &p0xx0},
		{"p0", b2, b, &p0xx0, &p0},
		{"p1_x00", b0, a, b, &p1x00},
		{"p1_xx0", b1, c, &p1x00, &p1xx0},
		{"p1", b2, c, &p1xx0, &p1},
		{"p2_x10", b0, d, a, &p2x10},
		{"p2_xx0", b1, &p2x10, c, &p2xx0},
		{"p2", b2, d, &p2xx0, &p2},
		{"p3_xx0", b0AndB1, a, d, &p3xx0},
		{"p3", b2, e, &p3xx0, &p3},
		{"p4_xx1", b0NorB1, a, f, &p4xx1},
		{"p4", b2, &p4xx1, e, &p4},
		{"p5_x01", b0, a, f, &p5x01},
		{"p5_xx1", b1, g, &p5x01, &p5xx1},
		{"p5", b2, &p5xx1, f, &p5},
		{"p6_x11", b0, h, a, &p6x11},
		{"p6_xx1", b1, &p6x11, g, &p6xx1},
		{"p6", b2, &p6xx1, g, &p6},
		{"p7_xx1", b0AndB1, a, h, &p7xx1},
		{"p7", b2, &p7xx1, h, &p7},
	})
	return []num.AllocatedNum{p0, p1, p2, p3, p4, p5, p6, p7}, err
}
