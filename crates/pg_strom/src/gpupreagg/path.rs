//! GpuPreAgg paths: `create_upper_paths_hook` at UPPERREL_GROUP_AGG.
//!
//! For a GROUP BY (or a plain aggregate) whose input is a heap table a
//! GpuScan could read, or a join with a GpuJoin path, and whose every
//! aggregate, grouping key, argument and FILTER the device can reduce
//! (see [`super::state`]), this adds
//!
//!   Finalize {Hash|Plain} Aggregate
//!     [-> Gather]
//!          -> Custom Scan (GpuPreAgg)      (partial states per group and chunk)
//!
//! with PostgreSQL's own partial grouping target (keys, then the partial
//! Aggrefs, as make_partial_grouping_target builds it), so setrefs and the
//! Finalize Aggregate work exactly as over a Partial Aggregate.  The
//! GpuJoin it extends is the cheapest one the join hook made for the input
//! relation (kept in a stash even when PostgreSQL's join won on its own):
//! joined rows that never leave the device make it cheaper than either
//! part alone.
//!
//! Grouping keys: any device type; a text or bpchar key must be a column
//! (its value is read at a representative row on the host) under a
//! deterministic collation.  Also installed here: a planner hook that
//! starts each planner run with an empty stash.

use pgrx::pg_sys;

use crate::codegen::aggregates;
use crate::codegen::{self, Inputs};
use crate::gpujoin::path::{
    AggDesc, JoinDesc, compiles, cost, inner_bytes, scan_workers, source_of, stash_all, stash_reset,
};
use crate::guc;
use crate::pg::cost::parallel_divisor;
use crate::pg::list::{from_list, to_list};

static mut PREV_UPPER: pg_sys::create_upper_paths_hook_type = None;
static mut PREV_PLANNER: pg_sys::planner_hook_type = None;

