package gpuprove

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/snarkd/snarkd/groth16"
)

// TestSRSKeysNeverReused: every parameter set gets a key of its own, also one allocated where
// a collected set lived (whose resident vectors may still be on a device).
func TestSRSKeysNeverReused(t *testing.T) {
	k := uniqueKeys[groth16.Parameters]{prefix: "params"}
	first := &groth16.Parameters{}
	key := k.key(first)
	if again := k.key(first); again != key {
		t.Fatalf("one set, two keys: %s, %s", key, again)
	}
	addr := uintptr(unsafe.Pointer(first))
	first = nil
	seen := map[string]bool{key: true}
	reused := false
	for i := 0; i < 200 && !reused; i++ {
		runtime.GC()
		for j := 0; j < 64; j++ {
			pk := &groth16.Parameters{}
			s := k.key(pk)
			if seen[s] {
				t.Fatalf("key %s given twice", s)
			}
			seen[s] = true
			if uintptr(unsafe.Pointer(pk)) == addr {
				reused = true
				break
			}
		}
	}
	t.Logf("address reused: %v; %d keys", reused, len(seen))
	// Entries go with their sets.
	for i := 0; i < 20; i++ {
		runtime.GC()
		k.mu.Lock()
		n := len(k.m)
		k.mu.Unlock()
		if n <= 1 {
			return
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) > 64 {
		t.Errorf("%d keys kept for collected sets", len(k.m))
	}
}
