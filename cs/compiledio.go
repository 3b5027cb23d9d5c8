package cs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/internal/atomicfile"
)

// The stored form of a Compiled circuit: compiledMagic, the format version, the key, the counts,
// the coefficient dictionary (32-byte canonical big-endian elements), the six matrices (prefix
// A, B, C, block A, B, C: rows, terms, row starts, columns, coefficient indices, little-endian),
// then the SHA-256 of everything before it.
const (
	compiledMagic   = "snarkd-r1cs\n"
	compiledVersion = 1
)

// ErrCompiledFile marks a stored compiled circuit that cannot be used: truncated, corrupt, of
// another format version or recorded for another shape. Callers rebuild it.
var ErrCompiledFile = errors.New("unusable compiled circuit file")

// CompiledFileError names the stored compiled circuit that was refused and why.
type CompiledFileError struct {
	Path   string
	Reason string
}

func (e *CompiledFileError) Error() string {
	return fmt.Sprintf("compiled circuit %s: %s", e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCompiledFile) hold.
func (e *CompiledFileError) Unwrap() error { return ErrCompiledFile }

// WriteTo writes the stored form of c to w.
func (c *Compiled) WriteTo(w io.Writer) (int64, error) {
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	bw.WriteString(compiledMagic)
	putU64 := func(v uint64) { bw.Write(binary.LittleEndian.AppendUint64(nil, v)) }
	putU64(compiledVersion)
	putU64(uint64(len(c.Key)))
	bw.WriteString(c.Key)
	putU64(uint64(len(c.Build)))
	bw.WriteString(c.Build)
	for _, v := range c.counts() {
		putU64(uint64(*v))
	}
	flat := uint64(0)
	if c.Flat {
		flat = 1
	}
	putU64(flat)
	putU64(uint64(len(c.Coeffs)))
	for i := range c.Coeffs {
		b := c.Coeffs[i].Bytes()
		bw.Write(b[:])
	}
	buf := make([]byte, 0, 1<<16)
	for _, m := range c.matrices() {
		putU64(uint64(m.Rows()))
		putU64(uint64(len(m.Cols)))
		buf = writeUints(bw, buf, m.RowStart)
		buf = writeUints(bw, buf, m.Cols)
		buf = writeUints(bw, buf, m.Coef)
	}
	putU64(uint64(len(c.Moved)))
	for _, mv := range c.Moved {
		buf = writeUints(bw, buf, []uint32{uint32(mv.Matrix), mv.Row, uint32(mv.Coef)})
		buf = writeUints(bw, buf, mv.Cols)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	n, err := w.Write(h.Sum(nil))
	return cw.n + int64(n), err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *Compiled) counts() []*int {
	return []*int{&c.NumInputs, &c.NumAux, &c.PrefixInputs, &c.PrefixAux, &c.PrefixRows,
		&c.Blocks, &c.BlockInputs, &c.BlockAux, &c.BlockRows}
}

func (c *Compiled) matrices() []*Sparse {
	return []*Sparse{&c.Prefix.A, &c.Prefix.B, &c.Prefix.C, &c.Block.A, &c.Block.B, &c.Block.C}
}

// ReadCompiled reads a stored compiled circuit of size bytes (its file size) and checks it
// completely: format, key, the recording build (unless build is empty), checksum and that every
// row, column and coefficient is in range, so a damaged file is refused (*CompiledFileError,
// naming name) and never evaluated. Key and build are checked from the header, before the rest
// is read.
func ReadCompiled(r io.Reader, size int64, name, key, build string) (*Compiled, error) {
	bad := func(format string, args ...any) error {
		return &CompiledFileError{Path: name, Reason: fmt.Sprintf(format, args...)}
	}
	h := sha256.New()
	rd := &hashReader{r: bufio.NewReaderSize(r, 1<<20), h: h, left: size - sha256.Size}
	if rd.left < int64(len(compiledMagic)) {
		return nil, bad("truncated (%d bytes)", size)
	}
	magic := make([]byte, len(compiledMagic))
	if err := rd.full(magic); err != nil || string(magic) != compiledMagic {
		return nil, bad("not a compiled circuit file")
	}
	u64 := func() (uint64, error) {
		var b [8]byte
		err := rd.full(b[:])
		return binary.LittleEndian.Uint64(b[:]), err
	}
	v, err := u64()
	if err != nil {
		return nil, bad("truncated header")
	}
	if v != compiledVersion {
		return nil, bad("format version %d, this build reads %d", v, compiledVersion)
	}
	kl, err := u64()
	if err != nil || kl > 4096 {
		return nil, bad("bad key length")
	}
	kb := make([]byte, kl)
	if err := rd.full(kb); err != nil {
		return nil, bad("truncated key")
	}
	if string(kb) != key {
		return nil, bad("recorded for %q, not %q", kb, key)
	}
	bl, err := u64()
	if err != nil || bl > 4096 {
		return nil, bad("bad build length")
	}
	bb := make([]byte, bl)
	if err := rd.full(bb); err != nil {
		return nil, bad("truncated build")
	}
	if build != "" && string(bb) != build {
		return nil, bad("recorded by snarkd %q, this is %q", bb, build)
	}
	c := &Compiled{Key: key, Build: string(bb)}
	for _, p := range c.counts() {
		v, err := u64()
		if err != nil {
			return nil, bad("truncated counts")
		}
		if v > colIndex {
			return nil, bad("count %d out of range", v)
		}
		*p = int(v)
	}
	flat, err := u64()
	if err != nil || flat > 1 {
		return nil, bad("bad layout flag")
	}
	c.Flat = flat == 1
	if c.NumInputs != c.PrefixInputs+c.Blocks*c.BlockInputs || c.NumAux != c.PrefixAux+c.Blocks*c.BlockAux || c.PrefixInputs < 1 {
		return nil, bad("inconsistent counts")
	}
	if c.NumConstraints() > maxRows {
		return nil, bad("%d rows: more than a Groth16 domain holds", c.NumConstraints())
	}
	nc, err := u64()
	if err != nil || nc < 2 || nc > maxCoeffs || int64(nc)*32 > rd.left {
		return nil, bad("bad coefficient count")
	}
	c.Coeffs = make([]fr.Element, nc)
	var eb [32]byte
	for i := range c.Coeffs {
		if err := rd.full(eb[:]); err != nil {
			return nil, bad("truncated coefficients")
		}
		if err := c.Coeffs[i].SetBytesCanonical(eb[:]); err != nil {
			return nil, bad("coefficient %d: %v", i, err)
		}
	}
	if c.Coeffs[0] != oneElement || c.Coeffs[1] != minusOneElement {
		return nil, bad("coefficient dictionary does not start with 1, −1")
	}
	for i := range c.Coeffs {
		if c.Coeffs[i].IsZero() {
			return nil, bad("coefficient %d is zero (zero terms are never stored)", i)
		}
	}
	wantRows := []int{c.PrefixRows, c.PrefixRows, c.PrefixRows, c.BlockRows, c.BlockRows, c.BlockRows}
	if c.Flat {
		all := c.PrefixRows + c.Blocks*c.BlockRows
		wantRows = []int{all, all, all, 0, 0, 0}
	}
	for k, m := range c.matrices() {
		rows, err1 := u64()
		terms, err2 := u64()
		if err1 != nil || err2 != nil {
			return nil, bad("truncated matrix header")
		}
		starts := int64(0)
		if rows > 0 || terms > 0 {
			starts = int64(rows) + 1
		}
		if rows != uint64(wantRows[k]) || terms > 1<<32-1 || starts*4+int64(terms)*6 > rd.left {
			return nil, bad("matrix %d: %d rows and %d terms do not fit", k, rows, terms)
		}
		if rows > 0 || terms > 0 {
			if m.RowStart, err = readUints[uint32](rd, int(rows)+1); err != nil {
				return nil, bad("matrix %d truncated", k)
			}
		}
		if m.Cols, err = readUints[uint32](rd, int(terms)); err != nil {
			return nil, bad("matrix %d truncated", k)
		}
		if m.Coef, err = readUints[uint16](rd, int(terms)); err != nil {
			return nil, bad("matrix %d truncated", k)
		}
	}
	nm, err := u64()
	if err != nil || nm > uint64(rd.left)/(12+4*uint64(c.Blocks)) {
		return nil, bad("bad moved-term count")
	}
	if nm > 0 {
		c.Moved = make([]Moved, nm)
	}
	for i := range c.Moved {
		v, err := readUints[uint32](rd, 3)
		if err != nil {
			return nil, bad("truncated moved terms")
		}
		if v[0] > 2 || v[2] >= maxCoeffs {
			return nil, bad("moved term %d out of range", i)
		}
		cols, err := readUints[uint32](rd, c.Blocks)
		if err != nil {
			return nil, bad("truncated moved terms")
		}
		c.Moved[i] = Moved{Matrix: uint8(v[0]), Row: v[1], Coef: uint16(v[2]), Cols: cols}
	}
	if rd.left != 0 {
		return nil, bad("%d bytes of trailing data", rd.left)
	}
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(rd.r, sum); err != nil {
		return nil, bad("truncated checksum")
	}
	if !bytes.Equal(sum, h.Sum(nil)) {
		return nil, bad("checksum mismatch (the file is corrupt)")
	}
	if err := c.validate(); err != nil {
		return nil, bad("%v", err)
	}
	return c, nil
}

// validate checks every row start and column of c against its counts, so that Products can
// never index outside an assignment of c's shape.
func (c *Compiled) validate() error {
	if len(c.Moved) > 0 && (c.Flat || c.Blocks == 0) {
		return errors.New("moved terms without blocks")
	}
	for i, mv := range c.Moved {
		if int(mv.Row) >= c.BlockRows || int(mv.Coef) >= len(c.Coeffs) || len(mv.Cols) != c.Blocks {
			return fmt.Errorf("moved term %d out of range", i)
		}
		for _, col := range mv.Cols {
			limit := c.PrefixInputs
			if col&colAux != 0 {
				limit = c.PrefixAux
			}
			if col&colLocal != 0 || int(col&colIndex) >= limit {
				return fmt.Errorf("moved term %d reads a variable out of range", i)
			}
		}
	}
	for k, m := range c.matrices() {
		block := k >= 3
		if len(m.RowStart) > 0 && m.RowStart[0] != 0 {
			return fmt.Errorf("matrix %d: first row does not start at 0", k)
		}
		for i := 1; i < len(m.RowStart); i++ {
			if m.RowStart[i] < m.RowStart[i-1] {
				return fmt.Errorf("matrix %d: row %d starts before row %d", k, i, i-1)
			}
		}
		if len(m.RowStart) > 0 && int(m.RowStart[len(m.RowStart)-1]) != len(m.Cols) {
			return fmt.Errorf("matrix %d: rows do not cover its %d terms", k, len(m.Cols))
		}
		for i, col := range m.Cols {
			idx := int(col & colIndex)
			var limit int
			switch col &^ colIndex {
			case 0:
				limit = c.PrefixInputs
				if c.Flat {
					limit = c.NumInputs
				}
			case colAux:
				limit = c.PrefixAux
				if c.Flat {
					limit = c.NumAux
				}
			case colLocal:
				limit = c.BlockInputs
			default:
				limit = c.BlockAux
			}
			if (!block && col&colLocal != 0) || idx >= limit {
				return fmt.Errorf("matrix %d: term %d reads a variable out of range", k, i)
			}
			if int(m.Coef[i]) >= len(c.Coeffs) {
				return fmt.Errorf("matrix %d: term %d has coefficient %d of %d", k, i, m.Coef[i], len(c.Coeffs))
			}
		}
	}
	return nil
}

type hashReader struct {
	r    *bufio.Reader
	h    hash.Hash
	left int64 // payload bytes before the checksum
}

func (r *hashReader) full(p []byte) error {
	if int64(len(p)) > r.left {
		return io.ErrUnexpectedEOF
	}
	if _, err := io.ReadFull(r.r, p); err != nil {
		return err
	}
	r.h.Write(p)
	r.left -= int64(len(p))
	return nil
}

// readUints reads n little-endian integers of T's size.
func readUints[T uint16 | uint32](r *hashReader, n int) ([]T, error) {
	size := binary.Size(T(0))
	if int64(n)*int64(size) > r.left {
		return nil, io.ErrUnexpectedEOF
	}
	out := make([]T, n)
	buf := make([]byte, 1<<16)
	for i := 0; i < n; {
		k := min(len(buf)/size, n-i)
		if err := r.full(buf[:k*size]); err != nil {
			return nil, err
		}
		for j := 0; j < k; j++ {
			if size == 4 {
				out[i+j] = T(binary.LittleEndian.Uint32(buf[j*4:]))
			} else {
				out[i+j] = T(binary.LittleEndian.Uint16(buf[j*2:]))
			}
		}
		i += k
	}
	return out, nil
}

// writeUints writes s little-endian through buf (whose capacity sets the chunk) and returns buf.
func writeUints[T uint16 | uint32](w io.Writer, buf []byte, s []T) []byte {
	size := binary.Size(T(0))
	for i := 0; i < len(s); {
		buf = buf[:0]
		for ; i < len(s) && len(buf)+size <= cap(buf); i++ {
			if size == 4 {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(s[i]))
			} else {
				buf = binary.LittleEndian.AppendUint16(buf, uint16(s[i]))
			}
		}
		w.Write(buf)
	}
	return buf
}

// LoadCompiled reads the compiled circuit stored at path for key, recorded by build (any build
// when empty; ReadCompiled).
func LoadCompiled(path, key, build string) (*Compiled, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &CompiledFileError{Path: path, Reason: "not a regular file"}
	}
	return ReadCompiled(f, fi.Size(), path, key, build)
}

// Store writes c to path atomically (a temporary file renamed into place).
func (c *Compiled) Store(path string) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}
