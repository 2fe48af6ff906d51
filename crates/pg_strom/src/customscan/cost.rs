//! What the device nodes' cost models share: which relations a device
//! node reads and in how many pages, the host's per-row costs of reading
//! and returning them, and the share of a heap table the heap direct path
//! reads without the host, and the chunks it goes through.

use pgrx::pg_sys;

use crate::guc;
use crate::pg::list::from_list;

/// The planner's cost of one operator of a device program per row:
/// `pg_strom.gpu_operator_cost`, or where it is -1 (the default)
/// `cpu_operator_cost / 16` when a GPU is planned and `cpu_operator_cost`
/// on the CPU engine, which evaluates the same program on the host's
/// cores no faster than PostgreSQL's executor (priced as a GPU, TPC-H
/// Q1 at SF 1 on the 2-core development machine planned a GpuPreAgg that
/// ran 2.6x slower than PostgreSQL's plan).
pub fn device_operator_cost() -> f64 {
    let v = guc::GPU_OPERATOR_COST.get();
    if v >= 0.0 {
        v
    } else if crate::engine::planned_gpu() {
        // SAFETY: a planner global read in the backend.
        unsafe { pg_sys::cpu_operator_cost / 16.0 }
    } else {
        // SAFETY: as above.
        unsafe { pg_sys::cpu_operator_cost }
    }
}

/// The planner's cost of moving one row through the device engine:
/// `pg_strom.gpu_tuple_cost`, or where it is -1 (the default) 0.002 when
/// a GPU is planned and `cpu_tuple_cost` on the CPU engine (see
/// [`device_operator_cost`]).
pub fn device_tuple_cost() -> f64 {
    let v = guc::GPU_TUPLE_COST.get();
    if v >= 0.0 {
        v
    } else if crate::engine::planned_gpu() {
        0.002
    } else {
        // SAFETY: a planner global read in the backend.
        unsafe { pg_sys::cpu_tuple_cost }
    }
}

/// Whether a device path that reads `rows` rows may run inside a
/// parallel plan: as a partial path (`workers > 0`, each process feeding
/// the device its share), or as a whole one over at most
/// [`SMALL_WHOLE_PATH_ROWS`] rows.  A whole (non-partial) device path that
/// is parallel-safe can be put on the inner side of a parallel join, or in
/// a sub-plan of a parallel scan's quals, where every process runs it in
/// full: PostgreSQL charges that once, as each process has its own CPU,
/// but the processes share one device, which then does the whole work
/// once per process (TPC-H Q18 at SF 10: a GpuPreAgg of all of `lineitem`
/// under a Hash in each of 17 processes ran past 60 s, where PostgreSQL's
/// own plan takes 41 s).  Over a small table that repeated work is a few
/// milliseconds, while a parallel-unsafe path keeps the whole plan above
/// it serial (TPC-H Q16 at SF 10: a GpuScan of `supplier`, 100,000 rows,
/// in the hashed sub-plan of `NOT IN`, made the join below it and the
/// sort of its 1.2 million rows run in one process: 5.6 s against
/// PostgreSQL's 1.6 s).
pub fn device_path_parallel_safe(consider_parallel: bool, workers: i32, rows: f64) -> bool {
    consider_parallel && (workers > 0 || rows <= SMALL_WHOLE_PATH_ROWS)
}

/// The most rows a whole device path may read and still run in every
/// process of a parallel plan ([`device_path_parallel_safe`]): 17
/// processes then make the device read 17 million rows, some milliseconds
/// of a GPU's time.
pub const SMALL_WHOLE_PATH_ROWS: f64 = 1_000_000.0;

/// True for a plain heap table or materialized view (no TABLESAMPLE).
pub(crate) fn is_heap_relation(rte: *mut pg_sys::RangeTblEntry) -> bool {
    // SAFETY: a relation RTE of the query being planned; the planner holds
    // a lock on it, so opening it with NoLock is safe.
    unsafe {
        if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
            || !((*rte).relkind as u8 == pg_sys::RELKIND_RELATION || (*rte).relkind as u8 == pg_sys::RELKIND_MATVIEW)
            || !(*rte).tablesample.is_null()
        {
            return false;
        }
        let rel = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
        let heap = (*(*rel).rd_rel).relam == pg_sys::HEAP_TABLE_AM_OID;
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        heap
    }
}

