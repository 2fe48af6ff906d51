/*
 * device_interp.h - the device program interpreter and the implementations
 * of the device functions (device_functions.def), with PostgreSQL's exact
 * semantics: integer overflow and division by zero raise the errors
 * PostgreSQL raises, floats follow float.c (NaN, infinities, overflow and
 * underflow checks), comparisons follow the btree comparison functions.
 *
 * dev_eval_row() evaluates a validated program at one row of each source
 * (the scanned row and, in a join, one inner row per depth).  It returns
 * DEVERR_OK and the result, or an error code; it never traps.
 */
#ifndef PGSTROM_DEVICE_INTERP_H
#define PGSTROM_DEVICE_INTERP_H

#include "device_program.h"

#ifdef PGSTROM_GPU_TARGET
#define dev_isnan(x)    isnan(x)
#define dev_isinf(x)    isinf(x)
#define dev_rint(x)     rint(x)
#define dev_rintf(x)    rintf(x)
#define dev_fabs(x)     fabs(x)
#define dev_fabsf(x)    fabsf(x)
#define dev_sqrt(x)     sqrt(x)
#define dev_floor(x)    floor(x)
#define dev_ceil(x)     ceil(x)
#define dev_inf()       __longlong_as_double(0x7ff0000000000000LL)
#define dev_nan()       __longlong_as_double(0x7ff8000000000000LL)
/* CUDA's pow differs from glibc's in the last bit: no pow on the GPU */
#else
#define dev_isnan(x)    __builtin_isnan(x)
#define dev_isinf(x)    __builtin_isinf(x)
#define dev_rint(x)     __builtin_rint(x)
#define dev_rintf(x)    __builtin_rintf(x)
#define dev_fabs(x)     __builtin_fabs(x)
#define dev_fabsf(x)    __builtin_fabsf(x)
#define dev_sqrt(x)     __builtin_sqrt(x)
#define dev_floor(x)    __builtin_floor(x)
#define dev_ceil(x)     __builtin_ceil(x)
#define dev_inf()       __builtin_inf()
#define dev_nan()       __builtin_nan("")
/* the host libm's pow: the very function PostgreSQL's dpow calls */
#define dev_pow(x, y)   __builtin_pow(x, y)
/*
 * Rust's compiler-builtins links a cbrt of its own into the library (and
 * the test programs), which the linker binds before libm's and whose last
 * bit differs from glibc's: glibc's cbrt, the one float.c calls, is named
 * by its symbol version.
 */
#if defined(__GLIBC__) && defined(__x86_64__)
__asm__(".symver dev_glibc_cbrt,cbrt@GLIBC_2.2.5");
#define dev_cbrt(x)     dev_glibc_cbrt(x)
#elif defined(__GLIBC__) && defined(__aarch64__)
__asm__(".symver dev_glibc_cbrt,cbrt@GLIBC_2.17");
#define dev_cbrt(x)     dev_glibc_cbrt(x)
#else
#define dev_cbrt(x)     __builtin_cbrt(x)
#endif
extern "C" double dev_glibc_cbrt(double);
#endif

/*
 * Memory for the text results of one row's evaluation that are not a part
 * of an argument (lower, upper, ||).  Such a value lives until the row's
 * evaluation ends, which is as long as any text value is used (text is
 * never a program's returned result, a grouping key read back or a stored
 * join key).  A result that does not fit goes to PostgreSQL
 * (DEVERR_NEEDS_CPU), so those functions are compiled only where rows can.
 */
#define PGSTROM_SCRATCH_BYTES   512

typedef struct
{
    uint32_t    used;
    uint8_t     buf[PGSTROM_SCRATCH_BYTES];
} DevScratch;

/* n bytes of the row's scratch memory, or NULL when they do not fit */
DEVICE_FUNC uint8_t *
dev_scratch_alloc(DevScratch *s, int64_t n)
{
    uint8_t *p;

    if (s == 0 || n < 0 || (int64_t) s->used + n > PGSTROM_SCRATCH_BYTES)
        return 0;
    p = s->buf + s->used;
    s->used += (uint32_t) n;
    return p;
}

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

/* A value as float8, for comparisons and mixed float arithmetic (float2
 * is held as a float4). */
DEVICE_FUNC double
dev_as_f8(int type, const DevDatum *d)
{
    return (type == DT_FLOAT4 || type == DT_FLOAT2) ? (double) d->v.f4
         : type == DT_FLOAT8 ? d->v.f8 : (double) d->v.i;
}

DEVICE_FUNC bool
dev_is_float(int type)
{
    return type == DT_FLOAT4 || type == DT_FLOAT8 || type == DT_FLOAT2;
}

/* An IEEE half's bits as the float holding the same value. */
DEVICE_FUNC float
dev_half_to_float(uint32_t h)
{
    uint32_t sign = (h & 0x8000U) << 16, exp = (h >> 10) & 0x1fU, man = h & 0x3ffU, bits;
    union { uint32_t u; float f; } c;

    if (exp == 0x1f)
        bits = sign | 0x7f800000U | (man << 13);       /* infinity, NaN */
    else if (exp != 0)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man == 0)
        bits = sign;                                    /* +-0 */
    else
    {
        /* a subnormal half is a normal float: shift its leading 1 up */
        uint32_t k = 0;

        while ((man & 0x400U) == 0)
        {
            man <<= 1;
            k++;
        }
        bits = sign | ((113 - k) << 23) | ((man & 0x3ffU) << 13);
    }
    c.u = bits;
    return c.f;
}

/* ---- function families (IMPL_* in device_functions.def) ---------------- */

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

/* float.c's float_overflow_error / float_underflow_error checks, for
 * float4 (F = float) and float8 (F = double) alike. */
template <typename F>
DEVICE_FUNC int32_t
dev_flt_arith(int op, F x, F y, F *z)
{
    switch (op)
    {
        case 0:
        case 1:
            *z = (op == 0) ? x + y : x - y;
            if (dev_isinf(*z) && !dev_isinf(x) && !dev_isinf(y))
                return DEVERR_FLOAT_OVERFLOW;
            break;
        case 2:
            *z = x * y;
            if (dev_isinf(*z) && !dev_isinf(x) && !dev_isinf(y))
                return DEVERR_FLOAT_OVERFLOW;
            if (*z == (F) 0 && x != (F) 0 && y != (F) 0)
                return DEVERR_FLOAT_UNDERFLOW;
            break;
        case 3:
            if (y == (F) 0 && !dev_isnan(x))
                return DEVERR_DIVISION_BY_ZERO;
            *z = x / y;
            if (dev_isinf(*z) && !dev_isinf(x))
                return DEVERR_FLOAT_OVERFLOW;
            if (*z == (F) 0 && x != (F) 0 && !dev_isinf(y))
                return DEVERR_FLOAT_UNDERFLOW;
            break;
    }
    return DEVERR_OK;
}

/* float4 op float4 computes in float4; anything with a float8 in float8. */
DEVICE_FUNC int32_t
impl_flt_arith(int op, int res, int ta, int tb, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    if (res == DT_FLOAT4)
        return dev_flt_arith<float>(op, a->v.f4, b->v.f4, &r->v.f4);
    return dev_flt_arith<double>(op, dev_as_f8(ta, a), dev_as_f8(tb, b), &r->v.f8);
}

/* date_cmp_timestamp_internal (date.c): the date as a timestamp; a date
 * past the timestamp range is above every finite timestamp but below
 * 'infinity' */
DEVICE_FUNC int
dev_date_cmp_timestamp(int64_t d, int64_t ts)
{
    int64_t t;

    if (d == (-2147483647 - 1))
        t = DEV_INT64_MIN;                  /* -infinity */
    else if (d == 2147483647)
        t = DEV_INT64_MAX;                  /* infinity */
    else if (d >= 106751983LL)              /* TIMESTAMP_END_JULIAN - epoch */
        return ts == DEV_INT64_MAX ? -1 : 1;
    else
        t = d * 86400000000LL;
    return pgstrom_cmp3(t, ts);
}

DEVICE_NOINLINE int32_t dev_num_compare(const DevDatum *a, const DevDatum *b, int *c);
DEVICE_NOINLINE int dev_wide_compare(int t, const DevDatum *a, const DevDatum *b);

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

