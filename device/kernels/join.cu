/*
 * join.cu - GpuJoin on the device: the scanned rows joined with the inner
 * relations of depth 1..N, one depth after the other.
 *
 * A combination holds one row index per source: rows[0] a scanned (outer)
 * row, rows[d] a row of the inner relation of depth d, PGSTROM_NULL_ROW for
 * the NULL-extended side of an outer join (every column read there is
 * NULL).  Combinations are stored by source: combo[s * stride + k] is
 * source s of combination k.
 *
 * Per chunk the host runs
 *   join_scan  : the scan quals over the chunk -> combinations of depth 0;
 *   join_probe : for depth d = 1..N, each combination of depth d-1 hashes
 *                its keys, walks its bucket (or every inner row, for a
 *                nested loop) and evaluates the join quals on each
 *                candidate; it emits the joined combinations (INNER, LEFT,
 *                RIGHT, FULL), itself NULL-extended when nothing matched
 *                (LEFT, FULL, ANTI), or itself once when something did
 *                (SEMI).  RIGHT and FULL mark the inner rows that matched;
 *                RIGHT SEMI and RIGHT ANTI (EXISTS and NOT EXISTS with the
 *                scanned side probing the hashed one) only mark them: the
 *                host returns the inner rows matched (not matched) after
 *                the last chunk.
 * Output past `capacity` is counted but not written: the host grows the
 * buffer and runs the step again (every step is idempotent).
 * join_hash hashes the inner rows' keys when the hash table is built.
 *
 * The hash of a key is the same function of the value on both sides of
 * every equality the planner lets through: integers by value (int2, int4
 * and int8 alike), floats as float8 with -0 = 0 and one NaN, text by its
 * bytes, bpchar without trailing blanks.  Equality itself is decided by
 * the join quals, which include the hash clauses.
 */
#include "device_hash.h"
#include "device_store.h"

#define PGSTROM_JOIN_INNER      0       /* PostgreSQL's JoinType numbers */
#define PGSTROM_JOIN_LEFT       1
#define PGSTROM_JOIN_FULL       2
#define PGSTROM_JOIN_RIGHT      3
#define PGSTROM_JOIN_SEMI       4
#define PGSTROM_JOIN_ANTI       5
#define PGSTROM_JOIN_RIGHT_SEMI 6       /* (PostgreSQL 18's numbers) */
#define PGSTROM_JOIN_RIGHT_ANTI 7

/* One depth of the join. */
typedef struct
{
    uint32_t        kind;           /* PGSTROM_JOIN_* */
    uint32_t        nkeys;          /* hash keys; 0 = nested loop */
    uint32_t        ninner;         /* rows of the inner relation */
    uint32_t        nbuckets;       /* power of two; 0 = nested loop */
    DevProgramRef   qual;           /* every join qual, hash clauses first */
    DevProgramRef   keys[PGSTROM_MAX_JOIN_KEYS]; /* outer-side hash keys */
    const uint32_t *buckets;        /* first inner row of each bucket */
    const uint32_t *next;           /* next inner row in the bucket */
    const uint32_t *hashes;         /* hash of each inner row */
    uint8_t        *matched;        /* RIGHT/FULL/RIGHT SEMI/RIGHT ANTI:
                                     * 1 per inner row matched */
} DevJoinDepth;

/* Append sources 0..nsrc-1 of `rows` to the output. */
DEVICE_FUNC void
dev_join_emit(const uint32_t *rows, uint32_t nsrc,
              uint32_t *out, uint32_t capacity, uint32_t *count)
{
    uint32_t    at = pgstrom_atomic_inc_u32(count);

    if (at < capacity)
        for (uint32_t s = 0; s < nsrc; s++)
            out[(uint64_t) s * capacity + at] = rows[s];
}

/*
 * Scan step for row `row` of the chunk: a row version of a GPU store the
 * snapshot of `view` (when given) does not see is skipped before any qual
 * reads it.
 */
DEVICE_FUNC int32_t
dev_join_scan_row(const DevProgramRef *qual,
                  const DevColumn *cols, uint32_t ncols,
                  const DevDatum *params, uint32_t nparams, uint32_t row,
                  const DevStoreView *view,
                  uint32_t *out, uint32_t capacity, uint32_t *count)
{
    uint32_t    rows[PGSTROM_MAX_SOURCES];

    if (view && !dev_store_visible(view, row))
        return DEVERR_OK;
    rows[0] = row;
    for (uint32_t s = 1; s < PGSTROM_MAX_SOURCES; s++)
        rows[s] = PGSTROM_NULL_ROW;
    if (qual->ninstrs > 0)
    {
        DevDatum    r;
        int32_t     rc = dev_eval_row(qual->code, qual->ninstrs, qual->data,
                                      cols, ncols, params, nparams, rows, &r);

        if (rc != DEVERR_OK)
            return rc;
        if (!dev_is_true(&r))
            return DEVERR_OK;
    }
    dev_join_emit(rows, 1, out, capacity, count);
    return DEVERR_OK;
}

