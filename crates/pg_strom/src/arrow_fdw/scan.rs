//! Arrow_Fdw scans: the planner and executor callbacks of the FDW.
//!
//! Lifecycle: GetForeignRelSize opens the files (footer and batch headers
//! only), checks their schemas against the table's columns and estimates
//! rows; GetForeignPaths adds a serial path and, with parallel query, a
//! partial path whose workers take record batches from a shared counter;
//! GetForeignPlan records the referenced columns (fdw_private) and the
//! statistics hints (fdw_exprs: `column op value` clauses the per-batch
//! min/max can refute); BeginForeignScan opens the files again and
//! evaluates the hints' values; IterateForeignScan decodes one record
//! batch at a time (only referenced columns read) and returns its rows as
//! virtual tuples; ExplainForeignScan prints `referenced`, `Stats-Hint`
//! and `filesN`.  Values never leave the batch's Arrow buffers until they
//! are converted into the per-tuple memory.

use std::ffi::{CStr, c_int, c_void};

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::file::{ArrowError, ArrowErrorKind, ArrowFile};
use super::reader::{self, ArrowReader, fields_of};
use super::{options, stats, types};
use crate::errors::raise_plain;
use crate::pg::list::{from_list, to_list};

/// Raise a file error as an ERROR.
pub fn raise(e: ArrowError) -> ! {
    let code = match e.kind {
        ArrowErrorKind::Io => PgSqlErrorCode::ERRCODE_IO_ERROR,
        ArrowErrorKind::Corrupt => PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        ArrowErrorKind::Unsupported => PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
    };
    // a directory named where one file was expected: the option for
    // directories is another
    let hint = e.message.ends_with("is a directory").then_some(
        "The file and files options name Arrow files; to read the files of a directory, use the dir option \
         (with suffix or pattern to choose among them).",
    );
    raise_plain(code, e.message, None, hint)
}

/// Open the files of a foreign table and check them against its columns.
///
/// # Safety
/// `rel` is an open foreign table of arrow_fdw.
pub unsafe fn open_files(rel: pg_sys::Relation) -> (options::TableOptions, Vec<ArrowFile>) {
    // SAFETY: caller's promise.
    unsafe {
        let opts = options::of_table((*rel).rd_id);
        let files: Vec<ArrowFile> =
            opts.files.iter().filter_map(|p| super::modify::open_for_read(p, opts.writable)).collect();
        for f in &files {
            check_columns(rel, f);
        }
        (opts, files)
    }
}

/// Check an opened file's fields against the table's columns: an ERROR
/// naming the first mismatch.
///
/// # Safety
/// `rel` is an open foreign table of arrow_fdw.
pub unsafe fn check_columns(rel: pg_sys::Relation, f: &ArrowFile) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let tupdesc = (*rel).rd_att;
        let attrs = types::live_attrs(tupdesc);
        {
            let fields = f.schema.fields();
            let relname = CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy();
            if fields.len() != attrs.len() {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_FDW_INVALID_DATA_TYPE,
                    format!(
                        "arrow file \"{}\" has {} columns, foreign table \"{relname}\" has {}",
                        f.path,
                        fields.len(),
                        attrs.len()
                    ),
                    None,
                    Some("Define the table with IMPORT FOREIGN SCHEMA, or list the file's columns in order."),
                );
            }
            for (field, &(i, typid)) in fields.iter().zip(&attrs) {
                if let Err(e) = types::check_column(field, typid) {
                    let name =
                        CStr::from_ptr((*crate::pg::compat::tuple_desc_attr(tupdesc, i as i32)).attname.data.as_ptr());
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FDW_INVALID_DATA_TYPE,
                        format!(
                            "column \"{}\" of foreign table \"{relname}\" does not match field \"{}\" of arrow file \"{}\"",
                            name.to_string_lossy(),
                            field.name(),
                            f.path
                        ),
                        Some(e),
                        None,
                    );
                }
            }
        }
    }
}

/// What GetForeignRelSize leaves for the later planner callbacks (and
/// GpuScan's path).
#[repr(C)]
pub struct RelInfo {
    pub rows: f64,
    /// Bytes of the referenced columns in every batch.
    pub bytes: f64,
    pub parallel_workers: i32,
    /// Chunks a device scan of every batch reads: one per record batch
    /// when the engine reads the columns from the files itself (a whole
    /// batch at once, `reader::FILE_CHUNK_ROWS`) ...
    pub chunks_from_files: f64,
    /// ... or one per `pg_strom.chunk_rows` rows of each batch when the
    /// backend hands the columns over in memory.
    pub chunks_in_memory: f64,
    /// Referenced columns the backend converts for a device node, per row
    /// (`reader::host_converts`: decimals, dates, char(n), ...).
    pub host_values: f64,
}

