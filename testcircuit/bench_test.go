package testcircuit

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/snarkd/snarkd/cs"
)

// BenchmarkBlankSynthesis counts a large circuit in shape-only mode and reports the live heap
// the blank system holds afterwards (the density bitsets).
func BenchmarkBlankSynthesis(b *testing.B) {
	for _, n := range []int{1 << 20, 10_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c := New(n, 1)
			var ms runtime.MemStats
			for i := 0; i < b.N; i++ {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				s, err := cs.SynthesizeShape(context.Background(), c)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&ms)
				if s.Shape().NumConstraints != n {
					b.Fatalf("counted %d constraints", s.Shape().NumConstraints)
				}
				b.ReportMetric(float64(ms.HeapAlloc-before)/float64(n), "heapB/constraint")
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/constraint")
		})
	}
}
