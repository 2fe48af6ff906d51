/*
 * heap.cu - take PostgreSQL heap pages apart into device columns.
 *
 * The heap direct path (docs/gpu_service.md, "Heap tables"): the GPU
 * service reads all-visible blocks of a heap table's segment files
 * straight into memory, and these kernels turn their tuples into the
 * columnar layout every other kernel reads (values, Arrow validity
 * bitmap).  Two passes:
 *   - count: per block, its tuples (every LP_NORMAL item: the backend
 *     sent only blocks the visibility map says are all-visible, and the
 *     page itself must say so too), or HEAP_BLOCK_FALLBACK when the page
 *     or one of its tuples is not what the deformer takes (a page that is
 *     not all-visible, a damaged header, a tuple with fewer attributes
 *     than the columns need, a value running past its tuple): the backend
 *     reads that block through the buffer manager instead, so a row is
 *     never made up from bytes PostgreSQL would not have read;
 *   - deform: each block's tuples, in line pointer order, into rows
 *     [row_base[block], ...) of the output columns.
 * A join that returns rows then asks for the tuples its combinations read
 * (locate, copy): the backend forms its rows from those bytes instead of
 * reading the pages again through the buffer manager.
 * Output columns are fixed-width values stored as the device holds them
 * (copied), numerics, whose varlena form is decoded into the device's
 * 24 bytes here (a compressed or out-of-line numeric, or one of more
 * than 38 digits, sends its block to the buffer manager), or
 * variable-length values (text, varchar, bpchar, bytea: the bytes after
 * the varlena header, Arrow's offsets and data; a compressed or
 * out-of-line value sends its block to the buffer manager); attributes
 * before them may be of any kind (skipped by their length).  For the
 * variable-length columns (at most HEAP_MAX_VAR, numbered in attribute
 * order) the count pass also sums each block's bytes, and the deform
 * pass places each row's bytes at its block's base plus the bytes of the
 * rows before it (a warp's prefix sum).
 *
 * The per-tuple logic is one DEVICE_FUNC; the GPU gives a block to a warp
 * (lanes take line pointers, a ballot orders the rows), the CPU loops.
 */
#include "device_numeric.h"

#define HEAP_BLOCK_FALLBACK     0xffffffffU

#define HEAP_PAGE_HEADER        24      /* SizeOfPageHeaderData */
#define HEAP_PD_ALL_VISIBLE     0x0004
#define HEAP_PAGE_LAYOUT        4       /* PG_PAGE_LAYOUT_VERSION */
#define HEAP_LP_NORMAL          1
#define HEAP_T_BITS             23      /* offsetof(HeapTupleHeaderData, t_bits) */
#define HEAP_HASNULL            0x0001
#define HEAP_NATTS_MASK         0x07ff
#define HEAP_VARTAG_ONDISK      18
#define HEAP_TOAST_POINTER_SIZE 18      /* 2-byte header + varatt_external */

/* How an output column's value is made from the attribute's bytes. */
#define HEAP_CONV_COPY          0   /* fixed-width, the bytes as stored */
#define HEAP_CONV_NUMERIC       1   /* a numeric varlena, decoded */
#define HEAP_CONV_VARLENA       2   /* a varlena's bytes, variable-length */

/* Variable-length output columns a layout may have. */
#define HEAP_MAX_VAR            8

/* One attribute of the tuple descriptor, up to the last output column. */
typedef struct
{
    int16_t     attlen;     /* > 0 fixed, -1 varlena, -2 cstring */
    uint8_t     attalign;   /* 1, 2, 4 or 8 */
    uint8_t     conv;       /* HEAP_CONV_* of an output column */
    int32_t     column;     /* output column, or -1 */
} DevHeapAttr;

/* One output column: nrows * width bytes (a variable-length column: its
 * rows' bytes, and nrows + 1 offsets, the first zeroed by the caller) and
 * a validity bitmap of (nrows + 31) / 32 words, zeroed by the caller. */
typedef struct
{
    uint64_t    values;
    uint64_t    validity;
    uint64_t    offsets;    /* variable-length: uint32_t[nrows + 1] */
    uint32_t    width;      /* 0: variable-length */
    uint32_t    pad;
} DevHeapColumn;

