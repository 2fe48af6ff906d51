/*
 * device_datetime.h - date and timestamp (without time zone): date +/-
 * integer, date - date, the comparison of a date with a timestamp,
 * make_date, date::timestamp, extract / date_part and date_trunc, and the
 * calendar helpers they share (date2j / j2date / j2day, timestamp2tm,
 * the ISO week, the units extract and date_trunc know).  Interval, time
 * and timetz arithmetic live in device_wide.h, timestamptz in
 * device_tz.h.
 *
 * Mirrors: src/backend/utils/adt/date.c, timestamp.c, datetime.c.
 */
#ifndef PGSTROM_DEVICE_DATETIME_H
#define PGSTROM_DEVICE_DATETIME_H

#include "device_numeric.h"

/* ---- date vs timestamp (date.c) ----------------------------------------- */

/* date_cmp_timestamp_internal (date.c): the date as a timestamp; a date
 * past the timestamp range is above every finite timestamp but below
 * 'infinity' */
DEVICE_FUNC int
dev_date_cmp_timestamp(int64_t d, int64_t ts)
{
    int64_t t;

    if (d == (-2147483647 - 1))
        t = DEV_INT64_MIN;                  /* -infinity */
    else if (d == 2147483647)
        t = DEV_INT64_MAX;                  /* infinity */
    else if (d >= 106751983LL)              /* TIMESTAMP_END_JULIAN - epoch */
        return ts == DEV_INT64_MAX ? -1 : 1;
    else
        t = d * 86400000000LL;
    return pgstrom_cmp3(t, ts);
}

/* ---- date arithmetic (date.c) ------------------------------------------- */

#define DEV_DATE_NOT_FINITE(d)  ((d) == (-2147483647 - 1) || (d) == 2147483647)
/* IS_VALID_DATE: DATETIME_MIN_JULIAN .. DATE_END_JULIAN, less the epoch */
#define DEV_DATE_IS_VALID(d)    ((d) >= -2451545LL && (d) < 2145031949LL)

DEVICE_FUNC int32_t
impl_date(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int64_t d = a->v.i;

    if (op == 2)                                /* date_mi */
    {
        if (DEV_DATE_NOT_FINITE(d) || DEV_DATE_NOT_FINITE(b->v.i))
            return DEVERR_INFINITE_DATES;
        r->v.i = (int32_t) (d - b->v.i);
        return DEVERR_OK;
    }
    if (DEV_DATE_NOT_FINITE(d))                 /* can't change infinity */
    {
        r->v.i = d;
        return DEVERR_OK;
    }
    d = (op == 0) ? d + b->v.i : d - b->v.i;
    if (!DEV_DATE_IS_VALID(d))
        return DEVERR_DATE_RANGE;
    r->v.i = d;
    return DEVERR_OK;
}

#define IMPL_DATE_PLI(res, ta, tb)  impl_date(0, &args[0], &args[1], r)
#define IMPL_DATE_MII(res, ta, tb)  impl_date(1, &args[0], &args[1], r)
#define IMPL_DATE_MI(res, ta, tb)   impl_date(2, &args[0], &args[1], r)


/* ---- extract / date_part / date_trunc (timestamp.c, date.c) ------------- */

#define DEV_POSTGRES_EPOCH_JDATE    2451545
#define DEV_UNIX_EPOCH_JDATE        2440588
#define DEV_USECS_PER_DAY           86400000000LL
#define DEV_TS_NOT_FINITE(t)        ((t) == DEV_INT64_MIN || (t) == DEV_INT64_MAX)

/* date2j / j2date / j2day of datetime.c (the proleptic Gregorian calendar,
 * astronomical years: 0 is 1 BC) */
DEVICE_FUNC int
dev_date2j(int year, int month, int day)
{
    int julian, century;

    if (month > 2)
    {
        month += 1;
        year += 4800;
    }
    else
    {
        month += 13;
        year += 4799;
    }
    century = year / 100;
    julian = year * 365 - 32167;
    julian += year / 4 - century + century / 4;
    julian += 7834 * month / 256 + day;
    return julian;
}

