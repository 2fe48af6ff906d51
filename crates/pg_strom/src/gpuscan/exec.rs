//! GpuScan execution: the CustomScanState callbacks.
//!
//! Begin: load the plan's [`GpuScanInfo`], prepare the CPU-side quals and
//! the hoisted parameter expressions.  Exec: `ExecScan` with
//! [`next_tuple`] as the access method; each chunk of up to
//! `pg_strom.chunk_rows` rows is read through the table AM with the query's
//! snapshot (MVCC exactly as a SeqScan sees it), copied, gathered into
//! columns, and filtered by the device program on the active engine.  Rows
//! that pass go through the CPU quals and the projection.  When the engine
//! reports an error for a chunk (an overflow, a division by zero, anything
//! PostgreSQL might or might not raise depending on evaluation order), the
//! chunk takes the CPU path: every qual, in PostgreSQL's order, through
//! ExecQual, so errors and results are exactly PostgreSQL's.  A row the
//! engine cannot compute exactly (and the CPU engine behind a GPU cannot
//! either) takes that path alone (`ROW_ON_CPU`).  Parallel
//! scans share a parallel table scan descriptor in the DSM: blocks are
//! handed out by the table AM, never twice.
//!
//! Over a heap table, the heap direct path (source/heap_direct.rs) goes
//! first where it applies: the GPU service reads the all-visible blocks
//! from the table's files itself, takes their tuples apart and filters
//! them in a join session of no depth, and sends back which rows passed
//! with each block's tuple count; the backend copies those tuples from
//! their pages and returns them (the CPU quals and the projection run on
//! them as on any row).  The other blocks are read as above.
//!
//! An Arrow_Fdw table is read instead through the FDW's reader: record
//! batches (skipped by statistics hints) cut into slices of at most
//! `pg_strom.chunk_rows` rows, whose referenced columns go to the engine
//! in the device layout (native integer and float buffers copied as they
//! are); parallel scans take batches from a counter in the DSM.
//!
//! Rust state and the parallel DSM callbacks: `customscan::node`.

use std::time::Instant;

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::engine::{EvalOutput, ParamValue};
use pgstrom_runtime::join::{JoinSession, JoinSpec, Probed};
use pgstrom_runtime::program::Program;
use pgstrom_runtime::{DeviceError, Engine};

use crate::arrow_fdw::reader::ArrowReader;
use crate::arrow_fdw::stats;
use crate::customscan::counters::Counters;
use crate::customscan::node::{self, DeviceNode, DeviceState};
use crate::customscan::params;
use crate::gpuscan::NAME;
use crate::gpuscan::plan::GpuScanInfo;
use crate::pg::list::from_list;
use crate::pg::memctx::Switched;
use crate::source::Source;
use crate::source::heap_direct::HeapDirect;
use crate::{codegen, engine, errors, guc};

/// A target-list entry the device computes (`GPU Projection`).
pub(crate) struct Projection {
    /// The entry's position in the plan's target list (1-based).
    pub resno: i16,
    /// Its PostgreSQL type (a device type).
    pub type_oid: pg_sys::Oid,
    /// The program, over the same columns and parameters as the filter.
    pub program: Program,
}

/// The target-list entries of `tlist` the device can compute: expressions
/// over the scanned columns (not a bare column or constant), of a device
/// type, without volatile functions, compiled over the
/// filter's columns and parameters (`info.columns`, `info.param_types`
/// and `params` grow by what they read besides).  Decided when the scan
/// begins: the planner hands a scan its final target list only after
/// PlanCustomPath.
///
/// # Safety
/// Executor start; `tlist` is the plan's (after setrefs), `varno` the
/// scanned relation's range-table index.
unsafe fn projections(
    info: &mut GpuScanInfo,
    params: &mut Vec<*mut pg_sys::Node>,
    device_quals: &[*mut pg_sys::Node],
    tlist: *mut pg_sys::List,
    varno: i32,
) -> Vec<Projection> {
    let resolve = |v: *mut pg_sys::Var| {
        // SAFETY: the walker hands valid Vars.
        unsafe { ((*v).varno == varno).then_some((0u8, (*v).varattno)) }
    };
    let mut inputs = codegen::Inputs {
        columns: info.columns.iter().map(|&(a, t)| (0u8, a, t)).collect(),
        params: params.iter().copied().zip(info.param_types.iter().copied()).collect(),
    };
    let mut out = Vec::new();
    // SAFETY: a valid target list (caller).
    unsafe {
        for n in from_list(tlist) {
            let tle = n as *mut pg_sys::TargetEntry;
            let mut e = (*tle).expr as *mut pg_sys::Node;
            while !e.is_null() && (*e).type_ == pg_sys::NodeTag::T_RelabelType {
                e = (*(e as *mut pg_sys::RelabelType)).arg.cast();
            }
            if e.is_null()
                || matches!((*e).type_, pg_sys::NodeTag::T_Var | pg_sys::NodeTag::T_Const | pg_sys::NodeTag::T_Param)
                || !pg_sys::contain_var_clause(e)
                || pg_sys::contain_volatile_functions(e)
            {
                continue;
            }
            let e = (*tle).expr as *mut pg_sys::Node;
            let type_oid = pg_sys::exprType(e);
            if codegen::device_type_of(type_oid).and_then(pgstrom_runtime::catalog::type_info).is_none() {
                continue;
            }
            // CASE WHEN <device quals> THEN e END: the device computes e
            // only for the rows the filter passes (PostgreSQL never
            // evaluates it for the others, nor raises their errors)
            let guarded = if device_quals.is_empty() { e } else { case_when(device_quals, e, type_oid) };
            let mut trial = inputs.clone();
            if let Ok((program, _)) = codegen::compile_projection(guarded, &resolve, &mut trial) {
                inputs = trial;
                out.push(Projection { resno: (*tle).resno, type_oid, program });
            }
        }
    }
    info.columns = inputs.columns.iter().map(|&(_, a, t)| (a, t)).collect();
    info.param_types = inputs.params.iter().map(|&(_, t)| t).collect();
    *params = inputs.params.iter().map(|&(e, _)| e).collect();
    out
}

