package gpuprove

import (
	"context"
	"sort"
	"time"
	"unsafe"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/internal/cores"
)

// productsStage names the host products in a partition's stages.
const productsStage = "products a, b, c (cpu)"

// csrAt is where one matrix's arrays start in a circuit image.
type csrAt struct{ rowStart, cols, coef uint64 }

// circuitImage is a compiled circuit's matrices laid out for the device products, one resident
// vector per circuit: the prefix's and the block's A, B and C arrays, the coefficients, and the
// moved terms regrouped by block row. Offsets are 256-byte aligned.
type circuitImage struct {
	comp                                     *cs.Compiled
	prefix, block                            [3]csrAt
	coeffs, movedStart, movedTerm, movedCols uint64
	size                                     uint64
	// prefixRows and blocks are the rows stored in Prefix and the blocks replayed (a flat
	// circuit keeps every row but the input rows in Prefix and replays none).
	prefixRows, blocks uint64
}

// CircuitBytes is the device memory of c's matrices in the wide plan (one resident vector per
// circuit, shared by its partitions).
func CircuitBytes(c *cs.Compiled) uint64 { return newCircuitImage(c).size }

func newCircuitImage(c *cs.Compiled) circuitImage {
	im := circuitImage{comp: c, prefixRows: uint64(c.Prefix.A.Rows())}
	if !c.Flat {
		im.blocks = uint64(c.Blocks)
	}
	at := uint64(0)
	take := func(n uint64) uint64 {
		o := at
		at += gpu.Align256(n)
		return o
	}
	lay := func(s *cs.Section) (out [3]csrAt) {
		for k, m := range []*cs.Sparse{&s.A, &s.B, &s.C} {
			out[k] = csrAt{rowStart: take(uint64(len(m.RowStart)) * 4), cols: take(uint64(len(m.Cols)) * 4),
				coef: take(uint64(len(m.Coef)) * 2)}
		}
		return out
	}
	im.prefix = lay(&c.Prefix)
	if im.blocks > 0 {
		im.block = lay(&c.Block)
	}
	im.coeffs = take(uint64(len(c.Coeffs)) * gpu.FrBytes)
	if im.blocks > 0 && len(c.Moved) > 0 {
		im.movedStart = take(uint64(c.BlockRows+1) * 4)
		im.movedTerm = take(uint64(len(c.Moved)) * 4)
		im.movedCols = take(uint64(len(c.Moved)) * im.blocks * 4)
	}
	im.size = max(at, 256)
	return im
}

// fits reports whether the image's rows are the circuit's (every row but the input rows), as
// the kernel assumes; a circuit that breaks it is left to the host.
func (im circuitImage) fits() bool {
	c := im.comp
	return im.prefixRows+im.blocks*uint64(c.BlockRows)+uint64(c.NumInputs) == uint64(c.NumConstraints())
}

// hasMoved reports whether the image carries moved terms.
func (im circuitImage) hasMoved() bool { return im.movedTerm != 0 }

// imagePart is one array of a circuit image: its offset and host bytes.
type imagePart struct {
	off uint64
	b   []byte
}

// parts returns the image's arrays as host bytes; the moved terms are regrouped here (they
// are few, and rows of a block are the unit the device reads them by).
func (im circuitImage) parts() []imagePart {
	c := im.comp
	var out []imagePart
	add := func(off uint64, b []byte) {
		if len(b) > 0 {
			out = append(out, imagePart{off, b})
		}
	}
	sec := func(s *cs.Section, at [3]csrAt) {
		for k, m := range []*cs.Sparse{&s.A, &s.B, &s.C} {
			add(at[k].rowStart, u32Bytes(m.RowStart))
			add(at[k].cols, u32Bytes(m.Cols))
			add(at[k].coef, u16Bytes(m.Coef))
		}
	}
	sec(&c.Prefix, im.prefix)
	if im.blocks > 0 {
		sec(&c.Block, im.block)
	}
	add(im.coeffs, frBytes(c.Coeffs))
	if im.hasMoved() {
		start, term, cols := movedByRow(c)
		add(im.movedStart, u32Bytes(start))
		add(im.movedTerm, u32Bytes(term))
		add(im.movedCols, u32Bytes(cols))
	}
	return out
}

// movedByRow regroups c's moved terms by block row: row r's are entries [start[r],
// start[r+1]), each matrix<<16 | coefficient, reading in block i cols[entry·blocks + i].
func movedByRow(c *cs.Compiled) (start, term, cols []uint32) {
	order := make([]int, len(c.Moved))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return c.Moved[order[i]].Row < c.Moved[order[j]].Row })
	start = make([]uint32, c.BlockRows+1)
	term = make([]uint32, len(c.Moved))
	cols = make([]uint32, len(c.Moved)*c.Blocks)
	for e, k := range order {
		mv := c.Moved[k]
		start[mv.Row+1]++
		term[e] = uint32(mv.Matrix)<<16 | uint32(mv.Coef)
		copy(cols[e*c.Blocks:(e+1)*c.Blocks], mv.Cols)
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	return start, term, cols
}

func u32Bytes(v []uint32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

func u16Bytes(v []uint16) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*2)
}

// finishHost computes a, b and c of a partition whose products were deferred to the device,
// on the host (a plan or a device that does not compute them), checking every row; then lays
// them out for the kernels as prepareInputs does for a completed assignment.
func (in *partitionInputs) finishHost(ctx context.Context, slog *stageLog) error {
	if in.comp == nil {
		return nil
	}
	t0 := time.Now()
	pa := in.pa
	if err := pa.FinishDeferred(ctx, cores.N()); err != nil {
		return err
	}
	in.comp = nil
	in.setProducts(pa)
	if slog != nil {
		slog.add(productsStage, time.Since(t0))
		slog.span(productsStage, t0)
	}
	return nil
}
