package main

import (
	"slices"
	"testing"
)

func TestParseBenchLists(t *testing.T) {
	for _, tc := range []struct {
		in      string
		windows bool
		want    []uint
		err     bool
	}{
		{in: "", want: nil},
		{in: "20, 2^24 ,26", want: []uint{20, 24, 26}},
		{in: "0", err: true},
		{in: "29", err: true},
		{in: "2^x", err: true},
		{in: "20,22", windows: true, want: []uint{20, 22}},
		{in: "3", windows: true, err: true},
		{in: "25", windows: true, err: true},
		{in: "2^20", windows: true, err: true},
	} {
		parse := parseLogs
		if tc.windows {
			parse = parseWindows
		}
		got, err := parse(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q (windows %v): err %v, want error %v", tc.in, tc.windows, err, tc.err)
			continue
		}
		if !tc.err && !slices.Equal(got, tc.want) {
			t.Errorf("%q (windows %v): %v, want %v", tc.in, tc.windows, got, tc.want)
		}
	}
}
