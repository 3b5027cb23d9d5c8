package prover

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// testSetups lists the test-circuit setups in memory and on disk.
func testSetups(t *testing.T, c *ParamCache, dir string) (mem, disk []string) {
	t.Helper()
	for _, pi := range c.Loaded() {
		if pi.Kind == rpcapi.KindTest {
			mem = append(mem, pi.Circuit)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".params"); ok && strings.HasPrefix(name, "test-") {
			disk = append(disk, name)
		}
	}
	sort.Strings(mem)
	sort.Strings(disk)
	return mem, disk
}

// TestTestSetupLimit: beyond WithTestSetupLimit the least recently used test setups are dropped
// from memory and from disk; a setup a proof holds is kept until it is idle; the bound applies
// at start to files left by an earlier run, in the order they were last used.
func TestTestSetupLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "params")
	ctx := context.Background()
	c := NewParamCache(dir).WithTestSetupLimit(2)
	for _, step := range []struct {
		seed uint64
		want []string // setups kept, in memory and on disk, after using seed
	}{
		{1, []string{"test-16-1"}},
		{2, []string{"test-16-1", "test-16-2"}},
		{3, []string{"test-16-2", "test-16-3"}},
		{2, []string{"test-16-2", "test-16-3"}},
		{4, []string{"test-16-2", "test-16-4"}}, // 3 is the least recently used
	} {
		if _, err := c.Test(ctx, 16, step.seed); err != nil {
			t.Fatal(err)
		}
		mem, disk := testSetups(t, c, dir)
		if !reflect.DeepEqual(mem, step.want) || !reflect.DeepEqual(disk, step.want) {
			t.Fatalf("after seed %d: memory %v, disk %v; want %v in both", step.seed, mem, disk, step.want)
		}
	}

	// A held setup is not dropped while its proof runs.
	hctx, use := WithUsage(ctx)
	if _, err := c.Test(hctx, 16, 2); err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{5, 6} {
		if _, err := c.Test(ctx, 16, seed); err != nil {
			t.Fatal(err)
		}
	}
	if mem, _ := testSetups(t, c, dir); !reflect.DeepEqual(mem, []string{"test-16-2", "test-16-6"}) {
		t.Fatalf("with test-16-2 held: memory %v; want it kept beside the newest", mem)
	}
	use.Release()
	if _, err := c.Test(ctx, 16, 7); err != nil {
		t.Fatal(err)
	}
	want := []string{"test-16-6", "test-16-7"}
	if mem, disk := testSetups(t, c, dir); !reflect.DeepEqual(mem, want) || !reflect.DeepEqual(disk, want) {
		t.Fatalf("after release: memory %v, disk %v; want %v", mem, disk, want)
	}

	// A new cache on the directory, with a smaller bound, keeps the most recently used file.
	c2 := NewParamCache(dir).WithTestSetupLimit(1)
	if _, disk := testSetups(t, c2, dir); !reflect.DeepEqual(disk, []string{"test-16-7"}) {
		t.Fatalf("at start with a bound of 1: disk %v, want [test-16-7]", disk)
	}
	// Without a bound nothing is dropped.
	c3 := NewParamCache(dir)
	for _, seed := range []uint64{8, 9, 10} {
		if _, err := c3.Test(ctx, 16, seed); err != nil {
			t.Fatal(err)
		}
	}
	if mem, disk := testSetups(t, c3, dir); len(mem) != 3 || len(disk) != 4 {
		t.Fatalf("unbounded: memory %v, disk %v", mem, disk)
	}
}
