/*
 * device_numeric.h - numeric as a 128-bit mantissa and a display scale:
 * comparison, + - * / %, unary minus / plus / abs, round / trunc / ceil /
 * floor / sign, and the casts between numeric and the integer and float
 * types, each with numeric.c's value, display scale and errors.
 * (float4/float8 -> numeric and numeric -> text live in device_casts.h.)
 *
 * Mirrors: src/backend/utils/adt/numeric.c.
 */
#ifndef PGSTROM_DEVICE_NUMERIC_H
#define PGSTROM_DEVICE_NUMERIC_H

#include "device_float.h"

/*
 * A numeric is a 128-bit mantissa of at most 38 decimal digits and a
 * display scale (device_types.def).  Every function below gives exactly
 * numeric.c's value and display scale; a result that would need more than
 * 38 digits, or an argument the device could not hold (NUM_BIG), reports
 * DEVERR_NEEDS_CPU and PostgreSQL evaluates the row.  128-bit division is
 * done here (dev_udivmod128), not by the compiler's runtime.  The
 * functions are not inlined into dev_call: inlined, their 128-bit code
 * tripled the NVRTC build time.
 */
typedef __int128            dev_i128;
typedef unsigned __int128   dev_u128;

#define NUM_NAN     (-1)
#define NUM_PINF    (-2)
#define NUM_NINF    (-3)
#define NUM_BIG     (-4)
#define NUMERIC_DSCALE_MAX          16383
#define NUMERIC_MAX_DISPLAY_SCALE   1000
#define NUMERIC_MIN_SIG_DIGITS      16

/* 10^k for 0 <= k <= 19 (10^19 < 2^64) */
DEVICE_TABLE uint64_t dev_pow10_u64[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL
};

/*
 * 10^k for 0 <= k <= 38: a table entry, or the product of two (one
 * 64 x 64-bit multiplication); 1 for k <= 0.  Hot: every numeric decoded
 * from a heap tuple and every sum or addition at a larger scale asks for
 * one, so no loop of 128-bit multiplications.
 */
DEVICE_FUNC dev_u128
dev_pow10_128(int k)
{
    if (k <= 0)
        return 1;
    if (k <= 19)
        return dev_pow10_u64[k];
    if (k <= 38)
        return (dev_u128) dev_pow10_u64[k - 19] * dev_pow10_u64[19];
    {
        /* (no caller asks: the product wraps, as 128-bit arithmetic does) */
        dev_u128 p = 1, b = 10;

        while (k > 0)
        {
            if (k & 1)
                p *= b;
            b *= b;
            k >>= 1;
        }
        return p;
    }
}

/* the largest mantissa the device holds: 10^38 - 1 */
#define DEV_NUM_LIMIT   ((((dev_u128) 0x4b3b4ca85a86c47aULL) << 64) | (dev_u128) 0x098a223fffffffffULL)

DEVICE_FUNC dev_i128
dev_num_mant(const DevDatum *d)
{
    return (dev_i128) (((dev_u128) (uint64_t) d->hi << 64) | (dev_u128) (uint64_t) d->v.i);
}

DEVICE_FUNC void
dev_num_set(DevDatum *r, dev_i128 m, int32_t scale)
{
    r->v.i = (int64_t) (uint64_t) (dev_u128) m;
    r->hi = (int64_t) (uint64_t) ((dev_u128) m >> 64);
    r->len = scale;
}

DEVICE_FUNC int32_t
dev_num_special(DevDatum *r, int32_t kind)
{
    r->v.i = 0;
    r->hi = 0;
    r->len = kind;
    return DEVERR_OK;
}

/* a finite result: within 38 digits, or the row goes to PostgreSQL */
DEVICE_FUNC int32_t
dev_num_result(DevDatum *r, bool neg, dev_u128 mag, int32_t scale)
{
    if (mag > DEV_NUM_LIMIT || scale > NUMERIC_DSCALE_MAX)
        return DEVERR_NEEDS_CPU;
    dev_num_set(r, neg ? -(dev_i128) mag : (dev_i128) mag, scale);
    return DEVERR_OK;
}

DEVICE_FUNC dev_u128
dev_u128_abs(dev_i128 m)
{
    return m < 0 ? (dev_u128) -m : (dev_u128) m;
}

