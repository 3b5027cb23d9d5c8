package gpu_test

import (
	"context"
	"fmt"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/priority"
)

// A daemon started with --simulate-gpus 2x16GiB proves a PoRep-shaped partition (2^22
// domain) with a work function that stands in for the GPU partition prover.
func ExampleNewScheduler() {
	devs, err := sim.Devices("2x16GiB")
	if err != nil {
		panic(err)
	}
	sched, err := gpu.NewScheduler(gpu.Config{Devices: devs})
	if err != nil {
		panic(err)
	}
	defer sched.Close()

	n := uint64(1) << 22
	shape := gpu.Shape{LogDomain: 22, SRSKey: "porep-example",
		Points: [5]uint64{n - 1, n - n/16, n - n/32, n / 4, n / 4}}
	prove := func(ctx context.Context, run *gpu.Run) error {
		// Upload a, b and c into the plan's buffers before taking the kernel lock.
		for _, name := range run.Plan.PrestagedBuffers() {
			dst, size, err := run.Buffer(name)
			if err != nil {
				return err
			}
			src, pinned := run.Pinned.Acquire(size)
			if !pinned {
				src = gpu.HostMem{Size: size} // pageable fallback (counted by the pool)
			}
			if err := run.Upload(ctx, dst, src); err != nil {
				return err
			}
			if pinned {
				if err := run.Pinned.Release(src); err != nil {
					return err
				}
			}
		}
		return run.Kernel(ctx, "ntt-h", func() error { return nil })
	}
	res, err := sched.Prove(context.Background(), gpu.Partition{JobID: "job-1", Kind: "porep-c2", Class: priority.Seal,
		Submitted: time.Now(), Index: 0, Shape: shape}, prove)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Plan.Tier, res.Plan.DomainBuffers, res.Attempts)
	// Output: full 3 1
}
