package gpu

import (
	"errors"
	"fmt"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{512 << 20, "512.0 MiB"},
		{150_000_000_000, "139.7 GiB"},
	} {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestIsOutOfMemory(t *testing.T) {
	oom := &Error{Op: "alloc", Code: CodeOutOfMemory, Message: "out of memory"}
	if !IsOutOfMemory(fmt.Errorf("upload a: %w", oom)) {
		t.Fatal("wrapped OOM not recognised")
	}
	if IsOutOfMemory(&Error{Op: "launch", Code: 700}) || IsOutOfMemory(errors.New("x")) {
		t.Fatal("non-OOM error reported as OOM")
	}
}
