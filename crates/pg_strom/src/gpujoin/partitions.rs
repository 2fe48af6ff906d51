//! The asymmetric partition-wise GpuJoin: a join of a partitioned table
//! (or an inheritance parent) with tables that are not partitioned like
//! it, pushed below PostgreSQL's Append into each partition.
//!
//!   Append
//!     -> Custom Scan (GpuJoin) on partition 1
//!          -> Seq Scan on dimension
//!     -> Custom Scan (GpuJoin) on partition 2
//!          -> Seq Scan on dimension
//!
//! PostgreSQL's own partition-wise join needs both sides partitioned
//! alike; this one needs no partitioning of the inner side.  The join is
//! first described over the partitioned table itself: a [`JoinDesc`] whose
//! outer relation is the partitioned table (a "join over partitions"),
//! which is never planned as it is.  The path hook stashes it as the join
//! relation's GpuJoin, so that a deeper join extends it by one depth and
//! GpuPreAgg aggregates it (`gpupreagg::partitions`: a GpuPreAgg per
//! partition under the Append).  Each leaf partition that plan-time
//! pruning kept (sub-partitions' leaves too, empty ones too) gets the
//! description translated to its columns ([`translate`]), in a child join
//! relation of its own ([`child_joinrel`]); the Append of those paths
//! belongs to the join relation.  Each partition's node reads its inner
//! relations itself (the GPU service's cache of inner builds serves the
//! partitions after the first where the inner tables' pages are all
//! visible; `gpujoin::inner_cache`).
//!
//! Only what is right partition by partition: inner, left (the partitioned
//! side kept), semi and anti joins, where a partition's joined rows depend
//! on its own rows alone; never RIGHT or FULL, whose unmatched inner rows
//! would come once per partition.  Inner relations are plain tables (their
//! scans are planned once per partition).  Every leaf must be a relation
//! the device reads (heap, Arrow, GPU store), or the join stays
//! PostgreSQL's.  The Append is serial (a path of the join relation), and
//! also parallel ([`parallel_append`], a partial path of the join
//! relation, under PostgreSQL's Gather or a parallel join above): each
//! partition's node is run whole by one process, several at once; the
//! cheaper is kept.  Run-time pruning is PostgreSQL's only for an Append
//! of the partitioned table's own scans, as for its own partition-wise
//! joins.

use pgrx::pg_sys;

use crate::gpujoin::path::JoinDesc;
use crate::pg::list::from_list;

/// The leaf relations of appendrel `relid` that planning kept: neither
/// pruned nor proven empty; a sub-partitioned child's own leaves.
///
/// # Safety
/// Planner state; `relid` is an appendrel parent of `root`.
pub(crate) unsafe fn leaves(root: *mut pg_sys::PlannerInfo, relid: u32, out: &mut Vec<*mut pg_sys::RelOptInfo>) {
    // SAFETY: planner state; append_rel_list holds AppendRelInfos.
    unsafe {
        for a in from_list((*root).append_rel_list) {
            let info = a as *mut pg_sys::AppendRelInfo;
            if (*info).parent_relid != relid {
                continue;
            }
            let child = (*info).child_relid;
            if child as usize >= (*root).simple_rel_array_size as usize {
                continue;
            }
            let rel = *(*root).simple_rel_array.add(child as usize);
            if rel.is_null() || pg_sys::is_dummy_rel(rel) {
                continue;
            }
            let rte = *(*root).simple_rte_array.add(child as usize);
            if (*rte).inh {
                leaves(root, child, out);
            } else {
                out.push(rel);
            }
        }
    }
}

/// True when range table index `relid` is a partitioned table (or an
/// inheritance parent) planned as an Append of its members: the outer
/// relation of a join over partitions.
///
/// # Safety
/// Planner state; `relid` is a base relation of `root`.
pub(crate) unsafe fn over_partitions(root: *mut pg_sys::PlannerInfo, relid: u32) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        let rel = *(*root).simple_rel_array.add(relid as usize);
        let rte = *(*root).simple_rte_array.add(relid as usize);
        (*rte).inh && !rel.is_null() && (*rel).reloptkind == pg_sys::RelOptKind::RELOPT_BASEREL
    }
}

/// The leaves a join over partitioned table `rel` reads, or None when one
/// of them is not a relation the device scans (a foreign table of another
/// kind), when none is left, or when `rel` is not such a table.
///
/// # Safety
/// Planner state; `rel` a base relation being planned.
pub(crate) unsafe fn device_leaves(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
) -> Option<Vec<*mut pg_sys::RelOptInfo>> {
    // SAFETY: caller's promise.
    unsafe {
        if !over_partitions(root, (*rel).relid) || pg_sys::is_dummy_rel(rel) || !(*rel).lateral_relids.is_null() {
            return None;
        }
        let mut parts = Vec::new();
        leaves(root, (*rel).relid, &mut parts);
        for &p in &parts {
            if crate::gpujoin::path::scan_workers(root, p, false).is_none() {
                pgrx::debug2!("GpuJoin: partition {} of a partitioned table is not read by the device", (*p).relid);
                return None;
            }
        }
        (!parts.is_empty()).then_some(parts)
    }
}

