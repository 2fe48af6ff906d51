/*
 * device_casts.h - casts among the date/time types and between bool and
 * int4 that are not arithmetic: timestamp::time, time::interval,
 * timetz::time, date + time, int4::bool and bool::int4.  Each follows
 * timestamp.c, date.c and int.c (timestamp_time, time_interval,
 * timetz_time, datetime_timestamp, int4_bool, bool_int4): the same
 * results, infinities and errors.
 *
 * Included by device_interp.h after device_wide.h.
 */
#ifndef PGSTROM_DEVICE_CASTS_H
#define PGSTROM_DEVICE_CASTS_H

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

#define IMPL_TS_TO_TIME(res, ta, tb)        impl_ts_to_time(&args[0], r)
#define IMPL_TIME_TO_INTERVAL(res, ta, tb)  impl_time_to_interval(&args[0], r)
#define IMPL_TIMETZ_TO_TIME(res, ta, tb)    impl_timetz_to_time(&args[0], r)
#define IMPL_DATE_PL_TIME(res, ta, tb)      impl_date_pl_time(&args[0], &args[1], r)
/* int4_bool: non-zero is true; bool_int4: 1 or 0 */
#define IMPL_INT4_TO_BOOL(res, ta, tb)      (r->v.i = (args[0].v.i != 0), DEVERR_OK)
#define IMPL_BOOL_TO_INT4(res, ta, tb)      (r->v.i = (args[0].v.i != 0), DEVERR_OK)

#endif  /* PGSTROM_DEVICE_CASTS_H */
