/*
 * eval.cu - evaluate a device program over a chunk of columns.
 *
 * Each row's result goes to out_values (raw 8-byte datum bits) and
 * out_nulls; a wide result's second word and length (a numeric's high
 * mantissa word and scale) also go to out_wide (two words per row), when
 * the caller passes it.  A text / bpchar / bytea result (result_type)
 * goes there as where its bytes lie: out_values the offset, out_wide the
 * source (dev_varlena_ref: 0 the program's data, k + 1 input column k,
 * -1 out_text) and the length.  Text that lower, upper or || made lives
 * only while its row is evaluated, so it is copied to out_text (text_cap
 * bytes, *text_used of them taken); a row whose text does not fit there
 * needs PostgreSQL.  A row the engine cannot compute exactly
 * (DEVERR_NEEDS_CPU: a numeric beyond 38 digits, a GPU transcendental
 * value, text that does not fit) is marked with out_nulls = 2 and the
 * others go on: PostgreSQL evaluates just those rows.  Of the other
 * errors, the first in row order wins, as in PostgreSQL, which would have
 * raised it at that row: the GPU records min(row << 8 | code) with an
 * atomic; the CPU stops at the first failing row.
 */
#include "device_interp.h"

/* n bytes of out_text reserved: their offset */
DEVICE_FUNC uint64_t
dev_take_text(unsigned long long *text_used, uint64_t n)
{
#ifdef PGSTROM_GPU_TARGET
    return (uint64_t) atomicAdd(text_used, (unsigned long long) n);
#else
    uint64_t at = *text_used;

    *text_used += n;
    return at;
#endif
}

/* Store row `row`'s result r; text made in *scratch goes to out_text. */
DEVICE_FUNC int32_t
dev_store_result(const DevDatum *r, const DevScratch *scratch, const uint8_t *data,
                 const DevColumn *cols, uint32_t ncols, uint32_t nrows, uint32_t row,
                 uint32_t result_type, int64_t *out_values, uint8_t *out_nulls,
                 int64_t *out_wide, uint8_t *out_text, uint64_t text_cap, unsigned long long *text_used)
{
    out_values[row] = r->isnull ? 0 : r->v.i;
    out_nulls[row] = r->isnull ? 1 : 0;
    if (out_wide && dev_is_varlena_type(result_type) && !r->isnull)
    {
        const uint8_t *p = (const uint8_t *) r->v.i;

        if (r->len == 0)
        {
            /* empty: wherever it pointed, no bytes to find */
            out_wide[2 * (uint64_t) row] = 0;
            out_values[row] = 0;
        }
        else if (p >= scratch->buf && p < scratch->buf + PGSTROM_SCRATCH_BYTES)
        {
            uint64_t at;

            if (out_text == 0)
                return DEVERR_NEEDS_CPU;
            at = dev_take_text(text_used, (uint64_t) r->len);
            if (at + (uint64_t) r->len > text_cap)
                return DEVERR_NEEDS_CPU;
            for (int32_t i = 0; i < r->len; i++)
                out_text[at + i] = p[i];
            out_wide[2 * (uint64_t) row] = -1;
            out_values[row] = (int64_t) at;
        }
        else
            dev_varlena_ref(r, data, cols, ncols, nrows, &out_wide[2 * (uint64_t) row], &out_values[row]);
        out_wide[2 * (uint64_t) row + 1] = r->len;
    }
    else if (out_wide)
    {
        out_wide[2 * (uint64_t) row] = r->isnull ? 0 : r->hi;
        out_wide[2 * (uint64_t) row + 1] = r->isnull ? 0 : r->len;
    }
    return DEVERR_OK;
}

#ifdef PGSTROM_GPU_TARGET

KERNEL_FUNC void
kern_eval_program(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
                  const DevColumn *cols, uint32_t ncols,
                  const DevDatum *params, uint32_t nparams,
                  uint32_t nrows, uint32_t result_type, int64_t *out_values, uint8_t *out_nulls,
                  int64_t *out_wide, uint8_t *out_text, uint64_t text_cap,
                  unsigned long long *text_used, unsigned long long *error)
{
    uint32_t stride = gridDim.x * blockDim.x;

    for (uint32_t row = blockIdx.x * blockDim.x + threadIdx.x; row < nrows; row += stride)
    {
        DevDatum r;
        DevScratch scratch;
        uint32_t rows[PGSTROM_MAX_SOURCES] = {row};
        int32_t rc = dev_eval_row_in(code, ninstrs, data, cols, ncols, params, nparams, rows, &r, &scratch);

        if (rc == DEVERR_OK)
            rc = dev_store_result(&r, &scratch, data, cols, ncols, nrows, row, result_type,
                                  out_values, out_nulls, out_wide, out_text, text_cap, text_used);
        if (rc != DEVERR_OK)
        {
            if (rc != DEVERR_NEEDS_CPU)
                atomicMin(error, ((unsigned long long) row << 8) | (unsigned long long) rc);
            out_nulls[row] = rc == DEVERR_NEEDS_CPU ? 2 : 1;
            out_values[row] = 0;
            if (out_wide)
                out_wide[2 * (uint64_t) row] = out_wide[2 * (uint64_t) row + 1] = 0;
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
                         int64_t *out_wide, uint8_t *out_text, uint64_t text_cap,
                         unsigned long long *text_used, uint32_t *error_row)
{
    for (uint32_t row = 0; row < nrows; row++)
    {
        DevDatum r;
        DevScratch scratch;
        uint32_t rows[PGSTROM_MAX_SOURCES] = {row};
        int32_t rc = dev_eval_row_in(code, ninstrs, data, cols, ncols, params, nparams, rows, &r, &scratch);

        if (rc == DEVERR_OK)
            rc = dev_store_result(&r, &scratch, data, cols, ncols, nrows, row, result_type,
                                  out_values, out_nulls, out_wide, out_text, text_cap, text_used);
        if (rc == DEVERR_NEEDS_CPU)
        {
            out_nulls[row] = 2;
            out_values[row] = 0;
            if (out_wide)
                out_wide[2 * (uint64_t) row] = out_wide[2 * (uint64_t) row + 1] = 0;
        }
        else if (rc != DEVERR_OK)
        {
            *error_row = row;
            return rc;
        }
    }
    return DEVERR_OK;
}

#endif
