package cs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/internal/cores"
)

// Compiled is a circuit's R1CS in compact form, recorded once per circuit shape from blank
// synthesis. With a witness from witness-only synthesis (NewWitnessAssignment), Complete gives
// exactly the a, b, c and densities that witness-mode synthesis computes, without evaluating a
// linear combination per proof (and without building those of the gadgets that check
// WitnessOnly: boolean, u32, Poseidon, which make up most rows of the Filecoin circuits).
//
// The circuit is a prefix followed by Blocks blocks of one structure (the challenge blocks of
// the Filecoin circuits; a plain circuit has none). A block's rows are stored once, with the
// block's own variables numbered from the block's start, and replayed at every block's offsets.
// The input_i · 0 = 0 rows that close the system are implied, not stored.
type Compiled struct {
	// Key names the shape the matrices were recorded for; a stored copy is refused for another.
	Key string
	// Build names the program that recorded it (stored with it; callers may refuse another's).
	Build string
	// NumInputs (ONE included) and NumAux are the whole system's counts.
	NumInputs, NumAux int
	// PrefixInputs (ONE included), PrefixAux and PrefixRows are the prefix's counts.
	PrefixInputs, PrefixAux, PrefixRows int
	// Blocks is the number of blocks; BlockInputs, BlockAux and BlockRows are each block's counts.
	Blocks, BlockInputs, BlockAux, BlockRows int
	// Coeffs is the coefficient dictionary: entry 0 is 1 and entry 1 is −1.
	Coeffs []fr.Element
	// Prefix holds the prefix's rows, Block one block's rows. A Flat circuit (CompileFlat) holds
	// every row in Prefix, with absolute variables, and no Block rows.
	Prefix, Block Section
	Flat          bool
	// Moved are block terms that read another prefix variable in every block (a per-block value
	// the prefix computed, such as a challenge); they are kept out of Block's rows.
	Moved []Moved

	densOnce           sync.Once
	aAux, bInput, bAux *Density
	// linear marks the rows whose a Products copies from c (linearOf).
	linearOnce sync.Once
	linear     *linearRows
	// vectors lends its assignments' aux, a, b and c, reused across partitions.
	vectors vectorPool
}

// Moved is a term of every block's row Row of matrix Matrix (0 A, 1 B, 2 C) with coefficient
// Coef that reads, in block i, the prefix variable Cols[i] (Sparse's column encoding, never
// local; all of one kind).
type Moved struct {
	Matrix uint8
	Row    uint32
	Coef   uint16
	Cols   []uint32
}

// Section is the A, B and C rows of a prefix or a block.
type Section struct{ A, B, C Sparse }

// Sparse is one matrix in compressed sparse rows: row k's terms are at [RowStart[k],
// RowStart[k+1]), each a column (see colAux, colLocal) and a coefficient dictionary index.
// Terms with a zero coefficient are dropped when recording: they add nothing and set no density.
type Sparse struct {
	RowStart []uint32
	Cols     []uint32
	Coef     []uint16
}

// Rows is the number of rows.
func (s *Sparse) Rows() int {
	if len(s.RowStart) == 0 {
		return 0
	}
	return len(s.RowStart) - 1
}

const (
	colAux   = 1 << 31 // an aux variable (else an input)
	colLocal = 1 << 30 // a block's own variable, numbered from the block's first
	colIndex = colLocal - 1
	// maxCoeffs bounds the dictionary: indices are uint16.
	maxCoeffs = 1 << 16
	// maxRows bounds a compiled circuit's rows (BLS12-381's Fr has 2^32 roots of unity).
	maxRows = 1 << 32
)

// NumConstraints is the number of rows, the input rows included.
func (c *Compiled) NumConstraints() int {
	return c.PrefixRows + c.Blocks*c.BlockRows + c.NumInputs
}

// Shape returns the system's counts.
func (c *Compiled) Shape() Shape {
	return Shape{NumInputs: c.NumInputs, NumAux: c.NumAux, NumConstraints: c.NumConstraints()}
}

// Terms is the number of stored terms over A, B and C (prefix and one block, moved terms included).
func (c *Compiled) Terms() int {
	n := len(c.Moved)
	for _, s := range []*Section{&c.Prefix, &c.Block} {
		n += len(s.A.Cols) + len(s.B.Cols) + len(s.C.Cols)
	}
	return n
}