DEVICE_FUNC uint32_t
heap_u16(const uint8_t *p)
{
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8);
}

DEVICE_FUNC uint32_t
heap_u32(const uint8_t *p)
{
    return heap_u16(p) | (heap_u16(p + 2) << 16);
}

/*
 * A numeric's bytes after its varlena header (numeric.c's NumericChoice
 * and base-10000 digits) as the device's 24 bytes (low and high 64 bits
 * of the mantissa, the display scale, 4 zero bytes) at `out`, or only
 * checked when `out` is NULL.  False for a value the device cannot hold
 * (more than 38 digits) or bytes that are no numeric.  The same decoding
 * as the host's (pgstrom-runtime's numeric.rs, DevNumeric::from_pg_payload).
 */
DEVICE_FUNC bool
heap_numeric(const uint8_t *p, uint32_t len, uint8_t *out)
{
    const dev_u128 limit = DEV_NUM_LIMIT;
    uint32_t    header;
    int32_t     scale;
    dev_u128    mag = 0;
    bool        neg = false;

    if (len < 2)
        return false;
    header = heap_u16(p);
    if ((header & 0xC000) == 0xC000)
    {
        switch (header & 0xF000)
        {
            case 0xC000: scale = NUM_NAN; break;
            case 0xD000: scale = NUM_PINF; break;
            case 0xF000: scale = NUM_NINF; break;
            default: return false;
        }
    }
    else
    {
        int32_t     weight;
        uint32_t    at;

        if ((header & 0xC000) == 0x8000)
        {
            int32_t     w = (int32_t) (header & 0x003F);

            weight = (header & 0x0040) != 0 ? w - 64 : w;
            neg = (header & 0x2000) != 0;
            scale = (int32_t) ((header & 0x1F80) >> 7);
            at = 2;
        }
        else
        {
            if (len < 4)
                return false;
            neg = (header & 0xC000) == 0x4000;
            scale = (int32_t) (header & 0x3FFF);
            weight = (int32_t) (int16_t) heap_u16(p + 2);
            at = 4;
        }
        /* no 128-bit division here (a long software routine on the GPU):
         * this runs for every numeric of every row */
        for (uint32_t i = 0; at + 2 * i + 2 <= len; i++)
        {
            uint32_t    d = heap_u16(p + at + 2 * i);
            int32_t     e = 4 * (weight - (int32_t) i) + scale;

            if (d == 0)
                continue;
            if (e >= 0)
            {
                dev_u128    t;

                /* d * 10^e past the limit (or past 128 bits): too large */
                if (e > 38 || !dev_umul128(d, dev_pow10_128(e), &t) || t > limit)
                    return false;
                mag += t;
            }
            else
            {
                /* digits past the display scale are zero in a valid numeric */
                uint32_t    pw;

                if (-e > 4)
                    return false;
                pw = (uint32_t) dev_pow10_u64[-e];
                if (d % pw != 0)
                    return false;
                mag += d / pw;
            }
            if (mag > limit)
                return false;
        }
    }
    if (out)
    {
        dev_u128    m = neg ? (dev_u128) 0 - mag : mag;

        for (uint32_t b = 0; b < 16; b++)
            out[b] = (uint8_t) (m >> (8 * b));
        for (uint32_t b = 0; b < 4; b++)
            out[16 + b] = (uint8_t) ((uint32_t) scale >> (8 * b));
        for (uint32_t b = 20; b < 24; b++)
            out[b] = 0;
    }
    return true;
}

/* Line pointers of a page whose header is sane and says all-visible;
 * -1 otherwise. */
DEVICE_FUNC int32_t
heap_page_items(const uint8_t *page, uint32_t blcksz)
{
    uint32_t    flags = heap_u16(page + 10);
    uint32_t    lower = heap_u16(page + 12);
    uint32_t    upper = heap_u16(page + 14);
    uint32_t    special = heap_u16(page + 16);
    uint32_t    version = heap_u16(page + 18);

    if ((flags & HEAP_PD_ALL_VISIBLE) == 0 ||
        version != (blcksz | HEAP_PAGE_LAYOUT) ||
        lower < HEAP_PAGE_HEADER || lower > upper ||
        upper > special || special > blcksz)
        return -1;
    return (int32_t) ((lower - HEAP_PAGE_HEADER) / 4);
}

