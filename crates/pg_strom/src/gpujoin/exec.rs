//! GpuJoin execution: the CustomScanState callbacks.
//!
//! First call: every inner plan runs to the end (in a parallel plan once
//! for all processes, `shared_build`); its rows are kept on the
//! host (datums copied into the node's memory, for the output) and the
//! columns the programs read are gathered into a column chunk that the
//! engine loads, hashing the keys (a [`JoinSession`]).  Then the heap
//! table is read in chunks exactly as GpuScan reads it (table AM, the
//! query's snapshot, parallel block hand-out); each chunk goes through the
//! scan quals and every depth on the engine, which returns the joined
//! combinations of row indexes.  Each combination becomes one scan tuple
//! (the `custom_scan_tlist`), filled from the heap tuple and the inner
//! rows, which PostgreSQL projects.  After the last chunk, RIGHT and FULL
//! depths return their unmatched inner rows.
//!
//! When the engine stops at an error for a chunk, the scan quals take the
//! CPU path (PostgreSQL evaluates them row by row) and the chunk is joined
//! from the rows that passed; an error the join quals raise then is
//! PostgreSQL's error for a row pair the join compares.  A value the GPU
//! cannot compute exactly (`NeedsCpu`) is joined by the CPU engine.
//! Inner relations larger than `pg_strom.gpu_join_memory_limit` are
//! joined by the CPU engine rather than fail on the device.

use std::time::Instant;

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::agg::{AggGroups, AggKind, AggOp, AggSpec};
use pgstrom_runtime::clock::DeviceClock;
use pgstrom_runtime::engine::ParamValue;
use pgstrom_runtime::join::{Combos, JoinDepthSpec, JoinKind, JoinSession, JoinSpec, MAX_SOURCES, NULL_ROW, Probed};
use pgstrom_runtime::{DeviceError, Engine, EngineKind};

use crate::arrow_fdw::stats;
use crate::chunk::ColumnChunk;
use crate::customscan::counters::{Counters, HOST_BLOCK_CHECKS, HOST_CHUNK_READS};
use crate::customscan::node::{self, DeviceNode, DeviceState};
use crate::customscan::params;
use crate::gpujoin::NAME;
use crate::gpujoin::plan::{AggOutput, GpuJoinInfo, NO_SOURCE};
use crate::gpujoin::shared_build::{self, BuildStats, SharedInner};
use crate::pg::list::{from_list, to_list};
use crate::pg::memctx::Switched;
use crate::pg::memctx::new_context;
use crate::source::Source;
use crate::source::heap_direct::{self, HeapDirect};
use crate::{engine, errors, guc};

mod cached;
pub(crate) mod query_share;

/// `InnerRows::at` of a row not taken apart yet.
const NOT_KEPT: u32 = u32::MAX;

/// One inner relation, loaded: its rows as minimal tuples (in the node's
/// inner memory, or where a parallel build published them in the query's
/// DSA area), taken apart only as far as they are needed.
struct InnerRows {
    tuples: Vec<pg_sys::MinimalTuple>,
    /// A slot of the inner plan's result type that deforms one row.
    slot: *mut pg_sys::TupleTableSlot,
    /// The row `slot` holds (NULL_ROW: none).
    slot_row: u32,
    /// Attributes per row (the inner plan's target list).
    ncols: usize,
    /// Rows taken apart are kept (a GpuJoin, whose output reads inner
    /// rows again and again): `at[row]` is where row `row`'s datums start
    /// in `values` and `nulls` (`at * ncols`), NOT_KEPT until the row is
    /// first read.  Off, rows are deformed one at a time in `slot`
    /// (GpuPreAgg reads only its groups' rows).
    keep: bool,
    at: Vec<u32>,
    values: Vec<pg_sys::Datum>,
    nulls: Vec<bool>,
    nrows: usize,
    /// The columns the programs read, once an engine needs them.
    chunk: Option<ColumnChunk>,
    columns: Vec<(i16, u16)>,
    /// The same columns as a parallel build published them beside the
    /// rows (`ColumnChunk::encode`, in the rows' order), in the DSA area.
    published: Vec<&'static [u8]>,
    /// The rows are not here: a hit in the inner cache whose rows stayed
    /// in the GPU service (`nrows` says how many there are); taken from
    /// it by [`GpuJoinExec::ensure_inner_rows`] before any is read.
    absent: bool,
}

impl InnerRows {
    /// No rows yet; the programs read `columns`; `slot` deforms rows.
    fn new(columns: &[(i16, u16)], slot: *mut pg_sys::TupleTableSlot) -> InnerRows {
        // SAFETY: a live slot of the inner plan's result type.
        let ncols = unsafe { (*(*slot).tts_tupleDescriptor).natts as usize };
        InnerRows {
            tuples: Vec::new(),
            slot,
            slot_row: NULL_ROW,
            ncols,
            keep: false,
            at: Vec::new(),
            values: Vec::new(),
            nulls: Vec::new(),
            nrows: 0,
            chunk: None,
            columns: columns.to_vec(),
            published: Vec::new(),
            absent: false,
        }
    }

    /// Keep row `tup`, which lives as long as the node's inner rows.
    fn add(&mut self, tup: pg_sys::MinimalTuple) {
        if self.nrows.is_multiple_of(1024) {
            pgrx::check_for_interrupts!();
        }
        if self.nrows + 1 >= NULL_ROW as usize {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                "an inner relation of GpuJoin has more than 4294967294 rows".into(),
                None,
                Some("Set pg_strom.enable_gpujoin to off for this query."),
            );
        }
        self.tuples.push(tup);
        self.nrows += 1;
    }

    /// Store row `row` in the slot, deformed.
    ///
    /// # Safety
    /// `row` < nrows; the rows are alive.
    unsafe fn deform(&mut self, row: u32) {
        if self.slot_row != row {
            // SAFETY: caller's promise; the slot does not own the tuple.
            unsafe {
                pg_sys::ExecStoreMinimalTuple(self.tuples[row as usize], self.slot, false);
                pg_sys::slot_getallattrs(self.slot);
            }
            self.slot_row = row;
        }
    }

    /// Keep the datums of each row once it is taken apart.  A process
    /// of a parallel GpuJoin reads the inner rows its own output joins
    /// with: taking every row apart up front cost each process the whole
    /// relation (TPC-H Q21 at SF 10: 1.5 million rows, most of them never
    /// read, about 150 ms in each of 17 processes before the first probe).
    fn keep_rows(&mut self) {
        self.keep = true;
    }

    /// Attribute `attnum` (1-based) of row `row`.
    ///
    /// # Safety
    /// As [`Self::deform`].
    unsafe fn value(&mut self, row: u32, attnum: usize) -> (bool, pg_sys::Datum) {
        if !self.keep {
            // SAFETY: caller's promise.
            unsafe {
                self.deform(row);
                return (*(*self.slot).tts_isnull.add(attnum - 1), *(*self.slot).tts_values.add(attnum - 1));
            }
        }
        if self.at.len() < self.nrows {
            self.at.resize(self.nrows, NOT_KEPT);
        }
        let mut at = self.at[row as usize];
        if at == NOT_KEPT {
            // SAFETY: caller's promise; the datums point into the tuple,
            // which lives as long as the rows.
            unsafe {
                self.deform(row);
                at = (self.values.len() / self.ncols.max(1)) as u32;
                for i in 0..self.ncols {
                    self.values.push(*(*self.slot).tts_values.add(i));
                    self.nulls.push(*(*self.slot).tts_isnull.add(i));
                }
            }
            self.at[row as usize] = at;
        }
        let i = at as usize * self.ncols + attnum - 1;
        (self.nulls[i], self.values[i])
    }

    /// The columns the programs read, made from the rows the first time.
    ///
    /// # Safety
    /// The rows are alive.
    unsafe fn chunk(&mut self) -> &ColumnChunk {
        if self.chunk.is_none() && !self.published.is_empty() {
            // put together what the processes of the build made
            let mut chunk = ColumnChunk::new(&self.columns);
            let whole = chunk.append_all_encoded(&self.published);
            if whole && (chunk.max_attnum() == 0 || chunk.nrows() as usize == self.nrows) {
                self.chunk = Some(chunk);
            }
        }
        if self.chunk.is_none() {
            let mut chunk = ColumnChunk::new(&self.columns);
            if chunk.max_attnum() > 0 {
                for r in 0..self.nrows {
                    if r.is_multiple_of(4096) {
                        pgrx::check_for_interrupts!();
                    }
                    // SAFETY: caller's promise.
                    unsafe {
                        self.deform(r as u32);
                        chunk.append_slot(self.slot);
                    }
                }
            }
            self.chunk = Some(chunk);
        }
        self.chunk.as_ref().expect("made above")
    }
}

/// The runtime's operation for a plan's number; a damaged plan is an ERROR.
fn agg_kind(v: u32) -> AggKind {
    AggKind::from_u32(v).unwrap_or_else(|| {
        errors::raise_plain(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            "invalid GpuPreAgg plan: unknown aggregate operation".into(),
            None,
            Some("Re-plan the query."),
        )
    })
}

