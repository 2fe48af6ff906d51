/*
 * device_int.h - int2, int4 and int8 arithmetic, as int.c and int8.c
 * compute it, with the overflow checks of common/int.h: the exact result
 * or the "smallint / integer / bigint out of range" and "division by
 * zero" errors PostgreSQL raises.  Also the range check every integer
 * result goes through (casts among the integer types included).
 *
 * Mirrors: src/backend/utils/adt/int.c, int8.c, src/include/common/int.h.
 */
#ifndef PGSTROM_DEVICE_INT_H
#define PGSTROM_DEVICE_INT_H

#include "device_program.h"

#define DEV_INT64_MIN   (-0x7fffffffffffffffLL - 1)
#define DEV_INT64_MAX   0x7fffffffffffffffLL

/* The "out of range" error of an integer result type. */
DEVICE_FUNC int32_t
dev_int_range_error(int type)
{
    return type == DT_INT2 ? DEVERR_SMALLINT_RANGE
         : type == DT_INT4 ? DEVERR_INTEGER_RANGE : DEVERR_BIGINT_RANGE;
}

/* Store an exact integer result, checking the result type's range. */
DEVICE_FUNC int32_t
dev_int_result(int type, int64_t v, DevDatum *r)
{
    if ((type == DT_INT2 && (v < -32768 || v > 32767)) ||
        (type == DT_INT4 && (v < -2147483647LL - 1 || v > 2147483647LL)))
        return dev_int_range_error(type);
    r->v.i = v;
    return DEVERR_OK;
}

/* int64 arithmetic with overflow detection (no 128-bit types needed). */
DEVICE_FUNC bool
dev_add64_overflows(int64_t a, int64_t b, int64_t *r)
{
    int64_t s = (int64_t) ((uint64_t) a + (uint64_t) b);
    *r = s;
    return ((a ^ s) & (b ^ s)) < 0;
}

DEVICE_FUNC bool
dev_sub64_overflows(int64_t a, int64_t b, int64_t *r)
{
    int64_t s = (int64_t) ((uint64_t) a - (uint64_t) b);
    *r = s;
    return ((a ^ b) & (a ^ s)) < 0;
}

DEVICE_FUNC bool
dev_mul64_overflows(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0)
    {
        *r = 0;
        return false;
    }
    if ((a == -1 && b == DEV_INT64_MIN) || (b == -1 && a == DEV_INT64_MIN))
        return true;
    int64_t p = (int64_t) ((uint64_t) a * (uint64_t) b);
    *r = p;
    return p / b != a;
}

DEVICE_FUNC int32_t
impl_int_arith(int op, int res, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int64_t x = a->v.i, y = b->v.i, z = 0;

    if (res != DT_INT8)
    {
        /* operands of 32 bits or less: exact in int64, then range check */
        switch (op)
        {
            case 0: z = x + y; break;
            case 1: z = x - y; break;
            case 2: z = x * y; break;
            case 3:
                if (y == 0)
                    return DEVERR_DIVISION_BY_ZERO;
                z = x / y;
                break;
        }
        return dev_int_result(res, z, r);
    }
    switch (op)
    {
        case 0: if (dev_add64_overflows(x, y, &z)) return DEVERR_BIGINT_RANGE; break;
        case 1: if (dev_sub64_overflows(x, y, &z)) return DEVERR_BIGINT_RANGE; break;
        case 2: if (dev_mul64_overflows(x, y, &z)) return DEVERR_BIGINT_RANGE; break;
        case 3:
            if (y == 0)
                return DEVERR_DIVISION_BY_ZERO;
            if (y == -1)
            {
                if (x == DEV_INT64_MIN)
                    return DEVERR_BIGINT_RANGE;
                z = -x;
            }
            else
                z = x / y;
            break;
    }
    r->v.i = z;
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_int_mod(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    if (b->v.i == 0)
        return DEVERR_DIVISION_BY_ZERO;
    /* x % -1 is 0; computing it could trap on the minimum value */
    r->v.i = (b->v.i == -1) ? 0 : a->v.i % b->v.i;
    return DEVERR_OK;
}

#define IMPL_INT_ADD(res, ta, tb)  impl_int_arith(0, res, &args[0], &args[1], r)
#define IMPL_INT_SUB(res, ta, tb)  impl_int_arith(1, res, &args[0], &args[1], r)
#define IMPL_INT_MUL(res, ta, tb)  impl_int_arith(2, res, &args[0], &args[1], r)
#define IMPL_INT_DIV(res, ta, tb)  impl_int_arith(3, res, &args[0], &args[1], r)
#define IMPL_INT_MOD(res, ta, tb)  impl_int_mod(&args[0], &args[1], r)

#define IMPL_CAST_INT(res, ta, tb) dev_int_result(res, args[0].v.i, r)

#endif  /* PGSTROM_DEVICE_INT_H */
