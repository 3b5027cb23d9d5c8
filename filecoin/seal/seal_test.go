package seal

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
)

func sealed2KiB(t testing.TB) []byte {
	p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	r := rand.NewChaCha8([32]byte{11})
	data, err := sealer.RandomData(r, p.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealer.Seal(context.Background(), p, data, prooftypes.ProverID(1000), 5, [32]byte{3})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Commit1(context.Background(), [32]byte{6})
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewCommit2Refusals(t *testing.T) {
	b := sealed2KiB(t)
	ctx := context.Background()
	c, err := NewCommit2(ctx, b, 5, 1000, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Partitions() != 1 || c.Proof.Proof != abi.RegisteredSealProof_StackedDrg2KiBV1_1 {
		t.Fatalf("%d partitions of %s", c.Partitions(), c.Proof.Name)
	}
	if in, err := c.PublicInputs(0); err != nil || len(in) != 39 {
		t.Fatalf("%d public inputs, %v", len(in), err)
	}
	var ve *porep.VerifyError
	if _, err := NewCommit2(ctx, b, 6, 1000, Options{}); !errors.As(err, &ve) || ve.Field != "replica_id" {
		t.Fatalf("wrong sector number: %v", err)
	}
	if _, err := NewCommit2(ctx, b, 6, 1000, Options{SkipReplicaIDCheck: true}); err != nil {
		t.Fatalf("skip replica id check: %v", err)
	}
	var fe *c1.FieldError
	if _, err := NewCommit2(ctx, b[:len(b)-1], 5, 1000, Options{}); !errors.Is(err, c1.ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
	o, _, _ := c1.Decode(b)
	o.RegisteredProof = "StackedDrg32GiBV1_1"
	bad, _ := o.Encode()
	if _, err := NewCommit2(ctx, bad, 5, 1000, Options{}); !errors.As(err, &fe) {
		t.Fatalf("proof type vs sector size: %v", err)
	}
}

func TestSynthesize2KiB(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("2.7M-constraint witness synthesis skipped with -race or -short")
	}
	c, err := NewCommit2(context.Background(), sealed2KiB(t), 5, 1000, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := c.Synthesize(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Input) != 40 {
		t.Fatalf("%d inputs", len(pa.Input))
	}
}

// BenchmarkSynthesizePartition measures witness synthesis of one partition of a synthetic C1
// output: SNARKD_BENCH_PROOF picks the proof type (default 32GiB V1_1), SNARKD_BENCH_WORKERS the
// worker count (default GOMAXPROCS). A 32GiB partition needs about 17 GB of memory.
func BenchmarkSynthesizePartition(b *testing.B) {
	pt := abi.RegisteredSealProof_StackedDrg32GiBV1_1
	if v := os.Getenv("SNARKD_BENCH_PROOF"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		pt = abi.RegisteredSealProof(n)
	}
	workers := 0
	if v := os.Getenv("SNARKD_BENCH_WORKERS"); v != "" {
		workers, _ = strconv.Atoi(v)
	}
	p, err := prooftypes.Lookup(pt)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	out, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), 1, [32]byte{1}, [32]byte{2}, rand.NewChaCha8([32]byte{3}))
	if err != nil {
		b.Fatal(err)
	}
	js, err := out.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("synthetic C1 of %s: %d bytes in %v", p.Name, len(js), time.Since(t0))
	t0 = time.Now()
	c, err := NewCommit2(ctx, js, 1, 1000, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("decode and verify: %v", time.Since(t0))
	t0 = time.Now()
	info, err := circuit.QuickCircuitInfo(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("blank shape: %v: %+v", time.Since(t0), *info)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pa, err := c.Synthesize(ctx, i%c.Partitions(), workers)
		if err != nil {
			b.Fatal(err)
		}
		if len(pa.A) != info.R1CSRows {
			b.Fatalf("%d rows, blank synthesis had %d", len(pa.A), info.R1CSRows)
		}
	}
	b.ReportMetric(float64(info.R1CSRows)*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
}

// Parameters whose vectors do not fit the circuit are named before synthesis.
func TestCheckParamsMismatch(t *testing.T) {
	if raceEnabled {
		t.Skip("blank syntheses of 5M constraints skipped with -race")
	}
	p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	pk := &groth16.Parameters{}
	pk.VK.IC = make([]bls12381.G1Affine, 40)
	var pm *ParamsMismatchError
	if err := CheckParams(context.Background(), p, pk); !errors.As(err, &pm) || pm.Vector != "h" || pm.Want != 1<<22-1 {
		t.Fatalf("got %v", err)
	}
	pk.VK.IC = pk.VK.IC[:39]
	if err := CheckParams(context.Background(), p, pk); !errors.As(err, &pm) || pm.Vector != "vk.ic" {
		t.Fatalf("got %v", err)
	}
}