/// What a device node reading `rel` reads: a heap table's pages, or for
/// an Arrow_Fdw table the bytes of its referenced columns (as its
/// GetForeignRelSize found them) in pages, with the table's
/// `parallel_workers` option (-1: none).  None: a relation the device
/// nodes do not read.
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn scan_pages(rte: *mut pg_sys::RangeTblEntry, rel: *mut pg_sys::RelOptInfo) -> Option<(f64, i32)> {
    // SAFETY: caller's promise; fdw_private of an arrow_fdw table is its RelInfo.
    unsafe {
        // An inheritance parent (`inh`) stands for itself and its children:
        // PostgreSQL plans it as an Append over member relations, each of
        // which gets its own paths.  One scan of the parent's own file would
        // read only the parent's rows.
        if (*rte).inh {
            return None;
        }
        if (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && crate::arrow_fdw::is_arrow_table((*rte).relid)
            && !(*rel).fdw_private.is_null()
        {
            let info = &*((*rel).fdw_private as *const crate::arrow_fdw::scan::RelInfo);
            return Some(((info.bytes / pg_sys::BLCKSZ as f64).ceil(), info.parallel_workers));
        }
        if is_gstore_relation(rte) {
            // rows in the backend's memory, read by one process: no
            // parallel workers
            let bytes = (*rel).tuples.max(0.0) * (*(*rel).reltarget).width.max(1) as f64;
            return Some(((bytes / pg_sys::BLCKSZ as f64).ceil(), 0));
        }
        is_heap_relation(rte).then(|| ((*rel).pages as f64, -1))
    }
}

/// The host's per-row cost of reading `rte` into chunks:
/// `pg_strom.heap_gather_cost` for a heap or gstore_fdw table, 0 for
/// Arrow (read column by column).
///
/// # Safety
/// A planner RTE.
pub unsafe fn gather_cost_per_row(rte: *mut pg_sys::RangeTblEntry) -> f64 {
    // SAFETY: caller's promise.
    if is_heap_relation(rte) || unsafe { is_gstore_relation(rte) } { guc::HEAP_GATHER_COST.get() } else { 0.0 }
}

/// Whether a GpuJoin or GpuPreAgg planned now reads gstore_fdw tables
/// from its engine's copy (`pg_strom.gstore_device_copy`, and an engine
/// in the GPU service, which keeps copies): no row is gathered on the host
/// (source/gstore.rs).
pub fn gstore_copy_planned() -> bool {
    guc::GSTORE_DEVICE_COPY.get() && crate::engine::planned_in_service()
}

/// The host's per-row cost of a GpuJoin's or GpuPreAgg's outer rows from
/// `rte`: [`gather_cost_per_row`], but nothing for a gstore_fdw table
/// read from the engine's copy ([`gstore_copy_planned`]).
///
/// # Safety
/// A planner RTE.
pub unsafe fn outer_gather_cost_per_row(rte: *mut pg_sys::RangeTblEntry) -> f64 {
    // SAFETY: caller's promise.
    unsafe { if is_gstore_relation(rte) && gstore_copy_planned() { 0.0 } else { gather_cost_per_row(rte) } }
}

/// True for a gstore_fdw table, and for a heap table planned as read from
/// its GPU cache (`gstore::cache::planned`): the GPU store's rows, read
/// by serial device nodes only, from the engine's copy where there is one
/// (else gathered into chunks on the host, as a heap table's).
///
/// # Safety
/// A planner RTE.
pub unsafe fn is_gstore_relation(rte: *mut pg_sys::RangeTblEntry) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && match (*rte).relkind as u8 {
                pg_sys::RELKIND_FOREIGN_TABLE => crate::gstore::is_gstore_table((*rte).relid),
                pg_sys::RELKIND_RELATION => crate::gstore::cache::planned((*rte).relid),
                _ => false,
            }
    }
}

/// Host cost of forming one row of `rte` returned by a device node as a
/// tuple: `cpu_tuple_cost`, or `pg_strom.arrow_tuple_cost` for an Arrow
/// table (its values are converted one by one from the record batch).
///
/// # Safety
/// A relation RTE of the query being planned.
pub unsafe fn tuple_cost_of(rte: *mut pg_sys::RangeTblEntry) -> f64 {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        let foreign =
            (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION && (*rte).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE;
        if foreign && !is_gstore_relation(rte) { guc::ARROW_TUPLE_COST.get() } else { pg_sys::cpu_tuple_cost }
    }
}

