package update

import (
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Production-shape SnapDeals vanilla proofs (32GiB and 64GiB, both variants) from synthetic
// sparse sectors decode, verify and yield circuits with the right public inputs.
func TestSyntheticProductionShapes(t *testing.T) {
	for _, size := range []uint64{prooftypes.SectorSize32GiB, prooftypes.SectorSize64GiB} {
		for _, poseidon := range []bool{false, true} {
			if poseidon && os.Getenv("SNARKD_HEAVY_TESTS") == "" {
				continue // 1,376 challenges × three 2^30-leaf proofs; SNARKD_HEAVY_TESTS=1
			}
			p, err := FromSectorSize(size)
			if poseidon {
				p, err = FromSectorSizePoseidon(size)
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := Synthetic(p, p.HDefault(), 64, rand.NewChaCha8([32]byte{3}))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{0, p.PartitionCount - 1} {
				b, err := e.PartitionProof(k)
				if err != nil {
					t.Fatal(err)
				}
				c, inputs, err := p.Partition(b, e.Inputs(k))
				if err != nil {
					t.Fatalf("size %d poseidon %v k %d: %v", size, poseidon, k, err)
				}
				if len(c.Witness.Challenges) != p.ChallengeCount || len(inputs) != 4 {
					t.Fatalf("%d challenges, %d inputs", len(c.Witness.Challenges), len(inputs))
				}
				// k | h_select << log2(partitions); production h = 10 is hs[3].
				want := uint64(k) | 8<<uint(p.PartitionBitLen)
				if inputs[0].Uint64() != want {
					t.Errorf("k_and_h_select %d, want %d", inputs[0].Uint64(), want)
				}
				wrong := e.Inputs(k)
				wrong.K = (k + 1) % p.PartitionCount
				if p.PartitionCount > 1 {
					if _, _, err := p.Partition(b, wrong); err == nil {
						t.Errorf("partition %d proof accepted as partition %d", k, wrong.K)
					}
				}
			}
		}
	}
}

func TestPartitions(t *testing.T) {
	p, err := ForProof(abi.RegisteredUpdateProof_StackedDrg8MiBV1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Synthetic(p, p.HDefault(), 16, rand.NewChaCha8([32]byte{4}))
	if err != nil {
		t.Fatal(err)
	}
	var vanilla [][]byte
	for k := 0; k < p.PartitionCount; k++ {
		b, err := e.PartitionProof(k)
		if err != nil {
			t.Fatal(err)
		}
		vanilla = append(vanilla, b)
	}
	cs, ins, err := p.Partitions(vanilla, *e.Inputs(0))
	if err != nil || len(cs) != 4 || ins[3][0].Uint64() != 3|8<<2 {
		t.Fatalf("%d circuits, %v", len(cs), err)
	}
	vanilla[1], vanilla[2] = vanilla[2], vanilla[1]
	if _, _, err := p.Partitions(vanilla, *e.Inputs(0)); !errors.Is(err, ErrInvalidVanilla) {
		t.Errorf("partitions out of order: %v", err)
	}
	if _, _, err := p.Partitions(vanilla[:3], *e.Inputs(0)); err == nil {
		t.Error("three of four partitions accepted")
	}
}
