/*
 * device_tz.h - timestamptz in the session time zone: PostgreSQL's
 * pg_localtime (UTC -> local) and DetermineTimeZoneOffset (local -> UTC)
 * over a table the host builds from the zone itself, and the timestamptz
 * functions that depend on them (casts to and from timestamp and date,
 * extract / date_part / date_trunc, timestamptz +/- interval, comparisons
 * with date and timestamp).
 *
 * The table (a DT_TZTAB constant in the program's data section, built by
 * crates/pg_strom/src/timezone.rs at plan and again at executor start, so
 * a cached plan follows SET TIME ZONE) is, little-endian:
 *
 *   0  u32 magic "PTZ1"     4  u32 nseg
 *   8  i64 lo              16  i64 hi        the seconds the segments cover
 *  24  i32 low_mode        28  i32 high_mode DEV_TZ_NONE / CONST / PERIODIC
 *  32  i64 period          40  name[64]      the zone's name (EXPLAIN)
 * 104  nseg segments of 32 bytes, by start:
 *        i64 start, i64 boundary, i32 before, i32 after, i32 res, i32 gmtoff
 *
 * A segment [start, next start) is a stretch of Unix seconds t where
 * pg_next_dst_boundary(t) gives (res, before, boundary, after) and
 * pg_localtime(t) the offset gmtoff.  Below lo the zone is constant (CONST:
 * the first segment's answers) or repeats with `period` (PERIODIC: the
 * 400-year Gregorian cycle PostgreSQL extrapolates with, boundaries moved
 * by the cycles); above hi likewise.  NONE leaves those seconds to
 * PostgreSQL (the host found neither rule; no zone is known to do this).
 * The host checked the layout, the order of the segments and every mode
 * (program.rs), so the device only reads it.
 *
 * Mirrors: src/timezone/localtime.c (pg_localtime, pg_next_dst_boundary),
 * src/backend/utils/adt/datetime.c (DetermineTimeZoneOffset) and the
 * timestamptz functions of timestamp.c and date.c.
 */
#ifndef PGSTROM_DEVICE_TZ_H
#define PGSTROM_DEVICE_TZ_H

#include "device_compare.h"
#include "device_datetime.h"
#include "device_wide.h"

#define DEV_TZ_MAGIC        0x315A5450U     /* "PTZ1" little-endian */
#define DEV_TZ_HEADER       104
#define DEV_TZ_SEGMENT      32
#define DEV_TZ_NONE         0
#define DEV_TZ_CONST        1
#define DEV_TZ_PERIODIC     2
/* (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY */
#define DEV_PG_UNIX_SECS    946684800LL

/* What pg_next_dst_boundary and pg_localtime say at one second. */
typedef struct
{
    int64_t     boundary;
    int32_t     before, after, res, gmtoff;
} DevTzAt;

/* floor(a / b) for b > 0 */
DEVICE_FUNC int64_t
dev_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;

    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The zone at Unix second t; DEVERR_NEEDS_CPU where the table has no rule. */
DEVICE_FUNC int32_t
dev_tz_at(const uint8_t *tz, int64_t t, DevTzAt *at)
{
    uint32_t    n = (uint32_t) dev_load_le(tz + 4, 4);
    int64_t     lo = dev_load_le(tz + 8, 8);
    int64_t     hi = dev_load_le(tz + 16, 8);
    int64_t     period = dev_load_le(tz + 32, 8);
    int64_t     shift = 0;
    uint32_t    a = 0, b = n;
    const uint8_t *s;

    if (t < lo || t > hi)
    {
        int mode = (int) (int32_t) dev_load_le(tz + (t < lo ? 24 : 28), 4);

        if (mode == DEV_TZ_CONST)
            t = t < lo ? lo : hi;
        else if (mode == DEV_TZ_PERIODIC)
        {
            /* into the cycle next to the covered seconds */
            int64_t k = t < lo ? (lo - t + period - 1) / period : (t - hi + period - 1) / period;

            shift = t < lo ? -k * period : k * period;
            t -= shift;
        }
        else
            return DEVERR_NEEDS_CPU;
    }
    /* the last segment starting at or before t (the first starts at lo) */
    while (b - a > 1)
    {
        uint32_t m = a + (b - a) / 2;

        if (dev_load_le(tz + DEV_TZ_HEADER + (size_t) m * DEV_TZ_SEGMENT, 8) <= t)
            a = m;
        else
            b = m;
    }
    s = tz + DEV_TZ_HEADER + (size_t) a * DEV_TZ_SEGMENT;
    at->boundary = dev_load_le(s + 8, 8) + shift;
    at->before = (int32_t) dev_load_le(s + 16, 4);
    at->after = (int32_t) dev_load_le(s + 20, 4);
    at->res = (int32_t) dev_load_le(s + 24, 4);
    at->gmtoff = (int32_t) dev_load_le(s + 28, 4);
    return DEVERR_OK;
}