/* a * b, false when the product passes 128 bits */
DEVICE_FUNC bool
dev_umul128(dev_u128 a, dev_u128 b, dev_u128 *r)
{
    uint64_t ah = (uint64_t) (a >> 64), al = (uint64_t) a;
    uint64_t bh = (uint64_t) (b >> 64), bl = (uint64_t) b;
    dev_u128 lo, cross;

    if (ah != 0 && bh != 0)
        return false;
    lo = (dev_u128) al * bl;
    cross = (dev_u128) ah * bl + (dev_u128) al * bh;    /* one term is 0 */
    if ((cross >> 64) != 0)
        return false;
    *r = lo + (cross << 64);
    return *r >= lo;
}

/* mag * 10^k, false when it passes 128 bits */
DEVICE_FUNC bool
dev_scale_up(dev_u128 mag, int k, dev_u128 *r)
{
    if (mag == 0 || k == 0)
    {
        *r = mag;
        return true;
    }
    if (k > 38)
        return false;
    return dev_umul128(mag, dev_pow10_128(k), r);
}

/* n / d and n % d (d != 0), by 64-bit division when both fit */
DEVICE_NOINLINE void
dev_udivmod128(dev_u128 n, dev_u128 d, dev_u128 *q, dev_u128 *rem)
{
    if ((n >> 64) == 0 && (d >> 64) == 0)
    {
        *q = (uint64_t) n / (uint64_t) d;
        *rem = (uint64_t) n % (uint64_t) d;
        return;
    }
    if (d > n)
    {
        *q = 0;
        *rem = n;
        return;
    }
    dev_u128 quot = 0, r = 0;

    for (int i = 127; i >= 0; i--)
    {
        r = (r << 1) | ((n >> i) & 1);
        if (r >= d)
        {
            r -= d;
            quot |= (dev_u128) 1 << i;
        }
    }
    *q = quot;
    *rem = r;
}

/* mag / 10^k rounded half away from zero (round) or truncated */
DEVICE_FUNC dev_u128
dev_scale_down(dev_u128 mag, int k, bool round)
{
    dev_u128 q, rem, d;

    if (k <= 0)
        return mag;
    if (k > 38)
        return 0;           /* mag < 10^38 <= 10^k / 2 */
    d = dev_pow10_128(k);
    dev_udivmod128(mag, d, &q, &rem);
    if (round && rem >= d - rem)
        q++;
    return q;
}

/* sign class for ordering: -inf < finite < +inf < NaN */
DEVICE_FUNC int
dev_num_class(int32_t kind)
{
    return kind == NUM_NINF ? -1 : kind == NUM_PINF ? 1 : kind == NUM_NAN ? 2 : 0;
}

/* cmp_numerics: NaN equals NaN and sorts above everything */
DEVICE_FUNC int
dev_num_cmp(const DevDatum *a, const DevDatum *b)
{
    int ca = dev_num_class(a->len), cb = dev_num_class(b->len);
    dev_i128 x, y;
    dev_u128 mx, my;
    int sa = a->len, sb = b->len;

    if (ca != 0 || cb != 0)
        return ca < cb ? -1 : (ca > cb ? 1 : 0);
    x = dev_num_mant(a);
    y = dev_num_mant(b);
    {
        int gx = x < 0 ? -1 : (x > 0), gy = y < 0 ? -1 : (y > 0), c;

        if (gx != gy || gx == 0)
            return gx < gy ? -1 : (gx > gy ? 1 : 0);
        /* same sign: compare magnitudes at the larger scale; one that
         * passes 128 bits is the larger (the other has 38 digits) */
        mx = dev_u128_abs(x);
        my = dev_u128_abs(y);
        if (sa < sb && !dev_scale_up(mx, sb - sa, &mx))
            c = 1;
        else if (sb < sa && !dev_scale_up(my, sa - sb, &my))
            c = -1;
        else
            c = mx < my ? -1 : (mx > my ? 1 : 0);
        return gx < 0 ? -c : c;
    }
}

