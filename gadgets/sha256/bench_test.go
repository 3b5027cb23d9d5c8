package sha256

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
)

// labelCircuit hashes 1,248 allocated bytes (the size of an SDR label
// preimage: 39 × 32 bytes), the dominant gadget of PoRep synthesis.
func labelCircuit(sys cs.ConstraintSystem) error {
	in := make([]boolean.Boolean, 1248*8)
	for i := range in {
		sys.PushIndexed("bit ", i)
		b, err := boolean.Alloc(sys, i%3 == 0)
		sys.Pop()
		if err != nil {
			return err
		}
		in[i] = boolean.Is(b)
	}
	_, err := Hash(sys, in)
	return err
}

func BenchmarkLabelProving(b *testing.B) {
	shape, err := cs.SynthesizeShape(context.Background(), cs.CircuitFunc(labelCircuit))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cs.SynthesizeProving(context.Background(), cs.CircuitFunc(labelCircuit), shape.Shape()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(shape.Shape().NumConstraints)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
}

func BenchmarkLabelShape(b *testing.B) {
	b.ReportAllocs()
	var n int
	for i := 0; i < b.N; i++ {
		s, err := cs.SynthesizeShape(context.Background(), cs.CircuitFunc(labelCircuit))
		if err != nil {
			b.Fatal(err)
		}
		n = s.Shape().NumConstraints
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
}
