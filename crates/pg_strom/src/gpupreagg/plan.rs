//! GpuPreAgg plans: its path and scan methods.  The plan itself is
//! GpuJoin's (`crate::gpujoin::plan`): a [`GpuJoinInfo`] whose
//! aggregation stage is filled in (its keys, operations and outputs), and
//! the partial grouping target as the scan tuple; GpuPreAgg's scan
//! methods make the executor state of [`crate::gpupreagg::exec`].
//!
//! [`GpuJoinInfo`]: crate::gpujoin::plan::GpuJoinInfo

use pgrx::pg_sys;

use crate::gpujoin;
use crate::gpupreagg::{NAME, exec};

static mut PATH_METHODS: pg_sys::CustomPathMethods = pg_sys::CustomPathMethods {
    CustomName: NAME.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
};

static mut SCAN_METHODS: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME.as_ptr(), CreateCustomScanState: Some(exec::create_scan_state) };

/// GpuPreAgg's path methods.
pub fn path_methods() -> *const pg_sys::CustomPathMethods {
    &raw const PATH_METHODS
}

/// Register the scan methods by name, for parallel workers.
pub fn register_methods() {
    // SAFETY: _PG_init, once; the methods live for the process.
    unsafe { pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS) };
}

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
