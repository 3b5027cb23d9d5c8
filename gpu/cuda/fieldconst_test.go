package cuda

import (
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestNativeFieldConstants: the moduli, Montgomery ones and inverses that native/field.cuh
// writes out by hand (device and host copies) are gnark-crypto's, limb by limb (32-bit limbs,
// least significant first).
func TestNativeFieldConstants(t *testing.T) {
	src, err := os.ReadFile("../../native/field.cuh")
	if err != nil {
		if _, modErr := os.Stat("../../go.mod"); modErr != nil {
			// A test binary run outside the source tree (a GPU host) has no sources to read.
			t.Skip("not run from the source tree:", err)
		}
		t.Fatal(err)
	}
	arrays := map[string][]uint32{}
	for _, m := range regexp.MustCompile(`(?s)\b(F[PR]_(?:MOD|ONE)(?:_H)?)\[\d+\]\s*=\s*\{([^}]*)\}`).FindAllSubmatch(src, -1) {
		var limbs []uint32
		for _, w := range strings.Split(string(m[2]), ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(w), 0, 32)
			if err != nil {
				t.Fatalf("%s: limb %q: %v", m[1], w, err)
			}
			limbs = append(limbs, uint32(v))
		}
		arrays[string(m[1])] = limbs
	}
	scalars := map[string]uint32{}
	for _, m := range regexp.MustCompile(`\b(F[PR]_INV)\s*=\s*(0x[0-9a-fA-F]+)`).FindAllSubmatch(src, -1) {
		v, err := strconv.ParseUint(string(m[2]), 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		scalars[string(m[1])] = uint32(v)
	}
	limbsOf := func(x *big.Int, n int) []uint32 {
		out := make([]uint32, n)
		v := new(big.Int).Set(x)
		mask := big.NewInt(1<<32 - 1)
		for i := range out {
			out[i] = uint32(new(big.Int).And(v, mask).Uint64())
			v.Rsh(v, 32)
		}
		return out
	}
	// −m⁻¹ mod 2^32, the Montgomery constant of 32-bit limbs.
	inv := func(m *big.Int) uint32 {
		w := new(big.Int).Lsh(big.NewInt(1), 32)
		x := new(big.Int).ModInverse(new(big.Int).Mod(m, w), w)
		return uint32(new(big.Int).Mod(new(big.Int).Neg(x), w).Uint64())
	}
	// gnark-crypto's Montgomery one, its 64-bit words as a number.
	words := func(ws []uint64) *big.Int {
		x := new(big.Int)
		for i := len(ws) - 1; i >= 0; i-- {
			x.Lsh(x, 64).Or(x, new(big.Int).SetUint64(ws[i]))
		}
		return x
	}
	fpOne, frOne := fp.One(), fr.One()
	for _, f := range []struct {
		name         string
		modulus, one *big.Int
		limbs        int
	}{{"FP", fp.Modulus(), words(fpOne[:]), 12}, {"FR", fr.Modulus(), words(frOne[:]), 8}} {
		one := f.one
		for _, suffix := range []string{"", "_H"} {
			for name, want := range map[string][]uint32{f.name + "_MOD" + suffix: limbsOf(f.modulus, f.limbs), f.name + "_ONE" + suffix: limbsOf(one, f.limbs)} {
				got, ok := arrays[name]
				if !ok {
					t.Errorf("%s not found in native/field.cuh", name)
					continue
				}
				if len(got) != len(want) {
					t.Errorf("%s has %d limbs, want %d", name, len(got), len(want))
					continue
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s limb %d is %#08x, want %#08x", name, i, got[i], want[i])
					}
				}
			}
		}
		if got, want := scalars[f.name+"_INV"], inv(f.modulus); got != want {
			t.Errorf("%s_INV is %#08x, want %#08x", f.name, got, want)
		}
	}
}
