//! An aggregation over joins done partly below them ("eager aggregation").
//!
//! TPC-H Q10 sums `lineitem` rows joined with `orders`, `customer` and
//! `nation`, grouped by customer: at SF 10, 1.15 million joined rows that
//! carry the customer's text columns are grouped on the host.  The same
//! answer comes from grouping `lineitem` joined with `orders` by
//! `o_custkey` first (about 380,000 groups, made by a GpuPreAgg on the
//! device) and joining those groups with `customer` and `nation`: the sum
//! over the joined rows is the sum of the groups' sums, each counted as
//! often as its group joins.  PostgreSQL (before 19) does not plan this.
//!
//! For `SELECT .. FROM r1, .., s1, .. WHERE .. GROUP BY ..` whose
//! aggregates read only the tables R = {r1, ..}, the rewritten copy is
//!
//! ```text
//! SELECT .. FROM s1, .., (SELECT k1, .., partial aggregates FROM r1, ..
//!                         WHERE <conjuncts of R alone> GROUP BY k1, ..) pgstrom_partial
//!  WHERE <the other conjuncts> GROUP BY ..
//! ```
//!
//! where the keys k are every column of R the query reads outside its
//! aggregates (join conditions with the other tables, grouping keys,
//! output columns), and each aggregate becomes its combination of the
//! partial ones: `sum` of `sum`s, `sum` of `count`s, `min` of `min`s,
//! `max` of `max`s, the `sum` of `sum`s divided by the `sum` of `count`s
//! for `avg` (the division its final function makes).  The outer query
//! keeps its GROUP BY, HAVING, ORDER BY and LIMIT.  R is tried as the
//! tables the aggregates read and as those joined with a few of their
//! neighbours in the join graph; every copy is planned, and the cheapest
//! plan is kept (`pg_strom.enable_eager_aggregate`, [`super::plan_query`]).
//!
//! The answer is the same where it applies, and it applies only where:
//! - the query is one level of plain tables (heap, partitioned, foreign,
//!   materialized views) joined by the WHERE clause's conjuncts, grouped,
//!   without sub-links, window functions, set-returning functions,
//!   grouping sets, row locks, row security or anything volatile in its
//!   WHERE clause or its aggregates;
//! - every aggregate is a built-in `sum` (of integers, numerics, floats,
//!   intervals, money), `count`, `min`, `max`, or `avg` (of integers and
//!   numerics; PostgreSQL's `avg` divides its numeric sum by the count,
//!   as the combination does), without DISTINCT or ORDER BY (FILTER goes
//!   with the partial aggregate);
//! - every key is a column whose type's equality means identical values
//!   (integers, dates, times, timestamps, booleans, uuids, numerics of a
//!   declared scale, text and varchar of a deterministic collation,
//!   char(n)): a group's rows then meet every other table and every
//!   expression of the outer query alike, so grouping before the join
//!   merges only what the outer query cannot tell apart.  (Floats, where
//!   0 = -0, and numerics of any scale, where 1.0 = 1.00, are not keys.)
//!
//! Sums of floats add in another order, as a parallel plan's do.

use std::collections::BTreeSet;

use pgrx::pg_sys;

use crate::guc;
use crate::pg::list::{from_list, to_list};

/// At most this many sets of tables are grouped first, each planned once.
const MAX_CANDIDATES: usize = 3;

/// A rewritten copy of a query, and the tables it groups first.
pub(super) struct Rewrite {
    pub query: *mut pg_sys::Query,
    pub tables: String,
}

