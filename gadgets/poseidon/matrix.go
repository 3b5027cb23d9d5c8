package poseidon

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// matrix is a dense square matrix, row-major: m[row][col].
type matrix [][]fr.Element

func newMatrix(n int) matrix {
	m := make(matrix, n)
	for i := range m {
		m[i] = make([]fr.Element, n)
	}
	return m
}

func (m matrix) clone() matrix {
	c := newMatrix(len(m))
	for i := range m {
		copy(c[i], m[i])
	}
	return c
}

func (m matrix) transpose() matrix {
	t := newMatrix(len(m))
	for i := range m {
		for j := range m {
			t[j][i] = m[i][j]
		}
	}
	return t
}

// columns returns the columns of m (square) as vectors, padded for dot.
func (m matrix) columns() []fr.Vector {
	cols := make([]fr.Vector, len(m))
	for j := range cols {
		cols[j] = padded(len(m))
		for i := range m {
			cols[j][i] = m[i][j]
		}
	}
	return cols
}

// mul returns a·b.
func (a matrix) mul(b matrix) matrix {
	n := len(a)
	r := newMatrix(n)
	var tmp fr.Element
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var acc fr.Element
			for k := 0; k < n; k++ {
				tmp.Mul(&a[i][k], &b[k][j])
				acc.Add(&acc, &tmp)
			}
			r[i][j] = acc
		}
	}
	return r
}

// leftApply returns m·v (v as a column vector).
func (m matrix) leftApply(v []fr.Element) []fr.Element {
	r := make([]fr.Element, len(v))
	var tmp fr.Element
	for i := range m {
		for j := range v {
			tmp.Mul(&m[i][j], &v[j])
			r[i].Add(&r[i], &tmp)
		}
	}
	return r
}

// minor drops row i and column j.
func (m matrix) minor(i, j int) matrix {
	n := len(m)
	r := make(matrix, 0, n-1)
	for ii := 0; ii < n; ii++ {
		if ii == i {
			continue
		}
		row := make([]fr.Element, 0, n-1)
		row = append(row, m[ii][:j]...)
		row = append(row, m[ii][j+1:]...)
		r = append(r, row)
	}
	return r
}

func (m matrix) isIdentity() bool {
	for i := range m {
		for j := range m[i] {
			if (i == j && !m[i][j].IsOne()) || (i != j && !m[i][j].IsZero()) {
				return false
			}
		}
	}
	return true
}

var errSingular = errors.New("poseidon: singular matrix")

// inverse computes m⁻¹ by Gauss–Jordan elimination. The inverse is unique, so
// the elimination order cannot influence the derived constants.
func (m matrix) inverse() (matrix, error) {
	n := len(m)
	a := m.clone()
	inv := newMatrix(n)
	for i := range inv {
		inv[i][i].SetOne()
	}
	var f, tmp fr.Element
	for col := 0; col < n; col++ {
		p := -1
		for r := col; r < n; r++ {
			if !a[r][col].IsZero() {
				p = r
				break
			}
		}
		if p < 0 {
			return nil, errSingular
		}
		a[col], a[p] = a[p], a[col]
		inv[col], inv[p] = inv[p], inv[col]
		var pinv fr.Element
		pinv.Inverse(&a[col][col])
		for j := 0; j < n; j++ {
			a[col][j].Mul(&a[col][j], &pinv)
			inv[col][j].Mul(&inv[col][j], &pinv)
		}
		for r := 0; r < n; r++ {
			if r == col || a[r][col].IsZero() {
				continue
			}
			f = a[r][col]
			for j := 0; j < n; j++ {
				tmp.Mul(&f, &a[col][j])
				a[r][j].Sub(&a[r][j], &tmp)
				tmp.Mul(&f, &inv[col][j])
				inv[r][j].Sub(&inv[r][j], &tmp)
			}
		}
	}
	return inv, nil
}

// cauchyMDS builds neptune's MDS matrix M[i][j] = 1/(i + t + j).
func cauchyMDS(t int) matrix {
	m := newMatrix(t)
	for i := 0; i < t; i++ {
		for j := 0; j < t; j++ {
			m[i][j].SetUint64(uint64(i + t + j))
			m[i][j].Inverse(&m[i][j])
		}
	}
	return m
}

// SparseMatrix is a matrix M” whose minor at (0,0) is the identity: WHat is
// its first column and VRest the rest of its first row.
type SparseMatrix struct {
	WHat  []fr.Element
	VRest []fr.Element
}

// primeOf is M': 1 at (0,0), zeros elsewhere in row/column 0, M's minor below.
func primeOf(m matrix) matrix {
	n := len(m)
	r := newMatrix(n)
	r[0][0].SetOne()
	for i := 1; i < n; i++ {
		copy(r[i][1:], m[i][1:])
	}
	return r
}

// doublePrimeOf is M”: first row of M, first column ŵ = M̂⁻¹·w, identity inside.
func doublePrimeOf(m matrix) (matrix, error) {
	n := len(m)
	hatInv, err := m.minor(0, 0).inverse()
	if err != nil {
		return nil, err
	}
	w := make([]fr.Element, n-1)
	for i := 1; i < n; i++ {
		w[i-1] = m[i][0]
	}
	wHat := hatInv.leftApply(w)
	r := newMatrix(n)
	copy(r[0], m[0])
	for i := 1; i < n; i++ {
		r[i][0] = wHat[i-1]
		r[i][i].SetOne()
	}
	return r, nil
}

// factorToSparse factors n rounds of base into one dense pre-sparse matrix and
// n sparse matrices (neptune's factor_to_sparse_matrixes), first-applied first.
func factorToSparse(base matrix, n int) (matrix, []SparseMatrix, error) {
	cur := base
	sparse := make([]SparseMatrix, n)
	for k := 0; k < n; k++ {
		dp, err := doublePrimeOf(cur)
		if err != nil {
			return nil, nil, err
		}
		size := len(dp)
		sm := SparseMatrix{WHat: padded(size), VRest: make([]fr.Element, size-1)}
		for i := 0; i < size; i++ {
			sm.WHat[i] = dp[i][0]
		}
		copy(sm.VRest, dp[0][1:])
		sparse[n-1-k] = sm
		cur = base.mul(primeOf(cur))
	}
	return cur, sparse, nil
}