// Bytes is the memory the compiled circuit holds (densities not included).
func (c *Compiled) Bytes() uint64 {
	n := uint64(len(c.Coeffs)) * 32
	for _, mv := range c.Moved {
		n += 12 + uint64(len(mv.Cols))*4
	}
	for _, s := range []*Section{&c.Prefix, &c.Block} {
		for _, m := range []*Sparse{&s.A, &s.B, &s.C} {
			n += uint64(len(m.RowStart))*4 + uint64(len(m.Cols))*4 + uint64(len(m.Coef))*2
		}
		n += uint64(s.A.Rows()+63) / 64 * 8 // the linear-row marks (linearOf)
	}
	return n
}

// BlockFunc synthesizes block i of a blocked circuit into sys.
type BlockFunc func(sys ConstraintSystem, i int) error

// PrefixFunc synthesizes a blocked circuit's prefix into sys and returns the function that
// synthesizes its blocks (which may read only the prefix's variables).
type PrefixFunc func(sys ConstraintSystem) (BlockFunc, error)

// ErrBlockStructure reports a block whose rows differ from the first block's: such a circuit
// cannot be compiled as a prefix and repeated blocks.
var ErrBlockStructure = errors.New("cs: blocks do not share one structure")

// Compile records a blocked circuit of n blocks in blank mode: ONE, the prefix, block 0 as the
// template of every block, and the implied input rows. The first check blocks (at least 2 when
// n ≥ 2) and the last are recorded too and compared with the template, so a block whose
// structure depends on its index is refused with ErrBlockStructure. Terms where block 1 reads
// another prefix variable than block 0 (and otherwise agrees) become Moved terms; every block is
// then recorded, to learn its prefix reads.
func Compile(ctx context.Context, key string, prefix PrefixFunc, n, check int) (*Compiled, error) {
	return compile(ctx, key, prefix, n, check, false)
}

// CompileFlat records a blocked circuit of n blocks whose blocks differ in structure (their
// index enters as a constant, say): every row is stored, in Prefix, and the block counts only
// describe the layout witness synthesis follows. Each block must still have block 0's counts.
func CompileFlat(ctx context.Context, key string, prefix PrefixFunc, n int) (*Compiled, error) {
	return compile(ctx, key, prefix, n, n, true)
}

