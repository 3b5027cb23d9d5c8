package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strings"
)

// The scanner reads a journal file page by page with its own bounds-checked parser of bbolt's
// on-disk format (go.etcd.io/bbolt, format version 2), never through bbolt's memory map: a
// damaged file gives problems to report, not a fault or a panic. It checks what bbolt's own
// consistency check does (both meta pages, the file's length, page headers, element bounds, key
// order, pages referenced twice, the freelist, pages neither reachable nor free) and hands every
// readable key and value of the journal's buckets to the caller, so that a repair can salvage
// the pages that survived.

const (
	pageHeaderSize  = 16
	elemSize        = 16 // a branch or a leaf element
	bucketHeader    = 16 // root page ID and sequence
	metaSize        = 56 // the meta fields the checksum covers
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	metaPageFlag    = 0x04
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	noFreelist      = ^uint64(0)
	maxTreeDepth    = 64
	maxPageSize     = 1 << 16
	minPageSize     = 1 << 9
	freelistMaxElem = 0xFFFF
)

var le = binary.LittleEndian

// meta is a decoded meta page.
type meta struct {
	pageSize uint32
	root     uint64 // root bucket page
	freelist uint64
	pgid     uint64 // high-water mark: pages [0, pgid) are in use or free
	txid     uint64
}

// parseMeta decodes and verifies the meta page in b (a whole page).
func parseMeta(b []byte) (meta, error) {
	if len(b) < pageHeaderSize+metaSize+8 {
		return meta{}, errors.New("too short")
	}
	m := b[pageHeaderSize:]
	if le.Uint32(m[0:]) != boltMagic {
		return meta{}, errors.New("not a bbolt meta page (bad magic)")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSize])
	if le.Uint64(m[metaSize:]) != h.Sum64() {
		return meta{}, errors.New("checksum mismatch")
	}
	return meta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pgid:     le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}, nil
}

// kv is one key and value found in a top-level bucket.
type kv struct {
	bucket, key, value []byte
}

// scan is the result of reading a journal file.
type scan struct {
	size     int64
	meta     meta
	problems []string
	// incomplete names the top-level buckets whose tree had a damaged page: keys may be missing.
	incomplete map[string]bool
	// orphans are the unreachable, unfreed leaf pages, candidates for a salvage; without the
	// freelist (freelistOK false) they include free pages, which may hold stale versions.
	orphans []uint64
	// freelistOK is set when the freelist was read: only then can orphans be told from free pages.
	freelistOK bool

	r       io.ReaderAt
	reached map[uint64]bool
	free    map[uint64]bool
	visit   func(kv)
}