DEVICE_FUNC int32_t
impl_neg(int res, const DevDatum *a, DevDatum *r)
{
    if (res == DT_FLOAT4)
        r->v.f4 = -a->v.f4;
    else if (res == DT_FLOAT8)
        r->v.f8 = -a->v.f8;
    else if (res == DT_INT8)
    {
        if (a->v.i == DEV_INT64_MIN)
            return DEVERR_BIGINT_RANGE;
        r->v.i = -a->v.i;
    }
    else
        return dev_int_result(res, -a->v.i, r);
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_abs(int res, const DevDatum *a, DevDatum *r)
{
    if (res == DT_FLOAT4)
        r->v.f4 = dev_fabsf(a->v.f4);
    else if (res == DT_FLOAT8)
        r->v.f8 = dev_fabs(a->v.f8);
    else if (res == DT_INT8)
    {
        if (a->v.i == DEV_INT64_MIN)
            return DEVERR_BIGINT_RANGE;
        r->v.i = a->v.i < 0 ? -a->v.i : a->v.i;
    }
    else
        return dev_int_result(res, a->v.i < 0 ? -a->v.i : a->v.i, r);
    return DEVERR_OK;
}

/* int -> float: as C converts, like i4tod / i8tof and friends. */
DEVICE_FUNC int32_t
impl_cast_i2f(int res, const DevDatum *a, DevDatum *r)
{
    if (res == DT_FLOAT4)
        r->v.f4 = (float) a->v.i;
    else
        r->v.f8 = (double) a->v.i;
    return DEVERR_OK;
}

/* float -> int: rint, then the FLOATx_FITS_IN_INTy test of c.h, in the
 * source's own precision (F = float for float4, double for float8). */
template <typename F>
DEVICE_FUNC int32_t
dev_float_to_int(int res, F num, DevDatum *r)
{
    bool fits;

    if (res == DT_INT2)
        fits = num >= (F) -32768 && num < -((F) -32768);
    else if (res == DT_INT4)
        fits = num >= (F) (-2147483647 - 1) && num < -((F) (-2147483647 - 1));
    else
        fits = num >= (F) DEV_INT64_MIN && num < -((F) DEV_INT64_MIN);
    if (dev_isnan(num) || !fits)
        return dev_int_range_error(res);
    r->v.i = (int64_t) num;
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_cast_f2i(int res, int ta, const DevDatum *a, DevDatum *r)
{
    if (ta == DT_FLOAT4 || ta == DT_FLOAT2)     /* a float2 is held as a float */
        return dev_float_to_int<float>(res, dev_rintf(a->v.f4), r);
    return dev_float_to_int<double>(res, dev_rint(a->v.f8), r);
}

DEVICE_FUNC int32_t
impl_cast_f2f(int res, const DevDatum *a, DevDatum *r)
{
    if (res == DT_FLOAT8)
        r->v.f8 = (double) a->v.f4;
    else
    {
        /* dtof: overflow and underflow checks */
        double num = a->v.f8;
        float f = (float) num;

        if (dev_isinf(f) && !dev_isinf(num))
            return DEVERR_FLOAT_OVERFLOW;
        if (f == 0.0f && num != 0.0)
            return DEVERR_FLOAT_UNDERFLOW;
        r->v.f4 = f;
    }
    return DEVERR_OK;
}

/* ---- float8 math (float.c) ---------------------------------------------- */

DEVICE_FUNC int32_t
impl_math(int op, const DevDatum *a, DevDatum *r)
{
    double x = a->v.f8, z;

    switch (op)
    {
        case 0:                                 /* dsqrt */
            if (x < 0)
                return DEVERR_SQRT_NEGATIVE;
            z = dev_sqrt(x);
            if (dev_isinf(z) && !dev_isinf(x))
                return DEVERR_FLOAT_OVERFLOW;
            if (z == 0.0 && x != 0.0)
                return DEVERR_FLOAT_UNDERFLOW;
            break;
        case 1: z = dev_floor(x); break;        /* dfloor */
        case 2: z = dev_ceil(x); break;         /* dceil */
        case 3: z = dev_rint(x); break;         /* dround */
        case 4: z = (x >= 0) ? dev_floor(x) : -dev_floor(-x); break;   /* dtrunc */
        default: z = (x > 0) ? 1.0 : ((x < 0) ? -1.0 : 0.0); break;    /* dsign */
    }
    r->v.f8 = z;
    return DEVERR_OK;
}

/*
 * dpow (float.c), special cases first, exactly as PostgreSQL orders them.
 * The finite case calls pow(): on the CPU engine that is the same libm
 * function PostgreSQL calls, so the bits agree.  glibc's pow is not
 * correctly rounded (pow(x, 2) != x * x for about 1 in 1,200 values), so
 * no GPU formula reproduces it: there the finite cases that are not exact
 * by definition report DEVERR_NEEDS_CPU and PostgreSQL evaluates the row.
 * Except x ^ 2: glibc's pow is within 0.54 ULP of the true value
 * (its worst case, the algorithm's stated bound), so where x * x rounds a
 * true square at most 0.45 ULP away (fma gives the rounding error
 * exactly), every other double is at least 0.55 ULP away and glibc
 * returns x * x too; the squares near a rounding midpoint (one in ten)
 * are left to the CPU engine.
 */
#ifdef PGSTROM_GPU_TARGET
DEVICE_FUNC bool
dev_square_as_glibc(double x, double *z)
{
    double hi = x * x, lo = fma(x, x, -hi);
    uint64_t bits = (uint64_t) __double_as_longlong(hi);
    uint64_t ebits = bits & 0x7ff0000000000000ULL;
    double ulp;

    if (x == 0.0)
    {
        *z = 0.0;
        return true;
    }
    /* a normal result (not near underflow or overflow, which glibc flags) */
    if (ebits < (53ULL << 52) || ebits == 0x7ff0000000000000ULL)
        return false;
    if (lo == 0.0)
    {
        *z = hi;                    /* the exact square */
        return true;
    }
    /* not a power of two, whose lower neighbour is nearer */
    if ((bits & 0x000fffffffffffffULL) == 0)
        return false;
    ulp = __longlong_as_double((long long) (ebits - (52ULL << 52)));
    if (fabs(lo) > 0.45 * ulp)
        return false;
    *z = hi;
    return true;
}
#endif

DEVICE_FUNC int32_t
impl_pow(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    double x = a->v.f8, y = b->v.f8, z;

    if (dev_isnan(x))
    {
        r->v.f8 = (dev_isnan(y) || y != 0.0) ? x : 1.0;
        return DEVERR_OK;
    }
    if (dev_isnan(y))
    {
        r->v.f8 = (x != 1.0) ? y : 1.0;
        return DEVERR_OK;
    }
    if (x == 0 && y < 0)
        return DEVERR_POWER_ZERO_NEG;
    if (x < 0 && dev_floor(y) != y)
        return DEVERR_POWER_COMPLEX;
    if (dev_isinf(y))
    {
        double absx = dev_fabs(x);

        if (absx == 1.0)
            z = 1.0;
        else if (y > 0.0)
            z = (absx > 1.0) ? y : 0.0;
        else
            z = (absx > 1.0) ? 0.0 : -y;
    }
    else if (dev_isinf(x))
    {
        if (y == 0.0)
            z = 1.0;
        else if (x > 0.0)
            z = (y > 0.0) ? x : 0.0;
        else
        {
            double halfy = y / 2;
            bool odd = (dev_floor(halfy) != halfy);

            if (y > 0.0)
                z = odd ? x : -x;
            else
                z = odd ? -0.0 : 0.0;
        }
    }
    else
    {
        if (y == 0.0 || x == 1.0)
            z = 1.0;
        else if (y == 1.0)
            z = x;
        else
        {
#ifdef PGSTROM_GPU_TARGET
            if (y != 2.0 || !dev_square_as_glibc(x, &z))
                return DEVERR_NEEDS_CPU;
#else
            z = dev_pow(x, y);
            /*
             * PostgreSQL also checks errno: glibc sets ERANGE on overflow
             * (an infinite result, caught below) and on underflow, where a
             * subnormal result would read as "overflow" there.  Leave every
             * result that is not a normal number to PostgreSQL.
             */
            if (dev_isnan(z) || (z != 0.0 && !dev_isinf(z) && dev_fabs(z) < 2.2250738585072014e-308))
                return DEVERR_NEEDS_CPU;
#endif
        }
        if (dev_isinf(z))
            return DEVERR_FLOAT_OVERFLOW;
        if (z == 0.0 && x != 0.0)
            return DEVERR_FLOAT_UNDERFLOW;
    }
    r->v.f8 = z;
    return DEVERR_OK;
}

#define IMPL_POW(res, ta, tb)       impl_pow(&args[0], &args[1], r)

/*
 * Transcendental functions (float.c: dcbrt, dexp, dlog1, dlog10, the
 * trigonometric and hyperbolic functions, degrees, radians).  Argument
 * checks, special values and errors are float.c's.  The value itself comes
 * from the host libm on the CPU engine: the very functions float.c calls,
 * so the bits agree.  CUDA's versions differ from glibc's in the last bit
 * for some arguments (as its pow does), so on the GPU a value that is not
 * exact by definition reports DEVERR_NEEDS_CPU and PostgreSQL evaluates
 * the row.  degrees and radians are one IEEE division or product: exact
 * on both engines.
 */
#define TR_CBRT     0
#define TR_EXP      1
#define TR_LN       2
#define TR_LOG10    3
#define TR_SIN      4
#define TR_COS      5
#define TR_TAN      6
#define TR_COT      7
#define TR_ASIN     8
#define TR_ACOS     9
#define TR_ATAN     10
#define TR_ATAN2    11
#define TR_SINH     12
#define TR_COSH     13
#define TR_TANH     14
#define TR_ASINH    15
#define TR_ACOSH    16
#define TR_ATANH    17
#define TR_DEGREES  18
#define TR_RADIANS  19

/* float.c's RADIANS_PER_DEGREE, the same literal */
#define DEV_RADIANS_PER_DEGREE  0.0174532925199432957692
#define DEV_DBL_MIN             2.2250738585072014e-308

/* The host libm's value of `op` (false on the GPU: no bit-identical libm). */
DEVICE_FUNC bool
dev_libm(int op, double x, double y, double *z)
{
#ifdef PGSTROM_GPU_TARGET
    (void) op; (void) x; (void) y; (void) z;
    return false;
#else
    switch (op)
    {
        case TR_CBRT:  *z = dev_cbrt(x); break;
        case TR_EXP:   *z = __builtin_exp(x); break;
        case TR_LN:    *z = __builtin_log(x); break;
        case TR_LOG10: *z = __builtin_log10(x); break;
        case TR_SIN:   *z = __builtin_sin(x); break;
        case TR_COS:   *z = __builtin_cos(x); break;
        case TR_TAN:
        case TR_COT:   *z = __builtin_tan(x); break;
        case TR_ASIN:  *z = __builtin_asin(x); break;
        case TR_ACOS:  *z = __builtin_acos(x); break;
        case TR_ATAN:  *z = __builtin_atan(x); break;
        case TR_ATAN2: *z = __builtin_atan2(x, y); break;
        case TR_SINH:  *z = __builtin_sinh(x); break;
        case TR_COSH:  *z = __builtin_cosh(x); break;
        case TR_TANH:  *z = __builtin_tanh(x); break;
        case TR_ASINH: *z = __builtin_asinh(x); break;
        case TR_ACOSH: *z = __builtin_acosh(x); break;
        default:       *z = __builtin_atanh(x); break;
    }
    return true;
#endif
}

DEVICE_FUNC int32_t
impl_transc(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    double x = a->v.f8, y = b->v.f8, z;

    /* errors and values float.c decides before calling libm */
    switch (op)
    {
        case TR_CBRT:
            if (dev_isnan(x) || dev_isinf(x) || x == 0.0)
            {
                r->v.f8 = x;                    /* cbrt keeps them, -0 too */
                return DEVERR_OK;
            }
            break;
        case TR_EXP:
            if (dev_isnan(x) || x == 0.0)
            {
                r->v.f8 = dev_isnan(x) ? x : 1.0;
                return DEVERR_OK;
            }
            if (dev_isinf(x))
            {
                r->v.f8 = (x > 0.0) ? x : 0.0;
                return DEVERR_OK;
            }
            break;
        case TR_LN:
        case TR_LOG10:
            if (x == 0.0)
                return DEVERR_LOG_ZERO;
            if (x < 0)
                return DEVERR_LOG_NEGATIVE;
            if (dev_isnan(x) || dev_isinf(x) || x == 1.0)
            {
                r->v.f8 = (x == 1.0) ? 0.0 : x;
                return DEVERR_OK;
            }
            break;
        case TR_SIN: case TR_COS: case TR_TAN: case TR_COT:
            if (dev_isnan(x))
            {
                r->v.f8 = dev_nan();
                return DEVERR_OK;
            }
            if (dev_isinf(x))                   /* glibc's EDOM */
                return DEVERR_INPUT_RANGE;
            break;
        case TR_ASIN: case TR_ACOS:
            if (dev_isnan(x))
            {
                r->v.f8 = dev_nan();
                return DEVERR_OK;
            }
            if (x < -1.0 || x > 1.0)
                return DEVERR_INPUT_RANGE;
            break;
        case TR_ATAN:
        case TR_ATAN2:
            if (dev_isnan(x) || (op == TR_ATAN2 && dev_isnan(y)))
            {
                r->v.f8 = dev_nan();
                return DEVERR_OK;
            }
            break;
        case TR_ACOSH:
            if (x < 1.0)
                return DEVERR_INPUT_RANGE;
            break;
        case TR_ATANH:
            if (x < -1.0 || x > 1.0)
                return DEVERR_INPUT_RANGE;
            if (x == -1.0 || x == 1.0)
            {
                r->v.f8 = (x > 0.0) ? dev_inf() : -dev_inf();
                return DEVERR_OK;
            }
            break;
        case TR_DEGREES:                        /* float8_div */
        case TR_RADIANS:                        /* float8_mul */
            z = (op == TR_DEGREES) ? x / DEV_RADIANS_PER_DEGREE : x * DEV_RADIANS_PER_DEGREE;
            if (dev_isinf(z) && !dev_isinf(x))
                return DEVERR_FLOAT_OVERFLOW;
            if (z == 0.0 && x != 0.0)
                return DEVERR_FLOAT_UNDERFLOW;
            r->v.f8 = z;
            return DEVERR_OK;
        default:
            break;
    }
    if (!dev_libm(op, x, y, &z))
        return DEVERR_NEEDS_CPU;
    /* and the checks float.c makes of the value */
    switch (op)
    {
        case TR_CBRT:
        case TR_LN:
        case TR_LOG10:
            if (dev_isinf(z))
                return DEVERR_FLOAT_OVERFLOW;
            if (z == 0.0)
                return DEVERR_FLOAT_UNDERFLOW;
            break;
        case TR_EXP:
        case TR_SINH:
            /*
             * dexp and dsinh read errno, which glibc may set on a subnormal
             * result too (dexp then says "overflow", dsinh returns an
             * infinity): leave those rare rows to PostgreSQL
             */
            if (z != 0.0 && !dev_isinf(z) && !dev_isnan(z) && dev_fabs(z) < DEV_DBL_MIN)
                return DEVERR_NEEDS_CPU;
            if (op == TR_EXP && dev_isinf(z))
                return DEVERR_FLOAT_OVERFLOW;
            if (op == TR_EXP && z == 0.0)
                return DEVERR_FLOAT_UNDERFLOW;
            break;
        case TR_COT:
            z = 1.0 / z;                        /* cot(0) is Infinity, no error */
            break;
        case TR_COSH:
            if (z == 0.0)
                return DEVERR_FLOAT_UNDERFLOW;
            break;
        case TR_SIN: case TR_COS: case TR_ASIN: case TR_ACOS:
        case TR_ATAN: case TR_ATAN2: case TR_TANH:
            if (dev_isinf(z))
                return DEVERR_FLOAT_OVERFLOW;
            break;
        default:                                /* tan, asinh, acosh, atanh */
            break;
    }
    r->v.f8 = z;
    return DEVERR_OK;
}

#define IMPL_CBRT(res, ta, tb)      impl_transc(TR_CBRT, &args[0], &args[0], r)
#define IMPL_EXP(res, ta, tb)       impl_transc(TR_EXP, &args[0], &args[0], r)
#define IMPL_LN(res, ta, tb)        impl_transc(TR_LN, &args[0], &args[0], r)
#define IMPL_LOG10(res, ta, tb)     impl_transc(TR_LOG10, &args[0], &args[0], r)
#define IMPL_SIN(res, ta, tb)       impl_transc(TR_SIN, &args[0], &args[0], r)
#define IMPL_COS(res, ta, tb)       impl_transc(TR_COS, &args[0], &args[0], r)
#define IMPL_TAN(res, ta, tb)       impl_transc(TR_TAN, &args[0], &args[0], r)
#define IMPL_COT(res, ta, tb)       impl_transc(TR_COT, &args[0], &args[0], r)
#define IMPL_ASIN(res, ta, tb)      impl_transc(TR_ASIN, &args[0], &args[0], r)
#define IMPL_ACOS(res, ta, tb)      impl_transc(TR_ACOS, &args[0], &args[0], r)
#define IMPL_ATAN(res, ta, tb)      impl_transc(TR_ATAN, &args[0], &args[0], r)
#define IMPL_ATAN2(res, ta, tb)     impl_transc(TR_ATAN2, &args[0], &args[1], r)
#define IMPL_SINH(res, ta, tb)      impl_transc(TR_SINH, &args[0], &args[0], r)
#define IMPL_COSH(res, ta, tb)      impl_transc(TR_COSH, &args[0], &args[0], r)
#define IMPL_TANH(res, ta, tb)      impl_transc(TR_TANH, &args[0], &args[0], r)
#define IMPL_ASINH(res, ta, tb)     impl_transc(TR_ASINH, &args[0], &args[0], r)
#define IMPL_ACOSH(res, ta, tb)     impl_transc(TR_ACOSH, &args[0], &args[0], r)
#define IMPL_ATANH(res, ta, tb)     impl_transc(TR_ATANH, &args[0], &args[0], r)
#define IMPL_DEGREES(res, ta, tb)   impl_transc(TR_DEGREES, &args[0], &args[0], r)
#define IMPL_RADIANS(res, ta, tb)   impl_transc(TR_RADIANS, &args[0], &args[0], r)

/* ---- trigonometric functions in degrees (float.c) ----------------------- */

/*
 * dsind, dcosd, dtand, dcotd, dasind, dacosd, datand and datan2d, as
 * float.c computes them: the argument reduced to the first quadrant by
 * fmod and reflections, then functions stitched from sin and cos (asin and
 * acos) and scaled by constants so that 0, 30, 45, 60 and 90 degrees (and
 * asind(0.5) = 30, atand(1) = 45 ...) come out exact.  The constants are
 * init_degree_constants' sin_30, one_minus_cos_60, asin_0_5, acos_0_5 and
 * atan_1_0: on the CPU engine the host libm computes them at run time, as
 * PostgreSQL does (their arguments read through volatile, so that the
 * compiler cannot fold them with its own arithmetic).  Its tan_45 and
 * cot_45 are sind_q1(45) / cosd_q1(45) and the inverse, both
 * cosd_0_to_60(45) divided by itself: exactly 1, so dividing by them
 * changes nothing.  On the GPU (no libm with glibc's bits) a value is
 * computed only where it depends on no libm value: sin(+-0) = +-0,
 * cos(0) = 1, asin(+-0) = +-0, acos(1) = 0, atan(+-0) = +-0, atan2(+-0, x)
 * = +-0 for x > 0 or +0, and a function divided by the constant it was
 * computed as (sin(30 * RADIANS_PER_DEGREE) / sin_30 = 1); any other row
 * reports DEVERR_NEEDS_CPU and PostgreSQL evaluates it.
 */
#define DEG_SIND    0
#define DEG_COSD    1
#define DEG_TAND    2
#define DEG_COTD    3
#define DEG_ASIND   4
#define DEG_ACOSD   5
#define DEG_ATAND   6
#define DEG_ATAN2D  7

#ifdef PGSTROM_GPU_TARGET
#define dev_fmod(x, y)  fmod(x, y)              /* exact, as every fmod */
#else
#define dev_fmod(x, y)  __builtin_fmod(x, y)

/* one of init_degree_constants' arguments, unknown to the compiler */
DEVICE_FUNC double
dev_deg_arg(double x)
{
    volatile double v = x;

    return v;
}
#endif

/* sind_0_to_30: sin(x) / sin_30 / 2, exactly 0.5 at 30 degrees; false on
 * the GPU where that needs libm */
DEVICE_FUNC bool
dev_sind_0_to_30(double x, double *z)
{
#ifdef PGSTROM_GPU_TARGET
    if (x == 0.0)
        *z = x;                                 /* sin(+-0) is +-0 */
    else if (x == 30.0)
        *z = 0.5;                               /* sin_30 / sin_30 / 2 */
    else
        return false;
#else
    double sin_x = __builtin_sin(x * DEV_RADIANS_PER_DEGREE);
    double sin_30 = __builtin_sin(dev_deg_arg(30.0) * DEV_RADIANS_PER_DEGREE);

    *z = (sin_x / sin_30) / 2.0;
#endif
    return true;
}

/* cosd_0_to_60: 1 - (1 - cos(x)) / one_minus_cos_60 / 2, exactly 0.5 at
 * 60 degrees */
DEVICE_FUNC bool
dev_cosd_0_to_60(double x, double *z)
{
#ifdef PGSTROM_GPU_TARGET
    if (x == 0.0)
        *z = 1.0;                               /* cos(0) is 1 */
    else if (x == 60.0)
        *z = 0.5;
    else
        return false;
#else
    double one_minus_cos_x = 1.0 - __builtin_cos(x * DEV_RADIANS_PER_DEGREE);
    double one_minus_cos_60 = 1.0 - __builtin_cos(dev_deg_arg(60.0) * DEV_RADIANS_PER_DEGREE);

    *z = 1.0 - (one_minus_cos_x / one_minus_cos_60) / 2.0;
#endif
    return true;
}

/* sind_q1 and cosd_q1: 0 <= x <= 90 */
DEVICE_FUNC bool
dev_sind_q1(double x, double *z)
{
    return x <= 30.0 ? dev_sind_0_to_30(x, z) : dev_cosd_0_to_60(90.0 - x, z);
}

DEVICE_FUNC bool
dev_cosd_q1(double x, double *z)
{
    return x <= 60.0 ? dev_cosd_0_to_60(x, z) : dev_sind_0_to_30(90.0 - x, z);
}

/* asind_q1 (op 0) and acosd_q1 (op 1): 0 <= x <= 1, asin below 0.5 and
 * acos above, each exactly 30 (60) at 0.5 */
DEVICE_FUNC bool
dev_asind_acosd_q1(int op, double x, double *z)
{
#ifdef PGSTROM_GPU_TARGET
    if (x == 0.0)
        *z = op == 0 ? x : 90.0;                /* asin(+-0) is +-0 */
    else if (x == 0.5)
        *z = op == 0 ? 30.0 : 60.0;
    else if (x == 1.0)
        *z = op == 0 ? 90.0 : 0.0;              /* acos(1) is 0 */
    else
        return false;
#else
    if (x <= 0.5)
    {
        double asin_x = __builtin_asin(x);
        double asin_0_5 = __builtin_asin(dev_deg_arg(0.5));

        *z = op == 0 ? (asin_x / asin_0_5) * 30.0 : 90.0 - (asin_x / asin_0_5) * 30.0;
    }
    else
    {
        double acos_x = __builtin_acos(x);
        double acos_0_5 = __builtin_acos(dev_deg_arg(0.5));

        *z = op == 0 ? 90.0 - (acos_x / acos_0_5) * 60.0 : (acos_x / acos_0_5) * 60.0;
    }
#endif
    return true;
}

/* atan2(y, x) (atan(y) when `two` is false) / atan_1_0 * 45 */
DEVICE_FUNC bool
dev_atand(bool two, double y, double x, double *z)
{
#ifdef PGSTROM_GPU_TARGET
    if (y == 0.0 && (!two || x > 0.0 || (x == 0.0 && 1.0 / x > 0.0)))
        *z = y;                                 /* +-0 */
    else if (!two && y == 1.0)
        *z = 45.0;                              /* atan(1) / atan_1_0 * 45 */
    else
        return false;
#else
    double atan_y = two ? __builtin_atan2(y, x) : __builtin_atan(y);
    double atan_1_0 = __builtin_atan(dev_deg_arg(1.0));

    *z = (atan_y / atan_1_0) * 45.0;
#endif
    return true;
}

DEVICE_NOINLINE int32_t
impl_degrees(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    double x = a->v.f8, result = 0.0, s = 0.0, c = 0.0;
    int sign = 1;
    bool known = false;

    /* per POSIX, NaN in is NaN out (before any error) */
    if (dev_isnan(x) || (op == DEG_ATAN2D && dev_isnan(b->v.f8)))
    {
        r->v.f8 = dev_nan();
        return DEVERR_OK;
    }
    switch (op)
    {
        case DEG_ASIND:
        case DEG_ACOSD:
            if (x < -1.0 || x > 1.0)
                return DEVERR_INPUT_RANGE;
            if (x >= 0.0)
                known = dev_asind_acosd_q1(op - DEG_ASIND, x, &result);
            else
            {
                /* asind(-x) = -asind(x), acosd(-x) = 90 + asind(x) */
                known = dev_asind_acosd_q1(0, -x, &s);
                result = op == DEG_ASIND ? -s : 90.0 + s;
            }
            break;
        case DEG_ATAND:
        case DEG_ATAN2D:
            known = dev_atand(op == DEG_ATAN2D, x, b->v.f8, &result);
            break;
        default:
            if (dev_isinf(x))
                return DEVERR_INPUT_RANGE;
            /* reduce the argument to [0, 90] degrees */
            x = dev_fmod(x, 360.0);
            if (x < 0.0)
            {
                x = -x;                         /* cosd(-x) = cosd(x) */
                if (op != DEG_COSD)
                    sign = -sign;
            }
            if (x > 180.0)
            {
                x = 360.0 - x;                  /* cosd(360 - x) = cosd(x) */
                if (op != DEG_COSD)
                    sign = -sign;
            }
            if (x > 90.0)
            {
                x = 180.0 - x;                  /* sind(180 - x) = sind(x) */
                if (op != DEG_SIND)
                    sign = -sign;
            }
            if (op == DEG_SIND)
                known = dev_sind_q1(x, &result);
            else if (op == DEG_COSD)
                known = dev_cosd_q1(x, &result);
            else
            {
                /* tand: sind_q1 / cosd_q1 / tan_45, cotd: cosd_q1 /
                 * sind_q1 / cot_45 (tan_45 and cot_45 are 1) */
                known = dev_sind_q1(x, &s) && dev_cosd_q1(x, &c);
                if (known)
                    result = op == DEG_TAND ? s / c : c / s;
                else if (x == 45.0)
                {
                    result = 1.0;               /* cosd_0_to_60(45) / itself */
                    known = true;
                }
            }
            break;
    }
    if (!known)
        return DEVERR_NEEDS_CPU;
    if (op <= DEG_COTD)
        result = sign * result;
    if (op == DEG_TAND || op == DEG_COTD)
    {
        /* no overflow check: tand(90) is Infinity; and no minus zero */
        if (result == 0.0)
            result = 0.0;
    }
    else if (dev_isinf(result))
        return DEVERR_FLOAT_OVERFLOW;
    r->v.f8 = result;
    return DEVERR_OK;
}

#define IMPL_SIND(res, ta, tb)      impl_degrees(DEG_SIND, &args[0], &args[0], r)
#define IMPL_COSD(res, ta, tb)      impl_degrees(DEG_COSD, &args[0], &args[0], r)
#define IMPL_TAND(res, ta, tb)      impl_degrees(DEG_TAND, &args[0], &args[0], r)
#define IMPL_COTD(res, ta, tb)      impl_degrees(DEG_COTD, &args[0], &args[0], r)
#define IMPL_ASIND(res, ta, tb)     impl_degrees(DEG_ASIND, &args[0], &args[0], r)
#define IMPL_ACOSD(res, ta, tb)     impl_degrees(DEG_ACOSD, &args[0], &args[0], r)
#define IMPL_ATAND(res, ta, tb)     impl_degrees(DEG_ATAND, &args[0], &args[0], r)
#define IMPL_ATAN2D(res, ta, tb)    impl_degrees(DEG_ATAN2D, &args[0], &args[1], r)

/* ---- date arithmetic (date.c) ------------------------------------------- */

#define DEV_DATE_NOT_FINITE(d)  ((d) == (-2147483647 - 1) || (d) == 2147483647)
/* IS_VALID_DATE: DATETIME_MIN_JULIAN .. DATE_END_JULIAN, less the epoch */
#define DEV_DATE_IS_VALID(d)    ((d) >= -2451545LL && (d) < 2145031949LL)

DEVICE_FUNC int32_t
impl_date(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int64_t d = a->v.i;

    if (op == 2)                                /* date_mi */
    {
        if (DEV_DATE_NOT_FINITE(d) || DEV_DATE_NOT_FINITE(b->v.i))
            return DEVERR_INFINITE_DATES;
        r->v.i = (int32_t) (d - b->v.i);
        return DEVERR_OK;
    }
    if (DEV_DATE_NOT_FINITE(d))                 /* can't change infinity */
    {
        r->v.i = d;
        return DEVERR_OK;
    }
    d = (op == 0) ? d + b->v.i : d - b->v.i;
    if (!DEV_DATE_IS_VALID(d))
        return DEVERR_DATE_RANGE;
    r->v.i = d;
    return DEVERR_OK;
}

#define IMPL_SQRT(res, ta, tb)      impl_math(0, &args[0], r)
#define IMPL_FLOOR(res, ta, tb)     impl_math(1, &args[0], r)
#define IMPL_CEIL(res, ta, tb)      impl_math(2, &args[0], r)
#define IMPL_RINT(res, ta, tb)      impl_math(3, &args[0], r)
#define IMPL_TRUNC(res, ta, tb)     impl_math(4, &args[0], r)
#define IMPL_SIGN(res, ta, tb)      impl_math(5, &args[0], r)
#define IMPL_DATE_PLI(res, ta, tb)  impl_date(0, &args[0], &args[1], r)
#define IMPL_DATE_MII(res, ta, tb)  impl_date(1, &args[0], &args[1], r)
#define IMPL_DATE_MI(res, ta, tb)   impl_date(2, &args[0], &args[1], r)

/* ---- numeric (numeric.c) ------------------------------------------------- */

/*
 * A numeric is a 128-bit mantissa of at most 38 decimal digits and a
 * display scale (device_types.def).  Every function below gives exactly
 * numeric.c's value and display scale; a result that would need more than
 * 38 digits, or an argument the device could not hold (NUM_BIG), reports
 * DEVERR_NEEDS_CPU and PostgreSQL evaluates the row.  128-bit division is
 * done here (dev_udivmod128), not by the compiler's runtime.  The
 * functions are not inlined into dev_call: inlined, their 128-bit code
 * tripled the NVRTC build time.
 */
typedef __int128            dev_i128;
typedef unsigned __int128   dev_u128;

#define NUM_NAN     (-1)
#define NUM_PINF    (-2)
#define NUM_NINF    (-3)
#define NUM_BIG     (-4)
#define NUMERIC_DSCALE_MAX          16383
#define NUMERIC_MAX_DISPLAY_SCALE   1000
#define NUMERIC_MIN_SIG_DIGITS      16

/* 10^k for 0 <= k <= 38, by squaring */
DEVICE_FUNC dev_u128
dev_pow10_128(int k)
{
    dev_u128 p = 1, b = 10;

    while (k > 0)
    {
        if (k & 1)
            p *= b;
        b *= b;
        k >>= 1;
    }
    return p;
}

/* the largest mantissa the device holds: 10^38 - 1 */
#define DEV_NUM_LIMIT   ((((dev_u128) 0x4b3b4ca85a86c47aULL) << 64) | (dev_u128) 0x098a223fffffffffULL)

DEVICE_FUNC dev_i128
dev_num_mant(const DevDatum *d)
{
    return (dev_i128) (((dev_u128) (uint64_t) d->hi << 64) | (dev_u128) (uint64_t) d->v.i);
}

DEVICE_FUNC void
dev_num_set(DevDatum *r, dev_i128 m, int32_t scale)
{
    r->v.i = (int64_t) (uint64_t) (dev_u128) m;
    r->hi = (int64_t) (uint64_t) ((dev_u128) m >> 64);
    r->len = scale;
}

DEVICE_FUNC int32_t
dev_num_special(DevDatum *r, int32_t kind)
{
    r->v.i = 0;
    r->hi = 0;
    r->len = kind;
    return DEVERR_OK;
}

/* a finite result: within 38 digits, or the row goes to PostgreSQL */
DEVICE_FUNC int32_t
dev_num_result(DevDatum *r, bool neg, dev_u128 mag, int32_t scale)
{
    if (mag > DEV_NUM_LIMIT || scale > NUMERIC_DSCALE_MAX)
        return DEVERR_NEEDS_CPU;
    dev_num_set(r, neg ? -(dev_i128) mag : (dev_i128) mag, scale);
    return DEVERR_OK;
}

DEVICE_FUNC dev_u128
dev_u128_abs(dev_i128 m)
{
    return m < 0 ? (dev_u128) -m : (dev_u128) m;
}

/* a * b, false when the product passes 128 bits */
DEVICE_FUNC bool
dev_umul128(dev_u128 a, dev_u128 b, dev_u128 *r)
{
    uint64_t ah = (uint64_t) (a >> 64), al = (uint64_t) a;
    uint64_t bh = (uint64_t) (b >> 64), bl = (uint64_t) b;
    dev_u128 lo, cross;

    if (ah != 0 && bh != 0)
        return false;
    lo = (dev_u128) al * bl;
    cross = (dev_u128) ah * bl + (dev_u128) al * bh;    /* one term is 0 */
    if ((cross >> 64) != 0)
        return false;
    *r = lo + (cross << 64);
    return *r >= lo;
}

/* mag * 10^k, false when it passes 128 bits */
DEVICE_FUNC bool
dev_scale_up(dev_u128 mag, int k, dev_u128 *r)
{
    if (mag == 0 || k == 0)
    {
        *r = mag;
        return true;
    }
    if (k > 38)
        return false;
    return dev_umul128(mag, dev_pow10_128(k), r);
}

/* n / d and n % d (d != 0), by 64-bit division when both fit */
DEVICE_NOINLINE void
dev_udivmod128(dev_u128 n, dev_u128 d, dev_u128 *q, dev_u128 *rem)
{
    if ((n >> 64) == 0 && (d >> 64) == 0)
    {
        *q = (uint64_t) n / (uint64_t) d;
        *rem = (uint64_t) n % (uint64_t) d;
        return;
    }
    if (d > n)
    {
        *q = 0;
        *rem = n;
        return;
    }
    dev_u128 quot = 0, r = 0;

    for (int i = 127; i >= 0; i--)
    {
        r = (r << 1) | ((n >> i) & 1);
        if (r >= d)
        {
            r -= d;
            quot |= (dev_u128) 1 << i;
        }
    }
    *q = quot;
    *rem = r;
}

/* mag / 10^k rounded half away from zero (round) or truncated */
DEVICE_FUNC dev_u128
dev_scale_down(dev_u128 mag, int k, bool round)
{
    dev_u128 q, rem, d;

    if (k <= 0)
        return mag;
    if (k > 38)
        return 0;           /* mag < 10^38 <= 10^k / 2 */
    d = dev_pow10_128(k);
    dev_udivmod128(mag, d, &q, &rem);
    if (round && rem >= d - rem)
        q++;
    return q;
}

/* sign class for ordering: -inf < finite < +inf < NaN */
DEVICE_FUNC int
dev_num_class(int32_t kind)
{
    return kind == NUM_NINF ? -1 : kind == NUM_PINF ? 1 : kind == NUM_NAN ? 2 : 0;
}

/* cmp_numerics: NaN equals NaN and sorts above everything */
DEVICE_FUNC int
dev_num_cmp(const DevDatum *a, const DevDatum *b)
{
    int ca = dev_num_class(a->len), cb = dev_num_class(b->len);
    dev_i128 x, y;
    dev_u128 mx, my;
    int sa = a->len, sb = b->len;

    if (ca != 0 || cb != 0)
        return ca < cb ? -1 : (ca > cb ? 1 : 0);
    x = dev_num_mant(a);
    y = dev_num_mant(b);
    {
        int gx = x < 0 ? -1 : (x > 0), gy = y < 0 ? -1 : (y > 0), c;

        if (gx != gy || gx == 0)
            return gx < gy ? -1 : (gx > gy ? 1 : 0);
        /* same sign: compare magnitudes at the larger scale; one that
         * passes 128 bits is the larger (the other has 38 digits) */
        mx = dev_u128_abs(x);
        my = dev_u128_abs(y);
        if (sa < sb && !dev_scale_up(mx, sb - sa, &mx))
            c = 1;
        else if (sb < sa && !dev_scale_up(my, sa - sb, &my))
            c = -1;
        else
            c = mx < my ? -1 : (mx > my ? 1 : 0);
        return gx < 0 ? -c : c;
    }
}

/* numeric comparison for impl_compare (numeric_cmp) */
DEVICE_NOINLINE int32_t
dev_num_compare(const DevDatum *a, const DevDatum *b, int *c)
{
    if (a->len == NUM_BIG || b->len == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    *c = dev_num_cmp(a, b);
    return DEVERR_OK;
}

/* numeric_add / numeric_sub: the larger display scale, exact */
DEVICE_NOINLINE int32_t
impl_num_addsub(bool sub, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (sub && kb == NUM_PINF)
        kb = NUM_NINF;
    else if (sub && kb == NUM_NINF)
        kb = NUM_PINF;
    if (ka < 0 || kb < 0)
    {
        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        if (ka == NUM_PINF || ka == NUM_NINF)
            return dev_num_special(r, (kb >= 0 || kb == ka) ? ka : NUM_NAN);
        return dev_num_special(r, kb);
    }
    {
        int32_t s = ka > kb ? ka : kb;
        dev_i128 x = dev_num_mant(a), y = dev_num_mant(b);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(y);
        dev_i128 z;

        if (!dev_scale_up(mx, s - ka, &mx) || !dev_scale_up(my, s - kb, &my) ||
            mx > DEV_NUM_LIMIT || my > DEV_NUM_LIMIT)
            return DEVERR_NEEDS_CPU;
        z = (x < 0 ? -(dev_i128) mx : (dev_i128) mx) + (((y < 0) != sub) ? -(dev_i128) my : (dev_i128) my);
        return dev_num_result(r, z < 0, dev_u128_abs(z), s);
    }
}

/* numeric_sign_internal of a non-NaN value */
DEVICE_FUNC int
dev_num_sign(const DevDatum *a)
{
    dev_i128 m;

    if (a->len == NUM_PINF)
        return 1;
    if (a->len == NUM_NINF)
        return -1;
    m = dev_num_mant(a);
    return m < 0 ? -1 : (m > 0 ? 1 : 0);
}

/* numeric_mul: the exact product, display scale s1 + s2 */
DEVICE_NOINLINE int32_t
impl_num_mul(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;
    dev_u128 p;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        int s;

        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        s = dev_num_sign(a) * dev_num_sign(b);
        return dev_num_special(r, s == 0 ? NUM_NAN : (s > 0 ? NUM_PINF : NUM_NINF));
    }
    if (!dev_umul128(dev_u128_abs(dev_num_mant(a)), dev_u128_abs(dev_num_mant(b)), &p))
        return DEVERR_NEEDS_CPU;
    return dev_num_result(r, (dev_num_mant(a) < 0) != (dev_num_mant(b) < 0) && p != 0, p, ka + kb);
}

/* The weight (in base-10000 digits) and first base-10000 digit of a
 * finite value, as numeric.c's NumericVar has them (0, 0 for zero). */
DEVICE_NOINLINE void
dev_num_weight(dev_u128 mag, int32_t scale, int *weight, int *first)
{
    int n = 1, e10, w, shift;

    *weight = 0;
    *first = 0;
    if (mag == 0)
        return;
    /* decimal digits of mag (at most 38: it is within DEV_NUM_LIMIT) */
    while (n < 38 && mag >= dev_pow10_128(n))
        n++;
    e10 = n - 1 - scale;
    w = (e10 >= 0) ? e10 / 4 : -((-e10 + 3) / 4);
    shift = scale + 4 * w;
    *weight = w;
    *first = (int) (shift >= 0 ? dev_scale_down(mag, shift, false) : mag * dev_pow10_128(-shift));
}

/* numeric_div: select_div_scale's result scale, rounded half away from
 * zero at it */
DEVICE_NOINLINE int32_t
impl_num_div(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        if (ka == NUM_NAN || kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        if (ka == NUM_PINF || ka == NUM_NINF)
        {
            int s;

            if (kb < 0)
                return dev_num_special(r, NUM_NAN);
            s = dev_num_sign(b);
            if (s == 0)
                return DEVERR_DIVISION_BY_ZERO;
            return dev_num_special(r, (s > 0) == (ka == NUM_PINF) ? NUM_PINF : NUM_NINF);
        }
        /* finite / infinity: zero */
        dev_num_set(r, 0, 0);
        return DEVERR_OK;
    }
    {
        dev_i128 x = dev_num_mant(a), y = dev_num_mant(b);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(y), n, q, rem;
        int w1, f1, w2, f2, qweight, rscale;

        if (my == 0)
            return DEVERR_DIVISION_BY_ZERO;
        dev_num_weight(mx, ka, &w1, &f1);
        dev_num_weight(my, kb, &w2, &f2);
        qweight = w1 - w2;
        if (f1 <= f2)
            qweight--;
        rscale = NUMERIC_MIN_SIG_DIGITS - qweight * 4;
        rscale = rscale > ka ? rscale : ka;
        rscale = rscale > kb ? rscale : kb;
        rscale = rscale > 0 ? rscale : 0;
        rscale = rscale < NUMERIC_MAX_DISPLAY_SCALE ? rscale : NUMERIC_MAX_DISPLAY_SCALE;
        /* x / y at rscale = mx * 10^(rscale - ka + kb) / my */
        if (!dev_scale_up(mx, rscale - ka + kb, &n))
            return DEVERR_NEEDS_CPU;
        dev_udivmod128(n, my, &q, &rem);
        if (rem >= my - rem)
            q++;
        return dev_num_result(r, ((x < 0) != (y < 0)) && q != 0, q, rscale);
    }
}

/* numeric_mod: x - trunc(x / y) * y, display scale max(s1, s2) */
DEVICE_NOINLINE int32_t
impl_num_mod(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t ka = a->len, kb = b->len;

    if (ka == NUM_BIG || kb == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (ka < 0 || kb < 0)
    {
        if (ka < 0)         /* NaN, or infinity % anything */
            return dev_num_special(r, NUM_NAN);
        if (kb == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        *r = *a;            /* finite % infinity */
        return DEVERR_OK;
    }
    {
        int32_t s = ka > kb ? ka : kb;
        dev_i128 x = dev_num_mant(a);
        dev_u128 mx = dev_u128_abs(x), my = dev_u128_abs(dev_num_mant(b)), q, rem;

        if (my == 0)
            return DEVERR_DIVISION_BY_ZERO;
        if (!dev_scale_up(mx, s - ka, &mx) || !dev_scale_up(my, s - kb, &my))
            return DEVERR_NEEDS_CPU;
        dev_udivmod128(mx, my, &q, &rem);
        return dev_num_result(r, x < 0 && rem != 0, rem, s);
    }
}

/* numeric_uminus (op 0), numeric_uplus (1), numeric_abs (2) */
DEVICE_NOINLINE int32_t
impl_num_unary(int op, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k < 0)
    {
        if (k == NUM_NAN || op == 1)
            return dev_num_special(r, k);
        if (op == 2)
            return dev_num_special(r, NUM_PINF);
        return dev_num_special(r, k == NUM_PINF ? NUM_NINF : NUM_PINF);
    }
    m = dev_num_mant(a);
    if (op == 0)
        m = -m;
    else if (op == 2 && m < 0)
        m = -m;
    dev_num_set(r, m, k);
    return DEVERR_OK;
}

/* round(numeric, int) (op 0) and trunc(numeric, int) (op 1): the display
 * scale becomes max(scale, 0); ceil (2), floor (3): scale 0; sign (4) */
DEVICE_NOINLINE int32_t
impl_num_round(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int32_t k = a->len, t;
    dev_i128 m;
    dev_u128 mag, q;
    bool neg;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (op == 4)
    {
        if (k == NUM_NAN)
            return dev_num_special(r, NUM_NAN);
        dev_num_set(r, dev_num_sign(a), 0);
        return DEVERR_OK;
    }
    if (k < 0)
        return dev_num_special(r, k);
    m = dev_num_mant(a);
    neg = m < 0;
    mag = dev_u128_abs(m);
    if (op >= 2)
    {
        bool exact;

        q = dev_scale_down(mag, k, false);
        exact = (k > 38) ? (mag == 0) : (q * dev_pow10_128(k) == mag);
        /* ceil of a positive, floor of a negative non-integer: one more */
        if (!exact && ((op == 2) != neg))
            q++;
        return dev_num_result(r, neg && q != 0, q, 0);
    }
    t = (int32_t) b->v.i;
    if (t > NUMERIC_DSCALE_MAX)
        t = NUMERIC_DSCALE_MAX;
    if (t >= k)
    {
        if (!dev_scale_up(mag, t - k, &q))
            return DEVERR_NEEDS_CPU;
        return dev_num_result(r, neg && q != 0, q, t);
    }
    /* t < k: drop k - t digits (t may be negative: round to tens ...) */
    {
        int64_t drop = (int64_t) k - t;

        q = dev_scale_down(mag, drop > 39 ? 39 : (int) drop, op == 0);
        if (t < 0 && q != 0 && !dev_scale_up(q, -t > 39 ? 39 : -t, &q))
            return DEVERR_NEEDS_CPU;
        return dev_num_result(r, neg && q != 0, q, t > 0 ? t : 0);
    }
}

/* numeric -> int2/int4/int8: rounded half away from zero, then the
 * type's range */
DEVICE_NOINLINE int32_t
impl_num_to_int(int res, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;
    dev_u128 q;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k == NUM_NAN)
        return res == DT_INT2 ? DEVERR_NUMERIC_NAN_INT2
             : res == DT_INT4 ? DEVERR_NUMERIC_NAN_INT4 : DEVERR_NUMERIC_NAN_INT8;
    if (k < 0)
        return res == DT_INT2 ? DEVERR_NUMERIC_INF_INT2
             : res == DT_INT4 ? DEVERR_NUMERIC_INF_INT4 : DEVERR_NUMERIC_INF_INT8;
    m = dev_num_mant(a);
    q = dev_scale_down(dev_u128_abs(m), k, true);
    if (q > ((dev_u128) 1 << 63) || (m >= 0 && q == ((dev_u128) 1 << 63)))
        return dev_int_range_error(res);
    return dev_int_result(res, m < 0 ? (int64_t) -(dev_i128) q : (int64_t) q, r);
}

/* int -> numeric: exact, scale 0 */
DEVICE_FUNC int32_t
impl_int_to_num(const DevDatum *a, DevDatum *r)
{
    dev_num_set(r, (dev_i128) a->v.i, 0);
    return DEVERR_OK;
}

/*
 * numeric -> float8 / float4.  PostgreSQL prints the numeric and reads the
 * text back (a correctly rounded conversion).  When the mantissa and the
 * power of ten are both exact in the float type, one IEEE division is that
 * correctly rounded value; anything else goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_num_to_float(int res, const DevDatum *a, DevDatum *r)
{
    int32_t k = a->len;
    dev_i128 m;
    dev_u128 mag;

    if (k == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    if (k < 0)
    {
        double v = k == NUM_NAN ? dev_nan() : (k == NUM_PINF ? dev_inf() : -dev_inf());

        if (res == DT_FLOAT4)
            r->v.f4 = (float) v;
        else
            r->v.f8 = v;
        return DEVERR_OK;
    }
    m = dev_num_mant(a);
    mag = dev_u128_abs(m);
    if (res == DT_FLOAT4)
    {
        float p = 1.0f;

        if (mag > ((dev_u128) 1 << 24) || k > 10)
            return DEVERR_NEEDS_CPU;
        for (int i = 0; i < k; i++)
            p *= 10.0f;
        r->v.i = 0;
        r->v.f4 = (float) (int64_t) m / p;
    }
    else
    {
        double p = 1.0;

        if (mag > ((dev_u128) 1 << 53) || k > 22)
            return DEVERR_NEEDS_CPU;
        for (int i = 0; i < k; i++)
            p *= 10.0;
        r->v.f8 = (double) (int64_t) m / p;
    }
    return DEVERR_OK;
}

#define IMPL_NUM_ADD(res, ta, tb)       impl_num_addsub(false, &args[0], &args[1], r)
#define IMPL_NUM_SUB(res, ta, tb)       impl_num_addsub(true, &args[0], &args[1], r)
#define IMPL_NUM_MUL(res, ta, tb)       impl_num_mul(&args[0], &args[1], r)
#define IMPL_NUM_DIV(res, ta, tb)       impl_num_div(&args[0], &args[1], r)
#define IMPL_NUM_MOD(res, ta, tb)       impl_num_mod(&args[0], &args[1], r)
#define IMPL_NUM_NEG(res, ta, tb)       impl_num_unary(0, &args[0], r)
#define IMPL_NUM_PLUS(res, ta, tb)      impl_num_unary(1, &args[0], r)
#define IMPL_NUM_ABS(res, ta, tb)       impl_num_unary(2, &args[0], r)
#define IMPL_NUM_ROUND(res, ta, tb)     impl_num_round(0, &args[0], &args[1], r)
#define IMPL_NUM_TRUNC(res, ta, tb)     impl_num_round(1, &args[0], &args[1], r)
#define IMPL_NUM_CEIL(res, ta, tb)      impl_num_round(2, &args[0], &args[0], r)
#define IMPL_NUM_FLOOR(res, ta, tb)     impl_num_round(3, &args[0], &args[0], r)
#define IMPL_NUM_SIGN(res, ta, tb)      impl_num_round(4, &args[0], &args[0], r)
#define IMPL_NUM_TO_INT(res, ta, tb)    impl_num_to_int(res, &args[0], r)
#define IMPL_INT_TO_NUM(res, ta, tb)    impl_int_to_num(&args[0], r)
#define IMPL_NUM_TO_FLOAT(res, ta, tb)  impl_num_to_float(res, &args[0], r)

/* ---- extract / date_part / date_trunc (timestamp.c, date.c) ------------- */

#define DEV_POSTGRES_EPOCH_JDATE    2451545
#define DEV_UNIX_EPOCH_JDATE        2440588
#define DEV_USECS_PER_DAY           86400000000LL
#define DEV_TS_NOT_FINITE(t)        ((t) == DEV_INT64_MIN || (t) == DEV_INT64_MAX)

/* date2j / j2date / j2day of datetime.c (the proleptic Gregorian calendar,
 * astronomical years: 0 is 1 BC) */
DEVICE_FUNC int
dev_date2j(int year, int month, int day)
{
    int julian, century;

    if (month > 2)
    {
        month += 1;
        year += 4800;
    }
    else
    {
        month += 13;
        year += 4799;
    }
    century = year / 100;
    julian = year * 365 - 32167;
    julian += year / 4 - century + century / 4;
    julian += 7834 * month / 256 + day;
    return julian;
}

DEVICE_FUNC void
dev_j2date(int jd, int *year, int *month, int *day)
{
    unsigned int julian = (unsigned int) jd, quad, extra;
    int y;

    julian += 32044;
    quad = julian / 146097;
    extra = (julian - quad * 146097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146097;
    quad = julian / 1461;
    julian -= quad * 1461;
    y = julian * 4 / 1461;
    julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
    y += quad * 4;
    *year = y - 4800;
    quad = julian * 2141 / 65536;
    *day = julian - 7834 * quad / 256;
    *month = (quad + 10) % 12 + 1;
}

DEVICE_FUNC int
dev_j2day(int date)
{
    date += 1;
    date %= 7;
    if (date < 0)
        date += 7;
    return date;
}

/* date2isoweek (op 0) and date2isoyear (op 1) */
DEVICE_FUNC int
dev_iso(int op, int year, int mon, int mday)
{
    int dayn = dev_date2j(year, mon, mday);
    int day4 = dev_date2j(year, 1, 4);
    int day0 = dev_j2day(day4 - 1);
    int week;

    if (dayn < day4 - day0)
    {
        day4 = dev_date2j(year - 1, 1, 4);
        day0 = dev_j2day(day4 - 1);
        year--;
    }
    week = (dayn - (day4 - day0)) / 7 + 1;
    if (week >= 52)
    {
        day4 = dev_date2j(year + 1, 1, 4);
        day0 = dev_j2day(day4 - 1);
        if (dayn >= day4 - day0)
        {
            week = (dayn - (day4 - day0)) / 7 + 1;
            year++;
        }
    }
    return op == 0 ? week : year;
}

/* The units the device knows, by their canonical lower-case names; any
 * other spelling (plurals, abbreviations, upper case) goes to PostgreSQL,
 * whose DecodeUnits accepts many more. */
enum
{
    DU_NONE = 0, DU_MICROSEC, DU_MILLISEC, DU_SECOND, DU_MINUTE, DU_HOUR, DU_DAY,
    DU_WEEK, DU_MONTH, DU_QUARTER, DU_YEAR, DU_DECADE, DU_CENTURY, DU_MILLENNIUM,
    DU_ISOYEAR, DU_DOW, DU_ISODOW, DU_DOY, DU_EPOCH
};

DEVICE_FUNC bool
dev_text_is(const DevDatum *t, const char *s)
{
    const uint8_t *p = (const uint8_t *) t->v.i;
    int32_t i = 0;

    for (; s[i] != 0; i++)
    {
        if (i >= t->len || p[i] != (uint8_t) s[i])
            return false;
    }
    return i == t->len;
}

DEVICE_FUNC int
dev_datetime_unit(const DevDatum *t)
{
    if (dev_text_is(t, "year")) return DU_YEAR;
    if (dev_text_is(t, "month")) return DU_MONTH;
    if (dev_text_is(t, "day")) return DU_DAY;
    if (dev_text_is(t, "hour")) return DU_HOUR;
    if (dev_text_is(t, "minute")) return DU_MINUTE;
    if (dev_text_is(t, "second")) return DU_SECOND;
    if (dev_text_is(t, "quarter")) return DU_QUARTER;
    if (dev_text_is(t, "week")) return DU_WEEK;
    if (dev_text_is(t, "dow")) return DU_DOW;
    if (dev_text_is(t, "isodow")) return DU_ISODOW;
    if (dev_text_is(t, "doy")) return DU_DOY;
    if (dev_text_is(t, "epoch")) return DU_EPOCH;
    if (dev_text_is(t, "decade")) return DU_DECADE;
    if (dev_text_is(t, "century")) return DU_CENTURY;
    if (dev_text_is(t, "millennium")) return DU_MILLENNIUM;
    if (dev_text_is(t, "isoyear")) return DU_ISOYEAR;
    if (dev_text_is(t, "milliseconds")) return DU_MILLISEC;
    if (dev_text_is(t, "microseconds")) return DU_MICROSEC;
    return DU_NONE;
}

/* the year-based units of an astronomical year */
DEVICE_FUNC int64_t
dev_year_unit(int unit, int year)
{
    switch (unit)
    {
        case DU_YEAR: return year > 0 ? year : year - 1;
        case DU_DECADE: return year >= 0 ? year / 10 : -((8 - (year - 1)) / 10);
        case DU_CENTURY: return year > 0 ? (year + 99) / 100 : -((99 - (year - 1)) / 100);
        default: return year > 0 ? (year + 999) / 1000 : -((999 - (year - 1)) / 1000);
    }
}

/* the result of extract (numeric) or date_part (float8): v / 10^scale */
DEVICE_FUNC int32_t
dev_part_result(int res, int64_t v, int scale, DevDatum *r)
{
    if (res == DT_NUMERIC)
    {
        dev_num_set(r, (dev_i128) v, scale);
        return DEVERR_OK;
    }
    r->v.f8 = scale == 0 ? (double) v : (double) v / (scale == 3 ? 1000.0 : 1000000.0);
    return DEVERR_OK;
}

/* A broken-down date and time (timestamp2tm / time2tm / j2date). */
typedef struct
{
    int         year, mon, mday, hour, min, sec;
    int64_t     fsec;
} DevTm;

/* time2tm: a time of day in microseconds */
DEVICE_FUNC void
dev_time2tm(int64_t t, DevTm *tm)
{
    tm->hour = (int) (t / 3600000000LL);
    t -= tm->hour * 3600000000LL;
    tm->min = (int) (t / 60000000LL);
    t -= tm->min * 60000000LL;
    tm->sec = (int) (t / 1000000LL);
    tm->fsec = t - tm->sec * 1000000LL;
}

/* timestamp2tm of a finite timestamp; false where PostgreSQL's fails */
DEVICE_FUNC bool
dev_timestamp2tm(int64_t ts, DevTm *tm)
{
    int64_t date = ts / DEV_USECS_PER_DAY, t, jd;

    t = ts - date * DEV_USECS_PER_DAY;
    if (t < 0)
    {
        t += DEV_USECS_PER_DAY;
        date -= 1;
    }
    jd = date + DEV_POSTGRES_EPOCH_JDATE;
    if (jd < 0 || jd > 2147483647LL)
        return false;
    dev_j2date((int) jd, &tm->year, &tm->mon, &tm->mday);
    dev_time2tm(t, tm);
    return true;
}

/* the monotonic units, ±Infinity at infinite inputs (others are NULL) */
DEVICE_FUNC bool
dev_unit_is_monotonic(int u)
{
    return u == DU_YEAR || u == DU_DECADE || u == DU_CENTURY || u == DU_MILLENNIUM ||
           u == DU_ISOYEAR || u == DU_EPOCH;
}

/*
 * extract(unit FROM date | timestamp | time) (numeric) and date_part(unit,
 * timestamp | time) (float8), as extract_date, timestamp_part_common and
 * time_part_common compute them.  A unit the device does not know, or one
 * PostgreSQL rejects for the type (it raises), goes to PostgreSQL.
 */
DEVICE_NOINLINE int32_t
impl_extract(int res, int type, const DevDatum *unit, const DevDatum *a, DevDatum *r)
{
    int u = dev_datetime_unit(unit);
    int64_t v = a->v.i;
    DevTm tm = {0, 0, 0, 0, 0, 0, 0};

    if (u == DU_NONE || (type == DT_TIME && u > DU_HOUR && u != DU_EPOCH) || (type == DT_DATE && u <= DU_HOUR))
        return DEVERR_NEEDS_CPU;
    if ((type == DT_DATE && DEV_DATE_NOT_FINITE(v)) || (type == DT_TIMESTAMP && DEV_TS_NOT_FINITE(v)))
    {
        if (!dev_unit_is_monotonic(u))
        {
            r->isnull = 1;
            return DEVERR_OK;
        }
        if (res == DT_FLOAT8)
        {
            r->v.f8 = v > 0 ? dev_inf() : -dev_inf();
            return DEVERR_OK;
        }
        return dev_num_special(r, v > 0 ? NUM_PINF : NUM_NINF);
    }
    if (u == DU_EPOCH)
    {
        const int64_t epoch = -946684800000000LL;   /* SetEpochTimestamp */

        if (type == DT_TIME)
            return res == DT_FLOAT8 ? (r->v.f8 = (double) v / 1000000.0, DEVERR_OK) : dev_part_result(res, v, 6, r);
        if (type == DT_DATE)
            return dev_part_result(res, (v + DEV_POSTGRES_EPOCH_JDATE - DEV_UNIX_EPOCH_JDATE) * 86400LL, 0, r);
        if (v < DEV_INT64_MAX + epoch)
            return res == DT_FLOAT8 ? (r->v.f8 = (double) (v - epoch) / 1000000.0, DEVERR_OK)
                                    : dev_part_result(res, v - epoch, 6, r);
        if (res == DT_FLOAT8)
        {
            r->v.f8 = ((double) v - (double) epoch) / 1000000.0;
            return DEVERR_OK;
        }
        dev_num_set(r, (dev_i128) v - epoch, 6);
        return DEVERR_OK;
    }
    if (type == DT_TIME)
        dev_time2tm(v, &tm);
    else if (type == DT_DATE)
        dev_j2date((int) (v + DEV_POSTGRES_EPOCH_JDATE), &tm.year, &tm.mon, &tm.mday);
    else if (!dev_timestamp2tm(v, &tm))
        return DEVERR_NEEDS_CPU;                    /* an error there */
    switch (u)
    {
        case DU_MICROSEC: return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 0, r);
        case DU_MILLISEC:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = tm.sec * 1000.0 + tm.fsec / 1000.0;
                return DEVERR_OK;
            }
            return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 3, r);
        case DU_SECOND:
            if (res == DT_FLOAT8)
            {
                r->v.f8 = tm.sec + tm.fsec / 1000000.0;
                return DEVERR_OK;
            }
            return dev_part_result(res, tm.sec * 1000000LL + tm.fsec, 6, r);
        case DU_MINUTE: return dev_part_result(res, tm.min, 0, r);
        case DU_HOUR: return dev_part_result(res, tm.hour, 0, r);
        case DU_DAY: return dev_part_result(res, tm.mday, 0, r);
        case DU_MONTH: return dev_part_result(res, tm.mon, 0, r);
        case DU_QUARTER: return dev_part_result(res, (tm.mon - 1) / 3 + 1, 0, r);
        case DU_WEEK: return dev_part_result(res, dev_iso(0, tm.year, tm.mon, tm.mday), 0, r);
        case DU_YEAR:
        case DU_DECADE:
        case DU_CENTURY:
        case DU_MILLENNIUM: return dev_part_result(res, dev_year_unit(u, tm.year), 0, r);
        case DU_ISOYEAR:
        {
            int y = dev_iso(1, tm.year, tm.mon, tm.mday);

            return dev_part_result(res, y <= 0 ? y - 1 : y, 0, r);
        }
        case DU_DOW:
        case DU_ISODOW:
        {
            int dow = dev_j2day(dev_date2j(tm.year, tm.mon, tm.mday));

            return dev_part_result(res, (u == DU_ISODOW && dow == 0) ? 7 : dow, 0, r);
        }
        case DU_DOY:
            return dev_part_result(res, dev_date2j(tm.year, tm.mon, tm.mday) - dev_date2j(tm.year, 1, 1) + 1, 0, r);
        default:
            return DEVERR_NEEDS_CPU;
    }
}

