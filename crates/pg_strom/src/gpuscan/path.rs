//! GpuScan paths: the `set_rel_pathlist_hook` callback and the cost model.
//!
//! A heap relation gets a GpuScan path when at least one of its quals
//! compiles to a device program.  Quals that do not compile stay on the
//! CPU, evaluated above the device filter in the same node.  The cost is
//! PostgreSQL's sequential-scan disk cost plus `pg_strom.gpu_setup_cost`
//! (and `pg_strom.gpu_context_cost` where the GPU must be opened first:
//! parallel workers, or a backend that has not used it yet),
//! `pg_strom.gpu_tuple_cost` and `pg_strom.gpu_operator_cost` per row read,
//! and `cpu_tuple_cost` (plus the CPU quals) only for rows the device
//! returns; `add_path` then keeps it only where it beats the other paths
//! (an index scan on a selective predicate keeps winning).

use pgrx::pg_sys;

use crate::codegen;
use crate::customscan::cost::{gather_cost_per_row, scan_pages, tuple_cost_of};
use crate::customscan::quals::{QualSplit, split_quals};
use crate::engine;
use crate::gpuscan::plan;
use crate::guc;
use crate::pg::cost::{parallel_divisor, scan_parallel_workers, short_circuit_qual_cost};
use crate::pg::list::{from_list, to_list};

static mut PREV_HOOK: pg_sys::set_rel_pathlist_hook_type = None;

