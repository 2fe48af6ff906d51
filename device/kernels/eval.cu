/*
 * eval.cu - evaluate a device program over a chunk of columns.
 *
 * Each row's result goes to out_values (raw 8-byte datum bits) and
 * out_nulls; a wide result's second word and length (a numeric's high
 * mantissa word and scale) also go to out_wide (two words per row), when
 * the caller passes it.  A text / bpchar / bytea result (result_type)
 * goes there as where its bytes lie: out_values the offset, out_wide the
 * source (dev_varlena_ref) and the length.  The first error in row order wins, as in PostgreSQL, which
 * would have raised it at that row: the GPU records min(row << 8 | code)
 * with an atomic; the CPU stops at the first failing row.
 */
#include "device_interp.h"

#ifdef PGSTROM_GPU_TARGET

KERNEL_FUNC void
kern_eval_program(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
                  const DevColumn *cols, uint32_t ncols,
                  const DevDatum *params, uint32_t nparams,
                  uint32_t nrows, uint32_t result_type, int64_t *out_values, uint8_t *out_nulls,
                  int64_t *out_wide, unsigned long long *error)
{
    uint32_t stride = gridDim.x * blockDim.x;

    for (uint32_t row = blockIdx.x * blockDim.x + threadIdx.x; row < nrows; row += stride)
    {
        DevDatum r;
        uint32_t rows[PGSTROM_MAX_SOURCES] = {row};
        int32_t rc = dev_eval_row(code, ninstrs, data, cols, ncols, params, nparams, rows, &r);

        if (rc != DEVERR_OK)
        {
            atomicMin(error, ((unsigned long long) row << 8) | (unsigned long long) rc);
            out_nulls[row] = 1;
            out_values[row] = 0;
            if (out_wide)
                out_wide[2 * (uint64_t) row] = out_wide[2 * (uint64_t) row + 1] = 0;
            continue;
        }
        out_values[row] = r.isnull ? 0 : r.v.i;
        out_nulls[row] = r.isnull ? 1 : 0;
        if (out_wide && dev_is_varlena_type(result_type) && !r.isnull)
        {
            dev_varlena_ref(&r, data, cols, ncols, nrows, &out_wide[2 * (uint64_t) row], &out_values[row]);
            out_wide[2 * (uint64_t) row + 1] = r.len;
        }
        else if (out_wide)
        {
            out_wide[2 * (uint64_t) row] = r.isnull ? 0 : r.hi;
            out_wide[2 * (uint64_t) row + 1] = r.isnull ? 0 : r.len;
        }
    }
}

#else   /* PGSTROM_CPU_TARGET */

/*
 * CPU entry point.  Returns DEVERR_OK, or the error code with its row in
 * *error_row.
 */
extern "C" int32_t
pgstrom_cpu_eval_program(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
                         const DevColumn *cols, uint32_t ncols,
                         const DevDatum *params, uint32_t nparams,
                         uint32_t nrows, uint32_t result_type, int64_t *out_values, uint8_t *out_nulls,
                         int64_t *out_wide, uint32_t *error_row)
{
    for (uint32_t row = 0; row < nrows; row++)
    {
        DevDatum r;
        uint32_t rows[PGSTROM_MAX_SOURCES] = {row};
        int32_t rc = dev_eval_row(code, ninstrs, data, cols, ncols, params, nparams, rows, &r);

        if (rc != DEVERR_OK)
        {
            *error_row = row;
            return rc;
        }
        out_values[row] = r.isnull ? 0 : r.v.i;
        out_nulls[row] = r.isnull ? 1 : 0;
        if (out_wide && dev_is_varlena_type(result_type) && !r.isnull)
        {
            dev_varlena_ref(&r, data, cols, ncols, nrows, &out_wide[2 * (uint64_t) row], &out_values[row]);
            out_wide[2 * (uint64_t) row + 1] = r.len;
        }
        else if (out_wide)
        {
            out_wide[2 * (uint64_t) row] = r.isnull ? 0 : r.hi;
            out_wide[2 * (uint64_t) row + 1] = r.isnull ? 0 : r.len;
        }
    }
    return DEVERR_OK;
}

#endif
