package repolock

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestAcquireProbeRelease(t *testing.T) {
	repo := t.TempDir()
	if held, h, err := Probe(repo); err != nil || held || h.PID != 0 {
		t.Fatalf("no lock file: Probe = %v %+v %v", held, h, err)
	}

	l, err := Acquire(repo)
	if err != nil {
		t.Fatal(err)
	}
	held, h, err := Probe(repo)
	if err != nil || !held || h.PID != os.Getpid() || h.Listen != "" {
		t.Fatalf("held, starting: Probe = %v %+v %v", held, h, err)
	}
	if err := l.SetListen("http://127.0.0.1:9810/rpc/v0"); err != nil {
		t.Fatal(err)
	}
	held, h, err = Probe(repo)
	if err != nil || !held || h.Listen != "http://127.0.0.1:9810/rpc/v0" {
		t.Fatalf("held, listening: Probe = %v %+v %v", held, h, err)
	}

	// flock locks belong to the open file, so a second Acquire in this process conflicts too.
	_, err = Acquire(repo)
	var he *HeldError
	if !errors.As(err, &he) || he.Holder.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v", err)
	}
	for _, want := range []string{repo, "pid ", "listening on http://127.0.0.1:9810/rpc/v0", "--repo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("HeldError %q lacks %q", err, want)
		}
	}

	l.Release()
	held, h, err = Probe(repo)
	if err != nil || held || h.PID != 0 {
		t.Fatalf("released: Probe = %v %+v %v", held, h, err)
	}
	l2, err := Acquire(repo)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func TestHolderString(t *testing.T) {
	for _, tc := range []struct {
		h    Holder
		want string
	}{
		{Holder{PID: 7}, "pid 7, starting"},
		{Holder{PID: 7, Listen: "http://[::1]:1/rpc/v0"}, "pid 7, listening on http://[::1]:1/rpc/v0"},
	} {
		if got := tc.h.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.h, got, tc.want)
		}
	}
}
