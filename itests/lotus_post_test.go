package itests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	"github.com/snarkd/snarkd/rpcapi"
)

// postStorage is the miner's sector storage for the PoSt worker test: Go-sealed sectors of one
// seal proof type behind the stand-in's storage index and its /remote/vanilla/single endpoint, which, like
// lotus-miner's, needs an admin token of the miner and computes the vanilla proof for the
// challenges in the request. Sectors in lost are in the index but on no node (404).
type postStorage struct {
	m       *standIn
	miner   abi.ActorID
	sp      *prooftypes.SealProof
	sectors map[abi.SectorNumber]*sealer.Sector
	lost    map[abi.SectorNumber]bool

	mu           sync.Mutex
	served       map[abi.SectorNumber][]byte // the last vanilla proof served per sector
	requests     int
	unauthorized int
	fileTypes    []rpcapi.SectorFileType
}

func newPoStStorage(t *testing.T, m *standIn, sp *prooftypes.SealProof, miner abi.ActorID, readable []abi.SectorNumber, lost ...abi.SectorNumber) *postStorage {
	t.Helper()
	s := &postStorage{m: m, miner: miner, sp: sp, sectors: map[abi.SectorNumber]*sealer.Sector{}, lost: map[abi.SectorNumber]bool{},
		served: map[abi.SectorNumber][]byte{}}
	r := rand.NewChaCha8([32]byte{'p', 'o', 's', 't'})
	for _, n := range append(slices.Clone(readable), lost...) {
		data, err := sealer.RandomData(r, sp.SectorSize)
		if err != nil {
			t.Fatal(err)
		}
		var ticket [32]byte
		_, _ = r.Read(ticket[:])
		start := time.Now()
		sec, err := sealer.Seal(context.Background(), sp, data, prooftypes.ProverID(miner), uint64(n), ticket)
		if err != nil {
			t.Fatalf("sealing sector %d: %v", n, err)
		}
		logTiming(t, fmt.Sprintf("seal %s sector %d", sp.Name, n), time.Since(start))
		s.sectors[n] = sec
	}
	for _, n := range lost {
		s.lost[n] = true
	}
	m.mu.Lock()
	m.storage, m.remote = s.find, http.HandlerFunc(s.serveVanilla)
	m.mu.Unlock()
	return s
}

// find answers StorageFindSector: a dead storage node first (the worker must fall back), then
// the miner's own /remote.
func (s *postStorage) find(sector abi.SectorID, ft rpcapi.SectorFileType) ([]rpcapi.SectorStorageInfo, error) {
	s.mu.Lock()
	s.fileTypes = append(s.fileTypes, ft)
	s.mu.Unlock()
	if sector.Miner != s.miner || s.sectors[sector.Number] == nil {
		return nil, nil
	}
	return []rpcapi.SectorStorageInfo{
		{ID: "dead-node", URLs: []string{"http://127.0.0.1:1/remote/sealed"}, BaseURLs: []string{"http://127.0.0.1:1/remote"}, CanStore: true},
		{ID: "miner-local", URLs: []string{"http://" + s.m.addr + "/remote/sealed"}, BaseURLs: []string{"http://" + s.m.addr + "/remote"}, CanStore: true, Primary: true},
	}, nil
}

// vanillaRequest is the JSON lotus-miner's /remote/vanilla/single decodes (SingleVanillaParams
// with storiface.PostSectorChallenge), spelled out here so the test checks the worker's wire
// format rather than trusting rpcapi's types.
type vanillaRequest struct {
	Miner  abi.ActorID
	Sector struct {
		SealProof    abi.RegisteredSealProof
		SectorNumber abi.SectorNumber
		SealedCID    cid.Cid
		Challenge    []uint64
		Update       bool
	}
	ProofType abi.RegisteredPoStProof
}

func (s *postStorage) serveVanilla(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/remote/vanilla/single" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	perms, err := s.m.secret.Verify(tok)
	if !ok || err != nil || !slices.Contains(perms, rpcapi.Permission("admin")) {
		s.mu.Lock()
		s.unauthorized++
		s.mu.Unlock()
		http.Error(w, "unauthorized: admin permission required", http.StatusUnauthorized)
		return
	}
	var req vanillaRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	sec := s.sectors[req.Sector.SectorNumber]
	if req.Miner != s.miner || sec == nil || s.lost[req.Sector.SectorNumber] {
		http.NotFound(w, r)
		return
	}
	pp, err := post.Lookup(req.ProofType)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if req.Sector.SealedCID != sealedCIDOf(sec) {
		http.Error(w, "sealed CID does not match the sector", http.StatusInternalServerError)
		return
	}
	b, err := post.GenerateSectorVanilla(pp, uint64(req.Sector.SectorNumber), sec.TreeC.Root(), sec.TreeR, req.Sector.Challenge)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.served[req.Sector.SectorNumber] = b
	s.mu.Unlock()
	_, _ = w.Write(b)
}

