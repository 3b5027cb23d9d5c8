package paramfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// server serves files by name (mirror) and by CID (gateway), honouring Range requests, with
// faults a test switches on.
type server struct {
	t     *testing.T
	files map[string][]byte // by name
	cids  map[string]string // CID → name

	mu       sync.Mutex
	requests []string       // "name range"
	cutAfter map[string]int // cut the next response for name after this many body bytes
	corrupt  map[string]bool
	noRange  bool
}

func newServer(t *testing.T, files map[string][]byte) (*server, []File) {
	s := &server{t: t, files: files, cids: map[string]string{}, cutAfter: map[string]int{}, corrupt: map[string]bool{}}
	var list []File
	for name, b := range files {
		d, err := prooftypes.FileDigest(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		cid := "Qm" + d
		s.cids[cid] = name
		list = append(list, File{Name: name, Published: prooftypes.Published{CID: cid, Digest: d, SectorSize: 2048}})
	}
	return s, list
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/mirror/")
	if cid, ok := strings.CutPrefix(r.URL.Path, "/ipfs/"); ok {
		name = s.cids[cid]
	}
	body, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, name+" "+r.Header.Get("Range"))
	cut, cutting := s.cutAfter[name]
	delete(s.cutAfter, name)
	corrupt, noRange := s.corrupt[name], s.noRange
	s.mu.Unlock()
	if corrupt {
		body = append([]byte(nil), body...)
		body[len(body)/2] ^= 0x40
	}
	start := 0
	if rg := r.Header.Get("Range"); rg != "" && !noRange {
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || v < 0 {
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		if v >= len(body) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(body)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start = v
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", v, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-v))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
	}
	rest := body[start:]
	if cutting && cut < len(rest) {
		w.Write(rest[:cut])
		w.(http.Flusher).Flush()
		// Drop the connection mid-body: the client sees an unexpected EOF.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Write(rest)
}

func (s *server) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testOptions(dir, base string) Options {
	return Options{Dir: dir, Mirror: base + "/mirror", Retries: 3, LockRetry: 10 * time.Millisecond, ProgressEvery: 5 * time.Millisecond}
}

func fetchFiles(t *testing.T, o Options, files []File) ([]Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Fetch(ctx, o, files)
}

func checkDir(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("%s: content differs", name)
		}
		if _, err := os.Stat(filepath.Join(dir, name+PartialSuffix)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: partial file left behind (%v)", name, err)
		}
	}
}

