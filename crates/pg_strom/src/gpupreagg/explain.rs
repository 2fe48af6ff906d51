//! GpuPreAgg's EXPLAIN fields: GpuJoin's (`crate::gpujoin::explain`),
//! which begin with how the node reduces (`Reduction`, `Combined
//! GpuJoin`) and end with `Rows Consumed` and `Partial Groups`.

use pgrx::pg_guard;
use pgrx::pg_sys;

use crate::gpupreagg::exec::state_of;

/// ExplainCustomScan.
#[pg_guard]
pub unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: an executor callback for our node.
    unsafe {
        let Some(st) = state_of(node) else { return };
        crate::gpujoin::explain::explain_state(node, &mut st.join, ancestors, es);
    }
}
