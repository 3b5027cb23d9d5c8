// Package lcbuild assembles large linear combinations from unsorted terms in
// O(n log n): cs.LinearCombination keeps terms sorted and merged, so adding
// hundreds of terms one by one costs a memmove per insertion.
package lcbuild

import (
	"slices"

	"github.com/snarkd/snarkd/cs"
)

// Builder collects terms in any order.
type Builder struct {
	terms []cs.Term
}

// New returns a builder with room for n terms.
func New(n int) *Builder { return &Builder{terms: make([]cs.Term, 0, n)} }

// Add appends every term of lc.
func (b *Builder) Add(lc cs.LinearCombination) { b.terms = append(b.terms, lc...) }

// AddTerm appends one term.
func (b *Builder) AddTerm(t cs.Term) { b.terms = append(b.terms, t) }

// LC sorts by variable (inputs first, as cs orders them) and merges
// duplicates by adding coefficients; a coefficient summing to zero stays as a
// zero term, exactly as repeated cs.LinearCombination.AddTerm would leave it.
func (b *Builder) LC() cs.LinearCombination {
	t := b.terms
	// Sort packed (variable, position) keys: plain uint64 sorting is much
	// cheaper than sorting 40-byte terms through a comparison function.
	keys := make([]uint64, len(t))
	for i := range t {
		keys[i] = uint64(t[i].Var)<<32 | uint64(i)
	}
	slices.Sort(keys)
	out := make(cs.LinearCombination, 0, len(t))
	for _, k := range keys {
		term := &t[uint32(k)]
		if n := len(out); n > 0 && out[n-1].Var == term.Var {
			out[n-1].Coeff.Add(&out[n-1].Coeff, &term.Coeff)
			continue
		}
		out = append(out, *term)
	}
	return out
}
