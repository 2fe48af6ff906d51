//! Groupings that cannot be partial, in parallel: a GROUP BY with
//! `count(DISTINCT x)` (or another aggregate over DISTINCT or ordered
//! values) has no partial aggregation, so PostgreSQL plans it in one
//! process above a Gather Merge of every input row (TPC-H Q16: 1.2
//! million rows at SF 10 counted serially while 16 workers wait).  Here
//! the input rows themselves are exchanged between the processes by the
//! grouping keys (a GroupExchange, `gpupreagg::exchange_node`, over the
//! input's cheapest partial path), so every group's rows meet in one
//! process, which sorts its share and aggregates its groups whole:
//!
//! ```text
//! Gather Merge
//!   ->  Sort
//!         ->  GroupAggregate                    (in every process, whole groups)
//!               ->  Sort                        (by the grouping keys, then the DISTINCT values)
//!                     ->  Parallel Custom Scan (GroupExchange)
//!                           Rows Exchanged: by the grouping keys between the processes
//!                           ->  Parallel Custom Scan (GpuJoin) ...
//! ```
//!
//! Offered beside PostgreSQL's plan (the cheaper is kept) where every
//! aggregate of the query has a combine function (so PostgreSQL itself
//! would run it in parallel but for the DISTINCT or ORDER BY in it: the
//! result does not depend on which process read which row), the keys can
//! be sorted and hashed, and the input has a parallel path.

use pgrx::pg_sys;

use crate::gpupreagg::path::{Grouping, add_share_paths, exchange_keys};
use crate::guc;
use crate::pg::cost::parallel_divisor;
use crate::pg::list::from_list;

/// pg_aggregate's `aggcombinefn` (its 6th column in every supported
/// version: aggfnoid, aggkind, aggnumdirectargs, aggtransfn, aggfinalfn,
/// aggcombinefn).
const ANUM_AGGCOMBINEFN: pg_sys::AttrNumber = 6;

/// Whether aggregate function `aggfnoid` has a combine function.
fn has_combine(aggfnoid: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup, released before returning.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::AGGFNOID as i32, pg_sys::Datum::from(aggfnoid));
        if tup.is_null() {
            return false;
        }
        let mut isnull = false;
        let d =
            pg_sys::SysCacheGetAttr(pg_sys::SysCacheIdentifier::AGGFNOID as i32, tup, ANUM_AGGCOMBINEFN, &mut isnull);
        pg_sys::ReleaseSysCache(tup);
        !isnull && pg_sys::Oid::from(d.value() as u32) != pg_sys::Oid::INVALID
    }
}

/// The aggregates of the grouping's target list and HAVING clause, each
/// with a combine function: Some(count of them); None if one has none.
///
/// # Safety
/// Planner state of the grouping.
unsafe fn combinable_aggs(g: &Grouping) -> Option<usize> {
    // SAFETY: caller's promise.
    unsafe {
        let mut n = 0;
        for expr in [(*g.extra).targetList.cast::<pg_sys::Node>(), (*g.extra).havingQual] {
            if expr.is_null() {
                continue;
            }
            let found = pg_sys::pull_var_clause(
                expr,
                (pg_sys::PVC_INCLUDE_AGGREGATES | pg_sys::PVC_RECURSE_WINDOWFUNCS | pg_sys::PVC_RECURSE_PLACEHOLDERS)
                    as i32,
            );
            for node in from_list(found) {
                if (*node).type_ != pg_sys::NodeTag::T_Aggref {
                    continue;
                }
                let agg = node as *mut pg_sys::Aggref;
                // (an ordered-set or hypothetical-set aggregate: not 'n')
                if (*agg).aggkind != b'n' as std::ffi::c_char || !has_combine((*agg).aggfnoid) {
                    return None;
                }
                n += 1;
            }
        }
        Some(n)
    }
}

/// Beside PostgreSQL's serial plan of a grouping that cannot be partial:
/// the input's rows exchanged by the grouping keys, each process
/// aggregating its groups whole (`groups` groups in all).
///
/// # Safety
/// Planner state of the grouping (create_upper_paths_hook, the grouping
/// relation `g.output_rel` made from `input_rel`).
pub(crate) unsafe fn add_paths(g: &Grouping, input_rel: *mut pg_sys::RelOptInfo, groups: f64) {
    // SAFETY: caller's promise.
    unsafe {
        let root = g.root;
        let flags = (*g.extra).flags as u32;
        if g.gclause.is_null()
            || flags & pg_sys::GROUPING_CAN_PARTIAL_AGG != 0
            || flags & pg_sys::GROUPING_CAN_USE_SORT == 0
            || (*root).group_pathkeys.is_null()
        {
            return;
        }
        let Some(naggs) = combinable_aggs(g) else {
            pgrx::debug2!("GroupExchange: an aggregate has no combine function: rows not exchanged");
            return;
        };
        let Some(&sub) = from_list((*input_rel).partial_pathlist).first() else { return };
        let sub = sub as *mut pg_sys::Path;
        if !(*sub).parallel_safe || (*sub).parallel_workers <= 0 || !(*sub).param_info.is_null() {
            return;
        }
        let div = parallel_divisor((*sub).parallel_workers);
        let prefer = guc::DEBUG_PREFER_PARALLEL_FINALIZE.get();
        if (*sub).rows * div < crate::gpupreagg::exchange::MIN_PARTIAL_GROUPS && !prefer {
            return;
        }
        let target = (*sub).pathtarget;
        let exprs = from_list((*target).exprs);
        let Some(keys) = exchange_keys(g, target, &exprs) else { return };
        let ex = crate::gpupreagg::exchange_node::path(input_rel, sub, &keys);
        // (each process's transition work: an operator per aggregate and
        // row, as PostgreSQL prices a plain transition function)
        let mut costs = pg_sys::AggClauseCosts::default();
        costs.transCost.per_tuple = naggs as f64 * pg_sys::cpu_operator_cost;
        let share_agg = || {
            // by the grouping keys, then (PostgreSQL 16 on) the values of
            // the aggregates its planner presorts, as its own sorted
            // grouping is
            let sorted = pg_sys::create_sort_path(root, g.output_rel, ex.cast(), (*root).group_pathkeys, -1.0);
            pg_sys::create_agg_path(
                root,
                g.output_rel,
                sorted.cast(),
                (*g.output_rel).reltarget,
                pg_sys::AggStrategy::AGG_SORTED,
                pg_sys::AggSplit::AGGSPLIT_SIMPLE,
                g.gclause,
                (*g.extra).havingQual.cast(),
                &costs,
                pg_sys::clamp_row_est(groups / div),
            )
        };
        add_share_paths(g, &share_agg, groups, "GroupExchange");
    }
}
