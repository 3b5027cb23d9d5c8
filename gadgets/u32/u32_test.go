package u32

import (
	"math/bits"
	"path"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
)

func rounds() int {
	if testing.Short() {
		return 20
	}
	return 200
}

func checkBits(t *testing.T, u UInt32, want uint32) {
	t.Helper()
	if u.Value != want {
		t.Fatalf("value %#x want %#x", u.Value, want)
	}
	for i, b := range u.Bits {
		if b.Value() != (want>>uint(i)&1 == 1) {
			t.Fatalf("bit %d of %#x", i, want)
		}
	}
}

func TestFromBits(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < rounds(); r++ {
		v := rng.NextU32()
		le := make([]boolean.Boolean, 32)
		for i := range le {
			le[i] = boolean.Constant(v>>uint(i)&1 == 1)
		}
		checkBits(t, FromBits(le), v)
		be := make([]boolean.Boolean, 32)
		for i := range be {
			be[i] = le[31-i]
		}
		u := FromBitsBE(be)
		checkBits(t, u, v)
		for i, b := range u.BitsBE() {
			if b.Value() != be[i].Value() {
				t.Fatal("BitsBE round trip")
			}
		}
	}
}

func TestRotrShr(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	v := rng.NextU32()
	for n := 0; n < 40; n++ {
		checkBits(t, Constant(v).Rotr(n), bits.RotateLeft32(v, -(n%32)))
		checkBits(t, Constant(v).Shr(n), v>>uint(n%32))
	}
}

func TestXorMajCh(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < rounds(); r++ {
		a, b, c := rng.NextU32(), rng.NextU32(), rng.NextU32()
		var x, m, h UInt32
		sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
			sys.Push("a_bit")
			au, err := Alloc(sys, a)
			sys.Pop()
			if err != nil {
				return err
			}
			bu := Constant(b)
			sys.Push("c_bit")
			cu, err := Alloc(sys, c)
			sys.Pop()
			if err != nil {
				return err
			}
			sys.Push("xor")
			xx, err := au.Xor(sys, bu)
			sys.Pop()
			if err != nil {
				return err
			}
			sys.Push("maj")
			mm, err := Sha256Maj(sys, au, bu, cu)
			sys.Pop()
			if err != nil {
				return err
			}
			sys.Push("ch")
			hh, err := Sha256Ch(sys, au, bu, cu)
			sys.Pop()
			if sys.WitnessMode() {
				x, m, h = xx, mm, hh
			}
			return err
		})
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		checkBits(t, x, a^b)
		checkBits(t, m, (a&b)^(a&c)^(b&c))
		checkBits(t, h, (a&b)^(^a&c))
	}
}

func TestAddManyConstants(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < rounds(); r++ {
		a, b, c := rng.NextU32(), rng.NextU32(), rng.NextU32()
		sys := cs.NewTestConstraintSystem()
		m := NewMultiEq(sys)
		sys.Push("addition")
		s, err := AddMany(sys, m, []UInt32{Constant(a), Constant(b), Constant(c)})
		sys.Pop()
		m.Flush()
		if err != nil {
			t.Fatal(err)
		}
		if sys.NumConstraints() != 0 || sys.NumAux() != 0 {
			t.Fatal("constant addition allocated")
		}
		checkBits(t, s, a+b+c)
	}
}

// bellpepper test_uint32_addmany: (a ⊕ b) + c + d with b, c constant; a flip of
// "addition/result bit 0/boolean" breaks the system.
func TestAddMany(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < rounds(); r++ {
		a, b, c, d := rng.NextU32(), rng.NextU32(), rng.NextU32(), rng.NextU32()
		var res UInt32
		sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
			sys.Push("a_bit")
			au, err := Alloc(sys, a)
			sys.Pop()
			if err != nil {
				return err
			}
			sys.Push("d_bit")
			du, err := Alloc(sys, d)
			sys.Pop()
			if err != nil {
				return err
			}
			sys.Push("xor")
			x, err := au.Xor(sys, Constant(b))
			sys.Pop()
			if err != nil {
				return err
			}
			m := NewMultiEq(sys)
			sys.Push("addition")
			s, err := AddMany(sys, m, []UInt32{x, Constant(c), du})
			sys.Pop()
			m.Flush()
			if sys.WitnessMode() {
				res = s
			}
			return err
		})
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		checkBits(t, res, (a^b)+c+d)
		// 64 operand bits, 34 result bits (3·(2^32−1) < 2^34), one multieq.
		if sys.NumConstraints() != 64+34+1 {
			t.Fatalf("%d constraints", sys.NumConstraints())
		}
		if p := gadgettest.FlipAux(t, sys, "addition/result bit 0/boolean"); p != "multieq 0" {
			t.Fatalf("flip caught at %q", p)
		}
	}
	if _, err := AddMany(cs.NewTestConstraintSystem(), nil, []UInt32{Constant(1)}); err == nil {
		t.Fatal("one operand accepted")
	}
}

// MultiEq batches equalities until 254 bits would be exceeded.
func TestMultiEqBatching(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	m := NewMultiEq(sys)
	for i := 0; i < 8; i++ {
		sys.PushIndexed("add ", i)
		a, _ := Alloc(sys, uint32(i))
		if _, err := AddMany(sys, m, []UInt32{a, Constant(7)}); err != nil {
			t.Fatal(err)
		}
		sys.Pop()
	}
	m.Flush()
	// Each 2-operand sum uses 33 bits: 7 fit in 254, the eighth starts a second batch.
	got := 0
	for i := 0; i < sys.NumConstraints(); i++ {
		p := sys.ConstraintPath(i)
		if strings.HasPrefix(path.Base(p), "multieq ") {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("%d multieq constraints, want 2", got)
	}
	if err := sys.Check(); err != nil {
		t.Fatal(err)
	}
}