/// Install the hooks, chaining to earlier ones.
pub fn install_hooks() {
    // SAFETY: _PG_init runs once, single-threaded, before any planning.
    unsafe {
        PREV_UPPER = pg_sys::create_upper_paths_hook;
        pg_sys::create_upper_paths_hook = Some(upper_paths);
        PREV_PLANNER = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(planner);
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn planner(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: i32,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the planner's own arguments, passed on.
    unsafe {
        let plan = |parse: *mut pg_sys::Query| {
            stash_reset();
            crate::customscan::cost::brin_planning_starts();
            match PREV_PLANNER {
                Some(prev) => prev(parse, query_string, cursor_options, bound_params),
                None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params),
            }
        };
        // (planned once more, rewritten, where it holds correlated
        // aggregate sub-queries or aggregates over joins)
        crate::rewrite::plan_query(parse, &plan, super::NAME)
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut std::ffi::c_void,
) {
    // SAFETY: hook arguments are valid; we chain first.
    unsafe {
        if let Some(prev) = PREV_UPPER {
            prev(root, stage, input_rel, output_rel, extra);
        }
        if stage != pg_sys::UpperRelationKind::UPPERREL_GROUP_AGG || extra.is_null() || !guc::ENABLED.get() {
            return;
        }
        add_paths(root, input_rel, output_rel, extra.cast());
    }
}

/// True when the aggregation already has a path that add_path would keep
/// over any path with a GpuPreAgg below it (an aggregate over an index
/// scan of a few rows), so that nothing is compiled or costed for it.
/// Every GpuPreAgg reads all the rows of one of `input_rel`'s base
/// relations (those of the block ranges a BRIN index keeps) and costs at
/// least `pg_strom.gpu_setup_cost` to start, plus
/// `pg_strom.gpu_tuple_cost` per row shared by at most
/// `max_parallel_workers_per_gather` workers and the leader
/// (gpujoin::path::cost; the aggregation's own costs only add to it).
/// The Finalize Aggregate above it (plain or hashed) starts only once the
/// GpuPreAgg has returned its last group, so that floor bounds its
/// start-up too: a path that holds no disabled node and costs less in
/// total than the floor, beyond add_path's fuzz, dominates them all.
///
/// # Safety
/// Planner state of the grouping being planned (create_upper_paths_hook).
unsafe fn no_gpupreagg_can_win(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
) -> bool {
    // SAFETY: caller's promise; the path list holds Paths.
    unsafe {
        let setup = guc::GPU_SETUP_COST.get();
        let mut fewest = f64::INFINITY;
        let mut i = pg_sys::bms_next_member((*input_rel).relids, -1);
        while i >= 0 {
            if (i as usize) < (*root).simple_rel_array_size as usize {
                let r = *(*root).simple_rel_array.add(i as usize);
                if !r.is_null() {
                    // (the rows of the block ranges a BRIN index keeps)
                    let brin = crate::customscan::cost::brin_fraction(root, r);
                    fewest = fewest.min(brin * (*r).tuples.max(0.0));
                }
            }
            i = pg_sys::bms_next_member((*input_rel).relids, i);
        }
        if !fewest.is_finite() {
            fewest = 0.0;
        }
        let processes = 1.0 + pg_sys::max_parallel_workers_per_gather.max(0) as f64;
        let floor = setup + fewest * crate::customscan::cost::device_tuple_cost() / processes;
        from_list((*output_rel).pathlist).into_iter().map(|p| p as *mut pg_sys::Path).any(|p| {
            (*p).param_info.is_null()
                && crate::pg::compat::disabled_nodes(p) == 0
                && ((*p).parallel_safe || !(*output_rel).consider_parallel)
                && (*p).total_cost * 1.02 < floor
        })
    }
}

/// PostgreSQL's partial grouping target (planner.c's
/// make_partial_grouping_target): the grouping columns, then the Vars,
/// PlaceHolderVars and Aggrefs of everything else, Aggrefs in partial
/// (serialized) mode.
unsafe fn partial_target(
    root: *mut pg_sys::PlannerInfo,
    grouping: *mut pg_sys::PathTarget,
    having: *mut pg_sys::Node,
) -> *mut pg_sys::PathTarget {
    // SAFETY: planner state.
    unsafe {
        let gclause = crate::pg::compat::group_clause(root);
        let target = pg_sys::make_pathtarget_from_tlist(std::ptr::null_mut());
        let mut others: *mut pg_sys::List = std::ptr::null_mut();
        for (i, e) in from_list((*grouping).exprs).into_iter().enumerate() {
            let sgref = if (*grouping).sortgrouprefs.is_null() { 0 } else { *(*grouping).sortgrouprefs.add(i) };
            if sgref != 0 && !gclause.is_null() && !pg_sys::get_sortgroupref_clause_noerr(sgref, gclause).is_null() {
                pg_sys::add_column_to_pathtarget(target, e.cast(), sgref);
            } else {
                others = pg_sys::lappend(others, e.cast());
            }
        }
        if !having.is_null() {
            others = pg_sys::lappend(others, having.cast());
        }
        let flags = pg_sys::PVC_INCLUDE_AGGREGATES | pg_sys::PVC_RECURSE_WINDOWFUNCS | pg_sys::PVC_INCLUDE_PLACEHOLDERS;
        pg_sys::add_new_columns_to_pathtarget(target, pg_sys::pull_var_clause(others.cast(), flags as i32));
        let exprs: Vec<*mut pg_sys::Node> = from_list((*target).exprs)
            .into_iter()
            .map(|e| {
                if (*e).type_ != pg_sys::NodeTag::T_Aggref {
                    return e;
                }
                let copy = pg_sys::palloc(std::mem::size_of::<pg_sys::Aggref>()) as *mut pg_sys::Aggref;
                std::ptr::copy_nonoverlapping(e as *const pg_sys::Aggref, copy, 1);
                pg_sys::mark_partial_aggref(copy, pg_sys::AggSplit::AGGSPLIT_INITIAL_SERIAL);
                copy.cast()
            })
            .collect();
        (*target).exprs = to_list(&exprs);
        pg_sys::set_pathtarget_cost_width(root, target);
        target
    }
}

/// Why an entry of the partial target cannot be reduced on the device.
fn why<T>(msg: &str) -> Option<T> {
    pgrx::debug2!("GpuPreAgg: {msg}");
    None
}

/// Check what the target asks for and that it compiles over `desc`'s
/// sources.  Returns the number of aggregate operations.
unsafe fn supported(
    target: *mut pg_sys::PathTarget,
    desc: &JoinDesc,
    inner_relids: &[*mut pg_sys::Bitmapset],
) -> Option<usize> {
    // SAFETY: planner state.
    unsafe {
        let resolve = |v: *mut pg_sys::Var| source_of(v, desc.outer_relid, inner_relids);
        let mut inputs = Inputs::default();
        let mut nops = 0;
        for (i, e) in from_list((*target).exprs).into_iter().enumerate() {
            if (*e).type_ == pg_sys::NodeTag::T_Aggref {
                let info = match aggregates::classify_aggref(e.cast()) {
                    Ok(info) => info,
                    Err(msg) => return why(&msg),
                };
                let a = e as *mut pg_sys::Aggref;
                for &x in &info.args {
                    if let Err(e) = aggregates::compile_agg_arg(info.kind, x, &resolve, &mut inputs) {
                        return why(&e.0);
                    }
                }
                if !(*a).aggfilter.is_null() {
                    codegen::compile_shared((*a).aggfilter.cast(), &resolve, &mut inputs, false).ok()?;
                }
                nops += 1;
                continue;
            }
            let sgref = if (*target).sortgrouprefs.is_null() { 0 } else { *(*target).sortgrouprefs.add(i) };
            // A column outside the GROUP BY is in the target only where
            // PostgreSQL proved it one value per group: a GROUP BY column it
            // dropped as redundant (equal to a constant, `p_brand1 =
            // 'MFGR#2239'`, or functionally dependent on a primary key).
            // Grouping by it as well gives the same groups, so a column of
            // the scanned table becomes a device key too (the Finalize
            // Aggregate takes its value as it would from a Partial
            // Aggregate's rows); a column of an inner relation is no key on
            // the device at all: its value is read from the inner row of the
            // group's representative (`aggregates::dependent_column`).
            if sgref == 0 && (*e).type_ != pg_sys::NodeTag::T_Var {
                return why("the target has an expression that is neither a grouping key nor an aggregate");
            }
            if sgref == 0 && aggregates::dependent_column(e, desc.outer_relid) {
                if resolve(e.cast()).is_none() {
                    return why("a grouping column is not read by the scan or join");
                }
                continue;
            }
            codegen::device_type_of(pg_sys::exprType(e))?;
            // (numeric and interval keys group equal values that print
            // differently, 1.0 and 1.00, 1 mon and 30 days: the group shows
            // its representative's, as PostgreSQL shows the first it met)
            match aggregates::key_source(e) {
                aggregates::KeySource::Device => {}
                aggregates::KeySource::Column(v) if resolve(v).is_none() => {
                    return why("a grouping column is not read by the scan or join");
                }
                aggregates::KeySource::Column(_) | aggregates::KeySource::Expr => {
                    // grouped by their bytes on the device
                    let coll = pg_sys::exprCollation(e);
                    if coll != pg_sys::InvalidOid && !pg_sys::get_collation_isdeterministic(coll) {
                        return why("a grouping key has a nondeterministic collation");
                    }
                }
            }
            if let Err(e) = codegen::compile_group_key(e, &resolve, &mut inputs) {
                return why(&e.0);
            }
        }
        Some(nops)
    }
}

/// The partial groups a process's merger returns over `rows` rows of
/// `groups` groups met at random (`gpupreagg::merge`), holding at most
/// `window` groups: all of them once where they fit; else it fills,
/// returns them and begins again, each set taking the rows that bring
/// `window` distinct groups, and where a set barely merged the groups
/// its `chunks` chunks gave (`per_chunk` each), or where the second
/// chunk's groups were barely met in the first, it stops merging and
/// returns those.  TPC-H Q17's `lineitem` grouped by `l_partkey` at SF 10
/// (2 million groups over 60 million rows, a few hundred thousand groups
/// within `work_mem`): some 50 million partial groups, not 2 million.
pub(crate) fn merged_within(groups: f64, rows: f64, window: f64, per_chunk: f64, chunks: f64) -> f64 {
    use crate::customscan::cost::groups_among;
    let all = groups_among(groups, rows);
    // the check at the second chunk: merging stops where less than a
    // tenth of its groups were met in the first (after 65,536 groups)
    let chunk_rows = rows / chunks.max(1.0);
    let met = 1.0 - (-chunk_rows / groups.max(1.0)).exp();
    if chunks >= 2.0 && per_chunk * 2.0 >= super::merge::EARLY_CHECK as f64 && met < 1.0 - super::merge::POOR_REDUCTION
    {
        return (per_chunk * chunks).min(rows);
    }
    if all <= window || groups <= window {
        return all;
    }
    // rows per set: groups * (1 - (1 - 1/groups)^r) = window
    let per_set = (-(1.0 - window / groups).ln() * groups).max(1.0);
    let sets = rows / per_set;
    // the groups given to fill one set, against what it holds
    let given = per_chunk * (per_set / chunk_rows.max(1.0));
    if window > super::merge::POOR_REDUCTION * given {
        return (per_chunk * chunks).min(rows);
    }
    (sets * window).min(rows)
}

/// Whether the executor will merge a process's partial groups across its
/// chunks (`gpupreagg::merge`): every aggregate combines on the host and
/// every grouping key is a fixed-width device value or a column of an
/// inner relation.  Only for the estimate: the executor decides on the
/// compiled plan.
unsafe fn merges_partial_groups(target: *mut pg_sys::PathTarget, desc: &JoinDesc) -> bool {
    // SAFETY: planner state; the target passed `supported`.
    unsafe {
        from_list((*target).exprs).into_iter().all(|e| {
            if (*e).type_ == pg_sys::NodeTag::T_Aggref {
                return aggregates::classify_aggref(e.cast()).is_ok_and(|i| i.kind.combines_on_host());
            }
            match aggregates::key_source(e) {
                aggregates::KeySource::Device => true,
                aggregates::KeySource::Column(v) => (*v).varno != desc.outer_relid as i32,
                aggregates::KeySource::Expr => false,
            }
        })
    }
}

/// Operators' worth (`cpu_operator_cost`) of host work per partial group
/// and numeric sum or average, beyond what PostgreSQL charges: forming
/// the state (numeric_avg_serialize's bytes) in the process that returns
/// the group, and deserializing and combining it in the Finalize
/// Aggregate, which PostgreSQL prices at one operator each.  Measured on
/// the H200 machine (TPC-H SF 10, 2026-11-29): Q15's 2.1 million partial
/// groups of one numeric sum took 2 s to return and 3 s to finalize,
/// about 2.4 us a group, where a row of PostgreSQL's own scan of
/// `lineitem`, priced about 0.034, takes about 0.8 us: some 40
/// operators.  (Q18's 15 million partial groups took 15 s to return and
/// 33 s to finalize, spilled to disk: 48 s where PostgreSQL's whole plan
/// takes 41 s.)
const NUMERIC_STATE_FORM_OPERATORS: f64 = 15.0;
const NUMERIC_STATE_FINAL_OPERATORS: f64 = 25.0;

/// The host cost of the numeric states among the partial groups: formed
/// by each process for its `partial_proc` groups, combined in the
/// Finalize Aggregate for all `partial_total`.
///
/// # Safety
/// The partial target's expressions (planner state).
unsafe fn numeric_state_cost(exprs: &[*mut pg_sys::Node], partial_proc: f64, partial_total: f64) -> f64 {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        let numeric = exprs
            .iter()
            .filter(|&&e| {
                (*e).type_ == pg_sys::NodeTag::T_Aggref
                    && aggregates::classify_aggref(e.cast())
                        .is_ok_and(|i| i.kind == pgstrom_runtime::agg::AggKind::SumNum)
            })
            .count() as f64;
        numeric
            * pg_sys::cpu_operator_cost
            * (partial_proc * NUMERIC_STATE_FORM_OPERATORS + partial_total * NUMERIC_STATE_FINAL_OPERATORS)
    }
}

/// Operators' worth (`cpu_operator_cost`) of host work per partial group
/// and byte of a variable-length grouping key (text, bpchar, bytea) that
/// is a column of an inner relation (read from the inner row at the
/// group's representative combination on the host,
/// `aggregates::KeySource`; the scanned table's come back with the
/// groups), beyond what PostgreSQL charges: taking the inner row apart up
/// to the column and copying the value where the group is returned, and
/// hashing and comparing it in the Finalize Aggregate.  Measured on the
/// H200 machine (TPC-H SF 10, 2026-12-03): Q10's 484,040 partial groups,
/// with five text keys of `customer` and `nation` of about 140 bytes
/// together, took some 900 ms from the GpuPreAgg's last group to the
/// result, about 1.9 us a group, or 2 units of cost there (a unit is
/// about 1 us of a parallel plan's time), where the Gather's, the
/// Finalize Aggregate's and the numeric state's charges came to about
/// 0.25: some 5 operators a byte.
const HOST_KEY_BYTE_OPERATORS: f64 = 5.0;

/// What the variable-length grouping keys among `exprs` that are columns
/// of inner relations (not of scanned relation `outer_relid`) cost the
/// host (HOST_KEY_BYTE_OPERATORS a byte of their average width), for the
/// `partial_total` groups returned.
unsafe fn host_key_cost(
    root: *mut pg_sys::PlannerInfo,
    exprs: &[*mut pg_sys::Node],
    outer_relid: u32,
    partial_total: f64,
) -> f64 {
    // SAFETY: valid target expressions of the query's relations; planner
    // globals read in the backend.
    unsafe {
        let bytes: f64 = exprs
            .iter()
            .filter(|&&e| (*e).type_ != pg_sys::NodeTag::T_Aggref)
            .filter_map(|&e| match aggregates::key_source(e) {
                aggregates::KeySource::Column(v) if (*v).varno != outer_relid as i32 => Some(v),
                _ => None,
            })
            .map(|v| {
                let rte = *(*root).simple_rte_array.add((*v).varno as usize);
                let w = if (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION {
                    pg_sys::get_attavgwidth((*rte).relid, (*v).varattno)
                } else {
                    0
                };
                let w = if w > 0 { w } else { pg_sys::get_typavgwidth((*v).vartype, (*v).vartypmod) };
                w.max(1) as f64
            })
            .sum();
        bytes * HOST_KEY_BYTE_OPERATORS * pg_sys::cpu_operator_cost * partial_total
    }
}

/// The inputs the aggregation may combine with, for the serial or the
/// parallel plan: the scan, or the cheapest GpuJoin path of each outer
/// relation made for the join (join description, inner paths, workers).
pub(crate) unsafe fn inputs_of(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    parallel: bool,
) -> Vec<(JoinDesc, Vec<*mut pg_sys::Path>, i32)> {
    // SAFETY: planner state.
    unsafe {
        // (a table, or a partition of one)
        if matches!(
            (*input_rel).reloptkind,
            pg_sys::RelOptKind::RELOPT_BASEREL | pg_sys::RelOptKind::RELOPT_OTHER_MEMBER_REL
        ) {
            let Some(workers) = scan_workers(root, input_rel, parallel) else { return Vec::new() };
            let desc = JoinDesc {
                outer_relid: (*input_rel).relid,
                depths: Vec::new(),
                agg: None,
                host_quals: Vec::new(),
                host_cost: (0.0, 0.0),
            };
            if let Err(why) = compiles(root, &desc, &[]) {
                pgrx::debug2!("GpuPreAgg: the scan is not on the device: {why}");
                return Vec::new();
            }
            return vec![(desc, Vec::new(), workers)];
        }
        // (a join, or one pair of partitions of PostgreSQL's partition-wise
        // join, whose GROUP BY PostgreSQL's partition-wise aggregation
        // plans per pair)
        if !matches!(
            (*input_rel).reloptkind,
            pg_sys::RelOptKind::RELOPT_JOINREL | pg_sys::RelOptKind::RELOPT_OTHER_JOINREL
        ) {
            return Vec::new();
        }
        stash_all(root, input_rel, parallel)
            .into_iter()
            .map(|prev| {
                let desc = JoinDesc::from_list((*prev).custom_private);
                let inner: Vec<*mut pg_sys::Path> =
                    from_list((*prev).custom_paths).into_iter().map(|p| p.cast()).collect();
                (desc, inner, (*prev).path.parallel_workers)
            })
            // (the host evaluates such a join's host quals after the
            // device returns its rows: nothing the device could aggregate)
            .filter(|(desc, _, _)| desc.host_quals.is_empty())
            .collect()
    }
}

unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
) {
    // SAFETY: planner state of the grouping being planned.
    unsafe {
        if guc::ENABLE_GPUPREAGG.get() {
            add_device_paths(root, input_rel, output_rel, extra);
        }
        // PostgreSQL's own parallel partial aggregation with its groups
        // exchanged (a GroupExchange), each process finalizing its share;
        // or, where the aggregation cannot be partial, its input rows
        let gclause = crate::pg::compat::group_clause(root);
        let flags = (*extra).flags as u32;
        if gclause.is_null()
            || !guc::ENABLE_PARALLEL_FINALIZE.get()
            || !(*output_rel).consider_parallel
            || (*(*root).parse).commandType != pg_sys::CmdType::CMD_SELECT
            || !(*root).rowMarks.is_null()
            || !(*(*root).parse).groupingSets.is_null()
        {
            return;
        }
        let g = Grouping { root, gclause, extra, output_rel };
        let gexprs = pg_sys::get_sortgrouplist_exprs(gclause, (*(*root).parse).targetList);
        let groups = g.groups(gexprs, (*input_rel).rows);
        if flags & pg_sys::GROUPING_CAN_PARTIAL_AGG == 0 {
            // no partial aggregation (DISTINCT aggregates): the rows
            crate::gpupreagg::exchange_rows::add_paths(&g, input_rel, groups);
            return;
        }
        if flags & pg_sys::GROUPING_CAN_USE_HASH == 0 {
            return;
        }
        let partial_rel =
            pg_sys::fetch_upper_rel(root, pg_sys::UpperRelationKind::UPPERREL_PARTIAL_GROUP_AGG, (*output_rel).relids);
        add_exchanged_partial_agg(&g, partial_rel, groups);
    }
}

/// GpuPreAgg's paths of the grouping (a serial node, or a parallel one
/// under a Gather, with its partial groups exchanged or not), each under
/// PostgreSQL's Finalize Aggregate.
///
/// # Safety
/// Planner state of the grouping being planned.
unsafe fn add_device_paths(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
) {
    // SAFETY: planner state of the grouping being planned.
    unsafe {
        let parse = (*root).parse;
        let flags = (*extra).flags as u32;
        let gclause = crate::pg::compat::group_clause(root);
        if (*parse).commandType != pg_sys::CmdType::CMD_SELECT
            || !(*root).rowMarks.is_null()
            || !(*parse).groupingSets.is_null()
            || flags & pg_sys::GROUPING_CAN_PARTIAL_AGG == 0
            || (!gclause.is_null() && flags & pg_sys::GROUPING_CAN_USE_HASH == 0)
        {
            pgrx::debug2!("GpuPreAgg: not a plain grouping that can be partial and hashed (flags {flags})");
            return;
        }
        if no_gpupreagg_can_win(root, input_rel, output_rel) {
            pgrx::debug2!("GpuPreAgg: a path of the aggregation costs less than any GpuPreAgg could");
            return;
        }
        let target = partial_target(root, (*output_rel).reltarget, (*extra).havingQual);
        let exprs = from_list((*target).exprs);
        // A set-returning function among the grouping keys is evaluated by
        // a ProjectSet below the aggregation, over the scan or join; this
        // node reads the relation itself and would never expand it.
        if (*parse).hasTargetSRFs && exprs.iter().any(|&e| pg_sys::expression_returns_set(e)) {
            pgrx::debug2!("GpuPreAgg: a grouping key returns a set");
            return;
        }
        let nkeys = exprs.iter().filter(|&&e| (*e).type_ != pg_sys::NodeTag::T_Aggref).count();
        if nkeys > pgstrom_runtime::agg::MAX_GROUP_KEYS {
            return;
        }
        let partial_rel =
            pg_sys::fetch_upper_rel(root, pg_sys::UpperRelationKind::UPPERREL_PARTIAL_GROUP_AGG, (*output_rel).relids);
        let g = Grouping { root, gclause, extra, output_rel };
        let gexprs = if gclause.is_null() {
            std::ptr::null_mut()
        } else {
            pg_sys::get_sortgrouplist_exprs(gclause, (*parse).targetList)
        };
        for parallel in [false, true] {
            if parallel && !(*output_rel).consider_parallel {
                continue;
            }
            let inputs = inputs_of(root, input_rel, parallel);
            if inputs.is_empty() {
                pgrx::debug2!("GpuPreAgg: no scan or GpuJoin to combine with (parallel: {parallel})");
                continue;
            }
            // each join order the GpuJoin paths tried (the cheapest join
            // need not make the cheapest aggregation: the heap direct path
            // saves gathering the outer rows of a large table, not of a
            // small one); add_path keeps the cheapest
            for (desc, inner_paths, workers) in inputs {
                // (a join over partitions: a GpuPreAgg per partition,
                // gpupreagg::partitions)
                if parallel != (workers > 0) || crate::gpujoin::partitions::over_partitions(root, desc.outer_relid) {
                    continue;
                }
                let Some((cpath, partial_total, groups)) =
                    preagg_path(&g, target, &exprs, nkeys, gexprs, desc, inner_paths, workers, partial_rel, true)
                else {
                    continue;
                };
                if workers > 0 && !gclause.is_null() && guc::ENABLE_PARALLEL_FINALIZE.get() {
                    add_exchanged(&g, cpath, target, &exprs, groups);
                }
                let mut sub: *mut pg_sys::Path = cpath.cast();
                if workers > 0 {
                    let mut rows = partial_total;
                    sub = pg_sys::create_gather_path(root, partial_rel, sub, target, std::ptr::null_mut(), &mut rows)
                        .cast();
                }
                add_final(&g, sub, groups);
            }
        }
        // a partitioned table (or an inheritance parent): a GpuPreAgg per
        // partition under an Append
        crate::gpupreagg::partitions::add_paths(&g, input_rel, target, nkeys, gexprs);
    }
}

/// The grouping being planned, as the hook gave it.
pub(crate) struct Grouping {
    pub root: *mut pg_sys::PlannerInfo,
    pub gclause: *mut pg_sys::List,
    pub extra: *mut pg_sys::GroupPathExtraData,
    pub output_rel: *mut pg_sys::RelOptInfo,
}

impl Grouping {
    /// How PostgreSQL's aggregate above (or beside) a GpuPreAgg groups:
    /// plain without GROUP BY, else hashed.
    pub fn strategy(&self) -> pg_sys::AggStrategy::Type {
        if self.gclause.is_null() { pg_sys::AggStrategy::AGG_PLAIN } else { pg_sys::AggStrategy::AGG_HASHED }
    }

    /// The groups among `rows` rows: one without GROUP BY, else
    /// PostgreSQL's estimate over the grouping expressions `gexprs` (as
    /// the relation read names them).
    ///
    /// # Safety
    /// Planner state of the grouping; `gexprs` its grouping expressions.
    pub unsafe fn groups(&self, gexprs: *mut pg_sys::List, rows: f64) -> f64 {
        if self.gclause.is_null() {
            return 1.0;
        }
        // SAFETY: caller's promise.
        unsafe { pg_sys::estimate_num_groups(self.root, gexprs, rows, std::ptr::null_mut(), std::ptr::null_mut()) }
    }
}

/// The Finalize Aggregate over `sub` (partial groups in `target`'s
/// form: a GpuPreAgg, a Gather over one, an Append of them), added to the
/// grouping's relation.
///
/// # Safety
/// Planner state of the grouping (create_upper_paths_hook).
pub(crate) unsafe fn add_final(g: &Grouping, sub: *mut pg_sys::Path, groups: f64) {
    // SAFETY: caller's promise.
    unsafe {
        let mut final_costs = pg_sys::AggClauseCosts::default();
        if (*g.extra).partial_costs_set {
            final_costs = (*g.extra).agg_final_costs;
        }
        let agg = pg_sys::create_agg_path(
            g.root,
            g.output_rel,
            sub,
            (*g.output_rel).reltarget,
            g.strategy(),
            pg_sys::AggSplit::AGGSPLIT_FINAL_DESERIAL,
            g.gclause,
            (*g.extra).havingQual.cast(),
            &final_costs,
            groups,
        );
        pg_sys::add_path(g.output_rel, agg.cast());
    }
}

/// The grouping keys of the partial target `target` (`exprs`) as the
/// exchange between processes partitions them (`gpupreagg::exchange`):
/// per GROUP BY clause, (its index in `exprs`, the hash function of its
/// equality operator, its collation); None where a clause has no target
/// entry or no hash function.
///
/// # Safety
/// Planner state of the grouping.
pub(crate) unsafe fn exchange_keys(
    g: &Grouping,
    target: *mut pg_sys::PathTarget,
    exprs: &[*mut pg_sys::Node],
) -> Option<Vec<(u32, pg_sys::Oid, pg_sys::Oid)>> {
    // SAFETY: caller's promise.
    unsafe {
        let refs = (*target).sortgrouprefs;
        if refs.is_null() {
            return None;
        }
        let mut keys = Vec::new();
        for c in from_list(g.gclause) {
            let c = c as *mut pg_sys::SortGroupClause;
            let i = (0..exprs.len()).find(|&i| *refs.add(i) == (*c).tleSortGroupRef)?;
            let (mut lhs, mut rhs) = (pg_sys::Oid::INVALID, pg_sys::Oid::INVALID);
            if !pg_sys::get_op_hash_functions((*c).eqop, &mut lhs, &mut rhs) || lhs == pg_sys::Oid::INVALID {
                return None;
            }
            keys.push((i as u32, lhs, pg_sys::exprCollation(exprs[i])));
        }
        (!keys.is_empty()).then_some(keys)
    }
}

/// Beside the parallel GpuPreAgg `cpath` (partial groups in `target`, of
/// `groups` groups in all): the same node with its partial groups
/// exchanged between the processes by their keys, under a Finalize
/// Aggregate in every process, under the Gather (`gpupreagg::exchange`).
///
/// # Safety
/// Planner state of the grouping; `cpath` a parallel GpuPreAgg path of it.
unsafe fn add_exchanged(
    g: &Grouping,
    cpath: *mut pg_sys::CustomPath,
    target: *mut pg_sys::PathTarget,
    exprs: &[*mut pg_sys::Node],
    groups: f64,
) {
    // SAFETY: caller's promise.
    unsafe {
        let Some(keys) = exchange_keys(g, target, exprs) else {
            pgrx::debug2!("GpuPreAgg: a grouping key has no hash function: partial groups not exchanged");
            return;
        };
        let mut desc = JoinDesc::from_list((*cpath).custom_private);
        let Some(a) = desc.agg.as_mut() else { return };
        let keys_len = keys.len();
        a.exchange = keys;
        let ex = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        *ex = *cpath;
        (*ex).custom_paths = pg_sys::list_copy((*cpath).custom_paths);
        (*ex).custom_private = desc.to_list();
        let p = &mut (*ex).path;
        if !p.parallel_safe || p.parallel_workers <= 0 {
            return;
        }
        let div = parallel_divisor(p.parallel_workers);
        if p.rows * div < crate::gpupreagg::exchange::MIN_PARTIAL_GROUPS && !guc::DEBUG_PREFER_PARALLEL_FINALIZE.get() {
            return;
        }
        p.total_cost += crate::gpupreagg::exchange::cost(p.rows, (*target).width, keys_len);
        // the GpuPreAgg's price holds the serial Finalize Aggregate's own
        // work on all partial groups (combining numeric states, hashing
        // and comparing wide keys: numeric_state_cost, host_key_cost);
        // here each process does its share of it
        let partial_total = p.rows * div;
        let serial = numeric_state_cost(exprs, 0.0, partial_total)
            + host_key_cost(g.root, exprs, desc.outer_relid, partial_total);
        p.total_cost = (p.total_cost - serial * (1.0 - 1.0 / div)).max(p.startup_cost);
        add_final_exchanged(g, ex.cast(), groups, "GpuPreAgg");
    }
}

/// Over `ex`, a parallel path whose partial groups are exchanged between
/// the processes (a GpuPreAgg's or a GroupExchange's), the Finalize
/// Aggregate in every process: as a partial path of the grouping, and
/// under a Gather (`groups` groups in all).
///
/// # Safety
/// Planner state of the grouping.
unsafe fn add_final_exchanged(g: &Grouping, ex: *mut pg_sys::Path, groups: f64, label: &str) {
    // SAFETY: caller's promise.
    unsafe {
        let div = parallel_divisor((*ex).parallel_workers);
        let mut final_costs = pg_sys::AggClauseCosts::default();
        if (*g.extra).partial_costs_set {
            final_costs = (*g.extra).agg_final_costs;
        }
        let final_agg = || {
            pg_sys::create_agg_path(
                g.root,
                g.output_rel,
                ex,
                (*g.output_rel).reltarget,
                pg_sys::AggStrategy::AGG_HASHED,
                pg_sys::AggSplit::AGGSPLIT_FINAL_DESERIAL,
                g.gclause,
                (*g.extra).havingQual.cast(),
                &final_costs,
                pg_sys::clamp_row_est(groups / div),
            )
        };
        add_share_paths(g, &final_agg, groups, label);
    }
}

/// `share_agg` makes an aggregation in every process of a parallel plan
/// whose groups no two processes share (they exchanged their rows or
/// partial groups by the grouping keys): added as a partial path of the
/// grouping, and under a Gather (`groups` groups in all).  `label`: the
/// exchanging node, for the debug message.
///
/// # Safety
/// Planner state of the grouping; each call of `share_agg` makes a new
/// path (add_path and add_partial_path free the paths they drop).
pub(crate) unsafe fn add_share_paths(
    g: &Grouping,
    share_agg: &dyn Fn() -> *mut pg_sys::AggPath,
    groups: f64,
    label: &str,
) {
    // SAFETY: caller's promise.
    unsafe {
        let agg = share_agg();
        if !(*agg).path.parallel_safe {
            return;
        }
        // Each process's aggregation returns a share of the final groups,
        // no two the same: a partial path of the grouping, which
        // PostgreSQL's ORDER BY sorts in each process under a Gather Merge
        // (with LIMIT, a bounded sort: only the first rows of each process
        // cross the tuple queues), besides the Gather below.
        let part = share_agg();
        let prefer = guc::DEBUG_PREFER_PARALLEL_FINALIZE.get();
        if prefer {
            // (tests: no other path of the aggregation is as cheap)
            (*part).path.startup_cost = 0.0;
            (*part).path.total_cost = 0.0;
        }
        pg_sys::add_partial_path(g.output_rel, part.cast());
        let mut rows = groups;
        let gather = pg_sys::create_gather_path(
            g.root,
            g.output_rel,
            agg.cast(),
            (*g.output_rel).reltarget,
            std::ptr::null_mut(),
            &mut rows,
        );
        pgrx::debug2!(
            "{label}: {} exchanged, {} workers, {groups:.0} groups, cost {:.2}",
            if (*agg).aggsplit == pg_sys::AggSplit::AGGSPLIT_SIMPLE { "rows" } else { "partial groups" },
            (*agg).path.parallel_workers,
            (*gather).path.total_cost
        );
        if prefer {
            (*gather).path.startup_cost = 0.0;
            (*gather).path.total_cost = 0.0;
        }
        pg_sys::add_path(g.output_rel, gather.cast());
    }
}

/// Beside PostgreSQL's own parallel partial aggregation (the cheapest
/// partial path of the partial grouping relation `partial_rel`): the same
/// with its partial groups exchanged between the processes by a
/// GroupExchange (`gpupreagg::exchange_node`), each process finalizing
/// its share (`groups` groups in all).
///
/// # Safety
/// Planner state of the grouping.
unsafe fn add_exchanged_partial_agg(g: &Grouping, partial_rel: *mut pg_sys::RelOptInfo, groups: f64) {
    // SAFETY: caller's promise.
    unsafe {
        let Some(&sub) = from_list((*partial_rel).partial_pathlist).first() else { return };
        let sub = sub as *mut pg_sys::Path;
        if !(*sub).parallel_safe || (*sub).parallel_workers <= 0 || !(*sub).param_info.is_null() {
            return;
        }
        let prefer = guc::DEBUG_PREFER_PARALLEL_FINALIZE.get();
        if (*sub).rows * parallel_divisor((*sub).parallel_workers) < crate::gpupreagg::exchange::MIN_PARTIAL_GROUPS
            && !prefer
        {
            return;
        }
        // A partial aggregation that barely reduces its rows (each group
        // a row or two: TPC-H Q16's grouping by the supplier, which the
        // DISTINCT rewrite makes) only adds its hashing to the exchange:
        // measured 1.6x slower than PostgreSQL's own plan at SF 1, where
        // PostgreSQL's costs (a Gather's rows dearer than an exchange's)
        // had it cheaper
        if (*sub).type_ == pg_sys::NodeTag::T_AggPath && !prefer {
            let input = (*(*(sub as *mut pg_sys::AggPath)).subpath).rows;
            if (*sub).rows * 2.0 > input {
                return;
            }
        }
        let target = (*sub).pathtarget;
        let exprs = from_list((*target).exprs);
        let Some(keys) = exchange_keys(g, target, &exprs) else { return };
        let ex = crate::gpupreagg::exchange_node::path(partial_rel, sub, &keys);
        add_final_exchanged(g, ex.cast(), groups, "GroupExchange");
    }
}

/// A GpuPreAgg path over the scan or join `desc` (with its inner paths
/// and workers) returning `target`'s partial groups (`exprs`, of which
/// `nkeys` grouping keys; `gexprs` the grouping expressions as the
/// relation scanned names them), belonging to `parent`: (the path, the
/// partial groups it returns in all, the groups of the aggregation over
/// its rows).  `whole`: the node reads every row the grouping reads (not
/// one partition of them), so that a HAVING clause may be evaluated on
/// its groups.  None where the aggregation or the join does not run on
/// the device.
///
/// # Safety
/// Planner state of the grouping (create_upper_paths_hook); `desc` made
/// for it.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn preagg_path(
    g: &Grouping,
    target: *mut pg_sys::PathTarget,
    exprs: &[*mut pg_sys::Node],
    nkeys: usize,
    gexprs: *mut pg_sys::List,
    mut desc: JoinDesc,
    inner_paths: Vec<*mut pg_sys::Path>,
    workers: i32,
    parent: *mut pg_sys::RelOptInfo,
    whole: bool,
) -> Option<(*mut pg_sys::CustomPath, f64, f64)> {
    // SAFETY: caller's promise.
    unsafe {
        let root = g.root;
        let inner_relids: Vec<*mut pg_sys::Bitmapset> = inner_paths.iter().map(|p| (*(**p).parent).relids).collect();
        let Some(nops) = supported(target, &desc, &inner_relids) else {
            pgrx::debug2!("GpuPreAgg: the aggregation does not run on the device");
            return None;
        };
        if inner_bytes(&inner_paths) > guc::GPU_JOIN_MEMORY_LIMIT.get() as f64 * 1024.0 {
            return None;
        }
        let outer = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let rows_in = desc.depths.last().map_or((*outer).rows, |d| d.rows_out);
        let groups = g.groups(gexprs, rows_in);
        let order = if g.gclause.is_null() {
            0.0
        } else {
            crate::pg::cost::key_order_correlation(root, &from_list(gexprs), desc.outer_relid)
        };
        // costs: the join's (or scan's), less forming joined rows on the
        // host, plus the reduction and the partial rows that come back
        let (startup, total, _, host_reads) = cost(root, &desc, &inner_paths, workers, false);
        let div = if workers > 0 { parallel_divisor(workers) } else { 1.0 };
        let rows_proc = rows_in / div;
        let rte = *(*root).simple_rte_array.add(desc.outer_relid as usize);
        let formed = if desc.depths.is_empty() { 0.0 } else { rows_proc * crate::customscan::cost::tuple_cost_of(rte) };
        // the heap direct path: the all-visible blocks' rows are taken
        // apart on the device, not gathered by the host (when no grouping
        // key of a variable-length type is evaluated on the host, as the
        // executor requires; a key that is a column comes back with the
        // groups)
        let host_keys = exprs.iter().any(|&e| {
            (*e).type_ != pg_sys::NodeTag::T_Aggref
                && pg_sys::get_typlen(pg_sys::exprType(e)) < 0
                && (*crate::codegen::strip_relabel(e)).type_ != pg_sys::NodeTag::T_Var
        });
        let frac = if host_keys { 0.0 } else { crate::customscan::cost::planned_fraction(outer, rte) };
        // an Arrow table's record batches are read on the host for a
        // group's row only when a grouping key reads the table's columns
        let outer_keys = exprs.iter().any(|&e| {
            (*e).type_ != pg_sys::NodeTag::T_Aggref
                && pg_sys::bms_is_member(desc.outer_relid as i32, pg_sys::pull_varnos(root, e))
        });
        let unread = if outer_keys { 0.0 } else { host_reads };
        let brin = crate::customscan::cost::brin_fraction(root, outer);
        let mut direct =
            frac * brin * (*outer).tuples.max(0.0) * crate::customscan::cost::gather_cost_per_row(rte) / div;
        // a scan's direct pages are read by the GPU service, not by the
        // backend, and kept in its column cache between queries, as an
        // Arrow table's columns are (arrow_host_reads): their pages
        // cost the host nothing (measured: TPC-H Q6 at SF 10 on an
        // H200, 295 ms against PostgreSQL's 863 ms with 16 workers).
        // Over a join too: the inner relations are built once per
        // query (priced in the join's start-up), and the scanned
        // table's pages are read by the GPU service all the same
        if frac > 0.0 {
            let (mut spc_random, mut spc_seq) = (0.0, 0.0);
            pg_sys::get_tablespace_page_costs((*outer).reltablespace, &mut spc_random, &mut spc_seq);
            direct += frac * brin * spc_seq * (*outer).pages as f64;
        }
        // partial groups: those found among each chunk's rows (a direct
        // request of up to heap_direct::BATCH_BLOCKS blocks is one
        // chunk, an Arrow record batch read by the GPU service too)
        let nchunks = (brin * crate::customscan::cost::planned_chunks(outer, rte, frac, workers > 0))
            .ceil()
            .max(workers as f64 + 1.0);
        // (where a key follows the table's physical order, `order` of
        // the groups lie each in one chunk and one process: a chunk
        // holds its share of the groups, plus one cut at its edge)
        let clustered = (groups.min(rows_in) / nchunks).ceil() + 1.0;
        let per_chunk_random = crate::customscan::cost::groups_among(groups, rows_in / nchunks);
        let per_chunk = order * clustered + (1.0 - order) * per_chunk_random;
        // a process's chunks merged: its groups once (processes as
        // PostgreSQL counts them for a partial path: the divisor), as
        // far as its merger's memory holds them (below)
        let merges = merges_partial_groups(target, &desc);
        let nwords: usize = exprs
            .iter()
            .filter(|&&e| (*e).type_ == pg_sys::NodeTag::T_Aggref)
            .filter_map(|&e| aggregates::classify_aggref(e.cast()).ok())
            .map(|i| i.kind.nwords())
            .sum();
        let group_bytes = crate::gpupreagg::merge::bytes_per_group(nkeys, nwords) as f64;
        let hash_mem = pg_sys::get_hash_memory_limit() as f64;
        // a serial node that merges its groups holds each once after
        // its last chunk where they fit in hash_mem: the HAVING clause
        // filters them there (codegen::having), and only those that
        // pass are formed and finalized
        let having = if whole && workers == 0 && merges {
            crate::codegen::having::pushable((*g.extra).havingQual, exprs)
        } else {
            Vec::new()
        };
        // beyond hash_mem, groups told apart by their device values are
        // spilled (gpupreagg::spill): written and read back once, each
        // partition within hash_mem
        let by_value = exprs.iter().all(|&e| {
            (*e).type_ == pg_sys::NodeTag::T_Aggref
                || matches!(aggregates::key_source(e), aggregates::KeySource::Device)
        });
        let merged = if merges {
            // (the merger's budget: with a group filter, hash_mem, and
            // where the keys are device values it spills what does not fit
            // and so holds every group; else work_mem; a full set is
            // returned and merging begins again)
            let window = if having.is_empty() {
                (pg_sys::work_mem.max(64) as f64 * 1024.0 / group_bytes).max(1.0)
            } else if by_value {
                f64::INFINITY
            } else {
                (hash_mem / group_bytes).max(1.0)
            };
            (order * (groups + div.ceil())
                + (1.0 - order)
                    * div.ceil()
                    * merged_within(groups, rows_proc, window, per_chunk_random, nchunks / div))
            .max(1.0)
        } else {
            f64::INFINITY
        };
        let mut partial_total = pg_sys::clamp_row_est(rows_in.min(per_chunk * nchunks).min(merged));
        let mut filter_cost = 0.0;
        if !having.is_empty() {
            let bytes = groups * group_bytes;
            let spill = !having.is_empty()
                && bytes > hash_mem
                && by_value
                && bytes <= hash_mem * crate::gpupreagg::spill::PARTITIONS as f64;
            if spill {
                let record = (8 * nwords + 24 * nkeys + 4 * (desc.depths.len() + 1)) as f64;
                let mut pages = 2.0 * groups * record / pg_sys::BLCKSZ as f64;
                pages *= pg_sys::seq_page_cost;
                filter_cost += pages;
            }
            if bytes <= hash_mem || spill {
                let sel = pg_sys::clauselist_selectivity(
                    root,
                    to_list(&having),
                    0,
                    pg_sys::JoinType::JOIN_INNER,
                    std::ptr::null_mut(),
                );
                filter_cost += groups * pg_sys::cpu_operator_cost * having.len() as f64;
                partial_total = pg_sys::clamp_row_est(groups.min(partial_total) * sel);
            }
        }
        let partial_proc = pg_sys::clamp_row_est(partial_total / div);
        // the merger's own work: each chunk's partial groups of a process
        // looked up and combined on the host, priced as PostgreSQL prices
        // a hash aggregate's input rows (measured on the H100 machine at
        // TPC-H SF 10: Q13's serial GpuPreAgg merged 15 million chunk
        // groups into 1.5 million in 2.8 s of its 5.2 s, unpriced before)
        let merging = if merges {
            rows_in.min(per_chunk * nchunks) / div * pg_sys::cpu_operator_cost * (nkeys + nops) as f64
        } else {
            0.0
        };
        // (the device's work, shared by the processes as the join's is)
        let reads_itself = crate::customscan::cost::device_reads_itself(outer, rte);
        let device_rows = rows_in / crate::customscan::cost::device_divisor(outer, rte, workers, reads_itself);
        let numeric = numeric_state_cost(exprs, partial_proc, partial_total);
        let keys = host_key_cost(root, exprs, desc.outer_relid, partial_total);
        let reduce = device_rows * crate::customscan::cost::device_operator_cost() * (nkeys + nops + 1) as f64
            + partial_proc * pg_sys::cpu_tuple_cost
            + merging
            + numeric
            + keys
            + filter_cost;
        pgrx::debug2!(
            "GpuPreAgg: {workers} workers, {rows_in:.0} rows in, {groups:.0} groups, {nchunks:.0} chunks, \
         {partial_total:.0} partial groups, cost {:.2} (input {total:.2} less formed rows {formed:.2}, direct \
         share {direct:.2}, unread {unread:.2}; reduction {reduce:.2}: merging {merging:.2}, numeric states \
         {numeric:.2}, host keys {keys:.2})",
            (total - formed - direct - unread + reduce).max(startup)
        );
        desc.agg = Some(AggDesc { target: exprs.to_vec(), rows_in, groups, having, exchange: Vec::new() });

        let cpath = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cpath).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = parent;
        p.pathtarget = target;
        p.param_info = std::ptr::null_mut();
        p.parallel_aware = workers > 0;
        p.parallel_safe = crate::customscan::cost::device_path_parallel_safe(
            (*g.output_rel).consider_parallel,
            workers,
            if desc.depths.is_empty() { (*outer).tuples.max(0.0) } else { f64::INFINITY },
        ) && inner_paths.iter().all(|p| (**p).parallel_safe);
        p.parallel_workers = workers;
        p.pathkeys = std::ptr::null_mut();
        p.rows = partial_proc;
        p.startup_cost = startup;
        p.total_cost = (total - formed - direct - unread + reduce).max(startup);
        (*cpath).flags = 0;
        (*cpath).custom_paths = to_list(&inner_paths.iter().map(|p| p.cast()).collect::<Vec<_>>());
        (*cpath).custom_private = desc.to_list();
        (*cpath).methods = crate::gpupreagg::plan::path_methods();
        Some((cpath, partial_total, groups))
    }
}
