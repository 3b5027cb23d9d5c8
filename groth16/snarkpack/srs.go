package snarkpack

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/groth16"
)

var log = logging.Logger("snarkd/snarkpack")

// SRS is bellperson's GenericSRS: powers g^{α^i}, g^{β^i} in G1 and h^{α^i}, h^{β^i} in G2.
// An aggregate of n proofs needs 2n powers of each.
type SRS struct {
	GAlpha, GBeta []bls.G1Affine
	HAlpha, HBeta []bls.G2Affine
}

// Powers is how many powers of each kind the SRS holds (the shortest vector).
func (s *SRS) Powers() int {
	return min(len(s.GAlpha), len(s.GBeta), len(s.HAlpha), len(s.HBeta))
}

// MaxProofs is the largest power-of-two count of proofs this SRS aggregates.
func (s *SRS) MaxProofs() int {
	p := s.Powers() / 2
	if p < 2 {
		return 0
	}
	return 1 << log2(p)
}

// ProverKey is the SRS specialised to n proofs (bellperson's ProverSRS): the commitment keys
// v = (h^{α^i}, h^{β^i}) and w = (g^{α^{n+i}}, g^{β^{n+i}}) for i < n, and the powers the KZG
// openings of the final keys use.
type ProverKey struct {
	N             int
	GAlpha, GBeta []bls.G1Affine // 2n powers
	HAlpha, HBeta []bls.G2Affine // n powers
	VKeyA, VKeyB  []bls.G2Affine // = HAlpha, HBeta
	WKeyA, WKeyB  []bls.G1Affine // = GAlpha[n:], GBeta[n:]
	verifier      *VerifierKey
}

// VerifierKey is bellperson's VerifierSRS for n proofs.
type VerifierKey struct {
	N             int
	G             bls.G1Affine
	H             bls.G2Affine
	GAlpha, GBeta bls.G1Affine
	HAlpha, HBeta bls.G2Affine
}

// Specialize returns the keys for n proofs (a power of two, 2 ≤ n ≤ MaxProofs()).
func (s *SRS) Specialize(n int) (*ProverKey, *VerifierKey, error) {
	if n < 2 || n&(n-1) != 0 {
		return nil, nil, fmt.Errorf("snarkpack: %d proofs: want a power of two of at least 2", n)
	}
	if 2*n > s.Powers() {
		return nil, nil, fmt.Errorf("snarkpack: %d proofs need %d SRS powers, the SRS has %d", n, 2*n, s.Powers())
	}
	vk := &VerifierKey{N: n, G: s.GAlpha[0], H: s.HAlpha[0], GAlpha: s.GAlpha[1], GBeta: s.GBeta[1], HAlpha: s.HAlpha[1], HBeta: s.HBeta[1]}
	pk := &ProverKey{
		N: n, GAlpha: s.GAlpha[:2*n], GBeta: s.GBeta[:2*n], HAlpha: s.HAlpha[:n], HBeta: s.HBeta[:n],
		VKeyA: s.HAlpha[:n], VKeyB: s.HBeta[:n], WKeyA: s.GAlpha[n : 2*n], WKeyB: s.GBeta[n : 2*n],
		verifier: vk,
	}
	return pk, vk, nil
}

// Verifier returns the verifier key that goes with pk.
func (pk *ProverKey) Verifier() *VerifierKey { return pk.verifier }

// ReadSRS reads GenericSRS::write (four vectors g_alpha, g_beta, h_alpha, h_beta, each a u32
// big-endian length then compressed points), keeping the first maxPowers points of each
// vector as filecoin-proofs' read_mmap does (0: all). Every kept point is checked to lie in
// its subgroup.
func ReadSRS(r io.Reader, maxPowers int) (*SRS, error) {
	s := new(SRS)
	var err error
	if s.GAlpha, err = readVec(r, "g_alpha_powers", g1Size, maxPowers, decodeG1); err != nil {
		return nil, err
	}
	if s.GBeta, err = readVec(r, "g_beta_powers", g1Size, maxPowers, decodeG1); err != nil {
		return nil, err
	}
	if s.HAlpha, err = readVec(r, "h_alpha_powers", g2Size, maxPowers, decodeG2); err != nil {
		return nil, err
	}
	if s.HBeta, err = readVec(r, "h_beta_powers", g2Size, maxPowers, decodeG2); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeG1(p *bls.G1Affine, b []byte) error {
	return groth16.DecodeG1Compressed(p, b, groth16.CheckSubgroup)
}

func decodeG2(p *bls.G2Affine, b []byte) error {
	return groth16.DecodeG2Compressed(p, b, groth16.CheckSubgroup)
}

func readVec[P any](r io.Reader, name string, size, maxPowers int, decode func(*P, []byte) error) ([]P, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("snarkpack SRS: %s length: %w", name, noEOF(err))
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > MaxSRSVector {
		return nil, fmt.Errorf("snarkpack SRS: %s declares %d points, at most %d", name, n, MaxSRSVector)
	}
	keep := n
	if maxPowers > 0 && maxPowers < n {
		keep = maxPowers
	}
	raw := make([]byte, keep*size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("snarkpack SRS: %s (%d points): %w", name, n, noEOF(err))
	}
	if rest := int64(n-keep) * int64(size); rest > 0 {
		if _, err := io.CopyN(io.Discard, r, rest); err != nil {
			return nil, fmt.Errorf("snarkpack SRS: %s (%d points): %w", name, n, noEOF(err))
		}
	}
	out := make([]P, keep)
	var firstErr error
	var mu sync.Mutex
	parallel(keep, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := decode(&out[i], raw[i*size:(i+1)*size]); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("snarkpack SRS: %s point %d: %w", name, i, err)
				}
				mu.Unlock()
				return
			}
		}
	})
	return out, firstErr
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteTo writes GenericSRS::write.
func (s *SRS) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	for _, v := range [][]bls.G1Affine{s.GAlpha, s.GBeta} {
		writeVec(cw, len(v), func(i int) []byte { b := v[i].Bytes(); return b[:] })
	}
	for _, v := range [][]bls.G2Affine{s.HAlpha, s.HBeta} {
		writeVec(cw, len(v), func(i int) []byte { b := v[i].Bytes(); return b[:] })
	}
	return cw.n, cw.err
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