/// Which combination fills the scan slot.
#[derive(Clone, Copy)]
enum Combination {
    /// Combination k of the chunk's joined combinations.
    Joined(usize),
    /// The representative combination of group g.
    GroupRep(usize),
}

/// The Rust side of a GpuJoin node.
pub struct GpuJoinExec {
    pub(crate) info: GpuJoinInfo,
    /// The scan quals over the scan tuple (their CPU path).
    scan_quals: *mut pg_sys::ExprState,
    param_exprs: Vec<*mut pg_sys::ExprState>,
    params: Option<Vec<ParamValue>>,
    session: Option<Box<dyn JoinSession>>,
    /// The CPU engine's session, for chunks the GPU cannot finish.
    cpu_session: Option<Box<dyn JoinSession>>,
    inners: Vec<InnerRows>,
    /// Per depth: a slot of the inner plan's result type (InnerRows).
    inner_slots: Vec<*mut pg_sys::TupleTableSlot>,
    inners_loaded: bool,
    /// Per depth, per hash key: the outer table's column (attnum) when the
    /// outer key is a plain column of it.
    key_columns: Vec<Vec<Option<i16>>>,
    inner_cxt: pg_sys::MemoryContext,
    /// Bytes of the inner relations in the engine (EXPLAIN).
    pub(crate) inner_bytes: usize,
    /// Inner rows per depth (EXPLAIN).
    pub(crate) inner_rows: Vec<usize>,
    /// True when the inner relations exceeded the memory limit and the
    /// join ran on the CPU engine.
    pub(crate) over_limit: bool,
    /// The scanned table, read chunk by chunk.
    pub(crate) source: Source,
    /// The values of an Arrow outer row in `tup_slot`.
    row_cxt: pg_sys::MemoryContext,
    /// A heap-tuple slot that deforms the chunk's copies.
    tup_slot: *mut pg_sys::TupleTableSlot,
    /// Which chunk row `tup_slot` holds deformed (NULL_ROW: none).
    read_row: u32,
    max_outer_attnum: i32,
    combos: Combos,
    /// The next combination (or group) of the chunk to return.
    pub(crate) cursor: usize,
    /// GpuPreAgg: the aggregation, and the groups of the current chunk.
    pub(crate) agg_spec: Option<AggSpec>,
    pub(crate) groups: AggGroups,
    unmatched_done: bool,
    /// A parallel plan's node with a RIGHT, FULL, RIGHT SEMI or RIGHT
    /// ANTI depth (gpujoin::shared_matched): None before its first chunk;
    /// then whether this process takes part in the probing (false: a
    /// worker that came after the last process was done returns nothing).
    probing: Option<bool>,
    /// The plan is parallel-aware (each process scans a share).
    parallel_aware: bool,
    /// The session's file reads when last counted.
    file_reads: pgstrom_runtime::fileread::ReadStats,
    /// The heap direct path (a GpuPreAgg over a heap table; source::heap_direct).
    pub(crate) direct: Option<Box<HeapDirect>>,
    /// When `groups` came from the heap direct path: the values of the
    /// grouping keys read from the scanned table's rows (which the
    /// backend never had), `[g * n + j]` for the key column of attribute
    /// number `direct.key_attnos()[j]`; the groups' outer rows are then
    /// their own indexes.
    direct_keys: Option<pgstrom_runtime::heapscan::VarValues>,
    /// The combinations came from the heap direct path (a GpuJoin): their
    /// outer rows are the copies in `direct.rows`.
    direct_rows: bool,
    /// The engine and the counters.
    pub(crate) dev: DeviceState,
    /// Count a chunk's groups as `Partial Groups` when they arrive (false:
    /// GpuPreAgg merges them and counts what it returns).
    pub(crate) count_groups: bool,
    /// The shared inner build in the DSM area, and the query's DSA area
    /// (NULL outside a parallel plan).
    shared: *mut SharedInner,
    dsa: *mut pg_sys::dsa_area,
    /// How long this process took to have every inner relation's rows
    /// (ns), and the shared build's figures (kept at shutdown).
    pub(crate) load_ns: u64,
    pub(crate) build_stats: Option<BuildStats>,
    /// How long this process took to have its session open (ns).
    pub(crate) open_ns: u64,
    /// The cross-query cache: what the inner plans are for it (made once),
    /// the build's key (when it may be cached), and the outcome of a
    /// process of no parallel plan (a parallel plan's is in the DSM area).
    cache_plan: Option<Result<crate::gpujoin::inner_cache::CachePlan, crate::gpujoin::inner_cache::Outcome>>,
    cache_key: Option<Vec<u8>>,
    /// A build to keep in the cache once the session is installed.
    keep_pending: Option<cached::KeepPending>,
    cache_outcome: crate::gpujoin::inner_cache::Outcome,
    /// The key columns' ranges kept with the cached build this process
    /// took its rows from (None: made from the rows' columns).
    kept_ranges: Option<Vec<crate::gpujoin::inner_cache::KeptRange>>,
    /// The inner rows the query's nodes share (exec/query_share.rs): what
    /// this node is to them, and the query and key it looked them up by.
    pub(crate) query_role: query_share::Role,
    query_entry: Option<(usize, String)>,
}

node::device_node!(GpuJoinExec, NAME, TTSOpsVirtual);