/*
 * timestamp2tm of a finite timestamptz in the session time zone: the local
 * fields and the zone's offset (seconds east of UTC), as pg_localtime
 * gives them for the value's second.
 */
DEVICE_FUNC int32_t
dev_tstz2tm(const uint8_t *tz, int64_t t, DevTm *tm, int32_t *gmtoff)
{
    DevTzAt at;
    int32_t rc;

    if (!dev_timestamp2tm(t, tm))
        return DEVERR_TIMESTAMP_RANGE;
    rc = dev_tz_at(tz, dev_floor_div(t, 1000000LL) + DEV_PG_UNIX_SECS, &at);
    if (rc != DEVERR_OK)
        return rc;
    *gmtoff = at.gmtoff;
    /* pg_localtime's fields are those of the shifted value; before the
     * first Julian day PostgreSQL still has them, the device does not */
    if (!dev_timestamp2tm(t + (int64_t) at.gmtoff * 1000000LL, tm))
        return DEVERR_NEEDS_CPU;
    return DEVERR_OK;
}

/*
 * DetermineTimeZoneOffset: the offset (seconds east of UTC) the session
 * time zone gives the local time in tm, resolving times that a transition
 * skips ("before") or repeats ("after") as PostgreSQL does.
 */
DEVICE_FUNC int32_t
dev_tz_determine(const uint8_t *tz, const DevTm *tm, int32_t *gmtoff)
{
    DevTzAt at;
    int64_t mytime, beforetime, aftertime;
    int32_t rc;

    /* IS_VALID_JULIAN, else PostgreSQL takes the time as UTC */
    if (!((tm->year > -4713 || (tm->year == -4713 && tm->mon >= 11)) &&
          (tm->year < 5874898 || (tm->year == 5874898 && tm->mon < 6))))
    {
        *gmtoff = 0;
        return DEVERR_OK;
    }
    mytime = ((int64_t) dev_date2j(tm->year, tm->mon, tm->mday) - DEV_UNIX_EPOCH_JDATE) * 86400LL +
             ((int64_t) tm->hour * 60 + tm->min) * 60 + tm->sec;
    /* the boundary next to a day before: transitions are 48 hours apart */
    rc = dev_tz_at(tz, mytime - 86400LL, &at);
    if (rc != DEVERR_OK)
        return rc;
    if (at.res == 0)
    {
        *gmtoff = at.before;
        return DEVERR_OK;
    }
    beforetime = mytime - at.before;
    aftertime = mytime - at.after;
    if (beforetime < at.boundary && aftertime < at.boundary)
        *gmtoff = at.before;
    else if (beforetime > at.boundary && aftertime >= at.boundary)
        *gmtoff = at.after;
    else
        *gmtoff = beforetime > aftertime ? at.before : at.after;
    return DEVERR_OK;
}

/* tm2timestamp with the offset gmtoff: the UTC value of local fields */
DEVICE_FUNC bool
dev_tm2timestamptz(const DevTm *tm, int32_t gmtoff, int64_t *result)
{
    int64_t local;

    if (!dev_tm2timestamp_unchecked(tm, &local))
        return false;
    local -= (int64_t) gmtoff * 1000000LL;
    if (local < DEV_MIN_TIMESTAMP || local >= DEV_END_TIMESTAMP)
        return false;
    *result = local;
    return true;
}

/* local fields back to a timestamptz, the offset found for them */
DEVICE_FUNC int32_t
dev_tm_to_tstz(const uint8_t *tz, const DevTm *tm, int64_t *result)
{
    int32_t gmtoff, rc;

    rc = dev_tz_determine(tz, tm, &gmtoff);
    if (rc != DEVERR_OK)
        return rc;
    return dev_tm2timestamptz(tm, gmtoff, result) ? DEVERR_OK : DEVERR_TIMESTAMP_RANGE;
}

