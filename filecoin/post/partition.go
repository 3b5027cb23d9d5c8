package post

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	gmerkle "github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/internal/cores"
)

// Partition is one PoSt circuit ready to prove: the witness circuit and the public inputs a
// verifier computes (without ONE).
type Partition struct {
	Circuit *Circuit
	Inputs  []fr.Element
	// SectorIDs are the sectors proven, in circuit order, before padding.
	SectorIDs []uint64
}

// checkSafe is as_safe_commitment: randomness and prover_id must be canonical field elements
// (Lotus clears the top two bits of the randomness, randomness[31] &= 0x3f, before calling).
func checkSafe(name string, b [32]byte) error {
	if _, err := c1.Domain(b).Element(); err != nil {
		return fmt.Errorf("%s: %w (callers clear the top bits: %s[31] &= 0x3f)", name, err, name)
	}
	return nil
}

func pathOf(p *c1.MerkleProof) ([]gmerkle.PathElement, error) {
	levels := p.Levels()
	out := make([]gmerkle.PathElement, len(levels))
	for i, l := range levels {
		out[i].Index = int(l.Index)
		out[i].Siblings = make([]fr.Element, len(l.Hashes))
		for j, h := range l.Hashes {
			e, err := h.Element()
			if err != nil {
				return nil, err
			}
			out[i].Siblings[j] = e
		}
	}
	return out, nil
}

// circuitSector builds the witness of one circuit sector from some of a vanilla proof's
// inclusion proofs.
func circuitSector(v *SectorVanilla, proofs []c1.MerkleProof) (CircuitSector, error) {
	s := CircuitSector{CommR: v.CommR.MustElement(), CommC: v.Sectors[0].CommC.MustElement(), CommRLast: v.Sectors[0].CommRLast.MustElement()}
	for i := range proofs {
		s.Leafs = append(s.Leafs, proofs[i].Leaf.MustElement())
		path, err := pathOf(&proofs[i])
		if err != nil {
			return s, err
		}
		s.Paths = append(s.Paths, path)
	}
	return s, nil
}

// WinningPartition is generate_winning_post_with_vanilla up to the Groth16 proof: it decodes and
// verifies the single sector's vanilla proof (66 challenges) and lays it out as the circuit's 66
// sectors of one challenge each.
func WinningPartition(p *Proof, randomness, proverID [32]byte, vanilla [][]byte) (*Partition, error) {
	if p.Kind != Winning {
		return nil, fmt.Errorf("%s is not a WinningPoSt proof type", p.Name)
	}
	if err := checkSafe("randomness", randomness); err != nil {
		return nil, err
	}
	if err := checkSafe("prover_id", proverID); err != nil {
		return nil, err
	}
	if len(vanilla) != p.SectorCount {
		return nil, fmt.Errorf("%d vanilla proofs, WinningPoSt takes %d", len(vanilla), p.SectorCount)
	}
	v, err := DecodeSectorVanilla(p, vanilla[0])
	if err != nil {
		return nil, fmt.Errorf("vanilla proof 0: %w", err)
	}
	if err := p.VerifySector(v, randomness, 0); err != nil {
		return nil, err
	}
	cfg := p.Config()
	part := &Partition{Circuit: &Circuit{Config: cfg}, SectorIDs: []uint64{v.SectorID}}
	commR := v.CommR.MustElement()
	ips := v.Sectors[0].InclusionProofs
	for i := 0; i < cfg.Sectors; i++ {
		s, err := circuitSector(v, ips[i:i+1])
		if err != nil {
			return nil, err
		}
		part.Circuit.Sectors = append(part.Circuit.Sectors, s)
		leaf := LeafChallenge(randomness, v.SectorID, p.ChallengeIndex(i, cfg.Challenges, 0), p.Nodes())
		part.Inputs = append(part.Inputs, commR, fr.NewElement(leaf))
	}
	return part, nil
}

// ErrDuplicateSector is returned when a partition lists a sector twice.
var ErrDuplicateSector = errors.New("duplicate sector in partition")

