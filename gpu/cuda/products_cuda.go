//go:build cuda

package cuda

/*
#include "snarkd.h"
*/
import "C"

import (
	"time"

	"github.com/snarkd/snarkd/gpu"
)

// CSR is one matrix of a compiled circuit's section on the device (cs.Sparse's arrays).
type CSR struct{ RowStart, Cols, Coef gpu.DevicePtr }

// R1CS is a compiled circuit's matrices on the device, as snarkd_sparse_products reads them
// (native/snarkd.h): the prefix's and the block template's A, B and C, the coefficient
// dictionary, and the moved terms by block row (MovedStart 0: none).
type R1CS struct {
	Prefix, Block                                  [3]CSR
	Coeffs                                         gpu.DevicePtr
	MovedStart, MovedTerm, MovedCols               gpu.DevicePtr
	PrefixRows, BlockRows, Blocks, NumInputs       uint64
	PrefixInputs, PrefixAux, BlockInputs, BlockAux uint64
}

func (c CSR) native() C.snarkd_csr {
	return C.snarkd_csr{row_start: (*C.uint32_t)(devPtr(c.RowStart)), cols: (*C.uint32_t)(devPtr(c.Cols)),
		coef: (*C.uint16_t)(devPtr(c.Coef))}
}

// SparseProducts writes a = A·z, b = B·z and c = C·z (domain Fr each, the rows past the
// circuit's zero) for the witness z = (inputs, aux) on device ordinal, checking every row. It
// returns the first row with a·b ≠ c (-1 when all hold) and the device time. scratch is 8
// bytes of device memory.
func SparseProducts(ordinal int, m *R1CS, inputs, aux, a, b, c gpu.DevicePtr, domain uint64, scratch gpu.DevicePtr) (int64, time.Duration, error) {
	var nm C.snarkd_r1cs
	for k := range 3 {
		nm.prefix[k] = m.Prefix[k].native()
		nm.block[k] = m.Block[k].native()
	}
	nm.coeffs = devPtr(m.Coeffs)
	nm.moved_start = (*C.uint32_t)(devPtr(m.MovedStart))
	nm.moved_term = (*C.uint32_t)(devPtr(m.MovedTerm))
	nm.moved_cols = (*C.uint32_t)(devPtr(m.MovedCols))
	nm.prefix_rows, nm.block_rows, nm.blocks, nm.num_inputs = C.uint64_t(m.PrefixRows), C.uint64_t(m.BlockRows),
		C.uint64_t(m.Blocks), C.uint64_t(m.NumInputs)
	nm.prefix_inputs, nm.prefix_aux, nm.block_inputs, nm.block_aux = C.uint64_t(m.PrefixInputs), C.uint64_t(m.PrefixAux),
		C.uint64_t(m.BlockInputs), C.uint64_t(m.BlockAux)
	var bad C.int64_t
	var ms C.float
	if err := check("sparse products", C.snarkd_sparse_products(C.int32_t(ordinal), &nm, devPtr(inputs), devPtr(aux),
		devPtr(a), devPtr(b), devPtr(c), C.uint64_t(domain), devPtr(scratch), &bad, &ms)); err != nil {
		return -1, 0, err
	}
	return int64(bad), msDuration(float64(ms)), nil
}
