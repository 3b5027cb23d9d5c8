package snarkpack

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"testing"
)

// envRecords names rust-fil-proofs' filecoin-proofs/tests/seal_regression_records-v18.json,
// whose NI-PoRep records carry real aggregates (made by bellperson) with their comm_r.
const envRecords = "SNARKD_SEAL_REGRESSION_V18"

// TestRealNIPoRepTranscript replays the transcript of every real NI-PoRep aggregate in the
// v18 regression records (include = SHA-256(comm_r), version 2) and checks the TIPP and MIPP
// equations, which need neither the SRS nor the verifying key: it holds only if hcom, r,
// every round challenge and the folding match bellperson's.
func TestRealNIPoRepTranscript(t *testing.T) {
	path := os.Getenv(envRecords)
	if path == "" {
		t.Skipf("%s not set", envRecords)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		var rec struct {
			Config struct {
				Features []string `json:"api_features"`
			} `json:"porep_config"`
			CommR []int `json:"comm_r"`
			Proof []int `json:"proof"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Config.Features) != 1 || rec.Config.Features[0] != "NonInteractivePoRep" {
			continue
		}
		commR, proof := bytesOf(rec.CommR), bytesOf(rec.Proof)
		p, err := ParseAggregateProof(proof)
		if err != nil {
			t.Fatalf("record %d: %v", seen, err)
		}
		for _, tc := range []struct {
			include []byte
			valid   bool
		}{{sum(commR), true}, {sum(append(commR, 0)), false}} {
			st := fold(context.Background(), p, tc.include, V2)
			checks, err := st.tippMipp(p)
			for i := 0; err == nil && i < len(checks); i++ {
				err = checks[i].run()
			}
			if (err == nil) != tc.valid {
				t.Errorf("record %d (%d proofs), valid include %v: %v", seen, p.NumProofs(), tc.valid, err)
			}
		}
		seen++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no NI-PoRep records")
	}
	t.Logf("%d real NI-PoRep aggregates replayed", seen)
}

func bytesOf(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

func sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