/* Probe step of depth `depth` (1..N) for input combination k. */
DEVICE_FUNC int32_t
dev_join_probe_one(const DevJoinDepth *jd, uint32_t depth,
                   const DevColumn *cols, uint32_t ncols,
                   const DevDatum *params, uint32_t nparams,
                   const uint32_t *in, uint32_t in_stride, uint32_t k,
                   uint32_t *out, uint32_t capacity, uint32_t *count)
{
    uint32_t    rows[PGSTROM_MAX_SOURCES];
    uint32_t    hash = 0;
    uint32_t    j;
    bool        any = false;
    int32_t     rc;

    if (depth == 0 || depth >= PGSTROM_MAX_SOURCES)
        return DEVERR_INVALID_PROGRAM;
    for (uint32_t s = 0; s < PGSTROM_MAX_SOURCES; s++)
        rows[s] = s < depth ? in[(uint64_t) s * in_stride + k] : PGSTROM_NULL_ROW;
    if (jd->nbuckets > 0)
    {
        bool    isnull;

        rc = dev_hash_keys(jd->keys, jd->nkeys, cols, ncols, params, nparams,
                           rows, &hash, &isnull);
        if (rc != DEVERR_OK)
            return rc;
        j = isnull ? PGSTROM_NULL_ROW : jd->buckets[hash & (jd->nbuckets - 1)];
    }
    else
        j = jd->ninner > 0 ? 0 : PGSTROM_NULL_ROW;

    while (j != PGSTROM_NULL_ROW)
    {
        if (j >= jd->ninner)
            return DEVERR_INVALID_PROGRAM;
        if (jd->nbuckets == 0 || jd->hashes[j] == hash)
        {
            bool    ok = true;

            rows[depth] = j;
            if (jd->qual.ninstrs > 0)
            {
                DevDatum    r;

                rc = dev_eval_row(jd->qual.code, jd->qual.ninstrs, jd->qual.data,
                                  cols, ncols, params, nparams, rows, &r);
                if (rc != DEVERR_OK)
                    return rc;
                ok = dev_is_true(&r);
            }
            if (ok)
            {
                any = true;
                if (jd->matched)
                    jd->matched[j] = 1;
                if (jd->kind == PGSTROM_JOIN_SEMI || jd->kind == PGSTROM_JOIN_ANTI)
                    break;
                if (jd->kind != PGSTROM_JOIN_RIGHT_SEMI && jd->kind != PGSTROM_JOIN_RIGHT_ANTI)
                    dev_join_emit(rows, depth + 1, out, capacity, count);
            }
        }
        if (jd->nbuckets > 0)
            j = jd->next[j];
        else
            j = j + 1 < jd->ninner ? j + 1 : PGSTROM_NULL_ROW;
    }
    rows[depth] = PGSTROM_NULL_ROW;
    if (any ? jd->kind == PGSTROM_JOIN_SEMI
            : (jd->kind == PGSTROM_JOIN_LEFT || jd->kind == PGSTROM_JOIN_FULL ||
               jd->kind == PGSTROM_JOIN_ANTI))
        dev_join_emit(rows, depth + 1, out, capacity, count);
    return DEVERR_OK;
}

/* Hash step: keys of inner row j of depth `depth`. */
DEVICE_FUNC int32_t
dev_join_hash_one(const DevProgramRef *keys, uint32_t nkeys, uint32_t depth,
                  const DevColumn *cols, uint32_t ncols,
                  const DevDatum *params, uint32_t nparams, uint32_t j,
                  uint32_t *hashes, uint8_t *valid)
{
    uint32_t    rows[PGSTROM_MAX_SOURCES];
    uint32_t    hash = 0;
    bool        isnull;
    int32_t     rc;

    if (depth >= PGSTROM_MAX_SOURCES)
        return DEVERR_INVALID_PROGRAM;
    for (uint32_t s = 0; s < PGSTROM_MAX_SOURCES; s++)
        rows[s] = PGSTROM_NULL_ROW;
    rows[depth] = j;
    rc = dev_hash_keys(keys, nkeys, cols, ncols, params, nparams, rows, &hash, &isnull);
    if (rc != DEVERR_OK)
        return rc;
    hashes[j] = hash;
    valid[j] = isnull ? 0 : 1;
    return DEVERR_OK;
}