// writeVec writes a u32 big-endian length, then each point compressed.
func writeVec(w *countingWriter, n int, point func(i int) []byte) {
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], uint32(n))
	w.write(h[:])
	for i := range n {
		w.write(point(i))
	}
}

// DevnetSRS generates an insecure SRS (α and β derived from seed, so anyone can forge with
// it) that aggregates up to maxProofs proofs: 2·maxProofs powers of each kind, as
// bellperson's setup_fake_srs does for tests.
func DevnetSRS(ctx context.Context, maxProofs int, seed uint64) (*SRS, error) {
	if maxProofs < 2 || maxProofs&(maxProofs-1) != 0 {
		return nil, fmt.Errorf("snarkpack: devnet SRS for %d proofs: want a power of two of at least 2", maxProofs)
	}
	alpha, beta := devnetScalar("alpha", seed), devnetScalar("beta", seed)
	m := 2 * maxProofs
	pa, pb := powers(&alpha, m), powers(&beta, m)
	_, _, g, h := bls.Generators()
	s := &SRS{}
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); s.GAlpha = bls.BatchScalarMultiplicationG1(&g, pa) }()
	go func() { defer wg.Done(); s.GBeta = bls.BatchScalarMultiplicationG1(&g, pb) }()
	go func() { defer wg.Done(); s.HAlpha = bls.BatchScalarMultiplicationG2(&h, pa) }()
	go func() { defer wg.Done(); s.HBeta = bls.BatchScalarMultiplicationG2(&h, pb) }()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func devnetScalar(name string, seed uint64) fr.Element {
	h := sha256.New()
	fmt.Fprintf(h, "snarkd devnet snarkpack srs %s %d", name, seed)
	var x fr.Element
	x.SetBytes(h.Sum(nil))
	return x
}

// powers returns 1, x, x², … (n values).
func powers(x *fr.Element, n int) []fr.Element {
	out := make([]fr.Element, n)
	out[0].SetOne()
	for i := 1; i < n; i++ {
		out[i].Mul(&out[i-1], x)
	}
	return out
}

// parallel runs fn over [0, n) in contiguous chunks on every core.
func parallel(n int, fn func(lo, hi int)) {
	if n == 0 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// KeyCache loads an SRS file once, on first use, and hands out keys specialised per proof
// count. It is safe for concurrent use.
type KeyCache struct {
	// Path is the SRS file (normally SRSFile in the parameter directory).
	Path string

	mu   sync.Mutex
	srs  *SRS
	keys map[int]*ProverKey
}

// Keys returns the prover key for n proofs (its Verifier() included), reading the SRS file
// the first time: the first 2·MaxProofs powers, as filecoin-proofs reads it.
func (c *KeyCache) Keys(ctx context.Context, n int) (*ProverKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pk, ok := c.keys[n]; ok {
		return pk, nil
	}
	if c.srs == nil {
		f, err := os.Open(c.Path)
		if err != nil {
			return nil, fmt.Errorf("opening the SnarkPack SRS (aggregation needs %s; `snarkd params fetch --srs` downloads it, `snarkd params gen --srs` makes a devnet one): %w", SRSFile, err)
		}
		defer f.Close()
		log.Infow("reading the SnarkPack SRS", "file", c.Path)
		s, err := ReadSRS(bufio.NewReaderSize(f, 1<<20), 2*MaxProofs+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.srs = s
	}
	pk, _, err := c.srs.Specialize(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	if c.keys == nil {
		c.keys = map[int]*ProverKey{}
	}
	c.keys[n] = pk
	return pk, nil
}
