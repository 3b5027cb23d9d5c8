package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/paramfetch"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/prover"
)

// paramServer serves a directory by file name, honouring Range; it can drop the connection
// part-way through a file's first transfer and flip a byte of every transfer of a file.
type paramServer struct {
	dir string

	mu      sync.Mutex
	cut     map[string]int
	corrupt map[string]bool
	ranges  []string
}

func (s *paramServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := filepath.Base(r.URL.Path)
	body, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.ranges = append(s.ranges, name+" "+r.Header.Get("Range"))
	cut, cutting := s.cut[name]
	delete(s.cut, name)
	if s.corrupt[name] {
		body[len(body)/3] ^= 1
	}
	s.mu.Unlock()
	start := 0
	if rg := r.Header.Get("Range"); rg != "" {
		start, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	rest := body[start:]
	if cutting && cut < len(rest) {
		w.Write(rest[:cut])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	w.Write(rest)
}

// TestParamsFetchCommand serves devnet WindowPoSt 2KiB parameters and a parameters.json of
// their digests from a local HTTP server: fetch downloads and verifies them, resumes a
// transfer dropped part-way, refuses a corrupted byte (the file never takes its final name),
// and params check fails on a changed byte.
func TestParamsFetchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("Groth16 setup in -short")
	}
	src := t.TempDir()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		app := newApp()
		app.Writer, app.ErrWriter = &out, &out
		app.ExitErrHandler = func(*cli.Context, error) {}
		err := app.Run(append([]string{"snarkd", "--repo", t.TempDir()}, args...))
		return out.String(), err
	}
	const proof = "StackedDrgWindow2KiBV1_1"
	if out, err := run("params", "gen", "--dir", src, "--proof", proof); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	names := []string{p.ParamFile() + ".params", p.ParamFile() + ".vk"}
	table := map[string]prooftypes.Published{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := prooftypes.FileDigest(bytes.NewReader(b))
		table[name] = prooftypes.Published{CID: "QmTest" + d, Digest: d, SectorSize: 2048}
	}
	js, _ := json.Marshal(table)
	tj := filepath.Join(t.TempDir(), "parameters.json")
	if err := os.WriteFile(tj, js, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := &paramServer{dir: src, cut: map[string]int{}, corrupt: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	fetch := func(dst string) (string, error) {
		return run("params", "fetch", "--proof", proof, "--dir", dst, "--mirror", ts.URL+"/params", "--parameters-json", tj)
	}

	// Downloaded, resumed after a dropped connection, verified, usable.
	dst := t.TempDir()
	params := names[0]
	srv.mu.Lock()
	srv.cut[params] = 1 << 20
	srv.mu.Unlock()
	out, err := fetch(dst)
	if err != nil || !strings.Contains(out, "2 fetched") {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	var resumed bool
	for _, r := range srv.ranges {
		resumed = resumed || strings.HasPrefix(r, params+" bytes=")
	}
	if !resumed {
		t.Fatalf("no resumed request for %s: %q", params, srv.ranges)
	}
	for _, name := range names {
		a, _ := os.ReadFile(filepath.Join(src, name))
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s differs after the fetch (%v)", name, err)
		}
	}
	if _, err := prover.NewParamCache("").WithFilecoinDir(dst).PoSt(context.Background(), p); err != nil {
		t.Fatalf("fetched parameters do not load: %v", err)
	}
	if out, err := run("params", "check", "--proof", proof, "--dir", dst, "--parameters-json", tj); err != nil || !strings.Contains(out, "2 file(s): 2 ok") {
		t.Fatalf("check after fetch: %v\n%s", err, out)
	}
	if out, err := fetch(dst); err != nil || !strings.Contains(out, "2 already present") {
		t.Fatalf("second fetch: %v\n%s", err, out)
	}

	// A corrupted byte in transit: refused, and the name stays free.
	bad := t.TempDir()
	srv.mu.Lock()
	srv.corrupt[params] = true
	srv.mu.Unlock()
	out, err = fetch(bad)
	if exitCode(err) != exitFailed || !strings.Contains(out, "failed") || !strings.Contains(fmt.Sprint(err), "digest") {
		t.Fatalf("corrupted transfer: %v\n%s", err, out)
	}
	for _, name := range []string{params, params + paramfetch.PartialSuffix} {
		if _, err := os.Stat(filepath.Join(bad, name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists after a corrupted transfer (%v)", name, err)
		}
	}

	// A byte changed on disk: check fails naming the file; so does each wrong digest.
	f := filepath.Join(dst, names[1])
	b, _ := os.ReadFile(f)
	b[len(b)-1] ^= 0x80
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("params", "check", "--proof", proof, "--dir", dst, "--parameters-json", tj); exitCode(err) != exitFailed || !strings.Contains(out, "mismatch") || !strings.Contains(out, names[1]) {
		t.Fatalf("check of a changed vk: %v\n%s", err, out)
	}
	if _, err := run("params", "fetch", "--dir", dst); exitCode(err) != exitUsage {
		t.Fatalf("fetch without a selection: %v", err)
	}
}

func TestFetchProgressLine(t *testing.T) {
	for _, tc := range []struct {
		s    paramfetch.Snapshot
		want []string
	}{
		{paramfetch.Snapshot{WaitingForLock: true, Elapsed: 3e9}, []string{"waiting for another fetch", "fetch.lock", "3s"}},
		{paramfetch.Snapshot{Files: 4, Done: 1, Bytes: 1 << 30, Total: 4 << 30, Elapsed: 10e9,
			Active: []string{"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params", "b.vk"}},
			[]string{"1/4 files", "1.0 GiB of 4.0 GiB", "ETA 30s", "sha256_hasher-82a357d2…", ".params (+1)"}},
	} {
		got := fetchProgressLine(tc.s)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
}
