/*
 * preagg.cu - GpuPreAgg on the device: the combinations a join (or a scan:
 * a join of no depth) produced for one chunk, grouped by their grouping
 * keys and reduced to one set of partial aggregates per group, without
 * leaving the device.
 *
 * Per chunk the host runs, over the n final combinations:
 *   agg_init    : every slot of the group table empty, every accumulator
 *                 word at its initial value (a template per group);
 *   agg_keys    : each combination's grouping keys evaluated into keybuf,
 *                 and their hash;
 *   agg_rows    : each combination finds or claims its group's slot
 *                 (open addressing, linear probing, compare-and-swap on
 *                 the slot) and adds itself to the group's accumulators
 *                 with atomics;
 *   agg_collect : each claimed slot becomes one output group: the
 *                 combination that claimed it (its representative, where
 *                 the host reads text keys), its key values and its
 *                 accumulator words (a MIN_ANY / MAX_ANY operation's
 *                 value evaluated at its winning combination).
 * The table has at least twice as many slots as combinations, so it never
 * fills: a chunk of n combinations makes at most n groups.
 *
 * Grouping equality is PostgreSQL's for the device types: NULL equals
 * NULL, integers by value, floats with -0 = 0 and NaN = NaN, text by its
 * bytes, bpchar without trailing blanks, numerics by value (1.0 = 1.00),
 * intervals by span ('1 mon' = '30 days').  The key value reported for a
 * group is its representative's, as PostgreSQL reports the first value
 * of the group it met.
 *
 * Accumulator words (uint64 each) per operation, what the host turns into
 * PostgreSQL's partial aggregate states:
 *   COUNT     [n]                     count(*), count(x), regr_count(y, x)
 *   SUM_INT   [n, sum of low 32 bits, sum of high 32 bits (signed)]
 *             exact for any count below 2^32 of int8 values
 *   SUM_FLT   [n, sum (double)]
 *   MOMENTS   [n, sum d, sum d*d, c]  d = x - c, c = the first finite value
 *                                     of the group to arrive (AGG_NO_SHIFT
 *                                     while there is none: c = 0): shifted
 *                                     sums keep the variance exact to
 *                                     rounding, whatever the mean
 *   MOMENTS2  [n, sum dx, sum dx*dx, sum dy, sum dy*dy, sum dx*dy, cx, cy]
 *   MIN_INT / MAX_INT  [n, value]
 *   MIN_FLT / MAX_FLT  [n, value as an ordered integer]
 *   SUM_NUM   [n, max scale << 48 | rows at it, NaN, +Inf, -Inf, l0, l1, l2, l3]
 *             finite numerics as 128-bit mantissas at the op's scale (no
 *             value has a larger one: the planner proved it), summed in
 *             32-bit limbs (l3 signed): exact for fewer than 2^32 rows
 *   SUM_NUM_WIDE  as SUM_NUM, where the planner bounded the scale but not
 *             the digits: the rows step first checks every such op's
 *             value for the combination (wide_check); one the device
 *             cannot hold (over 38 digits, a larger scale, an overflow
 *             computing it) makes the combination an exception: it adds
 *             to no SUM_NUM_WIDE op (the other ops take it as usual) and
 *             its index goes to the exception list, from which the host
 *             forms a group of its own with those ops' values computed by
 *             PostgreSQL
 *   SUM_INTV  [n, +Inf, -Inf, months, days, time low 32 bits, time high 32
 *             bits (signed)]  finite intervals' fields summed apart (n
 *             counts them), infinite ones counted: exact below 2^32 rows
 *   MIN_NUM / MAX_NUM  [n, value, NaN]  numerics of a numeric(p,s) column
 *             (p <= 18: the planner checked) as integers at the op's
 *             scale s; NaN (above every number) counted
 *   MIN_ANY / MAX_ANY  [n, winner, value bits, value hi, len | NULL << 32]
 *             numerics of up to 38 digits, interval, timetz: the
 *             combination holding the least (greatest) value so far,
 *             replaced by compare-and-swap after comparing the values
 *             (the winner's value is evaluated again: values are
 *             immutable, so the loop is lock-free); of equal values the
 *             first to arrive stays.  The collect step writes the
 *             winner's value (a DevDatum: v, hi, len) into the last
 *             three words.
 */
#include "device_hash.h"

/* The operations: AGGOP_<name> (device_aggops.def, shared with agg.rs). */
enum DevAggKind
{
#define DEVAGG(name, rust_name, code, nwords, doc) AGGOP_##name = code,
#include "device_aggops.def"
#undef DEVAGG
};

#define PGSTROM_MAX_GROUP_KEYS  16
#define PGSTROM_AGG_EMPTY       0xffffffffU
#define PGSTROM_AGG_NO_WINNER   0xffffffffffffffffULL

/* One aggregate operation. */
typedef struct
{
    uint32_t        kind;           /* AGGOP_* */
    uint32_t        nargs;          /* 0, 1 or 2 */
    uint32_t        word;           /* its first accumulator word */
    int32_t         scale;          /* SUM_NUM: the scale of its sum */
    DevProgramRef   args[2];        /* MOMENTS2: args[0] = y, args[1] = x */
    DevProgramRef   filter;         /* FILTER (WHERE ...), or none */
} DevAggOp;

/* The aggregation of a join. */
typedef struct
{
    uint32_t        nkeys;
    uint32_t        nops;
    uint32_t        nwords;         /* accumulator words per group */
    uint32_t        reserved;
    const DevProgramRef *keys;      /* nkeys grouping keys */
    const DevAggOp  *ops;           /* nops operations */
    const uint64_t  *init;          /* nwords initial accumulator words */
} DevAggSpec;

/*
 * Did a + b = r overflow: both finite, r not?  (Finite operands never
 * make NaN; an infinite or NaN operand is PostgreSQL's no-error case.)
 */
DEVICE_FUNC bool
agg_overflows(double a, double b, double r)
{
    return a - a == 0.0 && b - b == 0.0 && r - r != 0.0;
}

#ifdef PGSTROM_GPU_TARGET
DEVICE_FUNC void
agg_add_u64(uint64_t *p, uint64_t v)
{
    atomicAdd((unsigned long long *) p, (unsigned long long) v);
}
/* Add v; true when the sum went from finite to infinite with v finite
 * (PostgreSQL's float8pl raises "value out of range: overflow" there). */
