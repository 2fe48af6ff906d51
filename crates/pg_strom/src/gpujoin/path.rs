//! GpuJoin paths: the `set_join_pathlist_hook` callback and the cost model.
//!
//! A join gets a GpuJoin path when its outer side is a heap table that a
//! GpuScan could read (depth 1), or is itself a GpuJoin path that survived
//! in the outer relation's path list (depth d+1: one more inner relation
//! in the same node).  The inner side is the inner relation's cheapest
//! unparameterized path, run by PostgreSQL and loaded into the engine.
//! Every scan qual, join qual and hash key must compile to a device
//! program; an outer join's filter quals (those pushed down to it) keep
//! the join on the CPU.  Equality clauses whose two sides hash alike on
//! the device become hash keys; a depth without any is a nested loop.
//!
//! The path's private List holds, per depth: an IntList (join type, number
//! of hash clauses) and the bare join quals (hash clauses first, as
//! `outer = inner` OpExprs) and a Float list of estimates (rows in, rows
//! out); the first element is an IntList (outer relid, depths).

use pgrx::pg_sys;

use crate::codegen::{self, Inputs};
use crate::customscan::cost::scan_pages;
use crate::gpujoin::{partitions, plan};
use crate::pg::cost::{parallel_divisor, scan_parallel_workers};
use crate::pg::list::{float_node, float_of, from_list, to_list};
use crate::{engine, guc};

use pgstrom_runtime::join::{JoinKind, MAX_DEPTHS, MAX_KEYS};

static mut PREV_HOOK: pg_sys::set_join_pathlist_hook_type = None;

/// Install the hook, chaining to any earlier one.
pub fn install_hook() {
    // SAFETY: _PG_init runs once, single-threaded, before any planning.
    unsafe {
        PREV_HOOK = pg_sys::set_join_pathlist_hook;
        pg_sys::set_join_pathlist_hook = Some(gpujoin_pathlist);
    }
}

/// One depth of a GpuJoin path or plan.
#[derive(Debug, Clone)]
pub struct Depth {
    /// The join type, numbered as the device numbers it
    /// (`pgstrom_runtime::join::JoinKind`: PostgreSQL 18's JoinType).
    pub kind: u32,
    /// Join quals (bare), hash clauses first.
    pub quals: Vec<*mut pg_sys::Node>,
    /// The hash clauses among them: (outer expression, inner expression).
    pub hash_keys: Vec<(*mut pg_sys::Node, *mut pg_sys::Node)>,
    /// Estimated rows in and out of this depth.
    pub rows_in: f64,
    /// See `rows_in`.
    pub rows_out: f64,
    /// The inner path is partial: every process of the parallel plan
    /// scans a share of the inner relation, and the shares are put
    /// together before any process probes (gpujoin::shared_build).
    pub partial_inner: bool,
}

/// The aggregation a GpuPreAgg path adds on top of its join (or scan).
#[derive(Debug, Clone)]
pub struct AggDesc {
    /// The partial grouping target, in order: grouping keys (with their
    /// sortgrouprefs) and partial Aggrefs.
    pub target: Vec<*mut pg_sys::Node>,
    /// Estimated rows the aggregation consumes and groups it makes (over
    /// the whole scan).
    pub rows_in: f64,
    /// See `rows_in`.
    pub groups: f64,
    /// The HAVING terms the node evaluates as its group filter
    /// (`codegen::having`; empty: none).
    pub having: Vec<*mut pg_sys::Node>,
    /// A parallel GpuPreAgg whose partial groups are exchanged between
    /// the processes (`gpupreagg::exchange`): per grouping key, (its
    /// index in `target`, its hash function, its collation); empty: none.
    pub exchange: Vec<(u32, pg_sys::Oid, pg_sys::Oid)>,
}

/// Exchange keys ((column, hash function, collation) per grouping key,
/// `AggDesc::exchange`) as an integer list, three integers a key.
///
/// # Safety
/// Planner memory.
pub unsafe fn exchange_to_list(keys: &[(u32, pg_sys::Oid, pg_sys::Oid)]) -> *mut pg_sys::List {
    let mut list: *mut pg_sys::List = std::ptr::null_mut();
    for &(i, f, c) in keys {
        // SAFETY: caller's promise.
        unsafe {
            list = pg_sys::lappend_int(list, i as i32);
            list = pg_sys::lappend_int(list, f.to_u32() as i32);
            list = pg_sys::lappend_int(list, c.to_u32() as i32);
        }
    }
    list
}

/// Read back [`exchange_to_list`] (a trailing marker is left out).
///
/// # Safety
/// `list` is an integer list made by [`exchange_to_list`] (or NIL).
pub unsafe fn exchange_from_list(list: *mut pg_sys::List) -> Vec<(u32, pg_sys::Oid, pg_sys::Oid)> {
    // SAFETY: caller's promise.
    unsafe {
        let int = |k: i32| pg_sys::list_nth_int(list, k) as u32;
        (0..pg_sys::list_length(list) / 3)
            .map(|k| (int(3 * k), pg_sys::Oid::from(int(3 * k + 1)), pg_sys::Oid::from(int(3 * k + 2))))
            .collect()
    }
}

/// What a GpuJoin (or GpuPreAgg) path holds besides its inner paths.
#[derive(Debug, Clone)]
pub struct JoinDesc {
    /// Range table index of the scanned (outer) heap table.
    pub outer_relid: u32,
    /// Depth 1..N (none: GpuPreAgg over a scan).
    pub depths: Vec<Depth>,
    /// GpuPreAgg: the aggregation of the joined rows.
    pub agg: Option<AggDesc>,
    /// Quals the device cannot evaluate, left to the host: the scanned
    /// table's scan quals and inner joins' join quals that do not
    /// compile (a SubPlan, a function without a device version).  The
    /// host evaluates them on every joined row the device returns (the
    /// plan's `qual`, EXPLAIN's `Filter`), which is what PostgreSQL would
    /// return as long as no depth keeps its inner rows (RIGHT or FULL:
    /// its unmatched rows depend on which rows the earlier quals passed),
    /// so such a desc has no RIGHT or FULL depth and no aggregation.
    pub host_quals: Vec<*mut pg_sys::Node>,
    /// What the host quals cost: (start-up, per row), as PostgreSQL's own
    /// join or scan prices the same clauses (their RestrictInfos' cached
    /// cost), so that the two plans compare on the device's part alone.
    pub host_cost: (f64, f64),
}

