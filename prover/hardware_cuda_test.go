//go:build cuda

package prover

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestHardwarePoRepCompiledProofs proves one PoRep partition of a synthetic C1 output on the
// GPU from the compiled path (witness-only synthesis, a, b, c from the matrices, vectors sized
// for the domain so the prover pads them in place) and from full synthesis (vectors padded by
// copy), with the same r and s: the assignments are equal and the proofs byte-identical, and
// at 2KiB and 8MiB equal to the CPU prover's. Keys are dummy keys of the real size (the bytes
// are compared, not verified). SNARKD_HEAVY_TESTS=1 adds the 32 GiB partition (≈ 80 GiB of
// host memory).
func TestHardwarePoRepCompiledProofs(t *testing.T) {
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		t.Skip("no CUDA device visible")
	}
	types := []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg8MiBV1_1}
	if os.Getenv("SNARKD_HEAVY_TESTS") != "" {
		types = append(types, abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	}
	ctx := context.Background()
	dev, err := cuda.NewHardwareDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, SRSResidency: true,
		Sizer: cuda.KernelSizer(0), ResidentTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	backend := NewGPUBackend(sched, "cuda")
	backend.Observe(func(res gpuprove.ProveResult) {
		var st []string
		for _, x := range res.Stages {
			st = append(st, fmt.Sprintf("%s %s", x.Name, x.Duration.Round(100*time.Microsecond)))
		}
		t.Logf("plan %s: %s", res.Run.Plan, strings.Join(st, ", "))
	})
	for _, pt := range types {
		p, err := prooftypes.Lookup(pt)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Name, func(t *testing.T) {
			out, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), 7, [32]byte{1}, [32]byte{2}, rand.NewChaCha8([32]byte{3}))
			if err != nil {
				t.Fatal(err)
			}
			js, err := out.Encode()
			if err != nil {
				t.Fatal(err)
			}
			c2, err := seal.NewCommit2(ctx, js, 7, 1000, seal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			info, err := circuit.QuickCircuitInfo(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			pk := groth16.DummyParametersOf(info.SynthesisShape, info.AAuxDensity, info.BInputDensity, info.BAuxDensity)
			defer backend.ForgetParams(pk)
			t0 := time.Now()
			comp, err := c2.Compile(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("compiled in %s: %d rows, %.1f MiB", time.Since(t0).Round(time.Millisecond), comp.NumConstraints(), float64(comp.Bytes())/(1<<20))
			k := p.Partitions - 1
			witness := func() *cs.ProvingAssignment {
				t.Helper()
				pa, err := c2.WitnessOnly(ctx, k, comp, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := comp.Complete(ctx, pa, 0); err != nil {
					t.Fatal(err)
				}
				return pa
			}
			full := func() *cs.ProvingAssignment {
				t.Helper()
				pa, err := c2.Synthesize(ctx, k, 0)
				if err != nil {
					t.Fatal(err)
				}
				return pa
			}
			var r, s fr.Element
			r.SetUint64(0x5eed)
			s.SetUint64(0xc0ffee)
			prove := func(name string, b Backend, pa *cs.ProvingAssignment) []byte {
				t.Helper()
				t0 := time.Now()
				pr, err := b.Prove(ctx, PartitionInfo{JobID: "hw-" + name, Kind: rpcapi.KindPoRepC2, Index: k, Partitions: p.Partitions, Class: 2}, pk, pa, &r, &s)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				t.Logf("%s proof in %s", name, time.Since(t0).Round(time.Millisecond))
				bs := pr.Bytes()
				return bs[:]
			}
			// Each assignment is proved once: the provers pad a, b and c in place.
			t0 = time.Now()
			compiled := witness()
			t.Logf("witness + products in %s", time.Since(t0).Round(time.Millisecond))
			t0 = time.Now()
			want := full()
			t.Logf("full synthesis in %s", time.Since(t0).Round(time.Millisecond))
			if err := compiled.Diff(want); err != nil {
				t.Fatalf("compiled and full synthesis differ: %v", err)
			}
			if row := cs.FirstUnsatisfied(compiled); row >= 0 {
				t.Fatalf("row %d unsatisfied", row)
			}
			got := prove("gpu-compiled", backend, compiled)
			compiled = nil
			runtime.GC() // a 32 GiB partition's 17 GB, before the next one is padded by copy
			if ref := prove("gpu-full", backend, want); !bytes.Equal(got, ref) {
				t.Fatalf("GPU proofs differ: compiled %x, full %x", got[:16], ref[:16])
			}
			want = nil
			runtime.GC()
			// a, b and c computed on the GPU from the witness and the resident matrices.
			if !backend.DefersProducts(pk, comp) {
				t.Fatalf("%s: the device would not compute the products", p.Name)
			}
			deferred, err := c2.WitnessOnly(ctx, k, comp, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := comp.Defer(deferred); err != nil {
				t.Fatal(err)
			}
			if ref := prove("gpu-deferred", backend, deferred); !bytes.Equal(got, ref) {
				t.Fatalf("GPU proofs differ: compiled %x, products on the device %x", got[:16], ref[:16])
			}
			deferred = nil
			if p.SectorSize <= prooftypes.SectorSize8MiB {
				if ref := prove("cpu-full", CPUBackend{}, full()); !bytes.Equal(got, ref) {
					t.Fatalf("GPU and CPU proofs differ: %x, %x", got[:16], ref[:16])
				}
			}
			fmt.Fprintf(os.Stderr, "%s partition %d: compiled and full assignments equal, proofs byte-identical\n", p.Name, k)
		})
	}
}
