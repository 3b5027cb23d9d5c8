package realrust

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
)

// tree lays out a module root with a nested package directory and, when withData, the data
// directory beside the root; it returns the package directory and the data directory.
func tree(t *testing.T, withData bool) (pkg, data string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	pkg = filepath.Join(root, "filecoin", "sealer")
	data = filepath.Join(base, "shared", "data", "real-rust")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if withData {
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return pkg, data
}

func TestLocate(t *testing.T) {
	pkg, data := tree(t, true)
	bare, _ := tree(t, false)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noMod := t.TempDir()
	cases := []struct {
		name     string
		wd       string
		override string
		want     string // "" when not found
	}{
		{"beside the root, from a nested package", pkg, "", data},
		{"beside the root, from the root", filepath.Dir(filepath.Dir(pkg)), "", data},
		{"override", bare, data, data},
		{"override wins over the default", pkg, bare, bare},
		{"no data beside the root", bare, "", ""},
		{"override missing", pkg, filepath.Join(noMod, "missing"), ""},
		{"override a file", pkg, file, ""},
		{"no go.mod above", noMod, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Locate(c.wd, c.override)
			if c.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("Locate = %q, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Clean(got) != filepath.Clean(c.want) {
				t.Fatalf("Locate = %q, want %q", got, c.want)
			}
		})
	}
}

// recorder is a testing.TB that records Skipf and Fatalf and stops the caller as they do.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

type stopped struct{}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	panic(stopped{})
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	panic(stopped{})
}

func (r *recorder) dir() (dir string) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stopped); !ok {
				panic(v)
			}
		}
	}()
	return Dir(r)
}

func TestDir(t *testing.T) {
	pkg, data := tree(t, true)
	bare, _ := tree(t, false)
	cases := []struct {
		name          string
		wd, override  string
		ci            string
		want          string
		skip, failure bool
	}{
		{"found", pkg, "", "", data, false, false},
		{"found under CI", pkg, "", "true", data, false, false},
		{"override", bare, data, "true", data, false, false},
		{"missing skips", bare, "", "", "", true, false},
		{"missing skips unless CI is true", bare, "", "1", "", true, false},
		{"missing fails under CI", bare, "", "true", "", false, true},
		{"bad override fails", pkg, filepath.Join(bare, "missing"), "", "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(c.wd)
			t.Setenv(EnvDir, c.override)
			t.Setenv(envCI, c.ci)
			r := &recorder{TB: t}
			got := r.dir()
			if r.skipped != c.skip || r.failed != c.failure {
				t.Fatalf("skipped %v failed %v (%q), want skipped %v failed %v", r.skipped, r.failed, r.msg, c.skip, c.failure)
			}
			if (c.skip || c.failure) && !strings.Contains(r.msg, EnvDir) && !strings.Contains(r.msg, envCI) {
				t.Errorf("message %q names neither %s nor %s", r.msg, EnvDir, envCI)
			}
			if c.want != "" && filepath.Clean(got) != filepath.Clean(c.want) {
				t.Fatalf("Dir = %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseIDAddress(t *testing.T) {
	cases := []struct {
		in   string
		want abi.ActorID
		ok   bool
	}{
		{"t0106", 106, true},
		{"f01000", 1000, true},
		{"t00", 0, true},
		{"t1106", 0, false},
		{"t0", 0, false},
		{"x0106", 0, false},
		{"t0-1", 0, false},
		{"t0abc", 0, false},
	}
	for _, c := range cases {
		got, err := ParseIDAddress(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseIDAddress(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// storeConfig encodes a StoreConfig as bincode does.
func storeConfig(b []byte, c StoreConfig) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(c.Path)))
	b = append(b, c.Path...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(c.ID)))
	b = append(b, c.ID...)
	if c.HasSize {
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, c.Size)
	} else {
		b = append(b, 0)
	}
	return binary.LittleEndian.AppendUint64(b, c.RowsToDiscard)
}

func TestParseTAux(t *testing.T) {
	want := TAux{
		Labels:    []StoreConfig{{"/c", "layer-1", 64, true, 5}, {"/c", "layer-2", 0, false, 5}},
		TreeD:     StoreConfig{"/c", "tree-d", 127, true, 5},
		TreeRLast: StoreConfig{"/c", "tree-r-last", 73, true, 1},
		TreeC:     StoreConfig{"/c", "tree-c", 73, true, 1},
	}
	good := binary.LittleEndian.AppendUint64(nil, uint64(len(want.Labels)))
	for _, c := range append(append([]StoreConfig(nil), want.Labels...), want.TreeD, want.TreeRLast, want.TreeC) {
		good = storeConfig(good, c)
	}
	badTag := append([]byte(nil), good...)
	badTag[8+8+2+8+7] = 2 // labels[0].size tag
	cases := []struct {
		name    string
		in      []byte
		errPart string // "" for success
	}{
		{"valid", good, ""},
		{"truncated", good[:len(good)-1], "tree_c_config.rows_to_discard"},
		{"trailing", append(append([]byte(nil), good...), 0), "trailing"},
		{"bad option tag", badTag, "labels[0].size"},
		{"huge label count", binary.LittleEndian.AppendUint64(nil, 1<<40), "labels length"},
		{"empty", nil, "labels length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTAux(c.in)
			if c.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), c.errPart) {
					t.Fatalf("ParseTAux error %v, want one naming %q", err, c.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ParseTAux = %+v, want %+v", got, want)
			}
		})
	}
}

func TestParsePAux(t *testing.T) {
	good := make([]byte, 64)
	good[0], good[32] = 1, 2
	high := append([]byte(nil), good...)
	high[63] = 0xff // comm_r_last ≥ r
	cases := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"valid", good, true},
		{"short", good[:63], false},
		{"long", append(append([]byte(nil), good...), 0), false},
		{"not a field element", high, false},
	}
	for _, c := range cases {
		commC, commRLast, err := ParsePAux(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%s: ParsePAux error %v, want ok %v", c.name, err, c.ok)
		}
		if c.ok && (commC[0] != 1 || commRLast[0] != 2) {
			t.Errorf("%s: ParsePAux = %x, %x", c.name, commC, commRLast)
		}
	}
}

