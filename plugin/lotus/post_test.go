package lotus

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/rpcapi"
)

const (
	postMiner = abi.ActorID(1000)
	postToken = "Bearer miner-admin-token"
	windowPPT = abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1
	winPPT    = abi.RegisteredPoStProof_StackedDrgWinning2KiBV1
)

// proofRunner answers every job with a fake proof naming its kind, recording the requests; with
// hold set it blocks each job until ctx ends.
type proofRunner struct {
	hold    bool
	mu      sync.Mutex
	reqs    []rpcapi.ProofRequest
	started chan struct{}
}

func (r *proofRunner) Supports(rpcapi.ProofKind) error { return nil }

func (r *proofRunner) Run(ctx context.Context, t jobs.Task, _ jobs.Report) (jobs.Output, error) {
	req := t.Request
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if r.started != nil {
		r.started <- struct{}{}
	}
	if r.hold {
		<-ctx.Done()
		return jobs.Output{}, ctx.Err()
	}
	return jobs.Output{Proof: []byte("proof of " + string(req.Kind))}, nil
}

func (r *proofRunner) requests() []rpcapi.ProofRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rpcapi.ProofRequest(nil), r.reqs...)
}

func newJobs(t *testing.T, r jobs.Runner) *jobs.Manager {
	t.Helper()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := jobs.Open(j, r, jobs.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); j.Close() })
	return m
}

// fakeIndex is the miner's storage index: the storage URLs of each sector, or an error.
type fakeIndex struct {
	urls map[abi.SectorNumber][]string // one storage path per URL
	errs map[abi.SectorNumber]error
	mu   sync.Mutex
	fts  []rpcapi.SectorFileType
}

func (f *fakeIndex) StorageFindSector(_ context.Context, s abi.SectorID, ft rpcapi.SectorFileType, ssize abi.SectorSize, allowFetch bool) ([]rpcapi.SectorStorageInfo, error) {
	f.mu.Lock()
	f.fts = append(f.fts, ft)
	f.mu.Unlock()
	if s.Miner != postMiner || ssize != 0 || allowFetch {
		return nil, fmt.Errorf("unexpected StorageFindSector(%v, %d, %v)", s, ssize, allowFetch)
	}
	if err := f.errs[s.Number]; err != nil {
		return nil, err
	}
	var out []rpcapi.SectorStorageInfo
	for i, u := range f.urls[s.Number] {
		out = append(out, rpcapi.SectorStorageInfo{ID: rpcapi.StorageID(fmt.Sprintf("store-%d", i)), BaseURLs: []string{u}, CanStore: true})
	}
	return out, nil
}

// storage is an httptest storage node. Under /good it serves the vanilla proof of the sector
// asked for; /missing answers 404, /broken 500, /garbage junk, /other the proof of another
// sector, /slow nothing until the request ends. It checks the Authorization header and counts
// requests in flight.
type storage struct {
	srv     *httptest.Server
	vanilla map[abi.SectorNumber][]byte
	hold    time.Duration

	mu       sync.Mutex
	inflight int
	maxIn    int
	requests []rpcapi.SingleVanillaParams
	arrived  chan struct{}
}

