/*
 * device_wide.h - interval, uuid, timetz and bytea: the fixed-width types
 * PostgreSQL passes by reference (device_types.def has their layout) and
 * the byte strings.
 *
 * Owns their comparisons (called from impl_compare), interval arithmetic,
 * date/timestamp/time plus and minus interval, timestamp - timestamp and
 * time - time, and LIKE over bytea.  Each follows timestamp.c, date.c,
 * uuid.c and varlena.c: the same results, infinities and errors.
 *
 * Mirrors: src/backend/utils/adt/timestamp.c (interval), date.c (time,
 * timetz), uuid.c, varlena.c (bytea).
 */
#ifndef PGSTROM_DEVICE_WIDE_H
#define PGSTROM_DEVICE_WIDE_H

#include "device_datetime.h"
#include "device_float.h"
#include "device_numeric.h"
#include "device_text.h"

#define DEV_INT32_MIN           (-2147483647 - 1)
#define DEV_INT32_MAX           2147483647
#define DEV_MIN_TIMESTAMP       (-211813488000000000LL)
#define DEV_END_TIMESTAMP       9223371331200000000LL

/* An interval's three fields. */
typedef struct
{
    int64_t     time;           /* microseconds */
    int32_t     day;
    int32_t     month;
} DevInterval;

DEVICE_FUNC DevInterval
dev_interval_of(const DevDatum *d)
{
    DevInterval v;

    v.time = d->v.i;
    v.day = (int32_t) (uint32_t) (uint64_t) d->hi;
    v.month = (int32_t) (uint32_t) ((uint64_t) d->hi >> 32);
    return v;
}

DEVICE_FUNC void
dev_interval_set(DevDatum *r, DevInterval v)
{
    r->v.i = v.time;
    r->hi = (int64_t) (((uint64_t) (uint32_t) v.month << 32) | (uint32_t) v.day);
    r->len = 0;
}

/* INTERVAL_IS_NOBEGIN / INTERVAL_IS_NOEND: -infinity and infinity */
DEVICE_FUNC bool
dev_iv_nobegin(DevInterval v)
{
    return v.month == DEV_INT32_MIN && v.day == DEV_INT32_MIN && v.time == DEV_INT64_MIN;
}

DEVICE_FUNC bool
dev_iv_noend(DevInterval v)
{
    return v.month == DEV_INT32_MAX && v.day == DEV_INT32_MAX && v.time == DEV_INT64_MAX;
}

DEVICE_FUNC DevInterval
dev_iv_infinite(bool positive)
{
    DevInterval v;

    v.time = positive ? DEV_INT64_MAX : DEV_INT64_MIN;
    v.day = positive ? DEV_INT32_MAX : DEV_INT32_MIN;
    v.month = v.day;
    return v;
}

/* a + b in int32 (b may be an int32's negation) */
DEVICE_FUNC bool
dev_add32_overflows(int32_t a, int64_t b, int32_t *r)
{
    int64_t s = (int64_t) a + b;

    *r = (int32_t) s;
    return s < DEV_INT32_MIN || s > DEV_INT32_MAX;
}

/* interval_cmp_value: months as 30 days, days as 24 hours, in 128 bits */
DEVICE_FUNC dev_i128
dev_interval_span(DevInterval v)
{
    int64_t days = (int64_t) v.month * 30 + v.day;

    return (dev_i128) v.time + (dev_i128) days * DEV_USECS_PER_DAY;
}

/* a byte-swapped word: uuids compare as memcmp does */
DEVICE_FUNC uint64_t
dev_bswap64(uint64_t x)
{
    uint64_t r = 0;

    for (int i = 0; i < 8; i++)
    {
        r = (r << 8) | (x & 0xff);
        x >>= 8;
    }
    return r;
}

/*
 * The three-way comparison of two values of type `t` (interval_cmp_internal,
 * uuid_internal_cmp, timetz_cmp_internal, byteacmp); impl_compare calls it
 * for these types.
 */
