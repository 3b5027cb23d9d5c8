package prooftypes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
)

func TestSealProofTable(t *testing.T) {
	tests := []struct {
		proof       abi.RegisteredSealProof
		name        string
		vanilla     string
		size        uint64
		version     APIVersion
		feature     Feature
		partitions  int
		perPart     int
		layers      int
		tree        TreeShape
		inputs      int
		proofBytes  int
		pathBits    int
		fileHashHex string
	}{
		{abi.RegisteredSealProof_StackedDrg2KiBV1, "StackedDrg2KiBV1", "StackedDrg2KiBV1", 2048, APIVersion1_0_0, Interactive, 1, 2, 2, TreeShape{8, 0, 0}, 40, 192, 6, "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"},
		{abi.RegisteredSealProof_StackedDrg8MiBV1_1, "StackedDrg8MiBV1_1", "StackedDrg8MiBV1", 8 << 20, APIVersion1_1_0, Interactive, 1, 2, 2, TreeShape{8, 0, 0}, 40, 192, 18, "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb"},
		{abi.RegisteredSealProof_StackedDrg512MiBV1_1, "StackedDrg512MiBV1_1", "StackedDrg512MiBV1", 512 << 20, APIVersion1_1_0, Interactive, 1, 2, 2, TreeShape{8, 0, 0}, 40, 192, 24, "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472"},
		{abi.RegisteredSealProof_StackedDrg32GiBV1_1, "StackedDrg32GiBV1_1", "StackedDrg32GiBV1", 32 << 30, APIVersion1_1_0, Interactive, 10, 18, 11, TreeShape{8, 8, 0}, 328, 1920, 30, "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"},
		{abi.RegisteredSealProof_StackedDrg64GiBV1_1, "StackedDrg64GiBV1_1", "StackedDrg64GiBV1", 64 << 30, APIVersion1_1_0, Interactive, 10, 18, 11, TreeShape{8, 8, 2}, 328, 1920, 31, "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2"},
		{abi.RegisteredSealProof_StackedDrg32GiBV1, "StackedDrg32GiBV1", "StackedDrg32GiBV1", 32 << 30, APIVersion1_0_0, Interactive, 10, 18, 11, TreeShape{8, 8, 0}, 328, 1920, 30, "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"},
		{abi.RegisteredSealProof_StackedDrg32GiBV1_1_Feat_SyntheticPoRep, "StackedDrg32GiBV1_1_Feat_SyntheticPoRep", "StackedDrg32GiBV1", 32 << 30, APIVersion1_2_0, Synthetic, 10, 18, 11, TreeShape{8, 8, 0}, 328, 1920, 30, "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"},
		{abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, "StackedDrg2KiBV1_1_Feat_SyntheticPoRep", "StackedDrg2KiBV1", 2048, APIVersion1_2_0, Synthetic, 1, 2, 2, TreeShape{8, 0, 0}, 40, 192, 6, "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"},
		// NI-PoRep: 2253 challenges in 126 partitions of 18 (26 in 13 of 2 for test sizes), so the
		// circuits and parameter files are those of the interactive types.
		{abi.RegisteredSealProof_StackedDrg32GiBV1_2_Feat_NiPoRep, "StackedDrg32GiBV1_2_Feat_NonInteractivePoRep", "StackedDrg32GiBV1", 32 << 30, APIVersion1_2_0, NonInteractive, 126, 18, 11, TreeShape{8, 8, 0}, 328, 126 * 192, 30, "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"},
		{abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep, "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", "StackedDrg2KiBV1", 2048, APIVersion1_2_0, NonInteractive, 13, 2, 2, TreeShape{8, 0, 0}, 40, 13 * 192, 6, "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"},
		{abi.RegisteredSealProof_StackedDrg64GiBV1_2_Feat_NiPoRep, "StackedDrg64GiBV1_2_Feat_NonInteractivePoRep", "StackedDrg64GiBV1", 64 << 30, APIVersion1_2_0, NonInteractive, 126, 18, 11, TreeShape{8, 8, 2}, 328, 126 * 192, 31, "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Lookup(tc.proof)
			if err != nil {
				t.Fatal(err)
			}
			if byN, err := LookupName(tc.name); err != nil || byN != p {
				t.Fatalf("LookupName(%q) = %v, %v", tc.name, byN, err)
			}
			if p.Name != tc.name || p.VanillaName != tc.vanilla || p.SectorSize != tc.size ||
				p.APIVersion != tc.version || p.Feature != tc.feature {
				t.Fatalf("got %+v", p)
			}
			if p.Partitions != tc.partitions || p.ChallengesPerPartition != tc.perPart || p.Layers != tc.layers || p.Tree != tc.tree {
				t.Fatalf("partitions/challenges/layers/tree: got %d/%d/%d/%v", p.Partitions, p.ChallengesPerPartition, p.Layers, p.Tree)
			}
			if p.PublicInputs() != tc.inputs || p.ProofBytes() != tc.proofBytes {
				t.Fatalf("inputs %d proof bytes %d", p.PublicInputs(), p.ProofBytes())
			}
			if bits, err := p.Tree.PathBits(p.Nodes()); err != nil || bits != tc.pathBits {
				t.Fatalf("path bits %d, %v", bits, err)
			}
			if !strings.HasSuffix(p.CacheID(), tc.fileHashHex) {
				t.Fatalf("cache id %s, want hash %s", p.CacheID(), tc.fileHashHex)
			}
			for _, f := range []string{p.ParamsFile(), p.VKFile()} {
				if _, ok := PublishedFiles[f]; !ok {
					t.Fatalf("%s is not a published file", f)
				}
			}
			if id := p.PoRepID(); id[0] != byte(tc.proof) || id[8] != 0 {
				t.Fatalf("porep id %x", id)
			}
		})
	}
}

