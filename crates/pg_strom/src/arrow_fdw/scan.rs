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

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileDecoder;
use pgrx::pg_sys;
use pgrx::prelude::*;

use super::file::{ArrowError, ArrowFile};
use super::{options, stats, types};
use crate::errors::raise_plain;
use crate::gpuscan::explain::prop_text;
use crate::gpuscan::path::{from_list, to_list};

/// Raise a file error as an ERROR.
pub fn raise(e: ArrowError) -> ! {
    let code = if e.corrupt { PgSqlErrorCode::ERRCODE_DATA_CORRUPTED } else { PgSqlErrorCode::ERRCODE_IO_ERROR };
    raise_plain(code, e.message, None, None)
}

/// Open the files of a foreign table and check them against its columns.
///
/// # Safety
/// `rel` is an open foreign table of arrow_fdw.
pub unsafe fn open_files(rel: pg_sys::Relation) -> (options::TableOptions, Vec<ArrowFile>) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let opts = options::of_table(relid);
        let tupdesc = (*rel).rd_att;
        let attrs = types::live_attrs(tupdesc);
        let files: Vec<ArrowFile> =
            opts.files.iter().map(|p| ArrowFile::open(p).unwrap_or_else(|e| raise(e))).collect();
        for f in &files {
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
                    let name = CStr::from_ptr((*pg_sys::TupleDescAttr(tupdesc, i as i32)).attname.data.as_ptr());
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
        (opts, files)
    }
}

/// What GetForeignRelSize leaves for the later planner callbacks.
#[repr(C)]
struct RelInfo {
    rows: f64,
    /// Bytes of the referenced columns in every batch.
    bytes: f64,
    parallel_workers: i32,
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
        let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
        let mut out = Vec::new();
        let mut x = -1;
        loop {
            x = pg_sys::bms_next_member(bms, x);
            if x < 0 {
                break;
            }
            let attnum = x + offset;
            if attnum == 0 {
                return (1..=natts as i16).collect();
            }
            if attnum > 0 {
                out.push(attnum as i16);
            }
        }
        out
    }
}