/// The planner's view of the path: the share of `outer`'s rows a device
/// node reading `columns_of(outer)` would take through it (the table's
/// all-visible fraction, from `pg_class.relallvisible`), or 0 where it
/// does not apply (the settings, a table that is not a permanent heap, a
/// referenced column the kernels do not take apart (one that is neither
/// fixed-width as the device holds it, nor a numeric, nor text-like; or
/// more text-like ones than `heapscan::MAX_VAR`), a
/// SERIALIZABLE transaction, or a node that would not run in the GPU
/// service, whose join sessions alone read blocks themselves: the CPU
/// engine in the backend, on a machine without a GPU, gathers every row).
/// Those rows cost the host no gathering.  Only a GPU takes them apart
/// for free: the CPU engine in the service does so on the host's cores
/// at about the backend's cost of gathering them (TPC-H Q6 at SF 1 on the
/// 2-core development machine, priced free: a GpuPreAgg 3.5x slower than
/// PostgreSQL's plan), so there it is priced as gathering, unless
/// `pg_strom.gpu_operator_cost` is set (prices the engine as a GPU, as
/// the test suites do so that both engines plan alike).
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn planned_fraction(outer: *mut pg_sys::RelOptInfo, rte: *mut pg_sys::RangeTblEntry) -> f64 {
    if !guc::HEAP_DIRECT.get()
        || !guc::HEAP_PAGE_READS.get()
        || !is_heap_relation(rte)
        || !crate::engine::planned_in_service()
        || !(crate::engine::planned_gpu() || guc::GPU_OPERATOR_COST.get() >= 0.0)
    {
        return 0.0;
    }
    // SAFETY: planner state (caller); the planner holds a lock on the table.
    unsafe {
        if pg_sys::XactIsoLevel == pg_sys::XACT_SERIALIZABLE as i32 || pg_sys::RecoveryInProgress() {
            return 0.0;
        }
        let relid = (*outer).relid;
        let mut attnos: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        pg_sys::pull_varattnos((*(*outer).reltarget).exprs.cast(), relid, &mut attnos);
        for ri in from_list((*outer).baserestrictinfo) {
            pg_sys::pull_varattnos((*ri.cast::<pg_sys::RestrictInfo>()).clause.cast(), relid, &mut attnos);
        }
        let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
        let mut any = false;
        let mut varlena = 0;
        let mut k = pg_sys::bms_next_member(attnos, -1);
        while k >= 0 {
            let attno = (k + offset) as i16;
            if attno <= 0 {
                return 0.0;
            }
            let typid = pg_sys::get_atttype((*rte).relid, attno);
            // a column the heap kernels take apart, as `source::heap_direct`
            // takes them (at most MAX_VAR text-like ones)
            let conv = crate::codegen::device_type_of(typid)
                .and_then(|t| crate::source::heap_direct::conversion(t, pg_sys::get_typlen(typid)));
            match conv {
                None => return 0.0,
                Some(pgstrom_runtime::heapscan::CONV_VARLENA) => {
                    varlena += 1;
                    if varlena > pgstrom_runtime::heapscan::MAX_VAR {
                        return 0.0;
                    }
                }
                Some(_) => {}
            }
            any = true;
            k = pg_sys::bms_next_member(attnos, k);
        }
        let temp = pg_sys::get_rel_persistence((*rte).relid) as u8 == pg_sys::RELPERSISTENCE_TEMP;
        if !any || temp { 0.0 } else { (*outer).allvisfrac.clamp(0.0, 1.0) }
    }
}

/// What a device node returning rows on the heap direct path pays to
/// bring the tuples of its `rows` returned rows (of the direct share) to
/// the backend: the engine finds them in the pages it read and copies
/// them out, and their bytes come back with the answer (one copy from the
/// GPU, the connection's shared region, the backend's copy of the row):
/// [`DIRECT_TUPLE_COST`] a row and [`DIRECT_TUPLE_BYTE_COST`] a byte of
/// the table's average tuple (its pages' bytes over its tuples).  The
/// backend reads none of those pages again.
///
/// # Safety
/// Planner state of a base relation.
pub unsafe fn direct_tuple_cost(outer: *mut pg_sys::RelOptInfo, rows: f64) -> f64 {
    // SAFETY: caller's promise.
    let (pages, tuples) = unsafe { ((*outer).pages as f64, (*outer).tuples) };
    let bytes = if tuples >= 1.0 { pages * pg_sys::BLCKSZ as f64 / tuples } else { 0.0 };
    rows.max(0.0) * (DIRECT_TUPLE_COST + bytes.min(pg_sys::BLCKSZ as f64) * DIRECT_TUPLE_BYTE_COST)
}

/// Cost of a row a device node returns on the heap direct path, besides
/// its bytes ([`direct_tuple_cost`]): its place in the answer and in the
/// backend's copies.
const DIRECT_TUPLE_COST: f64 = 0.001;