/// `CASE WHEN <quals> THEN e END` (NULL otherwise), of type `t`.
///
/// # Safety
/// Valid expression nodes; a memory context that outlives their use.
unsafe fn case_when(quals: &[*mut pg_sys::Node], e: *mut pg_sys::Node, t: pg_sys::Oid) -> *mut pg_sys::Node {
    // SAFETY: nodes made like makeNode() does, fields as parse analysis sets them.
    unsafe {
        let collid = pg_sys::exprCollation(e);
        let when = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseWhen>()) as *mut pg_sys::CaseWhen;
        (*when).xpr.type_ = pg_sys::NodeTag::T_CaseWhen;
        (*when).expr = pg_sys::make_ands_explicit(crate::pg::list::to_list(quals)).cast();
        (*when).result = e.cast();
        (*when).location = -1;
        let case = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseExpr>()) as *mut pg_sys::CaseExpr;
        (*case).xpr.type_ = pg_sys::NodeTag::T_CaseExpr;
        (*case).casetype = t;
        (*case).casecollid = collid;
        (*case).args = pg_sys::lappend(std::ptr::null_mut(), when.cast());
        (*case).defresult = pg_sys::makeNullConst(t, pg_sys::exprTypmod(e), collid).cast();
        (*case).location = -1;
        case.cast()
    }
}

/// `pass` of a row the engine could not compute exactly: PostgreSQL
/// evaluates every qual and the projection for it.
const ROW_ON_CPU: u8 = 2;

/// How a GpuScan with GPU Projection forms an output column.
pub(crate) enum Output {
    /// From projection `k`'s values.
    Device(usize),
    /// The target-list entry's expression, evaluated on the CPU.
    Cpu(*mut pg_sys::ExprState),
}

/// The Rust side of a GpuScan node.
pub struct GpuScanExec {
    pub(crate) info: GpuScanInfo,
    /// Every qual, PostgreSQL's order (the CPU path and EPQ rechecks).
    all_quals: *mut pg_sys::ExprState,
    /// The quals the device does not evaluate.
    host_quals: *mut pg_sys::ExprState,
    param_exprs: Vec<*mut pg_sys::ExprState>,
    params: Option<Vec<ParamValue>>,
    /// The table, read chunk by chunk.
    pub(crate) source: Source,
    /// Per row of the chunk: 1 when the device filter passed it.
    pass: Vec<u8>,
    /// The target-list entries the device computes (GPU Projection).
    pub(crate) projections: Vec<Projection>,
    /// Per GPU Projection: its values for every row of the chunk.
    proj_out: Vec<EvalOutput>,
    /// Per target-list entry, with GPU Projection: the index of its
    /// projection, or its ExprState (evaluated on the CPU).
    outputs: Vec<Output>,
    /// This chunk goes through the CPU path.
    cpu_path: bool,
    cursor: usize,
    /// The engine and the counters.
    pub(crate) dev: DeviceState,
    /// A gstore_fdw table with `pg_strom.gstore_device_copy` on: its rows
    /// are filtered by a join session of no depth (a scan) over the
    /// engine's copy (or ranges of row versions with their view), which
    /// judges visibility where the rows are; `session` is that session,
    /// opened at the first chunk.
    store_scan: bool,
    session: Option<Box<dyn JoinSession>>,
    /// The heap direct path (a heap table; source::heap_direct), whose
    /// requests go through `session`, a join of no depth over the
    /// filter's columns (the first `direct_columns` of `info.columns`).
    pub(crate) direct: Option<Box<HeapDirect>>,
    direct_columns: usize,
    /// The chunk's rows are the direct path's copies (`direct.rows`, all
    /// of which passed the filter), not the source's.
    direct_rows: bool,
    /// What the session's engine had read from the files when last asked.
    file_reads: pgstrom_runtime::fileread::ReadStats,
}

