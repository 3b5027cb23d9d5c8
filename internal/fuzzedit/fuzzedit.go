// Package fuzzedit builds fuzz inputs as small edits of real files. Fuzzing an edit (where,
// how many bytes to delete, what to put there) instead of a whole file keeps the fuzzer's own
// values small, so its mutation and minimization stay cheap, while the decoder under test
// still reads complete, nearly valid inputs.
package fuzzedit

// Splice returns base with the del bytes at off replaced by patch: off is taken modulo
// len(base)+1 and del is clamped to the end. A nil base gives patch alone (raw bytes).
func Splice(base []byte, off, del uint32, patch []byte) []byte {
	o := int(off % uint32(len(base)+1))
	e := o + int(min(del, uint32(len(base)-o)))
	out := make([]byte, 0, len(base)-(e-o)+len(patch))
	return append(append(append(out, base[:o]...), patch...), base[e:]...)
}
