/*
 * device_casts.h - casts among the date/time types and between bool and
 * int4 that are not arithmetic: timestamp::time, time::interval,
 * timetz::time, date + time, int4::bool and bool::int4.  Each follows
 * timestamp.c, date.c and int.c (timestamp_time, time_interval,
 * timetz_time, datetime_timestamp, int4_bool, bool_int4): the same
 * results, infinities and errors.  And float4/float8 to numeric, as
 * numeric.c does it: the value printed with "%.6g" / "%.15g" (FLT_DIG,
 * DBL_DIG digits, rounded exactly, ties to even) and read back; and
 * the text of int2, int4, int8 and numeric values (their output
 * functions, as a cast to text calls them) and of bool (booltext).
 *
 * Mirrors: src/backend/utils/adt/timestamp.c, date.c, int.c, int8.c,
 * numeric.c (float4_numeric, float8_numeric, numeric_out) and bool.c.
 */
#ifndef PGSTROM_DEVICE_CASTS_H
#define PGSTROM_DEVICE_CASTS_H

#include "device_datetime.h"
#include "device_float.h"
#include "device_numeric.h"
#include "device_text.h"
#include "device_wide.h"

/* timestamp_time: the time of day; NULL for an infinite timestamp */
DEVICE_FUNC int32_t
impl_ts_to_time(const DevDatum *a, DevDatum *r)
{
    int64_t t = a->v.i;

    if (DEV_TS_NOT_FINITE(t))
    {
        r->isnull = 1;
        return DEVERR_OK;
    }
    /* timestamp2tm's TMODULO, the time made non-negative */
    t %= DEV_USECS_PER_DAY;
    if (t < 0)
        t += DEV_USECS_PER_DAY;
    r->v.i = t;
    return DEVERR_OK;
}

/* time_interval: the time as an interval of no days or months */
DEVICE_FUNC int32_t
impl_time_to_interval(const DevDatum *a, DevDatum *r)
{
    DevInterval v;

    v.time = a->v.i;
    v.day = 0;
    v.month = 0;
    dev_interval_set(r, v);
    return DEVERR_OK;
}

/* timetz_time: the local time, without its zone */
DEVICE_FUNC int32_t
impl_timetz_to_time(const DevDatum *a, DevDatum *r)
{
    r->v.i = a->v.i;
    return DEVERR_OK;
}

/* datetime_timestamp: date2timestamp, then the time added and checked */
DEVICE_FUNC int32_t
impl_date_pl_time(const DevDatum *d, const DevDatum *t, DevDatum *r)
{
    int32_t rc = impl_date_to_ts(d, r);

    if (rc != DEVERR_OK)
        return rc;
    if (!DEV_TS_NOT_FINITE(r->v.i))
    {
        r->v.i += t->v.i;
        if (r->v.i < DEV_MIN_TIMESTAMP || r->v.i >= DEV_END_TIMESTAMP)
            return DEVERR_TIMESTAMP_RANGE;
    }
    return DEVERR_OK;
}

/* round(num / den), ties to even (den < 2^126) */
DEVICE_FUNC dev_u128
dev_div_round_even(dev_u128 num, dev_u128 den)
{
    dev_u128 q, rem;

    dev_udivmod128(num, den, &q, &rem);
    rem <<= 1;
    if (rem > den || (rem == den && (q & 1) != 0))
        q++;
    return q;
}

/* round(m * 2^e * 10^k), exactly in 128 bits; false where it does not fit */
DEVICE_FUNC bool
dev_scaled_digits(uint64_t m, int e, int k, dev_u128 *n)
{
    dev_u128 num = m, den = 1;

    if (k > 22 || k < -38 || e > 64 || e < -120)
        return false;
    if (k >= 0)
        num *= dev_pow10_128(k);            /* < 2^53 * 10^22 < 2^127 */
    else
        den = dev_pow10_128(-k);
    if (e >= 0)
    {
        if ((num >> (126 - e)) != 0)
            return false;
        num <<= e;
    }
    else
    {
        if ((den >> (126 + e)) != 0)
            return false;
        den <<= -e;
    }
    *n = dev_div_round_even(num, den);
    return true;
}

/*
 * float4_numeric / float8_numeric: snprintf("%.*g", FLT_DIG or DBL_DIG)
 * then set_var_from_str.  %g gives P significant digits of the exact
 * binary value, rounded to nearest with ties to even, without trailing
 * zeros; the numeric's display scale is the digits after the point (0
 * for an integer).  Values whose digits need more than 128-bit arithmetic
 * here (below 1e-8 or so) or more than 38 digits go to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_float_to_num(int ta, const DevDatum *a, DevDatum *r)
{
    int P = ta == DT_FLOAT8 ? 15 : 6;
    double v = dev_as_f8(ta, a);
    union { double d; uint64_t u; } c;
    uint64_t m;
    int e, top, e2, X, L, z = 0;
    dev_u128 n, q, rem, lo, hi;
    bool neg;

    if (dev_isnan(v))
        return dev_num_special(r, NUM_NAN);
    if (v == dev_inf())
        return dev_num_special(r, NUM_PINF);
    if (v == -dev_inf())
        return dev_num_special(r, NUM_NINF);
    if (v == 0.0)
        return dev_num_result(r, false, 0, 0);  /* "-0" reads as 0 */
    neg = v < 0.0;
    c.d = neg ? -v : v;
    m = c.u & ((1ULL << 52) - 1);
    if (((c.u >> 52) & 0x7ff) == 0)
        e = -1074;                              /* subnormal */
    else
    {
        m |= 1ULL << 52;
        e = (int) ((c.u >> 52) & 0x7ff) - 1075;
    }
    /* v = m * 2^e, in [2^e2, 2^(e2 + 1)); X, its decimal exponent, first
     * estimated as floor(e2 * log10(2)), then corrected */
    top = 63;
    while (((m >> top) & 1) == 0)
        top--;
    e2 = e + top;
    X = e2 >= 0 ? (e2 * 78913) >> 18 : -((-e2 * 78913 + (1 << 18) - 1) >> 18);
    lo = dev_pow10_128(P - 1);
    hi = dev_pow10_128(P);
    for (int tries = 0;; tries++)
    {
        if (tries > 4 || !dev_scaled_digits(m, e, P - 1 - X, &n))
            return DEVERR_NEEDS_CPU;
        if (n >= hi)
            X++;                                /* (rounded up to 10^P) */
        else if (n < lo)
            X--;
        else
            break;
    }
    for (;;)
    {
        dev_udivmod128(n, 10, &q, &rem);
        if (rem != 0)
            break;
        n = q;
        z++;
    }
    L = X - (P - 1) + z;                        /* v ~ n * 10^L */
    if (L >= 0)
    {
        if (L > 38 || n > DEV_NUM_LIMIT / dev_pow10_128(L))
            return DEVERR_NEEDS_CPU;
        return dev_num_result(r, neg, n * dev_pow10_128(L), 0);
    }
    return dev_num_result(r, neg, n, -L);
}

