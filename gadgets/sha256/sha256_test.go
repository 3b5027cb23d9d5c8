package sha256

import (
	gosha "crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
)

func bitsToBytes(t *testing.T, bits []boolean.Boolean) []byte {
	t.Helper()
	out := make([]byte, len(bits)/8)
	for i, b := range bits {
		if b.Value() {
			out[i/8] |= 0x80 >> uint(i%8)
		}
	}
	return out
}

func TestBlankHash(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	in := make([]boolean.Boolean, 512)
	for i := range in {
		in[i] = boolean.Constant(i == 0)
	}
	out, err := BlockNoPadding(sys, in)
	if err != nil {
		t.Fatal(err)
	}
	if sys.NumConstraints() != 0 || !sys.IsSatisfied() {
		t.Fatalf("%d constraints", sys.NumConstraints())
	}
	if got := hex.EncodeToString(bitsToBytes(t, out)); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("digest %s", got)
	}
}

// allocInput allocates bellpepper's test_full_block input: 512 bits drawn as
// next_u32() % 2 from the bellpepper seed, in namespaces "input bit i".
func allocInput(sys cs.ConstraintSystem) ([]boolean.Boolean, []byte, error) {
	rng := xorshift.New(xorshift.BellpepperSeed)
	bits := make([]boolean.Boolean, 512)
	raw := make([]byte, 64)
	for i := range bits {
		v := rng.NextU32()%2 != 0
		if v {
			raw[i/8] |= 0x80 >> uint(i%8)
		}
		sys.PushIndexed("input bit ", i)
		b, err := boolean.Alloc(sys, v)
		sys.Pop()
		if err != nil {
			return nil, nil, err
		}
		bits[i] = boolean.Is(b)
	}
	return bits, raw, nil
}

func TestFullBlockAndHash(t *testing.T) {
	for _, tc := range []struct {
		name        string
		full        bool
		constraints int
		digest      string
		flipCaught  string
	}{
		{"compression", false, 25840, "a91be46c89fe4cb18f85d99956bf9b1afe0a96d1b6c960a30d4e9dcafcf501ba", "sha256/w extension 23/computation of w[i]/multieq 0"},
		{"sha256", true, 44874, "39b920088193af138e8d3494179b1d9a20442bb23e28e65028b068c6a9e48771", "sha256/block 0/w extension 23/computation of w[i]/multieq 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []boolean.Boolean
			var raw []byte
			sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
				in, r, err := allocInput(sys)
				if err != nil {
					return err
				}
				sys.Push("sha256")
				defer sys.Pop()
				var o []boolean.Boolean
				if tc.full {
					o, err = Hash(sys, in)
				} else {
					o, err = BlockNoPadding(sys, in)
				}
				if sys.WitnessMode() {
					out, raw = o, r
				}
				return err
			})
			if n := sys.NumConstraints() - 512; n != tc.constraints {
				t.Fatalf("%d constraints beyond the input bits, want %d", n, tc.constraints)
			}
			if err := sys.Check(); err != nil {
				t.Fatal(err)
			}
			var want []byte
			if tc.full {
				d := gosha.Sum256(raw)
				want = d[:]
			} else {
				want = compressRef(raw)
			}
			if got := bitsToBytes(t, out); hex.EncodeToString(got) != hex.EncodeToString(want) {
				t.Fatalf("digest %x want %x", got, want)
			}
			t.Logf("digest %s", sys.Hash())
			if tc.digest != "" && sys.Hash() != tc.digest {
				t.Fatalf("structure digest %s, recorded %s", sys.Hash(), tc.digest)
			}
			// Flipping an input bit breaks the witness; the first constraint
			// caught is named.
			// (The batched addition equality holding w[0] catches it.)
			if p := gadgettest.FlipAux(t, sys, "input bit 17/boolean"); p != tc.flipCaught {
				t.Fatalf("flipped input bit caught at %q, want %q", p, tc.flipCaught)
			}
		})
	}
}

// compressRef is one SHA-256 compression of a 64-byte block with the IV.
func compressRef(block []byte) []byte {
	k := roundConstants
	var w [64]uint32
	for i := 0; i < 16; i++ {
		w[i] = uint32(block[4*i])<<24 | uint32(block[4*i+1])<<16 | uint32(block[4*i+2])<<8 | uint32(block[4*i+3])
	}
	rotr := func(x uint32, n uint) uint32 { return x>>n | x<<(32-n) }
	for i := 16; i < 64; i++ {
		s0 := rotr(w[i-15], 7) ^ rotr(w[i-15], 18) ^ w[i-15]>>3
		s1 := rotr(w[i-2], 17) ^ rotr(w[i-2], 19) ^ w[i-2]>>10
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	h := iv
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := 0; i < 64; i++ {
		s1 := rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
		ch := (e & f) ^ (^e & g)
		t1 := hh + s1 + ch + k[i] + w[i]
		s0 := rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
		maj := (a & b) ^ (a & c) ^ (b & c)
		t2 := s0 + maj
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	out := make([]byte, 32)
	for i, v := range []uint32{h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + hh} {
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	return out
}

// bellpepper test_against_vectors: lengths 0..31 and 32..255 step 8, random
// bytes from the bellpepper seed. By default every fourth length plus the
// padding boundaries run; GADGETS_EXHAUSTIVE=1 runs them all.
func TestAgainstVectors(t *testing.T) {
	rng := xorshift.New(xorshift.BellpepperSeed)
	var lens []int
	for l := 0; l < 32; l++ {
		lens = append(lens, l)
	}
	for l := 32; l < 256; l += 8 {
		lens = append(lens, l)
	}
	all := os.Getenv("GADGETS_EXHAUSTIVE") == "1"
	for k, l := range lens {
		skip := k%4 != 0 && l != 31 && l != 56 && l != 64
		if gadgettest.Light() {
			skip = l != 0 && l != 56
		}
		if !all && skip {
			// Draw the bytes anyway so later lengths see bellpepper's stream.
			for i := 0; i < l; i++ {
				rng.NextU32()
			}
			continue
		}
		data := make([]byte, l)
		for i := range data {
			data[i] = byte(rng.NextU32())
		}
		sys := cs.NewTestConstraintSystem()
		var in []boolean.Boolean
		for bi, by := range data {
			for k := 7; k >= 0; k-- {
				sys.Push(fmt.Sprintf("input bit %d %d", bi, k))
				b, err := boolean.Alloc(sys, by>>uint(k)&1 == 1)
				sys.Pop()
				if err != nil {
					t.Fatal(err)
				}
				in = append(in, boolean.Is(b))
			}
		}
		out, err := Hash(sys, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		want := gosha.Sum256(data)
		if got := bitsToBytes(t, out); string(got) != string(want[:]) {
			t.Fatalf("len %d: %x want %x", l, got, want)
		}
	}
	if _, err := Hash(cs.NewTestConstraintSystem(), make([]boolean.Boolean, 7)); err == nil {
		t.Fatal("7-bit input accepted")
	}
}

func BenchmarkCompression(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sys := cs.NewTestConstraintSystem()
		in, _, err := allocInput(sys)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := BlockNoPadding(sys, in); err != nil {
			b.Fatal(err)
		}
	}
}