DEVICE_FUNC bool
agg_add_f8(uint64_t *p, double v)
{
    double old = atomicAdd((double *) p, v);

    return agg_overflows(old, v, old + v);
}
DEVICE_FUNC void
agg_min_i64(uint64_t *p, int64_t v)
{
    atomicMin((long long *) p, (long long) v);
}
DEVICE_FUNC void
agg_max_i64(uint64_t *p, int64_t v)
{
    atomicMax((long long *) p, (long long) v);
}
DEVICE_FUNC void
agg_min_u64(uint64_t *p, uint64_t v)
{
    atomicMin((unsigned long long *) p, (unsigned long long) v);
}
DEVICE_FUNC void
agg_max_u64(uint64_t *p, uint64_t v)
{
    atomicMax((unsigned long long *) p, (unsigned long long) v);
}
DEVICE_FUNC uint32_t
agg_cas_u32(uint32_t *p, uint32_t expected, uint32_t v)
{
    return atomicCAS(p, expected, v);
}
DEVICE_FUNC uint32_t
agg_load_u32(const uint32_t *p)
{
    return *(volatile const uint32_t *) p;
}
DEVICE_FUNC uint64_t
agg_cas_u64(uint64_t *p, uint64_t expected, uint64_t v)
{
    return atomicCAS((unsigned long long *) p, (unsigned long long) expected, (unsigned long long) v);
}
DEVICE_FUNC uint64_t
agg_load_u64(const uint64_t *p)
{
    return *(volatile const uint64_t *) p;
}
#else
DEVICE_FUNC void
agg_add_u64(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
DEVICE_FUNC bool
agg_add_f8(uint64_t *p, double v)
{
    double *d = (double *) p;
    double  old = *d;

    *d = old + v;
    return agg_overflows(old, v, *d);
}
DEVICE_FUNC void
agg_min_i64(uint64_t *p, int64_t v)
{
    if (v < (int64_t) *p)
        *p = (uint64_t) v;
}
DEVICE_FUNC void
agg_max_i64(uint64_t *p, int64_t v)
{
    if (v > (int64_t) *p)
        *p = (uint64_t) v;
}
DEVICE_FUNC void
agg_min_u64(uint64_t *p, uint64_t v)
{
    if (v < *p)
        *p = v;
}
DEVICE_FUNC void
agg_max_u64(uint64_t *p, uint64_t v)
{
    if (v > *p)
        *p = v;
}
DEVICE_FUNC uint32_t
agg_cas_u32(uint32_t *p, uint32_t expected, uint32_t v)
{
    uint32_t old = *p;

    if (old == expected)
        *p = v;
    return old;
}
DEVICE_FUNC uint32_t
agg_load_u32(const uint32_t *p)
{
    return *p;
}
DEVICE_FUNC uint64_t
agg_cas_u64(uint64_t *p, uint64_t expected, uint64_t v)
{
    uint64_t old = *p;

    if (old == expected)
        *p = v;
    return old;
}
DEVICE_FUNC uint64_t
agg_load_u64(const uint64_t *p)
{
    return *p;
}
#endif

/* numeric_avg_accum's maxScale / maxScaleCount, packed as scale << 48 |
 * count: a larger scale restarts the count.  `packed` is what to add: one
 * value's scale with count 1, or a block's partial word.  `cap` is the
 * largest scale a value may have (the op's): once the word holds it, no
 * value can raise it, and a value at it only counts, by one atomic add (a
 * compare-and-swap loop there is a queue of every thread of the grid on
 * one word when most rows of a few groups pass: TPC-H Q1's shape). */
#define AGG_SCALE_COUNT_MASK    0xffffffffffffULL

DEVICE_FUNC void
agg_merge_scale(uint64_t *p, uint64_t packed, uint32_t cap)
{
    uint64_t scale = packed >> 48, count = packed & AGG_SCALE_COUNT_MASK;
    uint64_t old = agg_load_u64(p);

    if (count == 0)
        return;
    if (scale == cap && (old >> 48) == cap)
    {
        agg_add_u64(p, count);
        return;
    }

    for (;;)
    {
        uint64_t os = old >> 48, next;

        if (scale > os)
            next = packed;
        else if (scale == os)
            next = old + count;
        else
            return;
        uint64_t seen = agg_cas_u64(p, old, next);

        if (seen == old)
            return;
        old = seen;
    }
}

DEVICE_FUNC void
agg_max_scale(uint64_t *p, uint32_t scale, uint32_t cap)
{
    agg_merge_scale(p, ((uint64_t) scale << 48) | 1, cap);
}

/*
 * A float as an unsigned integer of the same order: PostgreSQL's order,
 * where NaN is above +Infinity (every NaN made the positive quiet one).
 */
DEVICE_FUNC uint64_t
agg_flt_order(double x)
{
    union { double f; uint64_t u; } v;

    v.f = x;
    if (x != x)
        v.u = 0x7ff8000000000000ULL;
    return (v.u & 0x8000000000000000ULL) ? ~v.u : (v.u | 0x8000000000000000ULL);
}

DEVICE_FUNC bool
agg_is_finite(double x)
{
    return x == x && x - x == 0.0;
}

/*
 * The shift of a moments accumulator: the first finite value of the group
 * claims the word; every row uses what the word holds (0 while no finite
 * value came; a non-finite value makes the sums NaN or infinite whatever
 * the shift).  One compare-and-swap per row, as the sums' atomics.
 */
#define AGG_NO_SHIFT    0x7ff8deadbeef0001ULL

DEVICE_FUNC double
agg_shift(uint64_t *p, double x)
{
    union { double f; uint64_t u; } v;
    uint64_t mine, seen;

    v.f = x;
    mine = agg_is_finite(x) ? v.u : AGG_NO_SHIFT;
    seen = agg_cas_u64(p, AGG_NO_SHIFT, mine);
    v.u = (seen == AGG_NO_SHIFT) ? mine : seen;
    return v.u == AGG_NO_SHIFT ? 0.0 : v.f;
}

/* Equality of two grouping key values of device type `type`. */
DEVICE_FUNC bool
agg_key_equal(uint32_t type, const DevDatum *a, const DevDatum *b)
{
    if (a->isnull || b->isnull)
        return a->isnull && b->isnull;
    switch (type)
    {
        case DT_FLOAT2:
        case DT_FLOAT4:
        case DT_FLOAT8:
        {
            double x = dev_as_f8((int) type, a);
            double y = dev_as_f8((int) type, b);

            if (x != x || y != y)
                return x != x && y != y;
            return x == y;
        }
        case DT_TEXT:
        case DT_BYTEA:
            return dev_text_cmp(a, b) == 0;
        case DT_UUID:
        case DT_INTERVAL:
        case DT_TIMETZ:
            return dev_wide_compare((int) type, a, b) == 0;
        case DT_BPCHAR:
        {
            int32_t n = dev_bpchar_truelen(a);

            if (n != dev_bpchar_truelen(b))
                return false;
            for (int32_t i = 0; i < n; i++)
                if (((const uint8_t *) a->v.i)[i] != ((const uint8_t *) b->v.i)[i])
                    return false;
            return true;
        }
        case DT_NUMERIC:
            return dev_num_cmp(a, b) == 0;
        case DT_BOOL:
            return (a->v.i != 0) == (b->v.i != 0);
        default:
            return a->v.i == b->v.i;
    }
}

/* The order min() and max() follow for MIN_ANY / MAX_ANY's types:
 * numeric_cmp (NaN above +Infinity), interval by span, timetz by instant
 * then zone. */
DEVICE_FUNC int32_t
agg_value_cmp(uint32_t type, const DevDatum *a, const DevDatum *b, int *c)
{
    switch (type)
    {
        case DT_NUMERIC:
            return dev_num_compare(a, b, c);
        case DT_INTERVAL:
        case DT_TIMETZ:
            *c = dev_wide_compare((int) type, a, b);
            return DEVERR_OK;
        default:
            return DEVERR_INVALID_PROGRAM;
    }
}

/* Rows of combination k, for every source. */
DEVICE_FUNC void
agg_rows_of(const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
            uint32_t *rows)
{
    for (uint32_t s = 0; s < PGSTROM_MAX_SOURCES; s++)
        rows[s] = s < nsources ? in[(uint64_t) s * in_stride + k] : PGSTROM_NULL_ROW;
}

DEVICE_FUNC int32_t
agg_eval(const DevProgramRef *p, const DevColumn *cols, uint32_t ncols,
         const DevDatum *params, uint32_t nparams, const uint32_t *rows, DevDatum *d)
{
    return dev_eval_row(p->code, p->ninstrs, p->data, cols, ncols, params, nparams, rows, d);
}

/*
 * MIN_ANY / MAX_ANY: make combination k (whose non-NULL argument is *x)
 * the winner at *w when its value is less (greater) than the winner's.
 */
DEVICE_FUNC int32_t
agg_pick(const DevAggOp *op, const DevColumn *cols, uint32_t ncols,
         const DevDatum *params, uint32_t nparams,
         const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
         const DevDatum *x, uint64_t *w)
{
    uint64_t cur = agg_load_u64(w);

    for (;;)
    {
        if (cur != PGSTROM_AGG_NO_WINNER)
        {
            uint32_t rows[PGSTROM_MAX_SOURCES];
            DevDatum y;
            int      c;
            int32_t  rc;

            agg_rows_of(in, in_stride, nsources, (uint32_t) cur, rows);
            rc = agg_eval(&op->args[0], cols, ncols, params, nparams, rows, &y);
            if (rc != DEVERR_OK)
                return rc;
            rc = agg_value_cmp(op->args[0].result_type, x, &y, &c);
            if (rc != DEVERR_OK)
                return rc;
            if (op->kind == AGGOP_MIN_ANY ? c >= 0 : c <= 0)
                return DEVERR_OK;
        }
        uint64_t seen = agg_cas_u64(w, cur, k);

        if (seen == cur)
            return DEVERR_OK;
        cur = seen;
    }
}

/* Init step: slot i of the table and its accumulators. */
DEVICE_FUNC void
dev_agg_init_one(const DevAggSpec *spec, uint32_t i, uint32_t *table, uint64_t *words)
{
    table[i] = PGSTROM_AGG_EMPTY;
    for (uint32_t w = 0; w < spec->nwords; w++)
        words[(uint64_t) i * spec->nwords + w] = spec->init[w];
}

/* Keys step: the grouping keys of combination k and their hash. */
DEVICE_FUNC int32_t
dev_agg_keys_one(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                 const DevDatum *params, uint32_t nparams,
                 const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
                 DevDatum *keybuf, uint32_t *hashes)
{
    uint32_t    rows[PGSTROM_MAX_SOURCES];
    uint32_t    h = 0x9e3779b9U;

    if (spec->nkeys > PGSTROM_MAX_GROUP_KEYS || nsources > PGSTROM_MAX_SOURCES)
        return DEVERR_INVALID_PROGRAM;
    agg_rows_of(in, in_stride, nsources, k, rows);
    for (uint32_t g = 0; g < spec->nkeys; g++)
    {
        DevDatum   *d = &keybuf[(uint64_t) k * spec->nkeys + g];
        int32_t     rc = agg_eval(&spec->keys[g], cols, ncols, params, nparams, rows, d);

        if (rc != DEVERR_OK)
            return rc;
        h = dev_hash_u64(((uint64_t) h << 32) |
                         (d->isnull ? 0x5bd1e995U : dev_hash_datum(spec->keys[g].result_type, d)));
    }
    hashes[k] = h;
    return DEVERR_OK;
}

/* A numeric sum's value `a` as a 128-bit mantissa at the op's scale:
 * false when the device cannot hold it (the host must add it). */
DEVICE_FUNC bool
agg_num_at_scale(const DevAggOp *op, const DevDatum *a, dev_i128 *out)
{
    int32_t     k = a->len;
    dev_u128    mag;
    dev_i128    m;

    if (k == NUM_BIG || op->scale < 0 || op->scale > 38)
        return false;
    if (k < 0)
        return true;
    m = dev_num_mant(a);
    if (k > op->scale || !dev_scale_up(dev_u128_abs(m), op->scale - k, &mag) || mag > DEV_NUM_LIMIT)
        return false;
    *out = m < 0 ? -(dev_i128) mag : (dev_i128) mag;
    return true;
}

/* Whether op's FILTER (none: true) passes for the combination at `rows`. */
DEVICE_FUNC int32_t
agg_filter(const DevAggOp *op, const DevColumn *cols, uint32_t ncols,
           const DevDatum *params, uint32_t nparams, const uint32_t *rows, bool *passes)
{
    DevDatum    f;
    int32_t     rc;

    *passes = true;
    if (op->filter.ninstrs == 0)
        return DEVERR_OK;
    rc = agg_eval(&op->filter, cols, ncols, params, nparams, rows, &f);
    *passes = rc == DEVERR_OK && dev_is_true(&f);
    return rc;
}

/*
 * What the check of a combination's SUM_NUM_WIDE values found for the
 * first AGG_WIDE_KEPT such ops (in op order): whether the FILTER passed
 * and the value, which the accumulation then takes instead of evaluating
 * the argument again (TPC-H Q1's charge is four numeric operations).
 */
#define AGG_WIDE_KEPT   2

typedef struct
{
    uint32_t    n;                      /* ops kept */
    bool        passes[AGG_WIDE_KEPT];
    DevDatum    value[AGG_WIDE_KEPT];
} AggWideKept;

/* Combination k's values of every SUM_NUM_WIDE op: DEVERR_NEEDS_CPU when
 * the device cannot hold one (the combination is an exception), another
 * error as evaluating them raised it; `kept` gets the first ones. */
DEVICE_FUNC int32_t
agg_wide_check(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
               const DevDatum *params, uint32_t nparams, const uint32_t *rows,
               AggWideKept *kept)
{
    kept->n = 0;
    for (uint32_t o = 0; o < spec->nops; o++)
    {
        const DevAggOp *op = &spec->ops[o];
        DevDatum    a;
        dev_i128    m;
        int32_t     rc;
        bool        passes;

        if (op->kind != AGGOP_SUM_NUM_WIDE)
            continue;
        if (op->nargs != 1)
            return DEVERR_INVALID_PROGRAM;
        rc = agg_filter(op, cols, ncols, params, nparams, rows, &passes);
        if (rc != DEVERR_OK)
            return rc;
        if (!passes)
        {
            if (kept->n < AGG_WIDE_KEPT)
                kept->passes[kept->n++] = false;
            continue;
        }
        rc = agg_eval(&op->args[0], cols, ncols, params, nparams, rows, &a);
        if (rc != DEVERR_OK)
            return rc;
        if (!a.isnull && !agg_num_at_scale(op, &a, &m))
            return DEVERR_NEEDS_CPU;
        if (kept->n < AGG_WIDE_KEPT)
        {
            kept->passes[kept->n] = true;
            kept->value[kept->n++] = a;
        }
    }
    return DEVERR_OK;
}

/* Add combination k (rows) to the accumulators at `acc`; with `skip_wide`
 * (an exception) not to its SUM_NUM_WIDE ops, else with the values of
 * those `kept` holds (NULL: none). */
DEVICE_FUNC int32_t
dev_agg_accumulate(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                   const DevDatum *params, uint32_t nparams,
                   const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
                   const uint32_t *rows, uint64_t *acc, bool skip_wide,
                   const AggWideKept *kept)
{
    uint32_t    wide = 0;           /* SUM_NUM_WIDE ops met */

    for (uint32_t o = 0; o < spec->nops; o++)
    {
        const DevAggOp *op = &spec->ops[o];
        uint64_t   *w = acc + op->word;
        DevDatum    a[2];
        int32_t     rc;
        bool        passes;
        bool        given = false;  /* a[0] from `kept` */

        if (op->word >= spec->nwords || op->nargs > 2)
            return DEVERR_INVALID_PROGRAM;
        if (op->kind == AGGOP_SUM_NUM_WIDE)
        {
            uint32_t j = wide++;

            if (skip_wide)
                continue;
            if (kept && j < kept->n && op->nargs == 1)
            {
                if (!kept->passes[j] || kept->value[j].isnull)
                    continue;
                a[0] = kept->value[j];
                given = true;
            }
        }
        if (!given)
        {
            bool anynull = false;

            rc = agg_filter(op, cols, ncols, params, nparams, rows, &passes);
            if (rc != DEVERR_OK)
                return rc;
            if (!passes)
                continue;
            for (uint32_t i = 0; i < op->nargs; i++)
            {
                rc = agg_eval(&op->args[i], cols, ncols, params, nparams, rows, &a[i]);
                if (rc != DEVERR_OK)
                    return rc;
                anynull |= a[i].isnull != 0;
            }
            if (anynull)
                continue;
        }
        switch (op->kind)
        {
            case AGGOP_COUNT:
                agg_add_u64(&w[0], 1);
                break;
            case AGGOP_SUM_INT:
            {
                int64_t v = a[0].v.i;

                agg_add_u64(&w[0], 1);
                agg_add_u64(&w[1], (uint64_t) v & 0xffffffffULL);
                agg_add_u64(&w[2], (uint64_t) (v >> 32));
                break;
            }
            case AGGOP_SUM_FLT:
                agg_add_u64(&w[0], 1);
                if (agg_add_f8(&w[1], dev_as_f8((int) op->args[0].result_type, &a[0])))
                    return DEVERR_FLOAT_OVERFLOW;
                break;
            case AGGOP_MOMENTS:
            case AGGOP_MOMENTS2:
            {
                /* the shift: the group's first finite value (see agg_shift) */
                uint32_t na = op->kind == AGGOP_MOMENTS ? 1 : 2;
                double   x[2], c[2];

                for (uint32_t i = 0; i < na; i++)
                {
                    x[i] = dev_as_f8((int) op->args[i].result_type, &a[i]);
                    c[i] = agg_shift(&w[na == 1 ? 3 : (i == 0 ? 7 : 6)], x[i]);
                }
                agg_add_u64(&w[0], 1);
                /*
                 * Finite values whose deviation or first-order sum
                 * overflows: PostgreSQL's float8_accum raises "value out
                 * of range: overflow" there.  Squares and products that
                 * overflow are left as infinities: the host raises the
                 * error when the first-order sums stayed finite (no
                 * infinite input), as PostgreSQL does.
                 */
                if (na == 1)
                {
                    double d = x[0] - c[0];

                    if (agg_overflows(x[0], -c[0], d) || agg_add_f8(&w[1], d))
                        return DEVERR_FLOAT_OVERFLOW;
                    agg_add_f8(&w[2], d * d);
                }
                else
                {
                    /* args[0] = y, args[1] = x (PostgreSQL's order) */
                    double dy = x[0] - c[0];
                    double dx = x[1] - c[1];

                    if (agg_overflows(x[0], -c[0], dy) || agg_overflows(x[1], -c[1], dx))
                        return DEVERR_FLOAT_OVERFLOW;
                    if (agg_add_f8(&w[1], dx) || agg_add_f8(&w[3], dy))
                        return DEVERR_FLOAT_OVERFLOW;
                    agg_add_f8(&w[2], dx * dx);
                    agg_add_f8(&w[4], dy * dy);
                    agg_add_f8(&w[5], dx * dy);
                }
                break;
            }
            case AGGOP_MIN_INT:
                agg_add_u64(&w[0], 1);
                agg_min_i64(&w[1], a[0].v.i);
                break;
            case AGGOP_MAX_INT:
                agg_add_u64(&w[0], 1);
                agg_max_i64(&w[1], a[0].v.i);
                break;
            case AGGOP_MIN_FLT:
                agg_add_u64(&w[0], 1);
                agg_min_u64(&w[1], agg_flt_order(dev_as_f8((int) op->args[0].result_type, &a[0])));
                break;
            case AGGOP_MAX_FLT:
                agg_add_u64(&w[0], 1);
                agg_max_u64(&w[1], agg_flt_order(dev_as_f8((int) op->args[0].result_type, &a[0])));
                break;
            case AGGOP_SUM_NUM:
            case AGGOP_SUM_NUM_WIDE:
            {
                int32_t k = a[0].len;
                dev_i128 m = 0;

                if (!agg_num_at_scale(op, &a[0], &m))
                    return DEVERR_NEEDS_CPU;
                if (k < 0)
                {
                    agg_add_u64(&w[0], 1);
                    agg_add_u64(&w[k == NUM_NAN ? 2 : (k == NUM_PINF ? 3 : 4)], 1);
                    break;
                }
                agg_add_u64(&w[0], 1);
                agg_max_scale(&w[1], (uint32_t) k, (uint32_t) op->scale);
                agg_add_u64(&w[5], (uint64_t) m & 0xffffffffULL);
                agg_add_u64(&w[6], (uint64_t) (m >> 32) & 0xffffffffULL);
                agg_add_u64(&w[7], (uint64_t) (m >> 64) & 0xffffffffULL);
                agg_add_u64(&w[8], (uint64_t) (int64_t) (m >> 96));
                break;
            }
            case AGGOP_MIN_NUM:
            case AGGOP_MAX_NUM:
            {
                int32_t k = a[0].len;
                dev_u128 mag;
                dev_i128 m;

                agg_add_u64(&w[0], 1);
                if (k == NUM_NAN)
                {
                    agg_add_u64(&w[2], 1);
                    break;
                }
                m = dev_num_mant(&a[0]);
                /* values of the column's type fit; anything else is a
                 * broken plan */
                if (k < 0 || k > op->scale || op->scale > 18 ||
                    !dev_scale_up(dev_u128_abs(m), op->scale - k, &mag) || mag >= (dev_u128) 1000000000000000000ULL)
                    return DEVERR_INVALID_PROGRAM;
                if (op->kind == AGGOP_MIN_NUM)
                    agg_min_i64(&w[1], m < 0 ? -(int64_t) mag : (int64_t) mag);
                else
                    agg_max_i64(&w[1], m < 0 ? -(int64_t) mag : (int64_t) mag);
                break;
            }
            case AGGOP_MIN_ANY:
            case AGGOP_MAX_ANY:
                agg_add_u64(&w[0], 1);
                rc = agg_pick(op, cols, ncols, params, nparams, in, in_stride, nsources, k, &a[0], &w[1]);
                if (rc != DEVERR_OK)
                    return rc;
                break;
            case AGGOP_SUM_INTV:
            {
                DevInterval v = dev_interval_of(&a[0]);

                if (dev_iv_noend(v) || dev_iv_nobegin(v))
                {
                    agg_add_u64(&w[dev_iv_noend(v) ? 1 : 2], 1);
                    break;
                }
                agg_add_u64(&w[0], 1);
                agg_add_u64(&w[3], (uint64_t) (int64_t) v.month);
                agg_add_u64(&w[4], (uint64_t) (int64_t) v.day);
                agg_add_u64(&w[5], (uint64_t) v.time & 0xffffffffULL);
                agg_add_u64(&w[6], (uint64_t) (v.time >> 32));
                break;
            }
            default:
                return DEVERR_INVALID_PROGRAM;
        }
    }
    return DEVERR_OK;
}

/*
 * The slot of combination k's group in `table` (mask + 1 slots, linear
 * probing from its hash; a slot holds its group's representative, whose
 * keys are compared): the group's slot, or an empty one k claims (then
 * *claims, when given, counts it).  AGG_NO_SLOT when `limit` probes found
 * neither.
 */
#define AGG_NO_SLOT     0xffffffffU

DEVICE_FUNC uint32_t
agg_slot_of(const DevAggSpec *spec, const DevDatum *keybuf, const uint32_t *hashes,
            uint32_t *table, uint32_t mask, uint32_t k, uint32_t limit, uint32_t *claims)
{
    uint32_t    h = hashes[k];
    uint32_t    slot = h & mask;

    for (uint32_t probes = 0; probes < limit; probes++)
    {
        uint32_t cur = agg_load_u32(&table[slot]);

        if (cur == PGSTROM_AGG_EMPTY)
        {
            cur = agg_cas_u32(&table[slot], PGSTROM_AGG_EMPTY, k);
            if (cur == PGSTROM_AGG_EMPTY)
            {
                if (claims)
                    pgstrom_atomic_inc_u32(claims);
                return slot;
            }
        }
        if (hashes[cur] == h)
        {
            bool same = true;

            for (uint32_t g = 0; g < spec->nkeys && same; g++)
                same = agg_key_equal(spec->keys[g].result_type,
                                     &keybuf[(uint64_t) cur * spec->nkeys + g],
                                     &keybuf[(uint64_t) k * spec->nkeys + g]);
            if (same)
                return slot;
        }
        slot = (slot + 1) & mask;
    }
    return AGG_NO_SLOT;
}

/*
 * A block's own small group table (in shared memory on the GPU, on the
 * stack of the CPU entry point): the rows of a block that find their
 * group there add to it with the block's cheap atomics, and the block
 * adds each of its groups to the chunk's table once at its end
 * (dev_agg_merge).  With one group (no GROUP BY) or a few, every row of
 * the grid would otherwise queue on the same global words.  `slots` is a
 * power of two; `open` is false once the table is three quarters full:
 * the block's later rows go straight to the chunk's table (many groups
 * gain nothing here).
 */
#define AGG_LOCAL_BYTES     16384   /* agg.rs: LOCAL_TABLE_BYTES */
#define AGG_LOCAL_PROBES    16

typedef struct
{
    uint64_t   *words;          /* slots * nwords */
    uint32_t   *table;          /* slots */
    uint32_t   *claims;         /* slots claimed */
    uint32_t    slots;
    bool        open;
} AggLocal;

/* Bytes of a block's table of `slots` slots, and whether it fits. */
DEVICE_FUNC uint64_t
agg_local_bytes(uint32_t slots, uint32_t nwords)
{
    return (uint64_t) slots * (8ULL * nwords + 4) + 8;
}

DEVICE_FUNC bool
agg_local_valid(uint32_t slots, uint32_t nwords)
{
    return slots == 0 ||
        ((slots & (slots - 1)) == 0 && agg_local_bytes(slots, nwords) <= AGG_LOCAL_BYTES);
}

/* Lay a block's table out over `mem` (agg_local_bytes bytes). */
DEVICE_FUNC AggLocal
agg_local_at(void *mem, uint32_t slots, uint32_t nwords)
{
    AggLocal l;

    l.words = (uint64_t *) mem;
    l.table = (uint32_t *) (l.words + (uint64_t) slots * nwords);
    l.claims = l.table + slots;
    l.slots = slots;
    l.open = slots > 0;
    return l;
}

/* Combination k (at `rows`) adds to the accumulators at `acc`: an
 * exception, whose SUM_NUM_WIDE values the device cannot hold, goes to
 * the list `exc` (exc[0] the count, then the combinations, room for all
 * n) and adds to every other op. */
DEVICE_FUNC int32_t
agg_row_add(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
            const DevDatum *params, uint32_t nparams,
            const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
            uint64_t *acc, uint32_t *exc)
{
    uint32_t    rows[PGSTROM_MAX_SOURCES];
    AggWideKept kept;
    bool        skip_wide = false;
    int32_t     rc;

    agg_rows_of(in, in_stride, nsources, k, rows);
    rc = agg_wide_check(spec, cols, ncols, params, nparams, rows, &kept);
    if (rc == DEVERR_NEEDS_CPU && exc)
    {
        exc[1 + pgstrom_atomic_inc_u32(&exc[0])] = k;
        skip_wide = true;
    }
    else if (rc != DEVERR_OK)
        return rc;
    return dev_agg_accumulate(spec, cols, ncols, params, nparams, in, in_stride, nsources, k,
                              rows, acc, skip_wide, &kept);
}

/* Rows step: combination k joins its group, in the block's table when
 * `local` has room for it, else in the chunk's `table`, and adds to it. */
DEVICE_FUNC int32_t
dev_agg_rows_one(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                 const DevDatum *params, uint32_t nparams,
                 const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t k,
                 const DevDatum *keybuf, const uint32_t *hashes,
                 uint32_t *table, uint32_t mask, uint64_t *words, uint32_t *exc,
                 const AggLocal *local)
{
    uint32_t    slot;

    if (local && local->open)
    {
        slot = agg_slot_of(spec, keybuf, hashes, local->table, local->slots - 1, k,
                           AGG_LOCAL_PROBES, local->claims);
        if (slot != AGG_NO_SLOT)
            return agg_row_add(spec, cols, ncols, params, nparams, in, in_stride, nsources, k,
                               local->words + (uint64_t) slot * spec->nwords, exc);
    }
    /* the table has more than twice as many slots as combinations */
    slot = agg_slot_of(spec, keybuf, hashes, table, mask, k, mask + 1, NULL);
    if (slot == AGG_NO_SLOT)
        return DEVERR_INVALID_PROGRAM;
    return agg_row_add(spec, cols, ncols, params, nparams, in, in_stride, nsources, k,
                       words + (uint64_t) slot * spec->nwords, exc);
}

/*
 * Moments merged: a block's sums of d = v - cl (its shift cl, 0 when it
 * had no finite value) as sums of v - c, c the group's shift in the
 * chunk's table (claimed with cl when it has none): with e = cl - c,
 * sum (d + e) = S + n e and sum (d + e)^2 = Q + 2 e S + n e^2.  Finite
 * operands whose shifted first-order sum overflows raise PostgreSQL's
 * error, as a row's do.
 */
DEVICE_FUNC double
agg_f8_of(uint64_t w)
{
    union { double f; uint64_t u; } v;

    v.u = w;
    return v.f;
}

DEVICE_FUNC bool
agg_reshift(uint64_t local_c, uint64_t *global_c, double *e)
{
    union { double f; uint64_t u; } v;
    double cl, c;

    v.u = local_c;
    cl = local_c == AGG_NO_SHIFT ? 0.0 : v.f;
    c = agg_shift(global_c, local_c == AGG_NO_SHIFT ? agg_f8_of(AGG_NO_SHIFT) : cl);
    *e = cl - c;
    return agg_overflows(cl, -c, *e);
}

DEVICE_FUNC bool
agg_shifted_sum(double s, double n, double e, double *out)
{
    double t = n * e;

    *out = s + t;
    return (e - e == 0.0 && t - t != 0.0) || agg_overflows(s, t, *out);
}

/*
 * Merge step: a block's partial accumulators `from` (every op's, of one
 * group) added into the group's accumulators `to` in the chunk's table,
 * with the same atomics a row uses.
 */
DEVICE_FUNC int32_t
dev_agg_merge(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
              const DevDatum *params, uint32_t nparams,
              const uint32_t *in, uint32_t in_stride, uint32_t nsources,
              const uint64_t *from, uint64_t *to)
{
    for (uint32_t o = 0; o < spec->nops; o++)
    {
        const DevAggOp *op = &spec->ops[o];
        const uint64_t *f = from + op->word;
        uint64_t   *w = to + op->word;

        if (op->word >= spec->nwords)
            return DEVERR_INVALID_PROGRAM;
        switch (op->kind)
        {
            case AGGOP_COUNT:
                if (f[0])
                    agg_add_u64(&w[0], f[0]);
                break;
            case AGGOP_SUM_INT:
                if (f[0] == 0)
                    break;
                for (uint32_t i = 0; i < 3; i++)
                    agg_add_u64(&w[i], f[i]);
                break;
            case AGGOP_SUM_FLT:
                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                if (agg_add_f8(&w[1], agg_f8_of(f[1])))
                    return DEVERR_FLOAT_OVERFLOW;
                break;
            case AGGOP_MOMENTS:
            {
                double n = (double) f[0], e, s, q;

                if (f[0] == 0)
                    break;
                if (agg_reshift(f[3], &w[3], &e) ||
                    agg_shifted_sum(agg_f8_of(f[1]), n, e, &s))
                    return DEVERR_FLOAT_OVERFLOW;
                q = agg_f8_of(f[2]) + 2.0 * e * agg_f8_of(f[1]) + n * e * e;
                agg_add_u64(&w[0], f[0]);
                if (agg_add_f8(&w[1], s))
                    return DEVERR_FLOAT_OVERFLOW;
                agg_add_f8(&w[2], q);
                break;
            }
            case AGGOP_MOMENTS2:
            {
                /* [n, Sdx, Sdx2, Sdy, Sdy2, Sdxdy, cx, cy] */
                double n = (double) f[0], ex, ey, sx, sy;
                double fsx = agg_f8_of(f[1]), fsy = agg_f8_of(f[3]);

                if (f[0] == 0)
                    break;
                if (agg_reshift(f[6], &w[6], &ex) || agg_reshift(f[7], &w[7], &ey) ||
                    agg_shifted_sum(fsx, n, ex, &sx) || agg_shifted_sum(fsy, n, ey, &sy))
                    return DEVERR_FLOAT_OVERFLOW;
                agg_add_u64(&w[0], f[0]);
                if (agg_add_f8(&w[1], sx) || agg_add_f8(&w[3], sy))
                    return DEVERR_FLOAT_OVERFLOW;
                agg_add_f8(&w[2], agg_f8_of(f[2]) + 2.0 * ex * fsx + n * ex * ex);
                agg_add_f8(&w[4], agg_f8_of(f[4]) + 2.0 * ey * fsy + n * ey * ey);
                agg_add_f8(&w[5], agg_f8_of(f[5]) + ey * fsx + ex * fsy + n * ex * ey);
                break;
            }
            case AGGOP_MIN_INT:
            case AGGOP_MAX_INT:
                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                if (op->kind == AGGOP_MIN_INT)
                    agg_min_i64(&w[1], (int64_t) f[1]);
                else
                    agg_max_i64(&w[1], (int64_t) f[1]);
                break;
            case AGGOP_MIN_FLT:
            case AGGOP_MAX_FLT:
                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                if (op->kind == AGGOP_MIN_FLT)
                    agg_min_u64(&w[1], f[1]);
                else
                    agg_max_u64(&w[1], f[1]);
                break;
            case AGGOP_SUM_NUM:
            case AGGOP_SUM_NUM_WIDE:
                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                agg_merge_scale(&w[1], f[1], (uint32_t) op->scale);
                for (uint32_t i = 2; i < 9; i++)
                    if (f[i])
                        agg_add_u64(&w[i], f[i]);
                break;
            case AGGOP_MIN_NUM:
            case AGGOP_MAX_NUM:
                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                if (op->kind == AGGOP_MIN_NUM)
                    agg_min_i64(&w[1], (int64_t) f[1]);
                else
                    agg_max_i64(&w[1], (int64_t) f[1]);
                if (f[2])
                    agg_add_u64(&w[2], f[2]);
                break;
            case AGGOP_MIN_ANY:
            case AGGOP_MAX_ANY:
            {
                /* the block's winner competes with the chunk's */
                uint32_t rows[PGSTROM_MAX_SOURCES];
                DevDatum x;
                int32_t  rc;

                if (f[0] == 0)
                    break;
                agg_add_u64(&w[0], f[0]);
                if (f[1] == PGSTROM_AGG_NO_WINNER)
                    break;
                agg_rows_of(in, in_stride, nsources, (uint32_t) f[1], rows);
                rc = agg_eval(&op->args[0], cols, ncols, params, nparams, rows, &x);
                if (rc == DEVERR_OK)
                    rc = agg_pick(op, cols, ncols, params, nparams, in, in_stride, nsources,
                                  (uint32_t) f[1], &x, &w[1]);
                if (rc != DEVERR_OK)
                    return rc;
                break;
            }
            case AGGOP_SUM_INTV:
                /* n counts the finite values only: the infinities' counts
                 * may be all there is */
                for (uint32_t i = 0; i < 7; i++)
                    if (f[i])
                        agg_add_u64(&w[i], f[i]);
                break;
            default:
                return DEVERR_INVALID_PROGRAM;
        }
    }
    return DEVERR_OK;
}

/* Flush step of a block: its group in slot s of `local` joins the chunk's
 * table and adds its partial accumulators there; the slot is empty again.
 * *at is the group's representative (for an error's report). */
DEVICE_FUNC int32_t
dev_agg_flush_one(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                  const DevDatum *params, uint32_t nparams,
                  const uint32_t *in, uint32_t in_stride, uint32_t nsources,
                  const DevDatum *keybuf, const uint32_t *hashes,
                  uint32_t *table, uint32_t mask, uint64_t *words,
                  const AggLocal *local, uint32_t s, uint32_t *at)
{
    uint32_t    rep = local->table[s];
    uint64_t   *lw = local->words + (uint64_t) s * spec->nwords;
    int32_t     rc = DEVERR_OK;

    *at = rep;
    if (rep == PGSTROM_AGG_EMPTY)
        return DEVERR_OK;
    uint32_t slot = agg_slot_of(spec, keybuf, hashes, table, mask, rep, mask + 1, NULL);

    if (slot == AGG_NO_SLOT)
        rc = DEVERR_INVALID_PROGRAM;
    else
        rc = dev_agg_merge(spec, cols, ncols, params, nparams, in, in_stride, nsources, lw,
                           words + (uint64_t) slot * spec->nwords);
    dev_agg_init_one(spec, s, local->table, local->words);
    return rc;
}

/* Collect step: slot i, when claimed, becomes an output group. */
DEVICE_FUNC int32_t
dev_agg_collect_one(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                    const DevDatum *params, uint32_t nparams,
                    const uint32_t *in, uint32_t in_stride,
                    uint32_t nsources, const uint32_t *table, const uint64_t *words,
                    const DevDatum *keybuf, uint32_t i, uint32_t *out_rows,
                    DevDatum *out_keys, uint64_t *out_words, uint32_t out_cap,
                    uint32_t *count)
{
    uint32_t rep = table[i];

    if (rep == PGSTROM_AGG_EMPTY)
        return DEVERR_OK;
    uint32_t at = pgstrom_atomic_inc_u32(count);
    if (at >= out_cap)
        return DEVERR_OK;
    for (uint32_t s = 0; s < nsources; s++)
        out_rows[(uint64_t) s * out_cap + at] = in[(uint64_t) s * in_stride + rep];
    for (uint32_t g = 0; g < spec->nkeys; g++)
        out_keys[(uint64_t) at * spec->nkeys + g] = keybuf[(uint64_t) rep * spec->nkeys + g];
    uint64_t *out = out_words + (uint64_t) at * spec->nwords;

    for (uint32_t w = 0; w < spec->nwords; w++)
        out[w] = words[(uint64_t) i * spec->nwords + w];
    for (uint32_t o = 0; o < spec->nops; o++)
    {
        const DevAggOp *op = &spec->ops[o];
        uint32_t rows[PGSTROM_MAX_SOURCES];
        DevDatum v;
        int32_t  rc;

        if ((op->kind != AGGOP_MIN_ANY && op->kind != AGGOP_MAX_ANY) || out[op->word + 1] == PGSTROM_AGG_NO_WINNER)
            continue;
        if (op->word + 5 > spec->nwords)
            return DEVERR_INVALID_PROGRAM;
        agg_rows_of(in, in_stride, nsources, (uint32_t) out[op->word + 1], rows);
        rc = agg_eval(&op->args[0], cols, ncols, params, nparams, rows, &v);
        if (rc != DEVERR_OK)
            return rc;
        out[op->word + 2] = (uint64_t) v.v.i;
        out[op->word + 3] = (uint64_t) v.hi;
        out[op->word + 4] = (uint64_t) (uint32_t) v.len | ((uint64_t) (v.isnull != 0) << 32);
    }
    return DEVERR_OK;
}

#ifdef PGSTROM_GPU_TARGET

#define AGG_GPU_LOOP(N, BODY)                                                   \
    uint32_t stride_ = gridDim.x * blockDim.x;                                  \
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (N); i += stride_) \
    {                                                                           \
        int32_t rc = (BODY);                                                    \
        if (rc != DEVERR_OK)                                                    \
            atomicMin(error, ((unsigned long long) i << 8) | (unsigned long long) rc); \
    }

