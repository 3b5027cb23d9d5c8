package main

import (
	"strings"
	"testing"
)

func TestParseC1(t *testing.T) {
	for _, tc := range []struct {
		in     string
		sector uint64
		size   uint64
		phase1 string
		err    string
	}{
		{in: `{"SectorNum":9,"Phase1Out":"eyJyZWdpc3RlcmVkX3Byb29mIjoiUyJ9","SectorSize":2048}`, sector: 9, size: 2048, phase1: `{"registered_proof":"S"}`},
		{in: `{"registered_proof":"StackedDrg2KiBV1_1","comm_r":[1]}`, phase1: `{"registered_proof":"StackedDrg2KiBV1_1","comm_r":[1]}`},
		{in: `{"SectorNum":-1,"Phase1Out":""}`, err: "negative SectorNum"},
		{in: `{"SectorNum":1,"Phase1Out":null}`, err: "empty Phase1Out"},
		{in: `{"SectorNum":"x","Phase1Out":""}`, err: "bad Commit2In"},
		{in: `{"something":1}`, err: "neither a Commit2In"},
		{in: `not json`, err: "c1.json is not JSON"},
		{in: `[]`, err: "c1.json holds a JSON array, not a JSON object"},
		{in: `"x"`, err: "holds a JSON string"},
		{in: `null`, err: "neither a Commit2In"},
	} {
		p, sec, size, err := parseC1("c1.json", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(p) != tc.phase1 || uint64(sec) != tc.sector || uint64(size) != tc.size {
			t.Errorf("%s: %q %d %d %v", tc.in, p, sec, size, err)
		}
	}
}

// FuzzParseC1: any file content yields a C1 or an error naming the file, never a panic.
func FuzzParseC1(f *testing.F) {
	for _, s := range []string{`{"SectorNum":9,"Phase1Out":"e30=","SectorSize":2048}`, `{"registered_proof":"x"}`, `{}`, `[`, `{"Phase1Out":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, _, _, err := parseC1("c1.json", b)
		if err != nil && !strings.Contains(err.Error(), "c1.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
		if err == nil && len(p) == 0 {
			t.Fatal("accepted input without a C1")
		}
	})
}