impl JoinDesc {
    /// The scan quals of the scanned table `outer` the device evaluates:
    /// all but those among [`Self::host_quals`].
    ///
    /// # Safety
    /// `outer` is this desc's scanned relation, being planned.
    pub unsafe fn device_scan_quals(&self, outer: *mut pg_sys::RelOptInfo) -> Vec<*mut pg_sys::Node> {
        // SAFETY: planner state (caller).
        unsafe {
            from_list(pg_sys::extract_actual_clauses((*outer).baserestrictinfo, false))
                .into_iter()
                .filter(|&q| !self.host_quals.iter().any(|&h| pg_sys::equal(h.cast(), q.cast())))
                .collect()
        }
    }

    /// As a List (copyObject- and nodeToString-safe).
    pub fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: building Lists in the planner's memory context.
        unsafe {
            let mut head: *mut pg_sys::List = std::ptr::null_mut();
            head = pg_sys::lappend_int(head, self.outer_relid as i32);
            head = pg_sys::lappend_int(head, self.depths.len() as i32);
            let mut list = pg_sys::lappend(std::ptr::null_mut(), head.cast());
            for d in &self.depths {
                let mut ints: *mut pg_sys::List = std::ptr::null_mut();
                ints = pg_sys::lappend_int(ints, d.kind as i32);
                ints = pg_sys::lappend_int(ints, d.hash_keys.len() as i32);
                ints = pg_sys::lappend_int(ints, d.partial_inner as i32);
                list = pg_sys::lappend(list, ints.cast());
                list = pg_sys::lappend(list, to_list(&d.quals).cast());
                let keys: Vec<*mut pg_sys::Node> = d.hash_keys.iter().flat_map(|(o, i)| [*o, *i]).collect();
                list = pg_sys::lappend(list, to_list(&keys).cast());
                let est = to_list(&[float_node(d.rows_in), float_node(d.rows_out)]);
                list = pg_sys::lappend(list, est.cast());
            }
            list = pg_sys::lappend(list, to_list(&self.host_quals).cast());
            let hc = to_list(&[float_node(self.host_cost.0), float_node(self.host_cost.1)]);
            list = pg_sys::lappend(list, hc.cast());
            if let Some(a) = &self.agg {
                list = pg_sys::lappend(list, to_list(&a.target).cast());
                list = pg_sys::lappend(list, to_list(&[float_node(a.rows_in), float_node(a.groups)]).cast());
                list = pg_sys::lappend(list, to_list(&a.having).cast());
                // (a marker at its end: an empty list would be NIL)
                list = pg_sys::lappend(list, pg_sys::lappend_int(exchange_to_list(&a.exchange), -1).cast());
            }
            list
        }
    }

    /// Read back [`Self::to_list`].
    ///
    /// # Safety
    /// `list` was made by `to_list` (possibly copied).
    pub unsafe fn from_list(list: *mut pg_sys::List) -> JoinDesc {
        // SAFETY: the layout written above.
        unsafe {
            let items = from_list(list);
            let head = items[0] as *mut pg_sys::List;
            let outer_relid = pg_sys::list_nth_int(head, 0) as u32;
            let n = pg_sys::list_nth_int(head, 1) as usize;
            let mut depths = Vec::with_capacity(n);
            for d in 0..n {
                let ints = items[1 + 4 * d] as *mut pg_sys::List;
                let quals = from_list(items[2 + 4 * d] as *mut pg_sys::List);
                let keys = from_list(items[3 + 4 * d] as *mut pg_sys::List);
                let est = from_list(items[4 + 4 * d] as *mut pg_sys::List);
                depths.push(Depth {
                    kind: pg_sys::list_nth_int(ints, 0) as u32,
                    quals,
                    hash_keys: keys.chunks(2).map(|c| (c[0], c[1])).collect(),
                    rows_in: float_of(est[0]),
                    rows_out: float_of(est[1]),
                    partial_inner: pg_sys::list_nth_int(ints, 2) != 0,
                });
            }
            let host_quals = from_list(items[1 + 4 * n] as *mut pg_sys::List);
            let hc = from_list(items[2 + 4 * n] as *mut pg_sys::List);
            let host_cost = (float_of(hc[0]), float_of(hc[1]));
            let agg = (items.len() == 7 + 4 * n).then(|| {
                let est = from_list(items[4 + 4 * n] as *mut pg_sys::List);
                AggDesc {
                    target: from_list(items[3 + 4 * n] as *mut pg_sys::List),
                    rows_in: float_of(est[0]),
                    groups: float_of(est[1]),
                    having: from_list(items[5 + 4 * n] as *mut pg_sys::List),
                    exchange: exchange_from_list(items[6 + 4 * n] as *mut pg_sys::List),
                }
            });
            JoinDesc { outer_relid, depths, agg, host_quals, host_cost }
        }
    }
}

/// GpuJoin paths made while planning the current query, whether or not
/// add_path kept them: the cheapest of each outer relation, (generation,
/// root, join relation, partial, outer relation, path, memory context).
/// Deeper GpuJoins start from the cheapest one of a relation, GpuPreAgg
/// from each (the cheapest join need not make the cheapest aggregation),
/// even when PostgreSQL's own join was cheaper on its own.
struct StashEntry {
    generation: u64,
    root: usize,
    rel: usize,
    partial: bool,
    outer_relid: u32,
    path: *mut pg_sys::CustomPath,
    cxt: usize,
}

