/*
 * pgstrom_device.h - the common header of pg_strom's device code.
 *
 * One source, two targets: every file under device/ is compiled
 *   - by NVRTC for the GPU (__CUDACC_RTC__ / __CUDACC__ defined), and
 *   - by the host C++ compiler into the extension as the CPU engine.
 * This header hides the difference: fixed-width types (NVRTC has no libc
 * headers), function qualifiers, the thread geometry and atomics.
 *
 * Rules for device code: no exceptions, no RTTI, no libc beyond what is
 * defined here, no dynamic allocation.  Errors are reported as a status
 * code (PGSTROM_STATUS_*) and never as a C++ exception or a trap.
 *
 * Mirrors: src/include/c.h in spirit (the base every other header
 * includes); no PostgreSQL code.
 */
#ifndef PGSTROM_DEVICE_H
#define PGSTROM_DEVICE_H

/* Bump whenever the ABI between the host and the kernels changes. */
#define PGSTROM_DEVICE_ABI_VERSION  1

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define PGSTROM_GPU_TARGET 1
typedef signed char         int8_t;
typedef unsigned char       uint8_t;
typedef short               int16_t;
typedef unsigned short      uint16_t;
typedef int                 int32_t;
typedef unsigned int        uint32_t;
typedef long long           int64_t;
typedef unsigned long long  uint64_t;
#define DEVICE_FUNC     __device__ __forceinline__
/* large functions called from several places: one copy, not inlined */
#define DEVICE_NOINLINE __device__ __noinline__
#define KERNEL_FUNC     extern "C" __global__
/* a constant table the kernels index (global memory, cached) */
#define DEVICE_TABLE    __device__ const
#else
#define PGSTROM_CPU_TARGET 1
#include <stdint.h>
#include <stddef.h>
#define DEVICE_FUNC     static inline
#define DEVICE_NOINLINE static __attribute__((noinline))
#define KERNEL_FUNC     static
#define DEVICE_TABLE    static const
#endif

/* Status codes shared by both engines (see runtime::error::KernelStatus). */
#define PGSTROM_STATUS_OK               0
#define PGSTROM_STATUS_INVALID_ARGUMENT 1
#define PGSTROM_STATUS_INTERNAL         2

/* Comparison operators of the filter kernels (runtime::engine::CompareOp). */
#define PGSTROM_CMP_EQ  0
#define PGSTROM_CMP_NE  1
#define PGSTROM_CMP_LT  2
#define PGSTROM_CMP_LE  3
#define PGSTROM_CMP_GT  4
#define PGSTROM_CMP_GE  5

/*
 * Validity bitmap in Arrow's layout: bit (i % 8) of byte (i / 8) is set when
 * row i is NOT NULL.  A null pointer means "no NULLs in this chunk".
 */
DEVICE_FUNC bool
pgstrom_row_is_valid(const uint8_t *validity, uint32_t row)
{
    return validity == 0 || ((validity[row >> 3] >> (row & 7)) & 1) != 0;
}

/*
 * Three-way comparison with PostgreSQL's semantics.  For floating point
 * that means NaN equals NaN and sorts above every other value (float8_cmp),
 * unlike IEEE comparisons; the test (x != x) detects NaN without libm.
 */
template <typename T>
DEVICE_FUNC int
pgstrom_cmp3(T a, T b)
{
    return a < b ? -1 : (a > b ? 1 : 0);
}

DEVICE_FUNC int
pgstrom_cmp3(double a, double b)
{
    bool    a_nan = (a != a);
    bool    b_nan = (b != b);

    if (a_nan || b_nan)
        return a_nan ? (b_nan ? 0 : 1) : -1;
    return a < b ? -1 : (a > b ? 1 : 0);
}

#ifdef PGSTROM_GPU_TARGET
DEVICE_FUNC void
pgstrom_atomic_add_u32(uint32_t *addr, uint32_t value)
{
    atomicAdd(addr, value);
}
DEVICE_FUNC void
pgstrom_atomic_set_status(int32_t *addr, int32_t status)
{
    atomicCAS(addr, PGSTROM_STATUS_OK, status);
}
/* add one; returns the old value */
DEVICE_FUNC uint32_t
pgstrom_atomic_inc_u32(uint32_t *addr)
{
    return atomicAdd(addr, 1U);
}
DEVICE_FUNC void
pgstrom_atomic_or_u32(uint32_t *addr, uint32_t bits)
{
    atomicOr(addr, bits);
}
#else
DEVICE_FUNC void
pgstrom_atomic_add_u32(uint32_t *addr, uint32_t value)
{
    __atomic_fetch_add(addr, value, __ATOMIC_RELAXED);
}
DEVICE_FUNC void
pgstrom_atomic_set_status(int32_t *addr, int32_t status)
{
    int32_t expected = PGSTROM_STATUS_OK;
    __atomic_compare_exchange_n(addr, &expected, status, false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
DEVICE_FUNC uint32_t
pgstrom_atomic_inc_u32(uint32_t *addr)
{
    return __atomic_fetch_add(addr, 1U, __ATOMIC_RELAXED);
}
DEVICE_FUNC void
pgstrom_atomic_or_u32(uint32_t *addr, uint32_t bits)
{
    __atomic_fetch_or(addr, bits, __ATOMIC_RELAXED);
}
#endif

#endif  /* PGSTROM_DEVICE_H */