/* The fields of a date_trunc to `u` (a unit up to DU_MILLENNIUM), as
 * timestamp_trunc and timestamptz_trunc_internal set them. */
DEVICE_FUNC void
dev_trunc_tm(int u, DevTm *tm)
{
    int year = tm->year, mon = tm->mon, mday = tm->mday;

    switch (u)
    {
        case DU_WEEK:
        {
            int woy = dev_iso(0, year, mon, mday);
            int day4, day0;

            if (woy >= 52 && mon == 1)
                --year;
            if (woy <= 1 && mon == 12)
                ++year;
            day4 = dev_date2j(year, 1, 4);
            day0 = dev_j2day(day4 - 1);
            dev_j2date((woy - 1) * 7 + (day4 - day0), &tm->year, &tm->mon, &tm->mday);
            tm->hour = tm->min = tm->sec = 0;
            tm->fsec = 0;
            return;
        }
        case DU_MILLISEC:
            tm->fsec = (tm->fsec / 1000) * 1000;
            return;
        case DU_MICROSEC:
            return;
        default:
            break;
    }
    if (u == DU_MILLENNIUM)
        year = year > 0 ? ((year + 999) / 1000) * 1000 - 999 : -((999 - (year - 1)) / 1000) * 1000 + 1;
    if (u == DU_MILLENNIUM || u == DU_CENTURY)
        year = year > 0 ? ((year + 99) / 100) * 100 - 99 : -((99 - (year - 1)) / 100) * 100 + 1;
    if (u == DU_DECADE)
        year = year > 0 ? (year / 10) * 10 : -((8 - (year - 1)) / 10) * 10;
    tm->year = year;
    if (u >= DU_YEAR)
        tm->mon = 1;
    if (u >= DU_QUARTER)
        tm->mon = (3 * ((tm->mon - 1) / 3)) + 1;
    if (u >= DU_MONTH)
        tm->mday = 1;
    if (u >= DU_DAY)
        tm->hour = 0;
    if (u >= DU_HOUR)
        tm->min = 0;
    if (u >= DU_MINUTE)
        tm->sec = 0;
    tm->fsec = 0;
}

