package cs

// linearSample sets which linear rows the checked products evaluate anyway: those whose index
// is a multiple of linearSample+1.
const linearSample = 63

// linearRows marks the rows of the form lc · ONE = v (B is exactly ONE, C exactly one variable,
// both with coefficient 1, and no moved terms): the witness already holds lc's value, as v, so
// Products copies c into a instead of evaluating lc. Poseidon's linear layers are such rows, each
// lc a row of the MDS matrix with general coefficients: a multiplication per term, computed once
// by the witness and again by the products. Their row check holds by construction, so the
// checked products evaluate a sample of them (linearSample) to catch a compiled circuit that is
// not the witness's; a witness that broke one alone gives a proof that does not verify, and
// every proof is verified.
type linearRows struct {
	prefix, block []uint64 // one bit per row of the section
}

// linearOf returns c's linear rows, found on first use.
func (c *Compiled) linearOf() *linearRows {
	c.linearOnce.Do(func() {
		moved := map[uint32]bool{}
		for _, mv := range c.Moved {
			moved[mv.Row] = true
		}
		c.linear = &linearRows{prefix: findLinear(&c.Prefix, nil), block: findLinear(&c.Block, moved)}
	})
	return c.linear
}

// findLinear marks sec's linear rows, leaving out the rows in skip.
func findLinear(sec *Section, skip map[uint32]bool) []uint64 {
	rows := sec.A.Rows()
	out := make([]uint64, (rows+63)/64)
	for r := 0; r < rows; r++ {
		if skip[uint32(r)] {
			continue
		}
		blo, bhi := sec.B.RowStart[r], sec.B.RowStart[r+1]
		clo, chi := sec.C.RowStart[r], sec.C.RowStart[r+1]
		if bhi-blo == 1 && sec.B.Cols[blo] == 0 && sec.B.Coef[blo] == 0 && chi-clo == 1 && sec.C.Coef[clo] == 0 {
			out[r/64] |= 1 << (r % 64)
		}
	}
	return out
}

// isLinear reports whether row r is marked in bits.
func isLinear(bits []uint64, r int) bool { return bits[r/64]>>(r%64)&1 != 0 }
