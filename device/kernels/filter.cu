/*
 * filter.cu - column filter kernels: "column <op> constant" over one chunk.
 *
 * The first kernel both engines run.  Each row gets a result byte
 * (1 = the predicate is true, 0 = false or NULL, as in a WHERE clause) and
 * the number of matching rows is counted.  The per-row logic lives in one
 * DEVICE_FUNC; the GPU entry points spread rows over a grid-stride loop and
 * the CPU entry points loop over the rows, so both engines compute the
 * same function by construction.
 */
#include "pgstrom_device.h"

template <typename T>
DEVICE_FUNC int32_t
filter_compare_row(const T *values, const uint8_t *validity, uint32_t row,
                   int32_t op, T constant, uint8_t *result)
{
    bool    match = false;

    if (pgstrom_row_is_valid(validity, row))
    {
        int     c = pgstrom_cmp3(values[row], constant);

        switch (op)
        {
            case PGSTROM_CMP_EQ: match = (c == 0); break;
            case PGSTROM_CMP_NE: match = (c != 0); break;
            case PGSTROM_CMP_LT: match = (c <  0); break;
            case PGSTROM_CMP_LE: match = (c <= 0); break;
            case PGSTROM_CMP_GT: match = (c >  0); break;
            case PGSTROM_CMP_GE: match = (c >= 0); break;
            default:
                return PGSTROM_STATUS_INVALID_ARGUMENT;
        }
    }
    result[row] = match ? 1 : 0;
    return match ? -1 : PGSTROM_STATUS_OK;     /* -1: matched, count it */
}

#ifdef PGSTROM_GPU_TARGET
/*
 * GPU entry points.  Matches are counted per warp with a ballot and added
 * once per warp, so the global counter sees nrows/32 atomics at most.
 */
#define DEFINE_GPU_FILTER(SUFFIX, T)                                        \
KERNEL_FUNC void                                                            \
kern_filter_cmp_##SUFFIX(const T *values, const uint8_t *validity,          \
                         uint32_t nrows, int32_t op, T constant,            \
                         uint8_t *result, uint32_t *nmatched,               \
                         int32_t *status)                                   \
{                                                                           \
    uint32_t stride = gridDim.x * blockDim.x;                               \
    uint32_t base;                                                          \
                                                                            \
    for (base = blockIdx.x * blockDim.x; base < nrows; base += stride)      \
    {                                                                       \
        uint32_t row = base + threadIdx.x;                                  \
        int32_t  rc = PGSTROM_STATUS_OK;                                    \
        unsigned int mask;                                                  \
                                                                            \
        if (row < nrows)                                                    \
            rc = filter_compare_row<T>(values, validity, row, op,           \
                                       constant, result);                   \
        if (rc > 0)                                                         \
            pgstrom_atomic_set_status(status, rc);                          \
        mask = __ballot_sync(0xffffffffU, rc < 0);                          \
        if ((threadIdx.x & 31) == 0 && mask != 0)                           \
            pgstrom_atomic_add_u32(nmatched, __popc(mask));                 \
    }                                                                       \
}
DEFINE_GPU_FILTER(int32, int32_t)
DEFINE_GPU_FILTER(int64, int64_t)
DEFINE_GPU_FILTER(float64, double)

#else   /* PGSTROM_CPU_TARGET */

/*
 * CPU entry points: a plain C ABI.  Return PGSTROM_STATUS_*; on failure a
 * message goes to errbuf.  Nothing here can throw (built -fno-exceptions).
 */
#include <stdio.h>

#define DEFINE_CPU_FILTER(SUFFIX, T)                                        \
extern "C" int32_t                                                          \
pgstrom_cpu_filter_cmp_##SUFFIX(const T *values, const uint8_t *validity,   \
                                uint32_t nrows, int32_t op, T constant,     \
                                uint8_t *result, uint32_t *nmatched,        \
                                char *errbuf, size_t errbuf_sz)             \
{                                                                           \
    uint32_t count = 0;                                                     \
                                                                            \
    if ((nrows > 0 && (values == NULL || result == NULL)) ||                \
        nmatched == NULL)                                                   \
    {                                                                       \
        snprintf(errbuf, errbuf_sz, "null buffer passed to filter kernel"); \
        return PGSTROM_STATUS_INVALID_ARGUMENT;                             \
    }                                                                       \
    for (uint32_t row = 0; row < nrows; row++)                              \
    {                                                                       \
        int32_t rc = filter_compare_row<T>(values, validity, row, op,       \
                                           constant, result);               \
        if (rc > 0)                                                         \
        {                                                                   \
            snprintf(errbuf, errbuf_sz,                                     \
                     "unknown comparison operator code %d", (int) op);      \
            return rc;                                                      \
        }                                                                   \
        if (rc < 0)                                                         \
            count++;                                                        \
    }                                                                       \
    *nmatched = count;                                                      \
    return PGSTROM_STATUS_OK;                                               \
}
DEFINE_CPU_FILTER(int32, int32_t)
DEFINE_CPU_FILTER(int64, int64_t)
DEFINE_CPU_FILTER(float64, double)

#endif
