package prover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/gpuprove"
)

// GPUBackend proves partitions with the GPU partition prover: the scheduler picks the device
// and the memory plan, the kernels run the H step and the MSMs, and the CPU assembles the proof.
type GPUBackend struct {
	prover *gpuprove.Prover
	name   string
	// observe, when set, is told every partition's result (its stages and timeline).
	observe func(gpuprove.ProveResult)
}

// Observe makes b call fn with every partition it proves (benchmarks read the GPU timeline);
// call it before the first proof.
func (b *GPUBackend) Observe(fn func(gpuprove.ProveResult)) { b.observe = fn }

// NewGPUBackend returns a backend over sched's devices; name is what Status reports ("cuda",
// or "simulated" for --simulate-gpus).
func NewGPUBackend(sched *gpu.Scheduler, name string) *GPUBackend {
	return &GPUBackend{prover: gpuprove.NewProver(sched), name: name}
}

// Name implements Backend.
func (b *GPUBackend) Name() string { return b.name }

// Concurrency is one partition per worker plus one per device being prepared (synthesis and
// scalar gathering on the CPU) while the workers are busy.
func (b *GPUBackend) Concurrency() int { return b.prover.Sched.Workers() + b.prover.Sched.Devices() }

// Scheduler returns the scheduler (for Status and metrics).
func (b *GPUBackend) Scheduler() *gpu.Scheduler { return b.prover.Sched }

// ForgetParams unregisters the host SRS vectors of parameters the cache dropped.
func (b *GPUBackend) ForgetParams(pk *groth16.Parameters) { b.prover.ForgetParams(pk) }

// DefersProducts implements ProductsDeferrer: a partition of pk's shape would get a plan that
// computes a, b and c on the device.
func (b *GPUBackend) DefersProducts(pk *groth16.Parameters, comp *cs.Compiled) bool {
	return b.prover.ProductsOnDevice(pk, comp)
}

// Prove implements Backend.
func (b *GPUBackend) Prove(ctx context.Context, info PartitionInfo, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, error) {
	res, err := b.prover.Prove(ctx, gpuprove.ProveRequest{
		JobID: info.JobID, Kind: string(info.Kind), Class: info.Class, Submitted: info.Submitted, Index: info.Index,
		PK: pk, PA: pa, R: *r, S: *s,
		OnEvent: func(ev gpu.Event) {
			if info.Note == nil {
				return
			}
			switch ev.Type {
			case gpu.EventAdmitted:
				srs := "streamed"
				if ev.SRSResident {
					srs = "resident"
				}
				if ev.CompactNTT {
					srs += ", compact NTT tables"
				}
				info.Note(StageAdmitted, fmt.Sprintf("gpu %d worker %d: %s plan, SRS %s, %s, attempt %d, waited %s",
					ev.Device, ev.Worker, ev.Tier, srs, gpu.FormatBytes(ev.Bytes), ev.Attempt, ev.Waited.Round(time.Millisecond)))
			case gpu.EventAllocFailed:
				info.Note(StageAdmitted, fmt.Sprintf("gpu %d: out of memory with the %s plan; retrying with a smaller one", ev.Device, ev.Tier))
			case gpu.EventDone:
				t := ev.Times
				ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
				info.Note(StageProved, fmt.Sprintf("gpu %d worker %d: queued %s, waited for memory %s, for other kernels %s; kernels %s, admission to done %s",
					ev.Device, ev.Worker, ms(t.Queued), ms(t.Memory), ms(t.KernelWait), ms(t.Kernels), ms(t.Run)))
			}
		},
	})
	if err != nil {
		return nil, err
	}
	if b.observe != nil {
		b.observe(res)
	}
	var upload, assembly time.Duration
	for _, st := range res.Stages {
		switch {
		case strings.HasPrefix(st.Name, "upload "):
			upload += st.Duration
		case st.Name == "assemble":
			assembly += st.Duration
		}
	}
	info.phase(PartitionUpload, upload)
	info.phase(PartitionKernels, res.Run.Times.Kernels)
	info.phase(PartitionAssembly, assembly)
	NoteDevice(ctx, res.Run.Device) // the job's assigned GPU (cuzk assigned_gpu, Job.GPUs)
	kv := []any{"job", info.JobID, "kind", info.Kind, "partition", info.Index, "of", info.Partitions,
		"device", res.Run.Device, "worker", res.Run.Worker, "plan", res.Run.Plan.String(), "attempts", res.Run.Attempts}
	for _, st := range res.Stages {
		kv = append(kv, st.Name, st.Duration.String())
	}
	log.Debugw("partition proved on gpu", kv...)
	return res.Proof, nil
}
