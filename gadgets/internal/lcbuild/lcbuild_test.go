package lcbuild

import (
	"math/rand"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// The builder must produce exactly what repeated AddTerm produces.
func TestMatchesAddTerm(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		n := rng.Intn(300)
		b := New(n)
		var ref cs.LinearCombination
		for i := 0; i < n; i++ {
			var v cs.Variable
			if rng.Intn(4) == 0 {
				v = cs.InputVariable(rng.Intn(5))
			} else {
				v = cs.AuxVariable(rng.Intn(60))
			}
			c := fr.NewElement(uint64(rng.Intn(7)))
			if rng.Intn(2) == 0 {
				c.Neg(&c)
			}
			b.AddTerm(cs.Term{Coeff: c, Var: v})
			ref = ref.AddTerm(&c, v)
		}
		got := b.LC()
		if len(got) != len(ref) {
			t.Fatalf("round %d: %d terms, want %d", round, len(got), len(ref))
		}
		for i := range got {
			if got[i].Var != ref[i].Var || !got[i].Coeff.Equal(&ref[i].Coeff) {
				t.Fatalf("round %d: term %d differs", round, i)
			}
		}
	}
}

// workload mimics a MultiEq batch: 7 additions, each 4 operands of 33 bit
// terms allocated in increasing order, operands interleaved in variable order.
func workload() []cs.Term {
	var ts []cs.Term
	one := fr.One()
	for add := 0; add < 7; add++ {
		for op := 0; op < 4; op++ {
			base := (op*7 + add) * 40
			for bit := 0; bit < 33; bit++ {
				ts = append(ts, cs.Term{Coeff: one, Var: cs.AuxVariable(base + bit)})
			}
		}
	}
	return ts
}

func BenchmarkAddTermIncremental(b *testing.B) {
	ts := workload()
	for i := 0; i < b.N; i++ {
		var lc cs.LinearCombination
		for k := range ts {
			lc = lc.AddTerm(&ts[k].Coeff, ts[k].Var)
		}
	}
}

func BenchmarkBuilder(b *testing.B) {
	ts := workload()
	for i := 0; i < b.N; i++ {
		bl := New(len(ts))
		for _, t := range ts {
			bl.AddTerm(t)
		}
		_ = bl.LC()
	}
}