// WindowPartition is generate_single_window_post_with_vanilla up to the Groth16 proof: the
// vanilla proofs of one partition's sectors (at most SectorCount, in the order of the sorted
// sector list), each verified against its challenges, then padded to SectorCount by repeating
// the last sector as rust-fil-proofs does.
func WindowPartition(p *Proof, randomness, proverID [32]byte, vanilla [][]byte, partition int) (*Partition, error) {
	if err := windowArgs(p, randomness, proverID, vanilla, partition); err != nil {
		return nil, err
	}
	// Each sector's decoding and Merkle verification is independent (about 8 ms of Poseidon per
	// 32 GiB sector, 19 s for a full 2,349-sector partition on one core): they run on every core,
	// and the partition is laid out in order afterwards, each sector's errors in the order a
	// sequential check meets them (decoding, a duplicate, then verification). Sectors after the
	// first failing one are not checked: the request fails at or before it.
	type checked struct {
		v                   *SectorVanilla
		s                   CircuitSector
		decodeErr, checkErr error
	}
	res := make([]checked, len(vanilla))
	firstFailure(context.Background(), len(vanilla), cores.N(), func(i int) (err error) {
		r := &res[i]
		defer func() {
			if e := recover(); e != nil { // client bytes: a bug they trigger fails the request, not the daemon
				r.decodeErr = fmt.Errorf("vanilla proof %d: checking it panicked: %v", i, e)
				err = r.decodeErr
			}
		}()
		if r.v, r.decodeErr = DecodeSectorVanilla(p, vanilla[i]); r.decodeErr != nil {
			r.decodeErr = fmt.Errorf("vanilla proof %d: %w", i, r.decodeErr)
			return r.decodeErr
		}
		if r.checkErr = p.VerifySector(r.v, randomness, partition*p.SectorCount+i); r.checkErr != nil {
			return r.checkErr
		}
		r.s, r.checkErr = circuitSector(r.v, r.v.Sectors[0].InclusionProofs)
		return r.checkErr
	})
	vs := make([]*SectorVanilla, len(res))
	ss := make([]CircuitSector, len(res))
	seen := map[uint64]bool{}
	for i, r := range res {
		if r.decodeErr != nil {
			return nil, r.decodeErr
		}
		if r.v == nil { // unreachable: only sectors after a failing one go unchecked
			return nil, fmt.Errorf("vanilla proof %d was not checked", i)
		}
		if seen[r.v.SectorID] {
			return nil, fmt.Errorf("%w: sector %d", ErrDuplicateSector, r.v.SectorID)
		}
		if r.checkErr != nil {
			return nil, r.checkErr
		}
		seen[r.v.SectorID] = true
		vs[i], ss[i] = r.v, r.s
	}
	return windowLayout(p, randomness, partition, vs, ss), nil
}

// windowArgs checks what WindowPartition checks before the vanilla proofs.
func windowArgs(p *Proof, randomness, proverID [32]byte, vanilla [][]byte, partition int) error {
	if p.Kind != Window {
		return fmt.Errorf("%s is not a WindowPoSt proof type", p.Name)
	}
	if err := checkSafe("randomness", randomness); err != nil {
		return err
	}
	if err := checkSafe("prover_id", proverID); err != nil {
		return err
	}
	if len(vanilla) == 0 || len(vanilla) > p.SectorCount {
		return fmt.Errorf("%d vanilla proofs, a %s partition takes 1 to %d", len(vanilla), p.Name, p.SectorCount)
	}
	if partition < 0 {
		return fmt.Errorf("partition index %d", partition)
	}
	return nil
}

// windowLayout lays out a WindowPoSt partition's checked sectors: the circuit's sectors and the
// public inputs (comm_r and the challenged leaves of each), padded to SectorCount by repeating
// the last sector as rust-fil-proofs does.
func windowLayout(p *Proof, randomness [32]byte, partition int, vs []*SectorVanilla, ss []CircuitSector) *Partition {
	cfg := p.Config()
	part := &Partition{Circuit: &Circuit{Config: cfg}}
	for i, v := range vs {
		sectorIndex := partition*p.SectorCount + i
		part.Circuit.Sectors = append(part.Circuit.Sectors, ss[i])
		part.SectorIDs = append(part.SectorIDs, v.SectorID)
		part.Inputs = append(part.Inputs, ss[i].CommR)
		for n := 0; n < cfg.Challenges; n++ {
			leaf := LeafChallenge(randomness, v.SectorID, p.ChallengeIndex(sectorIndex, cfg.Challenges, n), p.Nodes())
			part.Inputs = append(part.Inputs, fr.NewElement(leaf))
		}
	}
	per := 1 + cfg.Challenges
	for len(part.Circuit.Sectors) < cfg.Sectors {
		part.Circuit.Sectors = append(part.Circuit.Sectors, part.Circuit.Sectors[len(part.Circuit.Sectors)-1])
		part.Inputs = append(part.Inputs, part.Inputs[len(part.Inputs)-per:]...)
	}
	return part
}