/// The attnums (1-based) a scan of `baserel` needs: its target and quals;
/// a whole-row reference needs every column.
unsafe fn referenced(baserel: *mut pg_sys::RelOptInfo, natts: usize) -> Vec<i16> {
    // SAFETY: planner state.
    unsafe {
        let mut bms: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        let relid = (*baserel).relid;
        pg_sys::pull_varattnos((*(*baserel).reltarget).exprs.cast(), relid, &mut bms);
        for ri in from_list((*baserel).baserestrictinfo) {
            pg_sys::pull_varattnos((*(ri as *mut pg_sys::RestrictInfo)).clause.cast(), relid, &mut bms);
        }
        reader::attnums_of(bms, natts)
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_rel_size(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    relid: pg_sys::Oid,
) {
    // SAFETY: planner callback arguments.
    unsafe {
        let rel = pg_sys::table_open(relid, pg_sys::NoLock as i32);
        let (opts, files) = open_files(rel);
        let tupdesc = (*rel).rd_att;
        let fields = fields_of(tupdesc, &referenced(baserel, (*tupdesc).natts as usize));
        let cols: Vec<usize> = fields.iter().map(|&(f, _)| f).collect();
        let host_values = files.first().map_or(0, |file| {
            fields
                .iter()
                .filter(|&&(f, a)| {
                    let att = crate::pg::compat::tuple_desc_attr(tupdesc, a as i32);
                    reader::host_converts(file.schema.field(f).data_type(), (*att).atttypid, (*att).atttypmod)
                })
                .count()
        });
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        let tuples: i64 = files.iter().map(|f| f.rows()).sum();
        let bytes: u64 = files.iter().map(|f| (0..f.batches.len()).map(|b| f.bytes_read(b, &cols)).sum::<u64>()).sum();
        let info = pg_sys::palloc0(std::mem::size_of::<RelInfo>()) as *mut RelInfo;
        (*info).rows = tuples as f64;
        (*info).bytes = bytes as f64;
        (*info).parallel_workers = opts.parallel_workers.unwrap_or(-1);
        let chunks = |limit: usize| -> f64 {
            let limit = limit.max(1) as i64;
            files.iter().flat_map(|f| f.batches.iter()).map(|b| ((b.rows.max(0) + limit - 1) / limit) as f64).sum()
        };
        (*info).chunks_from_files = chunks(reader::FILE_CHUNK_ROWS);
        (*info).chunks_in_memory = chunks(crate::guc::CHUNK_ROWS.get() as usize);
        (*info).host_values = host_values as f64;
        (*baserel).fdw_private = info.cast();
        (*baserel).tuples = tuples as f64;
        let sel = pg_sys::clauselist_selectivity(
            root,
            (*baserel).baserestrictinfo,
            0,
            pg_sys::JoinType::JOIN_INNER,
            std::ptr::null_mut(),
        );
        (*baserel).rows = pg_sys::clamp_row_est(tuples as f64 * sel);
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_paths(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    _relid: pg_sys::Oid,
) {
    // SAFETY: planner callback arguments; fdw_private set by get_rel_size.
    unsafe {
        let info = &*((*baserel).fdw_private as *const RelInfo);
        let mut qual = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut qual, (*baserel).baserestrictinfo, root);
        let pages = (info.bytes / pg_sys::BLCKSZ as f64).ceil();
        let disk = pg_sys::seq_page_cost * pages;
        // every row read is formed as a tuple, value by value
        let cpu = info.rows * (crate::guc::ARROW_TUPLE_COST.get() + qual.per_tuple);
        let path = |rows: f64, run: f64| {
            crate::pg::foreign_path(root, baserel, rows, qual.startup, qual.startup + run, std::ptr::null_mut())
        };
        pg_sys::add_path(baserel, path((*baserel).rows, disk + cpu).cast());
        if (*baserel).consider_parallel && (*baserel).lateral_relids.is_null() {
            let workers = crate::pg::cost::scan_parallel_workers(baserel, pages, info.parallel_workers);
            if workers > 0 {
                let div = crate::pg::cost::parallel_divisor(workers);
                let p = path(pg_sys::clamp_row_est((*baserel).rows / div), disk + cpu / div);
                (*p).path.parallel_aware = true;
                (*p).path.parallel_safe = true;
                (*p).path.parallel_workers = workers;
                pg_sys::add_partial_path(baserel, p.cast());
            }
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn get_plan(
    root: *mut pg_sys::PlannerInfo,
    baserel: *mut pg_sys::RelOptInfo,
    _relid: pg_sys::Oid,
    _best_path: *mut pg_sys::ForeignPath,
    tlist: *mut pg_sys::List,
    scan_clauses: *mut pg_sys::List,
    outer_plan: *mut pg_sys::Plan,
) -> *mut pg_sys::ForeignScan {
    // SAFETY: planner callback arguments.
    unsafe {
        let rte = *(*root).simple_rte_array.add((*baserel).relid as usize);
        let natts = {
            let rel = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
            let n = (*(*rel).rd_att).natts as usize;
            pg_sys::table_close(rel, pg_sys::NoLock as i32);
            n
        };
        let attnums: Vec<*mut pg_sys::Node> =
            referenced(baserel, natts).into_iter().map(|a| pg_sys::makeInteger(a as i32).cast()).collect();
        let hints = if crate::guc::ARROW_STATS_HINT.get() {
            let quals = from_list(pg_sys::extract_actual_clauses((*baserel).baserestrictinfo, false));
            stats::hint_clauses((*baserel).relid, &quals)
        } else {
            Vec::new()
        };
        let quals = pg_sys::extract_actual_clauses(scan_clauses, false);
        pg_sys::make_foreignscan(
            tlist,
            quals,
            (*baserel).relid,
            to_list(&hints),
            to_list(&attnums),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            outer_plan,
        )
    }
}

/// The executor state of the FDW scan (ForeignScanState.fdw_state).
pub struct ScanState {
    reader: Box<ArrowReader>,
    row: usize,
}

unsafe fn state_of<'a>(node: *mut pg_sys::ForeignScanState) -> Option<&'a mut ScanState> {
    // SAFETY: fdw_state is null or our ScanState.
    unsafe { ((*node).fdw_state as *mut ScanState).as_mut() }
}

unsafe extern "C-unwind" fn free_state(arg: *mut c_void) {
    // SAFETY: registered once per state; EndForeignScan may have run first.
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
pub unsafe extern "C-unwind" fn begin(node: *mut pg_sys::ForeignScanState, eflags: c_int) {
    // SAFETY: executor callback arguments; runs in the query's memory context.
    unsafe {
        let rel = (*node).ss.ss_currentRelation;
        let plan = (*node).ss.ps.plan as *mut pg_sys::ForeignScan;
        let attnums: Vec<i16> =
            from_list((*plan).fdw_private).into_iter().map(|n| (*(n as *mut pg_sys::Integer)).ival as i16).collect();
        let explain_only = eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int != 0;
        let reader =
            ArrowReader::open(rel, &attnums, from_list((*plan).fdw_exprs), &mut (*node).ss.ps, &[], explain_only);
        (*node).fdw_state = Box::into_raw(Box::new(ScanState { reader, row: 0 })).cast();
        let estate = (*node).ss.ps.state;
        crate::pg::memctx::on_reset((*estate).es_query_cxt, free_state, node.cast());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn iterate(node: *mut pg_sys::ForeignScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback; runs in the per-tuple memory context.
    unsafe {
        let slot = (*node).ss.ss_ScanTupleSlot;
        pg_sys::ExecClearTuple(slot);
        let Some(st) = state_of(node) else { return slot };
        st.reader.push_context();
        loop {
            if st.row < st.reader.batch_rows() {
                st.reader.store_row(st.row, slot);
                st.row += 1;
                break;
            }
            st.row = 0;
            if !st.reader.read_next() {
                break;
            }
        }
        st.reader.pop_context();
        slot
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: executor callback.
    unsafe {
        if let Some(st) = state_of(node) {
            st.reader.rescan();
            st.row = 0;
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
        if let Some(st) = state_of(node) {
            st.reader.explain((*node).ss.ps.plan, es);
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn parallel_safe(
    _root: *mut pg_sys::PlannerInfo,
    _rel: *mut pg_sys::RelOptInfo,
    _rte: *mut pg_sys::RangeTblEntry,
) -> bool {
    true
}

#[pg_guard]
pub unsafe extern "C-unwind" fn estimate_dsm(
    _node: *mut pg_sys::ForeignScanState,
    _pcxt: *mut pg_sys::ParallelContext,
) -> pg_sys::Size {
    reader::SHARED_SIZE
}

#[pg_guard]
pub unsafe extern "C-unwind" fn initialize_dsm(
    node: *mut pg_sys::ForeignScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: coordinate is our DSM area of estimate_dsm's size.
    unsafe {
        let s = reader::init_shared(coordinate);
        if let Some(st) = state_of(node) {
            st.reader.attach(s);
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn reinitialize_dsm(
    node: *mut pg_sys::ForeignScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: as initialize_dsm.
    unsafe {
        reader::reset_shared(coordinate);
        if let Some(st) = state_of(node) {
            st.reader.reset();
            st.row = 0;
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn initialize_worker(
    node: *mut pg_sys::ForeignScanState,
    _toc: *mut pg_sys::shm_toc,
    coordinate: *mut c_void,
) {
    // SAFETY: as initialize_dsm.
    unsafe {
        if let Some(st) = state_of(node) {
            st.reader.attach(coordinate.cast());
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn shutdown(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: called before the DSM goes away: keep the totals for EXPLAIN.
    unsafe {
        if let Some(st) = state_of(node) {
            st.reader.detach();
        }
    }
}
