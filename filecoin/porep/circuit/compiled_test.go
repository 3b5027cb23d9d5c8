package circuit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
)

// Witness-only synthesis completed from the compiled circuit equals full synthesis, for every
// partition of a synthetic C1 output, and the compiled circuit has the blank circuit's counts.
func TestSynthesizeWitnessMatches(t *testing.T) {
	if raceEnabled {
		t.Skip("multi-million-constraint syntheses skipped with -race (CI runs them without it)")
	}
	types := []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1}
	if !testing.Short() {
		types = append(types, abi.RegisteredSealProof_StackedDrg8MiBV1)
	}
	ctx := context.Background()
	for _, pt := range types {
		p, err := prooftypes.Lookup(pt)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Name, func(t *testing.T) {
			out, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), 3, [32]byte{5}, [32]byte{6}, rand.NewChaCha8([32]byte{9}))
			if err != nil {
				t.Fatal(err)
			}
			comp, err := Compile(ctx, ConfigOf(p))
			if err != nil {
				t.Fatal(err)
			}
			info, err := QuickCircuitInfo(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			aAux, bIn, bAux := comp.Densities()
			if comp.Shape() != info.SynthesisShape || aAux.Count() != info.AAuxDensity || bIn.Count() != info.BInputDensity || bAux.Count() != info.BAuxDensity {
				t.Fatalf("compiled %+v (densities %d, %d, %d), blank %+v", comp.Shape(), aAux.Count(), bIn.Count(), bAux.Count(), *info)
			}
			t.Logf("%s: %d rows, %d terms, %d coefficients, %.1f MiB", comp.Key, comp.NumConstraints(), comp.Terms(), len(comp.Coeffs), float64(comp.Bytes())/(1<<20))
			for k := 0; k < p.Partitions; k++ {
				c, err := FromC1(out, p, k)
				if err != nil {
					t.Fatal(err)
				}
				want, err := SynthesizeParallel(ctx, c, 0)
				if err != nil {
					t.Fatal(err)
				}
				got, err := synthesizeWitness(ctx, c, comp, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := got.Diff(want); err != nil {
					t.Fatalf("partition %d: %v", k, err)
				}
				if row := FirstUnsatisfied(got); row >= 0 {
					t.Fatalf("partition %d: row %d unsatisfied", k, row)
				}
			}
		})
	}
}

