//! Gstore_Fdw scans: the planner and executor callbacks of the FDW.
//!
//! The store is replayed up to its log's end when the scan starts (and
//! when the planner sizes it); the scan then walks the row versions and
//! returns those the query's snapshot sees, as heap tuples whose ctid is
//! the row's id (UPDATE and DELETE name rows by it).  PostgreSQL
//! evaluates the quals.

use std::ffi::{CStr, c_int, c_void};

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::state::{self, Visibility};

#[pg_guard]
pub unsafe extern "C-unwind" fn get_rel_size(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    relid: pg_sys::Oid,
) {
    // SAFETY: planner callback arguments.
    unsafe {
        let rel = pg_sys::table_open(relid, pg_sys::NoLock as i32);
        let (versions, bytes) = state::with_store(rel, |st| (st.rows.len() as f64, st.bytes));
        // live rows: after an ANALYZE its rows per page, scaled to the
        // store's size now (as a heap table's estimate is); before one,
        // every row version
        let (reltuples, relpages) = ((*(*rel).rd_rel).reltuples as f64, (*(*rel).rd_rel).relpages as f64);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        let live = if reltuples >= 0.0 && relpages > 0.0 {
            (reltuples / relpages * super::analyze::pages_of(bytes) as f64).min(versions)
        } else {
            versions
        };
        (*baserel).tuples = versions;
        let sel = pg_sys::clauselist_selectivity(
            root,
            (*baserel).baserestrictinfo,
            0,
            pg_sys::JoinType::JOIN_INNER,
            std::ptr::null_mut(),
        );
        (*baserel).rows = pg_sys::clamp_row_est(live * sel);
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_paths(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    _relid: pg_sys::Oid,
) {
    // SAFETY: planner callback arguments.
    unsafe {
        let mut qual = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut qual, (*baserel).baserestrictinfo, root);
        // rows in memory: a visibility check and a tuple formed per version
        let run = (*baserel).tuples * (pg_sys::cpu_tuple_cost + qual.per_tuple);
        let p = pg_sys::create_foreignscan_path(
            root,
            baserel,
            std::ptr::null_mut(),
            (*baserel).rows,
            0,
            qual.startup,
            qual.startup + run,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        pg_sys::add_path(baserel, p.cast());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_plan(
    _root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    _relid: pg_sys::Oid,
    _best_path: *mut pg_sys::ForeignPath,
    tlist: *mut pg_sys::List,
    scan_clauses: *mut pg_sys::List,
    outer_plan: *mut pg_sys::Plan,
) -> *mut pg_sys::ForeignScan {
    // SAFETY: planner callback arguments.
    unsafe {
        let quals = pg_sys::extract_actual_clauses(scan_clauses, false);
        pg_sys::make_foreignscan(
            tlist,
            quals,
            (*baserel).relid,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            outer_plan,
        )
    }
}

/// Rows formed per visit of the store.
const BATCH: usize = 256;

/// The executor state of a scan (ForeignScanState.fdw_state).
pub struct ScanState {
    vis: Visibility,
    /// The next row version to look at.
    next: usize,
    /// Rows formed ahead (in `batch_cxt`), and the next to return.
    batch: Vec<pg_sys::HeapTuple>,
    batch_pos: usize,
    batch_cxt: pg_sys::MemoryContext,
    /// What EXPLAIN prints: versions, log generation and bytes replayed.
    versions: usize,
    generation: u64,
    log_pos: u64,
}

unsafe fn state_of<'a>(node: *mut pg_sys::ForeignScanState) -> Option<&'a mut ScanState> {
    // SAFETY: fdw_state is null or our ScanState.
    unsafe { ((*node).fdw_state as *mut ScanState).as_mut() }
}

unsafe extern "C-unwind" fn free_state(arg: *mut c_void) {
    // SAFETY: registered once per state.
    unsafe {
        let node = arg as *mut pg_sys::ForeignScanState;
        let p = (*node).fdw_state as *mut ScanState;
        if !p.is_null() {
            (*node).fdw_state = std::ptr::null_mut();
            drop(Box::from_raw(p));
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn begin(node: *mut pg_sys::ForeignScanState, _eflags: c_int) {
    // SAFETY: executor callback arguments.
    unsafe {
        let rel = (*node).ss.ss_currentRelation;
        let estate = (*node).ss.ps.state;
        let (versions, generation, log_pos) = state::with_store(rel, |st| (st.rows.len(), st.generation, st.log_pos));
        let batch_cxt = pg_sys::AllocSetContextCreateExtended(
            (*estate).es_query_cxt,
            c"gstore scan".as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        );
        let st = ScanState {
            vis: Visibility::new((*estate).es_snapshot),
            next: 0,
            batch: Vec::new(),
            batch_pos: 0,
            batch_cxt,
            versions,
            generation,
            log_pos,
        };
        (*node).fdw_state = Box::into_raw(Box::new(st)).cast();
        crate::pg::memctx::on_reset((*estate).es_query_cxt, free_state, node.cast());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn iterate(node: *mut pg_sys::ForeignScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback; runs in the per-tuple memory context.
    unsafe {
        let slot = (*node).ss.ss_ScanTupleSlot;
        pg_sys::ExecClearTuple(slot);
        let Some(sc) = state_of(node) else { return slot };
        if sc.batch_pos == sc.batch.len() {
            // the next rows the snapshot sees, formed at once (the slot
            // no longer points into the batch's memory: it was cleared)
            let rel = (*node).ss.ss_currentRelation;
            let relid = (*rel).rd_id;
            pg_sys::MemoryContextReset(sc.batch_cxt);
            sc.batch.clear();
            sc.batch_pos = 0;
            let (vis, next, batch, cxt) = (&mut sc.vis, &mut sc.next, &mut sc.batch, sc.batch_cxt);
            state::with_store_as_is(rel, |st| {
                let _c = crate::pg::memctx::Switched::to(cxt);
                while *next < st.rows.len() && batch.len() < BATCH {
                    let id = *next;
                    *next += 1;
                    if vis.visible(st, id) {
                        batch.push(super::modify::heap_tuple(relid, id as u64, &st.rows[id].tuple));
                    }
                }
            });
        }
        if let Some(&ht) = sc.batch.get(sc.batch_pos) {
            sc.batch_pos += 1;
            pg_sys::ExecStoreHeapTuple(ht, slot, false);
        }
        slot
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: executor callback.
    unsafe {
        if let Some(sc) = state_of(node) {
            sc.next = 0;
            sc.batch.clear();
            sc.batch_pos = 0;
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn end(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: executor callback.
    unsafe { free_state(node.cast()) };
}

#[pg_guard]
pub unsafe extern "C-unwind" fn explain(node: *mut pg_sys::ForeignScanState, es: *mut pg_sys::ExplainState) {
    // SAFETY: executor callback.
    unsafe {
        let Some(sc) = state_of(node) else { return };
        let relid = (*(*node).ss.ss_currentRelation).rd_id;
        let name = CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy();
        let text = format!(
            "{name} (host memory, {} row versions, redo log generation {} applied up to byte {})",
            sc.versions, sc.generation, sc.log_pos
        );
        crate::pg::explain::prop_text(c"GPU Store", &text, es);
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn parallel_safe(
    _root: *mut pg_sys::PlannerInfo,
    _rel: *mut pg_sys::RelOptInfo,
    _rte: *mut pg_sys::RangeTblEntry,
) -> bool {
    // a worker replays the files itself; its snapshot and transaction
    // state are the leader's
    true
}
