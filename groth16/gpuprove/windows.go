package gpuprove

import (
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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

// seed records share for each of qs that has no record yet at its length in counts: the first
// partition of a shape then sizes its windows from its own witness instead of the kernels'
// default (a WindowPoSt partition's kernels took 6.3 s at the default, 5.2 s at its window).
// share is called at most once, and only when a query needs it.
func (m *msmWindows) seed(qs []gpu.Query, counts *[gpu.NumQueries]int, share func() float64) {
	if m == nil {
		return
	}
	missing := func() []windowKey {
		var keys []windowKey
		for _, q := range qs {
			k := windowKey{q, uint64(counts[q])}
			if _, ok := m.share[k]; !ok && k.n > 0 {
				keys = append(keys, k)
			}
		}
		return keys
	}
	m.mu.Lock()
	need := len(missing()) > 0
	m.mu.Unlock()
	if !need {
		return
	}
	s := share() // outside the lock: it reads the witness
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.share == nil {
		m.share = map[windowKey]float64{}
	}
	for _, k := range missing() { // an MSM may have recorded its own share meanwhile
		m.share[k] = s
	}
}

// bucketShare estimates the share of v's scalars that a split MSM sends to the buckets (other
// than 0 and 1) from samples values at pseudo-random places (a witness is periodic: its
// blocks repeat one layout, which even spacing could alias); reading all of a 125 M-element
// witness would cost more than the window saves.
func bucketShare(v []fr.Element, samples int) float64 {
	if len(v) == 0 || samples < 1 {
		return 0
	}
	bucket := func(x *fr.Element) bool { return !x.IsZero() && !x.IsOne() }
	n := 0
	if samples >= len(v) {
		for i := range v {
			if bucket(&v[i]) {
				n++
			}
		}
		return float64(n) / float64(len(v))
	}
	rng := rand.New(rand.NewPCG(uint64(len(v)), 0x5eed))
	for range samples {
		if bucket(&v[rng.IntN(len(v))]) {
			n++
		}
	}
	return float64(n) / float64(samples)
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