// (scan tuples are heap tuples copied into the chunk)
node::device_node!(GpuScanExec, NAME, TTSOpsHeapTuple);

impl DeviceNode for GpuScanExec {
    unsafe fn begin(node: *mut pg_sys::CustomScanState, _estate: *mut pg_sys::EState, eflags: i32) -> GpuScanExec {
        // SAFETY: executor callback; the plan is a GpuScan CustomScan.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let info = GpuScanInfo::from_private((*cscan).custom_private);
            let exprs = from_list((*cscan).custom_exprs);
            let nquals = info.on_device.len();
            if exprs.len() != nquals + info.param_types.len() {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "invalid GpuScan plan: expression count does not match".into(),
                    None,
                    Some("Re-plan the query."),
                );
            }
            let ps = &raw mut (*node).ss.ps;
            let all_quals = pg_sys::ExecInitQual(crate::pg::list::to_list(&exprs[..nquals]), ps);
            // ExecScan must not evaluate the CPU quals a second time: we do.
            let host_quals = (*node).ss.ps.qual;
            (*node).ss.ps.qual = std::ptr::null_mut();
            // GPU Projection: the target-list entries the device computes (over
            // the filter's columns and parameters, and more), and the others
            let mut info = info;
            // (the filter's columns; GPU Projection may read more)
            let direct_columns = info.columns.len();
            let mut params: Vec<*mut pg_sys::Node> = exprs[nquals..].to_vec();
            let rel = (*node).ss.ss_currentRelation;
            // (a scan of a gstore_fdw table's copy returns which rows pass,
            // not values: PostgreSQL projects them)
            let cache = crate::gstore::cache::usable(node, rel);
            let store = if (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE {
                crate::gstore::is_gstore_table((*rel).rd_id)
            } else {
                // (a heap table's GPU cache, where this scan reads it)
                matches!(cache, Some(Ok(())))
            };
            let store_scan = store && guc::GSTORE_DEVICE_COPY.get();
            let projections = if guc::GPU_PROJECTION.get() && !store_scan {
                let device_quals: Vec<*mut pg_sys::Node> =
                    exprs[..nquals].iter().zip(&info.on_device).filter(|(_, d)| **d).map(|(q, _)| *q).collect();
                projections(
                    &mut info,
                    &mut params,
                    &device_quals,
                    (*cscan).scan.plan.targetlist,
                    (*cscan).scan.scanrelid as i32,
                )
            } else {
                Vec::new()
            };
            let param_exprs = params.iter().map(|e| pg_sys::ExecInitExpr((*e).cast(), ps)).collect();
            let outputs = if projections.is_empty() {
                Vec::new()
            } else {
                from_list((*cscan).scan.plan.targetlist)
                    .iter()
                    .map(|&n| {
                        let tle = n as *mut pg_sys::TargetEntry;
                        match projections.iter().position(|p| p.resno == (*tle).resno) {
                            Some(k) => Output::Device(k),
                            None => Output::Cpu(pg_sys::ExecInitExpr((*tle).expr.cast(), ps)),
                        }
                    })
                    .collect()
            };
            let source = Source::open(
                node,
                rel,
                &info.columns,
                None,
                stats::hint_clauses((*cscan).scan.scanrelid, &exprs[..nquals]),
                eflags,
                c"GpuScan chunk",
                cache,
            );
            // the heap direct path: the rows that pass come back with
            // their tuples
            let direct = if source.is_heap() && !store_scan {
                HeapDirect::new(rel, &info.columns[..direct_columns], &[]).map(|mut d| {
                    d.join_only();
                    Box::new(d)
                })
            } else {
                None
            };
            GpuScanExec {
                info,
                all_quals,
                host_quals,
                param_exprs,
                params: None,
                source,
                pass: Vec::new(),
                projections,
                proj_out: Vec::new(),
                outputs,
                cpu_path: false,
                cursor: 0,
                dev: DeviceState::default(),
                store_scan,
                session: None,
                direct,
                direct_columns,
                direct_rows: false,
                file_reads: Default::default(),
            }
        }
    }

    unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: executor callback.
        unsafe { exec(node) }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        self.session = None;
        if let Some(d) = self.direct.as_mut() {
            d.end();
        }
        self.source.end();
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        self.reset_chunk();
        self.source.rescan();
        if let Some(d) = self.direct.as_mut() {
            d.rescan();
        }
        self.params = None; // parameters may have changed
        self.session = None; // (its spec holds them)
        self.file_reads = Default::default();
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: caller's promise.
        unsafe { crate::gpuscan::explain::explain(node, self, ancestors, es) }
    }

    fn source(&mut self) -> &mut Source {
        &mut self.source
    }

    fn device(&mut self) -> &mut DeviceState {
        &mut self.dev
    }
}

