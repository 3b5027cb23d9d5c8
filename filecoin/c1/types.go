// Package c1 decodes, validates and encodes the SealCommitPhase1Output JSON that filecoin-ffi
// passes to SealCommitPhase2 (serde_json of rust-filecoin-proofs-api's SealCommitPhase1Output),
// and the Lotus Commit2In wrapper around it.
//
// The Go types mirror the serde layout field for field and in the same order, so that encoding a
// decoded output reproduces the JSON rust-fil-proofs writes.
package c1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Domain is a 32-byte tree node, commitment, seed or ticket. Poseidon and SHA-256 domains are
// little-endian field-element representations; serde writes them as arrays of 32 numbers.
type Domain [32]byte

// MarshalJSON writes the 32 bytes as a JSON array of numbers, as serde does.
func (d Domain) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32*4+2)
	b = append(b, '[')
	for i, x := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return append(b, ']'), nil
}

// errDomain is wrapped with details by UnmarshalJSON.
var errDomain = errors.New("expected an array of 32 integers in 0..255")

// UnmarshalJSON reads exactly 32 integers in 0..255; anything else is an error (encoding/json
// would silently zero-fill short arrays and drop extra elements).
func (d *Domain) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return errDomain
	}
	body := b[1 : len(b)-1]
	n := 0
	for {
		body = bytes.TrimLeft(body, " \t\r\n")
		if len(body) == 0 {
			break
		}
		end := 0
		for end < len(body) && body[end] >= '0' && body[end] <= '9' {
			end++
		}
		if end == 0 || end > 3 || (end > 1 && body[0] == '0') {
			return fmt.Errorf("%w: element %d is not a plain integer", errDomain, n)
		}
		v, _ := strconv.Atoi(string(body[:end]))
		if v > 255 {
			return fmt.Errorf("%w: element %d is %d", errDomain, n, v)
		}
		if n >= 32 {
			return fmt.Errorf("%w: more than 32 elements", errDomain)
		}
		d[n] = byte(v)
		n++
		body = bytes.TrimLeft(body[end:], " \t\r\n")
		if len(body) == 0 {
			break
		}
		if body[0] != ',' {
			return fmt.Errorf("%w: unexpected %q after element %d", errDomain, body[0], n-1)
		}
		body = body[1:]
		if len(bytes.TrimSpace(body)) == 0 {
			return fmt.Errorf("%w: trailing comma", errDomain)
		}
	}
	if n != 32 {
		return fmt.Errorf("%w: got %d elements", errDomain, n)
	}
	return nil
}

// IsZero reports whether every byte is zero.
func (d Domain) IsZero() bool { return d == Domain{} }

// Element returns d as a field element; it fails unless d is a canonical little-endian
// representation (< r), as blstrs' from_repr does.
func (d Domain) Element() (fr.Element, error) {
	var be [32]byte
	for i := range d {
		be[31-i] = d[i]
	}
	var e fr.Element
	if err := e.SetBytesCanonical(be[:]); err != nil {
		return e, errors.New("not a canonical field element (≥ r)")
	}
	return e, nil
}

// MustElement is Element for values already validated.
func (d Domain) MustElement() fr.Element {
	e, err := d.Element()
	if err != nil {
		panic(err)
	}
	return e
}

// DomainOf returns the little-endian representation of e.
func DomainOf(e *fr.Element) Domain {
	be := e.Bytes()
	var d Domain
	for i := range be {
		d[i] = be[31-i]
	}
	return d
}

// PathElement is one level of an inclusion path: the arity−1 sibling hashes and the position
// of the path node among the arity children.
type PathElement struct {
	Hashes []Domain `json:"hashes"`
	Index  uint64   `json:"index"`
}

// InclusionPath is a list of levels from the leaf up.
type InclusionPath struct {
	Path []PathElement `json:"path"`
}

// ProofKind is the MerkleProof variant: a single tree, a tree of sub-trees, or a top tree.
type ProofKind int

// Merkle proof variants.
const (
	Single ProofKind = iota + 1
	Sub
	Top
)

// String is the serde variant name.
func (k ProofKind) String() string {
	switch k {
	case Single:
		return "Single"
	case Sub:
		return "Sub"
	case Top:
		return "Top"
	}
	return fmt.Sprintf("ProofKind(%d)", int(k))
}