/* Item i: 1 a tuple to deform (its offset and length set), 0 none. */
DEVICE_FUNC int32_t
heap_item(const uint8_t *page, uint32_t i, uint32_t *off, uint32_t *len)
{
    uint32_t    lp = heap_u32(page + HEAP_PAGE_HEADER + 4 * i);

    if (((lp >> 15) & 3) != HEAP_LP_NORMAL)
        return 0;
    *off = lp & 0x7fff;
    *len = lp >> 17;
    return 1;
}

/*
 * The k-th (from 0) LP_NORMAL item of a page whose header heap_page_items
 * accepts: its item index (from 0; the offset number less one), with its
 * offset and length set, or -1 when the page has no such item or the item
 * does not lie within the page.  The tuples a join returns are found this
 * way in the pages the count pass took (row r of a block is its r-th
 * LP_NORMAL item, as the deform pass places them).
 */
DEVICE_FUNC int32_t
heap_nth_item(const uint8_t *page, uint32_t blcksz, uint32_t k, uint32_t *off, uint32_t *len)
{
    int32_t     nitems = heap_page_items(page, blcksz);

    for (int32_t i = 0; i < nitems; i++)
    {
        if (!heap_item(page, (uint32_t) i, off, len))
            continue;
        if (k-- > 0)
            continue;
        if (*off < HEAP_PAGE_HEADER || *len == 0 || *off + *len > blcksz)
            return -1;
        return i;
    }
    return -1;
}

/* Wanted tuple w (place[2w]: its block, place[2w + 1]: its ordinal among
 * the block's tuples): loc[3w] its offset number (from 1), loc[3w + 1]
 * its offset in the page, loc[3w + 2] its length (all 0: the page holds
 * no such tuple). */
DEVICE_FUNC void
heap_locate_one(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz,
                const uint32_t *place, uint32_t *loc, uint32_t w)
{
    uint32_t    b = place[2 * w], off = 0, len = 0;
    int32_t     i = b < nblocks ? heap_nth_item(pages + (uint64_t) b * blcksz, blcksz,
                                                place[2 * w + 1], &off, &len) : -1;

    loc[3 * w] = i < 0 ? 0 : (uint32_t) i + 1;
    loc[3 * w + 1] = i < 0 ? 0 : off;
    loc[3 * w + 2] = i < 0 ? 0 : len;
}

/*
 * Deform the tuple at `off` (length `len`) of `page`: with `cols` NULL
 * only check that it can be, and when `vlen` is not NULL set the byte
 * length of each variable-length output column's value there (0 for a
 * NULL); else write its output columns at `row`, the variable-length
 * values' bytes at `vstart`.  False when it cannot be deformed here.
 */
