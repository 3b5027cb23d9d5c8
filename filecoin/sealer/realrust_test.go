package sealer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/internal/realrust"
)

// Checks of a genesis sector against the Rust data, in the order checkGenesis runs them.
const (
	chkFr32      = "fr32"        // data = replica − key is Fr32 padded (top two bits of each node clear)
	chkCommD     = "comm_d"      // tree D root of the data = manifest CommD
	chkCommC     = "comm_c"      // tree C root of the label columns = p_aux comm_c
	chkCommRLast = "comm_r_last" // tree R root of the replica = p_aux comm_r_last
	chkTreeFile  = "tree_r_file" // tree R nodes = the cached rows of sc-02-data-tree-r-last.dat
	chkCommR     = "comm_r"      // Poseidon(comm_c, comm_r_last) = manifest CommR
)

var allChecks = []string{chkFr32, chkCommD, chkCommC, chkCommRLast, chkTreeFile, chkCommR}

// genesisInput is what reproducing a genesis sector's commitments takes: the public sealing
// inputs and the Rust stack's outputs.
type genesisInput struct {
	proof        *prooftypes.SealProof
	porepID      [32]byte
	proverID     [32]byte
	sectorNumber uint64
	ticket       [32]byte
	commD        c1.Domain // from the manifest CID
	commR        c1.Domain // from the manifest CID
	replica      []c1.Domain
	commC        c1.Domain // p_aux
	commRLast    c1.Domain // p_aux
	treeDiscard  uint64    // rows_to_discard of tree R (t_aux)
	treeFile     []byte
}

// genesisResult is what snarkd computes for a genesis sector.
type genesisResult struct {
	replicaID [32]byte
	data      []c1.Domain
	// failed maps each failed check to its error.
	failed map[string]error
}

