package groth16

import (
	"fmt"
	"io"
	"slices"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/internal/cores"
)

// streamChunk is how many points a streaming read buffers before decoding them in parallel.
const streamChunk = 1 << 15

// parallelFor runs fn over [0, n) split into chunks on all CPUs and returns the first error.
func parallelFor(n int, fn func(lo, hi int) error) error {
	workers := cores.N()
	if n < 1024 || workers == 1 {
		return fn(0, n)
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			errs[w] = fn(lo, hi)
		}(w, lo, hi)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeG1s decodes len(dst) consecutive uncompressed points of src into dst, rejecting the
// identity (bellperson's parameter readers do). first is the index of dst[0] in the section.
func decodeG1s(dst []bls.G1Affine, src []byte, section string, first int, check Check) error {
	return parallelFor(len(dst), func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := decodeG1Uncompressed(&dst[i], src[i*G1UncompressedSize:(i+1)*G1UncompressedSize], check); err != nil {
				return fmt.Errorf("%s point %d: %w", section, first+i, err)
			}
			if dst[i].IsInfinity() {
				return fmt.Errorf("%s point %d: %w", section, first+i, ErrPointAtInfinity)
			}
		}
		return nil
	})
}

func decodeG2s(dst []bls.G2Affine, src []byte, section string, first int, check Check) error {
	return parallelFor(len(dst), func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := decodeG2Uncompressed(&dst[i], src[i*G2UncompressedSize:(i+1)*G2UncompressedSize], check); err != nil {
				return fmt.Errorf("%s point %d: %w", section, first+i, err)
			}
			if dst[i].IsInfinity() {
				return fmt.Errorf("%s point %d: %w", section, first+i, ErrPointAtInfinity)
			}
		}
		return nil
	})
}

// readG1Section reads count points from r. remaining (if ≥ 0) is how many bytes the source
// still holds; it bounds the allocation so corrupt lengths fail before allocating.
func readG1Section(r io.Reader, section string, count int64, remaining int64, check Check) ([]bls.G1Affine, error) {
	need := count * G1UncompressedSize
	if remaining >= 0 && need > remaining {
		return nil, fmt.Errorf("%s: %d points need %d bytes, only %d remain", section, count, need, remaining)
	}
	capHint := count
	if remaining < 0 && capHint > streamChunk {
		capHint = streamChunk // unknown source size: grow as data arrives
	}
	out := make([]bls.G1Affine, 0, capHint)
	buf := make([]byte, min(count, streamChunk)*G1UncompressedSize)
	for done := int64(0); done < count; {
		k := min(count-done, streamChunk)
		if _, err := io.ReadFull(r, buf[:k*G1UncompressedSize]); err != nil {
			return nil, fmt.Errorf("reading %s points %d..%d of %d: %w", section, done, done+k, count, noEOF(err))
		}
		start := len(out)
		out = slices.Grow(out, int(k))[:start+int(k)]
		if err := decodeG1s(out[start:], buf, section, int(done), check); err != nil {
			return nil, err
		}
		done += k
	}
	return out, nil
}

func readG2Section(r io.Reader, section string, count int64, remaining int64, check Check) ([]bls.G2Affine, error) {
	need := count * G2UncompressedSize
	if remaining >= 0 && need > remaining {
		return nil, fmt.Errorf("%s: %d points need %d bytes, only %d remain", section, count, need, remaining)
	}
	capHint := count
	if remaining < 0 && capHint > streamChunk {
		capHint = streamChunk
	}
	out := make([]bls.G2Affine, 0, capHint)
	buf := make([]byte, min(count, streamChunk)*G2UncompressedSize)
	for done := int64(0); done < count; {
		k := min(count-done, streamChunk)
		if _, err := io.ReadFull(r, buf[:k*G2UncompressedSize]); err != nil {
			return nil, fmt.Errorf("reading %s points %d..%d of %d: %w", section, done, done+k, count, noEOF(err))
		}
		start := len(out)
		out = slices.Grow(out, int(k))[:start+int(k)]
		if err := decodeG2s(out[start:], buf, section, int(done), check); err != nil {
			return nil, err
		}
		done += k
	}
	return out, nil
}