DEVICE_FUNC bool
heap_deform_tuple(const uint8_t *page, uint32_t blcksz, uint32_t off, uint32_t len,
                  const DevHeapAttr *attrs, uint32_t nattrs,
                  const DevHeapColumn *cols, uint32_t row,
                  uint32_t *vlen, const uint32_t *vstart)
{
    const uint8_t *tup = page + off;
    const uint8_t *data;
    uint32_t    infomask2, infomask, hoff, dlen, pos = 0, var = 0;
    bool        hasnull;

    if (off < HEAP_PAGE_HEADER || (off & 7) != 0 || len < HEAP_T_BITS ||
        off + len > blcksz)
        return false;
    infomask2 = heap_u16(tup + 18);
    infomask = heap_u16(tup + 20);
    hoff = tup[22];
    hasnull = (infomask & HEAP_HASNULL) != 0;
    if ((infomask2 & HEAP_NATTS_MASK) < nattrs || hoff > len || hoff < HEAP_T_BITS)
        return false;
    if (hasnull && HEAP_T_BITS + (nattrs + 7) / 8 > hoff)
        return false;
    data = tup + hoff;
    dlen = len - hoff;
    for (uint32_t k = 0; k < nattrs; k++)
    {
        const DevHeapAttr *a = &attrs[k];
        bool        isnull = hasnull && ((tup[HEAP_T_BITS + k / 8] >> (k % 8)) & 1) == 0;
        uint32_t    at = 0, size = 0, head = 0;

        if (!isnull)
        {
            if (a->attlen > 0)
            {
                pos = (pos + a->attalign - 1) & ~((uint32_t) a->attalign - 1);
                at = pos;
                size = (uint32_t) a->attlen;
                if (pos + size > dlen)
                    return false;
                pos += size;
            }
            else if (a->attlen == -1)
            {
                uint32_t    b0;

                if (pos >= dlen)
                    return false;
                /* a pad byte is 0; a varlena header never is */
                if (data[pos] == 0)
                    pos = (pos + a->attalign - 1) & ~((uint32_t) a->attalign - 1);
                if (pos >= dlen)
                    return false;
                b0 = data[pos];
                if ((b0 & 1) == 1)
                {
                    if (b0 == 1)
                    {
                        if (pos + 1 >= dlen || data[pos + 1] != HEAP_VARTAG_ONDISK)
                            return false;
                        head = 2;
                        size = HEAP_TOAST_POINTER_SIZE;
                    }
                    else
                    {
                        head = 1;
                        size = b0 >> 1;
                    }
                }
                else
                {
                    if (pos + 4 > dlen)
                        return false;
                    head = 4;
                    size = heap_u32(data + pos) >> 2;
                }
                if (size < head || pos + size > dlen)
                    return false;
                at = pos;
                pos += size;
            }
            else
            {
                /* a cstring, up to and including its NUL */
                while (pos < dlen && data[pos] != 0)
                    pos++;
                if (pos >= dlen)
                    return false;
                pos++;
            }
        }
        if (a->column < 0)
            continue;
        if (a->conv == HEAP_CONV_VARLENA)
        {
            /* a plain inline varlena only: not compressed (a 4-byte
             * header's low bits 10), not a TOAST pointer */
            uint32_t    n = 0, v = var++;

            if (a->attlen != -1 || v >= HEAP_MAX_VAR)
                return false;
            if (!isnull)
            {
                if (head == 2 || (head == 4 && (data[at] & 3) != 0))
                    return false;
                n = size - head;
            }
            if (cols == 0)
            {
                if (vlen)
                    vlen[v] = n;
                continue;
            }
            {
                const DevHeapColumn *c = &cols[a->column];
                uint8_t    *dst = (uint8_t *) c->values + vstart[v];

                for (uint32_t b = 0; b < n; b++)
                    dst[b] = data[at + head + b];
                ((uint32_t *) c->offsets)[row + 1] = vstart[v] + n;
                if (!isnull)
                    pgstrom_atomic_or_u32((uint32_t *) c->validity + row / 32, 1U << (row % 32));
            }
            continue;
        }
        if (a->conv == HEAP_CONV_NUMERIC && !isnull)
        {
            /* a plain inline varlena only: not compressed (a 4-byte
             * header's low bits 10), not a TOAST pointer */
            uint8_t    *dst = 0;

            if (a->attlen != -1 || head == 2 || (head == 4 && (data[at] & 3) != 0))
                return false;
            if (cols)
                dst = (uint8_t *) cols[a->column].values + (uint64_t) row * 24;
            if (!heap_numeric(data + at + head, size - head, dst))
                return false;
        }
        if (cols == 0)
            continue;
        /* an output column of the width the host checked */
        {
            const DevHeapColumn *c = &cols[a->column];
            uint8_t    *dst = (uint8_t *) c->values + (uint64_t) row * c->width;

            if (isnull)
            {
                for (uint32_t b = 0; b < c->width; b++)
                    dst[b] = 0;
            }
            else
            {
                if (a->conv == HEAP_CONV_COPY)
                {
                    for (uint32_t b = 0; b < c->width; b++)
                        dst[b] = data[at + b];
                }
                pgstrom_atomic_or_u32((uint32_t *) c->validity + row / 32, 1U << (row % 32));
            }
        }
    }
    return true;
}

#ifdef PGSTROM_GPU_TARGET

/* A warp per block: its tuple count, or HEAP_BLOCK_FALLBACK, and the
 * bytes of each of its `nvar` variable-length columns at vbytes[b * nvar]. */
