//! Hoisted parameters: expressions without Vars that a device program
//! reads as values, evaluated once per scan (or rescan) in the backend.

use pgrx::pg_sys;

use pgstrom_runtime::engine::ParamValue;

use crate::codegen;

/// Evaluate hoisted parameter expressions (once per scan or rescan).  One
/// that raises an error becomes [`ParamValue::failed`]: PostgreSQL may
/// never have evaluated it (a short-circuited AND/OR, a CASE branch), so
/// the error is raised only where a row needs the value (see
/// [`reraise_failed_param`]).  Hoisted expressions hold no subqueries
/// (codegen hoists an InitPlan's output only as the bare Param, whose
/// errors are raised as they come: catching them would abandon the
/// subquery's run), so errors are caught from plain function calls only.
///
/// # Safety
/// `states` are initialised ExprStates of Var-free expressions whose
/// device types are `types`.
pub unsafe fn eval_params(
    states: &[*mut pg_sys::ExprState],
    types: &[u16],
    econtext: *mut pg_sys::ExprContext,
) -> Vec<ParamValue> {
    states
        .iter()
        .zip(types)
        .map(|(&state, &t)| {
            // SAFETY: caller's contract; the memory context is restored
            // after a caught error.
            unsafe {
                let eval = || {
                    let mut isnull = false;
                    let d = pg_sys::ExecEvalExprSwitchContext(state, econtext, &mut isnull);
                    if isnull { ParamValue::null() } else { codegen::param_value(t, d) }
                };
                if codegen::contains_exec_param((*state).expr.cast()) {
                    return eval();
                }
                let cxt = pg_sys::CurrentMemoryContext;
                pgrx::PgTryBuilder::new(eval)
                    .catch_others(|_| {
                        pg_sys::CurrentMemoryContext = cxt;
                        ParamValue::failed()
                    })
                    .execute()
            }
        })
        .collect()
}

/// Raise the error of the first failed parameter (evaluating it again),
/// when an engine could not finish a request that read it and PostgreSQL
/// has no other way to evaluate the rows (join quals, aggregates).
///
/// # Safety
/// As [`eval_params`], with `params` what it returned for `states`.
pub unsafe fn reraise_failed_param(
    states: &[*mut pg_sys::ExprState],
    params: &[ParamValue],
    econtext: *mut pg_sys::ExprContext,
) {
    for (&state, p) in states.iter().zip(params) {
        if p.is_failed() {
            let mut isnull = false;
            // SAFETY: caller's contract; this raises the error again.
            unsafe { pg_sys::ExecEvalExprSwitchContext(state, econtext, &mut isnull) };
        }
    }
}
