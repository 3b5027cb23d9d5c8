package bench

import "testing"

func TestParseConstraints(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2^20", 1 << 20, true},
		{"1000", 1000, true},
		{"2^0", 1, true},
		{"3^4", 0, false},
		{"2^32", 0, false},
		{"-5", 0, false},
		{"lots", 0, false},
	} {
		got, err := parseConstraints(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseConstraints(%q) = %d, %v", c.in, got, err)
		}
	}
}
