package lotus

import (
	"context"
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/google/uuid"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
)

// Mode is what the worker is to the miner (config Lotus.WorkerMode).
type Mode string

// Worker modes. A PoSt worker advertises only its PoSt task type: the miner then hands it to
// its PoSt scheduler alone, never to the sealing scheduler, as it does with
// `lotus-worker run --windowpost` or `--winningpost`.
const (
	ModeSeal        Mode = "seal"
	ModeWindowPoSt  Mode = "windowpost"
	ModeWinningPoSt Mode = "winningpost"
)

// TaskTypes are the task types a worker in mode m advertises.
func (m Mode) TaskTypes() ([]rpcapi.TaskType, error) {
	switch m {
	case ModeSeal:
		return DefaultTaskTypes, nil
	case ModeWindowPoSt:
		return []rpcapi.TaskType{rpcapi.TTGenerateWindowPoSt}, nil
	case ModeWinningPoSt:
		return []rpcapi.TaskType{rpcapi.TTGenerateWinningPoSt}, nil
	}
	return nil, fmt.Errorf("worker mode %q: want %s, %s or %s", m, ModeSeal, ModeWindowPoSt, ModeWinningPoSt)
}

// SetMode makes the worker a sealing worker (the default) or a PoSt worker reading vanilla
// proofs through vanilla, which a PoSt mode needs. Call it before the API serves.
func (w *WorkerAPI) SetMode(m Mode, vanilla *VanillaFetcher) error {
	tts, err := m.TaskTypes()
	if err != nil {
		return err
	}
	if m != ModeSeal && vanilla == nil {
		return fmt.Errorf("worker mode %s needs a vanilla proof reader", m)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mode, w.vanilla = m, vanilla
	w.tasks = map[rpcapi.TaskType]bool{}
	for _, t := range tts {
		w.tasks[t] = true
	}
	return nil
}

// postReady checks that this worker takes PoSt calls of task type tt and returns its reader.
func (w *WorkerAPI) postReady(tt rpcapi.TaskType) (*VanillaFetcher, error) {
	if err := w.taskReady(tt); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.vanilla, nil
}

// postProofType looks up ppt and checks it is of kind k.
func postProofType(ppt abi.RegisteredPoStProof, k post.Kind) (*post.Proof, error) {
	p, err := post.Lookup(ppt)
	if err != nil {
		return nil, &rpcapi.ErrBadRequest{Field: "ppt", Reason: err.Error()}
	}
	if p.Kind != k {
		return nil, &rpcapi.ErrBadRequest{Field: "ppt", Reason: fmt.Sprintf("%s is not a %s PoSt proof type", p.Name, k)}
	}
	return p, nil
}

// GenerateWinningPoSt reads the vanilla proofs of the challenged sectors from the miner's
// storage and proves a WinningPoSt at the highest priority. Any sector that cannot be read
// fails the call, as in lotus-worker.
func (w *WorkerAPI) GenerateWinningPoSt(ctx context.Context, ppt abi.RegisteredPoStProof, mid abi.ActorID, sectors []rpcapi.PostSectorChallenge, randomness abi.PoStRandomness) ([]proof.PoStProof, error) {
	vf, err := w.postReady(rpcapi.TTGenerateWinningPoSt)
	if err != nil {
		return nil, err
	}
	p, err := postProofType(ppt, post.Winning)
	if err != nil {
		return nil, err
	}
	if len(sectors) != p.SectorCount {
		return nil, &rpcapi.ErrBadRequest{Field: "sectors", Reason: fmt.Sprintf("%d sectors, a %s proof takes %d", len(sectors), p.Name, p.SectorCount)}
	}
	vanilla, errs, err := vf.Fetch(ctx, p, mid, sectors)
	if err != nil {
		return nil, fmt.Errorf("WinningPoSt of miner %d: %w", mid, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("WinningPoSt of miner %d: %w", mid, err)
	}
	b, err := w.provePoSt(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt, RegisteredProof: int64(ppt), MinerID: mid,
		Randomness: randomness, VanillaProofs: vanilla})
	if err != nil {
		return nil, fmt.Errorf("WinningPoSt of miner %d, sector %d: %w", mid, sectors[0].SectorNumber, err)
	}
	return []proof.PoStProof{{PoStProof: ppt, ProofBytes: b}}, nil
}

// GenerateWindowPoSt reads the vanilla proofs of one partition's sectors from the miner's
// storage and proves the partition at WindowPoSt priority. Sectors whose proof cannot be read
// are answered in Skipped with no proof and no error, as lotus-worker does: the miner checks
// them and asks again without them. A storage node answering with a wrong proof fails the call.
func (w *WorkerAPI) GenerateWindowPoSt(ctx context.Context, ppt abi.RegisteredPoStProof, mid abi.ActorID, sectors []rpcapi.PostSectorChallenge, partitionIdx int, randomness abi.PoStRandomness) (rpcapi.WindowPoStResult, error) {
	vf, err := w.postReady(rpcapi.TTGenerateWindowPoSt)
	if err != nil {
		return rpcapi.WindowPoStResult{}, err
	}
	p, err := postProofType(ppt, post.Window)
	if err != nil {
		return rpcapi.WindowPoStResult{}, err
	}
	switch {
	case partitionIdx < 0:
		return rpcapi.WindowPoStResult{}, &rpcapi.ErrBadRequest{Field: "partitionIdx", Reason: fmt.Sprintf("%d is negative", partitionIdx)}
	case len(sectors) == 0 || len(sectors) > p.SectorCount:
		return rpcapi.WindowPoStResult{}, &rpcapi.ErrBadRequest{Field: "sectors", Reason: fmt.Sprintf("%d sectors, a %s partition takes 1 to %d", len(sectors), p.Name, p.SectorCount)}
	}
	vanilla, errs, err := vf.Fetch(ctx, p, mid, sectors)
	if err != nil {
		return rpcapi.WindowPoStResult{}, fmt.Errorf("WindowPoSt partition %d of miner %d: %w", partitionIdx, mid, err)
	}
	var skipped []abi.SectorID
	for i, e := range errs {
		var bad *BadVanillaError
		switch {
		case e == nil:
		case errors.As(e, &bad):
			return rpcapi.WindowPoStResult{}, fmt.Errorf("WindowPoSt partition %d: %w", partitionIdx, bad)
		default:
			log.Warnw("WindowPoSt: skipping a sector whose vanilla proof cannot be read", "miner", mid, "sector", sectors[i].SectorNumber, "partition", partitionIdx, "err", e)
			skipped = append(skipped, abi.SectorID{Miner: mid, Number: sectors[i].SectorNumber})
		}
	}
	if len(skipped) > 0 {
		log.Errorw("WindowPoSt: some vanilla proofs could not be read; answering the skipped sectors without a proof", "miner", mid, "partition", partitionIdx, "skipped", len(skipped), "sectors", len(sectors))
		return rpcapi.WindowPoStResult{Skipped: skipped}, nil
	}
	b, err := w.provePoSt(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindWindowPoSt, RegisteredProof: int64(ppt), MinerID: mid,
		Randomness: randomness, VanillaProofs: vanilla, PartitionIndex: uint(partitionIdx)})
	if err != nil {
		return rpcapi.WindowPoStResult{}, fmt.Errorf("WindowPoSt partition %d of miner %d (%d sectors): %w", partitionIdx, mid, len(sectors), err)
	}
	return rpcapi.WindowPoStResult{PoStProofs: proof.PoStProof{PoStProof: ppt, ProofBytes: b}}, nil
}