KERNEL_FUNC void
kern_agg_init(const DevAggSpec *spec, uint32_t nslots, uint32_t *table, uint64_t *words)
{
    uint32_t stride = gridDim.x * blockDim.x;

    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nslots; i += stride)
        dev_agg_init_one(spec, i, table, words);
}

KERNEL_FUNC void
kern_agg_keys(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
              const DevDatum *params, uint32_t nparams,
              const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t n,
              DevDatum *keybuf, uint32_t *hashes, unsigned long long *error)
{
    AGG_GPU_LOOP(n, dev_agg_keys_one(spec, cols, ncols, params, nparams, in, in_stride,
                                     nsources, i, keybuf, hashes))
}

/*
 * Rows step.  With local_slots > 0 (agg_local_valid; local_slots *
 * (8 * nwords + 4) + 8 bytes of dynamic shared memory) each block keeps
 * its own table of that many slots and adds its groups to the chunk's at
 * its end; every thread of a block runs the same iterations (the
 * barriers).
 */
KERNEL_FUNC void
kern_agg_rows(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
              const DevDatum *params, uint32_t nparams,
              const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t n,
              const DevDatum *keybuf, const uint32_t *hashes,
              uint32_t *table, uint32_t mask, uint64_t *words, uint32_t *exc,
              uint32_t local_slots, unsigned long long *error)
{
    extern __shared__ uint64_t agg_shared[];

    if (local_slots == 0 || !agg_local_valid(local_slots, spec->nwords))
    {
        AGG_GPU_LOOP(n, dev_agg_rows_one(spec, cols, ncols, params, nparams, in, in_stride,
                                         nsources, i, keybuf, hashes, table, mask, words, exc,
                                         NULL))
        return;
    }
    AggLocal local = agg_local_at(agg_shared, local_slots, spec->nwords);
    uint32_t stride = gridDim.x * blockDim.x;

    for (uint32_t s = threadIdx.x; s < local_slots; s += blockDim.x)
        dev_agg_init_one(spec, s, local.table, local.words);
    if (threadIdx.x == 0)
        *local.claims = 0;
    __syncthreads();
    for (uint32_t base = blockIdx.x * blockDim.x; base < n; base += stride)
    {
        uint32_t i = base + threadIdx.x;

        if (i < n)
        {
            int32_t rc = dev_agg_rows_one(spec, cols, ncols, params, nparams, in, in_stride,
                                          nsources, i, keybuf, hashes, table, mask, words,
                                          exc, &local);
            if (rc != DEVERR_OK)
                atomicMin(error, ((unsigned long long) i << 8) | (unsigned long long) rc);
        }
        __syncthreads();
        /* every thread reads the same count: none changes it before the
         * next barrier */
        local.open = 4 * agg_load_u32(local.claims) < 3 * local_slots;
        __syncthreads();
    }
    for (uint32_t s = threadIdx.x; s < local_slots; s += blockDim.x)
    {
        uint32_t at;
        int32_t  rc = dev_agg_flush_one(spec, cols, ncols, params, nparams, in, in_stride,
                                        nsources, keybuf, hashes, table, mask, words, &local,
                                        s, &at);
        if (rc != DEVERR_OK)
            atomicMin(error, ((unsigned long long) at << 8) | (unsigned long long) rc);
    }
}

