/*
 * device_hash.h - what every multi-step device operation shares: a
 * reference to a validated program, and the hash of values and keys
 * (joins hash their keys with it, GROUP BY its grouping keys).
 *
 * The hash of a value is the same function of the value for every type of
 * one family: integers by value (int2, int4 and int8 alike), floats as
 * float8 with -0 = 0 and one NaN, text by its bytes, bpchar without
 * trailing blanks, numerics by value whatever their display scale (1.0 =
 * 1.00), intervals by their span.
 *
 * Mirrors: no PostgreSQL file; these are pg_strom's own hashes, not the
 * values of PostgreSQL's hash functions (hashfunc.c and friends).
 */
#ifndef PGSTROM_DEVICE_HASH_H
#define PGSTROM_DEVICE_HASH_H

#include "device_interp.h"

#define PGSTROM_MAX_JOIN_KEYS   8

/* A validated program in the engine's memory. */
typedef struct
{
    const DevInstr *code;
    uint32_t        ninstrs;        /* 0: no program (always true) */
    uint32_t        result_type;
    const uint8_t  *data;
} DevProgramRef;

DEVICE_FUNC uint32_t
dev_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (uint32_t) x ^ (uint32_t) (x >> 32);
}

DEVICE_FUNC uint32_t
dev_hash_bytes(const uint8_t *p, int32_t len)
{
    uint32_t    h = 2166136261U;

    for (int32_t i = 0; i < len; i++)
    {
        h ^= p[i];
        h *= 16777619U;
    }
    return dev_hash_u64(((uint64_t) (uint32_t) len << 32) | h);
}

/* Hash of a numeric by value: the mantissa without trailing zeros (so
 * 1.0, 1.00 and 1 hash alike) and the scale left; 0 and the special kinds
 * by themselves.  NUM_BIG never reaches here: grouping keys and hash keys
 * of numeric type are bounded to 38 digits by the planner. */
DEVICE_FUNC uint32_t
dev_num_hash(const DevDatum *d)
{
    dev_i128 m = dev_num_mant(d);
    int32_t k = d->len;

    if (k < 0 || m == 0)
        return dev_hash_u64(k < 0 ? (uint64_t) (uint32_t) k : 0);
    dev_u128 mag = dev_u128_abs(m);

    for (;;)
    {
        dev_u128 q, rem;

        dev_udivmod128(mag, 10, &q, &rem);
        if (rem != 0)
            break;
        mag = q;
        k--;
    }
    return dev_hash_u64(((uint64_t) dev_hash_u64((uint64_t) mag) << 32) ^
                        ((uint64_t) (mag >> 64) * 31 + (uint64_t) (uint32_t) k * 2 + (m < 0)));
}

/* Hash of a non-NULL value of device type `type`. */
DEVICE_FUNC uint32_t
dev_hash_datum(uint32_t type, const DevDatum *d)
{
    switch (type)
    {
        case DT_FLOAT2:
        case DT_FLOAT4:
        case DT_FLOAT8:
        {
            union { double f; uint64_t u; } x;

            x.f = dev_as_f8((int) type, d);
            if (x.f != x.f)
                return 0x7ff80000U;         /* every NaN is equal */
            if (x.f == 0.0)
                x.f = 0.0;                  /* -0 = 0 */
            return dev_hash_u64(x.u);
        }
        case DT_TEXT:
        case DT_BYTEA:
            return dev_hash_bytes((const uint8_t *) d->v.i, d->len);
        case DT_UUID:
        case DT_TIMETZ:
            return dev_hash_u64(((uint64_t) dev_hash_u64((uint64_t) d->v.i) << 32) ^ (uint64_t) d->hi);
        case DT_INTERVAL:
        {
            /* equal spans are equal intervals ('1 mon' = '30 days') */
            dev_i128 span = dev_interval_span(dev_interval_of(d));

            return dev_hash_u64(((uint64_t) dev_hash_u64((uint64_t) span) << 32) ^ (uint64_t) (span >> 64));
        }
        case DT_BPCHAR:
            return dev_hash_bytes((const uint8_t *) d->v.i, dev_bpchar_truelen(d));
        case DT_NUMERIC:
            return dev_num_hash(d);
        default:
            return dev_hash_u64((uint64_t) d->v.i);
    }
}

/* Hash of the keys at `rows`; *isnull when any key is NULL (no match). */
DEVICE_FUNC int32_t
dev_hash_keys(const DevProgramRef *keys, uint32_t nkeys,
              const DevColumn *cols, uint32_t ncols,
              const DevDatum *params, uint32_t nparams,
              const uint32_t *rows, uint32_t *hash, bool *isnull)
{
    uint32_t    h = 0;

    *isnull = false;
    for (uint32_t k = 0; k < nkeys && k < PGSTROM_MAX_JOIN_KEYS; k++)
    {
        DevDatum    d;
        int32_t     rc = dev_eval_row(keys[k].code, keys[k].ninstrs, keys[k].data,
                                      cols, ncols, params, nparams, rows, &d);

        if (rc != DEVERR_OK)
            return rc;
        if (d.isnull)
        {
            *isnull = true;
            return DEVERR_OK;
        }
        h = dev_hash_u64(((uint64_t) h << 32) | dev_hash_datum(keys[k].result_type, &d));
    }
    *hash = h;
    return DEVERR_OK;
}

#endif  /* PGSTROM_DEVICE_HASH_H */