impl DeviceNode for GpuJoinExec {
    unsafe fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32) -> GpuJoinExec {
        // SAFETY: executor callback; the plan is a GpuJoin CustomScan.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let info = GpuJoinInfo::from_private((*cscan).custom_private);
            let exprs = from_list((*cscan).custom_exprs);
            let nstatic = info.nscan_quals as usize
                + info.depths.iter().map(|d| d.nquals as usize + d.outer_keys.len()).sum::<usize>();
            if exprs.len() != nstatic + info.param_types.len() {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "invalid GpuJoin plan: expression count does not match".into(),
                    None,
                    Some("Re-plan the query."),
                );
            }
            let ps = &raw mut (*node).ss.ps;
            let scan_quals = pg_sys::ExecInitQual(to_list(&exprs[..info.nscan_quals as usize]), ps);
            let param_exprs = exprs[nstatic..].iter().map(|e| pg_sys::ExecInitExpr((*e).cast(), ps)).collect();
            // the inner plans
            let mut inner_slots = Vec::new();
            for p in from_list((*cscan).custom_plans) {
                let child = pg_sys::ExecInitNode(p.cast(), estate, eflags);
                (*node).custom_ps = pg_sys::lappend((*node).custom_ps, child.cast());
                inner_slots.push(pg_sys::MakeSingleTupleTableSlot(
                    pg_sys::ExecGetResultType(child),
                    &raw const pg_sys::TTSOpsMinimalTuple,
                ));
            }
            let rel = (*node).ss.ss_currentRelation;
            let tup_slot = pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, &raw const pg_sys::TTSOpsHeapTuple);
            let agg_spec = info.agg.as_ref().map(|a| AggSpec {
                keys: a.keys.clone(),
                ops: a
                    .ops
                    .iter()
                    .map(|o| AggOp {
                        kind: agg_kind(o.kind),
                        args: o.args.clone(),
                        filter: o.filter.clone(),
                        scale: o.scale,
                    })
                    .collect(),
            });
            // the outer columns the output reads (an Arrow table's rows carry
            // these), and how far a heap row is deformed
            let outer_attnums: Vec<i16> = info
                .scan_map
                .iter()
                .chain(info.agg.iter().flat_map(|a| {
                    a.outputs.iter().filter_map(|o| match o {
                        AggOutput::Key { column: Some(c), .. } => Some(c),
                        _ => None,
                    })
                }))
                .filter(|(s, _)| *s == 0)
                .map(|(_, a)| *a)
                .collect();
            let max_outer_attnum = outer_attnums
                .iter()
                .chain(info.outer_columns.iter().map(|(a, _)| a))
                .map(|&a| a as i32)
                .max()
                .unwrap_or(0);
            // statistics hints among the scan quals, which read the scan tuple
            // (INDEX_VAR positions, mapped to the outer table's columns)
            let scanrelid = (*cscan).scan.scanrelid;
            let resolve = |v: *mut pg_sys::Var| {
                let at = (*v).varattno as usize;
                ((*v).varno == pg_sys::INDEX_VAR && at >= 1)
                    .then(|| info.scan_map.get(at - 1))
                    .flatten()
                    .and_then(|&(s, a)| (s == 0 && a > 0).then_some(a))
            };
            let hints = stats::hint_clauses_by(scanrelid, &exprs[..info.nscan_quals as usize], &resolve);
            // each depth's outer keys that are plain columns of the outer table
            let mut at = info.nscan_quals as usize;
            let mut key_columns = Vec::new();
            for d in &info.depths {
                at += d.nquals as usize;
                let keys = exprs[at..at + d.outer_keys.len()]
                    .iter()
                    .map(|&e| ((*e).type_ == pg_sys::NodeTag::T_Var).then(|| resolve(e.cast())).flatten())
                    .collect();
                at += d.outer_keys.len();
                key_columns.push(keys);
            }
            let cache = crate::gstore::cache::usable(node, rel);
            let mut source = Source::open(
                node,
                rel,
                &info.outer_columns,
                Some(&outer_attnums),
                hints,
                eflags,
                c"GpuJoin chunk",
                cache,
            );
            if info.agg.is_some() {
                source.set_rows_seldom_read();
            }
            // the heap direct path: the groups never read an outer row (a
            // key that is an outer column comes back with them); a RIGHT
            // or FULL depth's matched inner rows are undone with a dropped
            // answer (HeapDirect::probe)
            let direct = match &info.agg {
                Some(a) if source.is_heap() && a.outputs.iter().all(|o| !o.host_evaluated()) => {
                    let keys: Vec<i16> = a
                        .outputs
                        .iter()
                        .filter_map(|o| match *o {
                            AggOutput::Key { column: Some((0, key)), .. } => Some(key),
                            _ => None,
                        })
                        .collect();
                    HeapDirect::new(rel, &info.outer_columns, &keys).map(Box::new)
                }
                // a GpuJoin: the combinations come back with the tuples
                // they read
                None if source.is_heap() => HeapDirect::new(rel, &info.outer_columns, &[]).map(|mut d| {
                    d.join_only();
                    Box::new(d)
                }),
                _ => None,
            };
            GpuJoinExec {
                info,
                scan_quals,
                param_exprs,
                params: None,
                session: None,
                cpu_session: None,
                inners: Vec::new(),
                inner_slots,
                inners_loaded: false,
                key_columns,
                inner_cxt: new_context((*estate).es_query_cxt, c"GpuJoin inner rows"),
                inner_bytes: 0,
                inner_rows: Vec::new(),
                over_limit: false,
                source,
                row_cxt: new_context((*estate).es_query_cxt, c"GpuJoin outer row"),
                tup_slot,
                read_row: NULL_ROW,
                max_outer_attnum,
                combos: Combos::default(),
                cursor: 0,
                agg_spec,
                groups: AggGroups::default(),
                unmatched_done: false,
                probing: None,
                parallel_aware: (*(*node).ss.ps.plan).parallel_aware,
                file_reads: Default::default(),
                direct,
                direct_keys: None,
                direct_rows: false,
                dev: DeviceState::default(),
                count_groups: true,
                shared: std::ptr::null_mut(),
                dsa: std::ptr::null_mut(),
                load_ns: 0,
                build_stats: None,
                open_ns: 0,
                cache_plan: None,
                cache_key: None,
                keep_pending: None,
                kept_ranges: None,
                cache_outcome: Default::default(),
                query_role: Default::default(),
                query_entry: None,
            }
        }
    }

    unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: executor callback.
        unsafe { pg_sys::ExecScan(&raw mut (*node).ss, Some(next_tuple), Some(recheck)) }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(d) = self.direct.as_mut() {
            d.end();
        }
        self.source.end();
        // SAFETY: the slots made at begin, dropped once.
        unsafe {
            pg_sys::ExecDropSingleTupleTableSlot(self.tup_slot);
            self.inners.clear();
            for slot in self.inner_slots.drain(..) {
                pg_sys::ExecDropSingleTupleTableSlot(slot);
            }
        }
        self.session = None;
        self.cpu_session = None;
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: executor callback.
        unsafe { self.rescan_join(node) }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: caller's promise.
        unsafe { crate::gpujoin::explain::explain(node, self, ancestors, es) }
    }

    fn source(&mut self) -> &mut Source {
        &mut self.source
    }

    fn device(&mut self) -> &mut DeviceState {
        &mut self.dev
    }

    fn shared_size(&self) -> usize {
        if self.info.depths.is_empty() { 0 } else { std::mem::size_of::<SharedInner>() }
    }

    unsafe fn shared_init(&mut self, area: *mut u8, _seg: *mut pg_sys::dsm_segment) {
        if !self.info.depths.is_empty() {
            // SAFETY: caller's promise: shared_size bytes.
            unsafe { SharedInner::init(area.cast()) };
        }
    }

    unsafe fn shared_reinit(&mut self, area: *mut u8) {
        if !self.info.depths.is_empty() {
            // SAFETY: the part shared_init laid out; no process is attached.
            unsafe { (*area.cast::<SharedInner>()).reset(self.dsa) };
        }
    }

    unsafe fn shared_attach(&mut self, area: *mut u8, dsa: *mut pg_sys::dsa_area) {
        if !self.info.depths.is_empty() {
            self.shared = area.cast();
            self.dsa = dsa;
        }
    }

    fn finish_counters(&mut self) {
        self.count_device_clock();
    }

    fn shared_detach(&mut self) {
        // SAFETY: NULL or the still-mapped area.
        if let Some(sh) = unsafe { self.shared.as_ref() } {
            self.build_stats = Some(sh.stats());
        }
        self.shared = std::ptr::null_mut();
    }
}

/// The engine of this join, chosen on first use (among the GPUs the
/// outer table's storage prefers, when there are several).
pub(crate) fn engine_of(st: &mut GpuJoinExec) -> &'static dyn Engine {
    st.dev.engine_of(&st.source)
}