KERNEL_FUNC void
kern_heap_count(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz,
                const DevHeapAttr *attrs, uint32_t nattrs, uint32_t *counts,
                uint32_t nvar, uint32_t *vbytes)
{
    uint32_t    lane = threadIdx.x & 31;
    uint32_t    warps = (gridDim.x * blockDim.x) >> 5;

    for (uint32_t b = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; b < nblocks; b += warps)
    {
        const uint8_t *page = pages + (uint64_t) b * blcksz;
        int32_t     nitems = heap_page_items(page, blcksz);
        uint32_t    count = 0;
        uint32_t    vsum[HEAP_MAX_VAR];
        bool        bad = nitems < 0;

        for (uint32_t v = 0; v < nvar; v++)
            vsum[v] = 0;
        for (uint32_t i = lane; !bad && i < (uint32_t) nitems; i += 32)
        {
            uint32_t    off, len, vlen[HEAP_MAX_VAR];

            if (heap_item(page, i, &off, &len))
            {
                count++;
                if (!heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, 0, 0, vlen, 0))
                    bad = true;
                else
                    for (uint32_t v = 0; v < nvar; v++)
                        vsum[v] += vlen[v];
            }
        }
        bad = __any_sync(0xffffffffU, bad);
        for (uint32_t s = 16; s > 0; s >>= 1)
        {
            count += __shfl_down_sync(0xffffffffU, count, s);
            for (uint32_t v = 0; v < nvar; v++)
                vsum[v] += __shfl_down_sync(0xffffffffU, vsum[v], s);
        }
        if (lane == 0)
        {
            counts[b] = bad ? HEAP_BLOCK_FALLBACK : count;
            for (uint32_t v = 0; v < nvar; v++)
                vbytes[(uint64_t) b * nvar + v] = bad ? 0 : vsum[v];
        }
    }
}

/* A warp per block: its tuples into rows row_base[b]..., the bytes of
 * variable-length column v from vbase[b * nvar + v] on. */
KERNEL_FUNC void
kern_heap_deform(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz,
                 const DevHeapAttr *attrs, uint32_t nattrs,
                 const uint32_t *counts, const uint32_t *row_base,
                 const DevHeapColumn *cols, uint32_t nvar, const uint32_t *vbase)
{
    uint32_t    lane = threadIdx.x & 31;
    uint32_t    warps = (gridDim.x * blockDim.x) >> 5;

    for (uint32_t b = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; b < nblocks; b += warps)
    {
        const uint8_t *page = pages + (uint64_t) b * blcksz;
        uint32_t    nitems, row;
        uint32_t    vrun[HEAP_MAX_VAR];

        if (counts[b] == HEAP_BLOCK_FALLBACK)
            continue;
        nitems = (uint32_t) heap_page_items(page, blcksz);
        row = row_base[b];
        for (uint32_t v = 0; v < nvar; v++)
            vrun[v] = vbase[(uint64_t) b * nvar + v];
        for (uint32_t i0 = 0; i0 < nitems; i0 += 32)
        {
            uint32_t    i = i0 + lane;
            uint32_t    off = 0, len = 0;
            uint32_t    vlen[HEAP_MAX_VAR], vstart[HEAP_MAX_VAR];
            bool        take = i < nitems && heap_item(page, i, &off, &len);
            unsigned int mask = __ballot_sync(0xffffffffU, take);

            for (uint32_t v = 0; v < nvar; v++)
                vlen[v] = 0;
            if (take && nvar > 0)
                heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, 0, 0, vlen, 0);
            /* each row's bytes after those of the rows before it (lanes
             * in line pointer order, as the rows are) */
            for (uint32_t v = 0; v < nvar; v++)
            {
                uint32_t    incl = vlen[v];

                for (uint32_t s = 1; s < 32; s <<= 1)
                {
                    uint32_t    y = __shfl_up_sync(0xffffffffU, incl, s);

                    if (lane >= s)
                        incl += y;
                }
                vstart[v] = vrun[v] + incl - vlen[v];
                vrun[v] += __shfl_sync(0xffffffffU, incl, 31);
            }
            if (take)
                heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, cols,
                                  row + __popc(mask & ((1U << lane) - 1)), 0, vstart);
            row += __popc(mask);
        }
    }
}

