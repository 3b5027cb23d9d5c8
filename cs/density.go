package cs

import "math/bits"

// Density is a growable bitset with one bit per variable, in bellperson's DensityTracker
// layout: bit i is bit i%64 (LSB first) of word i/64. A set bit means the variable occurs
// with a non-zero coefficient, so its base point takes part in the matching MSM.
type Density struct {
	words []uint64
	n     int
	count int
}

// NewDensity returns an empty bitset with room for capacity bits.
func NewDensity(capacity int) *Density {
	return &Density{words: make([]uint64, 0, (capacity+63)/64)}
}

// AddBit appends one unset bit.
func (d *Density) AddBit() {
	if d.n%64 == 0 {
		d.words = append(d.words, 0)
	}
	d.n++
}

// Inc sets bit i; setting a bit twice counts once.
func (d *Density) Inc(i int) {
	w, m := i/64, uint64(1)<<(uint(i)%64)
	if d.words[w]&m == 0 {
		d.words[w] |= m
		d.count++
	}
}

// IsSet reports whether bit i is set.
func (d *Density) IsSet(i int) bool { return d.words[i/64]&(uint64(1)<<(uint(i)%64)) != 0 }

// Len is the number of bits.
func (d *Density) Len() int { return d.n }

// Count is the number of set bits (bellperson's total_density).
func (d *Density) Count() int { return d.count }

// Words exposes the backing words (length ceil(Len/64)); bits past Len are zero.
func (d *Density) Words() []uint64 { return d.words }

// Extend appends the bits of other. With skipFirst, other's bit 0 is ORed into this
// bitset's bit 0 instead of being appended: that is how a sub-assignment's own ONE input
// merges into the parent's (bellperson's DensityTracker::extend(other, true)).
func (d *Density) Extend(other *Density, skipFirst bool) {
	start := 0
	if skipFirst && other.n > 0 {
		if other.IsSet(0) && d.n > 0 {
			d.Inc(0)
		}
		start = 1
	}
	for i := start; i < other.n; i++ {
		d.AddBit()
		if other.IsSet(i) {
			d.Inc(d.n - 1)
		}
	}
}

// recount recomputes the population count from the words (used after bulk loads).
func (d *Density) recount() {
	c := 0
	for _, w := range d.words {
		c += bits.OnesCount64(w)
	}
	d.count = c
}

// DensityFromWords builds a bitset of n bits from LSB-first words; bits past n must be zero.
func DensityFromWords(words []uint64, n int) *Density {
	d := &Density{words: words[:(n+63)/64], n: n}
	d.recount()
	return d
}

// clone returns an independent copy of d.
func (d *Density) clone() *Density {
	return &Density{words: append([]uint64(nil), d.words...), n: d.n, count: d.count}
}