/*
 * The end of timestamp -> timestamptz (timestamp2timestamptz_safe) and
 * date -> timestamptz (date2timestamptz_safe): a result `r` out of range
 * is error `err`, or with `overflow` given, as their _opt_overflow forms
 * do, -1 below and +1 above with the infinity on that side.
 */
DEVICE_FUNC int32_t
dev_tstz_in_range(int64_t r, int64_t *out, int *overflow, int32_t err)
{
    if (r < DEV_MIN_TIMESTAMP || r >= DEV_END_TIMESTAMP)
    {
        if (!overflow)
            return err;
        *overflow = r < DEV_MIN_TIMESTAMP ? -1 : 1;
        r = r < DEV_MIN_TIMESTAMP ? DEV_INT64_MIN : DEV_INT64_MAX;
    }
    *out = r;
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
dev_ts_to_tstz(const uint8_t *tz, int64_t ts, int64_t *out, int *overflow)
{
    DevTm tm;
    int32_t gmtoff, rc;

    if (overflow)
        *overflow = 0;
    if (DEV_TS_NOT_FINITE(ts))
    {
        *out = ts;
        return DEVERR_OK;
    }
    if (!dev_timestamp2tm(ts, &tm))
        return DEVERR_TIMESTAMP_RANGE;
    rc = dev_tz_determine(tz, &tm, &gmtoff);
    if (rc != DEVERR_OK)
        return rc;
    return dev_tstz_in_range(ts - (int64_t) gmtoff * 1000000LL, out, overflow, DEVERR_TIMESTAMP_RANGE);
}

DEVICE_FUNC int32_t
dev_date_to_tstz(const uint8_t *tz, int64_t d, int64_t *out, int *overflow)
{
    DevTm tm;
    int32_t gmtoff, rc;

    if (overflow)
        *overflow = 0;
    if (DEV_DATE_NOT_FINITE(d))
    {
        *out = d < 0 ? DEV_INT64_MIN : DEV_INT64_MAX;
        return DEVERR_OK;
    }
    if (d >= 106751983LL)                   /* TIMESTAMP_END_JULIAN - epoch */
    {
        if (!overflow)
            return DEVERR_DATE_TS_RANGE;
        *overflow = 1;
        *out = DEV_INT64_MAX;
        return DEVERR_OK;
    }
    dev_j2date((int) (d + DEV_POSTGRES_EPOCH_JDATE), &tm.year, &tm.mon, &tm.mday);
    tm.hour = tm.min = tm.sec = 0;
    tm.fsec = 0;
    rc = dev_tz_determine(tz, &tm, &gmtoff);
    if (rc != DEVERR_OK)
        return rc;
    return dev_tstz_in_range(d * DEV_USECS_PER_DAY - (int64_t) gmtoff * 1000000LL, out, overflow, DEVERR_DATE_TS_RANGE);
}

/*
 * The casts, by `op`:
 *   0 timestamptz::timestamp   1 timestamptz::date
 *   2 timestamp::timestamptz   3 date::timestamptz
 */
DEVICE_NOINLINE int32_t
impl_tz_cast(int op, const DevDatum *a, const DevDatum *tzd, DevDatum *r)
{
    const uint8_t *tz = (const uint8_t *) tzd->v.i;
    int64_t v = a->v.i;
    DevTm tm;
    int32_t gmtoff, rc;

    switch (op)
    {
        case 0:
        case 1:
            if (DEV_TS_NOT_FINITE(v))
            {
                r->v.i = op == 0 ? v : (v < 0 ? (-2147483647 - 1) : 2147483647);
                return DEVERR_OK;
            }
            rc = dev_tstz2tm(tz, v, &tm, &gmtoff);
            if (rc != DEVERR_OK)
                return rc;
            if (op == 1)
            {
                r->v.i = (int64_t) dev_date2j(tm.year, tm.mon, tm.mday) - DEV_POSTGRES_EPOCH_JDATE;
                return DEVERR_OK;
            }
            return dev_tm2timestamp(&tm, &r->v.i) ? DEVERR_OK : DEVERR_TIMESTAMP_RANGE;
        case 2:
            return dev_ts_to_tstz(tz, v, &r->v.i, 0);
        default:
            return dev_date_to_tstz(tz, v, &r->v.i, 0);
    }
}

/*
 * Comparisons of a date or a timestamp (`ta`, converted as
 * date_cmp_timestamptz_internal / timestamp_cmp_timestamptz_internal do:
 * past the range it is above every finite value and below infinity, or
 * the reverse) with a timestamptz; `swap` when the timestamptz is first.
 */
DEVICE_NOINLINE int32_t
impl_tz_compare(int op, int ta, bool swap, const DevDatum *a, const DevDatum *b, const DevDatum *tzd, DevDatum *r)
{
    const uint8_t *tz = (const uint8_t *) tzd->v.i;
    const DevDatum *x = swap ? b : a;       /* the date or timestamp */
    const DevDatum *y = swap ? a : b;       /* the timestamptz */
    int64_t t;
    int overflow, c;
    int32_t rc;

    rc = ta == DT_DATE ? dev_date_to_tstz(tz, x->v.i, &t, &overflow) : dev_ts_to_tstz(tz, x->v.i, &t, &overflow);
    if (rc != DEVERR_OK)
        return rc;
    if (overflow > 0)
        c = y->v.i == DEV_INT64_MAX ? -1 : 1;
    else if (overflow < 0)
        c = y->v.i == DEV_INT64_MIN ? 1 : -1;
    else
        c = pgstrom_cmp3(t, y->v.i);
    r->v.i = dev_cmp_op(op, swap ? -c : c);
    return DEVERR_OK;
}

/*
 * extract(unit FROM timestamptz) (numeric) and date_part(unit,
 * timestamptz) (float8): the epoch is the timestamp's own, every other
 * unit the local time's (timestamptz_part_common); the timezone units go
 * to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_extract_tz(int res, const DevDatum *unit, const DevDatum *a, const DevDatum *tzd, DevDatum *r)
{
    const uint8_t *tz = (const uint8_t *) tzd->v.i;
    int u = dev_datetime_unit(unit);
    DevDatum local = *a;
    DevTm tm;
    int32_t gmtoff, rc;

    if (u != DU_NONE && u != DU_EPOCH && !DEV_TS_NOT_FINITE(a->v.i))
    {
        rc = dev_tstz2tm(tz, a->v.i, &tm, &gmtoff);
        if (rc != DEVERR_OK)
            return rc;
        local.v.i = a->v.i + (int64_t) gmtoff * 1000000LL;
    }
    return impl_extract(res, DT_TIMESTAMP, unit, &local, r);
}

/*
 * date_trunc(unit, timestamptz), as timestamptz_trunc_internal: truncated
 * in local time; from a day up the offset is found again for the result,
 * below it the value keeps its own.
 */
DEVICE_NOINLINE int32_t
impl_date_trunc_tz(const DevDatum *unit, const DevDatum *a, const DevDatum *tzd, DevDatum *r)
{
    const uint8_t *tz = (const uint8_t *) tzd->v.i;
    int u = dev_datetime_unit(unit);
    DevTm tm;
    int32_t gmtoff, rc;

    /* PostgreSQL checks the unit of an infinite value too */
    if (u == DU_NONE || u > DU_MILLENNIUM)
        return DEVERR_NEEDS_CPU;
    if (DEV_TS_NOT_FINITE(a->v.i))
    {
        r->v.i = a->v.i;
        return DEVERR_OK;
    }
    rc = dev_tstz2tm(tz, a->v.i, &tm, &gmtoff);
    if (rc != DEVERR_OK)
        return rc;
    dev_trunc_tm(u, &tm);
    if (u >= DU_DAY)
    {
        rc = dev_tz_determine(tz, &tm, &gmtoff);
        if (rc != DEVERR_OK)
            return rc;
    }
    return dev_tm2timestamptz(&tm, gmtoff, &r->v.i) ? DEVERR_OK : DEVERR_TIMESTAMP_RANGE;
}

/* timestamptz + interval (timestamptz_pl_interval_internal); - interval
 * when `minus` */
DEVICE_NOINLINE int32_t
impl_tstz_pl_interval(bool minus, const DevDatum *a, const DevDatum *b, const DevDatum *tzd, DevDatum *r)
{
    const uint8_t *tz = (const uint8_t *) tzd->v.i;
    DevInterval span = dev_interval_of(b);
    int64_t ts = a->v.i;
    DevTm tm;
    int32_t gmtoff, rc;

    if (minus)
    {
        rc = dev_interval_um(span, &span);
        if (rc != DEVERR_OK)
            return rc;
    }
    if (dev_iv_nobegin(span) || dev_iv_noend(span) || DEV_TS_NOT_FINITE(ts))
        return dev_ts_pl_interval(ts, span, &r->v.i);       /* no zone there */
    if (span.month != 0)
    {
        int32_t mon;

        rc = dev_tstz2tm(tz, ts, &tm, &gmtoff);
        if (rc != DEVERR_OK)
            return rc;
        if (dev_add32_overflows(tm.mon, span.month, &mon))
            return DEVERR_TIMESTAMP_RANGE;
        dev_add_months_tm(&tm, mon);
        rc = dev_tm_to_tstz(tz, &tm, &ts);
        if (rc != DEVERR_OK)
            return rc;
    }
    if (span.day != 0)
    {
        int32_t julian;

        rc = dev_tstz2tm(tz, ts, &tm, &gmtoff);
        if (rc != DEVERR_OK)
            return rc;
        /* -1 is allowed here (timestamp.h: zone-dependent failures) */
        if (dev_add32_overflows(dev_date2j(tm.year, tm.mon, tm.mday), span.day, &julian) || julian < -1)
            return DEVERR_TIMESTAMP_RANGE;
        dev_j2date(julian, &tm.year, &tm.mon, &tm.mday);
        rc = dev_tm_to_tstz(tz, &tm, &ts);
        if (rc != DEVERR_OK)
            return rc;
    }
    if (dev_add64_overflows(ts, span.time, &ts) || ts < DEV_MIN_TIMESTAMP || ts >= DEV_END_TIMESTAMP)
        return DEVERR_TIMESTAMP_RANGE;
    r->v.i = ts;
    return DEVERR_OK;
}

/* timestamp::date (timestamp_date): no zone involved */
DEVICE_FUNC int32_t
impl_ts_to_date(const DevDatum *a, DevDatum *r)
{
    int64_t v = a->v.i;

    if (DEV_TS_NOT_FINITE(v))
        r->v.i = v < 0 ? (-2147483647 - 1) : 2147483647;
    else
        r->v.i = dev_floor_div(v, DEV_USECS_PER_DAY);
    return DEVERR_OK;
}

#define IMPL_TZ_TSTZ_TO_TS(res, ta, tb)     impl_tz_cast(0, &args[0], &args[1], r)
#define IMPL_TZ_TSTZ_TO_DATE(res, ta, tb)   impl_tz_cast(1, &args[0], &args[1], r)
#define IMPL_TZ_TS_TO_TSTZ(res, ta, tb)     impl_tz_cast(2, &args[0], &args[1], r)
#define IMPL_TZ_DATE_TO_TSTZ(res, ta, tb)   impl_tz_cast(3, &args[0], &args[1], r)
#define IMPL_TS_TO_DATE(res, ta, tb)        impl_ts_to_date(&args[0], r)
#define IMPL_TZ_EXTRACT(res, ta, tb)        impl_extract_tz(res, &args[0], &args[1], &args[2], r)
#define IMPL_TZ_DATE_TRUNC(res, ta, tb)     impl_date_trunc_tz(&args[0], &args[1], &args[2], r)
#define IMPL_TZ_PL_INTERVAL(res, ta, tb)    impl_tstz_pl_interval(false, &args[0], &args[1], &args[2], r)
#define IMPL_TZ_MI_INTERVAL(res, ta, tb)    impl_tstz_pl_interval(true, &args[0], &args[1], &args[2], r)
#define IMPL_TZ_CMP(op, ta, tb) \
    impl_tz_compare(op, (ta) == DT_TIMESTAMPTZ ? (tb) : (ta), (ta) == DT_TIMESTAMPTZ, &args[0], &args[1], &args[2], r)
#define IMPL_TZCMP_EQ(res, ta, tb)          IMPL_TZ_CMP(0, ta, tb)
#define IMPL_TZCMP_NE(res, ta, tb)          IMPL_TZ_CMP(1, ta, tb)
#define IMPL_TZCMP_LT(res, ta, tb)          IMPL_TZ_CMP(2, ta, tb)
#define IMPL_TZCMP_LE(res, ta, tb)          IMPL_TZ_CMP(3, ta, tb)
#define IMPL_TZCMP_GT(res, ta, tb)          IMPL_TZ_CMP(4, ta, tb)
#define IMPL_TZCMP_GE(res, ta, tb)          IMPL_TZ_CMP(5, ta, tb)

#endif  /* PGSTROM_DEVICE_TZ_H */
