// Package poseidon implements Poseidon over BLS12-381 Fr exactly as neptune
// (v1 circuit, the version Filecoin uses) defines it: Grain LFSR round
// constants, Cauchy MDS matrix, x^5 S-box, domain tag in state[0], output
// state[1], plus the compressed round constants and sparse matrices neptune
// derives for its optimized hashing and its circuit.
package poseidon

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// MaxArity is the largest arity supported (neptune goes up to 36).
const MaxArity = 36

// HashKind selects how the domain tag is derived.
type HashKind int

const (
	// MerkleTree uses tag 2^arity − 1 (every Filecoin tree).
	MerkleTree HashKind = iota
	// ConstantLength uses tag length·2^64; a preimage up to the arity is
	// zero-padded (Hash), a longer one goes through the sponge (SpongeHash).
	ConstantLength
	// Custom uses tag id·2^40 (SnapDeals uses id 1).
	Custom
)

// HashType is a domain-separation choice; Param is the length or custom id.
type HashType struct {
	Kind  HashKind
	Param uint64
}

// DomainTag returns the field element put in state[0].
func (h HashType) DomainTag(arity int) (fr.Element, error) {
	var tag fr.Element
	switch h.Kind {
	case MerkleTree:
		if arity < 1 || arity > 63 {
			return tag, fmt.Errorf("poseidon: merkle tag for arity %d out of range", arity)
		}
		tag.SetUint64(1<<uint(arity) - 1)
	case ConstantLength:
		if h.Param == 0 || h.Param > 1<<32 {
			return tag, fmt.Errorf("poseidon: constant length %d out of range", h.Param)
		}
		var p fr.Element
		p.SetUint64(1 << 32)
		p.Square(&p)
		tag.SetUint64(h.Param)
		tag.Mul(&tag, &p)
	case Custom:
		if h.Param < 1 || h.Param > 256 {
			return tag, fmt.Errorf("poseidon: custom domain id %d outside 1..256", h.Param)
		}
		tag.SetUint64(h.Param << 40)
	default:
		return tag, fmt.Errorf("poseidon: unknown hash kind %d", h.Kind)
	}
	return tag, nil
}

// SnapDealsType is HashType::Custom(CType::Arbitrary(1)), tag 2^40.
var SnapDealsType = HashType{Kind: Custom, Param: 1}

// Constants holds everything a permutation of one arity needs. New hands
// every caller of a type the same Constants, whose slices are also shared
// between all types of one (arity, strength): treat them as read-only.
type Constants struct {
	Arity, Width                              int
	FullRounds, HalfFullRounds, PartialRounds int
	Strength                                  Strength
	Type                                      HashType
	DomainTag                                 fr.Element
	// RoundConstants are the Grain constants, Width per round.
	RoundConstants []fr.Element
	// MDS is the Cauchy matrix (symmetric); MDSInv its inverse.
	MDS, MDSInv matrix
	// CompressedRoundConstants are added after S-boxes only (FullRounds·Width + PartialRounds values).
	CompressedRoundConstants []fr.Element
	// PreSparseMatrix replaces the MDS in the last initial full round.
	PreSparseMatrix matrix
	// SparseMatrices replace the MDS in the partial rounds, in order of use.
	SparseMatrices []SparseMatrix
	// mdsCols and preSparseCols are the columns of MDS and PreSparseMatrix: a row vector
	// times the matrix is one inner product per column (vectorized where the CPU allows).
	mdsCols, preSparseCols []fr.Vector
}

// MDSEntry returns M[i][j].
func (c *Constants) MDSEntry(i, j int) fr.Element { return c.MDS[i][j] }

// PreSparseEntry returns the pre-sparse matrix entry (i, j).
func (c *Constants) PreSparseEntry(i, j int) fr.Element { return c.PreSparseMatrix[i][j] }

type cacheKey struct {
	arity    int
	strength Strength
}

var (
	cacheMu sync.Mutex
	cache   = map[cacheKey]*Constants{}
)

type typeKey struct {
	arity    int
	strength Strength
	ht       HashType
}

// byType holds New's results. Gadgets ask for their constants once per hash, on every core at
// once (a WindowPoSt partition's witness: 235,000 hashes), so a hit must take no lock.
var byType sync.Map // typeKey → *Constants

