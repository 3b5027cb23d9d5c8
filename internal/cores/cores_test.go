package cores

import (
	"runtime"
	"testing"
)

func TestSpare(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	want := N()
	if p := Spare(); p != SpareFactor*want || runtime.GOMAXPROCS(0) != p {
		t.Fatalf("Spare set %d (GOMAXPROCS %d), want %d", p, runtime.GOMAXPROCS(0), SpareFactor*want)
	}
	if N() != want {
		t.Fatalf("N changed from %d to %d", want, N())
	}
}
