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
 * Included by device_interp.h after the date/time and text helpers.
 */
#ifndef PGSTROM_DEVICE_WIDE_H
#define PGSTROM_DEVICE_WIDE_H

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
            int64_t wholeday;

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
            /* interval_justify_hours */
            wholeday = x.time / DEV_USECS_PER_DAY;
            x.time -= wholeday * DEV_USECS_PER_DAY;
            x.month = 0;
            x.day = (int32_t) wholeday;
            if (x.day > 0 && x.time < 0)
            {
                x.time += DEV_USECS_PER_DAY;
                x.day--;
            }
            else if (x.day < 0 && x.time > 0)
            {
                x.time -= DEV_USECS_PER_DAY;
                x.day++;
            }
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

/* LIKE / NOT LIKE over bytea: bytes, '_' one byte (SB_MatchText) */
#define IMPL_BYTEA_LIKE(res, ta, tb)     impl_like(false, true, &args[0], &args[1], r)
#define IMPL_BYTEA_NOT_LIKE(res, ta, tb) impl_like(true, true, &args[0], &args[1], r)

#endif  /* PGSTROM_DEVICE_WIDE_H */