DEVICE_NOINLINE int
dev_wide_compare(int t, const DevDatum *a, const DevDatum *b)
{
    switch (t)
    {
        case DT_INTERVAL:
        {
            dev_i128 x = dev_interval_span(dev_interval_of(a));
            dev_i128 y = dev_interval_span(dev_interval_of(b));

            return x < y ? -1 : (x > y ? 1 : 0);
        }
        case DT_UUID:
        {
            uint64_t x = dev_bswap64((uint64_t) a->v.i), y = dev_bswap64((uint64_t) b->v.i);

            if (x == y)
            {
                x = dev_bswap64((uint64_t) a->hi);
                y = dev_bswap64((uint64_t) b->hi);
            }
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        case DT_TIMETZ:
        {
            /* the instant first (zone in seconds west of UTC), then the zone */
            int64_t x = a->v.i + a->hi * 1000000LL, y = b->v.i + b->hi * 1000000LL;

            if (x != y)
                return x < y ? -1 : 1;
            return a->hi < b->hi ? -1 : (a->hi > b->hi ? 1 : 0);
        }
        default:                    /* DT_BYTEA */
            return dev_text_cmp(a, b);
    }
}

/* ---- interval arithmetic (timestamp.c) ---------------------------------- */

/* interval_um_internal */
DEVICE_FUNC int32_t
dev_interval_um(DevInterval v, DevInterval *r)
{
    if (dev_iv_nobegin(v))
        *r = dev_iv_infinite(true);
    else if (dev_iv_noend(v))
        *r = dev_iv_infinite(false);
    else
    {
        if (v.time == DEV_INT64_MIN || v.day == DEV_INT32_MIN || v.month == DEV_INT32_MIN)
            return DEVERR_INTERVAL_RANGE;
        r->time = -v.time;
        r->day = -v.day;
        r->month = -v.month;
        if (dev_iv_nobegin(*r) || dev_iv_noend(*r))
            return DEVERR_INTERVAL_RANGE;
    }
    return DEVERR_OK;
}

/* interval_pl (minus = false) and interval_mi: "infinity - infinity" is
 * an error, an infinite operand gives its infinity */
DEVICE_FUNC int32_t
dev_interval_plmi(bool minus, DevInterval x, DevInterval y, DevInterval *r)
{
    bool xb = dev_iv_nobegin(x), xe = dev_iv_noend(x);
    bool yb = dev_iv_nobegin(y), ye = dev_iv_noend(y);

    if (xb || xe)
    {
        /* -inf + inf, inf + -inf, -inf - -inf, inf - inf */
        if ((xb && (minus ? yb : ye)) || (xe && (minus ? ye : yb)))
            return DEVERR_INTERVAL_RANGE;
        *r = x;
        return DEVERR_OK;
    }
    if (yb || ye)
    {
        *r = dev_iv_infinite(minus ? yb : ye);
        return DEVERR_OK;
    }
    if (minus ? (dev_add32_overflows(x.month, -(int64_t) y.month, &r->month) ||
                 dev_add32_overflows(x.day, -(int64_t) y.day, &r->day) ||
                 dev_sub64_overflows(x.time, y.time, &r->time))
              : (dev_add32_overflows(x.month, y.month, &r->month) ||
                 dev_add32_overflows(x.day, y.day, &r->day) ||
                 dev_add64_overflows(x.time, y.time, &r->time)))
        return DEVERR_INTERVAL_RANGE;
    if (dev_iv_nobegin(*r) || dev_iv_noend(*r))
        return DEVERR_INTERVAL_RANGE;
    return DEVERR_OK;
}

/* tm2timestamp's arithmetic and checks before the final range check
 * (IS_VALID_JULIAN, overflow); false where PostgreSQL's fails */
DEVICE_FUNC bool
dev_tm2timestamp_unchecked(const DevTm *tm, int64_t *result)
{
    int64_t date, time;
    uint64_t u;
    int64_t res;

    /* IS_VALID_JULIAN */
    if (!((tm->year > -4713 || (tm->year == -4713 && tm->mon >= 11)) &&
          (tm->year < 5874898 || (tm->year == 5874898 && tm->mon < 6))))
        return false;
    date = (int64_t) dev_date2j(tm->year, tm->mon, tm->mday) - DEV_POSTGRES_EPOCH_JDATE;
    time = (((int64_t) tm->hour * 60 + tm->min) * 60 + tm->sec) * 1000000LL + tm->fsec;
    /* PostgreSQL's overflow tests on its (wrapping) product */
    u = (uint64_t) date * (uint64_t) DEV_USECS_PER_DAY + (uint64_t) time;
    res = (int64_t) u;
    if ((int64_t) ((uint64_t) res - (uint64_t) time) / DEV_USECS_PER_DAY != date)
        return false;
    if ((res < 0 && date > 0) || (res > 0 && date < -1))
        return false;
    *result = res;
    return true;
}

/* tm2timestamp without a time zone; false where PostgreSQL's fails */
DEVICE_FUNC bool
dev_tm2timestamp(const DevTm *tm, int64_t *result)
{
    int64_t res;

    if (!dev_tm2timestamp_unchecked(tm, &res) || res < DEV_MIN_TIMESTAMP || res >= DEV_END_TIMESTAMP)
        return false;
    *result = res;
    return true;
}

/* tm_mon becomes `mon` (the month plus an interval's months), carried
 * into the year, and the day clamped to the end of a shorter month, as
 * timestamp_pl_interval and timestamptz_pl_interval_internal do */
DEVICE_FUNC void
dev_add_months_tm(DevTm *tm, int32_t mon)
{
    tm->mon = mon;
    if (tm->mon > 12)
    {
        tm->year += (tm->mon - 1) / 12;
        tm->mon = ((tm->mon - 1) % 12) + 1;
    }
    else if (tm->mon < 1)
    {
        tm->year += tm->mon / 12 - 1;
        tm->mon = tm->mon % 12 + 12;
    }
    if (tm->mday > dev_days_in_month(tm->year, tm->mon))
        tm->mday = dev_days_in_month(tm->year, tm->mon);
}

/* timestamp_pl_interval */
DEVICE_NOINLINE int32_t
dev_ts_pl_interval(int64_t ts, DevInterval span, int64_t *out)
{
    DevTm tm;

    if (dev_iv_nobegin(span))
    {
        if (ts == DEV_INT64_MAX)
            return DEVERR_TIMESTAMP_RANGE;
        *out = DEV_INT64_MIN;
        return DEVERR_OK;
    }
    if (dev_iv_noend(span))
    {
        if (ts == DEV_INT64_MIN)
            return DEVERR_TIMESTAMP_RANGE;
        *out = DEV_INT64_MAX;
        return DEVERR_OK;
    }
    if (DEV_TS_NOT_FINITE(ts))
    {
        *out = ts;
        return DEVERR_OK;
    }
    if (span.month != 0)
    {
        int32_t mon;

        if (!dev_timestamp2tm(ts, &tm) || dev_add32_overflows(tm.mon, span.month, &mon))
            return DEVERR_TIMESTAMP_RANGE;
        dev_add_months_tm(&tm, mon);
        if (!dev_tm2timestamp(&tm, &ts))
            return DEVERR_TIMESTAMP_RANGE;
    }
    if (span.day != 0)
    {
        int32_t julian;

        if (!dev_timestamp2tm(ts, &tm))
            return DEVERR_TIMESTAMP_RANGE;
        if (dev_add32_overflows(dev_date2j(tm.year, tm.mon, tm.mday), span.day, &julian) || julian < 0)
            return DEVERR_TIMESTAMP_RANGE;
        dev_j2date(julian, &tm.year, &tm.mon, &tm.mday);
        if (!dev_tm2timestamp(&tm, &ts))
            return DEVERR_TIMESTAMP_RANGE;
    }
    if (dev_add64_overflows(ts, span.time, &ts) || ts < DEV_MIN_TIMESTAMP || ts >= DEV_END_TIMESTAMP)
        return DEVERR_TIMESTAMP_RANGE;
    *out = ts;
    return DEVERR_OK;
}

/* whole days of the time moved into the days (TMODULO), without a check */
DEVICE_FUNC int64_t
dev_justify_time(DevInterval *v)
{
    int64_t wholeday = v->time / DEV_USECS_PER_DAY;

    v->time -= wholeday * DEV_USECS_PER_DAY;
    return wholeday;
}

/* interval_justify_hours' last step: the time's sign made the day's */
DEVICE_FUNC void
dev_justify_time_sign(DevInterval *v)
{
    if (v->day > 0 && v->time < 0)
    {
        v->time += DEV_USECS_PER_DAY;
        v->day--;
    }
    else if (v->day < 0 && v->time > 0)
    {
        v->time -= DEV_USECS_PER_DAY;
        v->day++;
    }
}

/*
 * The interval functions, by `op`:
 *   0 interval + interval      1 interval - interval     2 - interval
 *   3 timestamp + interval     4 timestamp - interval
 *   5 date + interval          6 date - interval         (timestamp results)
 *   7 timestamp - timestamp    8 time - time             (interval results)
 *   9 time + interval         10 time - interval
 */
DEVICE_NOINLINE int32_t
impl_interval(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    DevInterval x, y, z;
    int32_t rc;

    switch (op)
    {
        case 0:
        case 1:
            rc = dev_interval_plmi(op == 1, dev_interval_of(a), dev_interval_of(b), &z);
            if (rc == DEVERR_OK)
                dev_interval_set(r, z);
            return rc;
        case 2:
            rc = dev_interval_um(dev_interval_of(a), &z);
            if (rc == DEVERR_OK)
                dev_interval_set(r, z);
            return rc;
        case 3:
        case 4:
        case 5:
        case 6:
        {
            int64_t ts = a->v.i;

            if (op >= 5)
            {
                DevDatum t;

                /* date2timestamp, with its range error */
                rc = impl_date_to_ts(a, &t);
                if (rc != DEVERR_OK)
                    return rc;
                ts = t.v.i;
            }
            y = dev_interval_of(b);
            if (op == 4 || op == 6)
            {
                rc = dev_interval_um(y, &y);
                if (rc != DEVERR_OK)
                    return rc;
            }
            return dev_ts_pl_interval(ts, y, &r->v.i);
        }
        case 7:
        {
            if (DEV_TS_NOT_FINITE(a->v.i) || DEV_TS_NOT_FINITE(b->v.i))
            {
                if (a->v.i == b->v.i)
                    return DEVERR_INTERVAL_RANGE;
                /* -infinity - x, or x - infinity: -infinity */
                dev_interval_set(r, dev_iv_infinite(!(a->v.i == DEV_INT64_MIN || b->v.i == DEV_INT64_MAX)));
                return DEVERR_OK;
            }
            if (dev_sub64_overflows(a->v.i, b->v.i, &x.time))
                return DEVERR_INTERVAL_RANGE;
            /* interval_justify_hours (the whole days fit in 32 bits) */
            x.month = 0;
            x.day = (int32_t) dev_justify_time(&x);
            dev_justify_time_sign(&x);
            dev_interval_set(r, x);
            return DEVERR_OK;
        }
        case 8:
            x.time = a->v.i - b->v.i;
            x.day = 0;
            x.month = 0;
            dev_interval_set(r, x);
            return DEVERR_OK;
        default:
        {
            /* time_pl_interval / time_mi_interval: the time part only,
             * wrapped into one day */
            uint64_t t;

            y = dev_interval_of(b);
            if (dev_iv_nobegin(y) || dev_iv_noend(y))
                return op == 9 ? DEVERR_TIME_INFINITE_ADD : DEVERR_TIME_INFINITE_SUB;
            t = op == 9 ? (uint64_t) a->v.i + (uint64_t) y.time : (uint64_t) a->v.i - (uint64_t) y.time;
            r->v.i = (int64_t) t;
            r->v.i -= r->v.i / DEV_USECS_PER_DAY * DEV_USECS_PER_DAY;
            if (r->v.i < 0)
                r->v.i += DEV_USECS_PER_DAY;
            return DEVERR_OK;
        }
    }
}

#define IMPL_INTERVAL_PL(res, ta, tb)   impl_interval(0, &args[0], &args[1], r)
#define IMPL_INTERVAL_MI(res, ta, tb)   impl_interval(1, &args[0], &args[1], r)
#define IMPL_INTERVAL_UM(res, ta, tb)   impl_interval(2, &args[0], &args[0], r)
#define IMPL_TS_PL_INTERVAL(res, ta, tb) impl_interval(3, &args[0], &args[1], r)
#define IMPL_TS_MI_INTERVAL(res, ta, tb) impl_interval(4, &args[0], &args[1], r)
#define IMPL_DATE_PL_INTERVAL(res, ta, tb) impl_interval(5, &args[0], &args[1], r)
#define IMPL_DATE_MI_INTERVAL(res, ta, tb) impl_interval(6, &args[0], &args[1], r)
#define IMPL_TS_MI(res, ta, tb)         impl_interval(7, &args[0], &args[1], r)
#define IMPL_TIME_MI(res, ta, tb)       impl_interval(8, &args[0], &args[1], r)
#define IMPL_TIME_PL_INTERVAL(res, ta, tb) impl_interval(9, &args[0], &args[1], r)
#define IMPL_TIME_MI_INTERVAL(res, ta, tb) impl_interval(10, &args[0], &args[1], r)

/* ---- interval * float8, interval / float8, justify_*, extract ---------- */

/*
 * Double arithmetic that is never fused: an FMA rounds once where
 * PostgreSQL's C rounds twice.  The host build has no FMA instructions;
 * on the GPU the explicitly rounded intrinsics are never contracted,
 * whatever NVRTC's --fmad says.
 */
#ifdef PGSTROM_GPU_TARGET
#define dev_dmul(a, b)  __dmul_rn((a), (b))
#define dev_dadd(a, b)  __dadd_rn((a), (b))
#define dev_dsub(a, b)  __dsub_rn((a), (b))
#else
#define dev_dmul(a, b)  ((a) * (b))
#define dev_dadd(a, b)  ((a) + (b))
#define dev_dsub(a, b)  ((a) - (b))
#endif

/* FLOAT8_FITS_IN_INT32 / FLOAT8_FITS_IN_INT64 (c.h); false for NaN */
DEVICE_FUNC bool
dev_f8_fits_i32(double x)
{
    return x >= -2147483648.0 && x < 2147483648.0;
}

DEVICE_FUNC bool
dev_f8_fits_i64(double x)
{
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0;
}

/* TSROUND (timestamp.h): rounded to 6 decimal places */
DEVICE_FUNC double
dev_tsround(double j)
{
    return dev_rint(dev_dmul(j, 1000000.0)) / 1000000.0;
}

/* span->field * factor (interval_mul) or / factor (interval_div) */
DEVICE_FUNC double
dev_iv_scale(bool div, double field, double factor)
{
    return div ? field / factor : dev_dmul(field, factor);
}

/*
 * interval_mul (div = false) and interval_div, as timestamp.c computes
 * them: NaN factors and 0 * infinity are "interval out of range"; the
 * months and days scaled and truncated, their fractions cascaded down
 * (a month as 30 days, a day as 86400 seconds, TSROUND at each step), the
 * time rounded with rint; each double operation in PostgreSQL's order.
 */
DEVICE_NOINLINE int32_t
dev_interval_muldiv(bool div, DevInterval span, double factor, DevInterval *r)
{
    double month_remainder_days, sec_remainder, result_double, t;
    int32_t q;

    if (div && factor == 0.0)
        return DEVERR_DIVISION_BY_ZERO;
    if (dev_isnan(factor))
        return DEVERR_INTERVAL_RANGE;
    if (dev_iv_nobegin(span) || dev_iv_noend(span))
    {
        /* infinity * 0 and infinity / infinity have no interval */
        if (div ? dev_isinf(factor) : factor == 0.0)
            return DEVERR_INTERVAL_RANGE;
        if (factor < 0.0)
            return dev_interval_um(span, r);
        *r = span;
        return DEVERR_OK;
    }
    if (!div && dev_isinf(factor))
    {
        /* interval_sign: a zero span has no infinite multiple */
        dev_i128 s = dev_interval_span(span);

        if (s == 0)
            return DEVERR_INTERVAL_RANGE;
        *r = dev_iv_infinite((factor < 0.0) == (s < 0));
        return DEVERR_OK;
    }
    result_double = dev_iv_scale(div, (double) span.month, factor);
    if (dev_isnan(result_double) || !dev_f8_fits_i32(result_double))
        return DEVERR_INTERVAL_RANGE;
    r->month = (int32_t) result_double;
    result_double = dev_iv_scale(div, (double) span.day, factor);
    if (dev_isnan(result_double) || !dev_f8_fits_i32(result_double))
        return DEVERR_INTERVAL_RANGE;
    r->day = (int32_t) result_double;

    /* the fraction of the months into days (DAYS_PER_MONTH) ... */
    t = dev_dsub(dev_iv_scale(div, (double) span.month, factor), (double) r->month);
    month_remainder_days = dev_tsround(dev_dmul(t, 30.0));
    /* ... and of the days, with that of those days, into seconds */
    t = dev_dsub(dev_iv_scale(div, (double) span.day, factor), (double) r->day);
    t = dev_dadd(t, month_remainder_days);
    t = dev_dsub(t, (double) (int32_t) month_remainder_days);
    sec_remainder = dev_tsround(dev_dmul(t, 86400.0));
    /* a whole day (or more) of seconds, from rounding or the cascade */
    if (dev_fabs(sec_remainder) >= 86400.0)
    {
        q = (int32_t) (sec_remainder / 86400.0);
        if (dev_add32_overflows(r->day, q, &r->day))
            return DEVERR_INTERVAL_RANGE;
        sec_remainder = dev_dsub(sec_remainder, (double) (q * 86400));
    }
    if (dev_add32_overflows(r->day, (int32_t) month_remainder_days, &r->day))
        return DEVERR_INTERVAL_RANGE;
    t = dev_iv_scale(div, (double) span.time, factor);
    result_double = dev_rint(dev_dadd(t, dev_dmul(sec_remainder, 1000000.0)));
    if (dev_isnan(result_double) || !dev_f8_fits_i64(result_double))
        return DEVERR_INTERVAL_RANGE;
    r->time = (int64_t) result_double;
    if (dev_iv_nobegin(*r) || dev_iv_noend(*r))
        return DEVERR_INTERVAL_RANGE;
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_interval_muldiv(bool div, const DevDatum *span, const DevDatum *factor, DevDatum *r)
{
    DevInterval z;
    int32_t rc = dev_interval_muldiv(div, dev_interval_of(span), factor->v.f8, &z);

    if (rc == DEVERR_OK)
        dev_interval_set(r, z);
    return rc;
}

/* wholemonth = day / DAYS_PER_MONTH moved into the months (justify_days'
 * step); false on overflow */
DEVICE_FUNC bool
dev_justify_days_step(DevInterval *v)
{
    int32_t wholemonth = v->day / 30;

    v->day -= wholemonth * 30;
    return !dev_add32_overflows(v->month, wholemonth, &v->month);
}

/* interval_justify_hours (op 0), interval_justify_days (op 1) and
 * interval_justify_interval (op 2); infinities unchanged */
DEVICE_NOINLINE int32_t
impl_justify(int op, const DevDatum *a, DevDatum *r)
{
    DevInterval v = dev_interval_of(a);
    int64_t wholeday;

    if (dev_iv_nobegin(v) || dev_iv_noend(v))
    {
        dev_interval_set(r, v);
        return DEVERR_OK;
    }
    if (op == 0)
    {
        wholeday = dev_justify_time(&v);
        if (dev_add32_overflows(v.day, wholeday, &v.day))
            return DEVERR_INTERVAL_RANGE;
    }
    else if (op == 1)
    {
        if (!dev_justify_days_step(&v))
            return DEVERR_INTERVAL_RANGE;
        if (v.month > 0 && v.day < 0)
        {
            v.day += 30;
            v.month--;
        }
        else if (v.month < 0 && v.day > 0)
        {
            v.day -= 30;
            v.month++;
        }
    }
    else
    {
        /* days first where that may prevent an overflow */
        if (((v.day > 0 && v.time > 0) || (v.day < 0 && v.time < 0)) && !dev_justify_days_step(&v))
            return DEVERR_INTERVAL_RANGE;
        /* (cannot overflow: the days are few now, or of the other sign) */
        wholeday = dev_justify_time(&v);
        v.day = (int32_t) (v.day + wholeday);
        if (!dev_justify_days_step(&v))
            return DEVERR_INTERVAL_RANGE;
        if (v.month > 0 && (v.day < 0 || (v.day == 0 && v.time < 0)))
        {
            v.day += 30;
            v.month--;
        }
        else if (v.month < 0 && (v.day > 0 || (v.day == 0 && v.time > 0)))
        {
            v.day -= 30;
            v.month++;
        }
    }
    /* the time's sign made the day's (hours and interval) */
    if (op != 1)
        dev_justify_time_sign(&v);
    dev_interval_set(r, v);
    return DEVERR_OK;
}

/*
 * extract(unit FROM interval) (numeric) and date_part(unit, interval)
 * (float8), as interval_part_common computes them from interval2itm's
 * fields (years, months of the year, days, hours, minutes, seconds,
 * microseconds; each with the interval's sign).  Infinite intervals: the
 * monotonic units (hour, day, year, decade, century, millennium, epoch)
 * are +-Infinity, the others NULL (NonFiniteIntervalPart).  A unit the
 * device does not know, or one PostgreSQL rejects for intervals (isoyear,
 * dow, isodow, doy: an error there), goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_extract_interval(int res, const DevDatum *unit, const DevDatum *a, DevDatum *r)
{
    int u = dev_datetime_unit(unit);
    DevInterval iv = dev_interval_of(a);
    int64_t t, hour, v;
    int32_t year, mon, min, sec, usec;

    if (u == DU_NONE || u == DU_ISOYEAR || u == DU_DOW || u == DU_ISODOW || u == DU_DOY)
        return DEVERR_NEEDS_CPU;
    if (dev_iv_nobegin(iv) || dev_iv_noend(iv))
    {
        if (u == DU_MICROSEC || u == DU_MILLISEC || u == DU_SECOND || u == DU_MINUTE ||
            u == DU_WEEK || u == DU_MONTH || u == DU_QUARTER)
        {
            r->isnull = 1;
            return DEVERR_OK;
        }
        if (res == DT_FLOAT8)
        {
            r->v.f8 = dev_iv_nobegin(iv) ? -dev_inf() : dev_inf();
            return DEVERR_OK;
        }
        return dev_num_special(r, dev_iv_nobegin(iv) ? NUM_NINF : NUM_PINF);
    }
    if (u == DU_EPOCH)
    {
        if (res == DT_FLOAT8)
        {
            /* DAYS_PER_YEAR * SECS_PER_DAY a year, DAYS_PER_MONTH days a month */
            double e = (double) iv.time / 1000000.0;

            e = dev_dadd(e, dev_dmul(31557600.0, (double) (iv.month / 12)));
            e = dev_dadd(e, dev_dmul(2592000.0, (double) (iv.month % 12)));
            e = dev_dadd(e, dev_dmul(86400.0, (double) iv.day));
            r->v.f8 = e;
            return DEVERR_OK;
        }
        /* exact: (seconds of the months and days) * 10^6 + time, scale 6 */
        v = ((int64_t) 1461 * (iv.month / 12) + (int64_t) 120 * (iv.month % 12) + (int64_t) 4 * iv.day) * 21600;
        dev_num_set(r, (dev_i128) v * 1000000 + iv.time, 6);
        return DEVERR_OK;
    }
    /* interval2itm */
    year = iv.month / 12;
    mon = iv.month % 12;
    t = iv.time;
    hour = t / 3600000000LL;
    t -= hour * 3600000000LL;
    min = (int32_t) (t / 60000000LL);
    t -= min * 60000000LL;
    sec = (int32_t) (t / 1000000LL);
    t -= sec * 1000000LL;
    usec = (int32_t) t;
    switch (u)
    {
        case DU_MICROSEC: return dev_part_result(res, sec * 1000000LL + usec, 0, r);
        case DU_MILLISEC:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = dev_dadd(dev_dmul((double) sec, 1000.0), (double) usec / 1000.0);
                return DEVERR_OK;
            }
            return dev_part_result(res, sec * 1000000LL + usec, 3, r);
        case DU_SECOND:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = dev_dadd((double) sec, (double) usec / 1000000.0);
                return DEVERR_OK;
            }
            return dev_part_result(res, sec * 1000000LL + usec, 6, r);
        case DU_MINUTE: return dev_part_result(res, min, 0, r);
        case DU_HOUR: return dev_part_result(res, hour, 0, r);
        case DU_DAY: return dev_part_result(res, iv.day, 0, r);
        case DU_WEEK: return dev_part_result(res, iv.day / 7, 0, r);
        case DU_MONTH: return dev_part_result(res, mon, 0, r);
        case DU_QUARTER:
            /* from the months, negated as PostgreSQL's 32-bit int wraps
             * (-INT_MIN is INT_MIN there) */
            if (iv.month >= 0)
                return dev_part_result(res, mon / 3 + 1, 0, r);
            return dev_part_result(res, -((((int32_t) (0U - (uint32_t) iv.month)) % 12) / 3 + 1), 0, r);
        case DU_YEAR: return dev_part_result(res, year, 0, r);
        case DU_DECADE: return dev_part_result(res, year / 10, 0, r);
        case DU_CENTURY: return dev_part_result(res, year / 100, 0, r);
        default: return dev_part_result(res, year / 1000, 0, r);     /* DU_MILLENNIUM */
    }
}