// MerkleProof is storage-proofs-core's MerkleProof: {"data": {"Single"|"Sub"|"Top": {...}}}.
// Base, SubPath and TopPath are the levels of the base tree, the sub-tree layer and the top
// layer; SubPath is empty for Single and TopPath empty unless Top.
type MerkleProof struct {
	Kind    ProofKind
	Root    Domain
	Leaf    Domain
	Base    []PathElement
	SubPath []PathElement
	TopPath []PathElement
}

// Levels returns every path level from the leaf up: base, then sub, then top.
func (p *MerkleProof) Levels() []PathElement {
	out := make([]PathElement, 0, len(p.Base)+len(p.SubPath)+len(p.TopPath))
	out = append(out, p.Base...)
	out = append(out, p.SubPath...)
	return append(out, p.TopPath...)
}

// wire forms of the serde enum.
type singleWire struct {
	Root Domain        `json:"root"`
	Leaf Domain        `json:"leaf"`
	Path InclusionPath `json:"path"`
}

type subWire struct {
	BaseProof InclusionPath `json:"base_proof"`
	SubProof  InclusionPath `json:"sub_proof"`
	Root      Domain        `json:"root"`
	Leaf      Domain        `json:"leaf"`
}

type topWire struct {
	BaseProof InclusionPath `json:"base_proof"`
	SubProof  InclusionPath `json:"sub_proof"`
	TopProof  InclusionPath `json:"top_proof"`
	Root      Domain        `json:"root"`
	Leaf      Domain        `json:"leaf"`
}

type dataWire struct {
	Single *singleWire `json:"Single,omitempty"`
	Sub    *subWire    `json:"Sub,omitempty"`
	Top    *topWire    `json:"Top,omitempty"`
}

type merkleWire struct {
	Data *dataWire `json:"data"`
}

// merkleWireIn is merkleWire as read: "data" is serde's externally tagged enum, an object with
// exactly one key naming the variant. Unknown fields of a struct are ignored, but an unknown
// variant is an error in serde, so the variant keys are checked here rather than left to
// encoding/json, which would ignore them.
type merkleWireIn struct {
	Data map[string]json.RawMessage `json:"data"`
}

// MarshalJSON writes the serde enum form.
func (p MerkleProof) MarshalJSON() ([]byte, error) {
	var d dataWire
	switch p.Kind {
	case Single:
		d.Single = &singleWire{Root: p.Root, Leaf: p.Leaf, Path: InclusionPath{nonNil(p.Base)}}
	case Sub:
		d.Sub = &subWire{BaseProof: InclusionPath{nonNil(p.Base)}, SubProof: InclusionPath{nonNil(p.SubPath)}, Root: p.Root, Leaf: p.Leaf}
	case Top:
		d.Top = &topWire{BaseProof: InclusionPath{nonNil(p.Base)}, SubProof: InclusionPath{nonNil(p.SubPath)}, TopProof: InclusionPath{nonNil(p.TopPath)}, Root: p.Root, Leaf: p.Leaf}
	default:
		return nil, fmt.Errorf("merkle proof has no variant (kind %d)", int(p.Kind))
	}
	return json.Marshal(merkleWire{Data: &d})
}

func nonNil(p []PathElement) []PathElement {
	if p == nil {
		return []PathElement{}
	}
	return p
}

// UnmarshalJSON reads the serde enum form; exactly one variant must be present. Unknown fields
// beside "data" and inside a variant are ignored, as serde ignores them.
func (p *MerkleProof) UnmarshalJSON(b []byte) error {
	var in merkleWireIn
	if err := unmarshal(b, &in); err != nil {
		return err
	}
	if in.Data == nil {
		return errors.New(`merkle proof: missing "data"`)
	}
	if len(in.Data) != 1 {
		return fmt.Errorf("merkle proof: %d variants of Single/Sub/Top present, want exactly 1", len(in.Data))
	}
	var w merkleWire
	w.Data = &dataWire{}
	for k, v := range in.Data {
		var err error
		switch k {
		case "Single":
			err = unmarshal(v, &w.Data.Single)
		case "Sub":
			err = unmarshal(v, &w.Data.Sub)
		case "Top":
			err = unmarshal(v, &w.Data.Top)
		default:
			return fmt.Errorf("merkle proof: unknown variant %q, want Single, Sub or Top", k)
		}
		if err != nil {
			return fmt.Errorf("merkle proof: %s: %w", k, err)
		}
	}
	n := 0
	if w.Data.Single != nil {
		n++
		*p = MerkleProof{Kind: Single, Root: w.Data.Single.Root, Leaf: w.Data.Single.Leaf, Base: w.Data.Single.Path.Path}
	}
	if w.Data.Sub != nil {
		n++
		s := w.Data.Sub
		*p = MerkleProof{Kind: Sub, Root: s.Root, Leaf: s.Leaf, Base: s.BaseProof.Path, SubPath: s.SubProof.Path}
	}
	if w.Data.Top != nil {
		n++
		s := w.Data.Top
		*p = MerkleProof{Kind: Top, Root: s.Root, Leaf: s.Leaf, Base: s.BaseProof.Path, SubPath: s.SubProof.Path, TopPath: s.TopProof.Path}
	}
	if n != 1 {
		return fmt.Errorf("merkle proof: %d variants of Single/Sub/Top present, want exactly 1", n)
	}
	return nil
}