/// The engine of this scan, chosen on first use (among the GPUs its
/// storage prefers, when there are several).
pub(crate) fn engine_of(st: &mut GpuScanExec) -> &'static dyn Engine {
    st.dev.engine_of(&st.source)
}

impl GpuScanExec {
    /// The Arrow_Fdw reader, when the scan reads an Arrow table.
    pub(crate) fn arrow_reader(&self) -> Option<&ArrowReader> {
        self.source.arrow()
    }

    /// Drop the chunk's rows (the slot must not point into them).
    fn reset_chunk(&mut self) {
        self.source.clear();
        self.forget_results();
    }

    /// Drop what the engine answered for the chunk.
    fn forget_results(&mut self) {
        self.pass.clear();
        self.proj_out.clear();
        self.cursor = 0;
        self.cpu_path = false;
        self.direct_rows = false;
    }

    /// Rows in the current chunk: the direct path's copies, or the
    /// source's rows.
    fn chunk_len(&self) -> usize {
        match self.direct.as_ref() {
            Some(d) if self.direct_rows => d.rows.len(),
            _ => self.source.len(),
        }
    }

    /// Read the next chunk and filter it.  False at the end of the scan.
    /// While the engine filters it (the GPU service, in another process),
    /// the chunk after it is read ahead into the source's spare buffers.
    unsafe fn fill_chunk(&mut self, node: *mut pg_sys::CustomScanState) -> bool {
        // SAFETY: executor state of a live node.
        unsafe {
            pg_sys::ExecClearTuple((*node).ss.ss_ScanTupleSlot);
            // (next_chunk drops the chunk's rows)
            self.forget_results();
            let limit = guc::CHUNK_ROWS.get().max(1) as usize;
            let snapshot = (*(*node).ss.ps.state).es_snapshot;
            if self.params.is_none() {
                self.params =
                    Some(params::eval_params(&self.param_exprs, &self.info.param_types, (*node).ss.ps.ps_ExprContext));
            }
            if self.store_scan {
                return self.fill_store_chunk(node, snapshot, limit);
            }
            loop {
                if self.fill_direct(node, snapshot) || self.fill_rows(node, snapshot, limit) {
                    return true;
                }
                // (blocks the direct path left to the buffer manager were
                // read; it takes the next ones)
                if !self.direct.as_ref().is_some_and(|d| d.active) {
                    self.count_file_reads();
                    return false;
                }
                pgrx::check_for_interrupts!();
            }
        }
    }