/* numeric comparison for impl_compare (numeric_cmp) */
DEVICE_NOINLINE int32_t
dev_num_compare(const DevDatum *a, const DevDatum *b, int *c)
{
    if (a->len == NUM_BIG || b->len == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    *c = dev_num_cmp(a, b);
    return DEVERR_OK;
}

/* numeric_add / numeric_sub: the larger display scale, exact */
DEVICE_NOINLINE int32_t
impl_num_addsub(bool sub, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (sub && kb == NUM_PINF)
        kb = NUM_NINF;
    else if (sub && kb == NUM_NINF)
        kb = NUM_PINF;
    if (ka < 0 || kb < 0)
    {
        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        if (ka == NUM_PINF || ka == NUM_NINF)
            return dev_num_special(r, (kb >= 0 || kb == ka) ? ka : NUM_NAN);
        return dev_num_special(r, kb);
    }
    {
        int32_t s = ka > kb ? ka : kb;
        dev_i128 x = dev_num_mant(a), y = dev_num_mant(b);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(y);
        dev_i128 z;

        if (!dev_scale_up(mx, s - ka, &mx) || !dev_scale_up(my, s - kb, &my) ||
            mx > DEV_NUM_LIMIT || my > DEV_NUM_LIMIT)
            return DEVERR_NEEDS_CPU;
        z = (x < 0 ? -(dev_i128) mx : (dev_i128) mx) + (((y < 0) != sub) ? -(dev_i128) my : (dev_i128) my);
        return dev_num_result(r, z < 0, dev_u128_abs(z), s);
    }
}

/* numeric_sign_internal of a non-NaN value */
DEVICE_FUNC int
dev_num_sign(const DevDatum *a)
{
    dev_i128 m;

    if (a->len == NUM_PINF)
        return 1;
    if (a->len == NUM_NINF)
        return -1;
    m = dev_num_mant(a);
    return m < 0 ? -1 : (m > 0 ? 1 : 0);
}

/* numeric_mul: the exact product, display scale s1 + s2 */
DEVICE_NOINLINE int32_t
impl_num_mul(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;
    dev_u128 p;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        int s;

        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        s = dev_num_sign(a) * dev_num_sign(b);
        return dev_num_special(r, s == 0 ? NUM_NAN : (s > 0 ? NUM_PINF : NUM_NINF));
    }
    if (!dev_umul128(dev_u128_abs(dev_num_mant(a)), dev_u128_abs(dev_num_mant(b)), &p))
        return DEVERR_NEEDS_CPU;
    return dev_num_result(r, (dev_num_mant(a) < 0) != (dev_num_mant(b) < 0) && p != 0, p, ka + kb);
}

/* The weight (in base-10000 digits) and first base-10000 digit of a
 * finite value, as numeric.c's NumericVar has them (0, 0 for zero). */
DEVICE_NOINLINE void
dev_num_weight(dev_u128 mag, int32_t scale, int *weight, int *first)
{
    int n = 1, e10, w, shift;

    *weight = 0;
    *first = 0;
    if (mag == 0)
        return;
    /* decimal digits of mag (at most 38: it is within DEV_NUM_LIMIT) */
    while (n < 38 && mag >= dev_pow10_128(n))
        n++;
    e10 = n - 1 - scale;
    w = (e10 >= 0) ? e10 / 4 : -((-e10 + 3) / 4);
    shift = scale + 4 * w;
    *weight = w;
    *first = (int) (shift >= 0 ? dev_scale_down(mag, shift, false) : mag * dev_pow10_128(-shift));
}

/* numeric_div: select_div_scale's result scale, rounded half away from
 * zero at it */
DEVICE_NOINLINE int32_t
impl_num_div(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        if (ka == NUM_PINF || ka == NUM_NINF)
        {
            int s;

            if (kb < 0)
                return dev_num_special(r, NUM_NAN);
            s = dev_num_sign(b);
            if (s == 0)
                return DEVERR_DIVISION_BY_ZERO;
            return dev_num_special(r, (s > 0) == (ka == NUM_PINF) ? NUM_PINF : NUM_NINF);
        }
        /* finite / infinity: zero */
        dev_num_set(r, 0, 0);
        return DEVERR_OK;
    }
    {
        dev_i128 x = dev_num_mant(a), y = dev_num_mant(b);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(y), n, q, rem;
        int w1, f1, w2, f2, qweight, rscale;

        if (my == 0)
            return DEVERR_DIVISION_BY_ZERO;
        dev_num_weight(mx, ka, &w1, &f1);
        dev_num_weight(my, kb, &w2, &f2);
        qweight = w1 - w2;
        if (f1 <= f2)
            qweight--;
        rscale = NUMERIC_MIN_SIG_DIGITS - qweight * 4;
        rscale = rscale > ka ? rscale : ka;
        rscale = rscale > kb ? rscale : kb;
        rscale = rscale > 0 ? rscale : 0;
        rscale = rscale < NUMERIC_MAX_DISPLAY_SCALE ? rscale : NUMERIC_MAX_DISPLAY_SCALE;
        /* x / y at rscale = mx * 10^(rscale - ka + kb) / my */
        if (!dev_scale_up(mx, rscale - ka + kb, &n))
            return DEVERR_NEEDS_CPU;
        dev_udivmod128(n, my, &q, &rem);
        if (rem >= my - rem)
            q++;
        return dev_num_result(r, ((x < 0) != (y < 0)) && q != 0, q, rscale);
    }
}