thread_local! {
    static STASH: std::cell::RefCell<Vec<StashEntry>> = const { std::cell::RefCell::new(Vec::new()) };
    static GENERATION: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Memory contexts with a reset callback that forgets their entries.
    static WATCHED: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Forget every stashed path (a new planner run begins: their memory may
/// be gone).
pub fn stash_reset() {
    GENERATION.with(|g| g.set(g.get() + 1));
    STASH.with(|s| s.borrow_mut().clear());
}

/// Reset or delete callback of a memory context holding stashed paths:
/// the relations and paths in it are gone, and a later relation may be
/// allocated at the same address.  The genetic optimizer (GEQO) builds
/// the join relations of each candidate order in a context of its own
/// and deletes it before trying the next.
unsafe extern "C-unwind" fn forget_context(arg: *mut std::ffi::c_void) {
    let cxt = arg as usize;
    // (try_with: never a panic inside PostgreSQL's memory manager, even
    // if a context went away while the thread's locals were torn down)
    let _ = STASH.try_with(|s| s.borrow_mut().retain(|e| e.cxt != cxt));
    let _ = WATCHED.try_with(|w| w.borrow_mut().retain(|&c| c != cxt));
}

/// Keep a copy of `path` (of `rel`) if it is the cheapest seen with its
/// outer relation.
unsafe fn stash_put(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    partial: bool,
    path: *mut pg_sys::CustomPath,
) {
    let generation = GENERATION.with(|g| g.get());
    // SAFETY: a complete CustomPath in planner memory; the copy and the
    // callback live in the current memory context, where the planner
    // made `rel` and `path`.
    unsafe {
        let cxt = pg_sys::CurrentMemoryContext;
        if !WATCHED.with(|w| w.borrow().contains(&(cxt as usize))) {
            crate::pg::memctx::on_reset(cxt, forget_context, cxt.cast());
            WATCHED.with(|w| w.borrow_mut().push(cxt as usize));
        }
        let copy = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        std::ptr::copy_nonoverlapping(path, copy, 1);
        // (the first element of the private List: outer relid, depths)
        let head = pg_sys::list_nth((*copy).custom_private, 0) as *mut pg_sys::List;
        let outer_relid = pg_sys::list_nth_int(head, 0) as u32;
        STASH.with(|s| {
            let mut s = s.borrow_mut();
            let key = (generation, root as usize, rel as usize, partial, outer_relid);
            if let Some(e) = s.iter_mut().find(|e| (e.generation, e.root, e.rel, e.partial, e.outer_relid) == key) {
                if (*copy).path.total_cost < (*e.path).path.total_cost {
                    e.path = copy;
                    e.cxt = cxt as usize;
                }
            } else {
                s.push(StashEntry {
                    generation,
                    root: root as usize,
                    rel: rel as usize,
                    partial,
                    outer_relid,
                    path: copy,
                    cxt: cxt as usize,
                });
            }
        });
    }
}

/// The cheapest GpuJoin path made for `rel` in this planner run.
pub fn stash_get(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    partial: bool,
) -> Option<*mut pg_sys::CustomPath> {
    // SAFETY: stashed paths live while their memory context does.
    stash_all(root, rel, partial)
        .into_iter()
        .min_by(|a, b| unsafe { (**a).path.total_cost.total_cmp(&(**b).path.total_cost) })
}

/// The cheapest GpuJoin path made for `rel` in this planner run with
/// each outer relation.
pub fn stash_all(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    partial: bool,
) -> Vec<*mut pg_sys::CustomPath> {
    let generation = GENERATION.with(|g| g.get());
    STASH.with(|s| {
        s.borrow()
            .iter()
            .filter(|e| (e.generation, e.root, e.rel, e.partial) == (generation, root as usize, rel as usize, partial))
            .map(|e| e.path)
            .collect()
    })
}

/// For a base relation scanned in chunks (by GpuJoin or GpuPreAgg): the
/// workers of the serial (0) or parallel plan, or None when the relation
/// is not a heap table the device can scan or the plan cannot be parallel.
pub(crate) unsafe fn scan_workers(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    parallel: bool,
) -> Option<i32> {
    // SAFETY: planner state of a base relation.
    unsafe {
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        let (pages, table_workers) = scan_pages(rte, rel)?;
        if !(*rel).lateral_relids.is_null() {
            return None;
        }
        if !parallel {
            return Some(0);
        }
        // (a heap table's GPU cache is read by serial scans)
        if !(*rel).consider_parallel || crate::customscan::cost::is_gstore_relation(rte) {
            return None;
        }
        let w = scan_parallel_workers(rel, pages, table_workers);
        (w > 0).then_some(w)
    }
}

/// The GpuJoin path of `rel`'s path list with the lowest total cost.
unsafe fn find_gpujoin(list: *mut pg_sys::List) -> Option<*mut pg_sys::CustomPath> {
    // SAFETY: a path list of a finished relation.
    unsafe {
        from_list(list)
            .into_iter()
            .map(|p| p as *mut pg_sys::CustomPath)
            .filter(|&p| (*p).path.pathtype == pg_sys::NodeTag::T_CustomScan && (*p).methods == plan::path_methods())
            .min_by(|a, b| (*(*a)).path.total_cost.total_cmp(&(*(*b)).path.total_cost))
    }
}

/// Device type family for hashing: equal values of two types hash alike
/// when both are in the same family.
fn hash_family(t: u16) -> u16 {
    let id = pgstrom_runtime::program::type_id;
    if t == id("INT2") || t == id("INT4") || t == id("INT8") {
        id("INT8")
    } else if t == id("FLOAT4") || t == id("FLOAT8") {
        id("FLOAT8")
    } else {
        t
    }
}

/// Where a Var of this join is read: 0 for the outer relation, d for a
/// relation of depth d's inner side.
pub(crate) fn source_of(
    v: *mut pg_sys::Var,
    outer_relid: u32,
    inner_relids: &[*mut pg_sys::Bitmapset],
) -> Option<(u8, i16)> {
    // SAFETY: a Var of the query.
    unsafe {
        if (*v).varno == outer_relid as i32 {
            return Some((0, (*v).varattno));
        }
        for (d, r) in inner_relids.iter().enumerate() {
            if pg_sys::bms_is_member((*v).varno, *r) {
                // the key is resolved against the inner plan at plan time;
                // here it only has to be distinct per Var
                return Some(((d + 1) as u8, ((*v).varno * 2048 + (*v).varattno as i32) as i16));
            }
        }
        None
    }
}

/// True when every expression of `target` is a plain Var.
unsafe fn only_vars(target: *mut pg_sys::PathTarget) -> bool {
    // SAFETY: a valid PathTarget.
    unsafe {
        from_list((*target).exprs)
            .iter()
            .all(|&e| (*e).type_ == pg_sys::NodeTag::T_Var && (*(e as *mut pg_sys::Var)).varlevelsup == 0)
    }
}

/// The depth this join adds, or None when it cannot run on the device.
unsafe fn make_depth(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: u32,
    extra: *mut pg_sys::JoinPathExtraData,
    rows_in: f64,
) -> Option<Depth> {
    let _ = root;
    // SAFETY: planner state of the join being planned.
    unsafe {
        let restrict = (*extra).restrictlist;
        let mut joinquals: *mut pg_sys::List = std::ptr::null_mut();
        let mut otherquals: *mut pg_sys::List = std::ptr::null_mut();
        // A pseudoconstant clause (no column of either side, e.g. a WHERE
        // clause over InitPlans only) is the gating Result's one-time
        // filter above a join PostgreSQL plans; a custom join would drop
        // it (extract_actual_join_clauses skips it), as postgres_fdw's
        // join pushdown refuses them too.
        for r in from_list(restrict) {
            if (*(r as *mut pg_sys::RestrictInfo)).pseudoconstant {
                return None;
            }
        }
        // as createplan.c: every clause of an inner or semi join is a join
        // qual; an outer (or anti) join separates the pushed-down ones
        let kind = crate::pg::compat::device_join_kind(jointype)?;
        if matches!(JoinKind::from_pg(kind), Some(JoinKind::Inner | JoinKind::Semi | JoinKind::RightSemi)) {
            joinquals = pg_sys::extract_actual_clauses(restrict, false);
        } else {
            pg_sys::extract_actual_join_clauses(restrict, (*joinrel).relids, &mut joinquals, &mut otherquals);
            if !otherquals.is_null() {
                return None;
            }
        }
        // hash clauses: outer = inner with a hash operator
        let mut hash_keys = Vec::new();
        let mut hash_quals = Vec::new();
        for r in from_list(restrict) {
            let ri = r as *mut pg_sys::RestrictInfo;
            if !(*ri).can_join || (*ri).hashjoinoperator == pg_sys::InvalidOid || hash_keys.len() >= MAX_KEYS {
                continue;
            }
            let clause = (*ri).clause as *mut pg_sys::Node;
            if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
                continue;
            }
            let args = from_list((*(clause as *mut pg_sys::OpExpr)).args);
            if args.len() != 2 {
                continue;
            }
            let (o, i) = if pg_sys::bms_is_subset((*ri).left_relids, (*outerrel).relids)
                && pg_sys::bms_is_subset((*ri).right_relids, (*innerrel).relids)
            {
                (args[0], args[1])
            } else if pg_sys::bms_is_subset((*ri).left_relids, (*innerrel).relids)
                && pg_sys::bms_is_subset((*ri).right_relids, (*outerrel).relids)
            {
                (args[1], args[0])
            } else {
                continue;
            };
            let (Some(to), Some(ti)) =
                (codegen::device_type_of(pg_sys::exprType(o)), codegen::device_type_of(pg_sys::exprType(i)))
            else {
                continue;
            };
            if hash_family(to) != hash_family(ti) {
                continue;
            }
            hash_keys.push((o, i));
            hash_quals.push(clause);
        }
        let mut quals = hash_quals.clone();
        for q in from_list(joinquals) {
            if !hash_quals.contains(&q) {
                quals.push(q);
            }
        }
        Some(Depth { kind, quals, hash_keys, rows_in, rows_out: (*joinrel).rows, partial_inner: false })
    }
}

/// The scan quals of `rel` the device cannot evaluate, each compiled
/// alone as the node compiles its scan quals (with PostgreSQL's
/// evaluation of a chunk's rows where the device cannot decide one), for
/// [`JoinDesc::host_quals`].
///
/// # Safety
/// `rel` is a base relation being planned.
pub(crate) unsafe fn host_scan_quals(rel: *mut pg_sys::RelOptInfo) -> Vec<*mut pg_sys::Node> {
    // SAFETY: planner state (caller).
    unsafe {
        let relid = (*rel).relid as i32;
        let resolve = |v: *mut pg_sys::Var| ((*v).varno == relid).then(|| (0u8, (*v).varattno));
        from_list(pg_sys::extract_actual_clauses((*rel).baserestrictinfo, false))
            .into_iter()
            .filter(|&q| codegen::compile_shared_fallback(q, &resolve, &mut Inputs::default()).is_err())
            .collect()
    }
}

/// Move the join quals of `desc`'s last depth (an inner join with hash
/// keys) that do not compile, each tried alone, to the host quals.  A
/// depth without hash keys keeps them: the device would pair every
/// outer row with every inner row for the host to filter.
///
/// # Safety
/// `desc` holds expressions of the query being planned.
unsafe fn move_host_join_quals(desc: &mut JoinDesc, inner_relids: &[*mut pg_sys::Bitmapset]) -> Vec<*mut pg_sys::Node> {
    let outer_relid = desc.outer_relid;
    let src = desc.depths.len() as u8;
    let mut moved = Vec::new();
    let Some(depth) = desc.depths.last_mut() else { return moved };
    if depth.hash_keys.is_empty() {
        return moved;
    }
    // SAFETY: expressions of the query (caller).
    unsafe {
        let upto = |v: *mut pg_sys::Var| source_of(v, outer_relid, inner_relids).filter(|(s, _)| *s <= src);
        let nhash = depth.hash_keys.len();
        let mut kept = Vec::new();
        for (i, &q) in depth.quals.iter().enumerate() {
            let compiles = i < nhash
                || matches!(
                    codegen::compile_shared(q, &upto, &mut Inputs::default(), false),
                    Ok((p, _)) if p.result_type == pgstrom_runtime::program::type_id("BOOL")
                );
            if compiles {
                kept.push(q);
            } else {
                moved.push(q);
            }
        }
        depth.quals = kept;
        desc.host_quals.extend(&moved);
        moved
    }
}

/// What PostgreSQL's own plan is charged for evaluating `quals` (bare
/// clauses of `restrict`, a list of RestrictInfos): cost_qual_eval over
/// their RestrictInfos, whose cost the planner caches.
///
/// # Safety
/// Planner state; `quals` are clauses of `restrict`.
unsafe fn restrict_cost(
    root: *mut pg_sys::PlannerInfo,
    restrict: *mut pg_sys::List,
    quals: &[*mut pg_sys::Node],
) -> (f64, f64) {
    if quals.is_empty() {
        return (0.0, 0.0);
    }
    // SAFETY: planner state (caller).
    unsafe {
        let infos: Vec<*mut pg_sys::Node> = from_list(restrict)
            .into_iter()
            .filter(|&r| quals.contains(&((*(r as *mut pg_sys::RestrictInfo)).clause as *mut pg_sys::Node)))
            .collect();
        let mut c = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut c, to_list(&infos), root);
        (c.startup, c.per_tuple)
    }
}

