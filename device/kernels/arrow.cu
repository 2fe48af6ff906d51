/*
 * arrow.cu - Arrow file columns the GPU service read into device memory,
 * widened where the file's layout is not the device's: Decimal128
 * mantissas into the device's numeric (device_types.def), Date32 (days
 * from 1970) into the device's date (days from 2000), char(n) checked to
 * be ASCII (its offsets made per request).  Done once per
 * column buffer; the column cache keeps the widened copy (colcache.rs),
 * so later queries read it as it is.  The CPU engine's copy of this step
 * is pgstrom-runtime's widen.rs.
 */
#include "pgstrom_device.h"
#include "device_numeric.h"

#ifdef PGSTROM_GPU_TARGET

/*
 * n mantissas (16 bytes each, little-endian) at `scale` into 24-byte
 * numerics (mantissa, scale, zero padding).  A value of more than `digits`
 * digits becomes NUM_BIG (mantissa 0): a row computing with it goes to
 * PostgreSQL.  *first_big becomes the least such row whose validity bit is
 * set (every row when validity is NULL); it stays as the caller set it
 * when there is none.
 */
KERNEL_FUNC void
kern_widen_decimal128(const uint64_t *src, uint64_t *dst, uint64_t n, int32_t scale, int32_t digits,
                      const uint8_t *validity, unsigned long long *first_big)
{
    dev_u128    bound = dev_pow10_128(digits);
    uint64_t    stride = (uint64_t) gridDim.x * blockDim.x;

    for (uint64_t i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    {
        uint64_t    lo = src[2 * i];
        uint64_t    hi = src[2 * i + 1];
        dev_u128    u = ((dev_u128) hi << 64) | (dev_u128) lo;
        /* the magnitude, computed unsigned (the least value has no negation) */
        dev_u128    mag = (hi >> 63) ? (dev_u128) 0 - u : u;

        if (mag < bound)
        {
            dst[3 * i] = lo;
            dst[3 * i + 1] = hi;
            dst[3 * i + 2] = (uint64_t) (uint32_t) scale;
        }
        else
        {
            dst[3 * i] = 0;
            dst[3 * i + 1] = 0;
            dst[3 * i + 2] = (uint64_t) (uint32_t) NUM_BIG;
            if (!validity || ((validity[i >> 3] >> (i & 7)) & 1) != 0)
                atomicMin(first_big, (unsigned long long) i);
        }
    }
}

/* days from 1970-01-01 to 2000-01-01; PostgreSQL's dates in days from
 * 2000-01-01: 4714-11-24 BC up to (not including) 5874898-01-01 */
#define ARROW_EPOCH_DAYS    10957
#define ARROW_MIN_DATE      (-2451545LL)
#define ARROW_END_DATE      2145031949LL

/*
 * n Date32 values into the device's dates.  A value outside PostgreSQL's
 * range becomes 0; *first_bad becomes the least such row whose validity
 * bit is set (every row without a bitmap), and stays as the caller
 * set it when there is none.
 */
KERNEL_FUNC void
kern_widen_date32(const int32_t *src, int32_t *dst, uint64_t n, const uint8_t *validity,
                  unsigned long long *first_bad)
{
    uint64_t    stride = (uint64_t) gridDim.x * blockDim.x;

    for (uint64_t i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    {
        int64_t     days = (int64_t) src[i] - ARROW_EPOCH_DAYS;

        if (days >= ARROW_MIN_DATE && days < ARROW_END_DATE)
            dst[i] = (int32_t) days;
        else
        {
            dst[i] = 0;
            if (!validity || ((validity[i >> 3] >> (i & 7)) & 1) != 0)
                atomicMin(first_bad, (unsigned long long) i);
        }
    }
}

/*
 * n FixedSizeBinary values of `size` bytes (char(size) as pg2arrow writes
 * it) copied as they are, each checked to be ASCII without NUL bytes, so
 * that its bytes are the blank-padded char(size) value.  *first_bad
 * becomes the least row failing the check whose validity bit is set
 * (every row without a bitmap), and stays as the caller set it when there
 * is none.
 */
KERNEL_FUNC void
kern_widen_fixed_text(const uint8_t *src, uint8_t *dst, uint64_t n, uint32_t size, const uint8_t *validity,
                      unsigned long long *first_bad)
{
    uint64_t    stride = (uint64_t) gridDim.x * blockDim.x;

    for (uint64_t i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    {
        const uint8_t *v = src + i * size;
        uint8_t    *d = dst + i * size;
        bool        bad = false;

        for (uint32_t k = 0; k < size; k++)
        {
            uint8_t     c = v[k];

            bad |= (c == 0 || c >= 0x80);
            d[k] = c;
        }
        if (bad && (!validity || ((validity[i >> 3] >> (i & 7)) & 1) != 0))
            atomicMin(first_bad, (unsigned long long) i);
    }
}

/* offsets of `count` - 1 text values of `size` bytes each, one after
 * another: dst[i] = i * size */
KERNEL_FUNC void
kern_fixed_offsets(uint32_t *dst, uint64_t count, uint32_t size)
{
    uint64_t    stride = (uint64_t) gridDim.x * blockDim.x;

    for (uint64_t i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        dst[i] = (uint32_t) (i * size);
}

#endif                          /* PGSTROM_GPU_TARGET */
