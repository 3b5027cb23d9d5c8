package gpuprove

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/snarkd/snarkd/groth16"
)

// srsKeys names each parameter set's SRS on the devices with a number that is never reused in
// the process. Resident vectors outlive the parameters they were uploaded from (until their
// idle expiry or eviction), so a key derived from the set's address would let a set allocated
// where a dropped one lived find that one's vectors: the kernels would then read another
// circuit's points (a device fault that poisons the CUDA context, or a wrong MSM).
type srsKeys struct {
	mu   sync.Mutex
	next uint64
	m    map[weak.Pointer[groth16.Parameters]]string
}

// key returns pk's SRS key. Weak pointers to distinct sets differ even at a reused address;
// an entry goes when its set is collected.
func (k *srsKeys) key(pk *groth16.Parameters) string {
	wp := weak.Make(pk)
	k.mu.Lock()
	if s, ok := k.m[wp]; ok {
		k.mu.Unlock()
		return s
	}
	if k.m == nil {
		k.m = map[weak.Pointer[groth16.Parameters]]string{}
	}
	k.next++
	s := fmt.Sprintf("params-%d", k.next)
	k.m[wp] = s
	k.mu.Unlock()
	runtime.AddCleanup(pk, func(wp weak.Pointer[groth16.Parameters]) {
		k.mu.Lock()
		delete(k.m, wp)
		k.mu.Unlock()
	}, wp)
	return s
}
