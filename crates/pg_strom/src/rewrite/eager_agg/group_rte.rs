//! A query's GROUP BY expressions, and PostgreSQL 18's GROUP BY range
//! table entry (its target list reads grouped expressions through Vars of
//! that entry): reading, rewriting and flattening those expressions
//! (nothing to do before 18).

use pgrx::pg_sys;

use crate::pg::list::from_list;

/// The GROUP BY expressions of `q` (copies; read through the GROUP BY
/// range table entry where PostgreSQL 18 has one).
pub(in crate::rewrite) unsafe fn grouping_exprs(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
    // SAFETY: a valid Query.
    unsafe {
        let mut out = Vec::new();
        for g in from_list((*q).groupClause) {
            let sgc = g as *mut pg_sys::SortGroupClause;
            let tle = pg_sys::get_sortgroupref_tle((*sgc).tleSortGroupRef, (*q).targetList);
            out.push(resolve_group_var(q, pg_sys::copyObjectImpl((*tle).expr.cast()).cast()));
        }
        out
    }
}

/// `e`, or the GROUP BY range table entry's expression it reads where it
/// is a Var of that entry (PostgreSQL 18).
unsafe fn resolve_group_var(q: *mut pg_sys::Query, e: *mut pg_sys::Node) -> *mut pg_sys::Node {
    #[cfg(feature = "pg18")]
    // SAFETY: a valid Query and expression.
    unsafe {
        if (*e).type_ == pg_sys::NodeTag::T_Var {
            let v = e as *mut pg_sys::Var;
            let rte = pg_sys::list_nth((*q).rtable, (*v).varno - 1) as *mut pg_sys::RangeTblEntry;
            if (*v).varlevelsup == 0 && (*rte).rtekind == pg_sys::RTEKind::RTE_GROUP {
                return pg_sys::copyObjectImpl(pg_sys::list_nth((*rte).groupexprs, (*v).varattno as i32 - 1)).cast();
            }
        }
        e
    }
    #[cfg(not(feature = "pg18"))]
    {
        let _ = q;
        e
    }
}

/// Replace the Vars of the GROUP BY range table entry in `q`'s target
/// list and HAVING clause by the expressions they read (PostgreSQL 18;
/// before the GROUP BY is dropped).
pub(in crate::rewrite) unsafe fn flatten_group_vars(q: *mut pg_sys::Query) {
    unsafe extern "C-unwind" fn mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
        // SAFETY: an expression of our copy; ctx is the Query.
        unsafe {
            if node.is_null() {
                return node;
            }
            let q = ctx as *mut pg_sys::Query;
            if (*node).type_ == pg_sys::NodeTag::T_Var {
                return resolve_group_var(q, pg_sys::copyObjectImpl(node.cast()).cast());
            }
            crate::pg::compat::mutate(node, mutator, ctx)
        }
    }
    // SAFETY: a valid Query of our copy.
    unsafe {
        (*q).targetList = mutator((*q).targetList.cast(), q.cast()).cast();
        (*q).havingQual = mutator((*q).havingQual, q.cast());
        #[cfg(feature = "pg18")]
        {
            (*q).hasGroupRTE = false;
        }
    }
}

/// The expressions of the GROUP BY range table entry (PostgreSQL 18 has
/// the target list read grouped expressions through it).
pub(super) unsafe fn group_rte_exprs(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
    #[cfg(feature = "pg18")]
    // SAFETY: a valid Query.
    unsafe {
        from_list((*q).rtable)
            .into_iter()
            .map(|r| r as *mut pg_sys::RangeTblEntry)
            .filter(|&r| (*r).rtekind == pg_sys::RTEKind::RTE_GROUP)
            .map(|r| (*r).groupexprs.cast())
            .collect()
    }
    #[cfg(not(feature = "pg18"))]
    {
        let _ = q;
        Vec::new()
    }
}

/// The GROUP BY range table entry's expressions read through `ctx` (as
/// [`group_rte_exprs`]).
pub(super) unsafe fn set_group_rte_exprs(q: *mut pg_sys::Query, ctx: *mut std::ffi::c_void) {
    #[cfg(feature = "pg18")]
    // SAFETY: a valid Query; ctx an Outer.
    unsafe {
        for r in from_list((*q).rtable) {
            let r = r as *mut pg_sys::RangeTblEntry;
            if (*r).rtekind == pg_sys::RTEKind::RTE_GROUP {
                (*r).groupexprs = super::outer_mutator((*r).groupexprs.cast(), ctx).cast();
            }
        }
    }
    #[cfg(not(feature = "pg18"))]
    {
        let _ = (q, ctx);
    }
}
