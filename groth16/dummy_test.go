package groth16

import (
	"slices"
	"testing"
)

func TestRepeat(t *testing.T) {
	for _, tc := range []struct {
		base []int
		n    int
		want []int
	}{
		{[]int{1, 2, 3}, 8, []int{1, 2, 3, 1, 2, 3, 1, 2}},
		{[]int{1, 2, 3}, 3, []int{1, 2, 3}},
		{[]int{1, 2, 3}, 2, []int{1, 2}},
		{[]int{7}, 5, []int{7, 7, 7, 7, 7}},
		{[]int{1, 2}, 0, []int{}},
	} {
		if got := repeat(tc.base, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("repeat(%v, %d) = %v, want %v", tc.base, tc.n, got, tc.want)
		}
	}
}