func newStorage(t *testing.T, vanilla map[abi.SectorNumber][]byte) *storage {
	s := &storage{vanilla: vanilla, arrived: make(chan struct{}, 100)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *storage) url(kind string) string { return s.srv.URL + "/" + kind + "/remote" }

func (s *storage) serve(w http.ResponseWriter, r *http.Request) {
	kind, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || rest != "remote/vanilla/single" {
		http.Error(w, "no such endpoint", http.StatusBadRequest)
		return
	}
	if r.Header.Get("Authorization") != postToken {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var p rpcapi.SingleVanillaParams
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, p)
	s.inflight++
	s.maxIn = max(s.maxIn, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	s.arrived <- struct{}{}
	if s.hold > 0 {
		time.Sleep(s.hold)
	}
	switch kind {
	case "good":
		b, ok := s.vanilla[p.Sector.SectorNumber]
		if !ok || p.Miner != postMiner {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	case "missing":
		http.NotFound(w, r)
	case "broken":
		http.Error(w, "disk on fire", http.StatusInternalServerError)
	case "garbage":
		_, _ = w.Write([]byte("not a vanilla proof"))
	case "other":
		for n, b := range s.vanilla {
			if n != p.Sector.SectorNumber {
				_, _ = w.Write(b)
				return
			}
		}
	case "slow":
		<-r.Context().Done()
	}
}

// postFixture holds synthetic 2KiB vanilla proofs (they decode and verify like real ones) and
// the challenges the miner would send for them.
type postFixture struct {
	randomness [32]byte
	vanilla    map[abi.SectorNumber][]byte
	challenges map[abi.SectorNumber]rpcapi.PostSectorChallenge
}

func newPoStFixture(t *testing.T, ppt abi.RegisteredPoStProof, sectors ...abi.SectorNumber) *postFixture {
	t.Helper()
	p, err := post.Lookup(ppt)
	if err != nil {
		t.Fatal(err)
	}
	f := &postFixture{vanilla: map[abi.SectorNumber][]byte{}, challenges: map[abi.SectorNumber]rpcapi.PostSectorChallenge{}}
	f.randomness[0] = 7
	for i, n := range sectors {
		b, err := post.SyntheticSectorVanilla(p, uint64(n), f.randomness, i, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		v, err := post.DecodeSectorVanilla(p, b)
		if err != nil {
			t.Fatal(err)
		}
		f.vanilla[n] = b
		f.challenges[n] = rpcapi.PostSectorChallenge{SealProof: abi.RegisteredSealProof_StackedDrg2KiBV1_1, SectorNumber: n,
			SealedCID: sealedCID(t, v.CommR[:]), Challenge: p.SectorChallenges(f.randomness, uint64(n), i)}
	}
	return f
}

func sealedCID(t *testing.T, commR []byte) cid.Cid {
	t.Helper()
	mh, err := multihash.Encode(commR, 0xb401) // poseidon-bls12_381-a2-fc1
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(0xf102, mh) // fil-commitment-sealed
}

func (f *postFixture) sectors(nums ...abi.SectorNumber) []rpcapi.PostSectorChallenge {
	out := make([]rpcapi.PostSectorChallenge, len(nums))
	for i, n := range nums {
		out[i] = f.challenges[n]
	}
	return out
}

// postWorker is a worker in mode m reading through idx with the miner's token.
func postWorker(t *testing.T, m Mode, r jobs.Runner, idx SectorIndex, parallel int, timeout time.Duration) (*WorkerAPI, *jobs.Manager) {
	t.Helper()
	mgr := newJobs(t, r)
	w := NewWorkerAPI(mgr, "post1", nil, nil)
	access := func() (SectorIndex, http.Header, error) {
		if idx == nil {
			return nil, nil, ErrNoMiner
		}
		return idx, http.Header{"Authorization": []string{postToken}}, nil
	}
	if err := w.SetMode(m, NewVanillaFetcher(access, parallel, timeout, nil)); err != nil {
		t.Fatal(err)
	}
	return w, mgr
}

func TestGenerateWindowPoSt(t *testing.T) {
	fx := newPoStFixture(t, windowPPT, 1, 2)
	st := newStorage(t, fx.vanilla)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connection refused
	good, missing, broken, garbage, other := st.url("good"), st.url("missing"), st.url("broken"), st.url("garbage"), st.url("other")
	for _, tc := range []struct {
		name    string
		urls    map[abi.SectorNumber][]string
		errs    map[abi.SectorNumber]error
		timeout time.Duration
		sectors []abi.SectorNumber
		skipped []abi.SectorNumber
		err     string // the call fails with this
	}{
		{name: "all read, after failing URLs", sectors: []abi.SectorNumber{1, 2},
			urls: map[abi.SectorNumber][]string{1: {broken, good}, 2: {closed.URL, missing, good}}},
		{name: "partition short of sectors", sectors: []abi.SectorNumber{2},
			urls: map[abi.SectorNumber][]string{2: {good}}},
		{name: "bad bytes, then a good node", sectors: []abi.SectorNumber{1, 2},
			urls: map[abi.SectorNumber][]string{1: {garbage, good}, 2: {good}}},
		{name: "one sector unreadable", sectors: []abi.SectorNumber{1, 2}, skipped: []abi.SectorNumber{2},
			urls: map[abi.SectorNumber][]string{1: {good}, 2: {missing}}},
		{name: "sector not in the index", sectors: []abi.SectorNumber{1, 2}, skipped: []abi.SectorNumber{1},
			urls: map[abi.SectorNumber][]string{2: {good}}},
		{name: "index error", sectors: []abi.SectorNumber{1, 2}, skipped: []abi.SectorNumber{2},
			urls: map[abi.SectorNumber][]string{1: {good}}, errs: map[abi.SectorNumber]error{2: errors.New("index is down for sector 2")}},
		{name: "all URLs failing", sectors: []abi.SectorNumber{1, 2}, skipped: []abi.SectorNumber{1, 2},
			urls: map[abi.SectorNumber][]string{1: {broken, closed.URL, missing}, 2: {broken}}},
		{name: "read timeout", sectors: []abi.SectorNumber{1, 2}, skipped: []abi.SectorNumber{1}, timeout: 200 * time.Millisecond,
			urls: map[abi.SectorNumber][]string{1: {st.url("slow")}, 2: {good}}},
		{name: "bad bytes", sectors: []abi.SectorNumber{1, 2}, err: "answered with a bad vanilla proof: not a StackedDrgWindow2KiBV1_1 vanilla proof",
			urls: map[abi.SectorNumber][]string{1: {good}, 2: {garbage}}},
		{name: "another sector's proof", sectors: []abi.SectorNumber{1}, err: "it is the proof of sector 2",
			urls: map[abi.SectorNumber][]string{1: {other}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &proofRunner{}
			idx := &fakeIndex{urls: tc.urls, errs: tc.errs}
			w, mgr := postWorker(t, ModeWindowPoSt, r, idx, 32, tc.timeout)
			res, err := w.GenerateWindowPoSt(context.Background(), windowPPT, postMiner, fx.sectors(tc.sectors...), 1, fx.randomness[:])
			if tc.err != "" {
				var bad *BadVanillaError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &bad) {
					t.Fatalf("err = %v, want a *BadVanillaError with %q", err, tc.err)
				}
				if len(r.requests()) != 0 {
					t.Fatal("proved despite a bad vanilla proof")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.skipped) > 0 {
				var want []abi.SectorID
				for _, n := range tc.skipped {
					want = append(want, abi.SectorID{Miner: postMiner, Number: n})
				}
				if fmt.Sprint(res.Skipped) != fmt.Sprint(want) || res.PoStProofs.ProofBytes != nil {
					t.Fatalf("result %+v, want Skipped %v and no proof", res, want)
				}
				if len(r.requests()) != 0 {
					t.Fatal("proved with sectors skipped (the miner discards such a proof)")
				}
				return
			}
			if res.Skipped != nil || res.PoStProofs.PoStProof != windowPPT || string(res.PoStProofs.ProofBytes) != "proof of window-post" {
				t.Fatalf("result %+v", res)
			}
			reqs := r.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d jobs", len(reqs))
			}
			req := reqs[0]
			if req.Kind != rpcapi.KindWindowPoSt || req.RegisteredProof != int64(windowPPT) || req.MinerID != postMiner ||
				req.PartitionIndex != 1 || string(req.Randomness) != string(fx.randomness[:]) || len(req.VanillaProofs) != len(tc.sectors) {
				t.Fatalf("job request %+v", req)
			}
			for i, n := range tc.sectors {
				if string(req.VanillaProofs[i]) != string(fx.vanilla[n]) {
					t.Fatalf("vanilla proof %d is not sector %d's", i, n)
				}
			}
			js := mgr.Jobs(rpcapi.JobFilter{})
			if len(js) != 1 || js[0].Priority != rpcapi.PriorityWindowPoSt || js[0].Origin != rpcapi.OriginLotus || js[0].CallID != nil {
				t.Fatalf("job %+v", js)
			}
			for _, ft := range idx.fts {
				if ft != rpcapi.FTSealed|rpcapi.FTCache {
					t.Fatalf("StorageFindSector file types %d, want sealed|cache", ft)
				}
			}
		})
	}
}

func TestGenerateWinningPoSt(t *testing.T) {
	fx := newPoStFixture(t, winPPT, 5)
	st := newStorage(t, fx.vanilla)
	for _, tc := range []struct {
		name string
		urls []string
		err  string
	}{
		{"read", []string{st.url("broken"), st.url("good")}, ""},
		{"unreadable", []string{st.url("missing"), st.url("broken")}, "reading the vanilla proof of sector 5 of miner 1000"},
		{"bad bytes", []string{st.url("garbage")}, "answered with a bad vanilla proof"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &proofRunner{}
			w, mgr := postWorker(t, ModeWinningPoSt, r, &fakeIndex{urls: map[abi.SectorNumber][]string{5: tc.urls}}, 32, 0)
			out, err := w.GenerateWinningPoSt(context.Background(), winPPT, postMiner, fx.sectors(5), fx.randomness[:])
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 || out[0].PoStProof != winPPT || string(out[0].ProofBytes) != "proof of winning-post" {
				t.Fatalf("answer %+v", out)
			}
			req := r.requests()[0]
			if req.Kind != rpcapi.KindWinningPoSt || len(req.VanillaProofs) != 1 || string(req.VanillaProofs[0]) != string(fx.vanilla[5]) {
				t.Fatalf("job request %+v", req)
			}
			if js := mgr.Jobs(rpcapi.JobFilter{}); js[0].Priority != rpcapi.PriorityWinningPoSt {
				t.Fatalf("job priority %d", js[0].Priority)
			}
		})
	}
}

func TestPoStUnreadableIsTyped(t *testing.T) {
	fx := newPoStFixture(t, winPPT, 5)
	w, _ := postWorker(t, ModeWinningPoSt, &proofRunner{}, &fakeIndex{}, 32, 0)
	_, err := w.GenerateWinningPoSt(context.Background(), winPPT, postMiner, fx.sectors(5), fx.randomness[:])
	var u *UnreadableSectorError
	if !errors.As(err, &u) || u.Sector != (abi.SectorID{Miner: postMiner, Number: 5}) {
		t.Fatalf("err = %v, want *UnreadableSectorError for sector 5", err)
	}
}

// A miner API that cannot be reached says nothing about the sectors: the call fails rather
// than answering every sector in Skipped.
func TestPoStIndexUnreachable(t *testing.T) {
	fx := newPoStFixture(t, windowPPT, 1, 2)
	idx := &fakeIndex{errs: map[abi.SectorNumber]error{2: fmt.Errorf("sending request: %w", &jsonrpc.RPCConnectionError{})}}
	w, _ := postWorker(t, ModeWindowPoSt, &proofRunner{}, idx, 32, 0)
	res, err := w.GenerateWindowPoSt(context.Background(), windowPPT, postMiner, fx.sectors(1, 2), 0, fx.randomness[:])
	var ce *jsonrpc.RPCConnectionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "storage index is unreachable") || res.Skipped != nil {
		t.Fatalf("result %+v, err %v: want the call to fail", res, err)
	}
}

func TestPoStWorkerModes(t *testing.T) {
	fx := newPoStFixture(t, windowPPT, 1)
	ctx := context.Background()
	sectors := fx.sectors(1)

	seal := NewWorkerAPI(newJobs(t, &proofRunner{}), "s1", nil, nil)
	if _, err := seal.GenerateWindowPoSt(ctx, windowPPT, postMiner, sectors, 0, fx.randomness[:]); err == nil || !strings.Contains(err.Error(), "is a seal worker") {
		t.Fatalf("seal worker took a WindowPoSt: %v", err)
	}

	w, _ := postWorker(t, ModeWindowPoSt, &proofRunner{}, nil, 32, 0)
	tts, _ := w.TaskTypes(ctx)
	if fmt.Sprint(tts) != fmt.Sprint(map[rpcapi.TaskType]struct{}{rpcapi.TTGenerateWindowPoSt: {}}) {
		t.Fatalf("windowpost worker advertises %v", tts)
	}
	if _, err := w.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 9}, ProofType: 8}, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "windowpost worker") {
		t.Fatalf("windowpost worker took a C2: %v", err)
	}
	if err := w.TaskEnable(ctx, rpcapi.TTCommit2); err == nil {
		t.Fatal("windowpost worker enabled C2")
	}
	if _, err := w.GenerateWinningPoSt(ctx, winPPT, postMiner, sectors, fx.randomness[:]); err == nil || !strings.Contains(err.Error(), "does not run post/v0/winningproof") {
		t.Fatalf("windowpost worker took a WinningPoSt: %v", err)
	}
	if _, err := w.GenerateWindowPoSt(ctx, windowPPT, postMiner, sectors, 0, fx.randomness[:]); !errors.Is(err, ErrNoMiner) {
		t.Fatalf("no miner: %v", err)
	}
	var bad *rpcapi.ErrBadRequest
	if _, err := w.GenerateWindowPoSt(ctx, winPPT, postMiner, sectors, 0, fx.randomness[:]); !errors.As(err, &bad) || bad.Field != "ppt" {
		t.Fatalf("winning proof type for a WindowPoSt: %v", err)
	}
	if _, err := w.GenerateWindowPoSt(ctx, windowPPT, postMiner, fx.sectors(1, 1, 1), 0, fx.randomness[:]); !errors.As(err, &bad) || bad.Field != "sectors" {
		t.Fatalf("3 sectors in a 2KiB partition: %v", err)
	}
	if err := w.TaskDisable(ctx, rpcapi.TTGenerateWindowPoSt); err != nil {
		t.Fatal(err)
	}
	if _, err := w.GenerateWindowPoSt(ctx, windowPPT, postMiner, sectors, 0, fx.randomness[:]); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("disabled WindowPoSt ran: %v", err)
	}
	if err := w.SetMode("post", nil); err == nil {
		t.Fatal("mode post accepted")
	}
	if err := w.SetMode(ModeWinningPoSt, nil); err == nil {
		t.Fatal("PoSt mode without a vanilla reader accepted")
	}
}

