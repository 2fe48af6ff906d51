/*
 * device_store.h - which row versions of a GPU store table (Gstore_Fdw) a
 * query's snapshot sees, decided where the rows are.
 *
 * The engine keeps, beside a store's columns, four arrays over its row
 * versions: the full transaction id and command id that inserted each
 * (xmin, cmin) and of the last transaction that deleted it (xmax, cmax;
 * xmax 0 when none did).  A later deleter only ever follows an earlier one
 * that aborted (a second writer of a row waits for the first and gives up
 * when the first committed), so the last deleter is the only one that can
 * hide a row.
 *
 * The backend turns its snapshot into a DevStoreView: every transaction
 * below `horizon` (the snapshot's xmin) has finished, and committed unless
 * it is listed in `aborted`; a transaction at or above it that wrote to the
 * store is listed in the window with what the snapshot makes of it
 * (DEV_XID_*); one listed nowhere wrote after the backend looked and is
 * invisible.  Rows below `hide_below` were removed by a TRUNCATE the
 * snapshot honours.  The rules are PostgreSQL's for heap tuples, command
 * ids included (a row inserted by this transaction's current command is not
 * yet seen; one it deleted in an earlier command is gone).
 */
#ifndef DEVICE_STORE_H
#define DEVICE_STORE_H

#include "pgstrom_device.h"

#define DEV_XID_INVISIBLE   0   /* running for the snapshot, or aborted */
#define DEV_XID_COMMITTED   1   /* committed before the snapshot */
#define DEV_XID_CURRENT     2   /* the snapshot's own transaction */

typedef struct
{
    const uint64_t *xmin;       /* per row of the chunk (already offset) */
    const uint32_t *cmin;
    const uint64_t *xmax;       /* 0: never deleted */
    const uint32_t *cmax;
    const uint64_t *aborted;    /* sorted: aborted transactions < horizon */
    const uint64_t *window;     /* sorted: transactions >= horizon */
    const uint8_t  *states;     /* DEV_XID_* of each window entry */
    uint64_t        horizon;
    uint64_t        hide_below; /* rows of the chunk below it are hidden */
    uint32_t        naborted;
    uint32_t        nwindow;
    uint32_t        curcid;
    uint32_t        reserved;
} DevStoreView;

/* Whether sorted `v[0..n)` holds `x`. */
DEVICE_FUNC bool
dev_store_has(const uint64_t *v, uint32_t n, uint64_t x, uint32_t *at)
{
    uint32_t    lo = 0, hi = n;

    while (lo < hi)
    {
        uint32_t    mid = lo + (hi - lo) / 2;

        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return lo < n && v[lo] == x;
}

/* What the view's snapshot makes of transaction `xid` (DEV_XID_*). */
DEVICE_FUNC uint32_t
dev_store_xid_state(const DevStoreView *v, uint64_t xid)
{
    uint32_t    at;

    if (xid < v->horizon)
        return dev_store_has(v->aborted, v->naborted, xid, &at) ? DEV_XID_INVISIBLE : DEV_XID_COMMITTED;
    if (dev_store_has(v->window, v->nwindow, xid, &at))
        return v->states[at];
    return DEV_XID_INVISIBLE;
}

/* Does the view's snapshot see row `row` of the chunk? */
DEVICE_FUNC bool
dev_store_visible(const DevStoreView *v, uint32_t row)
{
    uint32_t    s;
    uint64_t    xmax;

    if (row < v->hide_below)
        return false;
    s = dev_store_xid_state(v, v->xmin[row]);
    if (s == DEV_XID_INVISIBLE || (s == DEV_XID_CURRENT && v->cmin[row] >= v->curcid))
        return false;
    xmax = v->xmax[row];
    if (xmax != 0)
    {
        s = dev_store_xid_state(v, xmax);
        if (s == DEV_XID_COMMITTED || (s == DEV_XID_CURRENT && v->cmax[row] < v->curcid))
            return false;
    }
    return true;
}

#endif                          /* DEVICE_STORE_H */
