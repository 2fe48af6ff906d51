//! GroupExchange: PostgreSQL's own partial aggregation in a parallel plan
//! (a Partial HashAggregate in every process, over a GpuJoin, say) with
//! its partial groups exchanged between the processes by their grouping
//! keys, as a parallel GpuPreAgg's are (`gpupreagg::exchange`), so that a
//! Finalize Aggregate in each process finalizes its share of the groups
//! below the Gather instead of one above it:
//!
//! ```text
//! Gather
//!   ->  Finalize HashAggregate                 (in every process)
//!         ->  Custom Scan (GroupExchange)
//!               Partial Groups Exchanged: by the grouping keys between the processes
//!               ->  Partial HashAggregate
//!                     ->  Parallel Custom Scan (GpuJoin) ...
//! ```
//!
//! The node has one child plan, whose rows it returns unchanged (its scan
//! tuple is the child's target list).  Its path is made beside GpuPreAgg's
//! (`gpupreagg::path`), over the cheapest partial path PostgreSQL made for
//! the partial aggregation; or, for a grouping that cannot be partial
//! (`gpupreagg::exchange_rows`), over the grouping's input rows, which
//! EXPLAIN then calls `Rows Exchanged`.

use std::ffi::CStr;

use pgrx::pg_sys;

use crate::customscan::node::plan_methods;
use crate::gpupreagg::exchange::Exchange;
use crate::pg::explain::prop_text;

/// The name the plan and EXPLAIN show (`Custom Scan (GroupExchange)`).
pub const NAME: &CStr = c"GroupExchange";

plan_methods!(NAME, plan_custom_path, create_scan_state);

/// The executor state: PostgreSQL's node, then the exchange.
#[repr(C)]
struct State {
    css: pg_sys::CustomScanState,
    ex: *mut Exchange,
}

static mut EXEC_METHODS: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
    CustomName: NAME.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    MarkPosCustomScan: None,
    RestrPosCustomScan: None,
    EstimateDSMCustomScan: Some(estimate_dsm),
    InitializeDSMCustomScan: Some(initialize_dsm),
    ReInitializeDSMCustomScan: Some(reinitialize_dsm),
    InitializeWorkerCustomScan: Some(initialize_worker),
    ShutdownCustomScan: Some(shutdown),
    ExplainCustomScan: Some(explain),
};

/// A GroupExchange path over PostgreSQL's partial aggregation `sub` (a
/// partial path of the partial grouping relation `parent`), exchanging by
/// `keys` ((column of `sub`'s target, hash function, collation) per
/// grouping key), priced as the GpuPreAgg's exchange is.
///
/// # Safety
/// Planner state; `sub` a parallel-safe partial path.
pub unsafe fn path(
    parent: *mut pg_sys::RelOptInfo,
    sub: *mut pg_sys::Path,
    keys: &[(u32, pg_sys::Oid, pg_sys::Oid)],
) -> *mut pg_sys::CustomPath {
    // SAFETY: caller's promise; the path is palloc'd in the planner's
    // memory.
    unsafe {
        let cpath = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cpath).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = parent;
        p.pathtarget = (*sub).pathtarget;
        p.param_info = std::ptr::null_mut();
        p.parallel_aware = true;
        p.parallel_safe = (*sub).parallel_safe;
        p.parallel_workers = (*sub).parallel_workers;
        p.pathkeys = std::ptr::null_mut();
        p.rows = (*sub).rows;
        p.startup_cost = (*sub).total_cost;
        p.total_cost = (*sub).total_cost + crate::gpupreagg::exchange::cost(p.rows, (*p.pathtarget).width, keys.len());
        (*cpath).flags = 0;
        (*cpath).custom_paths = pg_sys::lappend(std::ptr::null_mut(), sub.cast());
        (*cpath).custom_private = crate::gpujoin::path::exchange_to_list(keys);
        (*cpath).methods = path_methods();
        cpath
    }
}

/// PlanCustomPath: the child's plan under a scan whose tuple is the
/// child's target list.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    _root: *mut pg_sys::PlannerInfo,
    _rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    _clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: planner callback arguments.
    unsafe {
        let child = pg_sys::list_nth(custom_plans, 0) as *mut pg_sys::Plan;
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = std::ptr::null_mut();
        (*cscan).scan.scanrelid = 0;
        (*cscan).flags = (*best_path).flags;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_exprs = std::ptr::null_mut();
        (*cscan).custom_private = pg_sys::list_copy((*best_path).custom_private);
        (*cscan).custom_scan_tlist = pg_sys::copyObjectImpl((*child).targetlist.cast()).cast();
        (*cscan).methods = &raw const SCAN_METHODS;
        cscan.cast()
    }
}