impl GpuJoinExec {
    /// Run every inner plan to the end and keep its rows: in a parallel
    /// plan once for all processes (`shared_build`), else by this process.
    unsafe fn load_inners(&mut self, node: *mut pg_sys::CustomScanState) {
        let t0 = Instant::now();
        // SAFETY: executor state of a live node.
        unsafe {
            self.inners.clear();
            self.kept_ranges = None;
            for &slot in &self.inner_slots {
                pg_sys::ExecClearTuple(slot);
            }
            pg_sys::MemoryContextReset(self.inner_cxt);
            let children: Vec<*mut pg_sys::PlanState> =
                from_list((*node).custom_ps).into_iter().map(|c| c.cast()).collect();
            if let Some(sh) = self.shared.as_ref() {
                if self.dsa.is_null() {
                    errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                        "parallel GpuJoin has no dynamic shared memory area for its inner relations".into(),
                        None,
                        None,
                    );
                }
                // the rows of a build kept by an earlier query, published
                // as this build's by the process that looked
                self.consult_cache_shared(sh, &children);
                let cached = sh.cache_outcome().is_hit();
                if sh.attach() {
                    // the heap direct path's dirty blocks, in shares of
                    // the buffer descriptors
                    if let Some(rel) = self.direct.as_ref().map(|d| d.relation()) {
                        while let Some((from, to)) = sh.claim_descriptors() {
                            let blocks = heap_direct::dirty_blocks_among(rel, from, to);
                            sh.publish_dirty(self.dsa, &blocks);
                        }
                    }
                    for (d, &child) in children.iter().enumerate() {
                        if !cached && (self.info.depths[d].partial_inner || sh.claim(d)) {
                            self.publish_inner(sh, d, child);
                        }
                    }
                    sh.arrive_and_wait(t0.elapsed().as_nanos() as u64);
                }
                for d in 0..children.len() {
                    let inner = self.read_published(sh, d);
                    self.inners.push(inner);
                }
                if let (Some(d), Some(set)) = (self.direct.as_mut(), sh.dirty_set(self.dsa)) {
                    d.use_dirty_set(set);
                }
            } else {
                // (or the rows an earlier node of this query read from
                // the same inner plans, or those of a build an earlier
                // query kept)
                if !self.inners_from_query(node, &children) && !self.inners_from_cache(&children) {
                    for (d, &child) in children.iter().enumerate() {
                        let inner = self.read_inner_plan(d, child);
                        self.inners.push(inner);
                    }
                }
                self.keep_for_query();
                // a scan this process makes alone (a parallel one without a
                // shared build looks its blocks up: its share is unknown)
                if !(*(*node).ss.ps.plan).parallel_aware
                    && let Some(d) = self.direct.as_mut()
                {
                    d.scan_buffers_if_cheaper();
                }
            }
            // a GpuJoin's output reads inner rows many times: keep them
            // taken apart (GpuPreAgg reads only its groups' rows, once)
            if self.agg_spec.is_none() {
                for inner in &mut self.inners {
                    inner.keep_rows();
                }
            }
            self.inner_rows = self.inners.iter().map(|i| i.nrows).collect();
            self.inners_loaded = true;
        }
        self.load_ns = t0.elapsed().as_nanos() as u64;
    }

    /// Depth `d`'s rows from its inner plan `child`, read to the end.
    unsafe fn read_inner_plan(&mut self, d: usize, child: *mut pg_sys::PlanState) -> InnerRows {
        let mut inner = InnerRows::new(&self.info.depths[d].inner_columns, self.inner_slots[d]);
        // SAFETY: a live inner plan of this node.
        unsafe {
            loop {
                let slot = pg_sys::ExecProcNode(child);
                if crate::pg::tup_is_null(slot) {
                    break;
                }
                // a flat copy (expanded and short values made plain) that
                // lives as long as the node; its datums are the output's
                let cxt = Switched::to(self.inner_cxt);
                let mtup = pg_sys::ExecCopySlotMinimalTuple(slot);
                drop(cxt);
                inner.add(mtup);
            }
        }
        inner
    }

    /// Run depth `d`'s inner plan `child` (this process's share of a
    /// partial plan, or the whole plan) and publish its rows, formed as
    /// minimal tuples of the plan's result type, for every process.
    unsafe fn publish_inner(&mut self, sh: &SharedInner, d: usize, child: *mut pg_sys::PlanState) {
        // SAFETY: a live inner plan of this node; the DSA area of the query.
        unsafe {
            let desc = pg_sys::ExecGetResultType(child);
            let natts = (*desc).natts as usize;
            let mut values = vec![pg_sys::Datum::from(0usize); natts];
            let mut nulls = vec![true; natts];
            let mut buf: Vec<u8> = Vec::new();
            let mut nrows = 0u64;
            // the rows' columns too: each process makes those of its rows
            let mut chunk = ColumnChunk::new(&self.info.depths[d].inner_columns);
            let make_columns = chunk.max_attnum() > 0;
            loop {
                let slot = pg_sys::ExecProcNode(child);
                if crate::pg::tup_is_null(slot) {
                    break;
                }
                if nrows.is_multiple_of(1024) {
                    pgrx::check_for_interrupts!();
                }
                pg_sys::slot_getallattrs(slot);
                let sdesc = (*slot).tts_tupleDescriptor;
                if (*sdesc).natts as usize != natts {
                    errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                        format!(
                            "an inner plan of GpuJoin returned {} columns where its result type has {natts}",
                            (*sdesc).natts
                        ),
                        None,
                        None,
                    );
                }
                for i in 0..natts {
                    // a dropped column of a scan's physical row is NULL in
                    // the result type (which may not even know its width)
                    let dropped = (*crate::pg::compat::tuple_desc_attr(sdesc, i as i32)).attisdropped;
                    values[i] = *(*slot).tts_values.add(i);
                    nulls[i] = *(*slot).tts_isnull.add(i) || dropped;
                }
                let mt = crate::pg::compat::form_minimal_tuple(desc, values.as_ptr(), nulls.as_ptr());
                let len = (*mt).t_len as usize;
                buf.extend_from_slice(std::slice::from_raw_parts(mt as *const u8, len));
                buf.resize(shared_build::max_align(buf.len()), 0);
                pg_sys::heap_free_minimal_tuple(mt);
                if make_columns {
                    chunk.append_row(|attnum| {
                        let a = attnum as usize - 1;
                        (nulls[a], values[a])
                    });
                }
                nrows += 1;
                if buf.len() + chunk.bytes() >= shared_build::PUBLISH_BYTES {
                    sh.publish(self.dsa, d, &buf, &chunk.encode(), nrows);
                    buf.clear();
                    chunk.clear();
                    nrows = 0;
                }
            }
            sh.publish(self.dsa, d, &buf, &chunk.encode(), nrows);
        }
    }

    /// Depth `d`'s rows as every process published them (the build is
    /// over): the minimal tuples stay where they are, in the query's DSA
    /// area, which lives as long as the parallel query.
    unsafe fn read_published(&mut self, sh: &SharedInner, d: usize) -> InnerRows {
        let mut inner = InnerRows::new(&self.info.depths[d].inner_columns, self.inner_slots[d]);
        // SAFETY: the area's published minimal tuples, MAXALIGNed, and
        // their columns; the area lives as long as the query.
        unsafe {
            sh.for_each_row(self.dsa, d, |bytes| inner.add(bytes.as_ptr() as pg_sys::MinimalTuple));
            sh.for_each_columns(self.dsa, d, |bytes| {
                inner.published.push(std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()))
            });
            // a summary of kept rows is published as counts without rows
            // (the outcome may say HitLoaded by now: the loader's)
            let mut n = 0u64;
            sh.for_each_counted(self.dsa, d, |rows| n += rows);
            if inner.nrows == 0 && n > 0 {
                inner.nrows = n as usize;
                inner.published.clear();
                inner.absent = true;
            }
        }
        inner
    }

    /// For the depths whose outer rows that match no inner row are dropped
    /// (inner and semi joins), each hash key that is a plain integer or
    /// date column on both sides: (outer attnum, the inner keys' (min,
    /// max), or None when the inner relation has no non-NULL key).  An
    /// Arrow outer table skips the record batches outside these ranges.
    unsafe fn join_key_ranges(&mut self) -> Vec<(i16, Option<(i64, i64)>)> {
        if self.arrow_reader().is_none() {
            // (only an Arrow scan skips by them; the columns they would
            // need may not be made at all, as after a cache hit)
            return Vec::new();
        }
        self.ensure_inner_rows();
        let mut out = Vec::new();
        for (d, k, attnum) in self.range_keys() {
            // SAFETY: the node's loaded rows.
            if let Some(range) = unsafe { self.inner_key_range(d, k) } {
                out.push((attnum, range));
            }
        }
        out
    }

    /// The inner key columns whose ranges an Arrow outer scan can skip
    /// record batches by: (depth, the key's column among the depth's,
    /// outer attnum), for each hash key of an inner, semi, right semi or
    /// right anti join that is one integer or date column of the same type
    /// on both sides.
    fn range_keys(&self) -> Vec<(usize, usize, i16)> {
        let ints = ["INT2", "INT4", "INT8", "DATE"].map(pgstrom_runtime::program::type_id);
        let mut wanted = Vec::new();
        let mut base = self.info.outer_columns.len();
        for (d, depth) in self.info.depths.iter().enumerate() {
            let ncols = depth.inner_columns.len();
            // (an outer row outside the inner keys' range matches nothing:
            // it returns nothing and marks no inner row)
            let drops = matches!(
                JoinKind::from_pg(depth.kind),
                Some(JoinKind::Inner | JoinKind::Semi | JoinKind::RightSemi | JoinKind::RightAnti)
            );
            for (i, attnum) in self.key_columns.get(d).into_iter().flatten().enumerate() {
                let (Some(attnum), true) = (*attnum, drops) else { continue };
                let Some(k) = depth.inner_keys.get(i).and_then(|p| p.single_column()).map(|k| k as usize) else {
                    continue;
                };
                if k < base || k >= base + ncols {
                    continue;
                }
                let inner_type = depth.inner_columns[k - base].1;
                let outer_type = self.info.outer_columns.iter().find(|(a, _)| *a == attnum).map(|x| x.1);
                if outer_type == Some(inner_type) && ints.contains(&inner_type) {
                    wanted.push((d, k - base, attnum));
                }
            }
            base += ncols;
        }
        wanted
    }

    /// The (min, max) of depth `d`'s inner column `k` (an integer or date
    /// column), None inside when it has no non-NULL value; None when the
    /// column is not such a column.  From the ranges kept with a cached
    /// build when there are, else from the rows' columns (made the first
    /// time).
    ///
    /// # Safety
    /// The node's rows are loaded.
    unsafe fn inner_key_range(&mut self, d: usize, k: usize) -> Option<Option<(i64, i64)>> {
        if let Some(kept) = &self.kept_ranges {
            return kept.iter().find(|r| (r.0, r.1) == (d, k)).map(|r| r.2);
        }
        let inner = self.inners.get_mut(d)?;
        let nrows = inner.nrows;
        // SAFETY: caller's promise.
        let cols = unsafe { inner.chunk() }.column_data();
        let c = cols.get(k)?;
        let width = c.values.len() / nrows.max(1);
        if !matches!(width, 2 | 4 | 8) && nrows > 0 {
            return None;
        }
        let mut range: Option<(i64, i64)> = None;
        for r in 0..nrows {
            if c.validity.is_some_and(|v| v[r / 8] & (1 << (r % 8)) == 0) {
                continue;
            }
            let b = &c.values[r * width..(r + 1) * width];
            let v = match width {
                2 => i16::from_le_bytes([b[0], b[1]]) as i64,
                4 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64,
                _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
            };
            range = Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        }
        Some(range)
    }

    /// The ranges of every inner key column an Arrow outer scan could
    /// skip by, as kept with a build in the cache: (depth, column, range).
    ///
    /// # Safety
    /// The node's rows are loaded.
    unsafe fn inner_key_ranges(&mut self) -> Vec<crate::gpujoin::inner_cache::KeptRange> {
        let mut out = Vec::new();
        for (d, k, _) in self.range_keys() {
            if out.iter().any(|r: &crate::gpujoin::inner_cache::KeptRange| (r.0, r.1) == (d, k)) {
                continue;
            }
            // SAFETY: caller's promise.
            if let Some(range) = unsafe { self.inner_key_range(d, k) } {
                out.push((d, k, range));
            }
        }
        out
    }

    /// True once the inner relations were read (EXPLAIN ANALYZE).
    pub(crate) fn inners_were_loaded(&self) -> bool {
        self.inners_loaded
    }

    /// The join request; with `rows`, the inner relations' columns (made
    /// from the rows the first time), else none (an attach to a load).
    unsafe fn join_spec(&mut self, rows: bool) -> JoinSpec<'_> {
        if rows {
            self.ensure_inner_rows();
            for inner in &mut self.inners {
                // SAFETY: the node's loaded rows.
                unsafe { inner.chunk() };
            }
        }
        JoinSpec {
            scan_qual: self.info.scan_qual.clone(),
            outer_types: self.info.outer_columns.iter().map(|c| c.1).collect(),
            depths: self
                .info
                .depths
                .iter()
                .zip(&self.inners)
                .map(|(d, i)| JoinDepthSpec {
                    kind: JoinKind::from_pg(d.kind).unwrap_or(JoinKind::Inner),
                    outer_keys: d.outer_keys.clone(),
                    inner_keys: d.inner_keys.clone(),
                    qual: d.qual.clone(),
                    inner: if rows {
                        i.chunk.as_ref().map(|c| c.column_data()).unwrap_or_default()
                    } else {
                        Vec::new()
                    },
                    ninner: i.nrows as u32,
                })
                .collect(),
            params: self.params.clone().unwrap_or_default(),
            agg: self.agg_spec.clone(),
        }
    }

    /// Load the inner relations into `eng` (kept there under `key` for the
    /// other processes of the query, when given).
    fn open_session(
        &mut self,
        eng: &'static dyn Engine,
        key: Option<u64>,
    ) -> Result<Box<dyn JoinSession>, DeviceError> {
        // SAFETY: the node's loaded rows.
        let spec = unsafe { self.join_spec(true) };
        match key {
            Some(k) => eng.join_open_shared(&spec, k),
            None => eng.join_open(&spec),
        }
    }

    /// Bytes of the inner relations in an engine (their columns, and
    /// hash tables counted as 16 bytes a row), for the memory limit.
    fn inner_load_bytes(&mut self) -> usize {
        self.inners
            .iter_mut()
            .map(|i| {
                // the columns as published (their encoding's size) when
                // they are not made yet: a session opened over a kept
                // build never makes them
                let cols = if i.absent {
                    0
                } else if i.chunk.is_none() && !i.published.is_empty() {
                    i.published.iter().map(|p| p.len()).sum()
                } else {
                    // SAFETY: the node's loaded rows.
                    unsafe { i.chunk() }.bytes()
                };
                cols + i.nrows * 16
            })
            .sum()
    }

    /// The shared build whose engine load this process takes part in: a
    /// parallel plan's, unless `pg_strom.shared_inner_tables` is off.  A
    /// RIGHT, FULL, RIGHT SEMI or RIGHT ANTI depth shares it too: the
    /// flags of the inner rows a process matched belong to its session,
    /// not to the build (each engine reserves them per session over the
    /// shared inner relation), and are merged at the end through the DSM
    /// area (`shared_matched`).  Loaded by each process before, TPC-H
    /// Q21's 1.5 million inner rows took 17 loads and 17 copies in GPU
    /// memory.
    fn shared_load(&self) -> Option<&'static SharedInner> {
        // SAFETY: NULL or the node's part of the mapped DSM area, which
        // outlives every use during execution.
        let sh = unsafe { self.shared.as_ref::<'static>() }?;
        guc::SHARED_INNER_TABLES.get().then_some(sh)
    }

    /// The matched rows of every process, where this node is a parallel
    /// one with a depth that returns inner rows at the end.
    fn shared_matched(&self) -> Option<&'static crate::gpujoin::shared_matched::SharedMatched> {
        if !self.parallel_aware || !self.keeps_inner() {
            return None;
        }
        // SAFETY: NULL or the node's part of the mapped DSM area, which
        // outlives every use during execution.
        unsafe { self.shared.as_ref::<'static>() }.map(|sh| &sh.matched)
    }

    /// True when a depth returns unmatched inner rows at the end (RIGHT,
    /// FULL): its session holds state a restarted service cannot rebuild.
    fn keeps_inner(&self) -> bool {
        self.info.depths.iter().any(|d| JoinKind::from_pg(d.kind).is_some_and(JoinKind::keeps_inner))
    }

    /// The GPU service went away, or its GPU faulted: WARNING, and the
    /// rest of the scan on this backend's CPU engine.
    fn fall_back_to_cpu(&mut self, e: &DeviceError) {
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
            format!("pg_strom: {e}; {} finishes on the CPU engine", self.name()),
            "pg_strom",
        )
        .report(PgLogLevel::WARNING);
        let eng = engine::local_cpu();
        self.dev.engine = Some(eng);
        self.count_device_clock();
        self.cpu_session = None;
        self.stop_direct();
        // SAFETY: called from the node's executor callbacks.
        unsafe { self.source.columns_in_memory() };
        match self.open_session(eng, None) {
            Ok(s) => self.session = Some(s),
            Err(e) => errors::raise(&format!("{} on the CPU engine failed", self.name()), &e),
        }
    }

    /// Make sure the inner relations are loaded and a session is open.
    /// Whether this process ran the node (a whole node under a Parallel
    /// Append may run in another).
    pub(crate) fn ran_here(&self) -> bool {
        self.probing.is_some()
    }

    pub(crate) unsafe fn prepare(&mut self, node: *mut pg_sys::CustomScanState) {
        if self.probing.is_none() {
            // (before the inner build: a process building or waiting for
            // it has not probed yet)
            self.probing = Some(match self.shared_matched() {
                Some(m) => m.attach(),
                None => true,
            });
        }
        if self.probing == Some(false) {
            return;
        }
        let t0 = (!self.inners_loaded).then(Instant::now);
        // SAFETY: caller's promise.
        unsafe { self.prepare_session(node) };
        if let Some(t0) = t0 {
            self.open_ns = t0.elapsed().as_nanos() as u64;
        }
    }

    /// [`Self::prepare`]'s work.
    unsafe fn prepare_session(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: live node.
        unsafe {
            if !self.inners_loaded {
                self.load_inners(node);
                if self.shared_load().is_none() {
                    let ranges = self.join_key_ranges();
                    self.source.set_join_hints(&ranges);
                }
            }
            if self.params.is_none() {
                self.params =
                    Some(params::eval_params(&self.param_exprs, &self.info.param_types, (*node).ss.ps.ps_ExprContext));
            }
        }
        if self.session.is_some() {
            return;
        }
        let shares = engine_of(self).shared_by_processes();
        let Some(sh) = self.shared_load().filter(|_| shares) else {
            let bytes = self.query_bytes();
            let eng = self.engine_for(bytes);
            // over the build an earlier node of the query left in the
            // engine (exec/query_share.rs), or a new one kept for the
            // later nodes
            for share in self.query_builds(eng) {
                // SAFETY: the node's loaded rows.
                let attached = eng.join_attach(&unsafe { self.join_spec(false) }, share);
                match attached {
                    Ok(Some(s)) => {
                        self.query_attached();
                        self.install_session(eng, Ok(s));
                        return;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.install_session(eng, Err(e));
                        return;
                    }
                }
            }
            let share = self.query_share();
            let opened = self.open_session_cached(eng, share);
            if let (Some(share), Ok(_)) = (share, &opened) {
                self.query_opened(eng, share);
            }
            // SAFETY: NULL or the node's part of the DSM area.
            if let Some(sh) = unsafe { self.shared.as_ref() } {
                sh.count_session(false);
            }
            self.install_session(eng, opened);
            self.keep_opened_build();
            return;
        };
        // one process loads the inner relations into its engine for all;
        // the others open their sessions over that load
        let key = sh.share_key();
        if sh.claim_load() {
            // SAFETY: the node's loaded rows; the scan has not read yet.
            let ranges = unsafe {
                // (those kept with a cached build, when it was one)
                let ranges = sh.cached_ranges().unwrap_or_else(|| self.join_key_ranges());
                self.source.set_join_hints(&ranges);
                ranges
            };
            let bytes = self.inner_load_bytes();
            let eng = self.engine_for(bytes);
            let opened = self.open_session_cached(eng, Some(key));
            // (also after a failure: the others then try their own)
            sh.loaded(bytes as u64, &ranges);
            sh.count_session(false);
            self.install_session(eng, opened);
            // (the others open their sessions meanwhile)
            self.keep_opened_build();
            // SAFETY: the DSM area's build, which is over.
            unsafe { sh.wait_sessions() };
            return;
        }
        // SAFETY: the DSM area's build; another process claimed the load.
        let (bytes, ranges) = unsafe { sh.wait_loaded() };
        // SAFETY: before the scan reads.
        unsafe { self.source.set_join_hints(&ranges) };
        let eng = self.engine_for(bytes as usize);
        // SAFETY: the node's loaded rows.
        let attached = eng.join_attach(&unsafe { self.join_spec(false) }, key);
        match attached {
            Ok(Some(s)) => {
                sh.count_session(true);
                self.install_session(eng, Ok(s));
            }
            // the load is gone (its process finished already) or on
            // another engine: this process loads its own, for the others
            // that come later
            Ok(None) => {
                let opened = self.open_session(eng, Some(key));
                sh.count_session(false);
                self.install_session(eng, opened);
            }
            Err(e) => {
                sh.count_session(false);
                self.install_session(eng, Err(e));
            }
        }
    }

    /// The engine the inner relations (`bytes` of them) are loaded into:
    /// the node's, or the CPU engine when they pass
    /// `pg_strom.gpu_join_memory_limit` on a GPU.
    fn engine_for(&mut self, bytes: usize) -> &'static dyn Engine {
        let eng = engine_of(self);
        if eng.kind() == EngineKind::Gpu && bytes as f64 > guc::GPU_JOIN_MEMORY_LIMIT.get() as f64 * 1024.0 {
            let cpu = engine::cpu();
            self.dev.engine = Some(cpu);
            self.over_limit = true;
            return cpu;
        }
        eng
    }

    /// Take the session `opened` on `eng`, or fall back or fail as its
    /// error says.
    fn install_session(&mut self, eng: &'static dyn Engine, opened: Result<Box<dyn JoinSession>, DeviceError>) {
        match opened {
            Ok(mut s) => {
                self.inner_bytes = s.inner_bytes();
                // a failure only means the columns go in memory (a lost
                // service shows again at the first chunk, which falls back)
                let _ = self.source.offer_files(s.as_mut());
                // a gstore_fdw table: the engine's copy brought up to date
                // (or ranges of row versions gathered here)
                let label = errors::engine_phrase(eng);
                let copy: Option<&mut dyn JoinSession> =
                    if guc::GSTORE_DEVICE_COPY.get() { Some(s.as_mut()) } else { None };
                // SAFETY: the node's executor callbacks, before a chunk.
                let used = unsafe { self.source.use_session(copy, &label) };
                if let Err(e) = used {
                    errors::raise(
                        &format!("{} on {label} failed to bring its copy of the GPU store up to date", self.name()),
                        &e,
                    );
                }
                self.session = Some(s);
            }
            // as at a chunk: nothing is left on the lost engine
            Err(e) if e.engine_lost() && !self.keeps_inner() => {
                self.fall_back_to_cpu(&e);
                self.inner_bytes = self.session.as_ref().map_or(0, |s| s.inner_bytes());
            }
            Err(e) => errors::raise(
                &format!("{} on {} failed to load its inner relations", self.name(), errors::engine_phrase(eng)),
                &e,
            ),
        }
    }

    /// Drop the chunk's rows.
    unsafe fn reset_chunk(&mut self) {
        // SAFETY: the slot may point into the rows about to go.
        unsafe { pg_sys::ExecClearTuple(self.tup_slot) };
        self.source.clear();
        self.combos = Combos::default();
        self.groups = AggGroups::default();
        self.direct_keys = None;
        self.direct_rows = false;
        self.cursor = 0;
        self.read_row = NULL_ROW;
    }

    /// Deform chunk row `row` into the read slot.
    unsafe fn deform_outer(&mut self, row: u32) {
        if self.read_row != row {
            // SAFETY: row is a row of the current chunk.
            unsafe {
                // (what the previous row made there goes: its whole-row
                // value; an Arrow row's values)
                pg_sys::MemoryContextReset(self.row_cxt);
                match self.direct.as_mut() {
                    Some(d) if self.direct_rows => {
                        pg_sys::ExecStoreHeapTuple(d.rows.get(row as usize), self.tup_slot, false);
                    }
                    _ => self.source.store(row as usize, self.tup_slot, self.row_cxt),
                }
                if self.max_outer_attnum > 0 {
                    pg_sys::slot_getsomeattrs(self.tup_slot, self.max_outer_attnum);
                }
            }
            self.read_row = row;
        }
    }

    /// Fill the scan slot with combination `k` of `combos`.
    unsafe fn fill_slot(&mut self, slot: *mut pg_sys::TupleTableSlot, k: usize) {
        // SAFETY: as fill_slot_at.
        unsafe { self.fill_slot_at(slot, Combination::Joined(k)) }
    }

    /// Fill the scan slot with the representative combination of group `g`.
    pub(crate) unsafe fn fill_slot_group(&mut self, slot: *mut pg_sys::TupleTableSlot, g: usize) {
        // SAFETY: as fill_slot_at.
        unsafe { self.fill_slot_at(slot, Combination::GroupRep(g)) }
    }

    /// Fill the scan slot with each scan_map entry's value at combination `at`.
    unsafe fn fill_slot_at(&mut self, slot: *mut pg_sys::TupleTableSlot, at: Combination) {
        // SAFETY: the slot has the custom_scan_tlist's descriptor, one
        // attribute per scan_map entry.
        unsafe {
            pg_sys::ExecClearTuple(slot);
            for i in 0..self.info.scan_map.len() {
                let (s, key) = self.info.scan_map[i];
                let row = match at {
                    _ if s == NO_SOURCE => NULL_ROW,
                    Combination::Joined(k) => self.combos.get(s as usize, k),
                    Combination::GroupRep(g) => self.groups.row(s as usize, g),
                };
                let (isnull, value) = self.source_value(s, key, row);
                *(*slot).tts_isnull.add(i) = isnull;
                *(*slot).tts_values.add(i) = value;
            }
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }

    /// The Arrow_Fdw reader of an Arrow outer table, for EXPLAIN.
    pub(crate) fn arrow_reader(&self) -> Option<&crate::arrow_fdw::reader::ArrowReader> {
        self.source.arrow()
    }

    /// "GpuJoin" or "GpuPreAgg", for messages.
    pub(crate) fn name(&self) -> &'static str {
        if self.agg_spec.is_some() { "GpuPreAgg" } else { "GpuJoin" }
    }

    /// Raise the engine's error `e` as this node's: "GpuJoin on the GPU
    /// failed" and the error's SQLSTATE, detail and hint.
    pub(crate) fn raise_engine_error(&mut self, e: &DeviceError) -> ! {
        errors::raise(&format!("{} on {} failed", self.name(), errors::engine_phrase(engine_of(self))), e)
    }

    /// The value of column `key` of source `s` at `row` (NULL at
    /// NULL_ROW, the NULL-extended side).
    pub(crate) unsafe fn source_value(&mut self, s: u8, key: i16, row: u32) -> (bool, pg_sys::Datum) {
        // SAFETY: row is a row of the current chunk (s = 0) or of inner
        // relation s.
        unsafe {
            if row == NULL_ROW {
                (true, pg_sys::Datum::from(0))
            } else if s == 0
                && let (Some(values), Some(d)) = (&self.direct_keys, &self.direct)
            {
                // a key the heap direct path sent back for group `row`
                let attnos = d.key_attnos();
                match attnos.iter().position(|&a| a == key).and_then(|j| values.get(row as usize * attnos.len() + j)) {
                    Some(None) => (true, pg_sys::Datum::from(0)),
                    Some(Some(bytes)) => (false, crate::codegen::datum::varlena_datum(bytes)),
                    None => errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                        format!("the heap direct path returned no value of attribute {key} for group {row}"),
                        None,
                        None,
                    ),
                }
            } else if s == 0 {
                self.deform_outer(row);
                if key > 0 {
                    let a = (key - 1) as usize;
                    (*(*self.tup_slot).tts_isnull.add(a), *(*self.tup_slot).tts_values.add(a))
                } else if key < 0 {
                    // a system column (ctid, tableoid, xmin, ...) of the row
                    let mut isnull = false;
                    let get = (*(*self.tup_slot).tts_ops).getsysattr.expect("slots read system columns");
                    let d = get(self.tup_slot, key as i32, &mut isnull);
                    (isnull, d)
                } else {
                    // the whole row, made in the row's context (reset for
                    // the next outer row)
                    let _cxt = Switched::to(self.row_cxt);
                    let d = pg_sys::ExecFetchSlotHeapTupleDatum(self.tup_slot);
                    (false, d)
                }
            } else {
                if self.inners[s as usize - 1].absent {
                    self.ensure_inner_rows();
                }
                self.inners[s as usize - 1].value(row, key as usize)
            }
        }
    }

    /// The bytes of a variable-length value of inner source `s` (>= 1),
    /// column `key`, row `row` (None: NULL), detoasted.
    pub(crate) fn inner_bytes_of(&mut self, s: u8, key: i16, row: u32) -> Option<Vec<u8>> {
        if s == 0 {
            return None;
        }
        // SAFETY: an inner row of the loaded relations; a varlena column
        // (the plan's text, bpchar or bytea key), copied out before any
        // detoasted copy is freed.
        unsafe {
            let (isnull, d) = self.source_value(s, key, row);
            if isnull {
                return None;
            }
            let p = d.cast_mut_ptr::<pg_sys::varlena>();
            let v = pg_sys::pg_detoast_datum_packed(p);
            let len = pgrx::varlena::varsize_any_exhdr(v);
            let data = pgrx::varlena::vardata_any(v) as *const u8;
            let out = std::slice::from_raw_parts(data, len).to_vec();
            if v != p {
                pg_sys::pfree(v.cast());
            }
            Some(out)
        }
    }

    /// The scan quals' CPU path: the chunk rows that pass them.
    unsafe fn cpu_scan_quals(&mut self, node: *mut pg_sys::CustomScanState) -> Vec<u32> {
        let n = self.source.len() as u32;
        if self.info.nscan_quals == 0 {
            // SAFETY: the node's executor callbacks.
            return (0..n).filter(|&r| unsafe { self.source.row_visible(r as usize) }).collect();
        }
        // SAFETY: live node; the scan slot is ours until the chunk's rows
        // are returned.
        unsafe {
            let slot = (*node).ss.ss_ScanTupleSlot;
            let econtext = (*node).ss.ps.ps_ExprContext;
            let saved = std::mem::take(&mut self.combos);
            let mut pass = Vec::new();
            for r in 0..n {
                if !self.source.row_visible(r as usize) {
                    continue;
                }
                // a combination of the outer row alone
                self.combos =
                    Combos { nsources: MAX_SOURCES, count: 1, rows: vec![NULL_ROW; MAX_SOURCES], ..Combos::default() };
                self.combos.rows[0] = r;
                self.fill_slot(slot, 0);
                (*econtext).ecxt_scantuple = slot;
                pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                if pg_sys::ExecQual(self.scan_quals, econtext) {
                    pass.push(r);
                }
            }
            pg_sys::ExecClearTuple(slot);
            self.combos = saved;
            pass
        }
    }

    /// The next chunk's combinations or groups: from the heap direct path
    /// while it runs, else read here and joined.  False at the end of the
    /// scan.
    pub(crate) unsafe fn fill_chunk(&mut self, node: *mut pg_sys::CustomScanState) -> bool {
        if self.probing == Some(false) {
            return false;
        }
        loop {
            pgrx::check_for_interrupts!();
            // SAFETY: executor state of a live node.
            unsafe {
                pg_sys::ExecClearTuple((*node).ss.ss_ScanTupleSlot);
                self.reset_chunk();
                if self.fill_direct(node) || self.fill_chunk_rows(node) {
                    return true;
                }
            }
            // (blocks the direct path left to the buffer manager were read;
            // it takes the next ones)
            if !self.direct.as_ref().is_some_and(|d| d.active) {
                return false;
            }
        }
    }

    /// Stop the heap direct path: the rest of the scan reads every block
    /// through the buffer manager.
    fn stop_direct(&mut self) {
        if let Some(d) = self.direct.as_mut() {
            d.stop(&mut self.source);
        }
    }

    /// One request of the heap direct path; true when it gave this
    /// chunk's groups, false when the buffer manager's path goes next
    /// (blocks wait for it, the path is done, or the request failed: its
    /// blocks are read by the buffer manager, where a device error is
    /// raised, or taken by the CPU path, exactly as for any chunk).
    unsafe fn fill_direct(&mut self, node: *mut pg_sys::CustomScanState) -> bool {
        let keeps_inner = self.keeps_inner();
        let Some(d) = self.direct.as_deref_mut() else { return false };
        if !d.active || self.session.is_none() {
            return false;
        }
        // SAFETY: executor state of a live node.
        let snapshot = unsafe { (*(*node).ss.ps.state).es_snapshot };
        // SAFETY: the query's snapshot, during the scan.
        let Some(pages) = (unsafe { self.source.page_reader(snapshot) }) else {
            d.active = false;
            return false;
        };
        let mut check_ns = 0;
        // SAFETY: during the scan.
        let batch = unsafe { d.next_request(pages, &mut check_ns) };
        self.dev.add_counters(Counters::host(HOST_BLOCK_CHECKS, check_ns));
        let Some((segno, blocks)) = batch else { return false };
        let session = self.session.as_mut().expect("checked above");
        let started = Instant::now();
        // SAFETY: during the scan.
        let probed = unsafe { d.probe(session.as_mut(), pages, segno, &blocks, keeps_inner) };
        let engine_ns = started.elapsed().as_nanos() as u64;
        match probed {
            Ok(Some(p)) if !d.aggregates() => {
                // a GpuJoin's combinations, their outer rows copied
                let mut c = Counters { chunks: 1, rows_in: p.nrows as u64, bytes: 0, engine_ns, ..Counters::default() };
                for (i, n) in p.combos.stage_counts.iter().enumerate().take(MAX_SOURCES) {
                    c.stage[i] = *n;
                }
                self.combos = p.combos;
                self.direct_rows = true;
                self.add_counters(c);
                self.count_direct();
                true
            }
            Ok(Some(p)) => {
                let mut c = Counters {
                    chunks: 1,
                    rows_in: p.nrows as u64,
                    bytes: 0,
                    engine_ns,
                    groups: if self.count_groups { p.groups.count as u64 } else { 0 },
                    ..Counters::default()
                };
                for (i, n) in p.groups.stage_counts.iter().enumerate().take(MAX_SOURCES) {
                    c.stage[i] = *n;
                }
                self.groups = p.groups;
                self.direct_keys = None;
                if !d.key_attnos().is_empty() {
                    // the groups' outer rows were the service's: each
                    // group's key values came back instead
                    let count = self.groups.count;
                    for (g, r) in self.groups.rows[..count].iter_mut().enumerate() {
                        *r = g as u32;
                    }
                    self.direct_keys = Some(p.keys);
                }
                self.add_counters(c);
                self.count_direct();
                true
            }
            Ok(None) => {
                self.count_direct();
                false
            }
            Err(e) => {
                d.requeue(pages, segno, &blocks);
                if keeps_inner
                    && !e.engine_lost()
                    && let Err(e2) = session.restore_matched()
                {
                    // the failed request's rows may have marked inner rows
                    // matched before its blocks changed; they are read again
                    errors::raise(&format!("{} could not undo a heap direct request", self.name()), &e2);
                }
                if e.engine_lost() && !keeps_inner {
                    // the service or its GPU was lost (a fault): say so, as
                    // the chunk path does, and finish on this backend's CPU
                    // engine (the blocks go through the buffer manager)
                    self.fall_back_to_cpu(&e);
                } else if !matches!(e, DeviceError::Sql { .. } | DeviceError::NeedsCpu { .. }) {
                    // (an engine that reads no files, a lost service: the
                    // buffer manager's path handles the rest, falling back
                    // as it does)
                    self.stop_direct();
                }
                self.count_direct();
                false
            }
        }
    }

    /// Add the direct path's counters since the last time.
    fn count_direct(&mut self) {
        if let Some(d) = self.direct.as_mut() {
            let direct = d.take_counts();
            self.add_counters(Counters { direct, ..Counters::default() });
        }
    }

    /// Read the next chunk and join it.  False at the end of the scan.
    unsafe fn fill_chunk_rows(&mut self, node: *mut pg_sys::CustomScanState) -> bool {
        // SAFETY: executor state of a live node.
        unsafe {
            pg_sys::ExecClearTuple((*node).ss.ss_ScanTupleSlot);
            self.reset_chunk();
            let snapshot = (*(*node).ss.ps.state).es_snapshot;
            let limit = guc::CHUNK_ROWS.get().max(1) as usize;
            let reading = Instant::now();
            let nrows = self.source.next_chunk(snapshot, limit);
            let mut read_ns = reading.elapsed().as_nanos() as u64;
            if nrows == 0 {
                self.add_counters(Counters::host(HOST_CHUNK_READS, read_ns));
                return false;
            }
            let started = Instant::now();
            let mut cpu_rows = 0u64;
            let agg = self.agg_spec.is_some();
            let probe = |s: &mut Box<dyn JoinSession>,
                         cols: &[pgstrom_runtime::engine::ColumnData<'_>],
                         sel,
                         rows: Option<pgstrom_runtime::devstore::StoreRows>| {
                s.set_store_rows(rows)?;
                let pending = s.probe_begin(cols, nrows, sel, agg);
                s.probe_end(pending)
            };
            // the chunk goes to the engine; while it joins (the GPU
            // service, in another process) the next chunk is read ahead
            let (cols, _) = self.source.column_data();
            let session = self.session.as_mut().expect("prepared");
            let pending = match session.set_store_rows(self.source.store_rows()) {
                Ok(()) => session.probe_begin(&cols, nrows, None, agg),
                Err(e) => pgstrom_runtime::engine::Pending::Done(Err(e)),
            };
            drop(cols);
            let mut engine_ns = started.elapsed().as_nanos() as u64;
            let reading = Instant::now();
            let ahead = self.source.read_ahead(!pending.is_done(), snapshot, limit);
            read_ns += reading.elapsed().as_nanos() as u64;
            let waited = Instant::now();
            let mut first = self.session.as_mut().expect("prepared").probe_end(pending);
            engine_ns += waited.elapsed().as_nanos() as u64;
            if let Err(e) = &first
                && e.engine_lost()
                && !self.keeps_inner()
            {
                // No inner row's "matched" flag is lost with the service
                // (or with its faulted GPU): the inner relations are loaded
                // again into this backend's CPU engine, which finishes the
                // scan.
                let e = e.clone();
                self.fall_back_to_cpu(&e);
                let (cols, _) = self.source.column_data();
                first = probe(self.session.as_mut().expect("reopened"), &cols, None, self.source.store_rows());
            }
            let bytes = self.source.column_data().1;
            let result = match first {
                Ok(c) => Ok(c),
                Err(DeviceError::Sql { .. } | DeviceError::NeedsCpu { .. }) => {
                    let on_gpu = engine_of(self).kind() == EngineKind::Gpu;
                    let sel = self.cpu_scan_quals(node);
                    cpu_rows = nrows as u64;
                    let (cols, _) = self.source.column_data();
                    match probe(self.session.as_mut().expect("prepared"), &cols, Some(&sel), self.source.store_rows()) {
                        Err(DeviceError::NeedsCpu { .. }) if on_gpu => {
                            drop(cols);
                            self.source.columns_in_memory();
                            if self.cpu_session.is_none() {
                                match self.open_session(engine::cpu(), None) {
                                    Ok(s) => self.cpu_session = Some(s),
                                    Err(e) => errors::raise(&format!("{} on the CPU engine failed", self.name()), &e),
                                }
                            }
                            let (cols, _) = self.source.column_data();
                            probe(
                                self.cpu_session.as_mut().expect("opened"),
                                &cols,
                                Some(&sel),
                                self.source.store_rows(),
                            )
                        }
                        Err(DeviceError::NeedsCpu { .. }) if self.source.reads_files() => {
                            // a file column the engine did not take (a
                            // decimal longer than its type allows): the
                            // columns come from this backend from now on,
                            // whose conversion raises PostgreSQL's error
                            drop(cols);
                            self.source.columns_in_memory();
                            let (cols, _) = self.source.column_data();
                            probe(self.session.as_mut().expect("prepared"), &cols, Some(&sel), self.source.store_rows())
                        }
                        other => other,
                    }
                }
                Err(e) => Err(e),
            };
            let out = match result {
                Ok(c) => c,
                Err(e) => {
                    if matches!(e, DeviceError::NeedsCpu { .. })
                        && let Some(params) = &self.params
                    {
                        // a row needed a parameter whose evaluation failed:
                        // PostgreSQL would have raised its error there (the
                        // states and context the parameters came from)
                        params::reraise_failed_param(&self.param_exprs, params, (*node).ss.ps.ps_ExprContext);
                    }
                    self.raise_engine_error(&e)
                }
            };
            let stage_counts = match &out {
                Probed::Combos(c) => c.stage_counts.clone(),
                Probed::Groups(g) => g.stage_counts.clone(),
            };
            let mut c = Counters {
                chunks: 1,
                rows_in: nrows as u64,
                rows_cpu_path: cpu_rows,
                bytes: bytes as u64,
                file_bytes: self.source.file_bytes() as u64,
                engine_ns,
                ahead,
                tid_chunks: self.source.chunk_by_tid() as u64,
                ..Counters::default()
            };
            c.host_ns[HOST_CHUNK_READS] = read_ns;
            for (i, n) in stage_counts.iter().enumerate().take(MAX_SOURCES) {
                c.stage[i] = *n;
            }
            // the outer rows the combinations read (at most every one)
            let returned = match &out {
                Probed::Combos(c) => (c.count as u64).min(nrows as u64),
                Probed::Groups(_) => 0,
            };
            self.source.note_returned(nrows as u64, if cpu_rows > 0 { nrows as u64 } else { returned });
            match out {
                Probed::Combos(combos) => self.combos = combos,
                Probed::Groups(groups) => {
                    c.groups = if self.count_groups { groups.count as u64 } else { 0 };
                    // rows whose numeric sums PostgreSQL computes (SumNumWide
                    // exceptions)
                    c.rows_cpu_path += groups.exceptions.iter().filter(|&&e| e).count() as u64;
                    self.groups = groups;
                    self.direct_keys = None;
                }
            }
            self.add_counters(c);
            true
        }
    }

    /// After the last chunk: add what the engine read from the Arrow files
    /// since the last time, by storage path (EXPLAIN ANALYZE).
    fn count_file_reads(&mut self) {
        if !self.source.reads_files() && self.direct.as_ref().is_none_or(|d| d.counters.blocks == 0) {
            return;
        }
        let Some(Ok(Some(now))) = self.session.as_mut().map(|s| s.file_stats()) else { return };
        let c = Counters::file_reads_since(now, &mut self.file_reads);
        self.add_counters(c);
    }

    /// After the last chunk, once: the unmatched inner rows of RIGHT and
    /// FULL depths as the next chunk's combinations (or, for GpuPreAgg,
    /// their groups).  False when there is nothing more to return (always
    /// without RIGHT and FULL depths, asking the engine nothing).
    pub(crate) fn next_unmatched(&mut self) -> bool {
        if self.unmatched_done {
            return false;
        }
        self.unmatched_done = true;
        self.count_file_reads();
        if !self.keeps_inner() || self.probing == Some(false) {
            // only RIGHT and FULL depths have rows to return now: no
            // request (a GPU service lost after the last chunk then ends
            // nothing, as it took nothing with it)
            return false;
        }
        // a parallel plan: the last process done returns the rows, with
        // every process's matched rows
        if let Some(m) = self.shared_matched() {
            let session = self.session.as_mut().expect("prepared");
            let bits = session.matched_bits();
            let bits = bits.unwrap_or_else(|e| self.raise_engine_error(&e));
            // SAFETY: the query's DSA area; attached in prepare.
            let last = unsafe {
                m.merge(self.dsa, &bits);
                m.arrive()
            };
            if !last {
                return false;
            }
            // SAFETY: as above; every process has arrived.
            let all = unsafe { m.gathered(self.dsa, self.info.depths.len()) };
            let session = self.session.as_mut().expect("prepared");
            if let Err(e) = session.merge_matched(&all) {
                self.raise_engine_error(&e)
            }
        }
        let session = self.session.as_mut().expect("prepared");
        let res = if self.agg_spec.is_some() {
            session.unmatched_agg().map(Probed::Groups)
        } else {
            session.unmatched().map(Probed::Combos)
        };
        match res {
            Ok(Probed::Combos(c)) => {
                self.dev.counters.unmatched += c.count as u64;
                // SAFETY: the scan slot was cleared by the caller's fill_chunk.
                unsafe { self.reset_chunk() };
                self.combos = c;
            }
            Ok(Probed::Groups(g)) => {
                self.dev.counters.unmatched += g.stage_counts.first().copied().unwrap_or(0);
                if self.count_groups {
                    self.dev.counters.groups += g.count as u64;
                }
                // SAFETY: as above.
                unsafe { self.reset_chunk() };
                self.groups = g;
                self.direct_keys = None;
            }
            Err(e) => self.raise_engine_error(&e),
        }
        true
    }

    fn add_counters(&mut self, c: Counters) {
        self.dev.add_counters(c);
    }

    /// Add the engine's time for this node's sessions since the last time
    /// (EXPLAIN ANALYZE's `Engine Time`).  A session whose engine is gone
    /// has nothing more to say.
    pub(crate) fn count_device_clock(&mut self) {
        let mut clock = DeviceClock::default();
        for s in [self.session.as_mut(), self.cpu_session.as_mut()].into_iter().flatten() {
            if let Ok(c) = s.take_clock() {
                clock.add(&c);
            }
        }
        if clock != DeviceClock::default() {
            self.add_counters(Counters { device_total_ns: clock.total_ns, device_ns: clock.ns, ..Counters::default() });
        }
    }
}