func TestFetch(t *testing.T) {
	files := map[string][]byte{"a.params": randBytes(3<<20+17, 1), "a.vk": randBytes(1000, 2), "empty.srs": {}}
	s, list := newServer(t, files)
	ts := httptest.NewServer(s)
	defer ts.Close()

	t.Run("mirror, in parallel, with progress", func(t *testing.T) {
		dir := t.TempDir()
		o := testOptions(dir, ts.URL)
		var mu sync.Mutex
		var last Snapshot
		o.Progress = func(p Snapshot) { mu.Lock(); last = p; mu.Unlock() }
		res, err := fetchFiles(t, o, list)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Status != StatusFetched || r.Bytes != int64(len(files[r.Name])) {
				t.Fatalf("%+v", r)
			}
		}
		checkDir(t, dir, files)
		total := int64(0)
		for _, b := range files {
			total += int64(len(b))
		}
		if last.Done != 3 || last.Bytes != total || last.Total != total || len(last.Active) != 0 {
			t.Fatalf("last progress %+v, want 3 done, %d bytes", last, total)
		}
		// Again: everything present, nothing requested.
		before := len(s.log())
		res, err = fetchFiles(t, o, list)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Status != StatusPresent {
				t.Fatalf("second fetch: %+v", r)
			}
		}
		if n := len(s.log()) - before; n != 0 {
			t.Fatalf("second fetch made %d requests", n)
		}
	})

	t.Run("gateway by CID", func(t *testing.T) {
		dir := t.TempDir()
		o := testOptions(dir, ts.URL)
		o.Mirror, o.Gateway = "", ts.URL+"/ipfs"
		if _, err := fetchFiles(t, o, list[:1]); err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, map[string][]byte{list[0].Name: files[list[0].Name]})
	})

	t.Run("interrupted transfer resumes", func(t *testing.T) {
		dir := t.TempDir()
		const cut = 1<<20 + 5
		s.mu.Lock()
		s.cutAfter["a.params"] = cut
		s.mu.Unlock()
		before := len(s.log())
		res, err := fetchFiles(t, testOptions(dir, ts.URL), list)
		if err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, files)
		var ranges []string
		for _, r := range s.log()[before:] {
			if strings.HasPrefix(r, "a.params ") {
				ranges = append(ranges, strings.TrimPrefix(r, "a.params "))
			}
		}
		// The cut may land a little after `cut` bytes reached the file (the client reads what
		// the kernel had); the resume asks for exactly what the file holds.
		if len(ranges) != 2 || ranges[0] != "" || !strings.HasPrefix(ranges[1], "bytes=") {
			t.Fatalf("requests for a.params: %q, want a full one then one resumed", ranges)
		}
		at, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ranges[1], "bytes="), "-"))
		if at <= 0 || at > cut {
			t.Fatalf("resumed at %d, cut at %d", at, cut)
		}
		for _, r := range res {
			if r.Name == "a.params" && r.Downloaded != int64(len(files["a.params"])) {
				t.Fatalf("a.params: %d bytes transferred, want %d (nothing twice)", r.Downloaded, len(files["a.params"]))
			}
		}
	})

	t.Run("a partial file from an earlier fetch resumes", func(t *testing.T) {
		dir := t.TempDir()
		half := files["a.params"][:len(files["a.params"])/2]
		if err := os.WriteFile(filepath.Join(dir, "a.params"+PartialSuffix), half, 0o644); err != nil {
			t.Fatal(err)
		}
		before := len(s.log())
		res, err := fetchFiles(t, testOptions(dir, ts.URL), list[:0:0])
		if err != nil || len(res) != 0 {
			t.Fatal(res, err)
		}
		var one []File
		for _, f := range list {
			if f.Name == "a.params" {
				one = append(one, f)
			}
		}
		res, err = fetchFiles(t, testOptions(dir, ts.URL), one)
		if err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, map[string][]byte{"a.params": files["a.params"]})
		if got := s.log()[before:]; len(got) != 1 || got[0] != fmt.Sprintf("a.params bytes=%d-", len(half)) {
			t.Fatalf("requests %q", got)
		}
		if res[0].Downloaded != int64(len(files["a.params"])-len(half)) {
			t.Fatalf("%+v", res[0])
		}
	})

	t.Run("a server that ignores ranges", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.vk"+PartialSuffix), []byte("junk that is not the start"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.noRange = true
		s.mu.Unlock()
		defer func() { s.mu.Lock(); s.noRange = false; s.mu.Unlock() }()
		var one []File
		for _, f := range list {
			if f.Name == "a.vk" {
				one = append(one, f)
			}
		}
		if _, err := fetchFiles(t, testOptions(dir, ts.URL), one); err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, map[string][]byte{"a.vk": files["a.vk"]})
	})

	t.Run("a corrupted byte never takes the final name", func(t *testing.T) {
		dir := t.TempDir()
		s.mu.Lock()
		s.corrupt["a.params"] = true
		s.mu.Unlock()
		defer func() { s.mu.Lock(); delete(s.corrupt, "a.params"); s.mu.Unlock() }()
		res, err := fetchFiles(t, testOptions(dir, ts.URL), list)
		if err == nil || !strings.Contains(err.Error(), "a.params") {
			t.Fatalf("err = %v, want a.params named", err)
		}
		for _, r := range res {
			want := StatusFetched
			if r.Name == "a.params" {
				want = StatusFailed
				if !strings.Contains(r.Error, "digest") {
					t.Fatalf("a.params error %q, want the digest mismatch", r.Error)
				}
			}
			if r.Status != want {
				t.Fatalf("%+v, want %s", r, want)
			}
		}
		for _, name := range []string{"a.params", "a.params" + PartialSuffix} {
			if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s exists after a corrupted download (%v)", name, err)
			}
		}
	})

	t.Run("an existing file of another digest", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.vk"), []byte("devnet key"), 0o644); err != nil {
			t.Fatal(err)
		}
		var one []File
		for _, f := range list {
			if f.Name == "a.vk" {
				one = append(one, f)
			}
		}
		res, err := fetchFiles(t, testOptions(dir, ts.URL), one)
		if err == nil || res[0].Status != StatusMismatch || !strings.Contains(res[0].Error, "--force") {
			t.Fatalf("%+v, %v: want a mismatch that names --force", res, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.vk")); string(b) != "devnet key" {
			t.Fatal("the existing file was touched without --force")
		}
		o := testOptions(dir, ts.URL)
		o.Force = true
		if _, err := fetchFiles(t, o, one); err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, map[string][]byte{"a.vk": files["a.vk"]})
	})

	t.Run("not found fails at once", func(t *testing.T) {
		dir := t.TempDir()
		bad := []File{{Name: "nope.vk", Published: prooftypes.Published{CID: "QmNope", Digest: strings.Repeat("0", 32)}}}
		before := len(s.log())
		res, err := fetchFiles(t, testOptions(dir, ts.URL), bad)
		if err == nil || res[0].Status != StatusFailed || !strings.Contains(res[0].Error, "404") {
			t.Fatalf("%+v %v", res, err)
		}
		// Answered 404 once, not retried (the server logs only files it has).
		if n := len(s.log()) - before; n != 0 {
			t.Fatalf("%d logged requests for a missing file", n)
		}
	})

	t.Run("two fetches into one directory", func(t *testing.T) {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = fetchFiles(t, testOptions(dir, ts.URL), list)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkDir(t, dir, files)
	})

	t.Run("bad names are refused", func(t *testing.T) {
		_, err := fetchFiles(t, testOptions(t.TempDir(), ts.URL), []File{{Name: "../x.vk"}})
		if err == nil {
			t.Fatal("a path in a file name was accepted")
		}
	})
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in           string
		start, total int64
		ok           bool
	}{
		{"bytes 10-99/100", 10, 100, true},
		{"bytes */100", 0, 100, true},
		{"bytes 10-99/*", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"", 0, 0, false},
	} {
		s, n, ok := parseContentRange(tc.in)
		if s != tc.start || n != tc.total || ok != tc.ok {
			t.Errorf("%q: %d %d %v", tc.in, s, n, ok)
		}
	}
}

func TestURL(t *testing.T) {
	f := File{Name: "x.vk", Published: prooftypes.Published{CID: "QmX"}}
	t.Setenv(GatewayEnv, "")
	if got := (Options{}).URL(f); got != DefaultGateway+"QmX" {
		t.Fatal(got)
	}
	t.Setenv(GatewayEnv, "https://gw.example/ipfs")
	if got := (Options{}).URL(f); got != "https://gw.example/ipfs/QmX" {
		t.Fatal(got)
	}
	if got := (Options{Mirror: "https://m.example/params/"}).URL(f); got != "https://m.example/params/x.vk" {
		t.Fatal(got)
	}
}
