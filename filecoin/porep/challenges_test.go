package porep

import (
	"encoding/hex"
	"slices"
	"testing"
)

// storage-proofs-porep challenges.rs test_synth_challenges_against_hardcoded.
func TestSynthChallengesHardcoded(t *testing.T) {
	var replicaID, commR, rand [32]byte
	replicaID[0], commR[0] = 55, 101
	for i := range rand {
		rand[i] = 1
	}
	g := newSynthGenerator(1<<10, replicaID, commR, 21)
	wantSynth := []uint64{178, 297, 869, 211, 875, 477, 94, 781, 124, 332, 856, 801, 176, 692, 429, 691, 290, 204, 986, 210, 973}
	for i, w := range wantSynth {
		c, err := g.Challenge(uint64(i))
		if err != nil || c != w {
			t.Fatalf("synthetic challenge %d = %d (%v), want %d", i, c, err, w)
		}
	}
	if _, err := g.Challenge(21); err == nil {
		t.Fatal("challenge 21 of 21 accepted")
	}
	got, err := g.PartitionChallenges(rand, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{176, 781, 801, 986, 290, 211, 692, 856, 986, 332}; !slices.Equal(got, want) {
		t.Fatalf("porep challenges %v, want %v", got, want)
	}
	// Partitions are consecutive slices of one selection stream.
	all, _ := g.PartitionChallenges(rand, 10, 0)
	p0, _ := g.PartitionChallenges(rand, 5, 0)
	p1, _ := g.PartitionChallenges(rand, 5, 1)
	if !slices.Equal(all, append(p0, p1...)) {
		t.Fatalf("partitioned selection %v %v differs from %v", p0, p1, all)
	}
}

func TestInteractiveChallenges(t *testing.T) {
	var replicaID, seed [32]byte
	for i := range replicaID {
		replicaID[i], seed[i] = byte(i), byte(3*i+1)
	}
	replicaID[31] &= 0x3f
	const nodes = 1 << 30
	all := InteractiveChallenges(nodes, replicaID, seed, 180, 0)
	var parts []uint64
	for k := range 10 {
		parts = append(parts, InteractiveChallenges(nodes, replicaID, seed, 18, k)...)
	}
	if !slices.Equal(all, parts) {
		t.Fatal("partition k=0..9 of 18 differ from one partition of 180")
	}
	for _, c := range all {
		if c == 0 || c >= nodes {
			t.Fatalf("challenge %d out of range", c)
		}
	}
	ni := NonInteractiveChallenges(nodes, replicaID, seed, 18, 0)
	if slices.Equal(ni, all[:18]) {
		t.Fatal("NI challenges equal interactive ones")
	}
	// 2 nodes: the only challengeable node is 1.
	if c := InteractiveChallenges(2, replicaID, seed, 3, 0); !slices.Equal(c, []uint64{1, 1, 1}) {
		t.Fatalf("2-node challenges %v", c)
	}
}

// challengeFromLE must equal the big-integer reduction.
func TestChallengeFromLE(t *testing.T) {
	b, _ := hex.DecodeString("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
	// (2^256 − 1) mod (2^30 − 1) = 2^(256 mod 30) − 1 = 2^16 − 1.
	if c := challengeFromLE(b, 1<<30); c != 1<<16 {
		t.Fatalf("got %d", c)
	}
	var one [32]byte
	one[0] = 7
	if c := challengeFromLE(one[:], 64); c != 8 {
		t.Fatalf("got %d", c)
	}
}

func TestReplicaID(t *testing.T) {
	var a [32]byte
	id := ReplicaID(a, 1, a, a, a)
	if id[31]&0xc0 != 0 {
		t.Fatal("top bits set")
	}
	if ReplicaID(a, 2, a, a, a) == id {
		t.Fatal("sector number ignored")
	}
}
