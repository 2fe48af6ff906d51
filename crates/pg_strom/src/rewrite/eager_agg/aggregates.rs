//! The aggregates eager aggregation takes apart: which ones and how each
//! is combined from the grouped sub-query's partial aggregates.

use pgrx::pg_sys;

use super::super::query::aggregates_of;
use crate::pg::list::{from_list, to_list};

/// How an aggregate is combined from partial ones.
#[derive(Clone, Copy, PartialEq)]
pub(in crate::rewrite) enum Combine {
    /// `sum` of the partial sums (cast back where `sum` of the partial
    /// type returns another: `sum(int8)` is numeric).
    Sum,
    /// `coalesce(sum(partial counts), 0)`.
    Count,
    /// The same aggregate over the partial ones.
    MinMax,
    /// `sum(partial sums) / sum(partial counts)`, numeric.
    Avg,
}

/// The aggregates of the target list and HAVING clause with how each is
/// combined; None where one is not of the module's comment.
pub(super) unsafe fn aggregates(q: *mut pg_sys::Query) -> Option<Vec<(*mut pg_sys::Aggref, Combine)>> {
    // SAFETY: a valid Query.
    unsafe {
        let mut found = aggregates_of((*q).targetList.cast());
        found.extend(aggregates_of((*q).havingQual));
        let mut out = Vec::new();
        for n in found {
            if (*n).type_ != pg_sys::NodeTag::T_Aggref {
                return None;
            }
            let a = n as *mut pg_sys::Aggref;
            out.push((a, combine_of(a)?));
        }
        (!out.is_empty()).then_some(out)
    }
}

/// How aggregate `a` combines from partial ones, where it is one of the
/// module's comment.
pub(in crate::rewrite) unsafe fn combine_of(a: *mut pg_sys::Aggref) -> Option<Combine> {
    // SAFETY: a valid Aggref.
    unsafe {
        if !(*a).aggdistinct.is_null() || !(*a).aggorder.is_null() {
            return None;
        }
        let name = super::super::query::builtin_aggregate_name(a)?;
        let args = from_list((*a).args);
        let arg_type = match args.as_slice() {
            [] => pg_sys::InvalidOid,
            [arg] => pg_sys::exprType((*(*arg as *mut pg_sys::TargetEntry)).expr.cast()),
            _ => return None,
        };
        use pg_sys::*;
        let exact = [INT2OID, INT4OID, INT8OID, NUMERICOID].contains(&arg_type);
        let summable = exact || [FLOAT4OID, FLOAT8OID, INTERVALOID, MONEYOID].contains(&arg_type);
        match name.as_slice() {
            b"count" if (*a).aggstar || args.len() == 1 => Some(Combine::Count),
            b"sum" if summable => Some(Combine::Sum),
            b"min" | b"max" if args.len() == 1 => Some(Combine::MinMax),
            b"avg" if exact => Some(Combine::Avg),
            _ => None,
        }
    }
}

/// The built-in `sum` of type `t`.
pub(in crate::rewrite) unsafe fn catalog_sum(t: pg_sys::Oid) -> Option<pg_sys::Oid> {
    // SAFETY: a catalog lookup.
    unsafe {
        let f = pg_sys::LookupFuncName(crate::pg::compat::qualified_name_list(c"pg_catalog.sum".as_ptr()), 1, &t, true);
        (f != pg_sys::InvalidOid).then_some(f)
    }
}

/// The partial aggregates a sub-query computes for aggregate `a` (a copy
/// of the query's, its own to change): `a` itself, or for `avg` (`how`
/// Avg) a `sum` and a `count` of its argument, its FILTER kept (their
/// transition types are left to the planner, which fills every one in).
/// None where the argument's type has no built-in `sum`.
///
/// # Safety
/// A valid Aggref.
pub(in crate::rewrite) unsafe fn partial_parts(
    a: *mut pg_sys::Aggref,
    how: Combine,
) -> Option<Vec<*mut pg_sys::Aggref>> {
    if how != Combine::Avg {
        return Some(vec![a]);
    }
    // SAFETY: caller's promise; copies of a valid Aggref.
    unsafe {
        let arg = (*(pg_sys::list_nth((*a).args, 0) as *mut pg_sys::TargetEntry)).expr.cast::<pg_sys::Node>();
        let sum = pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref;
        (*sum).aggfnoid = catalog_sum(pg_sys::exprType(arg))?;
        (*sum).aggtype = pg_sys::get_func_rettype((*sum).aggfnoid);
        (*sum).aggtranstype = pg_sys::InvalidOid;
        let count = pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref;
        (*count).aggfnoid = pg_sys::Oid::from(pg_sys::F_COUNT_ANY);
        (*count).aggtype = pg_sys::INT8OID;
        (*count).aggtranstype = pg_sys::InvalidOid;
        (*count).aggcollid = pg_sys::InvalidOid;
        Some(vec![sum, count])
    }
}

