package blake2s

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
)

var pers = [8]byte{'1', '2', '3', '4', '5', '6', '7', '8'}

func bitsToBytesLE(bits []boolean.Boolean) []byte {
	out := make([]byte, len(bits)/8)
	for i, b := range bits {
		if b.Value() {
			out[i/8] |= 1 << uint(i%8)
		}
	}
	return out
}

func allocBytes(t testing.TB, sys cs.ConstraintSystem, data []byte) []boolean.Boolean {
	var in []boolean.Boolean
	for bi, by := range data {
		for k := 0; k < 8; k++ {
			sys.Push(fmt.Sprintf("input bit %d %d", bi, k))
			b, err := boolean.Alloc(sys, by>>uint(k)&1 == 1)
			sys.Pop()
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, boolean.Is(b))
		}
	}
	return in
}

func TestBlankHash(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	out, err := Hash(sys, nil, pers)
	if err != nil {
		t.Fatal(err)
	}
	const want = "c59f682376d137f3f255e671e207d1f2374ebe504e9314208a52d9f88d69e8c8"
	if sys.NumConstraints() != 0 || hex.EncodeToString(bitsToBytesLE(out)) != want {
		t.Fatalf("%d constraints, digest %x", sys.NumConstraints(), bitsToBytesLE(out))
	}
	if d := Sum256(nil, pers); hex.EncodeToString(d[:]) != want {
		t.Fatalf("native %x", d)
	}
}

func TestConstraintCounts(t *testing.T) {
	// 512 allocated bits (all true): 21,518 including the 512 bit constraints.
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		in := make([]boolean.Boolean, 512)
		for i := range in {
			sys.PushIndexed("input bit ", i)
			b, err := boolean.Alloc(sys, true)
			sys.Pop()
			if err != nil {
				return err
			}
			in[i] = boolean.Is(b)
		}
		_, err := Hash(sys, in, pers)
		return err
	})
	if sys.NumConstraints() != 21518 || sys.Check() != nil {
		t.Fatalf("%d constraints, want 21,518", sys.NumConstraints())
	}
	const digest = "4ce4ff7fc63323f4eb745961a8106f2fb548fe9477bf814166bc2248111c5132"
	t.Logf("digest %s", sys.Hash())
	if digest != "" && sys.Hash() != digest {
		t.Fatal("structure digest changed")
	}

	// 512 constant bits then 512 allocated bits: still 21,518.
	rng := xorshift.New(xorshift.TestSeed)
	var consts []boolean.Boolean
	for i := 0; i < 512; i++ {
		consts = append(consts, boolean.Constant(rng.NextU32()%2 != 0))
	}
	pre := cs.NewTestConstraintSystem()
	in := append([]boolean.Boolean(nil), consts...)
	for i := 0; i < 512; i++ {
		pre.PushIndexed("input bit ", i)
		b, _ := boolean.Alloc(pre, true)
		pre.Pop()
		in = append(in, boolean.Is(b))
	}
	if _, err := Hash(pre, in, pers); err != nil {
		t.Fatal(err)
	}
	if pre.NumConstraints() != 21518 || pre.Check() != nil {
		t.Fatalf("precomp: %d constraints", pre.NumConstraints())
	}

	// All-constant input: no constraints.
	c := cs.NewTestConstraintSystem()
	if _, err := Hash(c, consts, pers); err != nil || c.NumConstraints() != 0 {
		t.Fatalf("constant input: %d constraints", c.NumConstraints())
	}
}

func TestAgainstNative(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	all := os.Getenv("GADGETS_EXHAUSTIVE") == "1"
	var lens []int
	for l := 0; l < 32; l++ {
		lens = append(lens, l)
	}
	for l := 32; l < 256; l += 8 {
		lens = append(lens, l)
	}
	for k, l := range lens {
		data := make([]byte, l)
		for i := range data {
			data[i] = byte(rng.NextU32())
		}
		skip := k%12 != 0 && l != 64 && l != 65
		if gadgettest.Light() {
			skip = l != 65
		}
		if !all && skip {
			continue
		}
		sys := cs.NewTestConstraintSystem()
		out, err := Hash(sys, allocBytes(t, sys, data), pers)
		if err != nil {
			t.Fatal(err)
		}
		want := Sum256(data, pers)
		if err := sys.Check(); err != nil || string(bitsToBytesLE(out)) != string(want[:]) {
			t.Fatalf("len %d: %v, circuit %x native %x", l, err, bitsToBytesLE(out), want)
		}
	}
}

func TestFixedVector256(t *testing.T) {
	data, _ := hex.DecodeString("be9f9c485e670acce8b1516a378176161b20583637b6f1c536fbc1158a0a3296831df2920e57a442d5738f4be4dd6be89dd7913fc8b4d1c0a815646a4d674b77f7caf313bd880bf759fcac27037c48c2b2a20acd2fd5248e3be426c84a341c0a3c63eaf36e0d537d10b8db5c6e4c801832c41eb1a3ed602177acded8b4b803bd34339d99a18b71df399641cc8dfae2ad193fcd74b5913e704551777160d14c78f2e8d5c32716a8599c1080cb89a40ccd6ba596694a8b4a065d9f2d0667ef423ed2e418093caff884540858b4f4b62acd47edcea880523e1b1cda8eb225c128c2e9e83f14f6e7448c5733a195cac7d79a53dde5083172462c45b2f799e42af1c9")
	const want = "0af5695115ced92c8a0341e43869209636e9aa6472e4576f0f2b996cf812b30e"
	if d := Sum256(data, pers); hex.EncodeToString(d[:]) != want {
		t.Fatalf("native %x", d)
	}
	if gadgettest.Light() {
		return
	}
	sys := cs.NewTestConstraintSystem()
	out, err := Hash(sys, allocBytes(t, sys, data), pers)
	if err != nil || sys.Check() != nil || hex.EncodeToString(bitsToBytesLE(out)) != want {
		t.Fatalf("circuit %x (%v)", bitsToBytesLE(out), err)
	}
}

