/*
 * device_compare.h - the comparison operators (= <> < <= > >=) of every
 * device type but text, bpchar and timestamptz: one three-way comparison
 * per type family, as the btree support functions compute it (integers
 * across widths, floats with NaN above everything, numeric, date against
 * timestamp, interval / uuid / timetz / bytea), then the operator's
 * answer.  Text and bpchar compare in device_text.h, timestamptz in
 * device_tz.h.
 *
 * Mirrors: the btree comparison functions of src/backend/utils/adt/
 * int.c, int8.c, float.c, numeric.c, date.c, timestamp.c, uuid.c and
 * varlena.c (btint4cmp, float8_cmp, numeric_cmp, date_cmp_timestamp ...).
 */
#ifndef PGSTROM_DEVICE_COMPARE_H
#define PGSTROM_DEVICE_COMPARE_H

#include "device_datetime.h"
#include "device_float.h"
#include "device_numeric.h"
#include "device_wide.h"

/* A comparison's result from a three-way one: op 0 =, 1 <>, 2 <, 3 <=,
 * 4 >, 5 >= (the IMPL_CMP_* order) */
DEVICE_FUNC int64_t
dev_cmp_op(int op, int c)
{
    switch (op)
    {
        case 0: return c == 0;
        case 1: return c != 0;
        case 2: return c < 0;
        case 3: return c <= 0;
        case 4: return c > 0;
        default: return c >= 0;
    }
}

DEVICE_FUNC int32_t
impl_compare(int op, int ta, int tb, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int c;

    if (ta == DT_NUMERIC)
    {
        int32_t rc = dev_num_compare(a, b, &c);

        if (rc != DEVERR_OK)
            return rc;
    }
    else if (ta == DT_INTERVAL || ta == DT_UUID || ta == DT_TIMETZ || ta == DT_BYTEA)
        c = dev_wide_compare(ta, a, b);
    else if (dev_is_float(ta) || dev_is_float(tb))
        c = pgstrom_cmp3(dev_as_f8(ta, a), dev_as_f8(tb, b));
    else if (ta == DT_DATE && tb == DT_TIMESTAMP)
        c = dev_date_cmp_timestamp(a->v.i, b->v.i);
    else if (ta == DT_TIMESTAMP && tb == DT_DATE)
        c = -dev_date_cmp_timestamp(b->v.i, a->v.i);
    else
        c = pgstrom_cmp3(a->v.i, b->v.i);
    r->v.i = dev_cmp_op(op, c);
    return DEVERR_OK;
}

#define IMPL_CMP_EQ(res, ta, tb)   impl_compare(0, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_NE(res, ta, tb)   impl_compare(1, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_LT(res, ta, tb)   impl_compare(2, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_LE(res, ta, tb)   impl_compare(3, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_GT(res, ta, tb)   impl_compare(4, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_GE(res, ta, tb)   impl_compare(5, ta, tb, &args[0], &args[1], r)

#endif  /* PGSTROM_DEVICE_COMPARE_H */
