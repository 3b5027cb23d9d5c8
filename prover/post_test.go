package prover

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
)

var (
	sectorsOnce sync.Once
	sectors     []*sealer.Sector
	sectorsErr  error
)

// goSealed2KiB seals three 2KiB sectors (numbers 3, 5, 9) of testMiner with the Go sealer.
func goSealed2KiB(t *testing.T) []*sealer.Sector {
	t.Helper()
	sectorsOnce.Do(func() {
		p, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
		if err != nil {
			sectorsErr = err
			return
		}
		for i, num := range []uint64{3, 5, 9} {
			r := rand.NewChaCha8([32]byte{byte(i + 1)})
			data, err := sealer.RandomData(r, p.SectorSize)
			if err != nil {
				sectorsErr = err
				return
			}
			var ticket [32]byte
			r.Read(ticket[:])
			s, err := sealer.Seal(context.Background(), p, data, prooftypes.ProverID(testMiner), num, ticket)
			if err != nil {
				sectorsErr = err
				return
			}
			sectors = append(sectors, s)
		}
	})
	if sectorsErr != nil {
		t.Fatal(sectorsErr)
	}
	return sectors
}

func postRandomness(b byte) []byte {
	r := make([]byte, 32)
	for i := range r {
		r[i] = b + byte(i)
	}
	r[31] &= 0x3f
	return r
}

