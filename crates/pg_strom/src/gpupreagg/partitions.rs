//! GpuPreAgg over a partitioned table (or an inheritance parent): the
//! partition-wise GROUP BY that does not need PostgreSQL's
//! `enable_partitionwise_aggregate`, nor grouping keys that hold the
//! partition key.
//!
//!   Finalize {Hash|Plain} Aggregate
//!     -> Append                           (run-time pruning as PostgreSQL's)
//!          -> Custom Scan (GpuPreAgg) on partition 1
//!          -> Partial HashAggregate        (a partition the device cannot read)
//!               -> Seq Scan on partition 2
//!          -> ...
//!
//! Each leaf partition that plan-time pruning kept (sub-partitions
//! included, empty ones too) gets the cheapest GpuPreAgg over it, with the
//! grouping's partial target translated to the partition's columns; a
//! partition the device cannot read (a foreign table of another kind, a
//! qual without a device function) gets PostgreSQL's own partial
//! aggregate over its cheapest path, so the Append holds every partition.
//! The paths belong to the partitions' relations and the Append to the
//! partitioned table's, so that PostgreSQL's executor prunes partitions at
//! run time (a qual with a parameter) exactly as for its own Append.  A
//! partition's node never evaluates the HAVING clause: its groups are
//! partial across partitions.  The Append is serial, and also a Parallel
//! Append under a Gather (`gpujoin::partitions::parallel_append`: each
//! partition's node run whole by one process, several at once, each on
//! the GPU its partition prefers); the cheaper is kept.
//!
//! A GROUP BY over a join of a partitioned table with plain tables (the
//! asymmetric partition-wise join, `gpujoin::partitions`) is planned the
//! same way: a GpuPreAgg per partition over the partition's join, each
//! in a child join relation of its own, under an Append of the join
//! relation.  Every partition must be on the device there (PostgreSQL's
//! own plan joins the Append of the partitions otherwise).

use pgrx::pg_sys;

use crate::gpujoin::partitions::{
    child_joinrel, device_leaves, leaf_target, leaves, over_partitions, parallel_append, serial_append, to_leaf,
    translate,
};
use crate::gpujoin::path::{JoinDesc, shared_inner_cost};
use crate::gpupreagg::path::{Grouping, add_final, inputs_of, preagg_path};
use crate::pg::list::from_list;

