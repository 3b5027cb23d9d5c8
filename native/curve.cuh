// Short Weierstrass (a = 0) points over Fp (G1) and Fp2 (G2) for host and device.
//
// affine_t matches gnark-crypto's G1Affine / G2Affine {X, Y}; (0, 0) is the point at infinity,
// as in gnark-crypto. xyzz_t is the extended Jacobian form (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2)
// used for bucket sums; ZZ = 0 is infinity, so an all-zero buffer is a valid array of identities.
// Formulas: add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1 (EFD, "xyzz" coordinates).
#pragma once

#include "field.cuh"

namespace snarkd {

template <class F>
struct affine_t {
    F x, y;
    SNARKD_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
    SNARKD_HD affine_t neg() const { return {x, y.neg()}; }
};

template <class F>
struct xyzz_t {
    F x, y, zz, zzz;

    SNARKD_HD static xyzz_t inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    SNARKD_HD bool is_inf() const { return zz.is_zero(); }
    SNARKD_HD static xyzz_t from_affine(const affine_t<F> &p) {
        if (p.is_inf()) return inf();
        return {p.x, p.y, F::one(), F::one()};
    }
    SNARKD_HD xyzz_t neg() const { return {x, y.neg(), zz, zzz}; }

    // 2·this (dbl-2008-s-1).
    SNARKD_HD xyzz_t dbl() const {
        if (is_inf()) return *this;
        F u = y.dbl();
        F v = u.sqr();
        F w = u * v;
        F s = x * v;
        F x2 = x.sqr();
        F m = x2.dbl() + x2;
        xyzz_t r;
        r.x = m.sqr() - s.dbl();
        r.y = F::mul_sub(m, s - r.x, w, y);
        r.zz = v * zz;
        r.zzz = w * zzz;
        return r;
    }

    // 2·p for affine p (mdbl-2008-s-1).
    SNARKD_HD static xyzz_t dbl_affine(const affine_t<F> &p) {
        F u = p.y.dbl();
        F v = u.sqr();
        F w = u * v;
        F s = p.x * v;
        F x2 = p.x.sqr();
        F m = x2.dbl() + x2;
        xyzz_t r;
        r.x = m.sqr() - s.dbl();
        r.y = F::mul_sub(m, s - r.x, w, p.y);
        r.zz = v;
        r.zzz = w;
        return r;
    }

    // this + p for affine p (madd-2008-s), complete for every input pair.
    SNARKD_HD void add_affine(const affine_t<F> &p) {
        if (p.is_inf()) return;
        if (is_inf()) {
            *this = from_affine(p);
            return;
        }
        F u2 = p.x * zz;
        F s2 = p.y * zzz;
        F pp_ = u2 - x;
        F r = s2 - y;
        if (pp_.is_zero()) {
            if (r.is_zero())
                *this = dbl_affine(p);
            else
                *this = inf();
            return;
        }
        F pp = pp_.sqr();
        F ppp = pp_ * pp;
        F q = x * pp;
        F x3 = r.sqr() - ppp - q.dbl();
        y = F::mul_sub(r, q - x3, y, ppp);
        x = x3;
        zz = zz * pp;
        zzz = zzz * ppp;
    }

    // this + o (add-2008-s), complete for every input pair.
    SNARKD_HD void add(const xyzz_t &o) {
        if (o.is_inf()) return;
        if (is_inf()) {
            *this = o;
            return;
        }
        F u1 = x * o.zz;
        F u2 = o.x * zz;
        F s1 = y * o.zzz;
        F s2 = o.y * zzz;
        F pp_ = u2 - u1;
        F r = s2 - s1;
        if (pp_.is_zero()) {
            if (r.is_zero())
                *this = dbl();
            else
                *this = inf();
            return;
        }
        F pp = pp_.sqr();
        F ppp = pp_ * pp;
        F q = u1 * pp;
        F x3 = r.sqr() - ppp - q.dbl();
        y = F::mul_sub(r, q - x3, s1, ppp);
        x = x3;
        zz = zz * o.zz * pp;
        zzz = zzz * o.zzz * ppp;
    }
};

using g1_affine = affine_t<fp_t>;
using g1_xyzz = xyzz_t<fp_t>;
using g2_affine = affine_t<fp2_t>;
using g2_xyzz = xyzz_t<fp2_t>;

static_assert(sizeof(fr_t) == 32, "fr layout");
static_assert(sizeof(fp_t) == 48, "fp layout");
static_assert(sizeof(g1_affine) == 96, "G1Affine layout");
static_assert(sizeof(g2_affine) == 192, "G2Affine layout");

}  // namespace snarkd