/// How an aggregate is combined from partial ones.
#[derive(Clone, Copy, PartialEq)]
enum Combine {
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

/// The copies of `parse` rewritten with the aggregation done first over
/// some of its tables; none where the query has not the shape of the
/// module's comment (or the setting is off).
///
/// # Safety
/// The planner's Query, not yet planned.
pub(super) unsafe fn rewrites(parse: *mut pg_sys::Query) -> Vec<Rewrite> {
    // SAFETY: the planner's Query (caller); only copies are changed.
    unsafe {
        if !guc::ENABLE_EAGER_AGGREGATE.get() || !plain_shape(parse) {
            return Vec::new();
        }
        let Some(from) = base_tables(parse) else { return Vec::new() };
        let Some(aggs) = aggregates(parse) else { return Vec::new() };
        // (a volatile argument would run once per grouped row instead of
        // once per joined row)
        if aggs.iter().any(|&(a, _)| pg_sys::contain_volatile_functions(a.cast())) {
            return Vec::new();
        }
        let mut read: BTreeSet<i32> = BTreeSet::new();
        for &(a, _) in &aggs {
            for v in vars_of(a.cast(), true) {
                read.insert((*v).varno);
            }
        }
        // aggregates of no column (count(*)) alone: grouped first over the
        // largest table, by its statistics
        if read.is_empty()
            && let Some(&t) = from.iter().max_by(|&&a, &&b| rel_tuples(parse, a).total_cmp(&rel_tuples(parse, b)))
        {
            read.insert(t);
        }
        if read.is_empty() || read.len() >= from.len() || !read.iter().all(|r| from.contains(r)) {
            return Vec::new();
        }
        let conj = conjuncts(parse);
        if conj.iter().any(|&c| pg_sys::contain_volatile_functions(c)) {
            return Vec::new();
        }
        let rels: Vec<BTreeSet<i32>> =
            conj.iter().map(|&c| vars_of(c, true).into_iter().map(|v| (*v).varno).collect()).collect();
        let mut out = Vec::new();
        for r in candidate_sets(&from, &read, &rels) {
            if let Some(query) = rewrite_with(parse, &r) {
                out.push(Rewrite { query, tables: table_names(parse, &r) });
            }
        }
        out
    }
}

/// One level of plain tables, grouped (see the module's comment).
unsafe fn plain_shape(q: *mut pg_sys::Query) -> bool {
    // SAFETY: a valid Query.
    unsafe {
        (*q).commandType == pg_sys::CmdType::CMD_SELECT
            && (*q).utilityStmt.is_null()
            && (*q).setOperations.is_null()
            && (*q).hasAggs
            && !(*q).hasWindowFuncs
            && !(*q).hasTargetSRFs
            && !(*q).hasSubLinks
            && (*q).groupingSets.is_null()
            && (*q).rowMarks.is_null()
            && !(*q).hasForUpdate
            && !(*q).hasRowSecurity
            && !(*q).hasRecursive
            && !(*q).hasModifyingCTE
            && (*q).cteList.is_null()
            && !(*q).jointree.is_null()
    }
}

/// The range table indexes of the FROM clause, when it is a list of plain
/// tables (heap, partitioned, foreign, materialized views).
unsafe fn base_tables(q: *mut pg_sys::Query) -> Option<Vec<i32>> {
    // SAFETY: a valid Query.
    unsafe {
        let mut out = Vec::new();
        for f in from_list((*(*q).jointree).fromlist) {
            if (*f).type_ != pg_sys::NodeTag::T_RangeTblRef {
                return None;
            }
            let i = (*(f as *mut pg_sys::RangeTblRef)).rtindex;
            let rte = pg_sys::list_nth((*q).rtable, i - 1) as *mut pg_sys::RangeTblEntry;
            let kind = (*rte).relkind as u8;
            if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
                || !(*rte).tablesample.is_null()
                || !(*rte).securityQuals.is_null()
                || !matches!(kind, b'r' | b'p' | b'f' | b'm')
            {
                return None;
            }
            out.push(i);
        }
        (out.len() >= 2).then_some(out)
    }
}

/// The top-level conjuncts of the WHERE clause.
unsafe fn conjuncts(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
    // SAFETY: a valid Query.
    unsafe {
        let quals = (*(*q).jointree).quals;
        if quals.is_null() { Vec::new() } else { from_list(pg_sys::make_ands_implicit(quals.cast())) }
    }
}

/// The aggregates of the target list and HAVING clause with how each is
/// combined; None where one is not of the module's comment.
unsafe fn aggregates(q: *mut pg_sys::Query) -> Option<Vec<(*mut pg_sys::Aggref, Combine)>> {
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the Vec below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let out = &mut *(ctx as *mut Vec<*mut pg_sys::Node>);
            match (*node).type_ {
                pg_sys::NodeTag::T_Aggref | pg_sys::NodeTag::T_GroupingFunc => {
                    out.push(node);
                    return false;
                }
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    // SAFETY: a valid Query.
    unsafe {
        let mut found: Vec<*mut pg_sys::Node> = Vec::new();
        let ctx = (&mut found as *mut Vec<*mut pg_sys::Node>).cast();
        walker((*q).targetList.cast(), ctx);
        walker((*q).havingQual, ctx);
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
unsafe fn combine_of(a: *mut pg_sys::Aggref) -> Option<Combine> {
    // SAFETY: a valid Aggref.
    unsafe {
        if (*a).agglevelsup != 0
            || (*a).aggkind != b'n' as std::ffi::c_char
            || !(*a).aggdistinct.is_null()
            || !(*a).aggorder.is_null()
            || (*a).aggvariadic
            || !(*a).aggdirectargs.is_null()
            || pg_sys::get_func_namespace((*a).aggfnoid) != pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE)
        {
            return None;
        }
        let name = pg_sys::get_func_name((*a).aggfnoid);
        if name.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(name).to_bytes();
        let args = from_list((*a).args);
        let arg_type = match args.as_slice() {
            [] => pg_sys::InvalidOid,
            [arg] => pg_sys::exprType((*(*arg as *mut pg_sys::TargetEntry)).expr.cast()),
            _ => return None,
        };
        use pg_sys::*;
        let exact = [INT2OID, INT4OID, INT8OID, NUMERICOID].contains(&arg_type);
        let summable = exact || [FLOAT4OID, FLOAT8OID, INTERVALOID, MONEYOID].contains(&arg_type);
        match name {
            b"count" if (*a).aggstar || args.len() == 1 => Some(Combine::Count),
            b"sum" if summable => Some(Combine::Sum),
            b"min" | b"max" if args.len() == 1 => Some(Combine::MinMax),
            b"avg" if exact => Some(Combine::Avg),
            _ => None,
        }
    }
}

/// The Vars of this query level in `node`; with `into_aggregates` false,
/// those outside aggregates only.
unsafe fn vars_of(node: *mut pg_sys::Node, into_aggregates: bool) -> Vec<*mut pg_sys::Var> {
    struct Ctx {
        into_aggregates: bool,
        out: Vec<*mut pg_sys::Var>,
    }
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the Ctx below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let c = &mut *(ctx as *mut Ctx);
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    if (*(node as *mut pg_sys::Var)).varlevelsup == 0 {
                        c.out.push(node.cast());
                    }
                    return false;
                }
                pg_sys::NodeTag::T_Aggref if !c.into_aggregates => return false,
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    let mut ctx = Ctx { into_aggregates, out: Vec::new() };
    // SAFETY: a valid expression.
    unsafe { walker(node, (&mut ctx as *mut Ctx).cast()) };
    ctx.out
}

/// The sets of tables to group first: those the aggregates read, then
/// those joined with one and two of their neighbours (tables with a
/// condition of their own first: they shrink the groups' input), each
/// connected by the join conditions and never all the tables.
fn candidate_sets(from: &[i32], read: &BTreeSet<i32>, rels: &[BTreeSet<i32>]) -> Vec<BTreeSet<i32>> {
    let connected = |set: &BTreeSet<i32>| {
        let mut reached: BTreeSet<i32> = set.iter().take(1).copied().collect();
        loop {
            let before = reached.len();
            for r in rels {
                if r.len() >= 2 && r.is_subset(set) && !r.is_disjoint(&reached) {
                    reached.extend(r.iter().copied());
                }
            }
            if reached.len() == before {
                return reached.len() == set.len();
            }
        }
    };
    let filtered = |t: i32| rels.iter().any(|r| r.len() == 1 && r.contains(&t));
    let mut out: Vec<BTreeSet<i32>> = Vec::new();
    let mut level = vec![read.clone()];
    while !level.is_empty() && out.len() < MAX_CANDIDATES {
        let mut next: Vec<BTreeSet<i32>> = Vec::new();
        for set in &level {
            if set.len() < from.len() && connected(set) && !out.contains(set) && out.len() < MAX_CANDIDATES {
                out.push(set.clone());
            }
            // neighbours: tables a join condition links with the set
            let mut neighbours: Vec<i32> = from
                .iter()
                .copied()
                .filter(|t| !set.contains(t) && rels.iter().any(|r| r.contains(t) && !r.is_disjoint(set)))
                .collect();
            neighbours.sort_by_key(|&t| !filtered(t));
            for t in neighbours {
                let mut bigger = set.clone();
                bigger.insert(t);
                if bigger.len() < from.len() && !next.contains(&bigger) {
                    next.push(bigger);
                }
            }
        }
        level = next;
    }
    out
}

/// The rows the statistics give table `t` of `q` (`pg_class.reltuples`;
/// 0 where never analyzed).
unsafe fn rel_tuples(q: *mut pg_sys::Query, t: i32) -> f64 {
    // SAFETY: a valid Query; a syscache lookup of a locked table.
    unsafe {
        let rte = pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry;
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as i32, pg_sys::Datum::from((*rte).relid));
        if tup.is_null() {
            return 0.0;
        }
        let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_class>(tup);
        let n = (*form).reltuples as f64;
        pg_sys::ReleaseSysCache(tup);
        n.max(0.0)
    }
}

/// The names of the tables `set` (for the planner's debug message).
unsafe fn table_names(q: *mut pg_sys::Query, set: &BTreeSet<i32>) -> String {
    // SAFETY: a valid Query.
    unsafe {
        let names: Vec<String> = set
            .iter()
            .map(|&i| {
                let rte = pg_sys::list_nth((*q).rtable, i - 1) as *mut pg_sys::RangeTblEntry;
                let n = if (*rte).eref.is_null() { std::ptr::null_mut() } else { (*(*rte).eref).aliasname };
                if n.is_null() { format!("#{i}") } else { std::ffi::CStr::from_ptr(n).to_string_lossy().into_owned() }
            })
            .collect();
        names.join(", ")
    }
}

/// Whether equal values of a column of this type, type modifier and
/// collation are identical (see the module's comment).
unsafe fn equal_is_identical(t: pg_sys::Oid, typmod: i32, coll: pg_sys::Oid) -> bool {
    use pg_sys::*;
    // SAFETY: catalog lookups.
    let deterministic = || unsafe { coll == InvalidOid || get_collation_isdeterministic(coll) };
    match t {
        BOOLOID | INT2OID | INT4OID | INT8OID | OIDOID | DATEOID | TIMEOID | TIMESTAMPOID | TIMESTAMPTZOID
        | UUIDOID | CHAROID => true,
        TEXTOID | VARCHAROID => deterministic(),
        BPCHAROID => typmod >= 0 && deterministic(),
        NUMERICOID => typmod >= 0,
        _ => false,
    }
}

/// One grouping key of the sub-query: a column of one of its tables.
struct Key {
    varno: i32,
    varattno: pg_sys::AttrNumber,
    var: *mut pg_sys::Var,
}

/// What the mutator of the outer query's expressions needs.
struct Outer<'a> {
    set: &'a BTreeSet<i32>,
    keys: &'a [Key],
    /// the sub-query's range table index
    sub: i32,
    /// each aggregate and its combination
    combined: &'a [(*mut pg_sys::Aggref, *mut pg_sys::Node)],
    failed: bool,
}