DEVICE_FUNC void
dev_j2date(int jd, int *year, int *month, int *day)
{
    unsigned int julian = (unsigned int) jd, quad, extra;
    int y;

    julian += 32044;
    quad = julian / 146097;
    extra = (julian - quad * 146097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146097;
    quad = julian / 1461;
    julian -= quad * 1461;
    y = julian * 4 / 1461;
    julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
    y += quad * 4;
    *year = y - 4800;
    quad = julian * 2141 / 65536;
    *day = julian - 7834 * quad / 256;
    *month = (quad + 10) % 12 + 1;
}

DEVICE_FUNC int
dev_j2day(int date)
{
    date += 1;
    date %= 7;
    if (date < 0)
        date += 7;
    return date;
}

/* date2isoweek (op 0) and date2isoyear (op 1) */
DEVICE_FUNC int
dev_iso(int op, int year, int mon, int mday)
{
    int dayn = dev_date2j(year, mon, mday);
    int day4 = dev_date2j(year, 1, 4);
    int day0 = dev_j2day(day4 - 1);
    int week;

    if (dayn < day4 - day0)
    {
        day4 = dev_date2j(year - 1, 1, 4);
        day0 = dev_j2day(day4 - 1);
        year--;
    }
    week = (dayn - (day4 - day0)) / 7 + 1;
    if (week >= 52)
    {
        day4 = dev_date2j(year + 1, 1, 4);
        day0 = dev_j2day(day4 - 1);
        if (dayn >= day4 - day0)
        {
            week = (dayn - (day4 - day0)) / 7 + 1;
            year++;
        }
    }
    return op == 0 ? week : year;
}

/* The units the device knows, by their canonical lower-case names; any
 * other spelling (plurals, abbreviations, upper case) goes to PostgreSQL,
 * whose DecodeUnits accepts many more. */
enum
{
    DU_NONE = 0, DU_MICROSEC, DU_MILLISEC, DU_SECOND, DU_MINUTE, DU_HOUR, DU_DAY,
    DU_WEEK, DU_MONTH, DU_QUARTER, DU_YEAR, DU_DECADE, DU_CENTURY, DU_MILLENNIUM,
    DU_ISOYEAR, DU_DOW, DU_ISODOW, DU_DOY, DU_EPOCH
};

DEVICE_FUNC bool
dev_text_is(const DevDatum *t, const char *s)
{
    const uint8_t *p = (const uint8_t *) t->v.i;
    int32_t i = 0;

    for (; s[i] != 0; i++)
    {
        if (i >= t->len || p[i] != (uint8_t) s[i])
            return false;
    }
    return i == t->len;
}

DEVICE_FUNC int
dev_datetime_unit(const DevDatum *t)
{
    if (dev_text_is(t, "year")) return DU_YEAR;
    if (dev_text_is(t, "month")) return DU_MONTH;
    if (dev_text_is(t, "day")) return DU_DAY;
    if (dev_text_is(t, "hour")) return DU_HOUR;
    if (dev_text_is(t, "minute")) return DU_MINUTE;
    if (dev_text_is(t, "second")) return DU_SECOND;
    if (dev_text_is(t, "quarter")) return DU_QUARTER;
    if (dev_text_is(t, "week")) return DU_WEEK;
    if (dev_text_is(t, "dow")) return DU_DOW;
    if (dev_text_is(t, "isodow")) return DU_ISODOW;
    if (dev_text_is(t, "doy")) return DU_DOY;
    if (dev_text_is(t, "epoch")) return DU_EPOCH;
    if (dev_text_is(t, "decade")) return DU_DECADE;
    if (dev_text_is(t, "century")) return DU_CENTURY;
    if (dev_text_is(t, "millennium")) return DU_MILLENNIUM;
    if (dev_text_is(t, "isoyear")) return DU_ISOYEAR;
    if (dev_text_is(t, "milliseconds")) return DU_MILLISEC;
    if (dev_text_is(t, "microseconds")) return DU_MICROSEC;
    return DU_NONE;
}

/* the year-based units of an astronomical year */
DEVICE_FUNC int64_t
dev_year_unit(int unit, int year)
{
    switch (unit)
    {
        case DU_YEAR: return year > 0 ? year : year - 1;
        case DU_DECADE: return year >= 0 ? year / 10 : -((8 - (year - 1)) / 10);
        case DU_CENTURY: return year > 0 ? (year + 99) / 100 : -((99 - (year - 1)) / 100);
        default: return year > 0 ? (year + 999) / 1000 : -((999 - (year - 1)) / 1000);
    }
}

/* the result of extract (numeric) or date_part (float8): v / 10^scale */
DEVICE_FUNC int32_t
dev_part_result(int res, int64_t v, int scale, DevDatum *r)
{
    if (res == DT_NUMERIC)
    {
        dev_num_set(r, (dev_i128) v, scale);
        return DEVERR_OK;
    }
    r->v.f8 = scale == 0 ? (double) v : (double) v / (scale == 3 ? 1000.0 : 1000000.0);
    return DEVERR_OK;
}

/* A broken-down date and time (timestamp2tm / time2tm / j2date). */
typedef struct
{
    int         year, mon, mday, hour, min, sec;
    int64_t     fsec;
} DevTm;

/* time2tm: a time of day in microseconds */
DEVICE_FUNC void
dev_time2tm(int64_t t, DevTm *tm)
{
    tm->hour = (int) (t / 3600000000LL);
    t -= tm->hour * 3600000000LL;
    tm->min = (int) (t / 60000000LL);
    t -= tm->min * 60000000LL;
    tm->sec = (int) (t / 1000000LL);
    tm->fsec = t - tm->sec * 1000000LL;
}

/* timestamp2tm of a finite timestamp; false where PostgreSQL's fails */
DEVICE_FUNC bool
dev_timestamp2tm(int64_t ts, DevTm *tm)
{
    int64_t date = ts / DEV_USECS_PER_DAY, t, jd;

    t = ts - date * DEV_USECS_PER_DAY;
    if (t < 0)
    {
        t += DEV_USECS_PER_DAY;
        date -= 1;
    }
    jd = date + DEV_POSTGRES_EPOCH_JDATE;
    if (jd < 0 || jd > 2147483647LL)
        return false;
    dev_j2date((int) jd, &tm->year, &tm->mon, &tm->mday);
    dev_time2tm(t, tm);
    return true;
}

/* the monotonic units, ±Infinity at infinite inputs (others are NULL) */
DEVICE_FUNC bool
dev_unit_is_monotonic(int u)
{
    return u == DU_YEAR || u == DU_DECADE || u == DU_CENTURY || u == DU_MILLENNIUM ||
           u == DU_ISOYEAR || u == DU_EPOCH;
}

/*
 * extract(unit FROM date | timestamp | time) (numeric) and date_part(unit,
 * timestamp | time) (float8), as extract_date, timestamp_part_common and
 * time_part_common compute them.  A unit the device does not know, or one
 * PostgreSQL rejects for the type (it raises), goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_extract(int res, int type, const DevDatum *unit, const DevDatum *a, DevDatum *r)
{
    int u = dev_datetime_unit(unit);
    int64_t v = a->v.i;
    DevTm tm = {0, 0, 0, 0, 0, 0, 0};

    if (u == DU_NONE || (type == DT_TIME && u > DU_HOUR && u != DU_EPOCH) || (type == DT_DATE && u <= DU_HOUR))
        return DEVERR_NEEDS_CPU;
    if ((type == DT_DATE && DEV_DATE_NOT_FINITE(v)) || (type == DT_TIMESTAMP && DEV_TS_NOT_FINITE(v)))
    {
        if (!dev_unit_is_monotonic(u))
        {
            r->isnull = 1;
            return DEVERR_OK;
        }
        if (res == DT_FLOAT8)
        {
            r->v.f8 = v > 0 ? dev_inf() : -dev_inf();
            return DEVERR_OK;
        }
        return dev_num_special(r, v > 0 ? NUM_PINF : NUM_NINF);
    }
    if (u == DU_EPOCH)
    {
        const int64_t epoch = -946684800000000LL;   /* SetEpochTimestamp */

        if (type == DT_TIME)
            return res == DT_FLOAT8 ? (r->v.f8 = (double) v / 1000000.0, DEVERR_OK) : dev_part_result(res, v, 6, r);
        if (type == DT_DATE)
            return dev_part_result(res, (v + DEV_POSTGRES_EPOCH_JDATE - DEV_UNIX_EPOCH_JDATE) * 86400LL, 0, r);
        if (v < DEV_INT64_MAX + epoch)
            return res == DT_FLOAT8 ? (r->v.f8 = (double) (v - epoch) / 1000000.0, DEVERR_OK)
                                    : dev_part_result(res, v - epoch, 6, r);
        if (res == DT_FLOAT8)
        {
            r->v.f8 = ((double) v - (double) epoch) / 1000000.0;
            return DEVERR_OK;
        }
        dev_num_set(r, (dev_i128) v - epoch, 6);
        return DEVERR_OK;
    }
    if (type == DT_TIME)
        dev_time2tm(v, &tm);
    else if (type == DT_DATE)
        dev_j2date((int) (v + DEV_POSTGRES_EPOCH_JDATE), &tm.year, &tm.mon, &tm.mday);
    else if (!dev_timestamp2tm(v, &tm))
        return DEVERR_NEEDS_CPU;                    /* an error there */
    switch (u)
    {
        case DU_MICROSEC: return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 0, r);
        case DU_MILLISEC:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = tm.sec * 1000.0 + tm.fsec / 1000.0;
                return DEVERR_OK;
            }
            return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 3, r);
        case DU_SECOND:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = tm.sec + tm.fsec / 1000000.0;
                return DEVERR_OK;
            }
            return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 6, r);
        case DU_MINUTE: return dev_part_result(res, tm.min, 0, r);
        case DU_HOUR: return dev_part_result(res, tm.hour, 0, r);
        case DU_DAY: return dev_part_result(res, tm.mday, 0, r);
        case DU_MONTH: return dev_part_result(res, tm.mon, 0, r);
        case DU_QUARTER: return dev_part_result(res, (tm.mon - 1) / 3 + 1, 0, r);
        case DU_WEEK: return dev_part_result(res, dev_iso(0, tm.year, tm.mon, tm.mday), 0, r);
        case DU_YEAR:
        case DU_DECADE:
        case DU_CENTURY:
        case DU_MILLENNIUM: return dev_part_result(res, dev_year_unit(u, tm.year), 0, r);
        case DU_ISOYEAR:
        {
            int y = dev_iso(1, tm.year, tm.mon, tm.mday);

            return dev_part_result(res, y <= 0 ? y - 1 : y, 0, r);
        }
        case DU_DOW:
        case DU_ISODOW:
        {
            int dow = dev_j2day(dev_date2j(tm.year, tm.mon, tm.mday));

            return dev_part_result(res, (u == DU_ISODOW && dow == 0) ? 7 : dow, 0, r);
        }
        case DU_DOY:
            return dev_part_result(res, dev_date2j(tm.year, tm.mon, tm.mday) - dev_date2j(tm.year, 1, 1) + 1, 0, r);
        default:
            return DEVERR_NEEDS_CPU;
    }
}