/* date_trunc(unit, timestamp), as timestamp_trunc */
DEVICE_NOINLINE int32_t
impl_date_trunc(const DevDatum *unit, const DevDatum *a, DevDatum *r)
{
    int u = dev_datetime_unit(unit);
    int64_t ts = a->v.i, days, result;
    DevTm tm;

    /* PostgreSQL checks the unit of an infinite value too */
    if (u == DU_NONE || u > DU_MILLENNIUM)
        return DEVERR_NEEDS_CPU;
    if (DEV_TS_NOT_FINITE(ts))
    {
        r->v.i = ts;
        return DEVERR_OK;
    }
    if (!dev_timestamp2tm(ts, &tm))
        return DEVERR_TIMESTAMP_RANGE;          /* timestamp2tm fails there */
    dev_trunc_tm(u, &tm);
    /* tm2timestamp's final range check (MIN_TIMESTAMP .. END_TIMESTAMP) */
    days = dev_date2j(tm.year, tm.mon, tm.mday) - DEV_POSTGRES_EPOCH_JDATE;
    result = days * DEV_USECS_PER_DAY + ((((int64_t) tm.hour * 60 + tm.min) * 60) + tm.sec) * 1000000LL + tm.fsec;
    if (result < -211813488000000000LL || result >= 9223371331200000000LL)
        return DEVERR_TIMESTAMP_RANGE;
    r->v.i = result;
    return DEVERR_OK;
}