/// A copy of `parse` with its aggregation done first over the tables `set`
/// (module's comment); None where a key cannot be grouped so.
unsafe fn rewrite_with(parse: *mut pg_sys::Query, set: &BTreeSet<i32>) -> Option<*mut pg_sys::Query> {
    // SAFETY: the planner's Query, copied before any change.
    unsafe {
        let q = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        let in_set = |v: *mut pg_sys::Var| set.contains(&(*v).varno);
        let (mut inside, mut outside) = (Vec::new(), Vec::new());
        for c in conjuncts(q) {
            let vars = vars_of(c, true);
            if !vars.is_empty() && vars.iter().all(|&v| in_set(v)) {
                inside.push(c);
            } else {
                outside.push(c);
            }
        }
        // the keys: the set's columns read outside its aggregates
        let mut exprs: Vec<*mut pg_sys::Node> = outside.clone();
        exprs.push((*q).targetList.cast());
        exprs.push((*q).havingQual);
        exprs.extend(group_rte_exprs(q));
        let mut keys: Vec<Key> = Vec::new();
        for e in exprs {
            for v in vars_of(e, false) {
                if !in_set(v) || keys.iter().any(|k| k.varno == (*v).varno && k.varattno == (*v).varattno) {
                    continue;
                }
                if (*v).varattno <= 0 || !equal_is_identical((*v).vartype, (*v).vartypmod, (*v).varcollid) {
                    return None;
                }
                keys.push(Key { varno: (*v).varno, varattno: (*v).varattno, var: v });
            }
        }
        // one table grouped by a unique key of its own: a group per row,
        // nothing to gain (TPC-H Q12's `orders` by `o_orderkey`)
        if let [t] = set.iter().copied().collect::<Vec<_>>()[..] {
            let rte = pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry;
            let unique = unique_keys((*rte).relid)
                .into_iter()
                .any(|cols| cols.iter().all(|&c| keys.iter().any(|k| k.varno == t && k.varattno == c)));
            if unique {
                return None;
            }
        }
        let aggs = aggregates(q)?;
        let (sub_query, partial_types) = grouped_subquery(q, set, &inside, &keys, &aggs)?;

        // the sub-query in the FROM clause, in place of the set's tables
        let ps = pg_sys::make_parsestate(std::ptr::null_mut());
        (*ps).p_rtable = (*q).rtable;
        let alias = pg_sys::makeAlias(c"pgstrom_partial".as_ptr(), std::ptr::null_mut());
        pg_sys::addRangeTableEntryForSubquery(ps, sub_query, alias, false, true);
        (*q).rtable = (*ps).p_rtable;
        pg_sys::free_parsestate(ps);
        let sub = pg_sys::list_length((*q).rtable);
        let mut from: Vec<*mut pg_sys::Node> = from_list((*(*q).jointree).fromlist)
            .into_iter()
            .filter(|&f| !set.contains(&(*(f as *mut pg_sys::RangeTblRef)).rtindex))
            .collect();
        let rtr = pg_sys::palloc0(std::mem::size_of::<pg_sys::RangeTblRef>()) as *mut pg_sys::RangeTblRef;
        (*rtr).type_ = pg_sys::NodeTag::T_RangeTblRef;
        (*rtr).rtindex = sub;
        from.push(rtr.cast());
        (*(*q).jointree).fromlist = to_list(&from);

        // the outer query's conditions and grouping keys read the
        // sub-query's columns
        let mut ctx = Outer { set, keys: &keys, sub, combined: &[], failed: false };
        let ctxp = (&mut ctx as *mut Outer).cast();
        let mut outside: Vec<*mut pg_sys::Node> = outside.into_iter().map(|c| outer_mutator(c, ctxp)).collect();
        set_group_rte_exprs(q, ctxp);
        let groups: Vec<*mut pg_sys::Node> = grouping_exprs(q).into_iter().map(|e| outer_mutator(e, ctxp)).collect();
        if ctx.failed {
            return None;
        }
        // one joined row per group: no aggregation left above the join
        let single = !(*q).groupClause.is_null() && one_row_per_group(q, sub, &keys, &groups, &outside);

        // each aggregate's combination of the sub-query's partial columns
        let mut combined = Vec::with_capacity(aggs.len());
        let mut column = keys.len();
        for &(a, how) in &aggs {
            let n = if how == Combine::Avg { 2 } else { 1 };
            let cols: Vec<*mut pg_sys::Node> = (0..n)
                .map(|i| {
                    let (t, typmod, coll) = partial_types[column - keys.len() + i];
                    pg_sys::makeVar(sub, (column + i + 1) as pg_sys::AttrNumber, t, typmod, coll, 0).cast()
                })
                .collect();
            column += n;
            combined.push((a, combination(a, how, &cols, single)?));
        }
        let mut ctx = Outer { set, keys: &keys, sub, combined: &combined, failed: false };
        let ctxp = (&mut ctx as *mut Outer).cast();
        (*q).targetList = outer_mutator((*q).targetList.cast(), ctxp).cast();
        (*q).havingQual = outer_mutator((*q).havingQual, ctxp);
        if ctx.failed {
            return None;
        }
        if single {
            // HAVING becomes a condition of the row
            flatten_group_vars(q);
            if !(*q).havingQual.is_null() {
                outside.extend(from_list(pg_sys::make_ands_implicit((*q).havingQual.cast())));
            }
            (*q).havingQual = std::ptr::null_mut();
            (*q).groupClause = std::ptr::null_mut();
            (*q).hasAggs = false;
        }
        (*(*q).jointree).quals = if outside.is_empty() {
            std::ptr::null_mut()
        } else {
            pg_sys::make_ands_explicit(to_list(&outside)).cast()
        };
        Some(q)
    }
}

