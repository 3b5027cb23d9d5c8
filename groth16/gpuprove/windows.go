package gpuprove

import (
	"math/bits"
	"sync"

	"github.com/snarkd/snarkd/gpu"
)

// msmWindows remembers, per query and length (which tell the circuits apart; a collision only
// costs speed), the share of the last split MSM's terms
// that reached the buckets (scalars other than 0 and 1), so that the next partition of that
// shape sizes its window for them. The kernels' default assumes a sixteenth, right for a PoRep
// or SnapDeals witness (about 5 %) and a quarter of the window too narrow for a WindowPoSt
// witness (about 75 %: Poseidon states), whose B_G2 MSM ran 35 % slower at 16 bits than at 20.
type msmWindows struct {
	mu    sync.Mutex
	share map[windowKey]float64
}

type windowKey struct {
	q gpu.Query
	n uint64
}

// observe records that terms of an MSM's n points entered the buckets.
func (m *msmWindows) observe(q gpu.Query, terms, n uint64) {
	if m == nil || n == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.share == nil {
		m.share = map[windowKey]float64{}
	}
	m.share[windowKey{q, n}] = float64(terms) / float64(n)
}

// window is the window for a split MSM of n points in chunks of 2^chunkLog: sized, as the
// kernels size a dense MSM, for the terms a chunk sent to the buckets last time; 0 (the
// kernels' default) when no MSM of the kind has run yet.
func (m *msmWindows) window(q gpu.Query, n uint64, chunkLog uint32) uint32 {
	if m == nil || n == 0 {
		return 0
	}
	m.mu.Lock()
	share, ok := m.share[windowKey{q, n}]
	m.mu.Unlock()
	if !ok {
		return 0
	}
	chunk := n
	if chunkLog > 0 && chunkLog < 63 {
		chunk = min(n, uint64(1)<<chunkLog)
	}
	terms := uint64(share * float64(chunk))
	if terms < 2 {
		terms = 2
	}
	return gpu.MSMWindowBits(bits.Len64(terms - 1))
}