func (s *postStorage) vanilla(t *testing.T, nums ...abi.SectorNumber) [][]byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, n := range nums {
		if s.served[n] == nil {
			t.Fatalf("sector %d was never served", n)
		}
		out = append(out, s.served[n])
	}
	return out
}

func sealedCIDOf(s *sealer.Sector) cid.Cid {
	mh, err := multihash.Encode(s.CommR[:], 0xb401) // poseidon-bls12_381-a2-fc1
	if err != nil {
		panic(err)
	}
	return cid.NewCidV1(0xf102, mh) // fil-commitment-sealed
}

// challenges is what lotus-miner sends a PoSt worker: the sorted, deduplicated sector list's
// fallback challenges (GeneratePoStFallbackSectorChallenges), one PostSectorChallenge each.
func (s *postStorage) challenges(t *testing.T, ppt abi.RegisteredPoStProof, randomness [32]byte, nums ...abi.SectorNumber) map[abi.SectorNumber]rpcapi.PostSectorChallenge {
	t.Helper()
	pp, err := post.Lookup(ppt)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]uint64, len(nums))
	for i, n := range nums {
		u[i] = uint64(n)
	}
	ch, err := pp.FallbackChallenges(randomness, u)
	if err != nil {
		t.Fatal(err)
	}
	out := map[abi.SectorNumber]rpcapi.PostSectorChallenge{}
	for _, n := range nums {
		if ch[uint64(n)] == nil {
			continue // WinningPoSt challenges only the first
		}
		out[n] = rpcapi.PostSectorChallenge{SealProof: s.sp.Proof, SectorNumber: n,
			SealedCID: sealedCIDOf(s.sectors[n]), Challenge: ch[uint64(n)]}
	}
	return out
}

// attachPoStWorker starts a daemon in the given Lotus worker mode attached to m and returns
// the miner's connection to it.
func attachPoStWorker(t *testing.T, bin string, m *standIn, mode, params string) connectedWorker {
	t.Helper()
	env := append(slices.Clone(lotusEnv), "SNARKD_LOTUS_WORKER_MODE="+mode, "FIL_PROOFS_PARAMETER_CACHE="+params)
	startDaemon(t, bin, t.TempDir(), env, "--miner-api-info", m.apiInfo())
	waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
	w, _ := m.worker()
	return w
}