func TestPoStContextCancel(t *testing.T) {
	fx := newPoStFixture(t, windowPPT, 1, 2)
	st := newStorage(t, fx.vanilla)

	t.Run("while reading", func(t *testing.T) {
		r := &proofRunner{}
		w, _ := postWorker(t, ModeWindowPoSt, r, &fakeIndex{urls: map[abi.SectorNumber][]string{1: {st.url("good")}, 2: {st.url("slow")}}}, 32, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := w.GenerateWindowPoSt(ctx, windowPPT, postMiner, fx.sectors(1, 2), 0, fx.randomness[:])
			done <- err
		}()
		<-st.arrived
		<-st.arrived
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled (not a Skipped answer)", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("GenerateWindowPoSt did not return after cancel")
		}
		if len(r.requests()) != 0 {
			t.Fatal("proved after cancel")
		}
	})

	t.Run("while proving", func(t *testing.T) {
		r := &proofRunner{hold: true, started: make(chan struct{}, 1)}
		w, mgr := postWorker(t, ModeWindowPoSt, r, &fakeIndex{urls: map[abi.SectorNumber][]string{1: {st.url("good")}}}, 32, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := w.GenerateWindowPoSt(ctx, windowPPT, postMiner, fx.sectors(1), 0, fx.randomness[:])
			done <- err
		}()
		<-r.started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		for i := 0; ; i++ {
			js := mgr.Jobs(rpcapi.JobFilter{})
			if len(js) == 1 && js[0].State == rpcapi.JobCancelled {
				break
			}
			if i > 2000 {
				t.Fatalf("abandoned job not cancelled: %+v", js)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func TestVanillaFetcherParallelReads(t *testing.T) {
	p, err := post.Lookup(windowPPT)
	if err != nil {
		t.Fatal(err)
	}
	nums := []abi.SectorNumber{1, 2, 3, 4, 5, 6}
	fx := newPoStFixture(t, windowPPT, nums...)
	st := newStorage(t, fx.vanilla)
	st.hold = 50 * time.Millisecond
	urls := map[abi.SectorNumber][]string{}
	for _, n := range nums {
		urls[n] = []string{st.url("good")}
	}
	access := func() (SectorIndex, http.Header, error) {
		return &fakeIndex{urls: urls}, http.Header{"Authorization": []string{postToken}}, nil
	}
	proofs, errs, err := NewVanillaFetcher(access, 2, 0, nil).Fetch(context.Background(), p, postMiner, fx.sectors(nums...))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nums {
		if errs[i] != nil || string(proofs[i]) != string(fx.vanilla[n]) {
			t.Fatalf("sector %d: %v", n, errs[i])
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.maxIn != 2 {
		t.Fatalf("%d reads at once, want 2", st.maxIn)
	}
	for _, req := range st.requests {
		if req.Miner != postMiner || req.ProofType != windowPPT || len(req.Sector.Challenge) != p.ChallengeCount || !req.Sector.SealedCID.Defined() {
			t.Fatalf("request %+v", req)
		}
	}
}