// A compiled circuit of another configuration is refused.
func TestSynthesizeWitnessRefusesOtherShape(t *testing.T) {
	ctx := context.Background()
	p2, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	cfg := ConfigOf(p2)
	other := cfg
	other.Challenges = 1
	comp, err := Compile(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sealer.SyntheticC1(ctx, p2, prooftypes.ProverID(1000), 3, [32]byte{5}, [32]byte{6}, rand.NewChaCha8([32]byte{9}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromC1(out, p2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synthesizeWitness(ctx, c, comp, 0); err == nil {
		t.Fatal("a compiled circuit of one challenge completed a two-challenge witness")
	}
}

// benchCircuit returns the circuit of SNARKD_BENCH_PROOF's seal proof type (default 2KiB V1_1;
// "32GiB-1" is the 32 GiB partition circuit cut to one challenge, 7.2 M rows, which fits the
// 2-core machine) with a synthetic witness, and its compiled form.
func benchCircuit(b *testing.B) (*Circuit, *cs.Compiled) {
	b.Helper()
	ctx := context.Background()
	pt, challenges := abi.RegisteredSealProof_StackedDrg2KiBV1_1, 0
	switch v := os.Getenv("SNARKD_BENCH_PROOF"); v {
	case "", "2KiB":
	case "8MiB":
		pt = abi.RegisteredSealProof_StackedDrg8MiBV1_1
	case "32GiB":
		pt = abi.RegisteredSealProof_StackedDrg32GiBV1_1
	case "32GiB-1":
		pt, challenges = abi.RegisteredSealProof_StackedDrg32GiBV1_1, 1
	default:
		b.Fatalf("SNARKD_BENCH_PROOF=%s: want 2KiB, 8MiB, 32GiB or 32GiB-1", v)
	}
	p, err := prooftypes.Lookup(pt)
	if err != nil {
		b.Fatal(err)
	}
	out, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), 3, [32]byte{5}, [32]byte{6}, rand.NewChaCha8([32]byte{9}))
	if err != nil {
		b.Fatal(err)
	}
	c, err := FromC1(out, p, 0)
	if err != nil {
		b.Fatal(err)
	}
	if challenges > 0 {
		c.Config.Challenges = challenges
		c.Witness.Challenges = c.Witness.Challenges[:challenges]
	}
	// SNARKD_BENCH_CIRCUIT_DIR keeps the compiled circuit between benchmark functions and runs
	// (a 32 GiB partition's takes 20 s to record).
	dir := os.Getenv("SNARKD_BENCH_CIRCUIT_DIR")
	path := filepath.Join(dir, strings.ReplaceAll(c.Config.Key(), "/", "_")+".r1cs")
	if dir != "" {
		if comp, err := cs.LoadCompiled(path, c.Config.Key(), ""); err == nil {
			return c, comp
		}
	}
	comp, err := Compile(ctx, c.Config)
	if err != nil {
		b.Fatal(err)
	}
	if dir != "" {
		if err := comp.Store(path); err != nil {
			b.Fatal(err)
		}
	}
	return c, comp
}

// BenchmarkSynthesizeParallel is full synthesis (linear combinations built and evaluated).
func BenchmarkSynthesizeParallel(b *testing.B) {
	c, comp := benchCircuit(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := SynthesizeParallel(context.Background(), c, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, comp)
}

// BenchmarkSynthesizeWitness is witness-only synthesis plus the sparse products, in the steady
// state: each assignment's vectors are recycled for the next, as in the prover.
func BenchmarkSynthesizeWitness(b *testing.B) {
	c, comp := benchCircuit(b)
	warmVectors(b, c, comp)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pa, err := synthesizeWitness(context.Background(), c, comp, 0)
		if err != nil {
			b.Fatal(err)
		}
		pa.Recycle() // as the prover does once the proof is made
	}
	reportRows(b, comp)
}

// BenchmarkWitnessOnly is the witness-only synthesis alone (no products).
func BenchmarkWitnessOnly(b *testing.B) {
	c, comp := benchCircuit(b)
	warmVectors(b, c, comp)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pa, err := WitnessOnly(context.Background(), c, comp, 0)
		if err != nil {
			b.Fatal(err)
		}
		pa.Recycle()
	}
	reportRows(b, comp)
}

// warmVectors synthesizes one partition and recycles it, so that a benchmark of the steady
// state does not time the first partition's page faults.
func warmVectors(b *testing.B, c *Circuit, comp *cs.Compiled) {
	b.Helper()
	pa, err := synthesizeWitness(context.Background(), c, comp, 0)
	if err != nil {
		b.Fatal(err)
	}
	pa.Recycle()
}

// synthesized returns the benchmark circuit's compiled form and a completed assignment of it.
func synthesized(b *testing.B) (*cs.Compiled, *cs.ProvingAssignment) {
	b.Helper()
	c, comp := benchCircuit(b)
	pa, err := synthesizeWitness(context.Background(), c, comp, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return comp, pa
}

// reportRows reports the rows per second of a benchmark over comp.
func reportRows(b *testing.B, comp *cs.Compiled) {
	b.ReportMetric(float64(comp.NumConstraints())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkProducts is a = A·z, b = B·z, c = C·z alone, on a synthesized witness.
func BenchmarkProducts(b *testing.B) {
	comp, pa := synthesized(b)
	for i := 0; i < b.N; i++ {
		if err := comp.Products(context.Background(), pa.Input, pa.Aux, pa.A, pa.B, pa.C, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, comp)
	terms := len(comp.Prefix.A.Cols) + len(comp.Prefix.B.Cols) + len(comp.Prefix.C.Cols) +
		comp.Blocks*(len(comp.Block.A.Cols)+len(comp.Block.B.Cols)+len(comp.Block.C.Cols))
	b.ReportMetric(float64(terms)*float64(b.N)/b.Elapsed().Seconds(), "terms/s")
}

// BenchmarkProductsChecked is BenchmarkProducts with every row checked as it is computed (the
// prover's path); BenchmarkRowCheck is the separate pass it replaces.
func BenchmarkProductsChecked(b *testing.B) {
	comp, pa := synthesized(b)
	for i := 0; i < b.N; i++ {
		row, err := comp.ProductsChecked(context.Background(), pa.Input, pa.Aux, pa.A, pa.B, pa.C, 0)
		if err != nil || row >= 0 {
			b.Fatalf("row %d: %v", row, err)
		}
	}
	reportRows(b, comp)
}

func BenchmarkRowCheck(b *testing.B) {
	comp, pa := synthesized(b)
	for i := 0; i < b.N; i++ {
		if row := cs.FirstUnsatisfied(pa); row >= 0 {
			b.Fatalf("row %d", row)
		}
	}
	reportRows(b, comp)
}

// synthesizeWitness is SynthesizeParallel without constraints: the challenge blocks compute
// only their aux and input values (witness-only gadgets), then comp, the
// compiled circuit of c's configuration, supplies a, b, c and the densities. The result equals
// SynthesizeParallel's.
func synthesizeWitness(ctx context.Context, c *Circuit, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	pa, err := WitnessOnly(ctx, c, comp, workers)
	if err != nil {
		return nil, err
	}
	if err := comp.Complete(ctx, pa, workers); err != nil {
		return nil, fmt.Errorf("circuit: %w", err)
	}
	return pa, nil
}
