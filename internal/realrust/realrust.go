// Package realrust locates and reads the data produced by the Rust proofs stack that snarkd's
// regression tests check against (shared/data/real-rust beside the repository, described by
// its SOURCES.md): the 2 KiB sectors lotus-seed pre-sealed for miner t0106, with their
// manifest, sealed replicas and cache files (p_aux, t_aux, tree R).
//
// It is meant for tests only.
package realrust

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"
	"golang.org/x/crypto/blake2b"

	"github.com/snarkd/snarkd/filecoin/c1"
)

// EnvDir overrides where the data lives.
const EnvDir = "SNARKD_REAL_RUST_DATA"

// envCI, when "true", turns missing data into a test failure instead of a skip.
const envCI = "CI"

// relDir is where the data lives relative to the repository root (the directory with go.mod).
var relDir = filepath.Join("..", "shared", "data", "real-rust")

// ErrNotFound is wrapped by Locate when the data directory does not exist.
var ErrNotFound = errors.New("real Rust data not found")

// Locate returns the data directory: override when set, else <root>/../shared/data/real-rust
// where root is the first directory at or above wd holding a go.mod.
func Locate(wd, override string) (string, error) {
	if override != "" {
		if err := isDir(override); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvDir, override, err)
		}
		return override, nil
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, relDir)
	if err := isDir(dir); err != nil {
		return "", fmt.Errorf("beside the module root %s: %w", root, err)
	}
	return dir, nil
}

func moduleRoot(wd string) (string, error) {
	dir, err := filepath.Abs(wd)
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above %s: %w", wd, ErrNotFound)
		}
		dir = parent
	}
}

func isDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrNotFound, dir)
	}
	return nil
}

// Dir returns the data directory for a test. Without the data it skips the test, unless CI=true
// (CI always has the data) or EnvDir names a directory that is not there, where it fails it.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("real Rust data: %v", err)
	}
	override := os.Getenv(EnvDir)
	dir, err := Locate(wd, override)
	if err != nil {
		if override != "" {
			t.Fatalf("real Rust data: %v", err)
		}
		if os.Getenv(envCI) == "true" {
			t.Fatalf("real Rust data (required when %s=true): %v", envCI, err)
		}
		t.Skipf("real Rust data: %v (set %s to its directory)", err, EnvDir)
	}
	return dir
}

// GenesisTicketPreimage is lotus-seed's default --ticket-preimage; the ticket of the genesis
// sectors is its BLAKE2b-256.
const GenesisTicketPreimage = "lotus is fire"

// GenesisTicket is the sealing ticket of the genesis sectors.
func GenesisTicket() [32]byte { return blake2b.Sum256([]byte(GenesisTicketPreimage)) }

// StoreConfig is merkletree's StoreConfig as bincode writes it in t_aux.
type StoreConfig struct {
	Path          string
	ID            string
	Size          uint64 // number of elements (nodes of the tree, or of the layer)
	HasSize       bool   // Size is Some
	RowsToDiscard uint64 // tree rows above the leaves left out of the cache file
}

// TAux is rust-fil-proofs' TemporaryAux: the store configs of the label layers and of trees D,
// R (last) and C.
type TAux struct {
	Labels                  []StoreConfig
	TreeD, TreeRLast, TreeC StoreConfig
}

// GenesisSector is one pre-sealed sector with the files the Rust stack left for it.
type GenesisSector struct {
	Miner     abi.ActorID
	Number    abi.SectorNumber
	ProofType abi.RegisteredSealProof
	CommR     cid.Cid // manifest CommR (sealed CID)
	CommD     cid.Cid // manifest CommD (unsealed CID)
	PieceCID  cid.Cid // the deal's piece, the whole sector
	Replica   []byte  // sealed/s-t0106-N
	CommC     c1.Domain
	CommRLast c1.Domain // p_aux
	TAux      TAux
	TreeRLast []byte // sc-02-data-tree-r-last.dat
}

// GenesisDir is the directory of the genesis sectors inside the data directory.
const GenesisDir = "genesis-sectors"

// GenesisManifest is the manifest file name.
const GenesisManifest = "pre-seal-t0106.json"

type manifest map[string]struct {
	ID         string
	SectorSize uint64
	Sectors    []struct {
		CommR     cid.Cid
		CommD     cid.Cid
		SectorID  uint64
		ProofType int64
		Deal      struct {
			PieceCID  cid.Cid
			PieceSize uint64
		}
	}
}