/// The GROUP BY expressions of `q` (copies; read through the GROUP BY
/// range table entry where PostgreSQL 18 has one).
unsafe fn grouping_exprs(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
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
unsafe fn flatten_group_vars(q: *mut pg_sys::Query) {
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

/// Whether every group of the rewritten query `q` holds one joined row:
/// its plain-column grouping keys determine the sub-query's keys (the
/// sub-query's rows differ by them; a unique, non-null key of one of its
/// tables gives the other keys of that table) and a unique, non-null key
/// of every other table, through equalities of types whose equal values
/// are identical (TPC-H Q10: `c_custkey` gives `o_custkey` and
/// `customer`, `customer` gives `c_nationkey` and so `nation`).
unsafe fn one_row_per_group(
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
            let (mut sortop, mut eqop) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
            pg_sys::get_sort_group_operators(
                (*l).vartype,
                false,
                false,
                false,
                &mut sortop,
                &mut eqop,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if eqop == (*op).opno {
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

/// The unique keys of table `relid` whose columns are all NOT NULL (a
/// primary key, a unique index without predicate or expressions, not
/// deferrable): the columns of each.
unsafe fn unique_keys(relid: pg_sys::Oid) -> Vec<Vec<i16>> {
    // SAFETY: a table the query has locked; its indexes opened and closed.
    unsafe {
        let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
        let rel = pg_sys::table_open(relid, lock);
        let mut out = Vec::new();
        for oid in crate::pg::list::from_oid_list(pg_sys::RelationGetIndexList(rel)) {
            let index = pg_sys::index_open(oid, lock);
            let f = (*index).rd_index;
            let plain = (*f).indisunique
                && (*f).indimmediate
                && (*f).indisvalid
                && pg_sys::heap_attisnull(
                    (*index).rd_indextuple,
                    pg_sys::Anum_pg_index_indpred as i32,
                    std::ptr::null_mut(),
                )
                && pg_sys::heap_attisnull(
                    (*index).rd_indextuple,
                    pg_sys::Anum_pg_index_indexprs as i32,
                    std::ptr::null_mut(),
                );
            if plain {
                let n = (*f).indnkeyatts as usize;
                let cols: Vec<i16> = (*f).indkey.values.as_slice(n).to_vec();
                let not_null = cols
                    .iter()
                    .all(|&c| c > 0 && (*crate::pg::compat::tuple_desc_attr((*rel).rd_att, c as i32 - 1)).attnotnull);
                if not_null {
                    out.push(cols);
                }
            }
            pg_sys::index_close(index, lock);
        }
        pg_sys::table_close(rel, lock);
        out
    }
}

/// The expressions of the GROUP BY range table entry (PostgreSQL 18 has
/// the target list read grouped expressions through it).
unsafe fn group_rte_exprs(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
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
unsafe fn set_group_rte_exprs(q: *mut pg_sys::Query, ctx: *mut std::ffi::c_void) {
    #[cfg(feature = "pg18")]
    // SAFETY: a valid Query; ctx an Outer.
    unsafe {
        for r in from_list((*q).rtable) {
            let r = r as *mut pg_sys::RangeTblEntry;
            if (*r).rtekind == pg_sys::RTEKind::RTE_GROUP {
                (*r).groupexprs = outer_mutator((*r).groupexprs.cast(), ctx).cast();
            }
        }
    }
    #[cfg(not(feature = "pg18"))]
    {
        let _ = (q, ctx);
    }
}

/// The grouped sub-query over the tables `set`: `inside` as its WHERE
/// clause, the keys as its first columns (grouped by), then each
/// aggregate's partial columns (two for `avg`); with the partial columns'
/// types (type, modifier, collation).
#[allow(clippy::type_complexity)]
unsafe fn grouped_subquery(
    q: *mut pg_sys::Query,
    set: &BTreeSet<i32>,
    inside: &[*mut pg_sys::Node],
    keys: &[Key],
    aggs: &[(*mut pg_sys::Aggref, Combine)],
) -> Option<(*mut pg_sys::Query, Vec<(pg_sys::Oid, i32, pg_sys::Oid)>)> {
    // SAFETY: valid nodes of our copy; new nodes are ours.
    unsafe {
        let sub = pg_sys::palloc0(std::mem::size_of::<pg_sys::Query>()) as *mut pg_sys::Query;
        (*sub).type_ = pg_sys::NodeTag::T_Query;
        (*sub).commandType = pg_sys::CmdType::CMD_SELECT;
        (*sub).querySource = pg_sys::QuerySource::QSRC_ORIGINAL;
        (*sub).canSetTag = true;
        (*sub).hasAggs = true;
        // the set's tables, numbered from 1 in their order
        let map: Vec<(i32, i32)> = set.iter().enumerate().map(|(i, &r)| (r, i as i32 + 1)).collect();
        let mut rtable = Vec::with_capacity(map.len());
        #[cfg(not(feature = "pg15"))]
        let mut perms: Vec<*mut pg_sys::Node> = Vec::new();
        for &(r, _) in &map {
            let rte = pg_sys::copyObjectImpl(pg_sys::list_nth((*q).rtable, r - 1).cast()) as *mut pg_sys::RangeTblEntry;
            #[cfg(not(feature = "pg15"))]
            if (*rte).perminfoindex > 0 {
                perms.push(pg_sys::copyObjectImpl(
                    pg_sys::list_nth((*q).rteperminfos, (*rte).perminfoindex as i32 - 1).cast(),
                ) as *mut pg_sys::Node);
                (*rte).perminfoindex = perms.len() as pg_sys::Index;
            }
            rtable.push(rte.cast());
        }
        (*sub).rtable = to_list(&rtable);
        #[cfg(not(feature = "pg15"))]
        {
            (*sub).rteperminfos = to_list(&perms);
        }
        let renumber = |n: *mut pg_sys::Node| renumbered(n, &map);
        let mut from = Vec::with_capacity(map.len());
        for &(_, i) in &map {
            let rtr = pg_sys::palloc0(std::mem::size_of::<pg_sys::RangeTblRef>()) as *mut pg_sys::RangeTblRef;
            (*rtr).type_ = pg_sys::NodeTag::T_RangeTblRef;
            (*rtr).rtindex = i;
            from.push(rtr.cast());
        }
        let quals: Vec<*mut pg_sys::Node> = inside.iter().map(|&c| renumber(c)).collect();
        (*sub).jointree = pg_sys::makeFromExpr(
            to_list(&from),
            if quals.is_empty() { std::ptr::null_mut() } else { pg_sys::make_ands_explicit(to_list(&quals)).cast() },
        );
        // the keys, grouped by
        let mut tlist: Vec<*mut pg_sys::Node> = Vec::new();
        let mut groups: Vec<*mut pg_sys::Node> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let name = std::ffi::CString::new(format!("k{}", i + 1)).expect("no NUL");
            let tle = pg_sys::makeTargetEntry(
                renumber(k.var.cast()).cast(),
                (i + 1) as pg_sys::AttrNumber,
                pg_sys::pstrdup(name.as_ptr()),
                false,
            );
            (*tle).ressortgroupref = (i + 1) as pg_sys::Index;
            tlist.push(tle.cast());
            let (mut sortop, mut eqop, mut hashable) = (pg_sys::InvalidOid, pg_sys::InvalidOid, false);
            pg_sys::get_sort_group_operators(
                (*k.var).vartype,
                false,
                false,
                false,
                &mut sortop,
                &mut eqop,
                std::ptr::null_mut(),
                &mut hashable,
            );
            if eqop == pg_sys::InvalidOid || (sortop == pg_sys::InvalidOid && !hashable) {
                return None;
            }
            let sgc = pg_sys::palloc0(std::mem::size_of::<pg_sys::SortGroupClause>()) as *mut pg_sys::SortGroupClause;
            (*sgc).type_ = pg_sys::NodeTag::T_SortGroupClause;
            (*sgc).tleSortGroupRef = (i + 1) as pg_sys::Index;
            (*sgc).eqop = eqop;
            (*sgc).sortop = sortop;
            (*sgc).hashable = hashable;
            groups.push(sgc.cast());
        }
        (*sub).groupClause = to_list(&groups);
        // the partial aggregates
        let mut types = Vec::new();
        for &(a, how) in aggs {
            let partial = renumber(a.cast()) as *mut pg_sys::Aggref;
            let mut parts = vec![partial];
            if how == Combine::Avg {
                // avg(x) as sum(x) and count(x), with its FILTER
                let arg_type =
                    pg_sys::exprType((*(pg_sys::list_nth((*partial).args, 0) as *mut pg_sys::TargetEntry)).expr.cast());
                let sum = pg_sys::copyObjectImpl(partial.cast()) as *mut pg_sys::Aggref;
                (*sum).aggfnoid = catalog_sum(arg_type)?;
                (*sum).aggtype = pg_sys::get_func_rettype((*sum).aggfnoid);
                let count = pg_sys::copyObjectImpl(partial.cast()) as *mut pg_sys::Aggref;
                (*count).aggfnoid = pg_sys::Oid::from(pg_sys::F_COUNT_ANY);
                (*count).aggtype = pg_sys::INT8OID;
                (*count).aggcollid = pg_sys::InvalidOid;
                parts = vec![sum, count];
            }
            for p in parts {
                let resno = tlist.len() + 1;
                let name = std::ffi::CString::new(format!("p{resno}")).expect("no NUL");
                tlist.push(
                    pg_sys::makeTargetEntry(
                        p.cast(),
                        resno as pg_sys::AttrNumber,
                        pg_sys::pstrdup(name.as_ptr()),
                        false,
                    )
                    .cast(),
                );
                types.push(((*p).aggtype, -1, (*p).aggcollid));
            }
        }
        (*sub).targetList = to_list(&tlist);
        Some((sub, types))
    }
}

/// A copy of `node` with the Vars of this level renumbered by `map`
/// (old range table index, new).
unsafe fn renumbered(node: *mut pg_sys::Node, map: &[(i32, i32)]) -> *mut pg_sys::Node {
    // SAFETY: a valid expression; the copy is ours.
    unsafe {
        let copy = pg_sys::copyObjectImpl(node.cast()) as *mut pg_sys::Node;
        for v in vars_of(copy, true) {
            if let Some(&(_, new)) = map.iter().find(|&&(old, _)| old == (*v).varno) {
                (*v).varno = new;
                (*v).varnosyn = new as pg_sys::Index;
            }
        }
        copy
    }
}

/// The built-in `sum` of type `t`.
unsafe fn catalog_sum(t: pg_sys::Oid) -> Option<pg_sys::Oid> {
    // SAFETY: a catalog lookup.
    unsafe {
        let f = pg_sys::LookupFuncName(crate::pg::compat::qualified_name_list(c"pg_catalog.sum".as_ptr()), 1, &t, true);
        (f != pg_sys::InvalidOid).then_some(f)
    }
}

/// Aggregate `a` combined (`how`) from the sub-query's partial columns
/// `cols`; with `single`, over the one partial row of its group.
unsafe fn combination(
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

/// The outer query's expression `node` reading the sub-query: each
/// aggregate its combination, each column of the set its key.
unsafe extern "C-unwind" fn outer_mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    // SAFETY: an expression node of our copy; ctx is an Outer.
    unsafe {
        if node.is_null() {
            return node;
        }
        let c = &mut *(ctx as *mut Outer);
        match (*node).type_ {
            pg_sys::NodeTag::T_Aggref => {
                return match c.combined.iter().find(|&&(a, _)| std::ptr::eq(a.cast(), node)) {
                    Some(&(_, e)) => pg_sys::copyObjectImpl(e.cast()).cast(),
                    None => {
                        c.failed = true;
                        node
                    }
                };
            }
            pg_sys::NodeTag::T_Var => {
                let v = node as *mut pg_sys::Var;
                if (*v).varlevelsup != 0 || !c.set.contains(&(*v).varno) {
                    return pg_sys::copyObjectImpl(node.cast()).cast();
                }
                return match c.keys.iter().position(|k| k.varno == (*v).varno && k.varattno == (*v).varattno) {
                    Some(i) => pg_sys::makeVar(
                        c.sub,
                        (i + 1) as pg_sys::AttrNumber,
                        (*v).vartype,
                        (*v).vartypmod,
                        (*v).varcollid,
                        0,
                    )
                    .cast(),
                    None => {
                        c.failed = true;
                        node
                    }
                };
            }
            _ => {}
        }
        crate::pg::compat::mutate(node, outer_mutator, ctx)
    }
}