/// ExecScan's access method: the next joined row as a scan tuple.
#[pg_guard]
unsafe extern "C-unwind" fn next_tuple(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let node = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan calls this with our node.
    unsafe {
        let Some(st) = state_of(node) else { return std::ptr::null_mut() };
        let slot = (*ss).ss_ScanTupleSlot;
        st.prepare(node);
        loop {
            if st.cursor < st.combos.count {
                let k = st.cursor;
                st.cursor += 1;
                st.fill_slot(slot, k);
                return slot;
            }
            if st.fill_chunk(node) || st.next_unmatched() {
                continue;
            }
            return pg_sys::ExecClearTuple(slot);
        }
    }
}

/// EvalPlanQual is never needed: GpuJoin is only planned for queries
/// without row marks.
#[pg_guard]
pub(crate) unsafe extern "C-unwind" fn recheck(
    _ss: *mut pg_sys::ScanState,
    _slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    true
}

impl GpuJoinExec {
    /// ReScanCustomScan.
    ///
    /// # Safety
    /// Executor callback of this state's node.
    unsafe fn rescan_join(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: executor callback.
        unsafe {
            let st = self;
            st.reset_chunk();
            st.source.rescan();
            if let Some(d) = st.direct.as_mut() {
                d.rescan();
            }
            st.unmatched_done = false;
            st.probing = None;
            // parameters may have changed: sessions are rebuilt; inner
            // relations are re-read only when their parameters changed
            st.params = None;
            st.count_device_clock();
            st.session = None;
            st.cpu_session = None;
            // ExecReScan passes changed parameters to lefttree/righttree only:
            // the inner plans get them here (and are rescanned by their next
            // ExecProcNode when they depend on one)
            let children: Vec<*mut pg_sys::PlanState> =
                from_list((*node).custom_ps).into_iter().map(|c| c.cast()).collect();
            // a shared build is redone after the leader's ReInitializeDSM
            let mut changed = !st.shared.is_null();
            for &child in &children {
                if !(*node).ss.ps.chgParam.is_null() {
                    pg_sys::UpdateChangedParamSet(child, (*node).ss.ps.chgParam);
                }
                changed |= !(*child).chgParam.is_null();
            }
            if changed {
                // all inner relations are read again: those whose parameters
                // did not change were read to their end and must start over
                // (ExecProcNode rescans only a plan with changed parameters)
                for &child in &children {
                    if (*child).chgParam.is_null() {
                        pg_sys::ExecReScan(child);
                    }
                }
                st.inners_loaded = false;
            }
        }
    }
}
