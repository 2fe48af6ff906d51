//! Queries planned a second way, rewritten, and the cheaper plan kept.
//!
//! `NOT IN (sub-query)` between columns that cannot be NULL is also planned
//! as the anti-join it is ([`not_in`]; the cheaper of the two is what the
//! others start from).  Other rewrites keep a
//! query's answer and change what can run on the
//! device: [`decorrelate`] turns correlated aggregate sub-queries into a
//! join with a grouped sub-query (one aggregation instead of one per outer
//! row; planned a second time with the grouped sub-query restricted to
//! the keys the outer query can ask for, [`magic_set`]), [`distinct_agg`]
//! removes the duplicates of DISTINCT aggregates by a grouping first,
//! [`eager_agg`] does an aggregation over joins partly below the
//! joins (the tables its aggregates read grouped first, the other tables
//! joined with the groups).  GpuPreAgg's planner hook calls [`plan_query`],
//! which plans the query as written and each rewritten copy with the same
//! planner and keeps the plan that costs least by the rules below.

mod decorrelate;
mod distinct_agg;
mod eager_agg;
mod magic_set;
mod not_in;
mod plan_cost;
mod query;

use pgrx::pg_sys;

use crate::guc;

/// How much cheaper a decorrelated plan, or one of DISTINCT aggregates
/// over a grouping, that groups on the host must be.
const FAR_CHEAPER: f64 = 10.0;

/// A query whose plan as written costs less than this many times
/// `pg_strom.gpu_setup_cost` is not planned a second time.
const SMALL_QUERY_SETUPS: f64 = 100.0;