// WindowPartitionDeferred is WindowPartition with the sectors' hashing (comm_r and every
// inclusion path, Poseidon: about 8 ms per 32 GiB sector, 1.6 s of 16 cores for a full
// partition) handed back as verify instead of done, so that it runs while the partition proves;
// a proof of the partition must not be used unless verify returns nil. Decoding, repeated
// sectors and each proof's shape (its challenge count, roots and challenged leaves) are checked
// here. Whatever fails, here or in verify, the error is the one WindowPartition reports for the
// same input.
func WindowPartitionDeferred(p *Proof, randomness, proverID [32]byte, vanilla [][]byte, partition int) (*Partition, func(context.Context) error, error) {
	if err := windowArgs(p, randomness, proverID, vanilla, partition); err != nil {
		return nil, nil, err
	}
	vs := make([]*SectorVanilla, len(vanilla))
	ss := make([]CircuitSector, len(vanilla))
	bad, _ := firstFailure(context.Background(), len(vanilla), cores.N(), func(i int) (err error) {
		defer func() {
			if e := recover(); e != nil { // client bytes: a bug they trigger fails the request
				err = fmt.Errorf("vanilla proof %d: checking it panicked: %v", i, e)
			}
		}()
		if vs[i], err = DecodeSectorVanilla(p, vanilla[i]); err != nil {
			return err
		}
		if err := p.sectorShape(vs[i], randomness, partition*p.SectorCount+i); err != nil {
			return err
		}
		ss[i], err = circuitSector(vs[i], vs[i].Sectors[0].InclusionProofs)
		return err
	})
	if bad < 0 {
		seen := make(map[uint64]bool, len(vs))
		for i, v := range vs {
			if seen[v.SectorID] {
				bad = i
				break
			}
			seen[v.SectorID] = true
		}
	}
	if bad >= 0 {
		// The failing sector, or one before it, decides the error: the full check in order
		// names it as it would have.
		if _, err := WindowPartition(p, randomness, proverID, vanilla, partition); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("vanilla proof %d: refused by the shape check but not by the full one", bad) // unreachable
	}
	verify := func(ctx context.Context) error {
		// Half the cores: the check runs beside the partition's proof, whose host side (staging
		// uploads, products where the device does not compute them) must not wait for CPU time;
		// at half speed it still ends within the GPU's kernels (1.3 s of 16 cores, 5 s of kernels).
		_, err := firstFailure(ctx, len(vs), max(1, cores.N()/2), func(i int) error { return sectorHashes(vs[i]) })
		return err
	}
	return windowLayout(p, randomness, partition, vs, ss), verify, nil
}

// firstFailure runs fn(0) … fn(n-1) on workers goroutines and returns the lowest i whose fn failed, with
// its error (-1, nil when none did, or ctx's error when it ended first). Indexes above a known
// failure are not started: nothing after the first failure matters.
func firstFailure(ctx context.Context, n, workers int, fn func(i int) error) (int, error) {
	errs := make([]error, n)
	var next atomic.Int64
	var firstBad atomic.Int64
	firstBad.Store(int64(n))
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n || int64(i) > firstBad.Load() {
					return
				}
				if errs[i] = fn(i); errs[i] != nil {
					for cur := firstBad.Load(); int64(i) < cur && !firstBad.CompareAndSwap(cur, int64(i)); cur = firstBad.Load() {
					}
				}
			}
		}()
	}
	wg.Wait()
	if i := int(firstBad.Load()); i < n {
		return i, errs[i]
	}
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	return -1, nil
}