/* date2timestamp */
DEVICE_FUNC int32_t
impl_date_to_ts(const DevDatum *a, DevDatum *r)
{
    int64_t d = a->v.i;

    if (d == (-2147483647 - 1))
        r->v.i = DEV_INT64_MIN;
    else if (d == 2147483647)
        r->v.i = DEV_INT64_MAX;
    else if (d >= 106751983LL)              /* TIMESTAMP_END_JULIAN - epoch */
        return DEVERR_DATE_TS_RANGE;
    else
        r->v.i = d * DEV_USECS_PER_DAY;
    return DEVERR_OK;
}

/* day_tab: the days of month `mon` of astronomical year `year` */
DEVICE_FUNC int
dev_days_in_month(int64_t year, int64_t mon)
{
    bool leap = (year % 4) == 0 && ((year % 100) != 0 || (year % 400) == 0);

    if (mon == 2)
        return leap ? 29 : 28;
    return (mon == 4 || mon == 6 || mon == 9 || mon == 11) ? 30 : 31;
}

/*
 * make_date(year, month, day): a negative year is BC.  Where PostgreSQL
 * raises an error (its message shows the fields), the row is left to it.
 */
DEVICE_FUNC int32_t
impl_make_date(const DevDatum *args, DevDatum *r)
{
    int64_t y = args[0].v.i, m = args[1].v.i, d = args[2].v.i, date;

    if (y == 0 || y == -2147483647LL - 1 || m < 1 || m > 12 || d < 1 || d > 31)
        return DEVERR_NEEDS_CPU;
    if (y < 0)
        y = y + 1;                          /* 1 BC is year 0 */
    /* the day of the month, then IS_VALID_JULIAN and IS_VALID_DATE */
    if (d > dev_days_in_month(y, m) || !((y > -4713 || (y == -4713 && m >= 11)) && (y < 5874898 || (y == 5874898 && m < 6))))
        return DEVERR_NEEDS_CPU;
    date = (int64_t) dev_date2j((int) y, (int) m, (int) d) - DEV_POSTGRES_EPOCH_JDATE;
    if (date < -DEV_POSTGRES_EPOCH_JDATE || date >= 2147483494LL - DEV_POSTGRES_EPOCH_JDATE)
        return DEVERR_NEEDS_CPU;
    r->v.i = date;
    return DEVERR_OK;
}