    /// Read the next chunk of rows (through the buffer manager or the
    /// table AM) and filter it.  False when none was left to read.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    unsafe fn fill_rows(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        snapshot: pg_sys::Snapshot,
        limit: usize,
    ) -> bool {
        // SAFETY: caller's promise.
        unsafe {
            let nrows = self.source.next_chunk(snapshot, limit);
            if nrows == 0 {
                return false;
            }
            let mut eng = engine_of(self);
            let started = Instant::now();
            let params = self.params.as_deref().unwrap_or(&[]);
            // the filter, then each GPU Projection: all sent before the
            // next chunk is read ahead (a connection keeps the answers of
            // the earlier requests until they are asked for)
            let programs: Vec<&Program> =
                std::iter::once(&self.info.program).chain(self.projections.iter().map(|p| &p.program)).collect();
            let (cols, bytes) = self.source.column_data();
            let pending = eng.eval_begin(&programs, &cols, params, nrows);
            drop(cols);
            let mut engine_ns = started.elapsed().as_nanos() as u64;
            let ahead = self.source.read_ahead(!pending.is_done(), snapshot, limit);
            let waited = Instant::now();
            let mut results = eng.eval_end(pending);
            engine_ns += waited.elapsed().as_nanos() as u64;
            if let Err(e) = &results
                && e.engine_lost()
            {
                // A scan keeps no state in the service (nor on its faulted
                // GPU): this chunk and the rest of the scan run on this
                // backend's CPU engine.
                warn_finishing_on_cpu(e);
                eng = engine::local_cpu();
                self.dev.engine = Some(eng);
                let (cols, _) = self.source.column_data();
                let params = self.params.as_deref().unwrap_or(&[]);
                results = programs.iter().map(|p| eng.eval_program(p, &cols, params, nrows)).collect();
            }
            let mut c = Counters {
                chunks: 1,
                rows_in: nrows as u64,
                bytes: bytes as u64,
                engine_ns,
                ahead,
                tid_chunks: self.source.chunk_by_tid() as u64,
                ..Counters::default()
            };
            // an error PostgreSQL may or may not raise (it depends on which
            // quals run first), or a value the engine cannot compute
            // exactly, takes the CPU path for the whole chunk
            let (outs, cpu_path) = match results {
                Ok(outs) => (outs, false),
                Err(DeviceError::Sql { .. } | DeviceError::NeedsCpu { .. }) => (Vec::new(), true),
                Err(e) => errors::raise(&format!("GpuScan on {} failed", errors::engine_phrase(eng)), &e),
            };
            if cpu_path {
                self.cpu_path = true;
                c.rows_cpu_path = nrows as u64;
                self.source.note_returned(nrows as u64, nrows as u64);
            } else {
                let mut outs = outs.into_iter();
                let out = outs.next().expect("the filter's answer");
                self.proj_out = outs.collect();
                self.pass = out.values.iter().zip(&out.nulls).map(|(&v, &n)| (n == 0 && v != 0) as u8).collect();
                // rows the engine could not compute exactly: PostgreSQL
                // evaluates them (every qual, the projection), the others
                // are the engine's
                for &i in &out.cpu_rows {
                    self.pass[i as usize] = ROW_ON_CPU;
                }
                for o in &self.proj_out {
                    for &i in &o.cpu_rows {
                        if self.pass[i as usize] == 1 {
                            self.pass[i as usize] = ROW_ON_CPU;
                        }
                    }
                }
                c.rows_cpu_path = self.pass.iter().filter(|&&p| p == ROW_ON_CPU).count() as u64;
            }
            if !self.cpu_path && !self.text_results_here() {
                // a text result in columns this backend does not hold (an
                // Arrow file the GPU service read itself): PostgreSQL
                // projects the chunk
                self.cpu_path = true;
                c.rows_cpu_path = nrows as u64;
                self.source.note_returned(nrows as u64, nrows as u64);
            } else if !self.cpu_path {
                let passed = self.pass.iter().filter(|&&p| p != 0).count() as u64;
                self.source.note_returned(nrows as u64, passed);
                // PostgreSQL sums nfiltered2 over the workers for EXPLAIN
                if let Some(instr) = (*node).ss.ps.instrument.as_mut() {
                    instr.nfiltered2 += self.pass.iter().filter(|&&p| p == 0).count() as f64;
                }
            }
            self.add_counters(c);
            true
        }
    }

    /// The join of no depth (a scan) whose qual is the filter, over the
    /// scan's columns, with the query's parameters.
    fn store_scan_spec(&self) -> JoinSpec<'static> {
        self.scan_spec(self.info.columns.len())
    }

    /// The join of no depth whose qual is the filter, over the first
    /// `ncols` of the scan's columns (the filter's, and more).
    fn scan_spec(&self, ncols: usize) -> JoinSpec<'static> {
        JoinSpec {
            scan_qual: Some(self.info.program.clone()),
            outer_types: self.info.columns[..ncols].iter().map(|&(_, t)| t).collect(),
            depths: Vec::new(),
            params: self.params.clone().unwrap_or_default(),
            agg: None,
        }
    }

    /// Stop the heap direct path: the rest of the scan reads every block
    /// through the buffer manager.
    fn stop_direct(&mut self) {
        if let Some(d) = self.direct.as_mut() {
            d.stop(&mut self.source);
        }
    }

    /// Add the direct path's counters since the last time.
    fn count_direct(&mut self) {
        if let Some(d) = self.direct.as_mut() {
            let direct = d.take_counts();
            self.add_counters(Counters { direct, ..Counters::default() });
        }
    }

    /// One request of the heap direct path; true when it gave this
    /// chunk's rows (the copies of those that passed the filter), false
    /// when the buffer manager's path goes next (blocks wait for it, the
    /// path is done, or the request failed: its blocks are read by the
    /// buffer manager, where an error is raised or the CPU path taken,
    /// exactly as for any chunk).  The session, of no depth, is opened
    /// with the first request; an engine that reads no files (the CPU
    /// engine in the backend) ends the path there.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    unsafe fn fill_direct(&mut self, node: *mut pg_sys::CustomScanState, snapshot: pg_sys::Snapshot) -> bool {
        if !self.direct.as_ref().is_some_and(|d| d.active) {
            return false;
        }
        if self.session.is_none() {
            let eng = engine_of(self);
            if !eng.shared_by_processes() {
                // (no GPU service: nothing reads the files)
                self.stop_direct();
                return false;
            }
            match eng.join_open(&self.scan_spec(self.direct_columns)) {
                Ok(s) => self.session = Some(s),
                Err(e) => {
                    if e.engine_lost() {
                        self.direct_engine_lost(&e);
                    } else {
                        self.stop_direct();
                    }
                    return false;
                }
            }
            // a scan this process makes alone: its blocks dirty in shared
            // buffers from one pass over the descriptors, where cheaper
            // SAFETY: a live node, after the query's snapshot was taken.
            unsafe {
                if !(*(*node).ss.ps.plan).parallel_aware
                    && let Some(d) = self.direct.as_mut()
                {
                    d.scan_buffers_if_cheaper();
                }
            }
        }
        let Some(d) = self.direct.as_deref_mut() else { return false };
        // SAFETY: the query's snapshot, during the scan.
        let Some(pages) = (unsafe { self.source.page_reader(snapshot) }) else {
            d.active = false;
            return false;
        };
        let mut check_ns = 0;
        // SAFETY: during the scan.
        let batch = unsafe { d.next_request(pages, &mut check_ns) };
        self.dev.add_counters(Counters::host(crate::customscan::counters::HOST_BLOCK_CHECKS, check_ns));
        let Some((segno, blocks)) = batch else { return false };
        let session = self.session.as_mut().expect("opened above");
        let started = Instant::now();
        // SAFETY: during the scan.
        let probed = unsafe { d.probe(session.as_mut(), pages, segno, &blocks, false) };
        let engine_ns = started.elapsed().as_nanos() as u64;
        match probed {
            Ok(Some(p)) => {
                let passed = d.rows.len() as u64;
                self.direct_rows = true;
                self.add_counters(Counters { chunks: 1, rows_in: p.nrows as u64, engine_ns, ..Counters::default() });
                // PostgreSQL sums nfiltered2 over the workers for EXPLAIN
                // SAFETY: a live node.
                if let Some(instr) = unsafe { (*node).ss.ps.instrument.as_mut() } {
                    instr.nfiltered2 += (p.nrows as u64).saturating_sub(passed) as f64;
                }
                self.count_direct();
                true
            }
            Ok(None) => {
                self.count_direct();
                false
            }
            Err(e) => {
                d.requeue(pages, segno, &blocks);
                if e.engine_lost() {
                    // the service or its GPU was lost: the blocks go
                    // through the buffer manager, on this backend's CPU
                    // engine
                    self.direct_engine_lost(&e);
                } else if !matches!(e, DeviceError::Sql { .. } | DeviceError::NeedsCpu { .. }) {
                    // (an engine that reads no files: the buffer manager's
                    // path takes the rest)
                    self.stop_direct();
                }
                self.count_direct();
                false
            }
        }
    }

    /// The direct path's engine was lost (the GPU service, or its GPU):
    /// warn, stop the path, and go on with this backend's CPU engine.
    fn direct_engine_lost(&mut self, e: &DeviceError) {
        warn_finishing_on_cpu(e);
        self.stop_direct();
        self.session = None;
        self.dev.engine = Some(engine::local_cpu());
    }

    /// After the last chunk: add what the GPU service read from the heap
    /// files since the last time, by storage path (EXPLAIN ANALYZE).
    fn count_file_reads(&mut self) {
        if self.direct.as_ref().is_none_or(|d| d.counters.blocks == 0) {
            return;
        }
        let Some(Ok(Some(now))) = self.session.as_mut().map(|s| s.file_stats()) else { return };
        let c = Counters::file_reads_since(now, &mut self.file_reads);
        self.add_counters(c);
    }

    /// A session of no depth on `eng` whose scan qual is the filter, the
    /// source's chunks read from `eng`'s copy of the store (brought up to
    /// date now), or as ranges with their view when it keeps none.
    fn open_store_session(&mut self, eng: &'static dyn Engine) -> Result<Box<dyn JoinSession>, DeviceError> {
        let mut s = eng.join_open(&self.store_scan_spec())?;
        let label = errors::engine_phrase(eng);
        // SAFETY: the node's executor callbacks, before the first chunk
        // of this session.
        unsafe { self.source.use_session(Some(s.as_mut()), &label)? };
        Ok(s)
    }

    /// The session lost its engine (the GPU service, or its GPU): warn,
    /// and go on with this backend's CPU engine, the current range's row
    /// versions gathered here.
    fn store_scan_on_cpu(&mut self, e: &DeviceError) {
        warn_finishing_on_cpu(e);
        let eng = engine::local_cpu();
        self.dev.engine = Some(eng);
        // SAFETY: the node's executor callbacks.
        unsafe { self.source.columns_in_memory() };
        match eng.join_open(&self.store_scan_spec()) {
            Ok(s) => self.session = Some(s),
            Err(e) => errors::raise("GpuScan on the CPU engine failed", &e),
        }
    }

    /// fill_chunk for a gstore_fdw table read as ranges of row versions:
    /// the session's scan step judges each version's visibility and the
    /// filter, and returns the rows that pass.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    unsafe fn fill_store_chunk(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        snapshot: pg_sys::Snapshot,
        limit: usize,
    ) -> bool {
        if self.session.is_none() {
            let eng = engine_of(self);
            match self.open_store_session(eng) {
                Ok(s) => self.session = Some(s),
                Err(e) if e.engine_lost() => self.store_scan_on_cpu(&e),
                Err(e) => errors::raise(&format!("GpuScan on {} failed", errors::engine_phrase(eng)), &e),
            }
        }
        // SAFETY: caller's promise.
        let nrows = unsafe { self.source.next_chunk(snapshot, limit) };
        if nrows == 0 {
            return false;
        }
        let started = Instant::now();
        let probe = |s: &mut Box<dyn JoinSession>, src: &Source| {
            let (cols, _) = src.column_data();
            s.set_store_rows(src.store_rows())?;
            let pending = s.probe_begin(&cols, nrows, None, false);
            s.probe_end(pending)
        };
        let mut result = probe(self.session.as_mut().expect("opened"), &self.source);
        if let Err(e) = &result
            && e.engine_lost()
        {
            let e = e.clone();
            self.store_scan_on_cpu(&e);
            result = probe(self.session.as_mut().expect("opened"), &self.source);
        }
        let eng = engine_of(self);
        let bytes = self.source.column_data().1;
        let mut c = Counters {
            chunks: 1,
            rows_in: nrows as u64,
            bytes: bytes as u64,
            engine_ns: started.elapsed().as_nanos() as u64,
            ..Counters::default()
        };
        match result {
            Ok(Probed::Combos(combos)) => {
                self.pass = vec![0u8; nrows as usize];
                for &r in &combos.rows[..combos.count] {
                    self.pass[r as usize] = 1;
                }
                let passed = combos.count as u64;
                self.source.note_returned(nrows as u64, passed);
                // SAFETY: a live node.
                if let Some(instr) = unsafe { (*node).ss.ps.instrument.as_mut() } {
                    instr.nfiltered2 += (nrows as u64 - passed) as f64;
                }
            }
            Ok(Probed::Groups(_)) => errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "GpuScan's join session returned groups".into(),
                None,
                None,
            ),
            // an error PostgreSQL may or may not raise, or a value the
            // engine cannot compute exactly: PostgreSQL evaluates every
            // qual of the chunk's visible rows
            Err(DeviceError::Sql { .. } | DeviceError::NeedsCpu { .. }) => {
                self.cpu_path = true;
                c.rows_cpu_path = nrows as u64;
                self.source.note_returned(nrows as u64, nrows as u64);
            }
            Err(e) => errors::raise(&format!("GpuScan on {} failed", errors::engine_phrase(eng)), &e),
        }
        self.add_counters(c);
        true
    }

    /// Whether every returned row's text result (GPU Projection of text,
    /// bpchar or bytea) can be read here: made by the device, a constant,
    /// or a part of a column this backend holds.
    fn text_results_here(&self) -> bool {
        let varlena = |p: &Projection| pgstrom_runtime::program::is_varlena(p.program.result_type);
        if !self.projections.iter().any(varlena) {
            return true;
        }
        let (cols, _) = self.source.column_data();
        self.projections.iter().zip(&self.proj_out).filter(|(p, _)| varlena(p)).all(|(p, out)| {
            (0..self.pass.len())
                .filter(|&i| self.pass[i] == 1 && out.nulls[i] == 0)
                .all(|i| out.varlena_bytes(i, &p.program.data, &cols).is_some())
        })
    }

    fn add_counters(&mut self, c: Counters) {
        self.dev.add_counters(c);
    }
}