/// CreateCustomScanState.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn create_scan_state(_cscan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    // SAFETY: palloc0 of our node; the executor fills the standard fields.
    unsafe {
        let node = pg_sys::palloc0(std::mem::size_of::<State>()) as *mut State;
        (*node).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*node).css.methods = &raw const EXEC_METHODS;
        crate::pg::compat::set_custom_slot_ops(&raw mut (*node).css, &raw const pg_sys::TTSOpsVirtual);
        node.cast()
    }
}

/// The exchange of a node (None once freed).
///
/// # Safety
/// `node` is a node made by [`create_scan_state`].
unsafe fn exchange_of<'a>(node: *mut pg_sys::CustomScanState) -> Option<&'a mut Exchange> {
    // SAFETY: caller's promise; ex is NULL or a live Box.
    unsafe { (*(node as *mut State)).ex.as_mut() }
}

/// The child's executor state.
///
/// # Safety
/// `node` is a begun node of ours.
unsafe fn child_of(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::PlanState {
    // SAFETY: caller's promise: begin put the child there.
    unsafe { pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState }
}

/// Frees the exchange when the query's memory goes (normal end or ERROR).
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn free_state(arg: *mut std::ffi::c_void) {
    // SAFETY: arg is our node; its ex pointer is a Box or NULL.
    unsafe {
        let node = arg as *mut State;
        if !(*node).ex.is_null() {
            drop(Box::from_raw((*node).ex));
            (*node).ex = std::ptr::null_mut();
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32) {
    // SAFETY: executor callback for our node.
    unsafe {
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child = pg_sys::list_nth((*cscan).custom_plans, 0) as *mut pg_sys::Plan;
        let ps = pg_sys::ExecInitNode(child, estate, eflags);
        (*node).custom_ps = pg_sys::lappend(std::ptr::null_mut(), ps.cast());
        let keys: Vec<(u32, u32, u32)> = crate::gpujoin::path::exchange_from_list((*cscan).custom_private)
            .into_iter()
            .map(|(i, f, c)| (i, f.to_u32(), c.to_u32()))
            .collect();
        let st = node as *mut State;
        (*st).ex = Box::into_raw(Box::new(Exchange::new(&keys)));
        crate::pg::memctx::on_reset((*estate).es_query_cxt, free_state, st.cast());
    }
}

/// The child's next row in the node's output slot (its columns as they
/// are), or an empty slot at the end.
///
/// # Safety
/// A begun node of ours.
unsafe fn child_row(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: caller's promise.
    unsafe {
        let out = crate::gpupreagg::exchange::output_slot(node);
        let slot = pg_sys::ExecProcNode(child_of(node));
        pg_sys::ExecClearTuple(out);
        if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
            return out;
        }
        let n = (*(*out).tts_tupleDescriptor).natts;
        pg_sys::slot_getsomeattrs(slot, n);
        // (the values stay in the child's slot until its next row)
        std::ptr::copy_nonoverlapping((*slot).tts_values, (*out).tts_values, n as usize);
        std::ptr::copy_nonoverlapping((*slot).tts_isnull, (*out).tts_isnull, n as usize);
        pg_sys::ExecStoreVirtualTuple(out)
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback for our node.
    unsafe {
        match exchange_of(node) {
            Some(ex) if ex.active() => ex.next(node, || pg_sys::ExecProcNode(child_of(node))),
            _ => child_row(node),
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback for our node.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.restart();
        }
        pg_sys::ExecEndNode(child_of(node));
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback for our node.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.restart();
        }
        let child = child_of(node);
        // (a child whose parameters changed is rescanned by its next
        // ExecProcNode)
        if (*child).chgParam.is_null() {
            pg_sys::ExecReScan(child);
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn estimate_dsm(
    _node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
) -> usize {
    Exchange::shared_size()
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn initialize_dsm(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: coordinate has estimate_dsm's size.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.init(coordinate.cast(), (*pcxt).seg);
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn reinitialize_dsm(
    node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: the area initialize_dsm laid out.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.reinit(coordinate.cast());
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn initialize_worker(
    node: *mut pg_sys::CustomScanState,
    _toc: *mut pg_sys::shm_toc,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: the leader's area.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.attach(coordinate.cast());
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shutdown(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback for our node.
    unsafe {
        if let Some(ex) = exchange_of(node) {
            ex.detach();
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    _ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: a begun node of ours: its child's state and plan.
    let partial = unsafe { (*(*child_of(node)).plan).type_ == pg_sys::NodeTag::T_Agg };
    let label = if partial { c"Partial Groups Exchanged" } else { c"Rows Exchanged" };
    prop_text(label, "by the grouping keys between the processes", es);
}
