package fuzzedit

import "testing"

func TestSplice(t *testing.T) {
	base := []byte("abcdef")
	for _, tc := range []struct {
		name     string
		base     []byte
		off, del uint32
		patch    string
		want     string
	}{
		{"unchanged", base, 0, 0, "", "abcdef"},
		{"replace", base, 2, 2, "XY", "abXYef"},
		{"insert", base, 3, 0, "-", "abc-def"},
		{"append", base, 6, 0, "!", "abcdef!"},
		{"offset wraps", base, 9, 1, "Z", "abZdef"},
		{"deletion clamped", base, 4, 100, "", "abcd"},
		{"raw bytes", nil, 5, 3, "raw", "raw"},
	} {
		if got := string(Splice(tc.base, tc.off, tc.del, []byte(tc.patch))); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if string(base) != "abcdef" {
		t.Fatalf("base modified: %q", base)
	}
}
