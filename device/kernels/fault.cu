/*
 * fault.cu - a deliberate device fault, for testing how a faulting GPU is
 * handled (pgstrom.inject_device_fault(), docs/gpu_service.md).
 *
 * The kernel stores through an address no allocation has, as a bug in
 * device code would: the driver reports CUDA_ERROR_ILLEGAL_ADDRESS and the
 * CUDA context can do no more work.  GPU only: the CPU engine has no
 * device to fault, and nothing calls this kernel unless a superuser armed
 * the fault.
 */
#include "pgstrom_device.h"

#ifdef PGSTROM_GPU_TARGET
KERNEL_FUNC void
kern_fault_illegal_address(uint64_t address)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *((volatile uint32_t *) address) = 0xdeadbeefU;
}
#endif