/// Cost of a byte of such a row (about 0.004 for a 150-byte row of TPC-H's
/// `lineitem`: roughly 30 ns, the bytes copied three times).
const DIRECT_TUPLE_BYTE_COST: f64 = 0.00002;

/// The chunks a device node reading `outer` goes through, over the whole
/// scan: for an Arrow table one per record batch when the engine reads
/// the columns from the files itself (the GPU service), else one per
/// `pg_strom.chunk_rows` rows of each batch; for a heap table one per
/// `pg_strom.chunk_rows` rows, except that the share `direct` of it read
/// by the heap direct path goes in requests of up to
/// `heap_direct::BATCH_BLOCKS` blocks (in a `parallel` scan, of a
/// `heap_pages::DIRECT_SHARES`-th of the table at most, at least
/// `heap_pages::DIRECT_MIN_BLOCKS`: `PageReader::direct_batch_blocks`).
/// GpuPreAgg returns its partial groups per chunk.
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn planned_chunks(
    outer: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
    direct: f64,
    parallel: bool,
) -> f64 {
    // SAFETY: caller's promise; fdw_private of an arrow_fdw table is its RelInfo.
    unsafe {
        if (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && crate::arrow_fdw::is_arrow_table((*rte).relid)
            && !(*outer).fdw_private.is_null()
        {
            let info = &*((*outer).fdw_private as *const crate::arrow_fdw::scan::RelInfo);
            return if crate::engine::planned_in_service() { info.chunks_from_files } else { info.chunks_in_memory };
        }
        let pages = (*outer).pages as f64;
        let batch = crate::source::heap_direct::BATCH_BLOCKS as f64;
        let batch = if parallel { crate::source::heap_pages::direct_batch_blocks(pages, batch) } else { batch };
        (1.0 - direct) * (*outer).tuples.max(0.0) / guc::CHUNK_ROWS.get().max(1) as f64 + direct * pages / batch
    }
}

/// True when the engine a device node would run on reads `outer`'s
/// columns itself: an Arrow table, with the GPU service planned (it reads
/// the record batches from the files, and keeps them in device memory
/// between queries).  The backend processes then only hand it the
/// batches' places.
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn device_reads_itself(outer: *mut pg_sys::RelOptInfo, rte: *mut pg_sys::RangeTblEntry) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && crate::arrow_fdw::is_arrow_table((*rte).relid)
            && !(*outer).fdw_private.is_null()
            && crate::engine::planned_in_service()
    }
}

/// What a device node's device work (filtering, probing, reducing) is
/// divided by with `workers` parallel workers.  Where each process feeds
/// the device its share (a heap table's rows, columns handed over in
/// memory), as PostgreSQL divides a scan's CPU work:
/// `parallel_divisor(workers)`.  Where the GPU service reads an Arrow
/// table's columns itself (`reads_itself`: [`device_reads_itself`]), the
/// device does the same work with one process or many, as parallel as it
/// is: divided as for the most workers PostgreSQL would give the scan,
/// whatever the plan's own number (0 with parallel query off: the whole
/// work), so that a parallel plan pays only where it saves host work.
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn device_divisor(
    outer: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
    workers: i32,
    reads_itself: bool,
) -> f64 {
    // SAFETY: caller's promise.
    let w = unsafe {
        if reads_itself && (*outer).consider_parallel {
            let most = scan_pages(rte, outer).map_or(0, |(pages, table_workers)| {
                crate::pg::cost::scan_parallel_workers(outer, pages, table_workers)
            });
            most.max(workers)
        } else {
            workers
        }
    };
    if w > 0 { crate::pg::cost::parallel_divisor(w) } else { 1.0 }
}

/// The cost of the pages a device node over an Arrow table whose columns
/// the GPU service reads itself still reads on the host (`pages_cost`:
/// the referenced columns' pages at `seq_page_cost`): the service reads
/// the columns from the files into its column cache, where later queries
/// find them, so what is left is the backend reading a record batch to
/// form the rows it returns (or a group's row, for a key taken from the
/// table), for each batch that returns any of `rows`, spread evenly over
/// the batches.
///
/// # Safety
/// Planner state of a base relation for which [`device_reads_itself`] is
/// true (its `fdw_private` is Arrow_Fdw's RelInfo).
pub unsafe fn arrow_host_reads(outer: *mut pg_sys::RelOptInfo, rows: f64, pages_cost: f64) -> f64 {
    // SAFETY: caller's promise.
    let info = unsafe { &*((*outer).fdw_private as *const crate::arrow_fdw::scan::RelInfo) };
    let batches = info.chunks_from_files.max(1.0);
    // the share of batches with at least one of the rows
    let share = -(-rows.max(0.0) / batches).exp_m1();
    pages_cost * share
}