func compile(ctx context.Context, key string, prefix PrefixFunc, n, check int, flat bool) (*Compiled, error) {
	c := &Compiled{Key: key, Blocks: n, Flat: flat, Coeffs: []fr.Element{oneElement, minusOneElement}}
	r := &compiler{c: c, ctx: ctx, dict: map[fr.Element]uint16{oneElement: 0, minusOneElement: 1}, sec: &c.Prefix}
	if _, err := r.AllocInputValue("ONE", nil); err != nil {
		return nil, err
	}
	block, err := prefix(r)
	if err != nil {
		return nil, fmt.Errorf("recording circuit prefix: %w", err)
	}
	if r.err != nil {
		return nil, r.err
	}
	c.PrefixInputs, c.PrefixAux, c.PrefixRows = r.inputs, r.aux, c.Prefix.A.Rows()
	if n > 0 {
		check = min(max(check, 2), n)
		var block0 Section
		var movedAt []termRef // block 0's terms that read another prefix variable in block 1
		for i := 0; i < n; i++ {
			// Blocks past check are recorded only when some of block 1's prefix reads moved
			// (every block's columns are needed), and the last block always, as a check.
			if !flat && i >= check && len(movedAt) == 0 && i != n-1 {
				continue
			}
			if flat && i >= check {
				break
			}
			var sec Section
			rows := c.Prefix.A.Rows()
			if flat {
				r.startBlock(&c.Prefix, i)
			} else {
				r.startBlock(&sec, i)
			}
			if err := block(r, i); err != nil {
				return nil, fmt.Errorf("recording block %d: %w", i, err)
			}
			if r.err != nil {
				return nil, r.err
			}
			if flat {
				rows = c.Prefix.A.Rows() - rows
			} else {
				rows = sec.A.Rows()
			}
			if i == 0 {
				c.BlockInputs, c.BlockAux, c.BlockRows = r.blockIn, r.blockAux, rows
				block0 = sec
				continue
			}
			if r.blockIn != c.BlockInputs || r.blockAux != c.BlockAux || rows != c.BlockRows {
				return nil, fmt.Errorf("%w: block %d has %d rows, %d aux and %d inputs, block 0 %d, %d and %d",
					ErrBlockShape, i, rows, r.blockAux, r.blockIn, c.BlockRows, c.BlockAux, c.BlockInputs)
			}
			if flat {
				continue
			}
			if i == 1 {
				movedAt = movedTerms(&block0, &sec)
				for _, t := range movedAt {
					m := block0.matrix(t.matrix)
					c.Moved = append(c.Moved, Moved{Matrix: uint8(t.matrix), Row: uint32(t.row), Coef: m.Coef[t.term], Cols: make([]uint32, n)})
				}
			}
			if !blockMatches(&block0, &sec, movedAt, c.Moved, i) {
				return nil, fmt.Errorf("%w: block %d differs from block 0", ErrBlockStructure, i)
			}
		}
		if !flat {
			for k, t := range movedAt {
				c.Moved[k].Cols[0] = block0.matrix(t.matrix).Cols[t.term]
			}
			c.Block = withoutTerms(&block0, movedAt)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recording interrupted: %w", err)
	}
	c.NumInputs = c.PrefixInputs + n*c.BlockInputs
	c.NumAux = c.PrefixAux + n*c.BlockAux
	if c.NumInputs > colIndex || c.NumAux > colIndex {
		return nil, fmt.Errorf("cs: %d inputs and %d aux are too many to compile", c.NumInputs, c.NumAux)
	}
	return c, nil
}

// termRef is one term of a block section: its matrix, row and index.
type termRef struct{ matrix, row, term int }

// movedTerms lists the terms where block 1 reads another prefix variable (of the same kind,
// with the same coefficient) than block 0 at the same place. Rows that differ otherwise are
// left for blockMatches to refuse.
func movedTerms(b0, b1 *Section) []termRef {
	var out []termRef
	for k := 0; k < 3; k++ {
		m0, m1 := b0.matrix(k), b1.matrix(k)
		if len(m0.Cols) != len(m1.Cols) || len(m0.RowStart) != len(m1.RowStart) {
			continue
		}
		row := 0
		for t := range m0.Cols {
			for int(m0.RowStart[row+1]) <= t {
				row++
			}
			c0, c1 := m0.Cols[t], m1.Cols[t]
			if c0 != c1 && c0&colLocal == 0 && c1&colLocal == 0 && c0&colAux == c1&colAux && m0.Coef[t] == m1.Coef[t] {
				out = append(out, termRef{k, row, t})
			}
		}
	}
	return out
}

// blockMatches reports whether block i's rows are block 0's but for the moved terms, which must
// read prefix variables of block 0's kind; it records their columns in moved[k].Cols[i].
func blockMatches(b0, bi *Section, movedAt []termRef, moved []Moved, i int) bool {
	k := 0
	for m := 0; m < 3; m++ {
		m0, mi := b0.matrix(m), bi.matrix(m)
		if len(m0.Cols) != len(mi.Cols) || len(m0.RowStart) != len(mi.RowStart) {
			return false
		}
		for r := range m0.RowStart {
			if m0.RowStart[r] != mi.RowStart[r] {
				return false
			}
		}
		for t := range m0.Cols {
			if mi.Coef[t] != m0.Coef[t] {
				return false
			}
			if k < len(movedAt) && movedAt[k].matrix == m && movedAt[k].term == t {
				c := mi.Cols[t]
				if c&colLocal != 0 || c&colAux != m0.Cols[t]&colAux {
					return false
				}
				moved[k].Cols[i] = c
				k++
				continue
			}
			if mi.Cols[t] != m0.Cols[t] {
				return false
			}
		}
	}
	return k == len(movedAt)
}

// withoutTerms returns b0's rows without the listed terms (in matrix and term order).
func withoutTerms(b0 *Section, drop []termRef) Section {
	if len(drop) == 0 {
		return *b0
	}
	var out Section
	k := 0
	for m := 0; m < 3; m++ {
		src, dst := b0.matrix(m), out.matrix(m)
		dst.RowStart = make([]uint32, 1, len(src.RowStart))
		for r := 0; r+1 < len(src.RowStart); r++ {
			for t := int(src.RowStart[r]); t < int(src.RowStart[r+1]); t++ {
				if k < len(drop) && drop[k].matrix == m && drop[k].term == t {
					k++
					continue
				}
				dst.Cols = append(dst.Cols, src.Cols[t])
				dst.Coef = append(dst.Coef, src.Coef[t])
			}
			dst.RowStart = append(dst.RowStart, uint32(len(dst.Cols)))
		}
	}
	return out
}

func (s *Section) matrix(k int) *Sparse {
	switch k {
	case 0:
		return &s.A
	case 1:
		return &s.B
	}
	return &s.C
}

// compiler is the blank ConstraintSystem Compile records into.
type compiler struct {
	c    *Compiled
	ctx  context.Context
	dict map[fr.Element]uint16
	sec  *Section
	err  error

	inputs, aux int // prefix counts
	// Block recording: the block's first aux and input as the gadgets see them, and its counts.
	// Flat recording numbers block variables absolutely.
	inBlock           bool
	baseIn, baseAux   int
	blockIn, blockAux int
	allocs            int
}

func (r *compiler) startBlock(sec *Section, i int) {
	r.sec, r.inBlock = sec, true
	// Each recorded block gets its final variables, as witness synthesis would give them.
	r.baseIn, r.baseAux = r.inputs+i*r.c.BlockInputs, r.aux+i*r.c.BlockAux
	r.blockIn, r.blockAux = 0, 0
}

func (r *compiler) AllocValue(string, *fr.Element) (Variable, error) {
	r.allocs++
	if r.allocs&ctxCheckMask == 0 {
		if err := r.ctx.Err(); err != nil {
			return 0, fmt.Errorf("recording interrupted: %w", err)
		}
	}
	if r.inBlock {
		r.blockAux++
		return AuxVariable(r.baseAux + r.blockAux - 1), checkCount("aux", r.baseAux+r.blockAux)
	}
	r.aux++
	return AuxVariable(r.aux - 1), checkCount("aux", r.aux)
}

func (r *compiler) Alloc(name string, _ ValueFunc) (Variable, error) { return r.AllocValue(name, nil) }

func (r *compiler) AllocInputValue(string, *fr.Element) (Variable, error) {
	if r.inBlock {
		r.blockIn++
		return InputVariable(r.baseIn + r.blockIn - 1), checkCount("input", r.baseIn+r.blockIn)
	}
	r.inputs++
	return InputVariable(r.inputs - 1), checkCount("input", r.inputs)
}

func (r *compiler) AllocInput(name string, _ ValueFunc) (Variable, error) {
	return r.AllocInputValue(name, nil)
}

func (r *compiler) Enforce(_ string, a, b, c LinearCombination) {
	r.append(&r.sec.A, a)
	r.append(&r.sec.B, b)
	r.append(&r.sec.C, c)
}

func (r *compiler) append(m *Sparse, lc LinearCombination) {
	if len(m.RowStart) == 0 {
		m.RowStart = append(m.RowStart, 0)
	}
	for i := range lc {
		t := &lc[i]
		if t.Coeff.IsZero() {
			continue
		}
		col, ok := r.column(t.Var)
		if !ok {
			r.fail(fmt.Errorf("cs: a block reads %v, another block's variable", t.Var))
			continue
		}
		k, ok := r.dict[t.Coeff]
		if !ok {
			if len(r.c.Coeffs) == maxCoeffs {
				r.fail(fmt.Errorf("cs: more than %d distinct coefficients", maxCoeffs))
				continue
			}
			k = uint16(len(r.c.Coeffs))
			r.dict[t.Coeff] = k
			r.c.Coeffs = append(r.c.Coeffs, t.Coeff)
		}
		m.Cols = append(m.Cols, col)
		m.Coef = append(m.Coef, k)
	}
	if len(m.Cols) > 1<<32-1 {
		r.fail(errors.New("cs: more than 2^32 terms in one matrix"))
	}
	m.RowStart = append(m.RowStart, uint32(len(m.Cols)))
}

// column encodes v: prefix variables by their index, a block's own relative to its first.
func (r *compiler) column(v Variable) (uint32, bool) {
	idx := v.Index()
	if !r.inBlock {
		if v.IsInput() {
			return uint32(idx), idx < r.inputs
		}
		return colAux | uint32(idx), idx < r.aux
	}
	if r.c.Flat {
		if v.IsInput() {
			return uint32(idx), idx < r.inputs || (idx >= r.baseIn && idx < r.baseIn+r.blockIn)
		}
		return colAux | uint32(idx), idx < r.aux || (idx >= r.baseAux && idx < r.baseAux+r.blockAux)
	}
	if v.IsInput() {
		if idx < r.inputs {
			return uint32(idx), true
		}
		l := idx - r.baseIn
		return colLocal | uint32(l), l >= 0 && l < r.blockIn
	}
	if idx < r.aux {
		return colAux | uint32(idx), true
	}
	l := idx - r.baseAux
	return colAux | colLocal | uint32(l), l >= 0 && l < r.blockAux
}

func (r *compiler) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *compiler) Push(string)             {}
func (r *compiler) PushIndexed(string, int) {}
func (r *compiler) Pop()                    {}
func (r *compiler) WitnessMode() bool       { return false }

