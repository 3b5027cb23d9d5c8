package groth16

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"syscall"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// Parameters is bellperson's Parameters: the verifying key and the proving key's point vectors.
// It is also the ProvingKey view the prover steps take.
//
//   - H: τ^i·t(τ)/δ, i < m−1 (m the FFT domain size)
//   - L: (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ for every aux variable j
//   - A: u(τ) for every input, then for aux with A-density set
//   - BG1, BG2: v(τ) for inputs with B-input density set, then aux with B-aux density set
type Parameters struct {
	VK  VerifyingKey
	H   []bls.G1Affine
	L   []bls.G1Affine
	A   []bls.G1Affine
	BG1 []bls.G1Affine
	BG2 []bls.G2Affine
}

// ParametersSize returns the .params size of p.
func (p *Parameters) ParametersSize() int64 {
	return VerifyingKeySize(len(p.VK.IC)) + 5*4 +
		int64(len(p.H)+len(p.L)+len(p.A)+len(p.BG1))*G1UncompressedSize +
		int64(len(p.BG2))*G2UncompressedSize
}

// WriteTo writes the .params encoding (bellperson Parameters::write), streaming point by point.
func (p *Parameters) WriteTo(w io.Writer) (int64, error) {
	if len(p.BG1) != len(p.BG2) {
		return 0, fmt.Errorf("writing parameters: b_g1 has %d points, b_g2 %d", len(p.BG1), len(p.BG2))
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	n, err := p.VK.writeTo(bw)
	if err != nil {
		return n, err
	}
	var buf [G2UncompressedSize]byte
	var l [4]byte
	g1 := func(name string, pts []bls.G1Affine) error {
		binary.BigEndian.PutUint32(l[:], uint32(len(pts)))
		k, err := bw.Write(l[:])
		n += int64(k)
		for i := range pts {
			if err != nil {
				break
			}
			encodeG1Uncompressed(buf[:], &pts[i])
			k, err = bw.Write(buf[:G1UncompressedSize])
			n += int64(k)
		}
		if err != nil {
			return fmt.Errorf("writing parameters %s: %w", name, err)
		}
		return nil
	}
	for _, s := range []struct {
		name string
		pts  []bls.G1Affine
	}{{"h", p.H}, {"l", p.L}, {"a", p.A}, {"b_g1", p.BG1}} {
		if len(s.pts) > int(^uint32(0)) {
			return n, fmt.Errorf("writing parameters: %d %s points do not fit a u32", len(s.pts), s.name)
		}
		if err := g1(s.name, s.pts); err != nil {
			return n, err
		}
	}
	binary.BigEndian.PutUint32(l[:], uint32(len(p.BG2)))
	k, err := bw.Write(l[:])
	n += int64(k)
	for i := range p.BG2 {
		if err != nil {
			break
		}
		encodeG2Uncompressed(buf[:], &p.BG2[i])
		k, err = bw.Write(buf[:])
		n += int64(k)
	}
	if err != nil {
		return n, fmt.Errorf("writing parameters b_g2: %w", err)
	}
	return n, bw.Flush()
}

// ReadOptions configures parameter reading. The zero value trusts the file completely (no curve
// checks); FilecoinReadOptions is what Filecoin applies to its parameter files.
type ReadOptions struct {
	// Check is the point validation; Filecoin reads its trusted files with on-curve checks only.
	Check Check
	// VKCheck is the validation of the verifying-key prefix (bellperson: CheckSubgroup).
	VKCheck Check
	// AllowTrailing accepts bytes after b_g2 (bellperson's readers ignore them).
	AllowTrailing bool
}

// FilecoinReadOptions returns the checks rust-fil-proofs applies when it loads parameters:
// on-curve checks for the proving key (no subgroup checks) and full checks for the verifying key.
func FilecoinReadOptions() ReadOptions {
	return ReadOptions{Check: CheckOnCurve, VKCheck: CheckSubgroup}
}

// ReadParameters reads a .params stream. size is the number of bytes r holds, or −1 if unknown;
// when known, lengths are validated before anything is allocated and slices are exact.
// Points are decoded in chunks, so the file is never held in memory.
func ReadParameters(r io.Reader, size int64, opts ReadOptions) (*Parameters, error) {
	cr := &countingReader{r: r}
	remaining := func() int64 {
		if size < 0 {
			return -1
		}
		return size - cr.n
	}
	vk, err := ReadVerifyingKey(cr, opts.VKCheck)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	p := &Parameters{VK: *vk}
	for _, s := range []struct {
		name string
		dst  *[]bls.G1Affine
	}{{"h", &p.H}, {"l", &p.L}, {"a", &p.A}, {"b_g1", &p.BG1}} {
		n, err := readLen(cr, s.name)
		if err != nil {
			return nil, err
		}
		pts, err := readG1Section(cr, s.name, n, remaining(), opts.Check)
		if err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
		*s.dst = pts
	}
	n, err := readLen(cr, "b_g2")
	if err != nil {
		return nil, err
	}
	if n != int64(len(p.BG1)) {
		return nil, fmt.Errorf("parameters: b_g2 has %d points but b_g1 has %d", n, len(p.BG1))
	}
	if p.BG2, err = readG2Section(cr, "b_g2", n, remaining(), opts.Check); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	if size >= 0 && remaining() != 0 && !opts.AllowTrailing {
		return nil, fmt.Errorf("parameters: %d trailing bytes after b_g2", remaining())
	}
	return p, nil
}

// ParseParameters decodes a complete .params held in memory.
func ParseParameters(b []byte, opts ReadOptions) (*Parameters, error) {
	return ReadParameters(bytes.NewReader(b), int64(len(b)), opts)
}

// OpenParameters memory-maps a .params file and decodes it in parallel. The mapping is outside
// the Go heap and is released before returning, so only the decoded points stay resident.
func OpenParameters(path string, opts ReadOptions) (*Parameters, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening parameters: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening parameters %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return nil, fmt.Errorf("parameters %s: empty file", path)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// No mmap (e.g. a pipe): fall back to streaming.
		p, rerr := ReadParameters(bufio.NewReaderSize(f, 1<<20), size, opts)
		if rerr != nil {
			return nil, fmt.Errorf("parameters %s: %w", path, rerr)
		}
		return p, nil
	}
	defer syscall.Munmap(data)
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	p, err := parseMapped(data, opts)
	if err != nil {
		return nil, fmt.Errorf("parameters %s: %w", path, err)
	}
	return p, nil
}