func TestGenesisTicket(t *testing.T) {
	const want = "79ac3dd7defaad6d40e033a1c89124df3cbefdf072868b1924e562f0d4204189"
	got := GenesisTicket()
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("GenesisTicket = %x, want %s", got, want)
	}
}

// TestLoadGenesis reads the real data: two StackedDrg2KiBV1 sectors of miner 106, each tree R
// cache file holding just the root (rows_to_discard 1 of a 3-row tree), which p_aux repeats.
func TestLoadGenesis(t *testing.T) {
	sectors, err := LoadGenesis(Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sectors) != 2 {
		t.Fatalf("%d sectors, want 2", len(sectors))
	}
	seen := map[abi.SectorNumber]bool{}
	for _, s := range sectors {
		seen[s.Number] = true
		if s.Miner != 106 || s.ProofType != abi.RegisteredSealProof_StackedDrg2KiBV1 {
			t.Errorf("sector %d: miner %d proof type %d", s.Number, s.Miner, s.ProofType)
		}
		if len(s.Replica) != 2048 {
			t.Errorf("sector %d: replica of %d bytes", s.Number, len(s.Replica))
		}
		if string(s.TreeRLast) != string(s.CommRLast[:]) {
			t.Errorf("sector %d: tree R file %x, p_aux comm_r_last %x", s.Number, s.TreeRLast, s.CommRLast)
		}
		if !s.PieceCID.Equals(s.CommD) {
			t.Errorf("sector %d: piece %s, CommD %s", s.Number, s.PieceCID, s.CommD)
		}
	}
	if !seen[0] || !seen[1] {
		t.Errorf("sector numbers %v, want 0 and 1", seen)
	}
}