/* numeric_mod: x - trunc(x / y) * y, display scale max(s1, s2) */
DEVICE_NOINLINE int32_t
impl_num_mod(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        if (ka < 0)         /* NaN, or infinity % anything */
            return dev_num_special(r, NUM_NAN);
        if (kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        *r = *a;            /* finite % infinity */
        return DEVERR_OK;
    }
    {
        int32_t s = ka > kb ? ka : kb;
        dev_i128 x = dev_num_mant(a);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(dev_num_mant(b)), q, rem;

        if (my == 0)
            return DEVERR_DIVISION_BY_ZERO;
        if (!dev_scale_up(mx, s - ka, &mx) || !dev_scale_up(my, s - kb, &my))
            return DEVERR_NEEDS_CPU;
        dev_udivmod128(mx, my, &q, &rem);
        return dev_num_result(r, x < 0 && rem != 0, rem, s);
    }
}

/* numeric_uminus (op 0), numeric_uplus (1), numeric_abs (2) */
DEVICE_NOINLINE int32_t
impl_num_unary(int op, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k < 0)
    {
        if (k == NUM_NAN || op == 1)
            return dev_num_special(r, k);
        if (op == 2)
            return dev_num_special(r, NUM_PINF);
        return dev_num_special(r, k == NUM_PINF ? NUM_NINF : NUM_PINF);
    }
    m = dev_num_mant(a);
    if (op == 0)
        m = -m;
    else if (op == 2 && m < 0)
        m = -m;
    dev_num_set(r, m, k);
    return DEVERR_OK;
}

/* round(numeric, int) (op 0) and trunc(numeric, int) (op 1): the display
 * scale becomes max(scale, 0); ceil (2), floor (3): scale 0; sign (4) */
DEVICE_NOINLINE int32_t
impl_num_round(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t k = a->len, t;
    dev_i128 m;
    dev_u128 mag, q;
    bool neg;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (op == 4)
    {
        if (k == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        dev_num_set(r, dev_num_sign(a), 0);
        return DEVERR_OK;
    }
    if (k < 0)
        return dev_num_special(r, k);
    m = dev_num_mant(a);
    neg = m < 0;
    mag = dev_u128_abs(m);
    if (op >= 2)
    {
        bool exact;

        q = dev_scale_down(mag, k, false);
        exact = (k > 38) ? (mag == 0) : (q * dev_pow10_128(k) == mag);
        /* ceil of a positive, floor of a negative non-integer: one more */
        if (!exact && ((op == 2) != neg))
            q++;
        return dev_num_result(r, neg && q != 0, q, 0);
    }
    t = (int32_t) b->v.i;
    if (t > NUMERIC_DSCALE_MAX)
        t = NUMERIC_DSCALE_MAX;
    if (t >= k)
    {
        if (!dev_scale_up(mag, t - k, &q))
            return DEVERR_NEEDS_CPU;
        return dev_num_result(r, neg && q != 0, q, t);
    }
    /* t < k: drop k - t digits (t may be negative: round to tens ...) */
    {
        int64_t drop = (int64_t) k - t;

        q = dev_scale_down(mag, drop > 39 ? 39 : (int) drop, op == 0);
        if (t < 0 && q != 0 && !dev_scale_up(q, -t > 39 ? 39 : -t, &q))
            return DEVERR_NEEDS_CPU;
        return dev_num_result(r, neg && q != 0, q, t > 0 ? t : 0);
    }
}

/* numeric -> int2/int4/int8: rounded half away from zero, then the
 * type's range */
DEVICE_NOINLINE int32_t
impl_num_to_int(int res, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;
    dev_u128 q;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k == NUM_NAN)
        return res == DT_INT2 ? DEVERR_NUMERIC_NAN_INT2
             : res == DT_INT4 ? DEVERR_NUMERIC_NAN_INT4 : DEVERR_NUMERIC_NAN_INT8;
    if (k < 0)
        return res == DT_INT2 ? DEVERR_NUMERIC_INF_INT2
             : res == DT_INT4 ? DEVERR_NUMERIC_INF_INT4 : DEVERR_NUMERIC_INF_INT8;
    m = dev_num_mant(a);
    q = dev_scale_down(dev_u128_abs(m), k, true);
    if (q > ((dev_u128) 1 << 63) || (m >= 0 && q == ((dev_u128) 1 << 63)))
        return dev_int_range_error(res);
    return dev_int_result(res, m < 0 ? (int64_t) -(dev_i128) q : (int64_t) q, r);
}