/// What the backend's conversion of an Arrow outer table's columns for
/// the device costs over `rows` rows read (`pg_strom.arrow_convert_cost`
/// a value: about 50 ns a value on the 2-core development machine, TPC-H
/// Q6 at SF 1 spending 1.2 s of chunk reads on 6 million rows of three
/// decimals and a date, half a heap row's `cpu_tuple_cost`); 0 for other
/// tables.  Host work, divided among a parallel plan's processes
/// (unpriced, the planner put TPC-H Q1 and Q6 over Arrow files at SF 10
/// into one process on the H100 machine, where they ran past 40 s
/// against PostgreSQL's 5 and 0.6 s over the heap).
///
/// # Safety
/// Planner state of a base relation and its RTE.
pub unsafe fn arrow_host_values_cost(
    outer: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
    rows: f64,
) -> f64 {
    // SAFETY: caller's promise; an Arrow table's fdw_private is its RelInfo.
    unsafe {
        let arrow = (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && crate::arrow_fdw::is_arrow_table((*rte).relid)
            && !(*outer).fdw_private.is_null();
        if !arrow {
            return 0.0;
        }
        let info = &*((*outer).fdw_private as *const crate::arrow_fdw::scan::RelInfo);
        rows.max(0.0) * info.host_values * guc::ARROW_CONVERT_COST.get()
    }
}

/// The groups expected among `rows` rows drawn from `groups` groups
/// alike: `groups * (1 - (1 - 1/groups)^rows)`, at most either.
pub fn groups_among(groups: f64, rows: f64) -> f64 {
    if groups <= 1.0 || rows <= 1.0 {
        return groups.min(rows).max(0.0);
    }
    groups * -(rows * (-1.0 / groups).ln_1p()).exp_m1()
}

/// A relation being planned: (root, relid, baserestrictinfo) addresses.
type PlannedRel = (usize, u32, usize);

thread_local! {
    /// [`brin_fraction`]'s answers in the statement being planned.
    static PLANNED: std::cell::RefCell<Vec<(PlannedRel, f64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The share of a heap base relation's blocks and rows a device scan of
/// it reads, after the block ranges a BRIN index rules out
/// (`source::brin::kept_fraction`); 1.0 for other relations.  Asked by every device
/// path of the relation, taken once per query being planned.
///
/// # Safety
/// Planner state; `rel` a base relation of `root`.
pub unsafe fn brin_fraction(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> f64 {
    // SAFETY: caller's promise.
    unsafe {
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        if !is_heap_relation(rte) || !crate::guc::HEAP_PAGE_READS.get() {
            return 1.0;
        }
        let key = (root as usize, (*rel).relid, (*rel).baserestrictinfo as usize);
        if let Some(f) = PLANNED.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|&(_, f)| f)) {
            return f;
        }
        let mut f = crate::source::brin::kept_fraction(rel, (*rte).relid);
        // Where the kept ranges hold fewer rows than a few chunks, the
        // device's fixed costs decide, and PostgreSQL's own Bitmap Heap Scan
        // of the same ranges is as fast (measured on the CPU engine: 3
        // ranges of 128 blocks, 52,000 rows, 18 ms against 3 ms): the
        // device scan is costed as a full one there.  So it is on the CPU
        // engine, which reads the kept ranges no faster than that scan
        // (priced at PostgreSQL's own operator cost).  Execution skips the
        // ranges either way.
        let few = f * (*rel).tuples.max(0.0) < 4.0 * crate::guc::CHUNK_ROWS.get().max(1) as f64;
        let cpu_priced = device_operator_cost() >= pg_sys::cpu_operator_cost;
        if f < 1.0 && (few || cpu_priced) {
            if pg_sys::message_level_is_interesting(pg_sys::DEBUG2 as i32) {
                pgrx::debug2!(
                    "BRIN: the device scan is costed as a full scan ({})",
                    if few { "the kept ranges hold few rows" } else { "the device is priced as PostgreSQL's executor" }
                );
            }
            f = 1.0;
        }
        PLANNED.with(|c| c.borrow_mut().push((key, f)));
        f
    }
}

/// A statement is being planned: the answers of earlier ones go (their
/// PlannerInfo's address may be reused).  Called by the planner hook.
pub fn brin_planning_starts() {
    PLANNED.with(|c| c.borrow_mut().clear());
}