/* The fields of a date_trunc to `u` (a unit up to DU_MILLENNIUM), as
 * timestamp_trunc and timestamptz_trunc_internal set them. */
DEVICE_FUNC void
dev_trunc_tm(int u, DevTm *tm)
{
    int year = tm->year, mon = tm->mon, mday = tm->mday;

    switch (u)
    {
        case DU_WEEK:
        {
            int woy = dev_iso(0, year, mon, mday);
            int day4, day0;

            if (woy >= 52 && mon == 1)
                --year;
            if (woy <= 1 && mon == 12)
                ++year;
            day4 = dev_date2j(year, 1, 4);
            day0 = dev_j2day(day4 - 1);
            dev_j2date((woy - 1) * 7 + (day4 - day0), &tm->year, &tm->mon, &tm->mday);
            tm->hour = tm->min = tm->sec = 0;
            tm->fsec = 0;
            return;
        }
        case DU_MILLISEC:
            tm->fsec = (tm->fsec / 1000) * 1000;
            return;
        case DU_MICROSEC:
            return;
        default:
            break;
    }
    if (u == DU_MILLENNIUM)
        year = year > 0 ? ((year + 999) / 1000) * 1000 - 999 : -((999 - (year - 1)) / 1000) * 1000 + 1;
    if (u == DU_MILLENNIUM || u == DU_CENTURY)
        year = year > 0 ? ((year + 99) / 100) * 100 - 99 : -((99 - (year - 1)) / 100) * 100 + 1;
    if (u == DU_DECADE)
        year = year > 0 ? (year / 10) * 10 : -((8 - (year - 1)) / 10) * 10;
    tm->year = year;
    if (u >= DU_YEAR)
        tm->mon = 1;
    if (u >= DU_QUARTER)
        tm->mon = (3 * ((tm->mon - 1) / 3)) + 1;
    if (u >= DU_MONTH)
        tm->mday = 1;
    if (u >= DU_DAY)
        tm->hour = 0;
    if (u >= DU_HOUR)
        tm->min = 0;
    if (u >= DU_MINUTE)
        tm->sec = 0;
    tm->fsec = 0;
}

