//! What a planned statement costs, for choosing between a query's plans
//! as written and rewritten: its cost with correlated sub-plans charged
//! only for the rows that surely run them, and how many custom scans of a
//! kind its plan tree holds.

use pgrx::pg_sys;

use crate::pg::list::from_list;

/// The cost of `stmt` (planned as written) with its correlated sub-plans
/// charged only for the rows that surely run them.
///
/// PostgreSQL charges a qual's sub-plan for every row its node reads,
/// though the node tests its cheaper quals first and runs the sub-plan
/// only for the rows they pass (`WHERE id < 5 AND x < (SELECT ...)` over a
/// Seq Scan is charged 3000 sub-plan runs for 4): against that estimate
/// the grouped form would win where it loses.  Where a node's quals hold
/// a correlated sub-plan beside other quals, this takes the node's own
/// cost out and puts back only the sub-plan runs of the rows it returns
/// (a lower bound of the runs: each returned row ran it), so the rewritten
/// plan is kept only where it costs less than the plan as written could.
pub(super) unsafe fn cost_as_written(stmt: *mut pg_sys::PlannedStmt) -> f64 {
    // SAFETY: a planned statement.
    unsafe {
        let mut overcharge = 0.0;
        each_plan_of(stmt, &mut |p, children| overcharge += overcharge_of(p, children));
        ((*(*stmt).planTree).total_cost - overcharge).max(0.0)
    }
}

/// `plan` and every plan below it (sub-plans of expressions aside).
unsafe fn each_plan(plan: *mut pg_sys::Plan, f: &mut dyn FnMut(*mut pg_sys::Plan, &[*mut pg_sys::Plan])) {
    // SAFETY: a valid plan tree.
    unsafe {
        if plan.is_null() {
            return;
        }
        use pg_sys::NodeTag::*;
        let mut children: Vec<*mut pg_sys::Plan> = vec![(*plan).lefttree, (*plan).righttree];
        let tag = (*plan).type_;
        let extra = match tag {
            T_Append => (*(plan as *mut pg_sys::Append)).appendplans,
            T_MergeAppend => (*(plan as *mut pg_sys::MergeAppend)).mergeplans,
            T_CustomScan => (*(plan as *mut pg_sys::CustomScan)).custom_plans,
            T_BitmapAnd => (*(plan as *mut pg_sys::BitmapAnd)).bitmapplans,
            T_BitmapOr => (*(plan as *mut pg_sys::BitmapOr)).bitmapplans,
            _ => std::ptr::null_mut(),
        };
        children.extend(from_list(extra).into_iter().map(|p| p as *mut pg_sys::Plan));
        if tag == T_SubqueryScan {
            children.push((*(plan as *mut pg_sys::SubqueryScan)).subplan);
        }
        children.retain(|c| !c.is_null());
        f(plan, &children);
        for c in children {
            each_plan(c, f);
        }
    }
}

/// Every plan of `stmt`: its tree and its sub-plans'.
unsafe fn each_plan_of(stmt: *mut pg_sys::PlannedStmt, f: &mut dyn FnMut(*mut pg_sys::Plan, &[*mut pg_sys::Plan])) {
    // SAFETY: a planned statement.
    unsafe {
        each_plan((*stmt).planTree, f);
        for p in from_list((*stmt).subplans) {
            each_plan(p.cast(), f);
        }
    }
}

/// What `plan` may charge too much for sub-plans (see [`cost_as_written`]).
unsafe fn overcharge_of(plan: *mut pg_sys::Plan, children: &[*mut pg_sys::Plan]) -> f64 {
    // SAFETY: a valid plan.
    unsafe {
        use pg_sys::NodeTag::*;
        let mut lists = vec![(*plan).qual];
        if matches!((*plan).type_, T_NestLoop | T_MergeJoin | T_HashJoin) {
            lists.push((*(plan as *mut pg_sys::Join)).joinqual);
        }
        let mut sum = 0.0;
        for list in lists {
            let conj = from_list(list);
            let per_call: Vec<f64> = conj.iter().map(|&c| correlated_subplan_cost(c)).collect();
            if conj.len() >= 2 && per_call.iter().any(|&c| c > 0.0) && per_call.contains(&0.0) {
                let own = (*plan).total_cost - children.iter().map(|&c| (*c).total_cost).sum::<f64>();
                let runs = (*plan).plan_rows * per_call.iter().sum::<f64>();
                sum += (own - runs).max(0.0);
            }
        }
        sum
    }
}

/// How many custom scans named `name` the plan tree of `stmt` holds (those
/// of its sub-plans, run per call of an expression, aside).
pub(super) unsafe fn custom_scans(stmt: *mut pg_sys::PlannedStmt, name: &std::ffi::CStr) -> usize {
    let mut n = 0;
    // SAFETY: a planned statement.
    unsafe {
        each_plan((*stmt).planTree, &mut |p, _| {
            if (*p).type_ == pg_sys::NodeTag::T_CustomScan {
                let m = (*(p as *mut pg_sys::CustomScan)).methods;
                if !m.is_null() && std::ffi::CStr::from_ptr((*m).CustomName) == name {
                    n += 1;
                }
            }
        });
    }
    n
}

/// The cost of one run of the correlated (not hashed) sub-plans in `node`.
unsafe fn correlated_subplan_cost(node: *mut pg_sys::Node) -> f64 {
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the f64 below.
        unsafe {
            if node.is_null() {
                return false;
            }
            if (*node).type_ == pg_sys::NodeTag::T_SubPlan {
                let sp = node as *mut pg_sys::SubPlan;
                if !(*sp).parParam.is_null() && !(*sp).useHashTable {
                    *(ctx as *mut f64) += (*sp).per_call_cost.max(0.0);
                }
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    let mut cost = 0.0f64;
    // SAFETY: a valid expression.
    unsafe { walker(node, (&mut cost as *mut f64).cast()) };
    cost
}