// The identifier strings asserted by rust-fil-proofs' test_public_params_identifier.
func TestIdentifierStrings(t *testing.T) {
	p, _ := Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	want := "layered_drgporep::PublicParams{ graph: stacked_graph::StackedGraph{expansion_degree: 8 base_graph: drgraph::BucketGraph{size: 1073741824; degree: 6; hasher: poseidon_hasher} }, challenges: LayerChallenges { layers: 11, max_count: 18 }, tree: merkletree-poseidon_hasher-8-8-0 }"
	if p.Identifier() != want {
		t.Fatalf("identifier\n got %s\nwant %s", p.Identifier(), want)
	}
	p, _ = Lookup(abi.RegisteredSealProof_StackedDrg64GiBV1_1)
	want = "layered_drgporep::PublicParams{ graph: stacked_graph::StackedGraph{expansion_degree: 8 base_graph: drgraph::BucketGraph{size: 2147483648; degree: 6; hasher: poseidon_hasher} }, challenges: LayerChallenges { layers: 11, max_count: 18 }, tree: merkletree-poseidon_hasher-8-8-2 }"
	if p.Identifier() != want {
		t.Fatalf("identifier\n got %s\nwant %s", p.Identifier(), want)
	}
}

func TestLookupUnknown(t *testing.T) {
	if _, err := Lookup(20); !errors.Is(err, ErrUnknownProof) {
		t.Fatalf("Lookup(20): %v", err)
	}
	if _, err := LookupName("StackedDrg4KiBV1"); !errors.Is(err, ErrUnknownProof) {
		t.Fatalf("LookupName: %v", err)
	}
	if len(All()) != 20 {
		t.Fatalf("All() has %d entries", len(All()))
	}
	for i, p := range All() {
		if int(p.Proof) != i {
			t.Fatalf("All()[%d] = %d", i, p.Proof)
		}
		if ss, err := p.Proof.SectorSize(); err != nil || uint64(ss) != p.SectorSize {
			t.Fatalf("%s: go-state-types sector size %d, %v", p.Name, ss, err)
		}
	}
	if p, err := ForSectorSize(2048); err != nil || p.Proof != abi.RegisteredSealProof_StackedDrg2KiBV1_1 {
		t.Fatalf("ForSectorSize(2048) = %v, %v", p, err)
	}
}

func TestProverID(t *testing.T) {
	tests := []struct {
		miner abi.ActorID
		want  []byte
	}{
		{1000, []byte{0xe8, 0x07}},
		{0, []byte{0}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
	}
	for _, tc := range tests {
		id := ProverID(tc.miner)
		for i := range id {
			var w byte
			if i < len(tc.want) {
				w = tc.want[i]
			}
			if id[i] != w {
				t.Fatalf("ProverID(%d) = %x", tc.miner, id)
			}
		}
	}
}

func TestTreeShapeErrors(t *testing.T) {
	if _, err := (TreeShape{8, 0, 0}).BaseLevels(100); err == nil {
		t.Fatal("100 leaves accepted for arity 8")
	}
	if _, err := (TreeShape{3, 0, 0}).BaseLevels(9); err == nil {
		t.Fatal("arity 3 accepted")
	}
	if n, err := (TreeShape{8, 8, 2}).BaseLevels(1 << 31); err != nil || n != 9 {
		t.Fatalf("64GiB base levels %d, %v", n, err)
	}
}

func TestFileDigestAndCheck(t *testing.T) {
	// Blake2b-512("abc") begins ba80a53f981c4d0d6a2797b69f12f6e9.
	d, err := FileDigest(strings.NewReader("abc"))
	if err != nil || d != "ba80a53f981c4d0d6a2797b69f12f6e9" {
		t.Fatalf("digest %q, %v", d, err)
	}
	p, _ := Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	dir := t.TempDir()
	if err := CheckPublishedFiles(dir, p); err == nil {
		t.Fatal("missing files accepted")
	}
	for _, f := range []string{p.VKFile(), p.ParamsFile()} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not parameters"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var dm *DigestMismatchError
	if err := CheckPublishedFiles(dir, p); !errors.As(err, &dm) || dm.File != p.VKFile() || dm.Want != "dc1ade9929ade1708238f155343044ac" {
		t.Fatalf("got %v", err)
	}
}