func (s *scan) problemf(format string, args ...interface{}) {
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// scanReader reads the journal in r (size bytes); visit, when not nil, receives every key and
// value of the top-level buckets reached through the tree (the bytes stay valid; nothing else
// refers to them). Damage is in the problems.
func scanReader(r io.ReaderAt, size int64, visit func(kv)) *scan {
	s := &scan{size: size, r: r, reached: map[uint64]bool{}, free: map[uint64]bool{},
		incomplete: map[string]bool{}, visit: visit}
	if size == 0 {
		s.problemf("the file is empty (0 bytes)")
		return s
	}
	if !s.readMeta() {
		return s
	}
	ps := int64(s.meta.pageSize)
	if need := int64(s.meta.pgid) * ps; size < need {
		s.problemf("the file is truncated: %d bytes, the journal spans %d (pages %d to %d are missing)",
			size, need, size/ps, s.meta.pgid-1)
	}
	s.reached[0], s.reached[1] = true, true
	s.readFreelist()
	s.walkRoot()
	var unreachable []uint64
	for id := uint64(2); id < s.meta.pgid; id++ {
		if !s.reached[id] && !s.free[id] {
			unreachable = append(unreachable, id)
		}
	}
	if len(unreachable) > 0 && s.freelistOK {
		verb := "pages are"
		if len(unreachable) == 1 {
			verb = "page is"
		}
		s.problemf("%d %s neither reachable nor free (%s)", len(unreachable), verb, pageList(unreachable))
	}
	if len(unreachable) > 0 && (s.freelistOK || len(s.incomplete) > 0) {
		for _, id := range unreachable {
			if p, err := s.page(id); err == nil && le.Uint16(p[8:]) == leafPageFlag {
				s.orphans = append(s.orphans, id)
			}
		}
	}
	return s
}

// readMeta finds the page size and picks the newest valid meta page, as bbolt does.
func (s *scan) readMeta() bool {
	buf := make([]byte, maxPageSize)
	n, _ := s.r.ReadAt(buf, 0)
	buf = buf[:n]
	var metas [2]*meta
	var errs [2]error
	if m, err := parseMeta(buf); err == nil {
		metas[0] = &m
	} else {
		errs[0] = err
	}
	// Page size: meta 0's, or the size at which a valid meta 1 sits.
	var sizes []uint32
	if metas[0] != nil {
		sizes = []uint32{metas[0].pageSize}
	} else {
		sizes = []uint32{4096, uint32(os.Getpagesize()), 512, 1024, 2048, 8192, 16384, 32768, 65536}
	}
	for _, ps := range sizes {
		if ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
			continue
		}
		if int(ps) >= len(buf) {
			errs[1] = errors.New("beyond the end of the file")
			continue
		}
		m, err := parseMeta(buf[ps:])
		if err == nil && m.pageSize == ps {
			metas[1], errs[1] = &m, nil
			break
		}
		if err == nil {
			err = fmt.Errorf("page size %d, meta 0 says %d", m.pageSize, ps)
		}
		errs[1] = err
	}
	if metas[0] != nil && metas[1] != nil && metas[0].pageSize != metas[1].pageSize {
		metas[1], errs[1] = nil, fmt.Errorf("page size %d, meta 0 says %d", metas[1].pageSize, metas[0].pageSize)
	}
	switch {
	case metas[0] == nil && metas[1] == nil:
		s.problemf("not a readable job journal: neither meta page is valid (page 0: %v; page 1: %v)", errs[0], errs[1])
		return false
	case metas[0] == nil || metas[1] == nil:
		bad, good := 0, metas[1]
		if metas[1] == nil {
			bad, good = 1, metas[0]
		}
		s.problemf("meta page %d is invalid (%v): only transaction %d can be read, a later write may be lost", bad, errs[bad], good.txid)
		s.meta = *good
	case metas[0].txid >= metas[1].txid:
		s.meta = *metas[0]
	default:
		s.meta = *metas[1]
	}
	if s.meta.pageSize < minPageSize || s.meta.pageSize > maxPageSize || s.meta.pageSize&(s.meta.pageSize-1) != 0 {
		s.problemf("meta page: invalid page size %d", s.meta.pageSize)
		return false
	}
	if s.meta.pgid < 3 || s.meta.root < 2 || s.meta.root >= s.meta.pgid {
		s.problemf("meta page: root page %d outside the journal's %d pages", s.meta.root, s.meta.pgid)
		return false
	}
	return true
}

