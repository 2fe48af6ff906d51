//! The planner's parallel rules as costsize.c and allpaths.c apply them.

use pgrx::pg_sys;

/// Workers of a parallel scan of `rel`: the table's `parallel_workers`
/// option when it has one (`table_workers` >= 0), else PostgreSQL's rule
/// by `pages`; at most max_parallel_workers_per_gather.
///
/// # Safety
/// Planner state of a base relation.
pub unsafe fn scan_parallel_workers(rel: *mut pg_sys::RelOptInfo, pages: f64, table_workers: i32) -> i32 {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        if table_workers >= 0 {
            table_workers.min(pg_sys::max_parallel_workers_per_gather)
        } else {
            pg_sys::compute_parallel_worker(rel, pages, -1.0, pg_sys::max_parallel_workers_per_gather)
        }
    }
}

/// PostgreSQL's share of the work a parallel plan's leader does
/// (costsize.c's get_parallel_divisor).
pub fn parallel_divisor(workers: i32) -> f64 {
    let mut divisor = workers as f64;
    let leader = 1.0 - 0.3 * workers as f64;
    if leader > 0.0 {
        divisor += leader;
    }
    divisor
}
