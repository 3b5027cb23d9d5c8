package groth16

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// fbTestScalars returns n scalars: first edge cases that stress the signed recoding for window
// c (0, 1, r−1, values around 2^c and 2^(c−1), windows full of ones that carry all the way up),
// then random ones from a fixed seed.
func fbTestScalars(n, c int) []fr.Element {
	var edges []*big.Int
	r := fr.Modulus()
	add := func(x *big.Int) { edges = append(edges, new(big.Int).Mod(x, r)) }
	one := big.NewInt(1)
	pow := func(e int) *big.Int { return new(big.Int).Lsh(one, uint(e)) }
	add(big.NewInt(0))
	add(big.NewInt(1))
	add(new(big.Int).Sub(r, one))
	add(new(big.Int).Sub(r, big.NewInt(2)))
	add(new(big.Int).Sub(pow(c), one))
	add(pow(c))
	add(new(big.Int).Add(pow(c), one))
	add(pow(c - 1))
	add(new(big.Int).Add(pow(c-1), one))
	add(new(big.Int).Sub(pow(c-1), one))
	add(new(big.Int).Sub(pow(254), one))
	add(pow(254))
	add(new(big.Int).Sub(pow(255), one)) // reduces mod r
	// Every window at half+1 (carry out of each window) and at exactly half (no carry).
	halfUp, half := new(big.Int), new(big.Int)
	for k := 0; k*c < 255; k++ {
		halfUp.Add(halfUp, new(big.Int).Lsh(new(big.Int).Add(pow(c-1), one), uint(k*c)))
		half.Add(half, new(big.Int).Lsh(pow(c-1), uint(k*c)))
	}
	add(halfUp)
	add(half)
	add(new(big.Int).Sub(r, halfUp))

	rng := rand.New(rand.NewPCG(uint64(n), uint64(c)))
	out := make([]fr.Element, n)
	for i := range out {
		if i < len(edges) {
			out[i].SetBigInt(edges[i])
			continue
		}
		var b [32]byte
		for j := 0; j < len(b); j += 8 {
			binary.LittleEndian.PutUint64(b[j:], rng.Uint64())
		}
		out[i].SetBigInt(new(big.Int).SetBytes(b[:])) // reduced mod r
	}
	return out
}