/// True when `rel` may be the inner relation of a join over partitions:
/// a plain table (or foreign table), whose scan path is planned once per
/// partition.
///
/// # Safety
/// Planner state.
pub(crate) unsafe fn plain_inner(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        if (*rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL || (*rel).rtekind != pg_sys::RTEKind::RTE_RELATION {
            return false;
        }
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        !(*rte).inh
    }
}

/// `node` with the columns of partitioned table `parent` translated to
/// those of its leaf `leaf` (other relations' columns as they are); NULL
/// stays NULL.
///
/// # Safety
/// Planner state; `leaf` descends from `parent`.
pub(crate) unsafe fn to_leaf(
    root: *mut pg_sys::PlannerInfo,
    node: *mut pg_sys::Node,
    leaf: *mut pg_sys::RelOptInfo,
    parent: *mut pg_sys::RelOptInfo,
) -> *mut pg_sys::Node {
    if node.is_null() {
        return node;
    }
    // SAFETY: planner state (caller).
    unsafe { crate::pg::compat::translate_to_child(root, node, leaf, parent) }
}

/// `target` with its expressions translated from `parent` to its leaf
/// `leaf` (the sort-group references kept).
///
/// # Safety
/// Planner state; `leaf` descends from `parent`.
pub(crate) unsafe fn leaf_target(
    root: *mut pg_sys::PlannerInfo,
    target: *mut pg_sys::PathTarget,
    leaf: *mut pg_sys::RelOptInfo,
    parent: *mut pg_sys::RelOptInfo,
) -> *mut pg_sys::PathTarget {
    // SAFETY: caller's promise.
    unsafe {
        let t = pg_sys::copy_pathtarget(target);
        (*t).exprs = to_leaf(root, (*target).exprs.cast(), leaf, parent).cast();
        t
    }
}

/// A serial Append of `subpaths` (paths of `rel`'s partitions or child
/// joins), without pathkeys or parameters.
///
/// # Safety
/// Planner state; `subpaths` are paths of `rel`'s members.
pub(crate) unsafe fn serial_append(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    subpaths: &[*mut pg_sys::Node],
) -> *mut pg_sys::AppendPath {
    // SAFETY: caller's promise.
    unsafe {
        pg_sys::create_append_path(
            root,
            rel,
            crate::pg::list::to_list(subpaths),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            false,
            -1.0,
        )
    }
}

/// A Parallel Append of `subpaths` (paths of `rel`'s partitions or child
/// joins, none parallel-aware: each runs whole in the one process that
/// takes it), with as many workers as PostgreSQL gives such an Append
/// (one more for each doubling of the partitions, up to
/// `max_parallel_workers_per_gather`; PostgreSQL's `enable_parallel_append`
/// applies), so that several partitions' nodes run at once (on one GPU, or
/// each on the GPU its partition prefers).
/// `extra_build`: what reading and loading the inner relations costs a
/// process beyond the first (`subpaths` after the first are priced
/// sharing the first one's build, which a node in another process
/// cannot).  None where `rel` or a subpath may not run in parallel, and
/// where a leaf (of `leaves`) is a gstore_fdw table or a heap table read
/// from its GPU cache: a worker would replay its base file and redo log
/// for every query (a session replays them once), and the store is read
/// by serial plans only.
///
/// # Safety
/// Planner state; `subpaths` are paths of `rel`'s members, `leaves` the
/// leaf relations they read.
pub(crate) unsafe fn parallel_append(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    subpaths: &[*mut pg_sys::Node],
    leaves: &[*mut pg_sys::RelOptInfo],
    extra_build: f64,
) -> Option<*mut pg_sys::AppendPath> {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        let most = pg_sys::max_parallel_workers_per_gather;
        if !pg_sys::enable_parallel_append || !(*rel).consider_parallel || most <= 0 || subpaths.len() < 2 {
            return None;
        }
        if leaves.iter().any(|&leaf| {
            let rte = *(*root).simple_rte_array.add((*leaf).relid as usize);
            crate::customscan::cost::is_gstore_relation(rte)
        }) {
            return None;
        }
        // A whole device node is not parallel-safe where PostgreSQL would
        // run it in every process (`device_path_parallel_safe`); under a
        // Parallel Append one process runs it: a copy that is, where its
        // relation and inner paths may run in a worker.
        let mut children: Vec<*mut pg_sys::Node> = Vec::with_capacity(subpaths.len());
        for &p in subpaths {
            let path = p as *mut pg_sys::Path;
            if (*path).parallel_safe {
                children.push(p);
                continue;
            }
            // (a partition that may not run in a worker made the
            // partitioned table's, and so `rel`'s, consider_parallel false)
            if (*path).type_ != pg_sys::NodeTag::T_CustomPath {
                return None;
            }
            let c = path as *mut pg_sys::CustomPath;
            if !from_list((*c).custom_paths).iter().all(|&q| (*(q as *mut pg_sys::Path)).parallel_safe) {
                return None;
            }
            let copy = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
            *copy = *c;
            (*copy).custom_paths = pg_sys::list_copy((*c).custom_paths);
            (*copy).path.parallel_safe = true;
            children.push(copy.cast());
        }
        let workers = ((usize::BITS - children.len().leading_zeros()) as i32).min(most);
        let append = pg_sys::create_append_path(
            root,
            rel,
            crate::pg::list::to_list(&children),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            workers,
            true,
            -1.0,
        );
        if !(*append).path.parallel_safe {
            return None;
        }
        let procs = (workers + i32::from(pg_sys::parallel_leader_participation)).max(1) as f64;
        let extra = extra_build * (procs - 1.0).min(subpaths.len() as f64 - 1.0) / procs;
        (*append).path.startup_cost += extra;
        (*append).path.total_cost += extra;
        Some(append)
    }
}