#define IMPL_MAKE_DATE(res, ta, tb)     impl_make_date(args, r)
#define IMPL_DATE_TO_TS(res, ta, tb)    impl_date_to_ts(&args[0], r)
#define IMPL_EXTRACT(res, ta, tb)       impl_extract(res, tb, &args[0], &args[1], r)
#define IMPL_DATE_TRUNC(res, ta, tb)    impl_date_trunc(&args[0], &args[1], r)

/* ---- text and bpchar ---------------------------------------------------- */

/* Byte-order comparison (memcmp, then length), as varstr_cmp under C. */
DEVICE_FUNC int
dev_text_cmp(const DevDatum *a, const DevDatum *b)
{
    const uint8_t *x = (const uint8_t *) a->v.i;
    const uint8_t *y = (const uint8_t *) b->v.i;
    int32_t n = a->len < b->len ? a->len : b->len;

    for (int32_t i = 0; i < n; i++)
    {
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    }
    return a->len < b->len ? -1 : (a->len > b->len ? 1 : 0);
}

/* Length of a bpchar value without its trailing blanks (bcTruelen). */
DEVICE_FUNC int32_t
dev_bpchar_truelen(const DevDatum *a)
{
    const uint8_t *x = (const uint8_t *) a->v.i;
    int32_t n = a->len;

    while (n > 0 && x[n - 1] == ' ')
        n--;
    return n;
}

/* Characters in valid UTF-8: bytes that do not continue a sequence. */
DEVICE_FUNC int32_t
dev_utf8_chars(const uint8_t *x, int32_t n)
{
    int32_t count = 0;

    for (int32_t i = 0; i < n; i++)
        count += ((x[i] & 0xC0) != 0x80);
    return count;
}

DEVICE_FUNC int32_t
impl_text(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    switch (op)
    {
        case 0: r->v.i = (a->len == b->len && dev_text_cmp(a, b) == 0); break;
        case 1: r->v.i = !(a->len == b->len && dev_text_cmp(a, b) == 0); break;
        case 2: r->v.i = dev_text_cmp(a, b) < 0; break;
        case 3: r->v.i = dev_text_cmp(a, b) <= 0; break;
        case 4: r->v.i = dev_text_cmp(a, b) > 0; break;
        case 5: r->v.i = dev_text_cmp(a, b) >= 0; break;
        case 6:
        case 7:
        {
            DevDatum x = *a, y = *b;
            bool eq;

            x.len = dev_bpchar_truelen(a);
            y.len = dev_bpchar_truelen(b);
            eq = (x.len == y.len && dev_text_cmp(&x, &y) == 0);
            r->v.i = (op == 6) ? eq : !eq;
            break;
        }
        case 8: r->v.i = dev_utf8_chars((const uint8_t *) a->v.i, a->len); break;
        case 9: r->v.i = a->len; break;
        default: r->v.i = dev_utf8_chars((const uint8_t *) a->v.i, dev_bpchar_truelen(a)); break;
    }
    return DEVERR_OK;
}

/*
 * LIKE, as like_match.c's MatchText for UTF-8: byte comparison, '_' takes
 * one character, '%' any run, '\\' escapes, and the same lazily raised
 * error for a pattern ending in an escape.  PostgreSQL recurses at each
 * '%'; here the suspended '%' loops live in an explicit stack of
 * PGSTROM_LIKE_DEPTH frames.
 */
#define PGSTROM_LIKE_DEPTH  16
#define LIKE_TRUE   1
#define LIKE_FALSE  0
#define LIKE_ABORT  (-1)

DEVICE_FUNC void
dev_utf8_next(const uint8_t **p, int32_t *len)
{
    do
    {
        (*p)++;
        (*len)--;
    } while (*len > 0 && (**p & 0xC0) == 0x80);
}

DEVICE_FUNC void
dev_like_next(const uint8_t **p, int32_t *len, bool bytes)
{
    if (bytes)
    {
        (*p)++;
        (*len)--;
    }
    else
        dev_utf8_next(p, len);
}

/* a pattern or text byte as ILIKE compares it */
DEVICE_FUNC uint8_t
dev_like_fold(uint8_t c, bool fold)
{
    return (fold && c >= 'A' && c <= 'Z') ? (uint8_t) (c + 32) : c;
}

/* `bytes`: '_' takes one byte (bytea), not one UTF-8 character; `fold`:
 * ASCII letters compare case-insensitively (ILIKE over ASCII text, as
 * PostgreSQL's LIKE over both strings lowered) */