// New returns the constants for an arity, strength and hash type, shared by every caller (treat
// them as read-only). The expensive part is computed once per (arity, strength).
func New(arity int, s Strength, ht HashType) (*Constants, error) {
	key := typeKey{arity, s, ht}
	if c, ok := byType.Load(key); ok {
		return c.(*Constants), nil
	}
	c, err := newConstants(arity, s, ht)
	if err != nil {
		return nil, err
	}
	// Only the types whose parameter is bounded are kept, so that the map stays small: a
	// ConstantLength longer than the arity (the sponge's) can have any length, and a
	// MerkleTree's parameter, which its tag ignores, any value.
	if (ht.Kind == ConstantLength && ht.Param > uint64(arity)) || (ht.Kind == MerkleTree && ht.Param != 0) {
		return c, nil
	}
	shared, _ := byType.LoadOrStore(key, c)
	return shared.(*Constants), nil
}

func newConstants(arity int, s Strength, ht HashType) (*Constants, error) {
	if arity < 1 || arity > MaxArity {
		return nil, fmt.Errorf("poseidon: arity %d outside 1..%d", arity, MaxArity)
	}
	if s != Standard && s != Strengthened {
		return nil, fmt.Errorf("poseidon: unknown strength %d", int(s))
	}
	tag, err := ht.DomainTag(arity)
	if err != nil {
		return nil, err
	}
	base, err := baseConstants(arity, s)
	if err != nil {
		return nil, err
	}
	c := *base
	c.Type = ht
	c.DomainTag = tag
	return &c, nil
}

// MustMerkle returns the Standard MerkleTree constants of an arity and panics
// on an unsupported arity (a programming error).
func MustMerkle(arity int) *Constants {
	c, err := New(arity, Standard, HashType{Kind: MerkleTree})
	if err != nil {
		panic(err)
	}
	return c
}

func baseConstants(arity int, s Strength) (*Constants, error) {
	key := cacheKey{arity, s}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c, ok := cache[key]; ok {
		return c, nil
	}
	c, err := derive(arity, s)
	if err != nil {
		return nil, err
	}
	cache[key] = c
	return c, nil
}

func derive(arity int, s Strength) (*Constants, error) {
	t := arity + 1
	rf, rp := RoundNumbers(arity, s)
	c := &Constants{
		Arity: arity, Width: t, FullRounds: rf, HalfFullRounds: rf / 2, PartialRounds: rp,
		Strength: s, RoundConstants: roundConstants(t, rf, rp), MDS: cauchyMDS(t),
	}
	inv, err := c.MDS.inverse()
	if err != nil {
		return nil, fmt.Errorf("poseidon: inverting MDS of width %d: %w", t, err)
	}
	c.MDSInv = inv
	c.CompressedRoundConstants = compressRoundConstants(c)
	pre, sparse, err := factorToSparse(c.MDS.transpose(), rp)
	if err != nil {
		return nil, fmt.Errorf("poseidon: factoring MDS of width %d: %w", t, err)
	}
	c.PreSparseMatrix, c.SparseMatrices = pre, sparse
	c.mdsCols, c.preSparseCols = c.MDS.columns(), pre.columns()
	if got, want := len(c.CompressedRoundConstants), rf*t+rp; got != want {
		return nil, fmt.Errorf("poseidon: %d compressed constants, want %d", got, want)
	}
	return c, nil
}

// compressRoundConstants moves every round key behind the preceding S-box
// layer (through M⁻¹) and folds the partial rounds' keys down to one scalar
// per round, fully preprocessing the partial rounds as neptune does.
func compressRoundConstants(c *Constants) []fr.Element {
	t, half, rp := c.Width, c.HalfFullRounds, c.PartialRounds
	key := func(r int) []fr.Element { return c.RoundConstants[r*t : (r+1)*t] }
	res := append([]fr.Element(nil), key(0)...)
	for i := 0; i < half-1; i++ {
		res = append(res, c.MDSInv.leftApply(key(i+1))...)
	}
	final := half + rp
	acc := append([]fr.Element(nil), key(final)...)
	partial := make([]fr.Element, 0, rp)
	for i := 0; i < rp; i++ {
		inv := c.MDSInv.leftApply(acc)
		partial = append(partial, inv[0])
		inv[0].SetZero()
		prev := key(final - i - 1)
		for j := range inv {
			inv[j].Add(&inv[j], &prev[j])
		}
		acc = inv
	}
	res = append(res, c.MDSInv.leftApply(acc)...)
	for i := len(partial) - 1; i >= 0; i-- {
		res = append(res, partial[i])
	}
	for i := 1; i < half; i++ {
		res = append(res, c.MDSInv.leftApply(key(i+final))...)
	}
	return res
}