/// Check that every program of `desc` compiles (at path time; plan time
/// compiles them again against the inner plans); Err says which does not,
/// and why (the planner's DEBUG2 diagnostics).
pub(crate) unsafe fn compiles(
    root: *mut pg_sys::PlannerInfo,
    desc: &JoinDesc,
    inner_relids: &[*mut pg_sys::Bitmapset],
) -> Result<(), String> {
    // SAFETY: planner state; expressions of the query.
    unsafe {
        let resolve = |v: *mut pg_sys::Var| source_of(v, desc.outer_relid, inner_relids);
        let mut inputs = Inputs::default();
        let outer = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let scan = desc.device_scan_quals(outer);
        if !scan.is_empty() {
            codegen::compile_shared_fallback(pg_sys::make_ands_explicit(to_list(&scan)).cast(), &resolve, &mut inputs)
                .map_err(|e| format!("the outer scan's quals: {}", e.0))?;
        }
        for (d, depth) in desc.depths.iter().enumerate() {
            let src = (d + 1) as u8;
            for &(o, i) in &depth.hash_keys {
                // the outer key reads earlier sources only, the inner key its own
                let outer_only = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| *s < src);
                let inner_only = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| *s == src);
                codegen::compile_shared(o, &outer_only, &mut inputs, true)
                    .and_then(|_| codegen::compile_shared(i, &inner_only, &mut inputs, true))
                    .map_err(|e| format!("a hash key of depth {}: {}", d + 1, e.0))?;
            }
            if !depth.quals.is_empty() {
                let upto = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| *s <= src);
                match codegen::compile_shared(
                    pg_sys::make_ands_explicit(to_list(&depth.quals)).cast(),
                    &upto,
                    &mut inputs,
                    false,
                ) {
                    Ok((p, _)) if p.result_type == pgstrom_runtime::program::type_id("BOOL") => {}
                    Ok(_) => return Err(format!("the join quals of depth {} do not return a boolean", d + 1)),
                    Err(e) => return Err(format!("the join quals of depth {}: {}", d + 1, e.0)),
                }
            }
        }
        Ok(())
    }
}