// page reads page id with its overflow pages after checking its header.
func (s *scan) page(id uint64) ([]byte, error) {
	if id < 2 || id >= s.meta.pgid {
		return nil, fmt.Errorf("page %d is outside the journal's %d pages", id, s.meta.pgid)
	}
	ps := int64(s.meta.pageSize)
	off := int64(id) * ps
	if off+ps > s.size {
		return nil, fmt.Errorf("page %d is beyond the end of the file", id)
	}
	hdr := make([]byte, ps)
	if _, err := s.r.ReadAt(hdr, off); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := le.Uint64(hdr[0:]); got != id {
		return nil, fmt.Errorf("page %d is overwritten (its header names page %d)", id, got)
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	if overflow == 0 {
		return hdr, nil
	}
	if id+overflow >= s.meta.pgid {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the journal's %d pages", id, overflow, s.meta.pgid)
	}
	n := int64(overflow+1) * ps
	if off+n > s.size {
		return nil, fmt.Errorf("page %d: its overflow pages are beyond the end of the file", id)
	}
	buf := make([]byte, n)
	copy(buf, hdr)
	if _, err := s.r.ReadAt(buf[ps:], off+ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// reach marks id and its overflow pages as reached; false if one already was.
func (s *scan) reach(id uint64, p []byte) bool {
	n := uint64(len(p)) / uint64(s.meta.pageSize)
	if n == 0 {
		n = 1
	}
	ok := true
	for i := uint64(0); i < n; i++ {
		if s.reached[id+i] {
			ok = false
		}
		s.reached[id+i] = true
	}
	return ok
}

func (s *scan) readFreelist() {
	id := s.meta.freelist
	if id == noFreelist {
		s.problemf("the journal has no freelist")
		return
	}
	p, err := s.page(id)
	if err == nil && le.Uint16(p[8:]) != freelistFlag {
		err = fmt.Errorf("page %d is not the freelist (flags %#x)", id, le.Uint16(p[8:]))
	}
	if err != nil {
		s.problemf("freelist: %v", err)
		return
	}
	if !s.reach(id, p) {
		s.problemf("freelist page %d is referenced twice", id)
	}
	idx, count := 0, int(le.Uint16(p[10:]))
	if count == freelistMaxElem {
		idx, count = 1, int(le.Uint64(p[pageHeaderSize:]))
	}
	if count < 0 || pageHeaderSize+(idx+count)*8 > len(p) {
		s.problemf("freelist page %d: %d entries do not fit in the page", id, count)
		return
	}
	for i := 0; i < count; i++ {
		f := le.Uint64(p[pageHeaderSize+(idx+i)*8:])
		if f < 2 || f >= s.meta.pgid {
			s.problemf("freelist page %d: free page %d is outside the journal's %d pages", id, f, s.meta.pgid)
			return
		}
		if s.free[f] {
			s.problemf("page %d is freed twice", f)
		}
		s.free[f] = true
	}
	s.freelistOK = true
}

// walkRoot walks the root bucket, whose entries are the journal's top-level buckets.
func (s *scan) walkRoot() {
	s.walkPage(s.meta.root, nil, 0, "root bucket")
}

// walkPage walks the B+tree page id of the top-level bucket top (nil: the root bucket).
func (s *scan) walkPage(id uint64, top []byte, depth int, where string) {
	name := string(top)
	if depth > maxTreeDepth {
		s.problemf("%s: the tree is deeper than %d levels at page %d", where, maxTreeDepth, id)
		s.incomplete[name] = true
		return
	}
	p, err := s.page(id)
	if err == nil && s.free[id] {
		err = fmt.Errorf("page %d is in use and free", id)
	}
	if err != nil {
		s.problemf("%s: %v", where, err)
		s.incomplete[name] = true
		return
	}
	if !s.reach(id, p) {
		s.problemf("%s: page %d is referenced twice", where, id)
		s.incomplete[name] = true
		return
	}
	s.walkNode(id, p, top, depth, where)
}

// walkNode walks the node in p (a page, or an inline bucket's page).
func (s *scan) walkNode(id uint64, p []byte, top []byte, depth int, where string) {
	name := string(top)
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	bad := func(format string, args ...interface{}) {
		s.problemf("%s: page %d: %s", where, id, fmt.Sprintf(format, args...))
		s.incomplete[name] = true
	}
	if pageHeaderSize+count*elemSize > len(p) {
		bad("%d elements do not fit in the page", count)
		return
	}
	var prev []byte
	for i := 0; i < count; i++ {
		e := pageHeaderSize + i*elemSize
		var key, value []byte
		var child uint64
		var elemFlags uint32
		switch flags {
		case branchPageFlag:
			pos, ksize := int(le.Uint32(p[e:])), int(le.Uint32(p[e+4:]))
			child = le.Uint64(p[e+8:])
			if e+pos+ksize > len(p) || pos < 0 || ksize < 0 {
				bad("element %d runs past the page", i)
				return
			}
			key = p[e+pos : e+pos+ksize]
		case leafPageFlag:
			elemFlags = le.Uint32(p[e:])
			pos, ksize, vsize := int(le.Uint32(p[e+4:])), int(le.Uint32(p[e+8:])), int(le.Uint32(p[e+12:]))
			if pos < 0 || ksize < 0 || vsize < 0 || e+pos+ksize+vsize > len(p) {
				bad("element %d runs past the page", i)
				return
			}
			key = p[e+pos : e+pos+ksize]
			value = p[e+pos+ksize : e+pos+ksize+vsize]
		default:
			bad("not a branch or leaf page (flags %#x)", flags)
			return
		}
		if prev != nil && string(key) <= string(prev) {
			bad("keys out of order at element %d", i)
			return
		}
		prev = key
		if flags == branchPageFlag {
			s.walkPage(child, top, depth+1, where)
			continue
		}
		if elemFlags&bucketLeafFlag != 0 {
			s.walkBucket(id, key, value, top, depth, where)
			continue
		}
		if top == nil {
			bad("a key outside any bucket")
			continue
		}
		if s.visit != nil {
			s.visit(kv{bucket: top, key: key, value: value})
		}
	}
}

// walkBucket walks the bucket whose header is value, found on page id.
func (s *scan) walkBucket(id uint64, key, value, top []byte, depth int, where string) {
	if len(value) < bucketHeader {
		s.problemf("%s: page %d: bucket %q has a short header", where, id, key)
		s.incomplete[string(key)] = true
		return
	}
	sub := top
	subWhere := where
	if top == nil {
		sub = clone(key)
		subWhere = fmt.Sprintf("bucket %q", key)
	}
	root := le.Uint64(value)
	if root != 0 {
		s.walkPage(root, sub, depth+1, subWhere)
		return
	}
	inline := value[bucketHeader:]
	if len(inline) < pageHeaderSize {
		s.problemf("%s: page %d: inline bucket %q is truncated", where, id, key)
		s.incomplete[string(sub)] = true
		return
	}
	if f := le.Uint16(inline[8:]); f != leafPageFlag {
		s.problemf("%s: page %d: inline bucket %q is not a leaf (flags %#x)", where, id, key, f)
		s.incomplete[string(sub)] = true
		return
	}
	s.walkNode(id, inline, sub, depth+1, subWhere)
}

// leaves decodes the elements of a leaf page that is no bucket's (an orphan); nil when it
// holds a bucket or does not parse.
func (s *scan) leaves(id uint64) [][2][]byte {
	p, err := s.page(id)
	if err != nil || le.Uint16(p[8:]) != leafPageFlag {
		return nil
	}
	count := int(le.Uint16(p[10:]))
	if pageHeaderSize+count*elemSize > len(p) {
		return nil
	}
	out := make([][2][]byte, 0, count)
	for i := 0; i < count; i++ {
		e := pageHeaderSize + i*elemSize
		flags := le.Uint32(p[e:])
		pos, ksize, vsize := int(le.Uint32(p[e+4:])), int(le.Uint32(p[e+8:])), int(le.Uint32(p[e+12:]))
		if flags != 0 || e+pos+ksize+vsize > len(p) {
			return nil
		}
		out = append(out, [2][]byte{clone(p[e+pos : e+pos+ksize]), clone(p[e+pos+ksize : e+pos+ksize+vsize])})
	}
	return out
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// pageList renders page IDs compactly: "5, 7-9, 12" (at most 10 ranges).
func pageList(ids []uint64) string {
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	var out []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if len(out) == 10 {
			out = append(out, "…")
			break
		}
		if i == j {
			out = append(out, fmt.Sprint(ids[i]))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	s := "page"
	if len(ids) > 1 {
		s = "pages"
	}
	return s + " " + strings.Join(out, ", ")
}