/* int -> numeric: exact, scale 0 */
DEVICE_FUNC int32_t
impl_int_to_num(const DevDatum *a, DevDatum *r)
{
    dev_num_set(r, (dev_i128) a->v.i, 0);
    return DEVERR_OK;
}

/*
 * numeric -> float8 / float4.  PostgreSQL prints the numeric and reads the
 * text back (a correctly rounded conversion).  When the mantissa and the
 * power of ten are both exact in the float type, one IEEE division is that
 * correctly rounded value; anything else goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_num_to_float(int res, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;
    dev_u128 mag;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k < 0)
    {
        double v = k == NUM_NAN ? dev_nan() : (k == NUM_PINF ? dev_inf() : -dev_inf());

        if (res == DT_FLOAT4)
            r->v.f4 = (float) v;
        else
            r->v.f8 = v;
        return DEVERR_OK;
    }
    m = dev_num_mant(a);
    mag = dev_u128_abs(m);
    if (res == DT_FLOAT4)
    {
        float p = 1.0f;

        if (mag > ((dev_u128) 1 << 24) || k > 10)
            return DEVERR_NEEDS_CPU;
        for (int i = 0; i < k; i++)
            p *= 10.0f;
        r->v.i = 0;
        r->v.f4 = (float) (int64_t) m / p;
    }
    else
    {
        double p = 1.0;

        if (mag > ((dev_u128) 1 << 53) || k > 22)
            return DEVERR_NEEDS_CPU;
        for (int i = 0; i < k; i++)
            p *= 10.0;
        r->v.f8 = (double) (int64_t) m / p;
    }
    return DEVERR_OK;
}

#define IMPL_NUM_ADD(res, ta, tb)       impl_num_addsub(false, &args[0], &args[1], r)
#define IMPL_NUM_SUB(res, ta, tb)       impl_num_addsub(true, &args[0], &args[1], r)
#define IMPL_NUM_MUL(res, ta, tb)       impl_num_mul(&args[0], &args[1], r)
#define IMPL_NUM_DIV(res, ta, tb)       impl_num_div(&args[0], &args[1], r)
#define IMPL_NUM_MOD(res, ta, tb)       impl_num_mod(&args[0], &args[1], r)
#define IMPL_NUM_NEG(res, ta, tb)       impl_num_unary(0, &args[0], r)
#define IMPL_NUM_PLUS(res, ta, tb)      impl_num_unary(1, &args[0], r)
#define IMPL_NUM_ABS(res, ta, tb)       impl_num_unary(2, &args[0], r)
#define IMPL_NUM_ROUND(res, ta, tb)     impl_num_round(0, &args[0], &args[1], r)
#define IMPL_NUM_TRUNC(res, ta, tb)     impl_num_round(1, &args[0], &args[1], r)
#define IMPL_NUM_CEIL(res, ta, tb)      impl_num_round(2, &args[0], &args[0], r)
#define IMPL_NUM_FLOOR(res, ta, tb)     impl_num_round(3, &args[0], &args[0], r)
#define IMPL_NUM_SIGN(res, ta, tb)      impl_num_round(4, &args[0], &args[0], r)
#define IMPL_NUM_TO_INT(res, ta, tb)    impl_num_to_int(res, &args[0], r)
#define IMPL_INT_TO_NUM(res, ta, tb)    impl_int_to_num(&args[0], r)
#define IMPL_NUM_TO_FLOAT(res, ta, tb)  impl_num_to_float(res, &args[0], r)

#endif  /* PGSTROM_DEVICE_NUMERIC_H */