// Column is one node's labels in every layer (rows[layer-1]).
type Column struct {
	Index uint32          `json:"index"`
	Rows  []Domain        `json:"rows"`
	H     json.RawMessage `json:"_h"` // serde's PhantomData: always null
}

// ColumnProof opens a column in tree C.
type ColumnProof struct {
	Column         Column      `json:"column"`
	InclusionProof MerkleProof `json:"inclusion_proof"`
}

// ReplicaColumnProof holds the challenged node's column and those of its 6 DRG and 8 expander
// parents.
type ReplicaColumnProof struct {
	CX         ColumnProof   `json:"c_x"`
	DRGParents []ColumnProof `json:"drg_parents"`
	ExpParents []ColumnProof `json:"exp_parents"`
}

// LabelingProof is the preimage of one label: its 37 parent labels, layer and node.
type LabelingProof struct {
	Parents    []Domain `json:"parents"`
	LayerIndex uint32   `json:"layer_index"`
	Node       uint64   `json:"node"`
}

// EncodingProof is the labeling proof of the last layer (the encoding key).
type EncodingProof struct {
	Parents    []Domain `json:"parents"`
	LayerIndex uint32   `json:"layer_index"`
	Node       uint64   `json:"node"`
}

// ChallengeProof is stacked::Proof: everything proved about one challenged node.
type ChallengeProof struct {
	CommDProofs         MerkleProof        `json:"comm_d_proofs"`
	CommRLastProof      MerkleProof        `json:"comm_r_last_proof"`
	ReplicaColumnProofs ReplicaColumnProof `json:"replica_column_proofs"`
	LabelingProofs      []LabelingProof    `json:"labeling_proofs"`
	EncodingProof       EncodingProof      `json:"encoding_proof"`
}

// Challenge returns the challenged node (the tree-D path index is authoritative for the
// circuit; validation checks that every other copy agrees).
func (c *ChallengeProof) Challenge() uint64 { return uint64(c.ReplicaColumnProofs.CX.Column.Index) }

// Output is SealCommitPhase1Output. VanillaProofs has exactly one key, the VanillaSealProof
// variant ("StackedDrg2KiBV1", …), holding proofs indexed [partition][challenge].
type Output struct {
	RegisteredProof string                        `json:"registered_proof"`
	VanillaProofs   map[string][][]ChallengeProof `json:"vanilla_proofs"`
	CommR           Domain                        `json:"comm_r"`
	CommD           Domain                        `json:"comm_d"`
	ReplicaID       Domain                        `json:"replica_id"`
	Seed            Domain                        `json:"seed"`
	Ticket          Domain                        `json:"ticket"`
}

// Partitions returns the vanilla proofs of the single variant ([partition][challenge]).
func (o *Output) Partitions() [][]ChallengeProof {
	for _, v := range o.VanillaProofs {
		return v
	}
	return nil
}

// Commit2In is the Lotus/lotus-bench wrapper {SectorNum, Phase1Out, SectorSize}; Phase1Out holds
// the C1 JSON (base64 in the wrapper's JSON).
type Commit2In struct {
	SectorNum  int64
	Phase1Out  []byte
	SectorSize uint64
}

// RandomDomain reads a canonical field element from r: 32 bytes with the top two bits cleared,
// as Fr32-padded sector data is. Fixture generators use it for random leaves and commitments.
func RandomDomain(r io.Reader) (Domain, error) {
	var d Domain
	if _, err := io.ReadFull(r, d[:]); err != nil {
		return d, err
	}
	d[31] &= 0x3f
	return d, nil
}
