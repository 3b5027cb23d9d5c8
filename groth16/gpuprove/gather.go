package gpuprove

import (
	"math/bits"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
)

// hostGatherStage names the host gather in a partition's stages.
const hostGatherStage = "gather a, b (cpu)"

// gatherTable is one density mask laid out for the device gather.
type gatherTable struct {
	words []uint64 // the density's own words
	base  []uint32 // set bits before each word
	n     int      // variables gathered from
	count int      // set bits
}

// newGatherTable lays out d, a mask over n variables, for the device gather.
func newGatherTable(d *cs.Density, n int) gatherTable {
	words := d.Words()[:(n+63)/64]
	base := make([]uint32, len(words))
	count := 0
	for i, w := range words {
		base[i] = uint32(count)
		count += bits.OnesCount64(w)
	}
	return gatherTable{words: words, base: base, n: n, count: count}
}

// parts are the table's two parts as host bytes, and the bases' offset in its device layout.
func (t gatherTable) parts() (words, base []byte, baseOffset uint64) {
	if len(t.words) == 0 {
		return nil, nil, 0
	}
	words = unsafe.Slice((*byte)(unsafe.Pointer(&t.words[0])), len(t.words)*8)
	base = unsafe.Slice((*byte)(unsafe.Pointer(&t.base[0])), len(t.base)*4)
	return words, base, gpu.GatherBaseOffset(uint64(t.n))
}

// deviceGather is the A and B scalars' layout when the device gathers them: the inputs part of
// each (from the host, small) and the aux densities' tables.
type deviceGather struct {
	aInputs, bInputs []fr.Element
	a, b             gatherTable
}

// planDeviceGather returns the device gather of in's A and B scalars on plan, or nil when the
// plan has no density buffer (or too small a one), the host has gathered them already (an
// earlier attempt), or the densities do not cover the witness exactly.
func (in *partitionInputs) planDeviceGather(plan gpu.Plan) *deviceGather {
	pa := in.pa
	if in.gathered || pa == nil || !plan.ScalarBuffers || len(pa.Aux) == 0 ||
		pa.AAuxDensity == nil || pa.BAuxDensity == nil || pa.BInputDensity == nil ||
		pa.AAuxDensity.Len() != len(pa.Aux) || pa.BAuxDensity.Len() != len(pa.Aux) {
		return nil
	}
	if b, ok := plan.Buffer(gpu.DensityBuffer); !ok || b.Size < 2*gpu.GatherTableBytes(uint64(len(pa.Aux))) {
		return nil
	}
	for _, q := range []gpu.Query{gpu.QueryL, gpu.QueryA, gpu.QueryBG1} {
		if _, ok := plan.Buffer(gpu.ScalarBuffer(q)); !ok {
			return nil
		}
	}
	g := &deviceGather{aInputs: pa.Input, a: newGatherTable(pa.AAuxDensity, len(pa.Aux)),
		b: newGatherTable(pa.BAuxDensity, len(pa.Aux))}
	g.bInputs = make([]fr.Element, pa.BInputDensity.Count())
	nb := gatherInto(g.bInputs, pa.Input, pa.BInputDensity)
	if len(g.aInputs)+g.a.count != in.counts[gpu.QueryA] || nb+g.b.count != in.counts[gpu.QueryBG1] {
		return nil
	}
	return g
}

// gatherHost gathers the A and B scalars on the host, into pooled buffers, once per partition:
// every input, then the A-dense aux values; the B-dense inputs, then the B-dense aux values.
// Buffers reused across partitions: fresh gigabyte slices would cost more in page faults than
// the copy itself. The time goes to slog (when set).
func (in *partitionInputs) gatherHost(slog *stageLog) {
	if in.gathered || in.pa == nil {
		return
	}
	in.gathered = true
	t0 := time.Now()
	defer func() {
		if slog != nil {
			slog.add(hostGatherStage, time.Since(t0))
			slog.span(hostGatherStage, t0)
		}
	}()
	pa := in.pa
	a := in.buffers.get(in.counts[gpu.QueryA])
	gatherInto(a[copy(a, pa.Input):], pa.Aux, pa.AAuxDensity)
	b := in.buffers.get(in.counts[gpu.QueryBG1])
	gatherInto(b[gatherInto(b, pa.Input, pa.BInputDensity):], pa.Aux, pa.BAuxDensity)
	in.scalars[gpu.QueryA] = a
	in.scalars[gpu.QueryBG1], in.scalars[gpu.QueryBG2] = b, b
	in.pooled = append(in.pooled, a, b)
}
