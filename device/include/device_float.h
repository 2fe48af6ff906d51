/*
 * device_float.h - float4 and float8 (and pg_strom's float2, held as a
 * float4) as float.c computes them: arithmetic with the overflow and
 * underflow checks, negation and abs (of the integer types too), casts
 * between the float and integer types, sqrt / floor / ceil / round /
 * trunc / sign, pow, the transcendental functions and the trigonometric
 * functions in degrees (sind ... atan2d).  Where the value depends on the
 * libm (pow, exp, sin ...) the CPU engine calls the host libm, the very
 * functions float.c calls; the GPU computes only what is exact by
 * definition and reports DEVERR_NEEDS_CPU otherwise.
 *
 * Also owns the dev_isnan / dev_isinf / dev_rint ... wrappers that hide
 * the CUDA / host libm difference for the other headers.
 *
 * Mirrors: src/backend/utils/adt/float.c, src/include/utils/float.h.
 */
#ifndef PGSTROM_DEVICE_FLOAT_H
#define PGSTROM_DEVICE_FLOAT_H

#include "device_int.h"

/* ---- libm: CUDA's on the GPU, the host's on the CPU engine ------------- */

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

/* ---- arithmetic, negation, abs, casts (float.c, int.c) ----------------- */

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

/* ---- IMPL_* of device_functions.def (the rest sit by their function) -- */

#define IMPL_SQRT(res, ta, tb)      impl_math(0, &args[0], r)
#define IMPL_FLOOR(res, ta, tb)     impl_math(1, &args[0], r)
#define IMPL_CEIL(res, ta, tb)      impl_math(2, &args[0], r)
#define IMPL_RINT(res, ta, tb)      impl_math(3, &args[0], r)
#define IMPL_TRUNC(res, ta, tb)     impl_math(4, &args[0], r)
#define IMPL_SIGN(res, ta, tb)      impl_math(5, &args[0], r)

#define IMPL_FLT_ADD(res, ta, tb)  impl_flt_arith(0, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_SUB(res, ta, tb)  impl_flt_arith(1, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_MUL(res, ta, tb)  impl_flt_arith(2, res, ta, tb, &args[0], &args[1], r)
#define IMPL_FLT_DIV(res, ta, tb)  impl_flt_arith(3, res, ta, tb, &args[0], &args[1], r)

#define IMPL_NEG(res, ta, tb)      impl_neg(res, &args[0], r)
#define IMPL_ABS(res, ta, tb)      impl_abs(res, &args[0], r)

#define IMPL_CAST_I2F(res, ta, tb) impl_cast_i2f(res, &args[0], r)
#define IMPL_CAST_F2I(res, ta, tb) impl_cast_f2i(res, ta, &args[0], r)
#define IMPL_CAST_F2F(res, ta, tb) impl_cast_f2f(res, &args[0], r)
/* float2 -> float4: the float it is held as */
#define IMPL_FLOAT2_TO_FLOAT4(res, ta, tb) (r->v.f4 = args[0].v.f4, DEVERR_OK)

#endif  /* PGSTROM_DEVICE_FLOAT_H */
