package circuit

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func TestCircuitInfo2KiB(t *testing.T) {
	if raceEnabled {
		t.Skip("blank synthesis of 2.7M constraints skipped with -race")
	}
	p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	info, err := CircuitInfo(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if info.PublicInputs != 40 || info.Domain != 1<<22 || info.BInputDensity != 1 || info.R1CSRows != info.Constraints+40 {
		t.Fatalf("%+v", info)
	}
}

// The affine extrapolation equals full blank synthesis (3 challenges on a 64-node sector).
func TestQuickCircuitInfo(t *testing.T) {
	if raceEnabled {
		t.Skip("blank synthesis of 3.9M constraints skipped with -race")
	}
	p := &prooftypes.SealProof{Name: "test", SectorSize: 2048, Partitions: 1, ChallengesPerPartition: 3, Layers: 2, Tree: prooftypes.TreeShape{Base: 8}}
	full, err := CircuitInfo(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	quick, err := QuickCircuitInfo(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	full.SynthesisTime, quick.SynthesisTime = 0, 0
	if *full != *quick {
		t.Fatalf("full %+v\nquick %+v", *full, *quick)
	}
	if full.PublicInputs != 4+18*3 {
		t.Fatalf("%d inputs", full.PublicInputs)
	}
}

// TestCircuitInfoAll prints the circuit info of every published sector size as JSON lines when
// SNARKD_CIRCUIT_INFO=1 (the 32GiB and 64GiB circuits have about 130M constraints each).
func TestCircuitInfoAll(t *testing.T) {
	if os.Getenv("SNARKD_CIRCUIT_INFO") != "1" {
		t.Skip("set SNARKD_CIRCUIT_INFO=1")
	}
	var wg sync.WaitGroup
	for pt := abi.RegisteredSealProof_StackedDrg2KiBV1_1; pt <= abi.RegisteredSealProof_StackedDrg64GiBV1_1; pt++ {
		p, _ := prooftypes.Lookup(pt)
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := QuickCircuitInfo(context.Background(), p)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := json.Marshal(info)
			t.Log(string(b))
		}()
	}
	wg.Wait()
}