KERNEL_FUNC void
kern_agg_collect(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                 const DevDatum *params, uint32_t nparams,
                 const uint32_t *in, uint32_t in_stride,
                 uint32_t nsources, const uint32_t *table, const uint64_t *words,
                 const DevDatum *keybuf, uint32_t nslots, uint32_t *out_rows,
                 DevDatum *out_keys, uint64_t *out_words, uint32_t out_cap, uint32_t *count,
                 unsigned long long *error)
{
    AGG_GPU_LOOP(nslots, dev_agg_collect_one(spec, cols, ncols, params, nparams, in, in_stride,
                                             nsources, table, words, keybuf, i, out_rows,
                                             out_keys, out_words, out_cap, count))
}

#else   /* PGSTROM_CPU_TARGET */

/*
 * CPU entry point: every step over the n combinations.  The caller gives
 * keybuf (n * nkeys), hashes (n), table (nslots, a power of two > n),
 * words (nslots * nwords), out_rows (nsources * n), out_keys (n * nkeys),
 * out_words (n * nwords), exc (1 + n: the exceptions' count, zeroed by the
 * caller, then the combinations), and local_slots (0, or a block table's
 * slots: agg_local_valid) for blocks of AGG_CPU_BLOCK combinations, as a
 * GPU block's.  Returns DEVERR_OK with the group count in *count, or the
 * first error code with its combination in *error_at.
 */