DEVICE_NOINLINE int32_t
dev_like(const uint8_t *t, int32_t tlen, const uint8_t *p, int32_t plen, bool bytes, bool fold, int *result)
{
    struct
    {
        const uint8_t *t;
        const uint8_t *p;
        int32_t     tlen;
        int32_t     plen;
        uint8_t     firstpat;
    } frames[PGSTROM_LIKE_DEPTH];
    int         depth = 0;
    int         res;

call:
    /* the body of MatchText(t, tlen, p, plen) */
    if (plen == 1 && *p == '%')
    {
        res = LIKE_TRUE;
        goto ret;
    }
    while (tlen > 0 && plen > 0)
    {
        if (*p == '\\')
        {
            p++;
            plen--;
            if (plen <= 0)
                return DEVERR_LIKE_ESCAPE;
            if (dev_like_fold(*p, fold) != dev_like_fold(*t, fold))
            {
                res = LIKE_FALSE;
                goto ret;
            }
        }
        else if (*p == '%')
        {
            uint8_t firstpat;

            p++;
            plen--;
            while (plen > 0)
            {
                if (*p == '%')
                {
                    p++;
                    plen--;
                }
                else if (*p == '_')
                {
                    if (tlen <= 0)
                    {
                        res = LIKE_ABORT;
                        goto ret;
                    }
                    dev_like_next(&t, &tlen, bytes);
                    p++;
                    plen--;
                }
                else
                    break;
            }
            if (plen <= 0)
            {
                res = LIKE_TRUE;
                goto ret;
            }
            if (*p == '\\')
            {
                if (plen < 2)
                    return DEVERR_LIKE_ESCAPE;
                firstpat = dev_like_fold(p[1], fold);
            }
            else
                firstpat = dev_like_fold(*p, fold);
            if (depth >= PGSTROM_LIKE_DEPTH)
                return DEVERR_LIKE_TOO_COMPLEX;
            frames[depth].t = t;
            frames[depth].tlen = tlen;
            frames[depth].p = p;
            frames[depth].plen = plen;
            frames[depth].firstpat = firstpat;
            depth++;
            goto scan;
        }
        else if (*p == '_')
        {
            dev_like_next(&t, &tlen, bytes);
            p++;
            plen--;
            continue;
        }
        else if (dev_like_fold(*p, fold) != dev_like_fold(*t, fold))
        {
            res = LIKE_FALSE;
            goto ret;
        }
        t++;
        tlen--;
        p++;
        plen--;
    }
    if (tlen > 0)
    {
        res = LIKE_FALSE;
        goto ret;
    }
    while (plen > 0 && *p == '%')
    {
        p++;
        plen--;
    }
    res = (plen <= 0) ? LIKE_TRUE : LIKE_ABORT;
    goto ret;

scan:
    /* the '%' loop of the top frame: try each position whose first byte
     * matches the pattern's next literal */
    while (frames[depth - 1].tlen > 0)
    {
        if (dev_like_fold(*frames[depth - 1].t, fold) == frames[depth - 1].firstpat)
        {
            t = frames[depth - 1].t;
            tlen = frames[depth - 1].tlen;
            p = frames[depth - 1].p;
            plen = frames[depth - 1].plen;
            goto call;
        }
        dev_like_next(&frames[depth - 1].t, &frames[depth - 1].tlen, bytes);
    }
    depth--;
    res = LIKE_ABORT;

ret:
    if (depth == 0)
    {
        *result = res;
        return DEVERR_OK;
    }
    if (res != LIKE_FALSE)
    {
        /* the frame returns what its recursive call returned */
        depth--;
        goto ret;
    }
    dev_like_next(&frames[depth - 1].t, &frames[depth - 1].tlen, bytes);
    goto scan;
}

/* LIKE / NOT LIKE of text (UTF-8 characters) or, `bytes`, bytea */
DEVICE_FUNC int32_t
impl_like(bool negate, bool bytes, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int res = LIKE_FALSE;
    int32_t rc = dev_like((const uint8_t *) a->v.i, a->len, (const uint8_t *) b->v.i, b->len, bytes, false, &res);

    if (rc != DEVERR_OK)
        return rc;
    r->v.i = negate ? (res != LIKE_TRUE) : (res == LIKE_TRUE);
    return DEVERR_OK;
}

/* strpos / position: 1-based character position of the first match, 0
 * if none, 1 for an empty needle (varlena.c text_position) */
DEVICE_FUNC int32_t
impl_strpos(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    const uint8_t *h = (const uint8_t *) a->v.i;
    const uint8_t *n = (const uint8_t *) b->v.i;

    r->v.i = 0;
    if (b->len < 1)
    {
        r->v.i = 1;
        return DEVERR_OK;
    }
    for (int32_t i = 0; i + b->len <= a->len; i++)
    {
        int32_t k = 0;

        while (k < b->len && h[i + k] == n[k])
            k++;
        if (k == b->len)
        {
            r->v.i = dev_utf8_chars(h, i) + 1;
            break;
        }
    }
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_starts_with(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    DevDatum prefix = *a;

    if (a->len < b->len)
    {
        r->v.i = 0;
        return DEVERR_OK;
    }
    prefix.len = b->len;
    r->v.i = (dev_text_cmp(&prefix, b) == 0);
    return DEVERR_OK;
}

#define IMPL_STRPOS(res, ta, tb)        impl_strpos(&args[0], &args[1], r)
#define IMPL_STARTS_WITH(res, ta, tb)   impl_starts_with(&args[0], &args[1], r)
#define IMPL_LIKE(res, ta, tb)          impl_like(false, false, &args[0], &args[1], r)
#define IMPL_NOT_LIKE(res, ta, tb)      impl_like(true, false, &args[0], &args[1], r)

#define IMPL_TEXT_EQ(res, ta, tb)       impl_text(0, &args[0], &args[1], r)
#define IMPL_TEXT_NE(res, ta, tb)       impl_text(1, &args[0], &args[1], r)
#define IMPL_TEXT_LT(res, ta, tb)       impl_text(2, &args[0], &args[1], r)
#define IMPL_TEXT_LE(res, ta, tb)       impl_text(3, &args[0], &args[1], r)
#define IMPL_TEXT_GT(res, ta, tb)       impl_text(4, &args[0], &args[1], r)
#define IMPL_TEXT_GE(res, ta, tb)       impl_text(5, &args[0], &args[1], r)
#define IMPL_BPCHAR_EQ(res, ta, tb)     impl_text(6, &args[0], &args[1], r)
#define IMPL_BPCHAR_NE(res, ta, tb)     impl_text(7, &args[0], &args[1], r)
#define IMPL_TEXT_LENGTH(res, ta, tb)   impl_text(8, &args[0], &args[0], r)
#define IMPL_OCTET_LENGTH(res, ta, tb)  impl_text(9, &args[0], &args[0], r)
#define IMPL_BPCHAR_LENGTH(res, ta, tb) impl_text(10, &args[0], &args[0], r)

#define IMPL_INT_ADD(res, ta, tb)  impl_int_arith(0, res, &args[0], &args[1], r)
#define IMPL_INT_SUB(res, ta, tb)  impl_int_arith(1, res, &args[0], &args[1], r)
#define IMPL_INT_MUL(res, ta, tb)  impl_int_arith(2, res, &args[0], &args[1], r)
#define IMPL_INT_DIV(res, ta, tb)  impl_int_arith(3, res, &args[0], &args[1], r)
#define IMPL_INT_MOD(res, ta, tb)  impl_int_mod(&args[0], &args[1], r)
#define IMPL_FLT_ADD(res, ta, tb)  impl_flt_arith(0, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_SUB(res, ta, tb)  impl_flt_arith(1, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_MUL(res, ta, tb)  impl_flt_arith(2, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_DIV(res, ta, tb)  impl_flt_arith(3, res, ta, tb, &args[0], &args[1], r)
#include "device_wide.h"
#include "device_casts.h"
#include "device_strings.h"
#include "device_tz.h"

#define IMPL_CMP_EQ(res, ta, tb)   impl_compare(0, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_NE(res, ta, tb)   impl_compare(1, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_LT(res, ta, tb)   impl_compare(2, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_LE(res, ta, tb)   impl_compare(3, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_GT(res, ta, tb)   impl_compare(4, ta, tb, &args[0], &args[1], r)
#define IMPL_CMP_GE(res, ta, tb)   impl_compare(5, ta, tb, &args[0], &args[1], r)
#define IMPL_NEG(res, ta, tb)      impl_neg(res, &args[0], r)
#define IMPL_ABS(res, ta, tb)      impl_abs(res, &args[0], r)
#define IMPL_CAST_INT(res, ta, tb) dev_int_result(res, args[0].v.i, r)
#define IMPL_CAST_I2F(res, ta, tb) impl_cast_i2f(res, &args[0], r)
#define IMPL_CAST_F2I(res, ta, tb) impl_cast_f2i(res, ta, &args[0], r)
#define IMPL_CAST_F2F(res, ta, tb) impl_cast_f2f(res, &args[0], r)
/* float2 -> float4: the float it is held as */
#define IMPL_FLOAT2_TO_FLOAT4(res, ta, tb) (r->v.f4 = args[0].v.f4, DEVERR_OK)

/* Number of arguments of each function, by id (index 0 unused). */
DEVICE_FUNC int
dev_func_nargs(int32_t fid)
{
    switch (fid)
    {
#define DEVFUNC(id, pgf, res, nargs, a1, a2, a3, impl, label) case FUNC_##id: return nargs;
#include "device_functions.def"
#undef DEVFUNC
        default:
            return -1;
    }
}

/*
 * Call a strict function on non-NULL arguments.  Every catalog function is
 * strict: the interpreter returns NULL for a NULL argument without calling.
 * `scratch` is the row's memory for text results that are not a part of
 * an argument (lower, upper, ||); NULL where none is needed.
 */
DEVICE_NOINLINE int32_t
dev_call(int32_t fid, const DevDatum *args, DevDatum *r, DevScratch *scratch)
{
    r->isnull = 0;
    r->len = 0;
    r->v.i = 0;
    r->hi = 0;
    switch (fid)
    {
#define DEVFUNC(id, pgf, res, nargs, a1, a2, a3, impl, label) \
        case FUNC_##id: return impl(DT_##res, DT_##a1, DT_##a2);
#include "device_functions.def"
#undef DEVFUNC
        default:
            return DEVERR_INVALID_PROGRAM;
    }
}

/* A little-endian integer of `n` bytes at any alignment. */
DEVICE_FUNC int64_t
dev_load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return (int64_t) v;
}

/* A numeric's 24 bytes (device_types.def) into a datum. */
DEVICE_FUNC void
dev_load_numeric(const uint8_t *p, DevDatum *d)
{
    d->v.i = dev_load_le(p, 8);
    d->hi = dev_load_le(p + 8, 8);
    d->len = (int32_t) dev_load_le(p + 16, 4);
}

/* A uuid, interval or timetz's bytes (device_types.def) into a datum. */
DEVICE_FUNC void
dev_load_wide(int type, const uint8_t *p, DevDatum *d)
{
    d->v.i = dev_load_le(p, 8);
    d->hi = dev_load_le(p + 8, type == DT_TIMETZ ? 4 : 8);
    if (type == DT_TIMETZ)
        d->hi = (int32_t) d->hi;            /* the zone, sign-extended */
    d->len = 0;
}

/* Bytes of a column value of a fixed-width type passed by reference
 * (uuid, interval, timetz), 0 for the others. */
DEVICE_FUNC int
dev_wide_width(int type)
{
    return type == DT_UUID || type == DT_INTERVAL ? 16 : (type == DT_TIMETZ ? 12 : 0);
}

/* Load row `row` of a column into a datum. */
DEVICE_FUNC void
dev_load_column(const DevColumn *col, uint32_t row, DevDatum *d)
{
    d->len = 0;
    d->hi = 0;
    if (!pgstrom_row_is_valid(col->validity, row))
    {
        d->isnull = 1;
        d->v.i = 0;
        return;
    }
    d->isnull = 0;
    switch (col->type)
    {
        case DT_TEXT:
        case DT_BPCHAR:
        case DT_BYTEA:
            d->v.i = (int64_t) ((const uint8_t *) col->values + col->offsets[row]);
            d->len = (int32_t) (col->offsets[row + 1] - col->offsets[row]);
            break;
        case DT_BOOL: d->v.i = ((const uint8_t *) col->values)[row] != 0; break;
        case DT_INT2: d->v.i = ((const int16_t *) col->values)[row]; break;
        case DT_INT4:
        case DT_DATE: d->v.i = ((const int32_t *) col->values)[row]; break;
        case DT_FLOAT4: d->v.i = 0; d->v.f4 = ((const float *) col->values)[row]; break;
        case DT_FLOAT2: d->v.i = 0; d->v.f4 = dev_half_to_float(((const uint16_t *) col->values)[row]); break;
        case DT_FLOAT8: d->v.f8 = ((const double *) col->values)[row]; break;
        case DT_NUMERIC: dev_load_numeric((const uint8_t *) col->values + (uint64_t) row * 24, d); break;
        case DT_UUID:
        case DT_INTERVAL:
        case DT_TIMETZ:
            dev_load_wide((int) col->type,
                          (const uint8_t *) col->values + (uint64_t) row * dev_wide_width((int) col->type), d);
            break;
        default: d->v.i = ((const int64_t *) col->values)[row]; break;
    }
}

/* The order of a sorted constant set: integers and date/time types by
 * value, floats as float8 with NaN last and -0 = 0, text by its bytes,
 * bpchar without trailing blanks (as equality sees them). */
DEVICE_FUNC int
dev_set_cmp(int type, const DevDatum *a, const DevDatum *b)
{
    switch (type)
    {
        case DT_FLOAT4:
        case DT_FLOAT8:
            return pgstrom_cmp3(dev_as_f8(type, a), dev_as_f8(type, b));
        case DT_TEXT:
            return dev_text_cmp(a, b);
        case DT_BPCHAR:
        {
            DevDatum x = *a, y = *b;

            x.len = dev_bpchar_truelen(a);
            y.len = dev_bpchar_truelen(b);
            return dev_text_cmp(&x, &y);
        }
        default:
            return pgstrom_cmp3(a->v.i, b->v.i);
    }
}

/*
 * OP_IN_SORTED on a non-NULL value x: TRUE / FALSE / NULL as PostgreSQL's
 * ScalarArrayOpExpr gives for = ANY / <> ALL over the set's elements.
 */
