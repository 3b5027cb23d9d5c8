package gpuprove

import (
	"fmt"
	"runtime"
	"sync"
	"weak"
)

// uniqueKeys names objects (parameter sets, compiled circuits) on the devices with a number
// that is never reused in the process. Resident vectors outlive the objects they were uploaded
// from (until their idle expiry or eviction), so a key derived from an object's address would let
// one allocated where a dropped one lived find that one's vectors: the kernels would then read
// another circuit's points or matrices (a device fault that poisons the CUDA context, or a wrong
// result).
type uniqueKeys[T any] struct {
	prefix string
	mu     sync.Mutex
	next   uint64
	m      map[weak.Pointer[T]]string
}

// key returns v's key. Weak pointers to distinct objects differ even at a reused address; an
// entry goes when its object is collected.
func (k *uniqueKeys[T]) key(v *T) string {
	wp := weak.Make(v)
	k.mu.Lock()
	if s, ok := k.m[wp]; ok {
		k.mu.Unlock()
		return s
	}
	if k.m == nil {
		k.m = map[weak.Pointer[T]]string{}
	}
	k.next++
	s := fmt.Sprintf("%s-%d", k.prefix, k.next)
	k.m[wp] = s
	k.mu.Unlock()
	runtime.AddCleanup(v, func(wp weak.Pointer[T]) {
		k.mu.Lock()
		delete(k.m, wp)
		k.mu.Unlock()
	}, wp)
	return s
}