// LoadGenesis reads every sector of the manifest in dir/genesis-sectors with its replica and
// cache files.
func LoadGenesis(dir string) ([]GenesisSector, error) {
	root := filepath.Join(dir, GenesisDir)
	b, err := os.ReadFile(filepath.Join(root, GenesisManifest))
	if err != nil {
		return nil, fmt.Errorf("genesis manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("genesis manifest %s: %w", GenesisManifest, err)
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("genesis manifest %s: %d miners, want 1", GenesisManifest, len(m))
	}
	var out []GenesisSector
	for addr, miner := range m {
		if miner.ID != addr {
			return nil, fmt.Errorf("genesis manifest: miner %q has ID %q", addr, miner.ID)
		}
		id, err := ParseIDAddress(addr)
		if err != nil {
			return nil, fmt.Errorf("genesis manifest: %w", err)
		}
		for _, s := range miner.Sectors {
			name := fmt.Sprintf("s-%s-%d", addr, s.SectorID)
			g := GenesisSector{
				Miner: id, Number: abi.SectorNumber(s.SectorID), ProofType: abi.RegisteredSealProof(s.ProofType),
				CommR: s.CommR, CommD: s.CommD, PieceCID: s.Deal.PieceCID,
			}
			if s.Deal.PieceSize != miner.SectorSize {
				return nil, fmt.Errorf("genesis sector %s: piece of %d bytes in a %d-byte sector", name, s.Deal.PieceSize, miner.SectorSize)
			}
			if g.Replica, err = os.ReadFile(filepath.Join(root, "sealed", name)); err != nil {
				return nil, fmt.Errorf("genesis sector %s replica: %w", name, err)
			}
			if uint64(len(g.Replica)) != miner.SectorSize {
				return nil, fmt.Errorf("genesis sector %s: replica of %d bytes, sector size %d", name, len(g.Replica), miner.SectorSize)
			}
			cache := filepath.Join(root, "cache", name)
			paux, err := os.ReadFile(filepath.Join(cache, "p_aux"))
			if err != nil {
				return nil, fmt.Errorf("genesis sector %s: %w", name, err)
			}
			if g.CommC, g.CommRLast, err = ParsePAux(paux); err != nil {
				return nil, fmt.Errorf("genesis sector %s p_aux: %w", name, err)
			}
			taux, err := os.ReadFile(filepath.Join(cache, "t_aux"))
			if err != nil {
				return nil, fmt.Errorf("genesis sector %s: %w", name, err)
			}
			if g.TAux, err = ParseTAux(taux); err != nil {
				return nil, fmt.Errorf("genesis sector %s t_aux: %w", name, err)
			}
			treeFile := "sc-02-data-" + g.TAux.TreeRLast.ID + ".dat"
			if g.TreeRLast, err = os.ReadFile(filepath.Join(cache, treeFile)); err != nil {
				return nil, fmt.Errorf("genesis sector %s: %w", name, err)
			}
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("genesis manifest %s lists no sectors", GenesisManifest)
	}
	return out, nil
}

// ParseIDAddress returns the actor of an ID address string ("t0106", "f0106").
func ParseIDAddress(s string) (abi.ActorID, error) {
	if len(s) < 3 || (s[0] != 't' && s[0] != 'f') || s[1] != '0' {
		return 0, fmt.Errorf("address %q is not an ID address", s)
	}
	id, err := strconv.ParseUint(s[2:], 10, 63)
	if err != nil {
		return 0, fmt.Errorf("address %q: %w", s, err)
	}
	return abi.ActorID(id), nil
}

// ParsePAux decodes p_aux, the bincode of PersistentAux { comm_c, comm_r_last }: two raw
// 32-byte domains.
func ParsePAux(b []byte) (commC, commRLast c1.Domain, err error) {
	if len(b) != 64 {
		return commC, commRLast, fmt.Errorf("%d bytes, want 64", len(b))
	}
	copy(commC[:], b[:32])
	copy(commRLast[:], b[32:])
	for name, d := range map[string]c1.Domain{"comm_c": commC, "comm_r_last": commRLast} {
		if _, err := d.Element(); err != nil {
			return commC, commRLast, fmt.Errorf("%s: %w", name, err)
		}
	}
	return commC, commRLast, nil
}

// ParseTAux decodes t_aux, the bincode of TemporaryAux { labels: Labels { labels:
// Vec<StoreConfig> }, tree_d_config, tree_r_last_config, tree_c_config } (the phantom fields
// take no bytes); StoreConfig is { path: PathBuf, id: String, size: Option<usize>,
// rows_to_discard: usize }.
func ParseTAux(b []byte) (TAux, error) {
	r := &reader{b: b}
	var t TAux
	n, err := r.u64("labels length")
	if err != nil {
		return t, err
	}
	if n > uint64(len(b)) {
		return t, fmt.Errorf("labels length %d exceeds the %d bytes", n, len(b))
	}
	for i := range n {
		c, err := r.storeConfig(fmt.Sprintf("labels[%d]", i))
		if err != nil {
			return t, err
		}
		t.Labels = append(t.Labels, c)
	}
	for _, f := range []struct {
		name string
		dst  *StoreConfig
	}{{"tree_d_config", &t.TreeD}, {"tree_r_last_config", &t.TreeRLast}, {"tree_c_config", &t.TreeC}} {
		if *f.dst, err = r.storeConfig(f.name); err != nil {
			return t, err
		}
	}
	if r.off != len(b) {
		return t, fmt.Errorf("%d trailing bytes", len(b)-r.off)
	}
	return t, nil
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) take(field string, n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		return nil, fmt.Errorf("%s (byte %d): %d bytes wanted, %d left", field, r.off, n, len(r.b)-r.off)
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

func (r *reader) u64(field string) (uint64, error) {
	b, err := r.take(field, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *reader) str(field string) (string, error) {
	n, err := r.u64(field + " length")
	if err != nil {
		return "", err
	}
	b, err := r.take(field, n)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (r *reader) storeConfig(field string) (StoreConfig, error) {
	var c StoreConfig
	var err error
	if c.Path, err = r.str(field + ".path"); err != nil {
		return c, err
	}
	if c.ID, err = r.str(field + ".id"); err != nil {
		return c, err
	}
	tag, err := r.take(field+".size", 1)
	if err != nil {
		return c, err
	}
	switch tag[0] {
	case 0:
	case 1:
		c.HasSize = true
		if c.Size, err = r.u64(field + ".size"); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("%s.size (byte %d): option tag %d", field, r.off-1, tag[0])
	}
	if c.RowsToDiscard, err = r.u64(field + ".rows_to_discard"); err != nil {
		return c, err
	}
	return c, nil
}