/* date_trunc(unit, timestamp), as timestamp_trunc */
DEVICE_NOINLINE int32_t
impl_date_trunc(const DevDatum *unit, const DevDatum *a, DevDatum *r)
{
    int u = dev_datetime_unit(unit);
    int64_t ts = a->v.i, days, result;
    DevTm tm;

    /* PostgreSQL checks the unit of an infinite value too */
    if (u == DU_NONE || u > DU_MILLENNIUM)
        return DEVERR_NEEDS_CPU;
    if (DEV_TS_NOT_FINITE(ts))
    {
        r->v.i = ts;
        return DEVERR_OK;
    }
    if (!dev_timestamp2tm(ts, &tm))
        return DEVERR_TIMESTAMP_RANGE;          /* timestamp2tm fails there */
    dev_trunc_tm(u, &tm);
    /* tm2timestamp's final range check (MIN_TIMESTAMP .. END_TIMESTAMP) */
    days = dev_date2j(tm.year, tm.mon, tm.mday) - DEV_POSTGRES_EPOCH_JDATE;
    result = days * DEV_USECS_PER_DAY + ((((int64_t) tm.hour * 60 + tm.min) * 60) + tm.sec) * 1000000LL + tm.fsec;
    if (result < -211813488000000000LL || result >= 9223371331200000000LL)
        return DEVERR_TIMESTAMP_RANGE;
    r->v.i = result;
    return DEVERR_OK;
}