func loadGenesis(t *testing.T) []realrust.GenesisSector {
	t.Helper()
	sectors, err := realrust.LoadGenesis(realrust.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	return sectors
}

func genesisInputOf(t *testing.T, s *realrust.GenesisSector) *genesisInput {
	t.Helper()
	p, err := prooftypes.Lookup(s.ProofType)
	if err != nil {
		t.Fatalf("sector %d: %v", s.Number, err)
	}
	in := &genesisInput{
		proof: p, porepID: p.PoRepID(), proverID: prooftypes.ProverID(s.Miner),
		sectorNumber: uint64(s.Number), ticket: realrust.GenesisTicket(),
		commC: s.CommC, commRLast: s.CommRLast, treeDiscard: s.TAux.TreeRLast.RowsToDiscard,
		treeFile: slices.Clone(s.TreeRLast),
	}
	if in.commD, err = commcid.Unsealed(s.CommD, "manifest CommD"); err != nil {
		t.Fatalf("sector %d: %v", s.Number, err)
	}
	if in.commR, err = commcid.Sealed(s.CommR, "manifest CommR"); err != nil {
		t.Fatalf("sector %d: %v", s.Number, err)
	}
	if uint64(len(s.Replica)) != p.SectorSize {
		t.Fatalf("sector %d: replica of %d bytes for %s", s.Number, len(s.Replica), p.Name)
	}
	in.replica = make([]c1.Domain, p.Nodes())
	for i := range in.replica {
		copy(in.replica[i][:], s.Replica[32*i:])
	}
	return in
}

// treeRows returns every row of a single (no sub- or top-tree) tree of the given arity over
// leaves, leaves first, as merkletree lays out its store.
func treeRows(leaves []c1.Domain, arity int) ([][]c1.Domain, error) {
	rows := [][]c1.Domain{leaves}
	for cur := leaves; len(cur) > 1; {
		if len(cur)%arity != 0 {
			return nil, fmt.Errorf("row of %d nodes does not split by arity %d", len(cur), arity)
		}
		next := make([]c1.Domain, len(cur)/arity)
		for i := range next {
			var err error
			if next[i], err = merkle.Poseidon(cur[i*arity : (i+1)*arity]); err != nil {
				return nil, fmt.Errorf("row %d node %d: %w", len(rows), i, err)
			}
		}
		rows = append(rows, next)
		cur = next
	}
	return rows, nil
}

// checkTreeFile compares a LevelCacheStore file with the tree: the file holds the rows above
// the leaves and the rowsToDiscard rows after them, that is the top
// len(rows) − 1 − rowsToDiscard rows, bottom to top, each left to right.
func checkTreeFile(rows [][]c1.Domain, rowsToDiscard uint64, file []byte) error {
	if rowsToDiscard+1 >= uint64(len(rows)) {
		return fmt.Errorf("rows_to_discard %d leaves nothing of a %d-row tree", rowsToDiscard, len(rows))
	}
	var want []c1.Domain
	for _, row := range rows[1+rowsToDiscard:] {
		want = append(want, row...)
	}
	if len(file) != 32*len(want) {
		return fmt.Errorf("file of %d bytes, the cached rows of a %d-row tree with rows_to_discard %d hold %d nodes", len(file), len(rows), rowsToDiscard, len(want))
	}
	for i, d := range want {
		if got := c1.Domain(file[32*i : 32*i+32]); got != d {
			return fmt.Errorf("cached node %d: file %x, computed %x", i, got, d)
		}
	}
	return nil
}

// checkGenesis recomputes a genesis sector from its public inputs and replica with snarkd's
// code, recording every check that does not match the Rust outputs.
func checkGenesis(in *genesisInput) (*genesisResult, error) {
	p := in.proof
	res := &genesisResult{failed: map[string]error{}}
	res.replicaID = porep.ReplicaID(in.proverID, in.sectorNumber, in.ticket, in.commD, in.porepID)
	g, err := porep.NewGraph(p)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	labels := porep.Labels(g, res.replicaID, p.Layers)
	key := labels[p.Layers-1]

	res.data = make([]c1.Domain, len(in.replica))
	for i := range in.replica {
		r, err := in.replica[i].Element()
		if err != nil {
			return nil, fmt.Errorf("replica node %d: %w", i, err)
		}
		k := key[i].MustElement()
		var d fr.Element
		d.Sub(&r, &k)
		res.data[i] = c1.DomainOf(&d)
		if enc, err := porep.Encode(res.data[i], key[i]); err != nil || enc != in.replica[i] {
			return nil, fmt.Errorf("node %d: Encode(replica − key, key) = %x (%v), replica %x", i, enc, err, in.replica[i])
		}
		if res.data[i][31]&0xc0 != 0 && res.failed[chkFr32] == nil {
			res.failed[chkFr32] = fmt.Errorf("data node %d = %x has the top bits of byte 31 set", i, res.data[i])
		}
	}

	dAr, err := merkle.BinaryArities(p.Nodes())
	if err != nil {
		return nil, err
	}
	treeD, err := merkle.NewDense(res.data, dAr, merkle.Sha254)
	if err != nil {
		return nil, fmt.Errorf("tree D: %w", err)
	}
	if got := treeD.Root(); got != in.commD {
		res.failed[chkCommD] = fmt.Errorf("comm_d of replica − key %x, manifest %x", got, in.commD)
	}

	rAr, err := merkle.Arities(p.Tree, p.Nodes())
	if err != nil {
		return nil, err
	}
	columns := make([]c1.Domain, p.Nodes())
	col := make([]c1.Domain, p.Layers)
	for i := range columns {
		for l := range col {
			col[l] = labels[l][i]
		}
		if columns[i], err = merkle.Poseidon(col); err != nil {
			return nil, fmt.Errorf("column %d: %w", i, err)
		}
	}
	treeC, err := merkle.NewDense(columns, rAr, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("tree C: %w", err)
	}
	commC := treeC.Root()
	if commC != in.commC {
		res.failed[chkCommC] = fmt.Errorf("comm_c %x, p_aux %x", commC, in.commC)
	}

	treeR, err := merkle.NewDense(in.replica, rAr, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("tree R: %w", err)
	}
	commRLast := treeR.Root()
	if commRLast != in.commRLast {
		res.failed[chkCommRLast] = fmt.Errorf("comm_r_last %x, p_aux %x", commRLast, in.commRLast)
	}
	if p.Tree.Sub != 0 || p.Tree.Top != 0 {
		return nil, fmt.Errorf("tree R of shape %v is stored in several files", p.Tree)
	}
	rows, err := treeRows(in.replica, p.Tree.Base)
	if err != nil {
		return nil, fmt.Errorf("tree R rows: %w", err)
	}
	if top := rows[len(rows)-1]; len(top) != 1 || top[0] != commRLast {
		return nil, fmt.Errorf("tree R rows end in %x, merkle.NewDense root %x", top, commRLast)
	}
	if err := checkTreeFile(rows, in.treeDiscard, in.treeFile); err != nil {
		res.failed[chkTreeFile] = err
	}

	commR, err := merkle.Poseidon([]c1.Domain{commC, commRLast})
	if err != nil {
		return nil, fmt.Errorf("comm_r: %w", err)
	}
	if commR != in.commR {
		res.failed[chkCommR] = fmt.Errorf("Poseidon(comm_c, comm_r_last) %x, manifest %x", commR, in.commR)
	}
	return res, nil
}

// TestRealRustGenesisCommitments reproduces the commitments of the sectors lotus-seed
// pre-sealed with the Rust stack: replica ID, SDR labels, data = replica − last layer, comm_d,
// comm_c, tree R (root and cached file) and comm_r.
func TestRealRustGenesisCommitments(t *testing.T) {
	start := time.Now()
	sectors := loadGenesis(t)
	for _, s := range sectors {
		t.Run(fmt.Sprintf("sector-%d", s.Number), func(t *testing.T) {
			in := genesisInputOf(t, &s)
			// StackedDrg2KiBV1 is registered proof 0 with nonce 0; t0106's payload is uvarint(106).
			if in.porepID != ([32]byte{}) {
				t.Errorf("porep_id of %s %x, want all zero", in.proof.Name, in.porepID)
			}
			if want := ([32]byte{0: 106}); in.proverID != want {
				t.Errorf("prover_id %x, want %x", in.proverID, want)
			}
			res, err := checkGenesis(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range allChecks {
				if err := res.failed[c]; err != nil {
					t.Errorf("%s: %v", c, err)
				}
			}
		})
	}
	t.Logf("%d sectors checked in %v", len(sectors), time.Since(start))
}

// TestRealRustGenesisSealMatches seals the data recovered from each genesis replica with
// Seal and checks that it reproduces the Rust stack's replica, replica ID and commitments.
func TestRealRustGenesisSealMatches(t *testing.T) {
	for _, s := range loadGenesis(t) {
		t.Run(fmt.Sprintf("sector-%d", s.Number), func(t *testing.T) {
			in := genesisInputOf(t, &s)
			res, err := checkGenesis(in)
			if err != nil {
				t.Fatal(err)
			}
			if err := res.failed[chkFr32]; err != nil {
				t.Fatalf("recovered data cannot be sealed: %v", err)
			}
			data := make([]byte, 0, in.proof.SectorSize)
			for _, d := range res.data {
				data = append(data, d[:]...)
			}
			sec, err := Seal(context.Background(), in.proof, data, in.proverID, in.sectorNumber, in.ticket)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				got, want c1.Domain
			}{
				{"comm_d", sec.CommD, in.commD},
				{"replica_id", sec.ReplicaID, res.replicaID},
				{"comm_c", sec.TreeC.Root(), in.commC},
				{"comm_r_last", sec.TreeR.Root(), in.commRLast},
				{"comm_r", sec.CommR, in.commR},
			} {
				if c.got != c.want {
					t.Errorf("Seal %s %x, Rust %x", c.name, c.got, c.want)
				}
			}
			for i, want := range in.replica {
				if got := sec.TreeR.Leaf(uint64(i)); got != want {
					t.Fatalf("Seal replica node %d %x, Rust %x", i, got, want)
				}
			}
			sealed, err := commcid.SealedCID(sec.CommR)
			if err != nil {
				t.Fatal(err)
			}
			unsealed, err := commcid.UnsealedCID(sec.CommD)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ name, got, want string }{
				{"CommR", sealed.String(), s.CommR.String()},
				{"CommD", unsealed.String(), s.CommD.String()},
				{"PieceCID", unsealed.String(), s.PieceCID.String()},
			} {
				if c.got != c.want {
					t.Errorf("%s CID %s, manifest %s", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestRealRustGenesisDetectsTampering changes one input or Rust output at a time and checks
// that exactly the checks depending on it fail, so the checks cannot pass vacuously.
func TestRealRustGenesisDetectsTampering(t *testing.T) {
	sectors := loadGenesis(t)
	v11, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	// Everything that follows from the replica ID: labels, hence data and columns.
	replicaIDChecks := []string{chkFr32, chkCommD, chkCommC, chkCommR}
	cases := []struct {
		name   string
		mutate func(in *genesisInput)
		fail   []string
	}{
		{"untouched", func(*genesisInput) {}, nil},
		{"replica node 5 byte 0", func(in *genesisInput) { in.replica[5][0] ^= 1 }, []string{chkCommD, chkCommRLast, chkTreeFile, chkCommR}},
		{"replica node 63 byte 30", func(in *genesisInput) { in.replica[63][30] ^= 0x10 }, []string{chkCommD, chkCommRLast, chkTreeFile, chkCommR}},
		// Both swapped nodes still decode to Fr32-valid data (as about half of all values do).
		{"replica nodes swapped", func(in *genesisInput) { in.replica[0], in.replica[1] = in.replica[1], in.replica[0] }, []string{chkCommD, chkCommRLast, chkTreeFile, chkCommR}},
		{"ticket", func(in *genesisInput) { in.ticket[0] ^= 1 }, replicaIDChecks},
		{"sector number", func(in *genesisInput) { in.sectorNumber ^= 1 }, replicaIDChecks},
		{"prover id", func(in *genesisInput) { in.proverID[0]++ }, replicaIDChecks},
		{"porep id of V1_1", func(in *genesisInput) { in.porepID = v11.PoRepID() }, replicaIDChecks},
		{"graph of V1_1", func(in *genesisInput) { in.proof = v11 }, []string{chkFr32, chkCommD, chkCommC, chkCommR}},
		{"p_aux comm_c", func(in *genesisInput) { in.commC[0] ^= 1 }, []string{chkCommC}},
		{"p_aux comm_r_last", func(in *genesisInput) { in.commRLast[0] ^= 1 }, []string{chkCommRLast}},
		{"manifest comm_r", func(in *genesisInput) { in.commR[0] ^= 1 }, []string{chkCommR}},
		{"tree R file byte", func(in *genesisInput) { in.treeFile[len(in.treeFile)-1] ^= 1 }, []string{chkTreeFile}},
		{"tree R file short", func(in *genesisInput) { in.treeFile = in.treeFile[:len(in.treeFile)-32] }, []string{chkTreeFile}},
	}
	for _, s := range sectors {
		for _, c := range cases {
			t.Run(fmt.Sprintf("sector-%d/%s", s.Number, c.name), func(t *testing.T) {
				in := genesisInputOf(t, &s)
				c.mutate(in)
				res, err := checkGenesis(in)
				if err != nil {
					t.Fatal(err)
				}
				for _, chk := range allChecks {
					want := slices.Contains(c.fail, chk)
					if err := res.failed[chk]; (err != nil) != want {
						t.Errorf("%s failed = %v (%v), want failed = %v", chk, err != nil, err, want)
					}
				}
			})
		}
	}
}

// TestRealRustGenesisStoreConfigs checks the t_aux store configs of each genesis sector against
// snarkd's description of the proof type: one label store per layer of nodes elements, tree D
// binary over the nodes, trees R and C of the proof type's shape, and merkletree's default
// rows_to_discard for each.
func TestRealRustGenesisStoreConfigs(t *testing.T) {
	// defaultRowsToDiscard is merkletree's StoreConfig::default_rows_to_discard.
	defaultRowsToDiscard := func(rows uint64, arity int) uint64 {
		switch {
		case rows <= 2:
			return 0
		case rows == 3:
			return 1
		case arity == 2:
			return min(rows-2, 7)
		case arity == 4:
			return min(rows-2, 5)
		}
		return min(rows-2, 2)
	}
	// treeLen is the number of nodes and rows of a single tree of the given arity.
	treeLen := func(leaves uint64, arity int) (nodes, rows uint64) {
		for n := leaves; ; n /= uint64(arity) {
			nodes += n
			rows++
			if n == 1 {
				return nodes, rows
			}
		}
	}
	for _, s := range loadGenesis(t) {
		t.Run(fmt.Sprintf("sector-%d", s.Number), func(t *testing.T) {
			p, err := prooftypes.Lookup(s.ProofType)
			if err != nil {
				t.Fatal(err)
			}
			ta := s.TAux
			if len(ta.Labels) != p.Layers {
				t.Fatalf("%d label stores, %s has %d layers", len(ta.Labels), p.Name, p.Layers)
			}
			nodes := p.Nodes()
			dLen, dRows := treeLen(nodes, 2)
			rLen, rRows := treeLen(nodes, p.Tree.Base)
			type storeCase struct {
				name     string
				got      realrust.StoreConfig
				id       string
				size     uint64
				discards uint64
			}
			cases := []storeCase{
				{"tree_d_config", ta.TreeD, "tree-d", dLen, defaultRowsToDiscard(dRows, 2)},
				{"tree_r_last_config", ta.TreeRLast, "tree-r-last", rLen, defaultRowsToDiscard(rRows, p.Tree.Base)},
				{"tree_c_config", ta.TreeC, "tree-c", rLen, defaultRowsToDiscard(rRows, p.Tree.Base)},
			}
			// Label stores are sized as a layer but take tree D's rows_to_discard.
			for i, l := range ta.Labels {
				cases = append(cases, storeCase{fmt.Sprintf("labels[%d]", i), l, fmt.Sprintf("layer-%d", i+1), nodes, defaultRowsToDiscard(dRows, 2)})
			}
			for _, c := range cases {
				if c.got.ID != c.id || !c.got.HasSize || c.got.Size != c.size || c.got.RowsToDiscard != c.discards {
					t.Errorf("%s: id %q size %d (set %v) rows_to_discard %d, want %q size %d rows_to_discard %d",
						c.name, c.got.ID, c.got.Size, c.got.HasSize, c.got.RowsToDiscard, c.id, c.size, c.discards)
				}
			}
		})
	}
}
