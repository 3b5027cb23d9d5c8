package groth16

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// BenchmarkComputeH times the quotient computation at 2^18 against the seven gnark-crypto FFTs
// (precomputed tables, no pointwise steps) that the textbook computation needs; ComputeH needs
// six.
func BenchmarkComputeH(b *testing.B) {
	const m = 1 << 18
	src := make([]fr.Element, 3*m)
	for i := range src {
		src[i].MustSetRandom()
	}
	buf := make([]fr.Element, 3*m)
	Domain(m)
	b.Run("ours", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			copy(buf, src)
			if _, err := ComputeH(context.Background(), buf[:m], buf[m:2*m], buf[2*m:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("precomputed-domain", func(b *testing.B) {
		d := fft.NewDomain(m)
		for i := 0; i < b.N; i++ {
			copy(buf, src)
			for _, v := range [][]fr.Element{buf[:m], buf[m : 2*m], buf[2*m:]} {
				d.FFTInverse(v, fft.DIF)
				d.FFT(v, fft.DIT, fft.OnCoset())
			}
			d.FFTInverse(buf[:m], fft.DIF, fft.OnCoset())
			fft.BitReverse(buf[:m])
		}
	})
}