/// Install the hook, chaining to any earlier one.
pub fn install_hook() {
    // SAFETY: _PG_init runs once, single-threaded, before any planning.
    unsafe {
        PREV_HOOK = pg_sys::set_rel_pathlist_hook;
        pg_sys::set_rel_pathlist_hook = Some(gpuscan_rel_pathlist);
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn gpuscan_rel_pathlist(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: planner hook arguments are valid; we chain first.
    unsafe {
        if let Some(prev) = PREV_HOOK {
            prev(root, rel, rti, rte);
        }
        if !guc::ENABLED.get() || !guc::ENABLE_GPUSCAN.get() {
            return;
        }
        if !matches!(
            (*rel).reloptkind,
            pg_sys::RelOptKind::RELOPT_BASEREL | pg_sys::RelOptKind::RELOPT_OTHER_MEMBER_REL
        ) {
            return;
        }
        let Some((pages, table_workers)) = scan_pages(rte, rel) else { return };
        // (a heap table's GPU cache is read by serial scans)
        let workers = if (*rel).consider_parallel
            && (*rel).lateral_relids.is_null()
            && !crate::customscan::cost::is_gstore_relation(rte)
        {
            scan_parallel_workers(rel, pages, table_workers)
        } else {
            0
        };
        // the heap direct path's share, worked out once and only where a
        // GpuScan is costed (not for a primary-key lookup's early exit)
        let direct = std::cell::OnceCell::new();
        let share = || *direct.get_or_init(|| direct_share(root, rel));
        if no_gpuscan_can_win(root, rel, pages, workers, &share) {
            if pg_sys::message_level_is_interesting(pg_sys::DEBUG2 as i32) {
                pgrx::debug2!("GpuScan on {}: a path of the relation costs less than any GpuScan could", rel_name(rte));
            }
            return;
        }
        let quals = from_list(pg_sys::extract_actual_clauses((*rel).baserestrictinfo, false));
        let split = split_quals(&quals, (*rel).relid as i32);
        if pg_sys::message_level_is_interesting(pg_sys::DEBUG2 as i32) {
            report_host_quals(rte, &split, (*rel).relid as i32);
        }
        if split.device.is_empty() {
            return;
        }
        // The combined program must compile too (depth and size limits).
        if codegen::compile(pg_sys::make_ands_explicit(to_list(&split.device)).cast(), (*rel).relid as i32).is_err() {
            return;
        }
        let direct = share();
        let path = make_path(root, rel, &split, pages, direct, 0);
        // a heap table's seq scan per row, its quals priced as evaluated
        // (computed once for both paths)
        let seq_per_row = (crate::customscan::cost::is_heap_relation(rte) && pg_sys::enable_seqscan)
            .then(|| pg_sys::cpu_tuple_cost + short_circuit_qual_cost(root, &quals));
        if beats_seq_scan(rel, rte, seq_per_row, pages, path, 0) {
            pg_sys::add_path(rel, path.cast());
        }
        if workers > 0 {
            let ppath = make_path(root, rel, &split, pages, direct, workers);
            if beats_seq_scan(rel, rte, seq_per_row, pages, ppath, workers) {
                pg_sys::add_partial_path(rel, ppath.cast());
            }
        }
    }
}

/// True when GpuScan path `path` over a heap table costs less than a
/// sequential scan of the same parallelism whose quals are priced as the
/// executor evaluates them ([`short_circuit_qual_cost`]; `seq_per_row`:
/// that scan's cost per row, None where there is none to compare with).
/// A GpuScan over a heap table gathers on the host every row the heap
/// direct path does not read, as much work as a sequential scan's own;
/// what it saves there is the quals' evaluation, which cost_qual_eval overprices for
/// an AND or OR that stops early.  Against the seq scan's own price a
/// GpuScan on TPC-H Q19's `part` (2 million rows, an OR of three ANDs)
/// looked 7% cheaper and ran 1.7x slower (160 against 92 ms on an H200
/// at SF 10).  With `enable_seqscan` off, or over an Arrow table, there
/// is nothing to compare with.  At DEBUG2 a path left out says so.
///
/// # Safety
/// Planner state of a base relation.
unsafe fn beats_seq_scan(
    rel: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
    seq_per_row: Option<f64>,
    pages: f64,
    path: *mut pg_sys::CustomPath,
    workers: i32,
) -> bool {
    let Some(per_row) = seq_per_row else { return true };
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        let (mut spc_random, mut spc_seq) = (0.0, 0.0);
        pg_sys::get_tablespace_page_costs((*rel).reltablespace, &mut spc_random, &mut spc_seq);
        let divisor = if workers > 0 { parallel_divisor(workers) } else { 1.0 };
        let seq = spc_seq * pages + (*rel).tuples.max(0.0) * per_row / divisor;
        let gpu = (*path).path.total_cost;
        if gpu < seq {
            return true;
        }
        if pg_sys::message_level_is_interesting(pg_sys::DEBUG2 as i32) {
            let name = rel_name(rte);
            pgrx::debug2!(
                "GpuScan on {name}: no path with {workers} workers: cost {gpu:.2} is not below {seq:.2}, a sequential scan's with its quals priced as they are evaluated (AND and OR stop early)"
            );
        }
        false
    }
}

/// True when `rel` has paths already that add_path (and
/// add_partial_path) would keep over any GpuScan path of it, whatever its
/// quals: the qual's device program is then not even compiled.  A path
/// dominates every GpuScan when it is unparameterized, has no more
/// disabled nodes (none), starts no later than a GpuScan's start-up
/// (`pg_strom.gpu_setup_cost`), and costs less in total, beyond add_path's
/// fuzz, than [`cost_floor`]: the part of a GpuScan's cost that no qual
/// changes (start-up, the pages, every row gathered and passed through
/// the device).  A partial GpuScan is dominated likewise by a cheaper
/// partial path.  And as before, a path cheaper than the start-up alone
/// (a primary-key lookup) leaves no room for a partial GpuScan under a
/// Gather either: a parallel join above can take the cheap path as its
/// inner side instead.
///
/// Without this, every query over a large table planned its GpuScan only
/// to lose: a range of a hundred orders by primary key (TPC-H's
/// `orders`, whose index path costs 99) took 0.25 ms with pg_strom on
/// against 0.11 off on the H200 machine (pgbench, one client), the
/// difference all in planning; a one-row primary-key lookup on the
/// development machine ran at 3,500 queries per second against 5,300.
///
/// # Safety
/// Planner state of a base relation (set_rel_pathlist_hook).
unsafe fn no_gpuscan_can_win(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    pages: f64,
    workers: i32,
    direct: &dyn Fn() -> f64,
) -> bool {
    const FUZZ: f64 = 1.02;
    // SAFETY: caller's promise; the path lists hold Paths.
    unsafe {
        let setup = guc::GPU_SETUP_COST.get();
        let candidates = |list: *mut pg_sys::List| {
            from_list(list).into_iter().map(|p| p as *mut pg_sys::Path).filter(|&p| {
                (*p).param_info.is_null()
                    && crate::pg::compat::disabled_nodes(p) == 0
                    && ((*p).parallel_safe || !(*rel).consider_parallel)
            })
        };
        // a path cheaper than the start-up alone (a primary-key lookup)
        // beats every GpuScan, serial or partial: decided before the floor,
        // which may scan a BRIN index (customscan::cost::brin_fraction)
        if candidates((*rel).pathlist).any(|p| (*p).startup_cost <= setup && (*p).total_cost * FUZZ < setup) {
            return true;
        }
        let floor = cost_floor(root, rel, pages, direct(), 0);
        let serial_beaten =
            candidates((*rel).pathlist).any(|p| (*p).startup_cost <= setup && (*p).total_cost * FUZZ < floor);
        if !serial_beaten {
            return false;
        }
        if workers == 0 || candidates((*rel).pathlist).any(|p| (*p).total_cost * FUZZ < setup) {
            return true;
        }
        let floor = cost_floor(root, rel, pages, direct(), workers);
        candidates((*rel).partial_pathlist).any(|p| (*p).total_cost * FUZZ < floor)
    }
}

/// The least total cost [`make_path`] can give a GpuScan of `rel` with
/// `workers` processes (0: serial), whatever its quals: the terms that
/// depend on none (each of the others is not negative); `direct`: the
/// heap direct path's share ([`direct_share`]).
///
/// # Safety
/// Planner state of a base relation.
unsafe fn cost_floor(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    pages: f64,
    direct: f64,
    workers: i32,
) -> f64 {
    // SAFETY: caller's promise.
    unsafe {
        // (the block ranges a BRIN index rules out are not read)
        let brin = crate::customscan::cost::brin_fraction(root, rel);
        let (disk, per_row) = fixed_costs(root, rel, pages * brin, direct);
        let divisor = if workers > 0 { parallel_divisor(workers) } else { 1.0 };
        guc::GPU_SETUP_COST.get() + disk + brin * (*rel).tuples.max(0.0) * per_row / divisor
    }
}

/// The share of `rel`'s rows a GpuScan reads by the heap direct path
/// (`customscan::cost::planned_fraction`: the all-visible fraction of a
/// heap table whose columns the heap kernels take apart, 0 where the path
/// does not apply).
///
/// # Safety
/// Planner state of a base relation.
unsafe fn direct_share(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> f64 {
    // SAFETY: caller's promise.
    unsafe {
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        crate::customscan::cost::planned_fraction(rel, rte)
    }
}

/// What every GpuScan of `rel` pays whatever its quals: the pages read
/// (at the tablespace's sequential page cost), and per row read, the
/// host's gathering and the device's per-row cost (the device's alone for
/// a gstore_fdw table read from the engine's copy).  The share `direct`
/// read by the heap direct path (source/heap_direct.rs) is taken apart on
/// the device: its rows are not gathered on the host (the engine sends
/// back the tuples of the rows it returns, which [`make_path`] prices by
/// the rows).  Its pages are still charged, as an Arrow table's
/// referenced columns are to a GpuScan: a GpuScan hands every row it keeps
/// to the host, and priced without its pages, as GpuJoin and GpuPreAgg
/// are (whose rows mostly stay on the device), a GpuScan of TPC-H's
/// `orders` cost a 67th of the Parallel Seq Scan (4,098 against 275,196)
/// and ran no faster; as the inner relation of a GpuJoin over `lineitem`
/// it turned Q10's plan into one with 4 workers instead of 16 and no
/// partial aggregation, 0.75x PostgreSQL's time.
///
/// # Safety
/// Planner state of a base relation.
unsafe fn fixed_costs(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    pages: f64,
    direct: f64,
) -> (f64, f64) {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        let (mut spc_random, mut spc_seq) = (0.0, 0.0);
        pg_sys::get_tablespace_page_costs((*rel).reltablespace, &mut spc_random, &mut spc_seq);
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        // (a gstore_fdw table read from the engine's copy: no pages, no
        // rows gathered)
        if crate::customscan::cost::is_gstore_relation(rte) && crate::customscan::cost::gstore_copy_planned() {
            return (0.0, crate::customscan::cost::device_tuple_cost());
        }
        // (an Arrow table's columns the backend converts for the device)
        let convert = crate::customscan::cost::arrow_host_values_cost(rel, rte, 1.0);
        (
            spc_seq * pages,
            (1.0 - direct) * gather_cost_per_row(rte) + convert + crate::customscan::cost::device_tuple_cost(),
        )
    }
}

/// The relation's name for the planner's diagnostics ("?" without one).
///
/// # Safety
/// A planner RTE.
unsafe fn rel_name(rte: *mut pg_sys::RangeTblEntry) -> String {
    // SAFETY: caller's promise; a syscache lookup in the backend.
    unsafe {
        let n =
            if (*rte).relid == pg_sys::InvalidOid { std::ptr::null_mut() } else { pg_sys::get_rel_name((*rte).relid) };
        if n.is_null() { "?".to_string() } else { std::ffi::CStr::from_ptr(n).to_string_lossy().into_owned() }
    }
}

/// At DEBUG2 (the planner's diagnostics, docs/gpuscan.md): why each qual
/// left to the host does not run on the device, and when none does.
///
/// # Safety
/// `rte` is the relation's range table entry; `split` holds its quals.
unsafe fn report_host_quals(rte: *mut pg_sys::RangeTblEntry, split: &QualSplit, varno: i32) {
    if split.host.is_empty() {
        return;
    }
    // SAFETY: a valid range table entry and quals of the relation (caller).
    unsafe {
        let name = rel_name(rte);
        for &q in &split.host {
            let why = match codegen::compile(q, varno) {
                Err(e) => e.0,
                Ok(_) => "it does not return a boolean".to_string(),
            };
            pgrx::debug2!("GpuScan on {name}: a qual stays on the host: {why}");
        }
        if split.device.is_empty() {
            pgrx::debug2!("GpuScan on {name}: no qual runs on the device, so no GpuScan path");
        }
    }
}

/// Build a (partial, when `workers` > 0) GpuScan path; `direct`: the heap
/// direct path's share of the table ([`direct_share`]).
///
/// # Safety
/// Planner state is valid; `split` holds quals of `rel`.
unsafe fn make_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    split: &QualSplit,
    pages: f64,
    direct: f64,
    workers: i32,
) -> *mut pg_sys::CustomPath {
    // SAFETY: palloc0'd node filled field by field; planner globals read
    // in the backend's main thread.
    unsafe {
        // the block ranges a BRIN index rules out are not read (source::brin)
        let brin = crate::customscan::cost::brin_fraction(root, rel);
        let ntuples = brin * (*rel).tuples.max(0.0);
        let cpath = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cpath).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = rel;
        p.pathtarget = (*rel).reltarget;
        p.param_info = std::ptr::null_mut();
        p.parallel_aware = workers > 0;
        p.parallel_safe =
            crate::customscan::cost::device_path_parallel_safe((*rel).consider_parallel, workers, ntuples);
        p.parallel_workers = workers;
        p.pathkeys = std::ptr::null_mut();

        // Costs (the parts no qual changes: `fixed_costs`).
        let (disk, fixed_per_tuple) = fixed_costs(root, rel, pages * brin, direct);
        let dev_list = to_list(&split.device);
        let host_list = to_list(&split.host);
        let mut dev_cost = pg_sys::QualCost::default();
        let mut host_cost = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut dev_cost, dev_list, root);
        pg_sys::cost_qual_eval(&mut host_cost, host_list, root);
        let dev_sel =
            pg_sys::clauselist_selectivity(root, dev_list, 0, pg_sys::JoinType::JOIN_INNER, std::ptr::null_mut());
        // device qual cost is in cpu_operator_cost units: rescale
        let op_ratio = if pg_sys::cpu_operator_cost > 0.0 {
            crate::customscan::cost::device_operator_cost() / pg_sys::cpu_operator_cost
        } else {
            0.0
        };
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        let dev_per_tuple = fixed_per_tuple + dev_cost.per_tuple * op_ratio;
        let returned = ntuples * dev_sel;
        let host_per_tuple = tuple_cost_of(rte) + host_cost.per_tuple;
        let target = &*(*rel).reltarget;
        let mut rows = (*rel).rows;
        let mut cpu_run = ntuples * dev_per_tuple + returned * host_per_tuple + rows * target.cost.per_tuple;
        if direct > 0.0 {
            // the direct share's returned rows, their tuples sent back
            cpu_run += crate::customscan::cost::direct_tuple_cost(rel, direct * returned);
        }
        if workers > 0 {
            let divisor = parallel_divisor(workers);
            cpu_run /= divisor;
            rows = pg_sys::clamp_row_est(rows / divisor);
        }
        p.rows = rows;
        // Opening the GPU in a process costs about a second (CUDA context,
        // device code); parallel workers always pay it.
        let context = if engine::gpu_open_pending(workers > 0) { guc::GPU_CONTEXT_COST.get() } else { 0.0 };
        p.startup_cost =
            guc::GPU_SETUP_COST.get() + context + dev_cost.startup + host_cost.startup + target.cost.startup;
        p.total_cost = p.startup_cost + disk + cpu_run;

        (*cpath).flags = pg_sys::CUSTOMPATH_SUPPORT_PROJECTION;
        (*cpath).custom_paths = std::ptr::null_mut();
        (*cpath).custom_private = std::ptr::null_mut();
        (*cpath).methods = plan::path_methods();
        cpath
    }
}
