package core

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/num"
)

// uint64.rs test_uint64_from_bits_be / test_uint64_from_bits.
func TestUInt64FromBits(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < 100; r++ {
		v := rng.NextU64()
		le := make([]boolean.Boolean, 64)
		for i := range le {
			le[i] = boolean.Constant(v>>uint(i)&1 == 1)
		}
		u, err := U64FromBits(le)
		if err != nil || u.Value != v {
			t.Fatal("from_bits")
		}
		u2, err := U64FromBitsBE(u.BitsBE())
		if err != nil || u2.Value != v || ConstantU64(v).Value != v {
			t.Fatal("from_bits_be")
		}
	}
	if _, err := U64FromBits(make([]boolean.Boolean, 63)); err == nil {
		t.Fatal("63 bits accepted")
	}
}

func TestUInt64PackIntoInput(t *testing.T) {
	const v = 0x1234_5678_9abc_def0
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		sys.Push("challenge")
		u, err := AllocU64(sys, v)
		sys.Pop()
		if err != nil {
			return err
		}
		sys.Push("challenge input")
		defer sys.Pop()
		return u.PackIntoInput(sys)
	})
	if err := sys.Check(); err != nil {
		t.Fatal(err)
	}
	if sys.InputName(1) != "challenge input/input 0" || !sys.VerifyInputs([]fr.Element{fr.NewElement(v)}) {
		t.Fatal("packed input")
	}
	if sys.NumConstraints() != 65 {
		t.Fatalf("%d constraints", sys.NumConstraints())
	}
}

func TestBytesIntoBooleanVec(t *testing.T) {
	data := []byte{0x01, 0x80}
	sys := cs.NewTestConstraintSystem()
	sys.Push("le")
	le, err := BytesIntoBooleanVec(sys, data, 16)
	sys.Pop()
	if err != nil {
		t.Fatal(err)
	}
	sys.Push("be")
	be, err := BytesIntoBooleanVecBE(sys, data, 16)
	sys.Pop()
	if err != nil {
		t.Fatal(err)
	}
	wantLE := multipack.BytesToBitsLE(data)
	wantBE := multipack.BytesToBits(data)
	for i := range wantLE {
		if le[i].Value() != wantLE[i] || be[i].Value() != wantBE[i] {
			t.Fatalf("bit %d", i)
		}
	}
	rev := ReverseBitNumbering(le)
	for i := range rev {
		if rev[i].Value() != wantBE[i] {
			t.Fatalf("renumbered bit %d", i)
		}
	}
	if len(ReverseBitNumbering(le[:3])) != 8 {
		t.Fatal("padding")
	}
	if _, err := BytesIntoBooleanVec(cs.NewTestConstraintSystem(), data, 8); err == nil {
		t.Fatal("size mismatch accepted")
	}
}

// constraint.rs add/sub and encode/decode: one allocation and one constraint each.
func TestAddSubEncodeDecode(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for r := 0; r < 20; r++ {
		kv, vv := rng.Fr(), rng.Fr()
		sys := cs.NewTestConstraintSystem()
		sys.Push("key")
		k, _ := num.Alloc(sys, kv)
		sys.Pop()
		sys.Push("value")
		v, _ := num.Alloc(sys, vv)
		sys.Pop()
		enc, err := Encode(sys, k, v)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(sys, k, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !dec.Value.Equal(&vv) || sys.NumConstraints() != 2 || sys.Check() != nil {
			t.Fatal("encode/decode")
		}
		Equal(sys, "equal", dec, v)
		if sys.Check() != nil {
			t.Fatal("equal")
		}
		_ = sys.Set("encode_add/add_num/num", fr.NewElement(1))
		if p, _ := sys.WhichIsUnsatisfied(); p != "encode_add/sum constraint" {
			t.Fatalf("caught at %q", p)
		}
	}
}

// xor.rs test_xor_input_circuit: 32-byte key, data of 32..320 bytes.
func TestXor(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for l := 32; l <= 320; l += 96 {
		key := make([]byte, 32)
		data := make([]byte, l)
		rng.Fill(key)
		rng.Fill(data)
		sys := cs.NewTestConstraintSystem()
		sys.Push("key")
		kb, _ := BytesIntoBooleanVec(sys, key, 256)
		sys.Pop()
		sys.Push("data")
		db, _ := BytesIntoBooleanVec(sys, data, 8*l)
		sys.Pop()
		out, err := Xor(sys, kb, db)
		if err != nil || sys.Check() != nil {
			t.Fatal(err)
		}
		for i, b := range out {
			want := (data[i/8]^key[(i/8)%32])>>uint(i%8)&1 == 1
			if b.Value() != want {
				t.Fatalf("len %d bit %d", l, i)
			}
		}
	}
	if _, err := Xor(cs.NewTestConstraintSystem(), make([]boolean.Boolean, 8), nil); err == nil {
		t.Fatal("short key accepted")
	}
}