/// The fraction of `parent`'s rows in `leaf`.
unsafe fn share(leaf: *mut pg_sys::RelOptInfo, parent: *mut pg_sys::RelOptInfo) -> f64 {
    // SAFETY: valid relations.
    unsafe { if (*parent).rows > 0.0 { ((*leaf).rows / (*parent).rows).clamp(0.0, 1.0) } else { 0.0 } }
}

/// `desc`, a join over partitioned table `parent`, as the same join over
/// its leaf `leaf`: expressions translated to the leaf's columns, row
/// estimates scaled by the leaf's share of the rows, the scan quals the
/// device cannot run found again among the leaf's own.
///
/// # Safety
/// Planner state; `leaf` is a leaf of `parent`, the desc's outer relation.
pub(crate) unsafe fn translate(
    root: *mut pg_sys::PlannerInfo,
    desc: &JoinDesc,
    leaf: *mut pg_sys::RelOptInfo,
    parent: *mut pg_sys::RelOptInfo,
) -> JoinDesc {
    // SAFETY: caller's promise.
    unsafe {
        let f = share(leaf, parent);
        let tr = |n: *mut pg_sys::Node| to_leaf(root, n, leaf, parent);
        let parent_relid = (*parent).relid as i32;
        // scan quals of the table are the leaf's own (PostgreSQL
        // translated and simplified them for it); the join quals left to
        // the host are translated
        let mut host_quals = crate::gpujoin::path::host_scan_quals(leaf);
        for &q in &desc.host_quals {
            let varnos = pg_sys::pull_varnos(root, q);
            if !(pg_sys::bms_membership(varnos) == pg_sys::BMS_Membership::BMS_SINGLETON
                && pg_sys::bms_is_member(parent_relid, varnos))
            {
                host_quals.push(tr(q));
            }
        }
        JoinDesc {
            outer_relid: (*leaf).relid,
            depths: desc
                .depths
                .iter()
                .map(|d| crate::gpujoin::path::Depth {
                    kind: d.kind,
                    quals: d.quals.iter().map(|&q| tr(q)).collect(),
                    hash_keys: d.hash_keys.iter().map(|&(o, i)| (tr(o), tr(i))).collect(),
                    rows_in: pg_sys::clamp_row_est(d.rows_in * f),
                    rows_out: pg_sys::clamp_row_est(d.rows_out * f),
                    partial_inner: false,
                })
                .collect(),
            agg: None,
            host_quals,
            host_cost: desc.host_cost,
        }
    }
}

/// A child join relation of `joinrel` (a join over partitioned table
/// `parent`) for its leaf `leaf`: the relids with the leaf in the
/// parent's place, the target translated, the leaf's share of the rows.
/// Not added to the planner's list of join relations: only the paths
/// made here belong to it.
///
/// # Safety
/// Planner state; `leaf` is a leaf of `parent`, a member of `joinrel`.
pub(crate) unsafe fn child_joinrel(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    leaf: *mut pg_sys::RelOptInfo,
    parent: *mut pg_sys::RelOptInfo,
) -> *mut pg_sys::RelOptInfo {
    // SAFETY: a node made as makeNode() does; planner state (caller).
    unsafe {
        let rel = pg_sys::palloc0(std::mem::size_of::<pg_sys::RelOptInfo>()) as *mut pg_sys::RelOptInfo;
        (*rel).type_ = pg_sys::NodeTag::T_RelOptInfo;
        (*rel).reloptkind = pg_sys::RelOptKind::RELOPT_OTHER_JOINREL;
        let relids = pg_sys::bms_del_member(pg_sys::bms_copy((*joinrel).relids), (*parent).relid as i32);
        (*rel).relids = pg_sys::bms_add_member(relids, (*leaf).relid as i32);
        (*rel).rows = pg_sys::clamp_row_est((*joinrel).rows * share(leaf, parent));
        (*rel).consider_parallel = false;
        (*rel).rtekind = pg_sys::RTEKind::RTE_JOIN;
        (*rel).reltarget = leaf_target(root, (*joinrel).reltarget, leaf, parent);
        crate::pg::compat::set_child_of(rel, joinrel);
        rel
    }
}