// bellperson test_blake2s_700_vars.
func TestFixedVector700(t *testing.T) {
	data, _ := hex.DecodeString("5dcfe8bab4c758d2eb1ddb7ef337583e0df3e2c358e1755b7cd303a658de9a1227eed1d1114179a5c3c38d692ff2cf2d4e5c92a9516de750106774bbf9f7d063f707f4c9b6a02c0a77e4feb99e036c3ccaee7d1a31cb144093aa074bc9da608f8ff30b39c3c60e4a243cc0bbd406d1262a7d6607b31c60275c6bcc8b0ac49a06a4b629a98693c5f7640f3bca45e4977cfabc5b17f52838af3433b1fd407dbbdc131e8e4bd58bcee85bbab4b57b656c6a2ec6cf852525bc8423675e2bf29159139cd5df99db94719f3f7167230e0d5bd76f6d7891b656732cef9c3c0d48a5fa3d7a879988157b39015a85451b25af0301ca5e759ac35fea79dca38c673ec6db9f3885d9103e2dcb3304bd3d59b0b1d01babc97ef8a74d91b6ab6bf50f29eb5adf7250a28fd85db37bff0133193635da69caeefc72979cf3bef1d2896d847eea7e8a81e0927893dbd010feb6fb845d0399007d9a148a0596d86cd8f4192631f975c560f4de8da5f712c161342063af3c11029d93d6df7ff46db48343499de9ec4786cac059c4025ef418c9fe40132428ff8b91259d71d1709ff066add84ae944b45a817f60b4c1bf719e39ae23e9b413469db2310793e9137cf38741e5dd2a3c138a566dbde1950c00071b20ac457b46ba9b0a7ebdddcc212bd228d2a4c4146a970e54158477247c27871af1564b176576e9fd43bf63740bf77434bc4ea3b1a4b430e1a11714bf43160145578a575c3f78ddeaa48de97f73460f26f8df2b5d63e31800100d16bc27160fea5ced5a977ef541cfe8dadc7b3991ed1c0d4f16a3076bbfed96ba3e155113e794987af8abb133f06feefabc2ac32eb4d4d4ba1541ca08b9e518d2e74b7f946b0cbd2663d58c689359b9a565821acc619011233d1011963fa302cde34fc9c5ba2e03eeb2512f547391e940d56218e22ae325f2dfa38d4bae35744ee707aa5dc9c17674025d15390a08f5c452343546ef6da0f7")
	const want = "2ab8f0683167ba220eef19dccf4f9b1a8193cc09b35e0235842323950530f18a"
	if d := Sum256(data, pers); len(data) != 700 || hex.EncodeToString(d[:]) != want {
		t.Fatalf("native %x", d)
	}
	if gadgettest.Light() {
		return
	}
	sys := cs.NewTestConstraintSystem()
	out, err := Hash(sys, allocBytes(t, sys, data), pers)
	if err != nil || sys.Check() != nil || hex.EncodeToString(bitsToBytesLE(out)) != want {
		t.Fatalf("circuit %x (%v)", bitsToBytesLE(out), err)
	}
}

// The native implementation agrees with Python's hashlib on random inputs.
func TestNativeAgainstPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not available")
	}
	rng := xorshift.New(xorshift.BellpepperSeed)
	for _, l := range []int{0, 1, 63, 64, 65, 128, 200} {
		data := make([]byte, l)
		rng.Fill(data)
		var p [8]byte
		rng.Fill(p[:])
		script := fmt.Sprintf("import hashlib;print(hashlib.blake2s(bytes.fromhex('%x'),digest_size=32,person=bytes.fromhex('%x')).hexdigest())", data, p[:])
		out, err := exec.Command(py, "-c", script).Output()
		if err != nil {
			t.Fatal(err)
		}
		d := Sum256(data, p)
		if got := hex.EncodeToString(d[:]); got != strings.TrimSpace(string(out)) {
			t.Fatalf("len %d: go %s python %s", l, got, out)
		}
	}
}

// bellperson test_blake2s_test_vectors: two 1,024-byte inputs drawn as
// next_u32() as u8 from TEST_SEED; the circuit runs on the first one when
// GADGETS_EXHAUSTIVE=1 (it is 180k constraints).
func TestVectors1024(t *testing.T) {
	rng := xorshift.New(xorshift.TestSeed)
	for i, want := range []string{
		"a1309e334376c8f36a736a4ab0e691ef931ee3ebdb9ea96187127136fea622a1",
		"82fefff60f265cea255252f7c194a7f93965dffee0609ef74eb67f0d76cd41c6",
	} {
		data := make([]byte, 1024)
		for k := range data {
			data[k] = byte(rng.NextU32())
		}
		if d := Sum256(data, pers); hex.EncodeToString(d[:]) != want {
			t.Fatalf("vector %d: native %x", i, d)
		}
		if i > 0 || os.Getenv("GADGETS_EXHAUSTIVE") != "1" {
			continue
		}
		sys := cs.NewTestConstraintSystem()
		out, err := Hash(sys, allocBytes(t, sys, data), pers)
		if err != nil || sys.Check() != nil || hex.EncodeToString(bitsToBytesLE(out)) != want {
			t.Fatalf("vector %d: circuit %x (%v)", i, bitsToBytesLE(out), err)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Hash(cs.NewTestConstraintSystem(), make([]boolean.Boolean, 9), pers); err == nil {
		t.Fatal("9 bits accepted")
	}
}