/* date2timestamp */
DEVICE_FUNC int32_t
impl_date_to_ts(const DevDatum *a, DevDatum *r)
{
    int64_t d = a->v.i;

    if (d == (-2147483647 - 1))
        r->v.i = DEV_INT64_MIN;
    else if (d == 2147483647)
        r->v.i = DEV_INT64_MAX;
    else if (d >= 106751983LL)              /* TIMESTAMP_END_JULIAN - epoch */
        return DEVERR_DATE_TS_RANGE;
    else
        r->v.i = d * DEV_USECS_PER_DAY;
    return DEVERR_OK;
}

/* day_tab: the days of month `mon` of astronomical year `year` */
DEVICE_FUNC int
dev_days_in_month(int64_t year, int64_t mon)
{
    bool leap = (year % 4) == 0 && ((year % 100) != 0 || (year % 400) == 0);

    if (mon == 2)
        return leap ? 29 : 28;
    return (mon == 4 || mon == 6 || mon == 9 || mon == 11) ? 30 : 31;
}

/*
 * make_date(year, month, day): a negative year is BC.  Where PostgreSQL
 * raises an error (its message shows the fields), the row is left to it.
 */
DEVICE_FUNC int32_t
impl_make_date(const DevDatum *args, DevDatum *r)
{
    int64_t y = args[0].v.i, m = args[1].v.i, d = args[2].v.i, date;

    if (y == 0 || y == -2147483647LL - 1 || m < 1 || m > 12 || d < 1 || d > 31)
        return DEVERR_NEEDS_CPU;
    if (y < 0)
        y = y + 1;                          /* 1 BC is year 0 */
    /* the day of the month, then IS_VALID_JULIAN and IS_VALID_DATE */
    if (d > dev_days_in_month(y, m) || !((y > -4713 || (y == -4713 && m >= 11)) && (y < 5874898 || (y == 5874898 && m < 6))))
        return DEVERR_NEEDS_CPU;
    date = (int64_t) dev_date2j((int) y, (int) m, (int) d) - DEV_POSTGRES_EPOCH_JDATE;
    if (date < -DEV_POSTGRES_EPOCH_JDATE || date >= 2147483494LL - DEV_POSTGRES_EPOCH_JDATE)
        return DEVERR_NEEDS_CPU;
    r->v.i = date;
    return DEVERR_OK;
}

#define IMPL_MAKE_DATE(res, ta, tb)     impl_make_date(args, r)
#define IMPL_DATE_TO_TS(res, ta, tb)    impl_date_to_ts(&args[0], r)
#define IMPL_EXTRACT(res, ta, tb)       impl_extract(res, tb, &args[0], &args[1], r)
#define IMPL_DATE_TRUNC(res, ta, tb)    impl_date_trunc(&args[0], &args[1], r)

#endif  /* PGSTROM_DEVICE_DATETIME_H */