// Densities returns the A-aux, B-input and B-aux densities of the whole system with
// bellperson's rules (computed once; callers must not modify them).
func (c *Compiled) Densities() (aAux, bInput, bAux *Density) {
	c.densOnce.Do(func() {
		aw := make([]uint64, (c.NumAux+63)/64)
		bw := make([]uint64, (c.NumAux+63)/64)
		iw := make([]uint64, (c.NumInputs+63)/64)
		set := func(w []uint64, i int) { w[i/64] |= 1 << (uint(i) % 64) }
		mark := func(m *Sparse, aux, in []uint64, baseAux, baseIn int) {
			for _, col := range m.Cols {
				idx := int(col & colIndex)
				if col&colLocal != 0 {
					if col&colAux != 0 {
						idx += baseAux
					} else {
						idx += baseIn
					}
				}
				if col&colAux != 0 {
					set(aux, idx)
				} else if in != nil {
					set(in, idx)
				}
			}
		}
		mark(&c.Prefix.A, aw, nil, 0, 0)
		mark(&c.Prefix.B, bw, iw, 0, 0)
		for i := 0; i < c.Blocks && !c.Flat; i++ {
			baseAux, baseIn := c.PrefixAux+i*c.BlockAux, c.PrefixInputs+i*c.BlockInputs
			mark(&c.Block.A, aw, nil, baseAux, baseIn)
			mark(&c.Block.B, bw, iw, baseAux, baseIn)
			for _, mv := range c.Moved {
				col := mv.Cols[i]
				idx := int(col & colIndex)
				switch {
				case mv.Matrix == 0 && col&colAux != 0:
					set(aw, idx)
				case mv.Matrix == 1 && col&colAux != 0:
					set(bw, idx)
				case mv.Matrix == 1:
					set(iw, idx)
				}
			}
		}
		c.aAux, c.bInput, c.bAux = DensityFromWords(aw, c.NumAux), DensityFromWords(iw, c.NumInputs), DensityFromWords(bw, c.NumAux)
	})
	return c.aAux, c.bInput, c.bAux
}