// vanilla is the vanilla proof a storage node serves for sector s at position sectorIndex.
func vanilla(t *testing.T, p *post.Proof, s *sealer.Sector, rnd []byte, sectorIndex int) []byte {
	t.Helper()
	var r [32]byte
	copy(r[:], rnd)
	b, err := post.GenerateSectorVanilla(p, s.SectorNumber, s.TreeC.Root(), s.TreeR, p.SectorChallenges(r, s.SectorNumber, sectorIndex))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lookupPoSt(t *testing.T, pt abi.RegisteredPoStProof) *post.Proof {
	t.Helper()
	p, err := post.Lookup(pt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func winningRequest(t *testing.T, rnd []byte) Request {
	p := lookupPoSt(t, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	return Request{PoSt: &PoStRequest{RegisteredProof: p.Proof, MinerID: testMiner, Randomness: rnd,
		VanillaProofs: [][]byte{vanilla(t, p, goSealed2KiB(t)[1], rnd, 0)}}}
}

// windowRequest is partition 1 of three sectors at two per partition: short of one sector.
func windowRequest(t *testing.T, rnd []byte) Request {
	p := lookupPoSt(t, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	return Request{PoSt: &PoStRequest{RegisteredProof: p.Proof, MinerID: testMiner, Randomness: rnd, PartitionIndex: 1,
		VanillaProofs: [][]byte{vanilla(t, p, goSealed2KiB(t)[2], rnd, 2)}}}
}

// TestPoStRefusesTamperedInputs: a flipped vanilla byte, vanilla proofs for other randomness,
// randomness without its top bits cleared, another miner and a proof type of the other PoSt are
// refused with an InputError before parameters are looked for.
func TestPoStRefusesTamperedInputs(t *testing.T) {
	rnd := postRandomness(7)
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(t.TempDir()))
	for _, mk := range []func(*testing.T, []byte) Request{winningRequest, windowRequest} {
		base := mk(t, rnd)
		for _, tc := range []struct {
			name string
			edit func(r *PoStRequest)
			want string
		}{
			{"flipped vanilla byte", func(r *PoStRequest) {
				v := bytes.Clone(r.VanillaProofs[0])
				v[len(v)-40] ^= 1
				r.VanillaProofs = [][]byte{v}
			}, "vanilla"},
			{"wrong randomness", func(r *PoStRequest) { r.Randomness = postRandomness(8) }, "VanillaProofs"},
			{"unmasked randomness", func(r *PoStRequest) { r.Randomness = bytes.Clone(r.Randomness); r.Randomness[31] |= 0xc0 }, "randomness[31] &= 0x3f"},
			{"short randomness", func(r *PoStRequest) { r.Randomness = r.Randomness[:31] }, "Randomness: 31 bytes"},
			{"no vanilla", func(r *PoStRequest) { r.VanillaProofs = nil }, "vanilla proofs"},
		} {
			t.Run(string(base.Kind())+"/"+tc.name, func(t *testing.T) {
				ps := *base.PoSt
				tc.edit(&ps)
				req := Request{PoSt: &ps}
				res, err := pipe.Prove(context.Background(), req, nil)
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v (%T), want an InputError naming %q", err, err, tc.want)
				}
				if res.Proof != nil {
					t.Fatal("a proof came back with the error")
				}
			})
		}
	}
}

// TestPoStMissingParams: a valid request without parameters names the file and the hint.
func TestPoStMissingParams(t *testing.T) {
	dir := t.TempDir()
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	req := winningRequest(t, postRandomness(3))
	_, err := pipe.Prove(context.Background(), req, nil)
	var me *MissingParamsError
	p := lookupPoSt(t, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	want := filepath.Join(dir, p.ParamFile()+".params")
	if !errors.As(err, &me) || me.Path != want || !strings.Contains(err.Error(), "snarkd params gen --proof StackedDrgWinning2KiBV1") {
		t.Fatalf("got %v, want MissingParamsError for %s with the params gen hint", err, want)
	}
}

// devnetPoStParams writes keys of a deterministic setup of p's blank circuit into dir.
func devnetPoStParams(t *testing.T, dir string, p *post.Proof) {
	t.Helper()
	t0 := time.Now()
	pk, err := groth16.SetupFromSeed(context.Background(), p.Blank(), []byte(p.Identifier()))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFilecoinParams(dir, p.ParamFile(), p.SectorSize, pk); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s setup %v", p.Name, time.Since(t0))
}

// TestPoStProve2KiB: WinningPoSt and a short WindowPoSt partition from Go-sealed sectors are
// proved through the pipeline with keys loaded from the parameter directory; the 192-byte proof
// verifies against the .vk and the verifier's public inputs.
func TestPoStProve2KiB(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("Groth16 setup and proving in -short / -race (the pipeline's plan runs under -race in the other tests)")
	}
	dir := t.TempDir()
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	rnd := postRandomness(11)
	for _, req := range []Request{winningRequest(t, rnd), windowRequest(t, rnd)} {
		p := lookupPoSt(t, req.PoSt.RegisteredProof)
		devnetPoStParams(t, dir, p)
		t0 := time.Now()
		res, err := pipe.Prove(context.Background(), req, nil)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		t.Logf("%s: synthesis %v prove %v verify %v (total %v)", p.Name, res.Synthesis, res.Prove, res.Verify, time.Since(t0))
		if len(res.Proof) != groth16.ProofSize || res.Partitions != 1 {
			t.Fatalf("%s: %d proof bytes, %d partitions", p.Name, len(res.Proof), res.Partitions)
		}
		proofs, err := groth16.ParseProofs(res.Proof, 0)
		if err != nil {
			t.Fatal(err)
		}
		var r [32]byte
		copy(r[:], req.PoSt.Randomness)
		var part *post.Partition
		if req.Kind() == rpcapi.KindWinningPoSt {
			part, err = post.WinningPartition(p, r, prooftypes.ProverID(testMiner), req.PoSt.VanillaProofs)
		} else {
			part, err = post.WindowPartition(p, r, prooftypes.ProverID(testMiner), req.PoSt.VanillaProofs, int(req.PoSt.PartitionIndex))
		}
		if err != nil {
			t.Fatal(err)
		}
		vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, p.ParamFile()+".vk"), groth16.FilecoinReadOptions().VKCheck)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, proofs[0], part.Inputs); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
	// A WindowPoSt vanilla proof whose comm_c does not hash to comm_r passes planning; the
	// hashing deferred beside the proof refuses it, and no proof comes back.
	req := windowRequest(t, rnd)
	ps := *req.PoSt
	bad := bytes.Clone(ps.VanillaProofs[0])
	bad[len(bad)-40] ^= 1
	ps.VanillaProofs = [][]byte{bad}
	var stages []Stage
	res, err := pipe.Prove(context.Background(), Request{PoSt: &ps}, func(st Stage, _, _ int, _ ...string) { stages = append(stages, st) })
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "VanillaProofs" || !strings.Contains(err.Error(), "is not comm_r") || res.Proof != nil {
		t.Fatalf("tampered WindowPoSt: %v (%T), %d proof bytes", err, err, len(res.Proof))
	}
	if !slices.Contains(stages, StageProving) || res.Phases[PhaseInputs] <= 0 {
		t.Errorf("tampered WindowPoSt refused before proving (stages %v, phases %v): the check was not deferred", stages, res.Phases)
	}
}

// snapFixture encodes new data into a Go-sealed 2KiB sector key and returns the request.
func snapFixture(t *testing.T) (*update.Encoded, Request) {
	t.Helper()
	s := goSealed2KiB(t)[0]
	ps, err := update.ForProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sealer.RandomData(rand.NewChaCha8([32]byte{42}), s.Proof.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]c1.Domain, ps.SectorNodes)
	for i := range data {
		copy(data[i][:], raw[32*i:])
	}
	e, err := update.Encode(context.Background(), ps, ps.HDefault(), s.TreeC.Root(), s.TreeR, data)
	if err != nil {
		t.Fatal(err)
	}
	snap := &SnapRequest{RegisteredProof: abi.RegisteredUpdateProof_StackedDrg2KiBV1,
		CommROld: bytes.Clone(e.CommROld[:]), CommDNew: bytes.Clone(e.CommDNew[:]), CommRNew: bytes.Clone(e.CommRNew[:])}
	req := Request{Snap: snap}
	for k := 0; k < ps.PartitionCount; k++ {
		b, err := e.PartitionProof(k)
		if err != nil {
			t.Fatal(err)
		}
		snap.VanillaProofs = append(snap.VanillaProofs, b)
	}
	return e, req
}

