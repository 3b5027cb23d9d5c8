package update

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
)

func TestParams(t *testing.T) {
	// Identifier hashes of the published parameter files (circuit-fingerprints §9) and the
	// size table of filecoin-interfaces §3.4.
	cases := []struct {
		p                       abi.RegisteredUpdateProof
		hash                    string
		partitions, challenges  int
		tree                    string
		hSelect, kAndHSelectMax uint64
	}{
		{abi.RegisteredUpdateProof_StackedDrg2KiBV1, "fb9e095b", 1, 10, "8-0-0", 1, 1},
		{abi.RegisteredUpdateProof_StackedDrg8MiBV1, "92180959", 4, 10, "8-0-0", 8, 8<<2 | 3},
		{abi.RegisteredUpdateProof_StackedDrg512MiBV1, "61fa69f3", 16, 86, "8-0-0", 8, 8<<4 | 15},
		{abi.RegisteredUpdateProof_StackedDrg32GiBV1, "3b7f44a9", 16, 86, "8-8-0", 8, 8<<4 | 15},
		{abi.RegisteredUpdateProof_StackedDrg64GiBV1, "102e1444", 16, 86, "8-8-2", 8, 8<<4 | 15},
	}
	for _, c := range cases {
		p, err := ForProof(c.p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(p.Identifier()))
		if got := hex.EncodeToString(sum[:4]); got != c.hash {
			t.Errorf("%d: identifier %q hashes to %s…, want %s…", c.p, p.Identifier(), got, c.hash)
		}
		if p.PartitionCount != c.partitions || p.ChallengeCount != c.challenges || !strings.HasSuffix(p.TreeR().String(), c.tree) {
			t.Errorf("%d: %d partitions, %d challenges, tree %s", c.p, p.PartitionCount, p.ChallengeCount, p.TreeR())
		}
		hs, err := p.HSelect(p.HDefault())
		if err != nil || hs != c.hSelect {
			t.Errorf("%d: h_select %d (%v)", c.p, hs, err)
		}
		v, err := p.Vector(&PublicInputs{K: p.PartitionCount - 1, H: p.HDefault()})
		if err != nil || v[0].Uint64() != c.kAndHSelectMax {
			t.Errorf("%d: k_and_h_select of the last partition %d (%v)", c.p, v[0].Uint64(), err)
		}
		if !strings.Contains(p.ParamFile(), "empty-sector-update-merkletree-poseidon_hasher-"+c.tree) {
			t.Errorf("param file %s", p.ParamFile())
		}
		if _, err := p.Vector(&PublicInputs{K: p.PartitionCount, H: p.HDefault()}); err == nil {
			t.Errorf("%d: partition index %d accepted", c.p, p.PartitionCount)
		}
	}
	if _, err := ForProof(5); err == nil {
		t.Error("unknown update proof accepted")
	}
	pp, _ := FromSectorSizePoseidon(32 << 30)
	if pp.PartitionCount != 1 || pp.ChallengeCount != 86*16 || !strings.Contains(pp.ParamFile(), "empty-sector-update-poseidon-") {
		t.Errorf("poseidon 32GiB: %+v %s", pp, pp.ParamFile())
	}
}

func TestAll(t *testing.T) {
	all := All()
	if len(all) != 7 || !all[5].Poseidon || all[4].SectorSize() != 64<<30 {
		t.Fatalf("%d parameter sets", len(all))
	}
	seen := map[string]bool{}
	for _, p := range all {
		if seen[p.ParamFile()] {
			t.Errorf("duplicate parameter file %s", p.ParamFile())
		}
		seen[p.ParamFile()] = true
	}
}