DEVICE_NOINLINE int32_t
dev_in_sorted(const DevInstr *in, const uint8_t *data, DevDatum *x)
{
    const uint8_t *set = data + in->imm;
    uint32_t    n = (uint32_t) dev_load_le(set, 4);
    uint32_t    flags = (uint32_t) dev_load_le(set + 4, 4);
    bool        any = (flags & DEV_INSET_ANY) != 0;
    bool        found = false;
    int64_t     lo = 0, hi = (int64_t) n - 1;

    while (lo <= hi)
    {
        int64_t     mid = (lo + hi) / 2;
        const uint8_t *p = set + 8 + mid * 8;
        DevDatum    e;
        int         c;

        e.isnull = 0;
        e.hi = 0;
        e.len = 0;
        if (in->type == DT_TEXT || in->type == DT_BPCHAR)
        {
            e.v.i = (int64_t) (data + dev_load_le(p, 4));
            e.len = (int32_t) dev_load_le(p + 4, 4);
        }
        else
            e.v.i = dev_load_le(p, 8);
        c = dev_set_cmp(in->type, x, &e);
        if (c == 0)
        {
            DevDatum args[2], out;
            int32_t rc;

            args[0] = *x;
            args[1] = e;
            rc = dev_call(in->arg, args, &out, 0);
            if (rc != DEVERR_OK)
                return rc;
            /* = true (ANY) or <> false (ALL): the element matches */
            found = (out.v.i != 0) == any;
            break;
        }
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    x->hi = 0;
    x->len = 0;
    if (found)
        x->v.i = any;
    else if (flags & DEV_INSET_HAS_NULL)
    {
        x->isnull = 1;
        x->v.i = 0;
    }
    else
        x->v.i = !any;
    return DEVERR_OK;
}

/*
 * Where a text / bpchar / bytea result's bytes lie, for a caller that
 * reads them back (pgstrom.device_eval): *source 0 is the program's data
 * section, k + 1 the variable-length column k (rows of source 0, nrows of
 * them); *offset counts from its start.
 */
DEVICE_FUNC void
dev_varlena_ref(const DevDatum *r, const uint8_t *data, const DevColumn *cols, uint32_t ncols,
                uint32_t nrows, int64_t *source, int64_t *offset)
{
    const uint8_t *p = (const uint8_t *) r->v.i;

    for (uint32_t k = 0; k < ncols; k++)
    {
        const uint8_t *base = (const uint8_t *) cols[k].values;

        if (cols[k].offsets && cols[k].source == 0 && p >= base && p + r->len <= base + cols[k].offsets[nrows])
        {
            *source = k + 1;
            *offset = p - base;
            return;
        }
    }
    *source = 0;
    *offset = p - data;
}

DEVICE_FUNC bool
dev_is_varlena_type(uint32_t t)
{
    return t == DT_TEXT || t == DT_BPCHAR || t == DT_BYTEA;
}

DEVICE_FUNC bool
dev_is_true(const DevDatum *d)
{
    return !d->isnull && d->v.i != 0;
}

/*
 * Evaluate `code` (ninstrs instructions, already validated on the host)
 * for one row.  On success *result holds the value (or NULL).  Text that
 * lower, upper or || make lies in *scratch (the caller's), so a caller
 * that returns text results can copy it out before the next row.
 */
DEVICE_FUNC int32_t
dev_eval_row_in(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
                const DevColumn *cols, uint32_t ncols,
                const DevDatum *params, uint32_t nparams,
                const uint32_t *rows, DevDatum *result, DevScratch *scratch)
{
    DevDatum    stack[PGSTROM_MAX_STACK];
    DevDatum    locals[PGSTROM_MAX_LOCALS];
    int         sp = 0;             /* number of values on the stack */
    uint32_t    nlocals = 0;        /* slots below this have been cleared */
    uint32_t    pc = 0;
    uint32_t    steps = 0;

    scratch->used = 0;
    while (pc < ninstrs)
    {
        const DevInstr *in = &code[pc++];

        /* programs only jump forward, so this bounds any loop a broken
         * program could make */
        if (++steps > ninstrs)
            return DEVERR_INVALID_PROGRAM;
        switch (in->op)
        {
            case OP_VAR:
            {
                const DevColumn *col;
                uint32_t    row;

                if (sp >= PGSTROM_MAX_STACK || in->arg < 0 || (uint32_t) in->arg >= ncols)
                    return DEVERR_INVALID_PROGRAM;
                col = &cols[in->arg];
                if (col->source >= PGSTROM_MAX_SOURCES)
                    return DEVERR_INVALID_PROGRAM;
                row = rows[col->source];
                if (row == PGSTROM_NULL_ROW)
                {
                    stack[sp].isnull = 1;
                    stack[sp].len = 0;
                    stack[sp++].v.i = 0;
                }
                else
                    dev_load_column(col, row, &stack[sp++]);
                break;
            }
            case OP_CONST:
                if (sp >= PGSTROM_MAX_STACK)
                    return DEVERR_INVALID_PROGRAM;
                stack[sp].hi = 0;
                if (in->type == DT_TEXT || in->type == DT_BPCHAR || in->type == DT_BYTEA || in->type == DT_TZTAB)
                {
                    /* the host checked imm + arg against data_len (and
                     * a time zone table's layout) */
                    stack[sp].v.i = (int64_t) (data + in->imm);
                    stack[sp].len = in->arg;
                }
                else if (in->type == DT_NUMERIC)
                {
                    /* the host checked that 24 bytes lie there */
                    if (in->arg != 24)
                        return DEVERR_INVALID_PROGRAM;
                    dev_load_numeric(data + in->imm, &stack[sp]);
                }
                else if (dev_wide_width(in->type) != 0)
                {
                    /* the host checked the width and the bounds */
                    if (in->arg != dev_wide_width(in->type))
                        return DEVERR_INVALID_PROGRAM;
                    dev_load_wide(in->type, data + in->imm, &stack[sp]);
                }
                else
                {
                    stack[sp].v.i = in->imm;
                    stack[sp].len = 0;
                }
                stack[sp].isnull = 0;
                sp++;
                break;
            case OP_NULL:
                if (sp >= PGSTROM_MAX_STACK)
                    return DEVERR_INVALID_PROGRAM;
                stack[sp].v.i = 0;
                stack[sp].isnull = 1;
                sp++;
                break;
            case OP_PARAM:
                if (sp >= PGSTROM_MAX_STACK || in->arg < 0 || (uint32_t) in->arg >= nparams)
                    return DEVERR_INVALID_PROGRAM;
                /* its evaluation on the CPU raised an error: PostgreSQL
                 * decides whether this row reaches it */
                if (params[in->arg].isnull == 2)
                    return DEVERR_NEEDS_CPU;
                stack[sp++] = params[in->arg];
                break;
            case OP_FUNC:
            {
                int nargs = dev_func_nargs(in->arg);
                bool anynull = false;

                if (nargs < 1 || nargs > sp)
                    return DEVERR_INVALID_PROGRAM;
                for (int i = sp - nargs; i < sp; i++)
                    anynull |= (stack[i].isnull != 0);
                sp -= nargs;
                if (anynull)
                {
                    stack[sp].isnull = 1;
                    stack[sp].v.i = 0;
                }
                else
                {
                    DevDatum args[3];
                    DevDatum out;
                    int32_t rc;

                    for (int i = 0; i < nargs && i < 3; i++)
                        args[i] = stack[sp + i];
                    rc = dev_call(in->arg, args, &out, scratch);
                    if (rc != DEVERR_OK)
                        return rc;
                    stack[sp] = out;
                }
                sp++;
                break;
            }
            case OP_JUMP:
            case OP_JUMP_IF_FALSE_KEEP:
            case OP_JUMP_IF_TRUE_KEEP:
            case OP_JUMP_IF_NOT_TRUE:
            case OP_JUMP_IF_NOT_NULL_KEEP:
            {
                bool jump;

                if ((uint32_t) in->arg <= pc - 1 || (uint32_t) in->arg > ninstrs)
                    return DEVERR_INVALID_PROGRAM;
                if (in->op != OP_JUMP && sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                switch (in->op)
                {
                    case OP_JUMP: jump = true; break;
                    case OP_JUMP_IF_FALSE_KEEP:
                        jump = !stack[sp - 1].isnull && stack[sp - 1].v.i == 0;
                        break;
                    case OP_JUMP_IF_TRUE_KEEP:
                        jump = dev_is_true(&stack[sp - 1]);
                        break;
                    case OP_JUMP_IF_NOT_TRUE:
                        jump = !dev_is_true(&stack[sp - 1]);
                        sp--;
                        break;
                    default:
                        jump = !stack[sp - 1].isnull;
                        break;
                }
                if (jump)
                    pc = (uint32_t) in->arg;
                break;
            }
            case OP_DISTINCT:
            {
                DevDatum *a, *b;
                bool distinct;

                if (sp < 2 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                if (a->isnull || b->isnull)
                    distinct = (a->isnull != b->isnull);
                else
                {
                    DevDatum args[2];
                    DevDatum out;
                    int32_t rc;

                    args[0] = *a;
                    args[1] = *b;
                    rc = dev_call(in->arg, args, &out, 0);
                    if (rc != DEVERR_OK)
                        return rc;
                    distinct = (out.v.i == 0);
                }
                a->isnull = 0;
                a->v.i = distinct;
                sp--;
                break;
            }
            case OP_STORE_LOCAL:
            case OP_LOAD_LOCAL:
                if (in->arg < 0 || in->arg >= PGSTROM_MAX_LOCALS)
                    return DEVERR_INVALID_PROGRAM;
                /* clear slots on first touch: a load never reads garbage */
                while (nlocals <= (uint32_t) in->arg)
                {
                    locals[nlocals].v.i = 0;
                    locals[nlocals].isnull = 1;
                    locals[nlocals].len = 0;
                    nlocals++;
                }
                if (in->op == OP_STORE_LOCAL)
                {
                    if (sp < 1)
                        return DEVERR_INVALID_PROGRAM;
                    locals[in->arg] = stack[--sp];
                }
                else
                {
                    if (sp >= PGSTROM_MAX_STACK)
                        return DEVERR_INVALID_PROGRAM;
                    stack[sp++] = locals[in->arg];
                }
                break;
            case OP_MINMAX2:
            {
                DevDatum *a, *b;
                bool take_b;

                if (sp < 2 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                if (b->isnull)
                    take_b = false;
                else if (a->isnull)
                    take_b = true;
                else
                {
                    DevDatum args[2];
                    DevDatum out;
                    int32_t rc;

                    args[0] = *b;
                    args[1] = *a;
                    rc = dev_call(in->arg, args, &out, 0);
                    if (rc != DEVERR_OK)
                        return rc;
                    take_b = (out.v.i != 0);
                }
                if (take_b)
                    *a = *b;
                sp--;
                break;
            }
            case OP_IN_SORTED:
            {
                int32_t rc;

                if (sp < 1 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                /* NULL = ANY (a non-empty array) is NULL */
                if (stack[sp - 1].isnull)
                    break;
                rc = dev_in_sorted(in, data, &stack[sp - 1]);
                if (rc != DEVERR_OK)
                    return rc;
                break;
            }
            case OP_POP:
                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                sp--;
                break;
            case OP_AND2:
            case OP_OR2:
            {
                DevDatum *a, *b;
                bool is_and = (in->op == OP_AND2);

                if (sp < 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                /* AND: FALSE wins, then NULL; OR: TRUE wins, then NULL */
                if ((!a->isnull && (a->v.i != 0) != is_and) ||
                    (!b->isnull && (b->v.i != 0) != is_and))
                {
                    a->isnull = 0;
                    a->v.i = is_and ? 0 : 1;
                }
                else if (a->isnull || b->isnull)
                {
                    a->isnull = 1;
                    a->v.i = 0;
                }
                else
                    a->v.i = is_and ? 1 : 0;
                sp--;
                break;
            }
            case OP_NOT:
                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                if (!stack[sp - 1].isnull)
                    stack[sp - 1].v.i = (stack[sp - 1].v.i == 0);
                break;
            case OP_IS_NULL:
            case OP_IS_NOT_NULL:
            case OP_IS_TRUE:
            case OP_IS_NOT_TRUE:
            case OP_IS_FALSE:
            case OP_IS_NOT_FALSE:
            case OP_IS_UNKNOWN:
            case OP_IS_NOT_UNKNOWN:
            {
                DevDatum *d;
                bool n, t, v;

                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                d = &stack[sp - 1];
                n = d->isnull != 0;
                t = !n && d->v.i != 0;
                switch (in->op)
                {
                    case OP_IS_NULL: case OP_IS_UNKNOWN: v = n; break;
                    case OP_IS_NOT_NULL: case OP_IS_NOT_UNKNOWN: v = !n; break;
                    case OP_IS_TRUE: v = t; break;
                    case OP_IS_NOT_TRUE: v = !t; break;
                    case OP_IS_FALSE: v = !n && !t; break;
                    default: v = n || t; break;     /* IS NOT FALSE */
                }
                d->isnull = 0;
                d->v.i = v;
                break;
            }
            default:
                return DEVERR_INVALID_PROGRAM;
        }
    }
    if (sp != 1)
        return DEVERR_INVALID_PROGRAM;
    /* a numeric the device could not hold passed through (CASE, COALESCE):
     * PostgreSQL gives the value */
    if (!stack[0].isnull && stack[0].len == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    *result = stack[0];
    return DEVERR_OK;
}

/* dev_eval_row_in with the row's own scratch memory: a text result that
 * lower, upper or || made is valid only inside the callee (callers that
 * keep results compile no such text) */
DEVICE_FUNC int32_t
dev_eval_row(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
             const DevColumn *cols, uint32_t ncols,
             const DevDatum *params, uint32_t nparams,
             const uint32_t *rows, DevDatum *result)
{
    DevScratch  scratch;            /* text results made during this row */

    return dev_eval_row_in(code, ninstrs, data, cols, ncols, params, nparams, rows, result, &scratch);
}

#endif  /* PGSTROM_DEVICE_INTERP_H */