func TestFixedBaseMatchesGnark(t *testing.T) {
	ctx := context.Background()
	_, _, g1, g2 := bls.Generators()
	// A point other than the generator, so the tables do not rely on it.
	var h1 bls.G1Affine
	var h2 bls.G2Affine
	h1.ScalarMultiplication(&g1, big.NewInt(0xdecaf))
	h2.ScalarMultiplication(&g2, big.NewInt(0xdecaf))

	windows := []int{2, 3, 4, 5, 7, 8, 11, 12}
	if !testing.Short() {
		windows = append(windows, 13, 16)
	}
	sizes := []int{0, 1, 2, 17, fbChunk + 3}
	for _, c := range windows {
		for bi, b := range []struct {
			p1 *bls.G1Affine
			p2 *bls.G2Affine
		}{{&g1, &g2}, {&h1, &h2}} {
			t1, err := newG1FixedBase(ctx, b.p1, c)
			if err != nil {
				t.Fatal(err)
			}
			t2, err := newG2FixedBase(ctx, b.p2, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range sizes {
				t.Run(fmt.Sprintf("c=%d/base=%d/n=%d", c, bi, n), func(t *testing.T) {
					s := fbTestScalars(n, c)
					got1, err := t1.mul(ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					want1 := batchRef1(b.p1, s)
					if len(got1) != len(want1) {
						t.Fatalf("G1: %d points, want %d", len(got1), len(want1))
					}
					for i := range want1 {
						if got1[i] != want1[i] {
							t.Fatalf("G1 scalar %d (%s): got %s, want %s", i, s[i].String(), got1[i].String(), want1[i].String())
						}
					}
					got2, err := t2.mul(ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					want2 := batchRef2(b.p2, s)
					if len(got2) != len(want2) {
						t.Fatalf("G2: %d points, want %d", len(got2), len(want2))
					}
					for i := range want2 {
						if got2[i] != want2[i] {
							t.Fatalf("G2 scalar %d (%s): got %s, want %s", i, s[i].String(), got2[i].String(), want2[i].String())
						}
					}
				})
			}
		}
	}
}

// batchRef1 and batchRef2 are gnark's batch multiplications (what setup used before), with
// the empty input handled as setup did.
func batchRef1(g *bls.G1Affine, s []fr.Element) []bls.G1Affine {
	if len(s) == 0 {
		return []bls.G1Affine{}
	}
	return bls.BatchScalarMultiplicationG1(g, s)
}

func batchRef2(g *bls.G2Affine, s []fr.Element) []bls.G2Affine {
	if len(s) == 0 {
		return []bls.G2Affine{}
	}
	return bls.BatchScalarMultiplicationG2(g, s)
}

func TestFixedBaseDigits(t *testing.T) {
	// The signed digits must recompose to the scalar, stay in [−half+1, half], and fit the
	// windows (no carry left over), for every window width.
	for c := 2; c <= fbMaxWindow; c++ {
		g := newFBGeom(c)
		d := make([]int32, g.windows)
		for _, s := range fbTestScalars(64, c) {
			g.digits(&s, d)
			sum := new(big.Int)
			for k := g.windows - 1; k >= 0; k-- {
				if d[k] <= -int32(g.half) || d[k] > int32(g.half) {
					t.Fatalf("c=%d: digit %d out of range", c, d[k])
				}
				sum.Lsh(sum, uint(c)).Add(sum, big.NewInt(int64(d[k])))
			}
			var want big.Int
			s.BigInt(&want)
			if sum.Cmp(&want) != 0 {
				t.Fatalf("c=%d: digits of %s recompose to %s", c, want.String(), sum.String())
			}
		}
	}
}

func TestFixedBaseWindow(t *testing.T) {
	for _, tc := range []struct{ n, bytes, lo, hi int }{
		{0, 96, 2, 4}, {1, 96, 2, 4}, {1 << 16, 96, 10, 14}, {10_000_000, 96, 15, 16}, {700_000, 192, 13, 16},
	} {
		c := fbWindow(tc.n, tc.bytes)
		g := newFBGeom(c)
		if c < tc.lo || c > tc.hi || g.windows*g.half*tc.bytes > fbMaxTableBytes {
			t.Errorf("fbWindow(%d, %d) = %d, want %d..%d within the table cap", tc.n, tc.bytes, c, tc.lo, tc.hi)
		}
	}
}

func TestFixedBaseCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, _, g1, _ := bls.Generators()
	tab, err := newG1FixedBase(ctx, &g1, 4)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := tab.mul(ctx, fbTestScalars(3*fbChunk, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("mul after cancel: err = %v, want context.Canceled", err)
	}
	if _, err := newG2FixedBase(ctx, &bls.G2Affine{}, 4); !errors.Is(err, context.Canceled) {
		t.Fatalf("table after cancel: err = %v, want context.Canceled", err)
	}
}

// BenchmarkSetupMul compares gnark's batch multiplication with the fixed-base tables (table
// build included, window chosen as setup does) at 2^16 scalars.
func BenchmarkSetupMul(b *testing.B) {
	const n = 1 << 16
	ctx := context.Background()
	_, _, g1, g2 := bls.Generators()
	s := fbTestScalars(n, 16)
	b.Run("G1/gnark", func(b *testing.B) {
		for b.Loop() {
			bls.BatchScalarMultiplicationG1(&g1, s)
		}
	})
	b.Run("G1/fixedbase", func(b *testing.B) {
		for b.Loop() {
			t1, err := newG1FixedBase(ctx, &g1, fbWindow(n, bls.SizeOfG1AffineUncompressed))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t1.mul(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("G2/gnark", func(b *testing.B) {
		for b.Loop() {
			bls.BatchScalarMultiplicationG2(&g2, s)
		}
	})
	b.Run("G2/fixedbase", func(b *testing.B) {
		for b.Loop() {
			t2, err := newG2FixedBase(ctx, &g2, fbWindow(n, bls.SizeOfG2AffineUncompressed))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t2.mul(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