#define IMPL_INTERVAL_MUL(res, ta, tb)      impl_interval_muldiv(false, &args[0], &args[1], r)
#define IMPL_MUL_D_INTERVAL(res, ta, tb)    impl_interval_muldiv(false, &args[1], &args[0], r)
#define IMPL_INTERVAL_DIV(res, ta, tb)      impl_interval_muldiv(true, &args[0], &args[1], r)
#define IMPL_JUSTIFY_HOURS(res, ta, tb)     impl_justify(0, &args[0], r)
#define IMPL_JUSTIFY_DAYS(res, ta, tb)      impl_justify(1, &args[0], r)
#define IMPL_JUSTIFY_INTERVAL(res, ta, tb)  impl_justify(2, &args[0], r)
#define IMPL_EXTRACT_INTERVAL(res, ta, tb)  impl_extract_interval(res, &args[0], &args[1], r)

/* LIKE / NOT LIKE over bytea: bytes, '_' one byte (SB_MatchText) */
#define IMPL_BYTEA_LIKE(res, ta, tb)     impl_like(false, true, &args[0], &args[1], r)
#define IMPL_BYTEA_NOT_LIKE(res, ta, tb) impl_like(true, true, &args[0], &args[1], r)

#endif  /* PGSTROM_DEVICE_WIDE_H */