/// Add the Finalize Aggregate over an Append of per-partition GpuPreAggs
/// when `input_rel` is a partitioned table or an inheritance parent and
/// the device reads at least one of its partitions.
///
/// # Safety
/// Planner state of the grouping (create_upper_paths_hook); `target` is
/// its partial target over `input_rel` (`nkeys` grouping keys first),
/// `gexprs` its grouping expressions.
pub(crate) unsafe fn add_paths(
    g: &Grouping,
    input_rel: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    nkeys: usize,
    gexprs: *mut pg_sys::List,
) {
    // SAFETY: planner state of the grouping (caller).
    unsafe {
        let root = g.root;
        if matches!(
            (*input_rel).reloptkind,
            pg_sys::RelOptKind::RELOPT_JOINREL | pg_sys::RelOptKind::RELOPT_OTHER_JOINREL
        ) {
            for (desc, inner, _) in inputs_of(root, input_rel, false) {
                if over_partitions(root, desc.outer_relid) {
                    add_join_paths(g, input_rel, target, nkeys, gexprs, &desc, &inner);
                }
            }
            return;
        }
        if (*input_rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL {
            return;
        }
        let rte = *(*root).simple_rte_array.add((*input_rel).relid as usize);
        if !(*rte).inh || pg_sys::is_dummy_rel(input_rel) {
            return;
        }
        let mut parts = Vec::new();
        leaves(root, (*input_rel).relid, &mut parts);
        if parts.is_empty() {
            return;
        }
        let mut partial_costs = pg_sys::AggClauseCosts::default();
        if (*g.extra).partial_costs_set {
            partial_costs = (*g.extra).agg_partial_costs;
        }
        let mut subpaths: Vec<*mut pg_sys::Node> = Vec::new();
        let mut on_device = 0;
        for &part in &parts {
            let t = leaf_target(root, target, part, input_rel);
            let texprs = from_list((*t).exprs);
            let pgexprs = to_leaf(root, gexprs.cast(), part, input_rel).cast();
            let best = inputs_of(root, part, false)
                .into_iter()
                .filter(|(_, _, workers)| *workers == 0)
                .filter_map(|(desc, inner, workers)| {
                    preagg_path(g, t, &texprs, nkeys, pgexprs, desc, inner, workers, part, false)
                })
                .map(|(p, _, _)| p)
                .min_by(|a, b| (**a).path.total_cost.total_cmp(&(**b).path.total_cost));
            if let Some(p) = best {
                on_device += 1;
                subpaths.push(p.cast());
                continue;
            }
            // PostgreSQL's partial aggregate over the partition
            let cheapest = (*part).cheapest_total_path;
            if cheapest.is_null() || !(*cheapest).param_info.is_null() {
                pgrx::debug2!("GpuPreAgg: a partition has no plain path to aggregate");
                return;
            }
            let groups = g.groups(pgexprs, (*cheapest).rows);
            let agg = pg_sys::create_agg_path(
                root,
                part,
                cheapest,
                t,
                g.strategy(),
                pg_sys::AggSplit::AGGSPLIT_INITIAL_SERIAL,
                g.gclause,
                std::ptr::null_mut(),
                &partial_costs,
                groups,
            );
            subpaths.push(agg.cast());
        }
        if on_device == 0 {
            pgrx::debug2!("GpuPreAgg: no partition of the table runs on the device");
            return;
        }
        add_append(g, input_rel, target, gexprs, subpaths, &parts, on_device, 0.0);
    }
}

/// The Finalize Aggregate over an Append of `subpaths` (partial groups of
/// each partition, `on_device` of them by a GpuPreAgg) for `input_rel`.
///
/// # Safety
/// As [`add_paths`]; `subpaths` are paths of `input_rel`'s partitions
/// (or child joins) in `target`'s form, reading `leaves`.
#[allow(clippy::too_many_arguments)]
unsafe fn add_append(
    g: &Grouping,
    input_rel: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    gexprs: *mut pg_sys::List,
    subpaths: Vec<*mut pg_sys::Node>,
    leaves: &[*mut pg_sys::RelOptInfo],
    on_device: usize,
    build: f64,
) {
    // SAFETY: caller's promise.
    unsafe {
        let root = g.root;
        let nparts = subpaths.len();
        let groups = g.groups(gexprs, (*input_rel).rows);
        // several partitions at once: a Parallel Append under a Gather,
        // each partition's node run whole by one process
        if let Some(pa) = parallel_append(root, input_rel, &subpaths, leaves, build) {
            (*pa).path.pathtarget = target;
            let mut rows = (*pa).path.rows;
            let gather =
                pg_sys::create_gather_path(root, input_rel, pa.cast(), target, std::ptr::null_mut(), &mut rows);
            pgrx::debug2!(
                "GpuPreAgg: {nparts} partitions ({on_device} on the device) under a Parallel Append, {} workers, cost {:.2}",
                (*pa).path.parallel_workers,
                (*gather).path.total_cost
            );
            add_final(g, gather.cast(), groups);
        }
        let append = serial_append(root, input_rel, &subpaths);
        (*append).path.pathtarget = target;
        pgrx::debug2!(
            "GpuPreAgg: {nparts} partitions ({on_device} on the device), cost {:.2}",
            (*append).path.total_cost
        );
        add_final(g, append.cast(), groups);
    }
}

/// The Finalize Aggregate over an Append of a GpuPreAgg per partition of
/// `desc`, a join over partitions (`gpujoin::partitions`), for join
/// relation `input_rel`.
///
/// # Safety
/// As [`add_paths`]; `desc` and `inner` a GpuJoin of `input_rel` stashed
/// by the join's path hook.
unsafe fn add_join_paths(
    g: &Grouping,
    input_rel: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    nkeys: usize,
    gexprs: *mut pg_sys::List,
    desc: &JoinDesc,
    inner: &[*mut pg_sys::Path],
) {
    // SAFETY: caller's promise.
    unsafe {
        let root = g.root;
        let parent = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let Some(parts) = device_leaves(root, parent) else { return };
        let mut subpaths: Vec<*mut pg_sys::Node> = Vec::with_capacity(parts.len());
        let mut build = 0.0;
        for &leaf in &parts {
            let ld = translate(root, desc, leaf, parent);
            let crel = child_joinrel(root, input_rel, leaf, parent);
            let t = leaf_target(root, target, leaf, parent);
            let texprs = from_list((*t).exprs);
            let pgexprs = to_leaf(root, gexprs.cast(), leaf, parent).cast();
            // (the partitions after the first take the first one's inner
            // rows and build: gpujoin/exec/query_share.rs)
            let shared = shared_inner_cost(&ld, inner);
            if subpaths.is_empty() {
                build = shared;
            }
            let shared = if subpaths.is_empty() { 0.0 } else { shared };
            let Some((p, _, _)) = preagg_path(g, t, &texprs, nkeys, pgexprs, ld, inner.to_vec(), 0, crel, false) else {
                pgrx::debug2!("GpuPreAgg: partition {} of a join over partitions not on the device", (*leaf).relid);
                return;
            };
            (*p).path.startup_cost = ((*p).path.startup_cost - shared).max(0.0);
            (*p).path.total_cost = ((*p).path.total_cost - shared).max((*p).path.startup_cost);
            subpaths.push(p.cast());
        }
        let n = subpaths.len();
        add_append(g, input_rel, target, gexprs, subpaths, &parts, n, build);
    }
}