#ifdef PGSTROM_GPU_TARGET

/* The first error (lowest index) wins, as on the CPU. */
#define JOIN_GPU_LOOP(N, BODY)                                                  \
    uint32_t stride_ = gridDim.x * blockDim.x;                                  \
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (N); i += stride_) \
    {                                                                           \
        int32_t rc = (BODY);                                                    \
        if (rc != DEVERR_OK)                                                    \
            atomicMin(error, ((unsigned long long) i << 8) | (unsigned long long) rc); \
    }

KERNEL_FUNC void
kern_join_scan(const DevProgramRef *qual, const DevColumn *cols, uint32_t ncols,
               const DevDatum *params, uint32_t nparams, uint32_t nrows,
               const DevStoreView *view,
               uint32_t *out, uint32_t capacity, uint32_t *count,
               unsigned long long *error)
{
    JOIN_GPU_LOOP(nrows, dev_join_scan_row(qual, cols, ncols, params, nparams, i,
                                           view, out, capacity, count))
}

KERNEL_FUNC void
kern_join_probe(const DevJoinDepth *jd, uint32_t depth,
                const DevColumn *cols, uint32_t ncols,
                const DevDatum *params, uint32_t nparams,
                const uint32_t *in, uint32_t in_stride, uint32_t n_in,
                uint32_t *out, uint32_t capacity, uint32_t *count,
                unsigned long long *error)
{
    JOIN_GPU_LOOP(n_in, dev_join_probe_one(jd, depth, cols, ncols, params, nparams,
                                           in, in_stride, i, out, capacity, count))
}

KERNEL_FUNC void
kern_join_hash(const DevProgramRef *keys, uint32_t nkeys, uint32_t depth,
               const DevColumn *cols, uint32_t ncols,
               const DevDatum *params, uint32_t nparams, uint32_t ninner,
               uint32_t *hashes, uint8_t *valid, unsigned long long *error)
{
    JOIN_GPU_LOOP(ninner, dev_join_hash_one(keys, nkeys, depth, cols, ncols, params,
                                            nparams, i, hashes, valid))
}

#else   /* PGSTROM_CPU_TARGET */

/*
 * CPU entry points: the same steps in a loop.  Return DEVERR_OK, or the
 * first error code with its index in *error_at.
 */
extern "C" int32_t
pgstrom_cpu_join_scan(const DevProgramRef *qual, const DevColumn *cols, uint32_t ncols,
                      const DevDatum *params, uint32_t nparams, uint32_t nrows,
                      const DevStoreView *view,
                      uint32_t *out, uint32_t capacity, uint32_t *count,
                      uint32_t *error_at)
{
    for (uint32_t i = 0; i < nrows; i++)
    {
        int32_t rc = dev_join_scan_row(qual, cols, ncols, params, nparams, i,
                                       view, out, capacity, count);
        if (rc != DEVERR_OK)
        {
            *error_at = i;
            return rc;
        }
    }
    return DEVERR_OK;
}

extern "C" int32_t
pgstrom_cpu_join_probe(const DevJoinDepth *jd, uint32_t depth,
                       const DevColumn *cols, uint32_t ncols,
                       const DevDatum *params, uint32_t nparams,
                       const uint32_t *in, uint32_t in_stride, uint32_t n_in,
                       uint32_t *out, uint32_t capacity, uint32_t *count,
                       uint32_t *error_at)
{
    for (uint32_t i = 0; i < n_in; i++)
    {
        int32_t rc = dev_join_probe_one(jd, depth, cols, ncols, params, nparams,
                                        in, in_stride, i, out, capacity, count);
        if (rc != DEVERR_OK)
        {
            *error_at = i;
            return rc;
        }
    }
    return DEVERR_OK;
}

extern "C" int32_t
pgstrom_cpu_join_hash(const DevProgramRef *keys, uint32_t nkeys, uint32_t depth,
                      const DevColumn *cols, uint32_t ncols,
                      const DevDatum *params, uint32_t nparams, uint32_t ninner,
                      uint32_t *hashes, uint8_t *valid, uint32_t *error_at)
{
    for (uint32_t i = 0; i < ninner; i++)
    {
        int32_t rc = dev_join_hash_one(keys, nkeys, depth, cols, ncols, params,
                                       nparams, i, hashes, valid);
        if (rc != DEVERR_OK)
        {
            *error_at = i;
            return rc;
        }
    }
    return DEVERR_OK;
}

#endif