/// Costs of a GpuJoin: (startup, total, rows, the part of the total
/// that is an Arrow outer table's record batches read on the host for the
/// rows returned, where the GPU service reads the columns itself: see
/// `arrow_host_reads`).  `returns_rows`: a GpuJoin node, which returns
/// its rows (over a heap table, by the heap direct path where it
/// applies); else the join under a GpuPreAgg, which prices that path
/// itself.
pub(crate) unsafe fn cost(
    root: *mut pg_sys::PlannerInfo,
    desc: &JoinDesc,
    inner_paths: &[*mut pg_sys::Path],
    workers: i32,
    returns_rows: bool,
) -> (f64, f64, f64, f64) {
    // SAFETY: planner state.
    unsafe {
        let outer = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let mut spc_random = 0.0;
        let mut spc_seq = 0.0;
        pg_sys::get_tablespace_page_costs((*outer).reltablespace, &mut spc_random, &mut spc_seq);
        let rte = *(*root).simple_rte_array.add(desc.outer_relid as usize);
        // (a gstore_fdw table read from the engine's copy reads no pages)
        let copy = crate::customscan::cost::is_gstore_relation(rte) && crate::customscan::cost::gstore_copy_planned();
        // (the block ranges a BRIN index rules out are not read)
        let brin = crate::customscan::cost::brin_fraction(root, outer);
        let disk =
            if copy { 0.0 } else { brin * spc_seq * scan_pages(rte, outer).map_or((*outer).pages as f64, |(p, _)| p) };
        let ntuples = brin * (*outer).tuples.max(0.0);
        let mut scan_cost = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut scan_cost, to_list(&desc.device_scan_quals(outer)), root);
        let gpu_op = crate::customscan::cost::device_operator_cost();
        let op_ratio = if pg_sys::cpu_operator_cost > 0.0 { gpu_op / pg_sys::cpu_operator_cost } else { 0.0 };
        let mut startup = guc::GPU_SETUP_COST.get() + scan_cost.startup;
        if engine::gpu_open_pending(workers > 0) {
            startup += guc::GPU_CONTEXT_COST.get();
        }
        let gather = crate::customscan::cost::outer_gather_cost_per_row(rte);
        // the host's part of the work (gathering heap rows, forming the
        // rows returned) and the device's (filtering, probing)
        let mut host = ntuples * gather + crate::customscan::cost::arrow_host_values_cost(outer, rte, ntuples);
        let mut device = ntuples * (crate::customscan::cost::device_tuple_cost() + scan_cost.per_tuple * op_ratio);
        for (d, p) in desc.depths.iter().zip(inner_paths) {
            // the inner relation is read once (a partial inner path: a share
            // by each process, its cost is per process), then every process
            // loads and hashes all of its rows
            let inner_rows = inner_rows_of(*p);
            // a partial path's cost is one of its own processes' share; here
            // the node's processes share the scan
            startup += inner_read_cost(d, *p, workers);
            // probing: one hash plus the join quals per candidate; a depth
            // without hash keys (a nested loop) evaluates its quals on
            // every pair of an outer row and an inner row
            device += if d.hash_keys.is_empty() {
                d.rows_in * inner_rows.max(1.0) * gpu_op * d.quals.len().max(1) as f64
            } else {
                d.rows_in * gpu_op * (1.0 + d.quals.len() as f64) + d.rows_out * gpu_op * d.quals.len() as f64
            };
        }
        let mut rows = desc.depths.last().map_or(0.0, |d| d.rows_out);
        // rows come back to the host and are formed into tuples (an Arrow
        // table's row from its record batch, value by value); with host
        // quals, the rows before them, which the host then filters
        let mut returned = rows;
        if !desc.host_quals.is_empty() {
            let list = to_list(&desc.host_quals);
            let sel = pg_sys::clauselist_selectivity(root, list, 0, pg_sys::JoinType::JOIN_INNER, std::ptr::null_mut());
            returned = rows / sel.clamp(1e-6, 1.0);
            startup += desc.host_cost.0;
            host += returned * desc.host_cost.1;
        }
        host += returned * crate::customscan::cost::tuple_cost_of(rte);
        // the pages read: the table's, or, over an Arrow table whose
        // columns the GPU service reads itself (and keeps in its column
        // cache), those of the record batches the backend reads to form
        // the rows it returns
        let reads_itself = crate::customscan::cost::device_reads_itself(outer, rte);
        // SAFETY: an Arrow table read by the service (just checked).
        let host_reads =
            if reads_itself { crate::customscan::cost::arrow_host_reads(outer, returned, disk) } else { 0.0 };
        let mut io = if reads_itself { host_reads } else { disk };
        // the heap direct path (source/heap_direct.rs): the all-visible
        // share of the pages is read by the GPU service (and kept in its
        // cache) and taken apart on the device, not gathered on the host;
        // the engine sends back the tuples the returned rows read
        let frac = if returns_rows && !copy { crate::customscan::cost::planned_fraction(outer, rte) } else { 0.0 };
        if frac > 0.0 {
            host -= frac * ntuples * gather;
            host += crate::customscan::cost::direct_tuple_cost(outer, frac * returned);
            io -= frac * disk;
        }
        if workers > 0 {
            let div = parallel_divisor(workers);
            host /= div;
            rows = pg_sys::clamp_row_est(rows / div);
        }
        // the device's work: shared by the processes where each feeds it
        // a share; over an Arrow table whose columns the GPU service reads
        // itself the same with one process or many, so that a parallel
        // plan must save host work worth its workers' start-up
        device /= crate::customscan::cost::device_divisor(outer, rte, workers, reads_itself);
        let run = host + device;
        (startup, startup + io + run, rows, host_reads)
    }
}