#define AGG_CPU_BLOCK   4096

extern "C" int32_t
pgstrom_cpu_agg(const DevAggSpec *spec, const DevColumn *cols, uint32_t ncols,
                const DevDatum *params, uint32_t nparams,
                const uint32_t *in, uint32_t in_stride, uint32_t nsources, uint32_t n,
                DevDatum *keybuf, uint32_t *hashes, uint32_t *table, uint32_t nslots,
                uint64_t *words, uint32_t *out_rows, DevDatum *out_keys,
                uint64_t *out_words, uint32_t *exc, uint32_t local_slots, uint32_t *count,
                uint32_t *error_at)
{
    uint64_t    local_mem[AGG_LOCAL_BYTES / 8];
    AggLocal    local = agg_local_at(local_mem, local_slots, spec->nwords);

    if (nslots == 0 || (nslots & (nslots - 1)) != 0 || nslots <= n ||
        !agg_local_valid(local_slots, spec->nwords))
        return DEVERR_INVALID_PROGRAM;
    for (uint32_t i = 0; i < nslots; i++)
        dev_agg_init_one(spec, i, table, words);
    for (uint32_t i = 0; i < n; i++)
    {
        int32_t rc = dev_agg_keys_one(spec, cols, ncols, params, nparams, in, in_stride,
                                      nsources, i, keybuf, hashes);
        if (rc != DEVERR_OK)
        {
            *error_at = i;
            return rc;
        }
    }
    for (uint32_t base = 0; base < n; base += AGG_CPU_BLOCK)
    {
        uint32_t end = n - base < AGG_CPU_BLOCK ? n : base + AGG_CPU_BLOCK;

        for (uint32_t s = 0; s < local_slots; s++)
            dev_agg_init_one(spec, s, local.table, local.words);
        *local.claims = 0;
        local.open = local_slots > 0;
        for (uint32_t i = base; i < end; i++)
        {
            int32_t rc = dev_agg_rows_one(spec, cols, ncols, params, nparams, in, in_stride,
                                          nsources, i, keybuf, hashes, table, nslots - 1, words,
                                          exc, &local);
            if (rc != DEVERR_OK)
            {
                *error_at = i;
                return rc;
            }
            local.open = local_slots > 0 && 4 * *local.claims < 3 * local_slots;
        }
        for (uint32_t s = 0; s < local_slots; s++)
        {
            int32_t rc = dev_agg_flush_one(spec, cols, ncols, params, nparams, in, in_stride,
                                           nsources, keybuf, hashes, table, nslots - 1, words,
                                           &local, s, error_at);
            if (rc != DEVERR_OK)
                return rc;
        }
    }
    *count = 0;
    for (uint32_t i = 0; i < nslots; i++)
    {
        int32_t rc = dev_agg_collect_one(spec, cols, ncols, params, nparams, in, in_stride,
                                         nsources, table, words, keybuf, i, out_rows,
                                         out_keys, out_words, n, count);
        if (rc != DEVERR_OK)
        {
            *error_at = table[i];
            return rc;
        }
    }
    return DEVERR_OK;
}

#endif