/// The warning of a scan whose engine was lost (the GPU service, or its
/// GPU) and which finishes on this backend's CPU engine.
fn warn_finishing_on_cpu(e: &DeviceError) {
    pgrx::pg_sys::panic::ErrorReport::new(
        PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
        format!("pg_strom: {e}; GpuScan finishes on the CPU engine"),
        "pg_strom",
    )
    .report(PgLogLevel::WARNING);
}

/// ExecScan's access method: the next row that passed the device filter
/// and the CPU quals (or, on the CPU path, every qual).
#[pg_guard]
unsafe extern "C-unwind" fn next_tuple(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let node = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan calls this with our node.
    unsafe {
        let Some(st) = state_of(node) else { return std::ptr::null_mut() };
        let slot = (*ss).ss_ScanTupleSlot;
        let econtext = (*ss).ps.ps_ExprContext;
        loop {
            while st.cursor < st.chunk_len() {
                let i = st.cursor;
                st.cursor += 1;
                if let Some(d) = st.direct.as_mut()
                    && st.direct_rows
                {
                    // a copy of a tuple that passed the device filter
                    pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                    pg_sys::ExecStoreHeapTuple(d.rows.get(i), slot, false);
                    if !st.host_quals.is_null() {
                        (*econtext).ecxt_scantuple = slot;
                        if !pg_sys::ExecQual(st.host_quals, econtext) {
                            if let Some(instr) = (*ss).ps.instrument.as_mut() {
                                instr.nfiltered1 += 1.0;
                            }
                            continue;
                        }
                    }
                    return slot;
                }
                if !st.cpu_path && st.pass[i] == 0 {
                    continue;
                }
                // (a range of a gstore_fdw table's row versions on the CPU
                // path: the snapshot's rows only)
                if st.cpu_path && !st.source.row_visible(i) {
                    continue;
                }
                // the previous row's values and qual results go
                pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                st.source.store(i, slot, (*econtext).ecxt_per_tuple_memory);
                let quals = if st.cpu_path || st.pass[i] == ROW_ON_CPU { st.all_quals } else { st.host_quals };
                if !quals.is_null() {
                    (*econtext).ecxt_scantuple = slot;
                    if !pg_sys::ExecQual(quals, econtext) {
                        if let Some(instr) = (*ss).ps.instrument.as_mut() {
                            instr.nfiltered1 += 1.0;
                        }
                        continue;
                    }
                }
                return slot;
            }
            if !st.fill_chunk(node) {
                return pg_sys::ExecClearTuple(slot);
            }
        }
    }
}