/// What reading depth `d`'s inner relation (path `p`) and loading it
/// into the engine costs a node of `workers` workers, in its start-up.
///
/// # Safety
/// Planner state; `p` is the depth's inner path.
unsafe fn inner_read_cost(d: &Depth, p: *mut pg_sys::Path, workers: i32) -> f64 {
    // SAFETY: caller's promise.
    unsafe {
        let inner_rows = inner_rows_of(p);
        // a partial path's cost is one of its own processes' share; here
        // the node's processes share the scan
        let inner_cost = if d.partial_inner && workers > 0 {
            (*p).total_cost * parallel_divisor((*p).parallel_workers) / parallel_divisor(workers)
        } else {
            (*p).total_cost
        };
        inner_cost
            + inner_rows * (pg_sys::cpu_tuple_cost + 2.0 * pg_sys::cpu_operator_cost)
            + (inner_rows * inner_row_bytes(p) - INNER_LOAD_FREE_BYTES).max(0.0) * INNER_LOAD_BYTE_COST
    }
}

/// What a serial node of a join over partitions other than the first
/// saves by taking the first one's inner rows and build
/// (gpujoin/exec/query_share.rs): reading and loading its inner
/// relations; nothing with `pg_strom.shared_inner_tables` off.
///
/// # Safety
/// Planner state; `inner_paths` are `desc`'s.
pub(crate) unsafe fn shared_inner_cost(desc: &JoinDesc, inner_paths: &[*mut pg_sys::Path]) -> f64 {
    if !guc::SHARED_INNER_TABLES.get() {
        return 0.0;
    }
    // SAFETY: caller's promise.
    desc.depths.iter().zip(inner_paths).map(|(d, &p)| unsafe { inner_read_cost(d, p, 0) }).sum()
}

/// Rows of the inner relation `p` reads: all of its relation's, also for
/// a partial path (whose own row count is one process's share).
pub(crate) unsafe fn inner_rows_of(p: *mut pg_sys::Path) -> f64 {
    // SAFETY: a valid unparameterized path.
    unsafe { (*p).rows.max((*(*p).parent).rows) }
}

/// Estimated bytes of a row of inner path `p` on the device.
unsafe fn inner_row_bytes(p: *mut pg_sys::Path) -> f64 {
    // SAFETY: a valid path.
    unsafe { (*(*p).pathtarget).width as f64 + 16.0 }
}

/// Estimated bytes of the inner relations on the device.
pub(crate) unsafe fn inner_bytes(inner_paths: &[*mut pg_sys::Path]) -> f64 {
    // SAFETY: valid paths.
    unsafe { inner_paths.iter().map(|&p| inner_rows_of(p) * inner_row_bytes(p)).sum() }
}

