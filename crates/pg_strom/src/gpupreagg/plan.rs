//! GpuPreAgg plans: its path and scan methods.  The plan itself is
//! GpuJoin's (`crate::gpujoin::plan`): a [`GpuJoinInfo`] whose
//! aggregation stage is filled in (its keys, operations and outputs), and
//! the partial grouping target as the scan tuple; GpuPreAgg's scan
//! methods make the executor state of [`crate::gpupreagg::exec`].
//!
//! [`GpuJoinInfo`]: crate::gpujoin::plan::GpuJoinInfo

use pgrx::pg_sys;

use crate::customscan::node::plan_methods;
use crate::gpujoin;
use crate::gpupreagg::{NAME, exec};

plan_methods!(NAME, plan_custom_path, exec::create_scan_state);

/// PlanCustomPath: GpuJoin's plan with GpuPreAgg's scan methods.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: planner callback arguments, passed on as they came.
    unsafe {
        let plan = gpujoin::plan::plan_custom_path(root, rel, best_path, tlist, clauses, custom_plans);
        (*(plan as *mut pg_sys::CustomScan)).methods = &raw const SCAN_METHODS;
        plan
    }
}
