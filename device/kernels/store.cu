/*
 * store.cu - the redo log of a GPU store table applied where its copy
 * lives: the deletions of a batch of log records scattered into the row
 * versions' xmax and cmax arrays, one thread per record.  (Inserted rows
 * are appended by plain copies of their columns; which versions a query
 * sees is decided in the scan step, device_store.h.)
 *
 * A row is deleted by at most one transaction that has not aborted, the
 * last one in the log: the host keeps only the latest deletion of each row
 * in a batch, so no two threads write one row.
 */
#include "pgstrom_device.h"

#ifdef PGSTROM_GPU_TARGET

KERNEL_FUNC void
kern_store_delete(const uint64_t *rows, const uint64_t *xids, const uint32_t *cids,
                  uint32_t n, uint64_t nversions, uint64_t *xmax, uint32_t *cmax)
{
    uint32_t    stride = gridDim.x * blockDim.x;

    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    {
        uint64_t    row = rows[i];

        if (row < nversions)
        {
            xmax[row] = xids[i];
            cmax[row] = cids[i];
        }
    }
}

#endif                          /* PGSTROM_GPU_TARGET */