// provePoSt runs req as a job and waits for it: the miner's call is synchronous. The job is a
// Lotus job without a CallID, so nothing is delivered through Return*, a restart fails it
// rather than proving it again for nobody, and it is pruned like any finished job. When the
// miner gives up (ctx ends) the job is cancelled.
func (w *WorkerAPI) provePoSt(ctx context.Context, req rpcapi.ProofRequest) ([]byte, error) {
	req.RequestID = "lotus-post:" + uuid.New().String()
	sub, err := w.jobs.Submit(req, jobs.SubmitOpts{Origin: rpcapi.OriginLotus})
	if err != nil {
		return nil, err
	}
	log.Infow("Lotus PoSt call queued", "kind", req.Kind, "job", sub.JobID, "miner", req.MinerID, "sectors", len(req.VanillaProofs), "partition", req.PartitionIndex)
	res, err := w.jobs.Await(ctx, sub.JobID)
	if err != nil {
		if ctx.Err() != nil {
			if _, cerr := w.jobs.Cancel(sub.JobID); cerr != nil {
				log.Warnw("cancelling an abandoned PoSt job", "job", sub.JobID, "err", cerr)
			}
		}
		return nil, err
	}
	switch res.State {
	case rpcapi.JobDone:
		return res.Proof, nil
	case rpcapi.JobCancelled:
		return nil, fmt.Errorf("job %s cancelled", sub.JobID)
	}
	return nil, fmt.Errorf("job %s failed: %s", sub.JobID, res.Error)
}