/// EvalPlanQual recheck: every qual on the re-fetched row.
#[pg_guard]
unsafe extern "C-unwind" fn recheck(ss: *mut pg_sys::ScanState, slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: ExecScan calls this with our node and a row of the relation.
    unsafe {
        let Some(st) = state_of(ss.cast()) else { return false };
        let econtext = (*ss).ps.ps_ExprContext;
        (*econtext).ecxt_scantuple = slot;
        st.all_quals.is_null() || pg_sys::ExecQual(st.all_quals, econtext)
    }
}

/// ExecCustomScan: ExecScan, or with GPU Projection [`project_next`].
///
/// # Safety
/// Executor callback of our node.
unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback.
    unsafe {
        let projecting = state_of(node).is_some_and(|st| !st.outputs.is_empty());
        if !projecting || !(*(*node).ss.ps.state).es_epq_active.is_null() {
            // (an EvalPlanQual recheck projects on the CPU, through ExecScan)
            return pg_sys::ExecScan(&raw mut (*node).ss, Some(next_tuple), Some(recheck));
        }
        project_next(node)
    }
}

/// ExecScan with GPU Projection: the next row that passed every qual,
/// its device-computed columns taken from the chunk's projection values
/// and the others evaluated here; a chunk on the CPU path is projected by
/// PostgreSQL.
///
/// # Safety
/// Executor callback of a node with GPU Projection.
unsafe fn project_next(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: a live node whose target list the outputs follow.
    unsafe {
        let result = (*node).ss.ps.ps_ResultTupleSlot;
        let slot = next_tuple(&raw mut (*node).ss);
        if crate::pg::tup_is_null(slot) {
            return pg_sys::ExecClearTuple(result);
        }
        let Some(st) = state_of(node) else { return pg_sys::ExecClearTuple(result) };
        let econtext = (*node).ss.ps.ps_ExprContext;
        (*econtext).ecxt_scantuple = slot;
        let row = st.cursor - 1;
        // (the direct path's rows are projected by PostgreSQL)
        if st.direct_rows || st.cpu_path || st.pass[row] == ROW_ON_CPU {
            return pg_sys::ExecProject((*node).ss.ps.ps_ProjInfo);
        }
        pg_sys::ExecClearTuple(result);
        // the row's values live as long as its scanned row: until the
        // next row resets the per-tuple memory (as ExecProject's do)
        let cxt = Switched::to((*econtext).ecxt_per_tuple_memory);
        let cols = if st.projections.iter().any(|p| pgstrom_runtime::program::is_varlena(p.program.result_type)) {
            st.source.column_data().0
        } else {
            Vec::new()
        };
        for (j, o) in st.outputs.iter().enumerate() {
            let (value, isnull) = match *o {
                Output::Device(k) => {
                    let out = &st.proj_out[k];
                    let p = &st.projections[k];
                    if out.nulls[row] != 0 {
                        (pg_sys::Datum::from(0), true)
                    } else if pgstrom_runtime::program::is_varlena(p.program.result_type) {
                        // (checked when the chunk came back)
                        let bytes = out.varlena_bytes(row, &p.program.data, &cols).unwrap_or_default();
                        (crate::codegen::aggregates::varlena_datum(bytes), false)
                    } else {
                        let v = pgstrom_runtime::agg::KeyValue {
                            bits: out.values[row],
                            hi: out.wide.get(2 * row).copied().unwrap_or(0),
                            len: out.wide.get(2 * row + 1).copied().unwrap_or(0) as i32,
                            isnull: false,
                        };
                        (crate::codegen::aggregates::device_datum(p.type_oid, &v), false)
                    }
                }
                Output::Cpu(state) => {
                    let mut isnull = false;
                    let d = pg_sys::ExecEvalExprSwitchContext(state, econtext, &mut isnull);
                    (d, isnull)
                }
            };
            *(*result).tts_values.add(j) = value;
            *(*result).tts_isnull.add(j) = isnull;
        }
        drop(cxt);
        pg_sys::ExecStoreVirtualTuple(result)
    }
}