/* A thread per wanted tuple (heap_locate_one). */
KERNEL_FUNC void
kern_heap_locate(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz, uint32_t n,
                 const uint32_t *place, uint32_t *loc)
{
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < n; w += gridDim.x * blockDim.x)
        heap_locate_one(pages, nblocks, blcksz, place, loc, w);
}

/* A warp per wanted tuple located by kern_heap_locate: its bytes to
 * out + start[w]. */
KERNEL_FUNC void
kern_heap_copy(const uint8_t *pages, uint32_t blcksz, uint32_t n, const uint32_t *place,
               const uint32_t *loc, const uint32_t *start, uint8_t *out)
{
    uint32_t    lane = threadIdx.x & 31;
    uint32_t    warps = (gridDim.x * blockDim.x) >> 5;

    for (uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < n; w += warps)
    {
        const uint8_t *src = pages + (uint64_t) place[2 * w] * blcksz + loc[3 * w + 1];
        uint8_t    *dst = out + start[w];

        for (uint32_t b = lane; b < loc[3 * w + 2]; b += 32)
            dst[b] = src[b];
    }
}

#else   /* PGSTROM_CPU_TARGET */

extern "C" void
pgstrom_cpu_heap_locate(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz, uint32_t n,
                        const uint32_t *place, uint32_t *loc)
{
    for (uint32_t w = 0; w < n; w++)
        heap_locate_one(pages, nblocks, blcksz, place, loc, w);
}

extern "C" void
pgstrom_cpu_heap_count(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz,
                       const DevHeapAttr *attrs, uint32_t nattrs, uint32_t *counts,
                       uint32_t nvar, uint32_t *vbytes)
{
    for (uint32_t b = 0; b < nblocks; b++)
    {
        const uint8_t *page = pages + (uint64_t) b * blcksz;
        int32_t     nitems = heap_page_items(page, blcksz);
        uint32_t    count = 0;
        uint32_t    vsum[HEAP_MAX_VAR] = {0};
        bool        bad = nitems < 0;

        for (uint32_t i = 0; !bad && i < (uint32_t) nitems; i++)
        {
            uint32_t    off, len, vlen[HEAP_MAX_VAR];

            if (heap_item(page, i, &off, &len))
            {
                count++;
                if (!heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, 0, 0, vlen, 0))
                    bad = true;
                else
                    for (uint32_t v = 0; v < nvar; v++)
                        vsum[v] += vlen[v];
            }
        }
        counts[b] = bad ? HEAP_BLOCK_FALLBACK : count;
        for (uint32_t v = 0; v < nvar; v++)
            vbytes[(uint64_t) b * nvar + v] = bad ? 0 : vsum[v];
    }
}

extern "C" void
pgstrom_cpu_heap_deform(const uint8_t *pages, uint32_t nblocks, uint32_t blcksz,
                        const DevHeapAttr *attrs, uint32_t nattrs,
                        const uint32_t *counts, const uint32_t *row_base,
                        const DevHeapColumn *cols, uint32_t nvar, const uint32_t *vbase)
{
    for (uint32_t b = 0; b < nblocks; b++)
    {
        const uint8_t *page = pages + (uint64_t) b * blcksz;
        uint32_t    nitems, row;
        uint32_t    vrun[HEAP_MAX_VAR];

        if (counts[b] == HEAP_BLOCK_FALLBACK)
            continue;
        nitems = (uint32_t) heap_page_items(page, blcksz);
        row = row_base[b];
        for (uint32_t v = 0; v < nvar; v++)
            vrun[v] = vbase[(uint64_t) b * nvar + v];
        for (uint32_t i = 0; i < nitems; i++)
        {
            uint32_t    off, len, vlen[HEAP_MAX_VAR];

            if (!heap_item(page, i, &off, &len))
                continue;
            if (nvar > 0)
                heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, 0, 0, vlen, 0);
            heap_deform_tuple(page, blcksz, off, len, attrs, nattrs, cols, row++, 0, vrun);
            for (uint32_t v = 0; v < nvar; v++)
                vrun[v] += vlen[v];
        }
    }
}

#endif