// TestLotusPoStWorker: snarkd attached as a Lotus PoSt worker (Lotus.WorkerMode windowpost,
// then winningpost) advertises only its PoSt task type and refuses sealing work; driven through
// the miner's connection it reads each sector's vanilla proof through StorageFindSector and
// the storage node's /remote/vanilla/single with the miner's token (falling back past a dead
// node), answers an unreadable sector in Skipped without a proof, proves a full and a short
// WindowPoSt partition and a WinningPoSt from Go-sealed sectors of the size SNARKD_ITEST_POST
// selects (2KiB by default, or 8MiB; devnet parameters from the shared cache, as
// TestPoStEndToEnd's), and every proof verifies with the generated .vk. Proof times are logged
// as "TIMING …" lines.
func TestLotusPoStWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("devnet PoSt setups and proofs in -short")
	}
	size := postSize(t)
	winP, wdP := postProofs(t, size)
	sp, err := prooftypes.ForSectorSize(wdP.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	testStart := time.Now()
	bin := buildDaemon(t)
	params := devnetParams(t, bin, winP.Name, wdP.Name)
	const miner = abi.ActorID(1000)
	var randomness [32]byte
	r := rand.NewChaCha8([32]byte{'r', 'n', 'd'})
	_, _ = r.Read(randomness[:])
	randomness[31] &= 0x3f // as lotus-miner masks it before calling a PoSt worker

	t.Run("windowpost", func(t *testing.T) {
		m := newStandIn(t, 100*time.Millisecond)
		// Partition 0 holds sectors 1…n (n = the proof's sectors per partition), partition 1 sector
		// n+1 and sector n+2, which is on no storage node.
		n := abi.SectorNumber(wdP.SectorCount)
		var full []abi.SectorNumber
		for i := abi.SectorNumber(1); i <= n; i++ {
			full = append(full, i)
		}
		st := newPoStStorage(t, m, sp, miner, append(slices.Clone(full), n+1), n+2)
		w := attachPoStWorker(t, bin, m, "windowpost", params)
		if fmt.Sprint(w.Tasks) != fmt.Sprint(map[rpcapi.TaskType]struct{}{rpcapi.TTGenerateWindowPoSt: {}}) {
			t.Fatalf("windowpost worker advertises %v", w.Tasks)
		}
		ctx := context.Background()
		if _, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: 9}, ProofType: 8}, []byte(`{}`)); err == nil ||
			!strings.Contains(err.Error(), "does not run seal/v0/commit/2") {
			t.Fatalf("PoSt worker took a C2: %v", err)
		}

		ppt := wdP.Proof
		ch := st.challenges(t, ppt, randomness, append(slices.Clone(full), n+1, n+2)...)
		in := func(nums ...abi.SectorNumber) *cuzktest.PoSt {
			return &cuzktest.PoSt{Proof: ppt, Randomness: randomness, Vanilla: st.vanilla(t, nums...)}
		}
		challenges := func(nums ...abi.SectorNumber) []rpcapi.PostSectorChallenge {
			var out []rpcapi.PostSectorChallenge
			for _, k := range nums {
				out = append(out, ch[k])
			}
			return out
		}

		// Partition 0, full.
		start := time.Now()
		res, err := w.API.GenerateWindowPoSt(ctx, ppt, miner, challenges(full...), 0, randomness[:])
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, fmt.Sprintf("%s Lotus GenerateWindowPoSt partition 0 (%d sectors; first: loads parameters)", wdP.Name, len(full)), time.Since(start))
		if len(res.Skipped) != 0 || res.PoStProofs.PoStProof != ppt || len(res.PoStProofs.ProofBytes) != post.ProofBytes {
			t.Fatalf("partition 0: %+v", res)
		}
		verifyPoSt(t, params, in(full...), miner, 0, res.PoStProofs.ProofBytes)

		// Partition 1: sector n+2 is on no storage node. It comes back in Skipped, with no proof
		// and no error, as from lotus-worker.
		res, err = w.API.GenerateWindowPoSt(ctx, ppt, miner, challenges(n+1, n+2), 1, randomness[:])
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(res.Skipped) != fmt.Sprint([]abi.SectorID{{Miner: miner, Number: n + 2}}) || len(res.PoStProofs.ProofBytes) != 0 {
			t.Fatalf("partition 1 with a lost sector: %+v", res)
		}

		// The miner asks again without it: partition 1 short of a sector.
		start = time.Now()
		res, err = w.API.GenerateWindowPoSt(ctx, ppt, miner, challenges(n+1), 1, randomness[:])
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, fmt.Sprintf("%s Lotus GenerateWindowPoSt partition 1 (1 of %d sectors)", wdP.Name, len(full)), time.Since(start))
		if len(res.Skipped) != 0 || len(res.PoStProofs.ProofBytes) != post.ProofBytes {
			t.Fatalf("partition 1 short of a sector: %+v", res)
		}
		verifyPoSt(t, params, in(n+1), miner, 1, res.PoStProofs.ProofBytes)

		st.mu.Lock()
		defer st.mu.Unlock()
		if st.unauthorized != 0 || st.requests == 0 {
			t.Fatalf("storage node: %d authorized requests, %d unauthorized", st.requests, st.unauthorized)
		}
		for _, ft := range st.fileTypes {
			if ft != rpcapi.FTSealed|rpcapi.FTCache {
				t.Fatalf("StorageFindSector asked for file types %d, want sealed|cache (6)", ft)
			}
		}
	})

	t.Run("winningpost", func(t *testing.T) {
		m := newStandIn(t, 100*time.Millisecond)
		st := newPoStStorage(t, m, sp, miner, []abi.SectorNumber{2}, 4)
		w := attachPoStWorker(t, bin, m, "winningpost", params)
		if fmt.Sprint(w.Tasks) != fmt.Sprint(map[rpcapi.TaskType]struct{}{rpcapi.TTGenerateWinningPoSt: {}}) {
			t.Fatalf("winningpost worker advertises %v", w.Tasks)
		}
		ctx := context.Background()
		ppt := winP.Proof
		ch := st.challenges(t, ppt, randomness, 2)
		start := time.Now()
		out, err := w.API.GenerateWinningPoSt(ctx, ppt, miner, []rpcapi.PostSectorChallenge{ch[2]}, randomness[:])
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, winP.Name+" Lotus GenerateWinningPoSt (first: loads parameters)", time.Since(start))
		if len(out) != 1 || out[0].PoStProof != ppt || len(out[0].ProofBytes) != post.ProofBytes {
			t.Fatalf("WinningPoSt answer %+v", out)
		}
		verifyPoSt(t, params, &cuzktest.PoSt{Proof: ppt, Randomness: randomness, Vanilla: st.vanilla(t, 2)}, miner, 0, out[0].ProofBytes)

		// A WinningPoSt whose sector cannot be read fails: there is no Skipped to answer with.
		lost := st.challenges(t, ppt, randomness, 4)
		if _, err := w.API.GenerateWinningPoSt(ctx, ppt, miner, []rpcapi.PostSectorChallenge{lost[4]}, randomness[:]); err == nil ||
			!strings.Contains(err.Error(), "reading the vanilla proof of sector 4 of miner 1000") {
			t.Fatalf("WinningPoSt of a lost sector: %v", err)
		}
		if _, err := w.API.GenerateWindowPoSt(ctx, wdP.Proof, miner, []rpcapi.PostSectorChallenge{ch[2]}, 0, randomness[:]); err == nil ||
			!strings.Contains(err.Error(), "does not run post/v0/windowproof") {
			t.Fatalf("winningpost worker took a WindowPoSt: %v", err)
		}
	})
	logTiming(t, "Lotus PoSt worker "+size+" end to end (params, sealing, proofs, verify)", time.Since(testStart))
}