/// Cost per byte of an inner relation loaded into the engine beyond its
/// first INNER_LOAD_FREE_BYTES (and beyond its rows' `cpu_tuple_cost` and
/// two operators): its columns put together by the loading process, sent
/// to the GPU service, placed in device memory and hashed.  Measured on
/// the H200 machine (TPC-H SF 10, 2026-12-03, EXPLAIN ANALYZE's `Inner
/// Build`, from the rows ready to the sessions open): Q5's 55 MB (2.3
/// million rows) in 38 ms, Q12's 540 MB (15 million rows of `orders`) in
/// 4.4 s, some 8 ns a byte, where a unit of cost there is about 1 us of a
/// parallel plan's time.  Large loads priced at a quarter of that; loads
/// like Q5's, and every small dimension, at nothing more than their rows.
/// Most of Q12's 4.4 s turned out to be the inner cache's copies of a
/// build too big for it, which no longer stand in the load's way
/// (docs/benchmark.md, 2026-12-06); the price has not been measured again.
const INNER_LOAD_BYTE_COST: f64 = 0.002;
const INNER_LOAD_FREE_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// The inner path of a depth: the cheapest unparameterized path of
/// `innerrel` (parallel safe for a partial GpuJoin, where every process
/// runs it), or for a partial GpuJoin the cheapest partial path when it
/// costs less (the processes scan shares of the relation and put them
/// together; `pg_strom.parallel_inner_build`).  (path, partial)
unsafe fn inner_path(innerrel: *mut pg_sys::RelOptInfo, parallel: bool) -> Option<(*mut pg_sys::Path, bool)> {
    // SAFETY: planner state.
    unsafe {
        let cheapest = |list: *mut pg_sys::List| {
            from_list(list)
                .into_iter()
                .map(|p| p as *mut pg_sys::Path)
                .filter(|&p| (*p).param_info.is_null() && (!parallel || (*p).parallel_safe))
                .min_by(|a, b| (**a).total_cost.total_cmp(&(**b).total_cost))
        };
        let whole = cheapest((*innerrel).pathlist);
        let partial =
            if parallel && guc::PARALLEL_INNER_BUILD.get() { cheapest((*innerrel).partial_pathlist) } else { None };
        match (whole, partial) {
            (Some(w), Some(p)) if (*p).total_cost < (*w).total_cost => Some((p, true)),
            (None, Some(p)) => Some((p, true)),
            (Some(w), _) => Some((w, false)),
            (None, None) => None,
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn gpujoin_pathlist(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
) {
    // SAFETY: planner hook arguments are valid; we chain first.
    unsafe {
        if let Some(prev) = PREV_HOOK {
            prev(root, joinrel, outerrel, innerrel, jointype, extra);
        }
        if !guc::ENABLED.get() || !guc::ENABLE_GPUJOIN.get() {
            return;
        }
        // (RIGHT SEMI and RIGHT ANTI: EXISTS and NOT EXISTS with the
        // scanned side probing the hashed one, PostgreSQL 18 and 16)
        let Some(kind) = crate::pg::compat::device_join_kind(jointype).and_then(JoinKind::from_pg) else {
            return;
        };
        // rows locked for update need EvalPlanQual, which a join inside
        // one scan node cannot recheck
        let parse = (*root).parse;
        if (*parse).commandType != pg_sys::CmdType::CMD_SELECT
            || !(*root).rowMarks.is_null()
            || !(*joinrel).lateral_relids.is_null()
            || !only_vars((*joinrel).reltarget)
        {
            return;
        }
        for parallel in [false, true] {
            let Some((inner, partial_inner)) = inner_path(innerrel, parallel) else { continue };
            if parallel && !(*joinrel).consider_parallel {
                continue;
            }
            // the outer side: a heap table (depth 1) or a GpuJoin to extend
            let mut desc;
            let mut inner_paths: Vec<*mut pg_sys::Path>;
            let workers;
            // (a partition too: PostgreSQL's partition-wise join of two
            // tables partitioned alike joins partition by partition)
            if matches!(
                (*outerrel).reloptkind,
                pg_sys::RelOptKind::RELOPT_BASEREL | pg_sys::RelOptKind::RELOPT_OTHER_MEMBER_REL
            ) {
                // (a partitioned table: the join over its partitions,
                // gpujoin::partitions)
                let w = if partitions::over_partitions(root, (*outerrel).relid) {
                    if parallel || kind.keeps_inner() || partitions::device_leaves(root, outerrel).is_none() {
                        continue;
                    }
                    Some(0)
                } else {
                    scan_workers(root, outerrel, parallel)
                };
                let Some(w) = w else { continue };
                workers = w;
                desc = JoinDesc {
                    outer_relid: (*outerrel).relid,
                    depths: Vec::new(),
                    agg: None,
                    host_quals: Vec::new(),
                    host_cost: (0.0, 0.0),
                };
                // scan quals the device cannot run stay on the host
                if !kind.keeps_inner() {
                    desc.host_quals = host_scan_quals(outerrel);
                    desc.host_cost = restrict_cost(root, (*outerrel).baserestrictinfo, &desc.host_quals);
                }
                inner_paths = Vec::new();
            } else {
                let list = if parallel { (*outerrel).partial_pathlist } else { (*outerrel).pathlist };
                let kept = find_gpujoin(list);
                let made = stash_get(root, outerrel, parallel);
                let prev = match (kept, made) {
                    (Some(k), Some(m)) => {
                        if (*m).path.total_cost < (*k).path.total_cost {
                            m
                        } else {
                            k
                        }
                    }
                    (Some(k), None) => k,
                    (None, Some(m)) => m,
                    (None, None) => continue,
                };
                desc = JoinDesc::from_list((*prev).custom_private);
                // One depth of a node may keep its inner rows (RIGHT or
                // FULL: the unmatched ones are emitted at the end); the
                // executor emits them per depth without knowing whether a
                // later keeping depth matched them, so a second one is
                // left to a join above this node.
                let keeps = desc.depths.iter().any(|d| JoinKind::from_pg(d.kind).is_some_and(JoinKind::keeps_inner));
                if desc.depths.len() >= MAX_DEPTHS
                    || partitions::over_partitions(root, desc.outer_relid) && kind.keeps_inner()
                    || keeps && kind.keeps_inner()
                    || kind.keeps_inner() && !desc.host_quals.is_empty()
                {
                    continue;
                }
                inner_paths = from_list((*prev).custom_paths).into_iter().map(|p| p.cast()).collect();
                workers = (*prev).path.parallel_workers;
            }
            let outer_rows =
                if desc.depths.is_empty() { (*outerrel).rows } else { desc.depths.last().expect("not empty").rows_out };
            let Some(mut depth) = make_depth(root, joinrel, outerrel, innerrel, jointype, extra, outer_rows) else {
                pgrx::debug2!(
                    "GpuJoin ({}): a qual it cannot run (pseudoconstant, or an outer join's filter)",
                    join_label(jointype)
                );
                return;
            };
            // a partial inner plan needs the node's shared build, which
            // only a parallel-aware node has
            if partial_inner && workers == 0 {
                continue;
            }
            depth.partial_inner = partial_inner;
            desc.depths.push(depth);
            inner_paths.push(inner);
            let inner_relids: Vec<*mut pg_sys::Bitmapset> =
                inner_paths.iter().map(|p| (*(**p).parent).relids).collect();
            if kind == JoinKind::Inner {
                let moved = move_host_join_quals(&mut desc, &inner_relids);
                let c = restrict_cost(root, (*extra).restrictlist, &moved);
                desc.host_cost = (desc.host_cost.0 + c.0, desc.host_cost.1 + c.1);
            }
            if let Err(why) = compiles(root, &desc, &inner_relids) {
                pgrx::debug2!("GpuJoin ({}): not on the device: {why}", join_label(jointype));
                return;
            }
            if inner_bytes(&inner_paths) > guc::GPU_JOIN_MEMORY_LIMIT.get() as f64 * 1024.0 {
                return;
            }
            if partitions::over_partitions(root, desc.outer_relid) {
                // a GpuJoin per partition under an Append; the join over
                // the partitions is stashed for deeper joins and GpuPreAgg
                if let Some(cpath) = add_partition_paths(root, joinrel, &desc, &inner_paths) {
                    stash_put(root, joinrel, false, cpath);
                }
                continue;
            }
            let (startup, total, rows, _) = cost(root, &desc, &inner_paths, workers, true);
            pgrx::debug2!(
                "GpuJoin: outer relid {}, {} depths (partial inner: {:?}), {workers} workers, cost {startup:.2}..{total:.2}, {rows:.0} rows",
                desc.outer_relid,
                desc.depths.len(),
                desc.depths.iter().map(|d| d.partial_inner).collect::<Vec<_>>()
            );
            let cpath = new_path(joinrel, &desc, &inner_paths, workers, (startup, total, rows));
            stash_put(root, joinrel, parallel, cpath);
            if parallel {
                pg_sys::add_partial_path(joinrel, cpath.cast());
            } else {
                pg_sys::add_path(joinrel, cpath.cast());
            }
        }
    }
}

/// A GpuJoin path of `rel` (its target), costs (start-up, total, rows).
///
/// # Safety
/// Planner state; `desc` and `inner_paths` describe a join of `rel`.
unsafe fn new_path(
    rel: *mut pg_sys::RelOptInfo,
    desc: &JoinDesc,
    inner_paths: &[*mut pg_sys::Path],
    workers: i32,
    (startup, total, rows): (f64, f64, f64),
) -> *mut pg_sys::CustomPath {
    // SAFETY: a node made as makeNode() does, in planner memory.
    unsafe {
        let cpath = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cpath).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = rel;
        p.pathtarget = (*rel).reltarget;
        p.param_info = std::ptr::null_mut();
        p.parallel_aware = workers > 0;
        // (a whole GpuJoin, which builds its inner relations in every
        // process running it, only as a partial path)
        p.parallel_safe =
            crate::customscan::cost::device_path_parallel_safe((*rel).consider_parallel, workers, f64::INFINITY)
                && inner_paths.iter().all(|p| (**p).parallel_safe);
        p.parallel_workers = workers;
        p.pathkeys = std::ptr::null_mut();
        p.rows = rows;
        p.startup_cost = startup;
        p.total_cost = total;
        (*cpath).flags = pg_sys::CUSTOMPATH_SUPPORT_PROJECTION;
        (*cpath).custom_paths = to_list(&inner_paths.iter().map(|p| p.cast()).collect::<Vec<_>>());
        (*cpath).custom_private = desc.to_list();
        (*cpath).methods = plan::path_methods();
        cpath
    }
}

/// The paths of a join over partitions (`desc`'s outer relation is a
/// partitioned table; gpujoin::partitions): a GpuJoin per leaf partition
/// under an Append, added to `joinrel`.  Returns the join over the
/// partitions as a path to stash (never planned: it is not added), with
/// the Append's costs; None when a partition's join does not compile.
///
/// # Safety
/// Planner state of the join being planned.
unsafe fn add_partition_paths(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    desc: &JoinDesc,
    inner_paths: &[*mut pg_sys::Path],
) -> Option<*mut pg_sys::CustomPath> {
    // SAFETY: planner state (caller).
    unsafe {
        if !inner_paths.iter().all(|&p| partitions::plain_inner(root, (*p).parent)) {
            pgrx::debug2!("GpuJoin: a join over partitions has an inner relation that is not a table");
            return None;
        }
        let parent = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let leaves = partitions::device_leaves(root, parent)?;
        let inner_relids: Vec<*mut pg_sys::Bitmapset> = inner_paths.iter().map(|p| (*(**p).parent).relids).collect();
        let mut subpaths: Vec<*mut pg_sys::Node> = Vec::with_capacity(leaves.len());
        let mut build = 0.0;
        for &leaf in &leaves {
            let ld = partitions::translate(root, desc, leaf, parent);
            if let Err(why) = compiles(root, &ld, &inner_relids) {
                pgrx::debug2!("GpuJoin: partition {} not on the device: {why}", (*leaf).relid);
                return None;
            }
            let crel = partitions::child_joinrel(root, joinrel, leaf, parent);
            let (mut startup, mut total, rows, _) = cost(root, &ld, inner_paths, 0, true);
            // the partitions after the first take the first one's inner
            // rows and build (gpujoin/exec/query_share.rs)
            let shared = shared_inner_cost(&ld, inner_paths);
            if subpaths.is_empty() {
                build = shared;
            } else {
                startup -= shared;
                total -= shared;
            }
            subpaths.push(new_path(crel, &ld, inner_paths, 0, (startup, total, rows)).cast());
        }
        // several partitions at once: a partial path of the join, under
        // PostgreSQL's Gather (or a parallel join above)
        if let Some(pa) = partitions::parallel_append(root, joinrel, &subpaths, &leaves, build) {
            pgrx::debug2!(
                "GpuJoin: {} partitions under a Parallel Append, {} workers, cost {:.2}..{:.2}",
                leaves.len(),
                (*pa).path.parallel_workers,
                (*pa).path.startup_cost,
                (*pa).path.total_cost
            );
            pg_sys::add_partial_path(joinrel, pa.cast());
        }
        let append = partitions::serial_append(root, joinrel, &subpaths);
        let a = &(*append).path;
        pgrx::debug2!(
            "GpuJoin: {} partitions of relid {}, {} depths, cost {:.2}..{:.2}, {:.0} rows",
            leaves.len(),
            desc.outer_relid,
            desc.depths.len(),
            a.startup_cost,
            a.total_cost,
            a.rows
        );
        let stashed = new_path(joinrel, desc, inner_paths, 0, (a.startup_cost, a.total_cost, a.rows));
        pg_sys::add_path(joinrel, append.cast());
        Some(stashed)
    }
}

/// A join type as EXPLAIN names it, for the planner's diagnostics.
fn join_label(jointype: u32) -> &'static str {
    crate::pg::compat::device_join_kind(jointype)
        .and_then(JoinKind::from_pg)
        .map_or("unsupported join type", |k| k.label())
}
