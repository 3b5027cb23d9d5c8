package gpu

import (
	"errors"
	"math/rand"
	"testing"
)

func TestRegion(t *testing.T) {
	const base = DevicePtr(1 << 40)
	r := NewRegion(base, 4096)
	a, err := r.Alloc(1) // rounded to 256
	if err != nil || a != base {
		t.Fatalf("Alloc = %#x, %v", a, err)
	}
	b, _ := r.Alloc(1024)
	c, _ := r.Alloc(2048)
	if b != base+256 || c != base+1280 || r.InUse() != 3328 {
		t.Fatalf("layout %#x %#x, in use %d", b, c, r.InUse())
	}
	if _, err := r.Alloc(1024); !errors.Is(err, ErrOverReservation) || IsOutOfMemory(err) {
		t.Fatalf("over-region Alloc = %v, want ErrOverReservation and no OOM", err)
	}
	if err := r.Free(b + 1); err == nil {
		t.Fatal("freeing an interior address succeeded")
	}
	for _, p := range []DevicePtr{a, c, b} {
		if err := r.Free(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Free(a); err == nil {
		t.Fatal("double free succeeded")
	}
	// Everything coalesced back: the whole region is one span again.
	if p, err := r.Alloc(4096); err != nil || p != base {
		t.Fatalf("whole-region Alloc after frees = %#x, %v", p, err)
	}
	if r.Peak() != 4096 {
		t.Fatalf("peak %d", r.Peak())
	}
}

func TestRegionRandom(t *testing.T) {
	const size = 1 << 20
	r := NewRegion(4096, size)
	rng := rand.New(rand.NewSource(7))
	live := map[DevicePtr]uint64{}
	for range 5000 {
		if len(live) > 0 && rng.Intn(2) == 0 {
			for p := range live {
				if err := r.Free(p); err != nil {
					t.Fatal(err)
				}
				delete(live, p)
				break
			}
			continue
		}
		n := uint64(rng.Intn(64<<10) + 1)
		p, err := r.Alloc(n)
		if err != nil {
			continue
		}
		if p < 4096 || uint64(p-4096)+n > size || (p-4096)%RegionAlign != 0 {
			t.Fatalf("allocation %#x+%d outside the region or unaligned", p, n)
		}
		for q, m := range live {
			if p < q+DevicePtr(m) && q < p+DevicePtr(n) {
				t.Fatalf("%#x+%d overlaps %#x+%d", p, n, q, m)
			}
		}
		live[p] = n
	}
	for p := range live {
		if err := r.Free(p); err != nil {
			t.Fatal(err)
		}
	}
	if r.InUse() != 0 || len(r.free) != 1 || r.free[0] != (span{0, size}) {
		t.Fatalf("after freeing everything: in use %d, free list %v", r.InUse(), r.free)
	}
}