/// Aggregate `a` combined (`how`) from the sub-query's partial columns
/// `cols`; with `single`, over the one partial row of its group.
pub(in crate::rewrite) unsafe fn combination(
    a: *mut pg_sys::Aggref,
    how: Combine,
    cols: &[*mut pg_sys::Node],
    single: bool,
) -> Option<*mut pg_sys::Node> {
    // SAFETY: a valid Aggref; new nodes are ours.
    unsafe {
        // the aggregate `f` (by name, of the column's type) over column c
        let over = |c: *mut pg_sys::Node, f: Option<pg_sys::Oid>| -> Option<*mut pg_sys::Node> {
            let t = pg_sys::exprType(c);
            let agg = pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref;
            let f = match f {
                Some(f) => f,
                None => catalog_sum(t)?,
            };
            (*agg).aggfnoid = f;
            (*agg).aggtype = pg_sys::get_func_rettype(f);
            if how != Combine::MinMax {
                (*agg).aggcollid = pg_sys::InvalidOid;
                (*agg).inputcollid = pg_sys::InvalidOid;
            }
            (*agg).aggtranstype = pg_sys::InvalidOid;
            (*agg).aggargtypes = pg_sys::lappend_oid(std::ptr::null_mut(), t);
            (*agg).args = to_list(&[pg_sys::makeTargetEntry(c.cast(), 1, std::ptr::null_mut(), false).cast()]);
            (*agg).aggfilter = std::ptr::null_mut();
            (*agg).aggstar = false;
            Some(agg.cast())
        };
        // `e` (numeric) as type `t`
        let cast = |e: *mut pg_sys::Node, t: pg_sys::Oid| -> Option<*mut pg_sys::Node> {
            let from = pg_sys::exprType(e);
            if from == t {
                return Some(e);
            }
            let c = pg_sys::coerce_to_target_type(
                std::ptr::null_mut(),
                e,
                from,
                t,
                -1,
                pg_sys::CoercionContext::COERCION_EXPLICIT,
                pg_sys::CoercionForm::COERCE_IMPLICIT_CAST,
                -1,
            );
            (!c.is_null()).then_some(c)
        };
        if single {
            // over one partial row: the partial value itself
            return match how {
                Combine::Sum | Combine::Count | Combine::MinMax => cast(cols[0], (*a).aggtype),
                Combine::Avg => Some(
                    pg_sys::makeFuncExpr(
                        pg_sys::Oid::from(pg_sys::F_NUMERIC_DIV),
                        pg_sys::NUMERICOID,
                        to_list(&[cast(cols[0], pg_sys::NUMERICOID)?, cast(cols[1], pg_sys::NUMERICOID)?]),
                        pg_sys::InvalidOid,
                        pg_sys::InvalidOid,
                        pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
                    )
                    .cast(),
                ),
            };
        }
        match how {
            Combine::Sum => cast(over(cols[0], None)?, (*a).aggtype),
            Combine::MinMax => over(cols[0], Some((*a).aggfnoid)),
            Combine::Count => {
                let sum = cast(over(cols[0], None)?, pg_sys::INT8OID)?;
                let zero = pg_sys::makeConst(
                    pg_sys::INT8OID,
                    -1,
                    pg_sys::InvalidOid,
                    8,
                    pg_sys::Datum::from(0i64),
                    false,
                    true,
                );
                let c = pg_sys::palloc0(std::mem::size_of::<pg_sys::CoalesceExpr>()) as *mut pg_sys::CoalesceExpr;
                (*c).xpr.type_ = pg_sys::NodeTag::T_CoalesceExpr;
                (*c).coalescetype = pg_sys::INT8OID;
                (*c).coalescecollid = pg_sys::InvalidOid;
                (*c).args = to_list(&[sum, zero.cast()]);
                (*c).location = -1;
                Some(c.cast())
            }
            Combine::Avg => {
                let sum = cast(over(cols[0], None)?, pg_sys::NUMERICOID)?;
                let count = cast(over(cols[1], None)?, pg_sys::NUMERICOID)?;
                if (*a).aggtype != pg_sys::NUMERICOID {
                    return None;
                }
                Some(
                    pg_sys::makeFuncExpr(
                        pg_sys::Oid::from(pg_sys::F_NUMERIC_DIV),
                        pg_sys::NUMERICOID,
                        to_list(&[sum, count]),
                        pg_sys::InvalidOid,
                        pg_sys::InvalidOid,
                        pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
                    )
                    .cast(),
                )
            }
        }
    }
}
