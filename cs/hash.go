package cs

import (
	"encoding/binary"
	"encoding/hex"
	"sort"

	"golang.org/x/crypto/blake2s"
)

// Hash returns bellpepper's TestConstraintSystem::hash(): Blake2s-256 over u64be(#inputs),
// u64be(#aux), u64be(#constraints), then for each constraint's A, B, C the merged, zero-free,
// sorted terms as u64be(#terms) and per term 'I'|'A' ‖ u64be(index) ‖ 32-byte big-endian coefficient.
func (t *TestConstraintSystem) Hash() string {
	h, err := blake2s.New256(nil)
	if err != nil {
		panic(err) // unkeyed BLAKE2s-256 cannot fail
	}
	var buf [8]byte
	put := func(v uint64) {
		binary.BigEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	put(uint64(len(t.inputs)))
	put(uint64(len(t.aux)))
	put(uint64(len(t.constraints)))
	var scratch LinearCombination
	hashLC := func(lc LinearCombination) {
		scratch = scratch[:0]
		for i := range lc {
			scratch = scratch.AddTerm(&lc[i].Coeff, lc[i].Var)
		}
		kept := scratch[:0]
		for _, term := range scratch {
			if !term.Coeff.IsZero() {
				kept = append(kept, term)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].Var < kept[j].Var })
		put(uint64(len(kept)))
		for _, term := range kept {
			if term.Var.IsInput() {
				h.Write([]byte{'I'})
			} else {
				h.Write([]byte{'A'})
			}
			put(uint64(term.Var.Index()))
			b := term.Coeff.Bytes() // big-endian canonical
			h.Write(b[:])
		}
	}
	for i := range t.constraints {
		hashLC(t.constraints[i].a)
		hashLC(t.constraints[i].b)
		hashLC(t.constraints[i].c)
	}
	return hex.EncodeToString(h.Sum(nil))
}
