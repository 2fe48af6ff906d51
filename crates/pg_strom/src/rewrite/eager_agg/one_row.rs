//! Whether every group of a rewritten query holds one joined row (then no
//! aggregation is left above the join): keys given by the grouping keys
//! through equalities, and unique, non-null keys of the tables.

use std::collections::BTreeSet;

use pgrx::pg_sys;

use crate::rewrite::query::unique_keys;

use super::{Key, equal_is_identical};
use crate::pg::list::from_list;

/// Whether every group of the rewritten query `q` holds one joined row:
/// its plain-column grouping keys determine the sub-query's keys (the
/// sub-query's rows differ by them; a unique, non-null key of one of its
/// tables gives the other keys of that table) and a unique, non-null key
/// of every other table, through equalities of types whose equal values
/// are identical (TPC-H Q10: `c_custkey` gives `o_custkey` and
/// `customer`, `customer` gives `c_nationkey` and so `nation`).
pub(super) unsafe fn one_row_per_group(
    q: *mut pg_sys::Query,
    sub: i32,
    keys: &[Key],
    groups: &[*mut pg_sys::Node],
    conds: &[*mut pg_sys::Node],
) -> bool {
    // SAFETY: valid nodes of our copy; catalog reads of tables the query
    // has locked.
    unsafe {
        let plain_var = |e: *mut pg_sys::Node| {
            let e = crate::pg::strip_relabel(e);
            ((*e).type_ == pg_sys::NodeTag::T_Var && (*(e as *mut pg_sys::Var)).varlevelsup == 0)
                .then_some(e as *mut pg_sys::Var)
        };
        let mut known: BTreeSet<(i32, i16)> = BTreeSet::new();
        let mut whole: BTreeSet<i32> = BTreeSet::new();
        // (a key whose equal values may differ, 0 and -0, gives no value)
        for &g in groups {
            if let Some(v) = plain_var(g)
                && equal_is_identical((*v).vartype, (*v).vartypmod, (*v).varcollid)
            {
                known.insert(((*v).varno, (*v).varattno));
            }
        }
        // the equalities that carry a value from one column to another
        let mut equal: Vec<((i32, i16), (i32, i16))> = Vec::new();
        for &c in conds {
            if (*c).type_ != pg_sys::NodeTag::T_OpExpr {
                continue;
            }
            let op = c as *mut pg_sys::OpExpr;
            let args = from_list((*op).args);
            let [l, r] = args.as_slice() else { continue };
            let (Some(l), Some(r)) = (plain_var(*l), plain_var(*r)) else { continue };
            if (*l).vartype != (*r).vartype || !equal_is_identical((*l).vartype, (*l).vartypmod, (*l).varcollid) {
                continue;
            }
            if super::super::query::grouping_of((*l).vartype).is_some_and(|g| g.eqop == (*op).opno) {
                equal.push((((*l).varno, (*l).varattno), ((*r).varno, (*r).varattno)));
            }
        }
        let tables: Vec<i32> = from_list((*(*q).jointree).fromlist)
            .into_iter()
            .map(|f| (*(f as *mut pg_sys::RangeTblRef)).rtindex)
            .collect();
        let unique: Vec<(i32, Vec<Vec<i16>>)> = tables
            .iter()
            .filter(|&&t| t != sub)
            .map(|&t| {
                let rte = pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry;
                (t, unique_keys((*rte).relid))
            })
            .collect();
        // the sub-query's tables (their own range table indexes in q) and
        // their unique keys
        let mut grouped: Vec<i32> = keys.iter().map(|k| k.varno).collect();
        grouped.sort_unstable();
        grouped.dedup();
        let grouped_unique: Vec<(i32, Vec<Vec<i16>>)> = grouped
            .iter()
            .map(|&t| {
                let rte = pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry;
                (t, unique_keys((*rte).relid))
            })
            .collect();
        // the sub-query's column of a key
        let key_column =
            |t: i32, c: i16| keys.iter().position(|k| k.varno == t && k.varattno == c).map(|i| (sub, i as i16 + 1));
        loop {
            let is_known = |k: &(i32, i16), known: &BTreeSet<(i32, i16)>, whole: &BTreeSet<i32>| {
                known.contains(k) || whole.contains(&k.0)
            };
            for (t, ukeys) in &grouped_unique {
                let given = ukeys
                    .iter()
                    .any(|cols| cols.iter().all(|&c| key_column(*t, c).is_some_and(|k| is_known(&k, &known, &whole))));
                if given {
                    for (i, k) in keys.iter().enumerate() {
                        if k.varno == *t {
                            known.insert((sub, i as i16 + 1));
                        }
                    }
                }
            }
            let before = (known.len(), whole.len());
            for (a, b) in &equal {
                if is_known(a, &known, &whole) {
                    known.insert(*b);
                }
                if is_known(b, &known, &whole) {
                    known.insert(*a);
                }
            }
            if (1..=keys.len() as i16).all(|k| is_known(&(sub, k), &known, &whole)) {
                whole.insert(sub);
            }
            for (t, keys) in &unique {
                if keys.iter().any(|cols| cols.iter().all(|&c| is_known(&(*t, c), &known, &whole))) {
                    whole.insert(*t);
                }
            }
            if (known.len(), whole.len()) == before {
                break;
            }
        }
        tables.iter().all(|t| whole.contains(t))
    }
}
