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

use super::key::KeySpec;
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
    relid: pg_sys::Oid,
) {
    // SAFETY: planner callback arguments.
    unsafe {
        let mut qual = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut qual, (*baserel).baserestrictinfo, root);
        // rows in memory: a visibility check and a tuple formed per version
        let run = (*baserel).tuples * (pg_sys::cpu_tuple_cost + qual.per_tuple);
        let rows = (*baserel).rows;
        let p = crate::pg::foreign_path(root, baserel, rows, qual.startup, qual.startup + run, std::ptr::null_mut());
        pg_sys::add_path(baserel, p.cast());
        // `key = expression`: the rows holding the key, found by the index
        // (a hash lookup and the versions of one key)
        if let Some(expr) = key_clause(root, baserel, relid) {
            let versions = ((*baserel).tuples / (*baserel).rows.max(1.0)).clamp(1.0, 16.0);
            let run = pg_sys::cpu_operator_cost * 10.0 + versions * (pg_sys::cpu_tuple_cost + qual.per_tuple);
            let key = pg_sys::list_make1_impl(pg_sys::NodeTag::T_List, pg_sys::ListCell { ptr_value: expr.cast() });
            let p = crate::pg::foreign_path(root, baserel, rows, qual.startup, qual.startup + run, key);
            pg_sys::add_path(baserel, p.cast());
        }
    }
}

/// The expression of a restriction `key = expression` on the table's
/// `primary_key` column that the scan can look up by: `=` is the key
/// type's own equality (under a deterministic collation), the expression
/// reads no column of this query level and calls no volatile function
/// (a constant, a parameter, an uncorrelated sub-query's value).
unsafe fn key_clause(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    relid: pg_sys::Oid,
) -> Option<*mut pg_sys::Expr> {
    // SAFETY: planner state of a base relation.
    unsafe {
        let name = std::ffi::CString::new(super::options::of_table(relid).primary_key?).ok()?;
        let attnum = pg_sys::get_attnum(relid, name.as_ptr());
        if attnum == pg_sys::InvalidAttrNumber as pg_sys::AttrNumber {
            return None;
        }
        let base = pg_sys::getBaseType(pg_sys::get_atttype(relid, attnum));
        let eq = (*pg_sys::lookup_type_cache(base, pg_sys::TYPECACHE_EQ_OPR as i32)).eq_opr;
        if eq == pg_sys::InvalidOid {
            return None;
        }
        let strip = |mut e: *mut pg_sys::Node| {
            while !e.is_null() && (*e).type_ == pg_sys::NodeTag::T_RelabelType {
                e = (*(e as *mut pg_sys::RelabelType)).arg.cast();
            }
            e
        };
        for ri in crate::pg::list::from_list((*baserel).baserestrictinfo) {
            let clause = (*(ri as *mut pg_sys::RestrictInfo)).clause as *mut pg_sys::Node;
            if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
                continue;
            }
            let op = clause as *mut pg_sys::OpExpr;
            let args = crate::pg::list::from_list((*op).args);
            if (*op).opno != eq || args.len() != 2 {
                continue;
            }
            let coll = (*op).inputcollid;
            if coll != pg_sys::InvalidOid && !pg_sys::get_collation_isdeterministic(coll) {
                continue;
            }
            for (a, b) in [(args[0], args[1]), (args[1], args[0])] {
                let v = strip(a);
                let other = b;
                if (*v).type_ == pg_sys::NodeTag::T_Var
                    && (*(v as *mut pg_sys::Var)).varno as u32 == (*baserel).relid
                    && (*(v as *mut pg_sys::Var)).varattno == attnum
                    && (*(v as *mut pg_sys::Var)).varlevelsup == 0
                    && pg_sys::pull_varnos(root, other).is_null()
                    && !pg_sys::contain_volatile_functions(other)
                    && !pg_sys::contain_subplans(other)
                {
                    return Some(other.cast());
                }
            }
        }
        None
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_plan(
    _root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    _relid: pg_sys::Oid,
    best_path: *mut pg_sys::ForeignPath,
    tlist: *mut pg_sys::List,
    scan_clauses: *mut pg_sys::List,
    outer_plan: *mut pg_sys::Plan,
) -> *mut pg_sys::ForeignScan {
    // SAFETY: planner callback arguments.
    unsafe {
        let quals = pg_sys::extract_actual_clauses(scan_clauses, false);
        // a key lookup: the key's expression (the clause stays a qual)
        let key = (*best_path).fdw_private;
        let fdw_exprs = if key.is_null() { std::ptr::null_mut() } else { pg_sys::copyObjectImpl(key.cast()).cast() };
        pg_sys::make_foreignscan(
            tlist,
            quals,
            (*baserel).relid,
            fdw_exprs,
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
    /// A key lookup: the key's expression and column, and whether the
    /// rows were looked up (until a rescan).
    lookup: Option<(*mut pg_sys::ExprState, KeySpec, bool)>,
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
        let plan = (*node).ss.ps.plan as *mut pg_sys::ForeignScan;
        let lookup = match crate::pg::list::from_list((*plan).fdw_exprs).first() {
            Some(&e) => {
                let name = super::options::of_table((*rel).rd_id).primary_key.unwrap_or_default();
                let spec = KeySpec::resolve(rel, &name);
                Some((pg_sys::ExecInitExpr(e.cast(), &raw mut (*node).ss.ps), spec, false))
            }
            None => None,
        };
        let st = ScanState {
            vis: Visibility::new((*estate).es_snapshot),
            next: 0,
            batch: Vec::new(),
            batch_pos: 0,
            batch_cxt,
            versions,
            generation,
            log_pos,
            lookup,
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
            if let Some((expr, spec, done)) = &mut sc.lookup {
                // the rows holding the key, once
                if !*done {
                    *done = true;
                    let econtext = (*node).ss.ps.ps_ExprContext;
                    let mut isnull = false;
                    let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
                    let value = (*(*expr)).evalfunc.expect("compiled")(*expr, econtext, &mut isnull);
                    let key = if isnull { None } else { Some(spec.of_datum(value)) };
                    pg_sys::MemoryContextSwitchTo(old);
                    if let Some(key) = key {
                        state::with_store_as_is(rel, |st| {
                            let _c = crate::pg::memctx::Switched::to(cxt);
                            let Some(index) = &st.key else { return };
                            for id in st.rows_with_key(index, &key) {
                                if vis.visible(st, id as usize) {
                                    batch.push(super::modify::heap_tuple(relid, id, &st.rows[id as usize].tuple));
                                }
                            }
                        });
                    }
                }
            } else {
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
            if let Some((_, _, done)) = &mut sc.lookup {
                *done = false;
            }
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
        if let Some((_, spec, _)) = &sc.lookup {
            crate::pg::explain::prop_text(c"Primary Key Lookup", &spec.name, es);
        }
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
