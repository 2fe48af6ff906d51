//! The planner's parallel rules as costsize.c and allpaths.c apply them,
//! and the statistics pg_strom's cost models read beyond them.

use pgrx::pg_sys;

/// Workers of a parallel scan of `rel`: the table's `parallel_workers`
/// option when it has one (`table_workers` >= 0), else PostgreSQL's rule
/// by `pages`; at most max_parallel_workers_per_gather.
///
/// # Safety
/// Planner state of a base relation.
pub unsafe fn scan_parallel_workers(rel: *mut pg_sys::RelOptInfo, pages: f64, table_workers: i32) -> i32 {
    // SAFETY: caller's promise; planner globals read in the backend.
    unsafe {
        if table_workers >= 0 {
            table_workers.min(pg_sys::max_parallel_workers_per_gather)
        } else {
            pg_sys::compute_parallel_worker(rel, pages, -1.0, pg_sys::max_parallel_workers_per_gather)
        }
    }
}

/// PostgreSQL's share of the work a parallel plan's leader does
/// (costsize.c's get_parallel_divisor).
pub fn parallel_divisor(workers: i32) -> f64 {
    let mut divisor = workers as f64;
    let leader = 1.0 - 0.3 * workers as f64;
    if leader > 0.0 {
        divisor += leader;
    }
    divisor
}

/// The per-row cost of evaluating `quals` (bare expressions, implicitly
/// ANDed) as the executor does: the list in order_qual_clauses' order
/// (cheapest first), every AND and OR stopping at its first false (true)
/// argument.  cost_qual_eval charges every operator of every row; a qual
/// such as TPC-H Q19's `(brand = .. AND container IN (..) AND size ..) OR
/// (..) OR (..)` costs PostgreSQL's seq scan about a third of that, since
/// the first comparison of each branch rules most rows out.  Each
/// argument is weighted by the chance the evaluation reaches it, from
/// clause_selectivity.
///
/// # Safety
/// Planner state; `quals` are expressions of the relation being planned.
pub unsafe fn short_circuit_qual_cost(root: *mut pg_sys::PlannerInfo, quals: &[*mut pg_sys::Node]) -> f64 {
    // SAFETY: caller's promise, passed on.
    unsafe {
        let mut ordered: Vec<(f64, *mut pg_sys::Node)> = quals.iter().map(|&q| (node_cost(root, q), q)).collect();
        ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
        let nodes: Vec<_> = ordered.into_iter().map(|(_, q)| q).collect();
        sequence_cost(root, &nodes, true)
    }
}

/// cost_qual_eval_node's per-row cost of `node`.
///
/// # Safety
/// Planner state; a valid expression.
unsafe fn node_cost(root: *mut pg_sys::PlannerInfo, node: *mut pg_sys::Node) -> f64 {
    let mut c = pg_sys::QualCost::default();
    // SAFETY: caller's promise.
    unsafe { pg_sys::cost_qual_eval_node(&mut c, node, root) };
    c.per_tuple
}

/// The expected cost of evaluating `args` in order until one is false
/// (`and`) or true (OR).
///
/// # Safety
/// Planner state; valid expressions.
unsafe fn sequence_cost(root: *mut pg_sys::PlannerInfo, args: &[*mut pg_sys::Node], and: bool) -> f64 {
    let (mut reach, mut total) = (1.0, 0.0);
    for &a in args {
        // SAFETY: caller's promise.
        unsafe {
            total += reach * stopping_cost(root, a);
            let sel = pg_sys::clause_selectivity(root, a, 0, pg_sys::JoinType::JOIN_INNER, std::ptr::null_mut())
                .clamp(0.0, 1.0);
            reach *= if and { sel } else { 1.0 - sel };
        }
    }
    total
}

/// The expected per-row cost of `node` with AND, OR and NOT evaluated as
/// the executor does.
///
/// # Safety
/// Planner state; a valid expression.
unsafe fn stopping_cost(root: *mut pg_sys::PlannerInfo, node: *mut pg_sys::Node) -> f64 {
    // SAFETY: caller's promise; a BoolExpr read as such by its tag.
    unsafe {
        if (*node).type_ != pg_sys::NodeTag::T_BoolExpr {
            return node_cost(root, node);
        }
        let b = node.cast::<pg_sys::BoolExpr>();
        let args = crate::pg::list::from_list((*b).args);
        match (*b).boolop {
            pg_sys::BoolExprType::AND_EXPR => sequence_cost(root, &args, true),
            pg_sys::BoolExprType::OR_EXPR => sequence_cost(root, &args, false),
            _ => node_cost(root, node),
        }
    }
}

/// How closely the rows of `relid` are stored in the order of one of the
/// grouping keys `keys`: the largest squared physical correlation
/// (`pg_stats.correlation`, as cost_index weighs an index's order) of a
/// key that is a plain column of the relation; 0 when none has
/// statistics.  Rows of one group then lie together, in one or two
/// chunks and one process's share of the scan, whatever the number of
/// groups: a key such as TPC-H's `l_orderkey`, whose distinct values
/// ANALYZE's sample underestimates 37-fold at SF 10 (408,092 against 15
/// million), groups as well as its estimate says within each chunk.
///
/// # Safety
/// Planner state; `keys` are expressions of the query being planned.
pub unsafe fn key_order_correlation(root: *mut pg_sys::PlannerInfo, keys: &[*mut pg_sys::Node], relid: u32) -> f64 {
    let mut best: f64 = 0.0;
    // SAFETY: caller's promise; examine_variable fills vardata, whose
    // stats tuple is released by its own free function.
    unsafe {
        for &k in keys {
            let e = super::strip_relabel(k);
            if (*e).type_ != pg_sys::NodeTag::T_Var || (*e.cast::<pg_sys::Var>()).varno != relid as i32 {
                continue;
            }
            let mut vardata = pg_sys::VariableStatData::default();
            pg_sys::examine_variable(root, e, 0, &mut vardata);
            if !vardata.statsTuple.is_null() {
                let mut slot = pg_sys::AttStatsSlot::default();
                if pg_sys::get_attstatsslot(
                    &mut slot,
                    vardata.statsTuple,
                    pg_sys::STATISTIC_KIND_CORRELATION as i32,
                    pg_sys::InvalidOid,
                    pg_sys::ATTSTATSSLOT_NUMBERS as i32,
                ) {
                    if slot.nnumbers >= 1 {
                        let c = *slot.numbers as f64;
                        best = best.max(c * c);
                    }
                    pg_sys::free_attstatsslot(&mut slot);
                }
                if let Some(free) = vardata.freefunc {
                    free(vardata.statsTuple);
                }
            }
        }
    }
    best.clamp(0.0, 1.0)
}