// parseMapped decodes sections directly from the mapped bytes (no intermediate copy).
func parseMapped(data []byte, opts ReadOptions) (*Parameters, error) {
	lay, err := ScanLayout(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	if lay.End != int64(len(data)) && !opts.AllowTrailing {
		return nil, fmt.Errorf("%d trailing bytes after b_g2", int64(len(data))-lay.End)
	}
	vk, err := ParseVerifyingKey(data[:lay.H.Offset-4], opts.VKCheck)
	if err != nil {
		return nil, err
	}
	p := &Parameters{VK: *vk}
	for _, s := range []struct {
		name string
		sec  Section
		dst  *[]bls.G1Affine
	}{{"h", lay.H, &p.H}, {"l", lay.L, &p.L}, {"a", lay.A, &p.A}, {"b_g1", lay.BG1, &p.BG1}} {
		*s.dst = make([]bls.G1Affine, s.sec.Count)
		if err := decodeG1s(*s.dst, data[s.sec.Offset:], s.name, 0, opts.Check); err != nil {
			return nil, err
		}
	}
	p.BG2 = make([]bls.G2Affine, lay.BG2.Count)
	if err := decodeG2s(p.BG2, data[lay.BG2.Offset:], "b_g2", 0, opts.Check); err != nil {
		return nil, err
	}
	return p, nil
}

// Section locates one point vector of a .params file.
type Section struct {
	Offset int64 // first point's byte offset
	Count  int64 // number of points
}

// Layout is the byte map of a .params file, for readers that stream sections themselves (the
// GPU path uploads raw sections).
type Layout struct {
	ICLen             int64
	H, L, A, BG1, BG2 Section
	End               int64 // offset just past b_g2
}

// ScanLayout reads only the length prefixes of a .params file of the given size and checks that
// every section fits.
func ScanLayout(r io.ReaderAt, size int64) (*Layout, error) {
	var l [4]byte
	readU32 := func(off int64, what string) (int64, error) {
		if off+4 > size {
			return 0, fmt.Errorf("truncated at %s length (offset %d, size %d)", what, off, size)
		}
		if _, err := r.ReadAt(l[:], off); err != nil {
			return 0, fmt.Errorf("reading %s length: %w", what, err)
		}
		return int64(binary.BigEndian.Uint32(l[:])), nil
	}
	lay := &Layout{}
	off := int64(VerifyingKeyHeaderSize - 4)
	ic, err := readU32(off, "ic")
	if err != nil {
		return nil, err
	}
	lay.ICLen = ic
	off += 4 + ic*G1UncompressedSize
	for _, s := range []struct {
		name string
		sec  *Section
		size int64
	}{{"h", &lay.H, G1UncompressedSize}, {"l", &lay.L, G1UncompressedSize}, {"a", &lay.A, G1UncompressedSize},
		{"b_g1", &lay.BG1, G1UncompressedSize}, {"b_g2", &lay.BG2, G2UncompressedSize}} {
		n, err := readU32(off, s.name)
		if err != nil {
			return nil, err
		}
		off += 4
		if off+n*s.size > size {
			return nil, fmt.Errorf("%s: %d points need %d bytes at offset %d, file has %d", s.name, n, n*s.size, off, size)
		}
		*s.sec = Section{Offset: off, Count: n}
		off += n * s.size
	}
	if lay.BG1.Count != lay.BG2.Count {
		return nil, fmt.Errorf("b_g2 has %d points but b_g1 has %d", lay.BG2.Count, lay.BG1.Count)
	}
	lay.End = off
	return lay, nil
}

func readLen(r io.Reader, section string) (int64, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return 0, fmt.Errorf("parameters: reading %s length: %w", section, noEOF(err))
	}
	return int64(binary.BigEndian.Uint32(l[:])), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