/// The field indexes of live attributes `attnums` (files map columns by
/// position, dropped columns skipped), ascending.
unsafe fn fields_of(tupdesc: pg_sys::TupleDesc, attnums: &[i16]) -> Vec<(usize, usize)> {
    // SAFETY: valid descriptor.
    let live = unsafe { types::live_attrs(tupdesc) };
    let mut out: Vec<(usize, usize)> = attnums
        .iter()
        .filter_map(|&a| live.iter().position(|&(i, _)| i == (a - 1) as usize).map(|f| (f, (a - 1) as usize)))
        .collect();
    out.sort_unstable();
    out
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
        let cols: Vec<usize> =
            fields_of(tupdesc, &referenced(baserel, (*tupdesc).natts as usize)).into_iter().map(|(f, _)| f).collect();
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        let tuples: i64 = files.iter().map(|f| f.rows()).sum();
        let bytes: u64 = files.iter().map(|f| (0..f.batches.len()).map(|b| f.bytes_read(b, &cols)).sum::<u64>()).sum();
        let info = pg_sys::palloc0(std::mem::size_of::<RelInfo>()) as *mut RelInfo;
        (*info).rows = tuples as f64;
        (*info).bytes = bytes as f64;
        (*info).parallel_workers = opts.parallel_workers.unwrap_or(-1);
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
        let cpu = info.rows * (pg_sys::cpu_tuple_cost + qual.per_tuple);
        let path = |rows: f64, run: f64| {
            pg_sys::create_foreignscan_path(
                root,
                baserel,
                std::ptr::null_mut(),
                rows,
                0,
                qual.startup,
                qual.startup + run,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        pg_sys::add_path(baserel, path((*baserel).rows, disk + cpu).cast());
        if (*baserel).consider_parallel && (*baserel).lateral_relids.is_null() {
            let workers = if info.parallel_workers >= 0 {
                info.parallel_workers.min(pg_sys::max_parallel_workers_per_gather)
            } else {
                pg_sys::compute_parallel_worker(baserel, pages, -1.0, pg_sys::max_parallel_workers_per_gather)
            };
            if workers > 0 {
                let div = crate::gpuscan::path::parallel_divisor(workers);
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
            stats::hint_clauses((*baserel).relid, (*baserel).baserestrictinfo)
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

/// Shared state of a parallel scan.
#[repr(C)]
struct Shared {
    next: AtomicU64,
    loaded: AtomicU64,
    skipped: AtomicU64,
}

/// One file of a running scan.
struct FileScan {
    file: ArrowFile,
    decoder: Option<FileDecoder>,
    /// Per hint: each batch's (min, max) in the column's type.
    stats: Vec<Option<stats::BatchStats>>,
}

/// Where the scan is, for error messages.
#[derive(Default, Clone, Copy)]
struct Position {
    file: usize,
    batch: usize,
    column: Option<usize>,
    row: usize,
}

/// The executor state of a scan (ForeignScanState.fdw_state).
pub struct ScanState {
    relid: pg_sys::Oid,
    files: Vec<FileScan>,
    /// Referenced (field index, attribute index), ascending by field.
    columns: Vec<(usize, usize)>,
    fields: Vec<usize>,
    targets: Vec<types::Target>,
    hints: Vec<stats::Hint>,
    /// (file, batch) in scan order.
    order: Vec<(usize, usize)>,
    next: usize,
    shared: *mut Shared,
    batch: Option<RecordBatch>,
    row: usize,
    pos: Position,
    loaded: u64,
    skipped: u64,
    errcb: pg_sys::ErrorContextCallback,
}

unsafe extern "C" {
    fn errcontext_msg(fmt: *const c_char, ...) -> c_int;
}

/// The error context of a scan: "arrow_fdw: file ..., record batch ...".
unsafe extern "C-unwind" fn error_context(arg: *mut c_void) {
    // SAFETY: arg is the ScanState that pushed this callback.
    unsafe {
        let st = &*(arg as *const ScanState);
        let Some(f) = st.files.get(st.pos.file) else { return };
        let mut s = format!("arrow_fdw scan of file \"{}\", record batch {}", f.file.path, st.pos.batch);
        if let Some(c) = st.pos.column {
            let field = f.file.schema.field(st.columns[c].0);
            s.push_str(&format!(", column \"{}\", row {}", field.name(), st.pos.row));
        }
        let c = CString::new(s.replace('\0', "")).expect("NULs removed");
        pg_sys::set_errcontext_domain(c"pg_strom".as_ptr());
        errcontext_msg(c"%s".as_ptr(), c.as_ptr());
    }
}

unsafe fn state_of<'a>(node: *mut pg_sys::ForeignScanState) -> Option<&'a mut ScanState> {
    // SAFETY: fdw_state is null or our ScanState.
    unsafe { ((*node).fdw_state as *mut ScanState).as_mut() }
}

unsafe extern "C-unwind" fn free_state(arg: *mut c_void) {
    // SAFETY: registered once per state; fdw_state cleared by EndForeignScan first when it ran.
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
        let (_, files) = open_files(rel);
        let attnums: Vec<i16> =
            from_list((*plan).fdw_private).into_iter().map(|n| (*(n as *mut pg_sys::Integer)).ival as i16).collect();
        let tupdesc = (*rel).rd_att;
        let columns = fields_of(tupdesc, &attnums);
        let fields: Vec<usize> = columns.iter().map(|&(f, _)| f).collect();
        let explain_only = eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int != 0;
        let hints = if crate::guc::ARROW_STATS_HINT.get() {
            stats::Hint::prepare((*plan).fdw_exprs, &columns, &mut (*node).ss.ps)
        } else {
            Vec::new()
        };
        let mut scans = Vec::with_capacity(files.len());
        for file in files {
            let (decoder, stats) = if explain_only {
                (None, Vec::new())
            } else {
                let d = file.decoder(&fields).unwrap_or_else(|e| raise(e));
                let s = hints.iter().map(|h| h.parse_stats(&file)).collect();
                (Some(d), s)
            };
            scans.push(FileScan { file, decoder, stats });
        }
        let order =
            scans.iter().enumerate().flat_map(|(f, s)| (0..s.file.batches.len()).map(move |b| (f, b))).collect();
        let targets = columns
            .iter()
            .map(|&(_, a)| {
                let att = pg_sys::TupleDescAttr(tupdesc, a as i32);
                types::Target::new((*att).atttypid, (*att).atttypmod)
            })
            .collect();
        let state = Box::new(ScanState {
            relid: (*rel).rd_id,
            files: scans,
            columns,
            fields,
            targets,
            hints,
            order,
            next: 0,
            shared: std::ptr::null_mut(),
            batch: None,
            row: 0,
            pos: Position::default(),
            loaded: 0,
            skipped: 0,
            errcb: pg_sys::ErrorContextCallback::default(),
        });
        (*node).fdw_state = Box::into_raw(state).cast();
        let estate = (*node).ss.ps.state;
        let cb =
            pg_sys::MemoryContextAlloc((*estate).es_query_cxt, std::mem::size_of::<pg_sys::MemoryContextCallback>())
                as *mut pg_sys::MemoryContextCallback;
        (*cb).func = Some(free_state);
        (*cb).arg = node.cast();
        (*cb).next = std::ptr::null_mut();
        pg_sys::MemoryContextRegisterResetCallback((*estate).es_query_cxt, cb);
    }
}

impl ScanState {
    /// The next (file, batch) to read that the hints do not rule out.
    unsafe fn next_batch(&mut self) -> Option<(usize, usize)> {
        loop {
            let g = if self.shared.is_null() {
                self.next += 1;
                self.next - 1
            } else {
                // SAFETY: the DSM outlives the scan.
                unsafe { (*self.shared).next.fetch_add(1, Ordering::Relaxed) as usize }
            };
            let &(f, b) = self.order.get(g)?;
            let fs = &self.files[f];
            let keep = self.hints.iter().zip(&fs.stats).all(|(h, s)| h.may_match(s.as_ref().and_then(|s| s[b])));
            let counter = if keep { &mut self.loaded } else { &mut self.skipped };
            *counter += 1;
            if !self.shared.is_null() {
                // SAFETY: as above.
                let s = unsafe { &*self.shared };
                if keep { &s.loaded } else { &s.skipped }.fetch_add(1, Ordering::Relaxed);
            }
            if keep {
                return Some((f, b));
            }
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn iterate(node: *mut pg_sys::ForeignScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback; runs in the per-tuple memory context.
    unsafe {
        let slot = (*node).ss.ss_ScanTupleSlot;
        pg_sys::ExecClearTuple(slot);
        let Some(st) = state_of(node) else { return slot };
        st.errcb.callback = Some(error_context);
        st.errcb.arg = (st as *mut ScanState).cast();
        st.errcb.previous = pg_sys::error_context_stack;
        pg_sys::error_context_stack = &mut st.errcb;
        loop {
            if let Some(batch) = &st.batch
                && st.row < batch.num_rows()
            {
                let natts = (*(*slot).tts_tupleDescriptor).natts as usize;
                for a in 0..natts {
                    *(*slot).tts_isnull.add(a) = true;
                }
                st.pos.row = st.row;
                for (k, &(_, a)) in st.columns.iter().enumerate() {
                    st.pos.column = Some(k);
                    if let Some(d) = types::datum(batch.column(k), st.row, &st.targets[k]) {
                        *(*slot).tts_values.add(a) = d;
                        *(*slot).tts_isnull.add(a) = false;
                    }
                }
                st.pos.column = None;
                st.row += 1;
                pg_sys::ExecStoreVirtualTuple(slot);
                break;
            }
            st.batch = None;
            let Some((f, b)) = st.next_batch() else { break };
            st.pos = Position { file: f, batch: b, column: None, row: 0 };
            let fs = &st.files[f];
            let decoder = fs.decoder.as_ref().expect("not EXPLAIN only");
            st.batch = Some(fs.file.read_batch(decoder, b, &st.fields).unwrap_or_else(|e| raise(e)));
            st.row = 0;
        }
        pg_sys::error_context_stack = st.errcb.previous;
        slot
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: executor callback.
    unsafe {
        if let Some(st) = state_of(node) {
            st.next = 0;
            st.batch = None;
            st.row = 0;
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn end(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: executor callback.
    unsafe { free_state(node.cast()) };
}

fn size_text(n: u64) -> String {
    let f = n as f64;
    match n {
        n if n >= 1 << 30 => format!("{:.2}GB", f / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.2}MB", f / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.2}KB", f / 1024.0),
        n => format!("{n} bytes"),
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn explain(node: *mut pg_sys::ForeignScanState, es: *mut pg_sys::ExplainState) {
    // SAFETY: executor callback.
    unsafe {
        let Some(st) = state_of(node) else { return };
        let names: Vec<String> = st
            .columns
            .iter()
            .map(|&(_, a)| {
                let n = pg_sys::get_attname(st.relid, (a + 1) as i16, true);
                if n.is_null() { format!("${}", a + 1) } else { CStr::from_ptr(n).to_string_lossy().into_owned() }
            })
            .collect();
        prop_text(c"referenced", &names.join(", "), es);
        if !st.hints.is_empty() {
            let plan = (*node).ss.ps.plan;
            let ctx = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, std::ptr::null_mut());
            let mut text = from_list((*(plan as *mut pg_sys::ForeignScan)).fdw_exprs)
                .into_iter()
                .map(|e| {
                    CStr::from_ptr(pg_sys::deparse_expression(e, ctx, (*es).verbose, false))
                        .to_string_lossy()
                        .into_owned()
                })
                .collect::<Vec<_>>()
                .join(", ");
            if (*es).analyze {
                text.push_str(&format!("  [loaded: {}, skipped: {}]", st.loaded, st.skipped));
            }
            prop_text(c"Stats-Hint", &text, es);
        }
        for (i, f) in st.files.iter().enumerate() {
            let read: u64 = (0..f.file.batches.len()).map(|b| f.file.bytes_read(b, &st.fields)).sum();
            let label = CString::new(format!("files{i}")).expect("no NUL");
            prop_text(
                &label,
                &format!("{} (read: {}, size: {})", f.file.path, size_text(read), size_text(f.file.size)),
                es,
            );
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
    std::mem::size_of::<Shared>()
}

#[pg_guard]
pub unsafe extern "C-unwind" fn initialize_dsm(
    node: *mut pg_sys::ForeignScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: coordinate is our DSM area of estimate_dsm's size.
    unsafe {
        let s = coordinate as *mut Shared;
        s.write(Shared { next: AtomicU64::new(0), loaded: AtomicU64::new(0), skipped: AtomicU64::new(0) });
        if let Some(st) = state_of(node) {
            st.shared = s;
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
        let s = &*(coordinate as *const Shared);
        s.next.store(0, Ordering::Relaxed);
        s.loaded.store(0, Ordering::Relaxed);
        s.skipped.store(0, Ordering::Relaxed);
        if let Some(st) = state_of(node) {
            st.batch = None;
            st.row = 0;
            st.loaded = 0;
            st.skipped = 0;
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
            st.shared = coordinate.cast();
        }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn shutdown(node: *mut pg_sys::ForeignScanState) {
    // SAFETY: called before the DSM goes away: keep the totals for EXPLAIN.
    unsafe {
        if let Some(st) = state_of(node)
            && !st.shared.is_null()
        {
            st.loaded = (*st.shared).loaded.load(Ordering::Relaxed);
            st.skipped = (*st.shared).skipped.load(Ordering::Relaxed);
            st.shared = std::ptr::null_mut();
        }
    }
}