// TestSnapDealsRefusesTamperedInputs: tampered vanilla proofs and commitments are refused with
// an InputError; a valid request without parameters names the missing file.
func TestSnapDealsRefusesTamperedInputs(t *testing.T) {
	_, base := snapFixture(t)
	dir := t.TempDir()
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	for _, tc := range []struct {
		name string
		edit func(r *SnapRequest)
		want string
	}{
		{"flipped vanilla byte", func(r *SnapRequest) {
			v := bytes.Clone(r.VanillaProofs[0])
			v[len(v)-40] ^= 1
			r.VanillaProofs = [][]byte{v}
		}, "partition 0"},
		{"wrong comm_r_new", func(r *SnapRequest) { r.CommRNew = bytes.Clone(r.CommRNew); r.CommRNew[0] ^= 1 }, "VanillaProofs"},
		{"wrong comm_d_new", func(r *SnapRequest) { r.CommDNew = bytes.Clone(r.CommDNew); r.CommDNew[0] ^= 1 }, "VanillaProofs"},
		{"short comm_r_old", func(r *SnapRequest) { r.CommROld = r.CommROld[:31] }, "CommROld: 31 bytes"},
		{"no vanilla", func(r *SnapRequest) { r.VanillaProofs = nil }, "0 vanilla proofs"},
		{"unknown proof type", func(r *SnapRequest) { r.RegisteredProof = 99 }, "RegisteredProof"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sn := *base.Snap
			tc.edit(&sn)
			req := Request{Snap: &sn}
			_, err := pipe.Prove(context.Background(), req, nil)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (%T), want an InputError naming %q", err, err, tc.want)
			}
		})
	}
	_, err := pipe.Prove(context.Background(), base, nil)
	var me *MissingParamsError
	ps, _ := update.ForProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1)
	if !errors.As(err, &me) || me.Path != filepath.Join(dir, ps.ParamFile()+".params") || !strings.Contains(err.Error(), "snarkd params gen --proof UpdateStackedDrg2KiBV1") {
		t.Fatalf("got %v, want MissingParamsError with the params gen hint", err)
	}
}

// TestSnapDealsProve2KiB proves a 2KiB SnapDeals update through the pipeline. The 2KiB circuit
// has 1.7M constraints, so its setup and proof run only with SNARKD_TEST_SNAP=1.
func TestSnapDealsProve2KiB(t *testing.T) {
	if os.Getenv("SNARKD_TEST_SNAP") == "" {
		t.Skip("set SNARKD_TEST_SNAP=1 to set up and prove the 1.7M-constraint 2KiB SnapDeals circuit")
	}
	e, req := snapFixture(t)
	ps := e.Params
	dir := t.TempDir()
	t0 := time.Now()
	pk, err := groth16.SetupFromSeed(context.Background(), update.Blank(ps), []byte(ps.Identifier()))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFilecoinParams(dir, ps.ParamFile(), ps.SectorSize(), pk); err != nil {
		t.Fatal(err)
	}
	t.Logf("setup %v", time.Since(t0))
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	res, err := pipe.Prove(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("synthesis %v prove %v verify %v", res.Synthesis, res.Prove, res.Verify)
	if len(res.Proof) != ps.PartitionCount*groth16.ProofSize {
		t.Fatalf("%d proof bytes for %d partitions", len(res.Proof), ps.PartitionCount)
	}
	proofs, err := groth16.ParseProofs(res.Proof, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, pr := range proofs {
		_, inputs, err := ps.Partition(req.Snap.VanillaProofs[k], e.Inputs(k))
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(&pk.VK, pr, inputs); err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
	}
}
