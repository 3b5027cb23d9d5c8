package groth16

import (
	"context"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// TestComputeHPaths checks that the table-free FFT path (large domains) gives the same h as the
// precomputed one, and that h·Z = A·B − C as polynomials (checked at a random point).
func TestComputeHPaths(t *testing.T) {
	const m = 1 << 10
	n := m - 3
	vecs := func() (a, b, c []fr.Element) {
		a, b, c = make([]fr.Element, n, m), make([]fr.Element, n, m), make([]fr.Element, n, m)
		for i := 0; i < n; i++ {
			a[i].SetUint64(uint64(i*7 + 1))
			b[i].SetUint64(uint64(i*i + 3))
			c[i].Mul(&a[i], &b[i]) // satisfied rows: Z divides A·B − C
		}
		return
	}
	a, b, c := vecs()
	pa, pb, pc := interpolate(a, m), interpolate(b, m), interpolate(c, m)
	h1, err := ComputeH(context.Background(), a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	h1 = append([]fr.Element(nil), h1...)

	withoutTables(t, m)
	a, b, c = vecs()
	h2, err := ComputeH(context.Background(), a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if getDomain(m).precomputed {
		t.Fatal("expected the table-free domain")
	}
	if len(h1) != m-1 || len(h2) != m-1 {
		t.Fatalf("h lengths %d, %d", len(h1), len(h2))
	}
	for i := range h1 {
		if !h1[i].Equal(&h2[i]) {
			t.Fatalf("h[%d] differs between FFT paths", i)
		}
	}
	// A(x)·B(x) − C(x) = h(x)·(x^m − 1) at a random x.
	var x fr.Element
	x.MustSetRandom()
	lhs := horner(pa, &x)
	vb, vc := horner(pb, &x), horner(pc, &x)
	lhs.Mul(&lhs, &vb).Sub(&lhs, &vc)
	var z fr.Element
	z.Exp(x, big.NewInt(m))
	one := fr.One()
	z.Sub(&z, &one)
	rhs := horner(h1, &x)
	rhs.Mul(&rhs, &z)
	if !lhs.Equal(&rhs) {
		t.Fatal("h is not (A·B − C)/Z")
	}
}

// withoutTables makes the domain of size m table-free (the path of large domains) until the
// test ends.
func withoutTables(t *testing.T, m uint64) {
	saved := precomputeMaxSize
	precomputeMaxSize = 1
	domains.Delete(m)
	t.Cleanup(func() {
		precomputeMaxSize = saved
		domains.Delete(m)
	})
}

// interpolate returns the coefficients of the polynomial taking v[i] at ω^i (zero-padded to m).
func interpolate(v []fr.Element, m int) []fr.Element {
	out := make([]fr.Element, m)
	copy(out, v)
	d := fft.NewDomain(uint64(m))
	d.FFTInverse(out, fft.DIF)
	fft.BitReverse(out)
	return out
}

func horner(coeffs []fr.Element, x *fr.Element) fr.Element {
	var acc fr.Element
	for i := len(coeffs) - 1; i >= 0; i-- {
		acc.Mul(&acc, x).Add(&acc, &coeffs[i])
	}
	return acc
}

// TestComputeHMatchesSevenTransforms checks ComputeH, which takes only a and b to the coset,
// against the textbook computation (a, b and c to the coset, (a·b − c)/Z there, back) on
// vectors that do not satisfy a·b = c, in both FFT paths: the two agree for any input.
func TestComputeHMatchesSevenTransforms(t *testing.T) {
	const m = 1 << 9
	rnd := func() []fr.Element {
		v := make([]fr.Element, m)
		for i := range v {
			v[i].MustSetRandom()
		}
		return v
	}
	a0, b0, c0 := rnd(), rnd(), rnd()

	// Reference: seven transforms on the coset with gnark-crypto's generator.
	d := fft.NewDomain(uint64(m))
	a, b, c := append([]fr.Element(nil), a0...), append([]fr.Element(nil), b0...), append([]fr.Element(nil), c0...)
	for _, v := range [][]fr.Element{a, b, c} {
		d.FFTInverse(v, fft.DIF)
		d.FFT(v, fft.DIT, fft.OnCoset())
	}
	var zInv fr.Element
	zInv.Exp(d.FrMultiplicativeGen, big.NewInt(m))
	one := fr.One()
	zInv.Sub(&zInv, &one).Inverse(&zInv)
	for i := range a {
		a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &zInv)
	}
	d.FFTInverse(a, fft.DIF, fft.OnCoset())
	fft.BitReverse(a)
	want := a[:m-1]

	for _, tables := range []bool{true, false} {
		if !tables {
			withoutTables(t, m)
		}
		a, b, c := append([]fr.Element(nil), a0...), append([]fr.Element(nil), b0...), append([]fr.Element(nil), c0...)
		got, err := ComputeH(context.Background(), a, b, c)
		if err != nil {
			t.Fatal(err)
		}
		if getDomain(m).precomputed != tables {
			t.Fatalf("domain precomputed = %v, want %v", getDomain(m).precomputed, tables)
		}
		if len(got) != len(want) {
			t.Fatalf("tables %v: %d coefficients, want %d", tables, len(got), len(want))
		}
		for i := range want {
			if !got[i].Equal(&want[i]) {
				t.Fatalf("tables %v: h[%d] differs from the seven-transform result", tables, i)
			}
		}
	}
}