/// Plan `parse` with `plan`, and, where one of this module's rewrites
/// applies, its rewritten copies too; the cheapest plan.  `grouping` names
/// the custom scan that groups on the device (GpuPreAgg, whose planner
/// hook calls this).
///
/// # Safety
/// The planner's Query (planner_hook).
pub unsafe fn plan_query(
    parse: *mut pg_sys::Query,
    plan: &dyn Fn(*mut pg_sys::Query) -> *mut pg_sys::PlannedStmt,
    grouping: &std::ffi::CStr,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the planner's Query (caller); copies are ours, made before
    // the planner scribbles on the original.
    unsafe {
        if !guc::ENABLED.get() || parse.is_null() || (*parse).commandType != pg_sys::CmdType::CMD_SELECT {
            return plan(parse);
        }
        let prefer = guc::DEBUG_PREFER_REWRITES.get();
        // (a cheap query keeps its plan without a second planning, which
        // would cost it more than any plan could save: at TPC-H SF 0.01,
        // planning Q2 twice doubled its 2.5 ms)
        let small = |cost: f64| cost < SMALL_QUERY_SETUPS * guc::GPU_SETUP_COST.get() && !prefer;
        // NOT IN as an anti-join: the rewritten copy, and where it is not
        // cheap, the query as written too, each planned with its own join
        // order; the cheaper is what the other rewrites start from (TPC-H
        // Q16 at SF 10 on the H100: the anti-join's plan, a Parallel Hash
        // Right Anti Join of one worker, costed 24% above the sub-plan's
        // and ran 4.2 s against 1.15)
        let (parse, planned) = match not_in::rewritten(parse) {
            None => (parse, None),
            Some(anti) => {
                let anti_plan = plan(copy_query(anti));
                let c = plan_cost::cost_as_written(anti_plan);
                if small(c) || prefer {
                    (anti, Some(anti_plan))
                } else {
                    let written = plan(copy_query(parse));
                    let w = plan_cost::cost_as_written(written);
                    pgrx::debug1!("pg_strom: NOT IN as an anti-join: cost {c:.2} against {w:.2} as written");
                    if c <= w { (anti, Some(anti_plan)) } else { (parse, Some(written)) }
                }
            }
        };
        // (the restricted copy also where the plain one is not made: a
        // key whose groups the statistics undercount is grouped only
        // where restricted)
        let mut decorrelated: Vec<_> = decorrelate::rewritten(parse, false).into_iter().collect();
        decorrelated.extend(decorrelate::rewritten(parse, true));
        let eager = eager_agg::rewrites(parse);
        let distinct = distinct_agg::rewritten(parse);
        let original = planned.unwrap_or_else(|| plan(parse));
        if decorrelated.is_empty() && eager.is_empty() && distinct.is_none() {
            return original;
        }
        let a = plan_cost::cost_as_written(original);
        if small(a) {
            return original;
        }
        // (with pg_strom.debug_prefer_rewrites, any rewritten plan beats
        // the original)
        let (mut best, mut best_cost) = (original, if prefer { f64::INFINITY } else { a });
        for (copy, n) in decorrelated {
            let rewritten = plan(copy);
            let b = (*(*rewritten).planTree).total_cost;
            // the grouping on the device, or far cheaper: PostgreSQL's own
            // estimate of a hash aggregate of many groups can be several
            // times short (TPC-H Q17 at SF 1 grouped by PostgreSQL: costed
            // 9% above the sub-plan's plan, ran 6x longer), so without a
            // GpuPreAgg more in the plan tree (a sub-plan's runs once per
            // call) the rewritten plan must cost a tenth of the plan as
            // written
            let on_device = plan_cost::custom_scans(rewritten, grouping) > plan_cost::custom_scans(original, grouping);
            pgrx::debug1!(
                "pg_strom: {} correlated sub-quer{} as a join with a grouped sub-query{}: cost {b:.2}{} against {best_cost:.2} (as written {a:.2}, PostgreSQL's estimate {:.2})",
                n.subqueries,
                if n.subqueries == 1 { "y" } else { "ies" },
                if n.restricted > 0 {
                    format!(", {} restricted to the outer query's keys", n.restricted)
                } else {
                    String::new()
                },
                if on_device { " (grouped by GpuPreAgg)" } else { " (not grouped on the device)" },
                (*(*original).planTree).total_cost
            );
            // (a grouped sub-query restricted to the outer query's keys
            // has at most as many groups as that table's rows that pass:
            // no many-group misestimate to fear)
            if prefer || (b < best_cost && b < a && (on_device || n.restricted == n.subqueries || b * FAR_CHEAPER < a))
            {
                (best, best_cost) = (rewritten, b);
            }
        }
        if let Some(copy) = distinct {
            let rewritten = plan(copy);
            let b = (*(*rewritten).planTree).total_cost;
            // as for a decorrelated sub-query: the grouping that removes
            // the duplicates on the device, or far cheaper.  Grouped by
            // PostgreSQL, its hash aggregate is priced as if hashing wide
            // text keys cost what an integer's does, while the plan as
            // written sorts them, priced in full (TPC-H Q16 at SF 10 on
            // the H100: a serial GpuJoin under two hash aggregates of
            // 1.2 million rows each, costed 35% below the plan as written,
            // ran 1.8x slower than PostgreSQL)
            let on_device = plan_cost::custom_scans(rewritten, grouping) > plan_cost::custom_scans(original, grouping);
            pgrx::debug1!(
                "pg_strom: DISTINCT aggregates over a grouping: cost {b:.2}{} against {best_cost:.2} (as written {a:.2})",
                if on_device { " (grouped by GpuPreAgg)" } else { " (not grouped on the device)" }
            );
            if b < best_cost && (prefer || on_device || b * FAR_CHEAPER < a) {
                (best, best_cost) = (rewritten, b);
            }
        }
        for r in eager {
            let rewritten = plan(r.query);
            let b = (*(*rewritten).planTree).total_cost;
            pgrx::debug1!(
                "pg_strom: aggregation first over {}, then joined: cost {b:.2} against {best_cost:.2}",
                r.tables
            );
            if b < best_cost {
                (best, best_cost) = (rewritten, b);
            }
        }
        best
    }
}

/// A copy of `q` to plan (the planner changes the Query it plans).
///
/// # Safety
/// A valid Query.
unsafe fn copy_query(q: *mut pg_sys::Query) -> *mut pg_sys::Query {
    // SAFETY: caller's promise.
    unsafe { pg_sys::copyObjectImpl(q.cast()) as *mut pg_sys::Query }
}