// productChunk is the number of rows one work item of Products evaluates.
const productChunk = 1 << 13

// Products computes a = A·z, b = B·z and c = C·z for z = (inputs, aux) into the first
// NumConstraints entries of a, b and c, on up to workers goroutines (≤ 0: GOMAXPROCS).
func (c *Compiled) Products(ctx context.Context, inputs, aux, a, b, cv []fr.Element, workers int) error {
	_, err := c.products(ctx, inputs, aux, a, b, cv, workers, false)
	return err
}

// ProductsChecked is Products, and also returns the first row with a·b ≠ c, or -1: each row is
// checked while its values are in cache rather than in a second pass over a, b and c.
func (c *Compiled) ProductsChecked(ctx context.Context, inputs, aux, a, b, cv []fr.Element, workers int) (int, error) {
	return c.products(ctx, inputs, aux, a, b, cv, workers, true)
}

// products is Products, or ProductsChecked with check.
func (c *Compiled) products(ctx context.Context, inputs, aux, a, b, cv []fr.Element, workers int, check bool) (int, error) {
	n := c.NumConstraints()
	if len(inputs) != c.NumInputs || len(aux) != c.NumAux {
		return -1, fmt.Errorf("cs: assignment has %d inputs and %d aux, the compiled circuit %d and %d", len(inputs), len(aux), c.NumInputs, c.NumAux)
	}
	if len(a) < n || len(b) < n || len(cv) < n {
		return -1, fmt.Errorf("cs: product vectors shorter than %d rows", n)
	}
	// Work items: prefix chunks, then every block's chunks; the input rows are set here.
	type item struct{ sec, row, rows, out, baseIn, baseAux int }
	var items []item
	prefixRows := c.Prefix.A.Rows() // all rows but the input rows when Flat
	for r := 0; r < prefixRows; r += productChunk {
		items = append(items, item{sec: 0, row: r, rows: min(productChunk, prefixRows-r), out: r})
	}
	for i := 0; i < c.Blocks && !c.Flat; i++ {
		base := c.PrefixRows + i*c.BlockRows
		for r := 0; r < c.BlockRows; r += productChunk {
			items = append(items, item{sec: 1, row: r, rows: min(productChunk, c.BlockRows-r), out: base + r,
				baseIn: c.PrefixInputs + i*c.BlockInputs, baseAux: c.PrefixAux + i*c.BlockAux})
		}
	}
	inRows := c.PrefixRows + c.Blocks*c.BlockRows
	for i := 0; i < c.NumInputs; i++ {
		a[inRows+i], b[inRows+i], cv[inRows+i] = inputs[i], fr.Element{}, fr.Element{}
	}
	if workers <= 0 {
		workers = cores.N()
	}
	workers = min(workers, len(items))
	// Rows that moved terms change later are checked after addMoved.
	var moved []bool
	if check && len(c.Moved) > 0 && !c.Flat {
		moved = make([]bool, c.BlockRows)
		for _, mv := range c.Moved {
			moved[mv.Row] = true
		}
	}
	bad := newFirstRow()
	lin := c.linearOf()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(items) || ctx.Err() != nil {
					return
				}
				it := items[k]
				sec := &c.Prefix
				if it.sec == 1 {
					sec = &c.Block
				}
				ev := newEvaluator(c.Coeffs, inputs, aux, it.baseIn, it.baseAux)
				marks := lin.prefix
				if it.sec == 1 {
					marks = lin.block
				}
				var t fr.Element
				checking := check // until the chunk's first unsatisfied row
				for r := 0; r < it.rows; r++ {
					o := it.out + r
					b[o] = ev.row(&sec.B, it.row+r)
					cv[o] = ev.row(&sec.C, it.row+r)
					if isLinear(marks, it.row+r) {
						a[o] = cv[o] // lc · ONE = v: lc's value is v's
						// One in linearSample+1 is evaluated all the same, so that linear rows
						// that are not this witness's (a stale compiled circuit) still fail
						// the check.
						if checking && o&linearSample == 0 {
							if t = ev.row(&sec.A, it.row+r); !t.Equal(&cv[o]) {
								bad.offer(o)
								checking = false
							}
						}
						continue
					}
					a[o] = ev.row(&sec.A, it.row+r)
					if checking && (it.sec == 0 || moved == nil || !moved[it.row+r]) {
						if t.Mul(&a[o], &b[o]); !t.Equal(&cv[o]) {
							bad.offer(o)
							checking = false
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("products interrupted: %w", err)
	}
	if len(c.Moved) > 0 && !c.Flat {
		c.addMoved(inputs, aux, [3][]fr.Element{a, b, cv}, workers)
		if moved != nil {
			var t fr.Element
			for i := 0; i < c.Blocks; i++ {
				base := c.PrefixRows + i*c.BlockRows
				for r, m := range moved {
					if o := base + r; m && o < bad.get() {
						if t.Mul(&a[o], &b[o]); !t.Equal(&cv[o]) {
							bad.offer(o)
						}
					}
				}
			}
		}
	}
	if !check {
		return -1, nil
	}
	if f := bad.get(); f < n {
		return f, nil
	}
	return -1, nil
}

// firstRow is the smallest row offered, from many goroutines.
type firstRow struct{ v atomic.Int64 }

func newFirstRow() *firstRow {
	f := &firstRow{}
	f.v.Store(math.MaxInt64)
	return f
}

func (f *firstRow) offer(row int) {
	for {
		cur := f.v.Load()
		if int64(row) >= cur || f.v.CompareAndSwap(cur, int64(row)) {
			return
		}
	}
}

func (f *firstRow) get() int { return int(f.v.Load()) }

// addMoved adds every block's moved terms to its rows, blocks on up to workers goroutines (each
// block's rows are its own).
func (c *Compiled) addMoved(inputs, aux []fr.Element, out [3][]fr.Element, workers int) {
	vecs := [2][]fr.Element{inputs, aux}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, c.Blocks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var t fr.Element
			for {
				i := int(next.Add(1)) - 1
				if i >= c.Blocks {
					return
				}
				base := c.PrefixRows + i*c.BlockRows
				for _, mv := range c.Moved {
					col := mv.Cols[i]
					v := &vecs[col>>31][col&colIndex]
					dst := &out[mv.Matrix][base+int(mv.Row)]
					switch mv.Coef {
					case 0:
						dst.Add(dst, v)
					case 1:
						dst.Sub(dst, v)
					default:
						t.Mul(&c.Coeffs[mv.Coef], v)
						dst.Add(dst, &t)
					}
				}
			}
		}()
	}
	wg.Wait()
}