/* the bytes of s (NUL-terminated) as a text result in scratch memory */
DEVICE_FUNC int32_t
dev_text_of(const char *s, DevDatum *r, DevScratch *scratch)
{
    int32_t n = 0;
    uint8_t *out;

    while (s[n] != 0)
        n++;
    if ((out = dev_scratch_alloc(scratch, n)) == 0)
        return DEVERR_NEEDS_CPU;
    for (int32_t i = 0; i < n; i++)
        out[i] = (uint8_t) s[i];
    r->v.i = (int64_t) out;
    r->len = n;
    return DEVERR_OK;
}

/*
 * int2out / int4out / int8out (pg_ltoa, pg_lltoa), numeric_out
 * (get_str_from_var: the digits, a point and exactly dscale decimals;
 * NaN, Infinity, -Infinity) and booltext ("true", "false"), made in the
 * row's scratch memory; a text that does not fit goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_to_text(int ta, const DevDatum *a, DevDatum *r, DevScratch *scratch)
{
    dev_u128 mag, rem;
    int32_t scale = 0, ndig, len;
    bool neg;
    uint8_t *out;

    if (ta == DT_BOOL)
        return dev_text_of(a->v.i != 0 ? "true" : "false", r, scratch);
    if (ta == DT_NUMERIC)
    {
        dev_i128 m;

        if (a->len == NUM_BIG)
            return DEVERR_NEEDS_CPU;
        if (a->len == NUM_NAN)
            return dev_text_of("NaN", r, scratch);
        if (a->len == NUM_PINF)
            return dev_text_of("Infinity", r, scratch);
        if (a->len == NUM_NINF)
            return dev_text_of("-Infinity", r, scratch);
        m = dev_num_mant(a);
        neg = m < 0;
        mag = neg ? (dev_u128) -m : (dev_u128) m;
        scale = a->len;
    }
    else
    {
        int64_t v = a->v.i;

        neg = v < 0;
        mag = neg ? (dev_u128) (0 - (uint64_t) v) : (dev_u128) (uint64_t) v;
    }
    /* digits of the magnitude (at most 39), at least scale + 1 */
    ndig = 1;
    while (ndig < 39 && mag >= dev_pow10_128(ndig))
        ndig++;
    if (ndig < scale + 1)
        ndig = scale + 1;
    if (scale < 0 || scale > PGSTROM_SCRATCH_BYTES)
        return DEVERR_NEEDS_CPU;
    len = (neg ? 1 : 0) + ndig + (scale > 0 ? 1 : 0);
    if ((out = dev_scratch_alloc(scratch, len)) == 0)
        return DEVERR_NEEDS_CPU;
    /* from the last digit back */
    for (int32_t i = len - 1, k = 0; k < ndig; k++)
    {
        if (mag >> 64 != 0)
            dev_udivmod128(mag, 10, &mag, &rem);
        else
        {
            rem = (uint64_t) mag % 10;
            mag = (uint64_t) mag / 10;
        }
        out[i--] = (uint8_t) ('0' + (int) rem);
        if (scale > 0 && k == scale - 1)
            out[i--] = '.';
    }
    if (neg)
        out[0] = '-';
    r->v.i = (int64_t) out;
    r->len = len;
    return DEVERR_OK;
}

#define IMPL_TO_TEXT(res, ta, tb)           impl_to_text(ta, &args[0], r, scratch)
#define IMPL_FLOAT_TO_NUM(res, ta, tb)      impl_float_to_num(ta, &args[0], r)
#define IMPL_TS_TO_TIME(res, ta, tb)        impl_ts_to_time(&args[0], r)
#define IMPL_TIME_TO_INTERVAL(res, ta, tb)  impl_time_to_interval(&args[0], r)
#define IMPL_TIMETZ_TO_TIME(res, ta, tb)    impl_timetz_to_time(&args[0], r)
#define IMPL_DATE_PL_TIME(res, ta, tb)      impl_date_pl_time(&args[0], &args[1], r)
/* int4_bool: non-zero is true; bool_int4: 1 or 0 */
#define IMPL_INT4_TO_BOOL(res, ta, tb)      (r->v.i = (args[0].v.i != 0), DEVERR_OK)
#define IMPL_BOOL_TO_INT4(res, ta, tb)      (r->v.i = (args[0].v.i != 0), DEVERR_OK)

#endif  /* PGSTROM_DEVICE_CASTS_H */