type evaluator struct {
	coeffs []fr.Element
	// vecs and base are indexed by a column's aux bit: inputs or aux, and the block's first
	// input or aux (added to local columns only).
	vecs [2][]fr.Element
	base [2]int
}

func newEvaluator(coeffs, inputs, aux []fr.Element, baseIn, baseAux int) evaluator {
	return evaluator{coeffs: coeffs, vecs: [2][]fr.Element{inputs, aux}, base: [2]int{baseIn, baseAux}}
}

// row is ⟨M_r, z⟩. Most witness values of the Filecoin circuits are bits, so values 0 and 1
// skip the multiplication.
func (e *evaluator) row(m *Sparse, r int) fr.Element {
	var acc, t fr.Element
	lo, hi := m.RowStart[r], m.RowStart[r+1]
	cols, coef := m.Cols[lo:hi], m.Coef[lo:hi:hi]
	for j, col := range cols {
		kind := col >> 31
		idx := int(col&colIndex) + int(col>>30&1)*e.base[kind]
		v := &e.vecs[kind][idx]
		switch k := coef[j]; {
		case k == 0:
			acc.Add(&acc, v)
		case k == 1:
			acc.Sub(&acc, v)
		case v.IsZero():
		case v.IsOne():
			acc.Add(&acc, &e.coeffs[k])
		default:
			t.Mul(&e.coeffs[k], v)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

// Complete turns a witness-only assignment of this circuit into a full one: a, b, c from the
// matrices and the densities of the shape, exactly what witness-mode synthesis would hold.
func (c *Compiled) Complete(ctx context.Context, pa *ProvingAssignment, workers int) error {
	_, err := c.complete(ctx, pa, workers, false)
	return err
}

// CompleteChecked is Complete, and also returns the first row of the completed assignment with
// a·b ≠ c, or -1 when every row holds (what FirstUnsatisfied answers, at a fraction of its cost).
func (c *Compiled) CompleteChecked(ctx context.Context, pa *ProvingAssignment, workers int) (int, error) {
	return c.complete(ctx, pa, workers, true)
}

func (c *Compiled) complete(ctx context.Context, pa *ProvingAssignment, workers int, check bool) (int, error) {
	if !pa.witnessOnly {
		return -1, errors.New("cs: Complete needs a witness-only assignment")
	}
	if got, want := pa.Shape(), c.Shape(); got != want {
		return -1, fmt.Errorf("cs: witness has shape %+v, the compiled circuit %+v", got, want)
	}
	n := c.NumConstraints()
	// Room for the FFT domain, so that the prover pads a, b and c to it in place rather than
	// copying each into a vector of the domain's size.
	m := c.Shape().DomainSize()
	pa.A, pa.B, pa.C = c.vectors.get(n, m), c.vectors.get(n, m), c.vectors.get(n, m)
	pa.pool = &c.vectors
	row, err := c.products(ctx, pa.Input, pa.Aux, pa.A, pa.B, pa.C, workers, check)
	if err != nil {
		return -1, err
	}
	aAux, bIn, bAux := c.Densities()
	pa.AAuxDensity, pa.BInputDensity, pa.BAuxDensity = aAux.clone(), bIn.clone(), bAux.clone()
	pa.witnessOnly, pa.rows = false, 0
	return row, nil
}

// WitnessBlocks synthesizes the witness-only assignment of the blocked circuit of n blocks that
// comp was compiled from: ONE, prefix, then the blocks on up to workers goroutines
// (SynthesizeBlocks), then the input rows counted. Complete finishes it. A compiled circuit of
// another block count, and a prefix or block that does not have comp's size, are an
// ErrBlockShape (a block's as a *BlockError).
func WitnessBlocks(ctx context.Context, comp *Compiled, prefix PrefixFunc, n, workers int) (*ProvingAssignment, error) {
	if comp.Blocks != n {
		return nil, fmt.Errorf("%w: the circuit has %d blocks, the compiled circuit %d", ErrBlockShape, n, comp.Blocks)
	}
	pa := NewWitnessAssignment(Shape{NumInputs: comp.NumInputs})
	pa.Aux = comp.vectors.get(comp.NumAux, comp.NumAux)[:0]
	pa.pool = &comp.vectors
	pa.ctx = ctx
	if err := witnessInto(ctx, pa, comp, prefix, workers); err != nil {
		pa.Recycle() // the pooled aux goes back
		return nil, err
	}
	enforceInputRows(pa, len(pa.Input))
	pa.ctx = nil
	return pa, nil
}

// witnessInto synthesizes ONE, the prefix and the blocks of comp's circuit into pa.
func witnessInto(ctx context.Context, pa *ProvingAssignment, comp *Compiled, prefix PrefixFunc, workers int) error {
	if _, err := pa.AllocInputValue("ONE", &oneElement); err != nil {
		return err
	}
	block, err := prefix(pa)
	if err != nil {
		return fmt.Errorf("synthesizing circuit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("synthesis interrupted: %w", err)
	}
	if sh := pa.Shape(); sh.NumConstraints != comp.PrefixRows || sh.NumAux != comp.PrefixAux || sh.NumInputs != comp.PrefixInputs {
		return fmt.Errorf("%w: prefix of %d rows, %d aux and %d inputs; the compiled circuit's has %d, %d and %d",
			ErrBlockShape, sh.NumConstraints, sh.NumAux, sh.NumInputs, comp.PrefixRows, comp.PrefixAux, comp.PrefixInputs)
	}
	if comp.Blocks > 0 {
		layout := BlockLayout{Rows: comp.BlockRows, Aux: comp.BlockAux, Inputs: comp.BlockInputs > 0}
		return SynthesizeBlocks(ctx, pa, layout, comp.Blocks, workers, block)
	}
	return nil
}

// FirstUnsatisfied returns the index of the first row of pa with a·b ≠ c, or -1; rows are
// checked in parallel chunks.
func FirstUnsatisfied(pa *ProvingAssignment) int {
	n := len(pa.A)
	chunks := cores.N()
	size := max(1<<16, (n+chunks-1)/chunks)
	first := make([]int, (n+size-1)/size)
	var wg sync.WaitGroup
	for k := range first {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			first[k] = -1
			var t fr.Element
			for i := k * size; i < min(n, (k+1)*size); i++ {
				t.Mul(&pa.A[i], &pa.B[i])
				if !t.Equal(&pa.C[i]) {
					first[k] = i
					return
				}
			}
		}(k)
	}
	wg.Wait()
	for _, f := range first {
		if f >= 0 {
			return f
		}
	}
	return -1
}
