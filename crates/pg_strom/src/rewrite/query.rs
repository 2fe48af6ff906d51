//! Pieces of Query trees both rewrites build or test: a type's grouping
//! operators and the GROUP BY clause made of them, range table references
//! and sub-query entries, the name of a plain built-in aggregate, and the
//! walk over a query's SELECT levels.

use pgrx::pg_sys;

use crate::pg::list::from_list;

/// How values of a type are grouped: its default equality, and the sort
/// operator and hashability PostgreSQL's grouping uses.
#[derive(Clone, Copy)]
pub(super) struct Grouping {
    pub eqop: pg_sys::Oid,
    pub sortop: pg_sys::Oid,
    pub hashable: bool,
}

/// The grouping operators of type `t`; None where its values cannot be
/// grouped (no equality, or neither sortable nor hashable).
///
/// # Safety
/// Backend (catalog lookups).
pub(super) unsafe fn grouping_of(t: pg_sys::Oid) -> Option<Grouping> {
    let (mut sortop, mut eqop, mut hashable) = (pg_sys::InvalidOid, pg_sys::InvalidOid, false);
    // SAFETY: caller's promise; the outputs are ours.
    unsafe {
        pg_sys::get_sort_group_operators(
            t,
            false,
            false,
            false,
            &mut sortop,
            &mut eqop,
            std::ptr::null_mut(),
            &mut hashable,
        );
    }
    (eqop != pg_sys::InvalidOid && (sortop != pg_sys::InvalidOid || hashable)).then_some(Grouping {
        eqop,
        sortop,
        hashable,
    })
}

/// A GROUP BY clause for the target entry of `sortgroupref`, by `g`.
///
/// # Safety
/// Backend (allocates in the current memory context).
pub(super) unsafe fn group_clause(sortgroupref: usize, g: Grouping) -> *mut pg_sys::Node {
    // SAFETY: a new node of ours.
    unsafe {
        let sgc = pg_sys::palloc0(std::mem::size_of::<pg_sys::SortGroupClause>()) as *mut pg_sys::SortGroupClause;
        (*sgc).type_ = pg_sys::NodeTag::T_SortGroupClause;
        (*sgc).tleSortGroupRef = sortgroupref as pg_sys::Index;
        (*sgc).eqop = g.eqop;
        (*sgc).sortop = g.sortop;
        (*sgc).nulls_first = false;
        (*sgc).hashable = g.hashable;
        sgc.cast()
    }
}

/// A target entry of a query tree we make: `expr` as column `resno`,
/// named `name`.
///
/// # Safety
/// Backend (allocates in the current memory context); `expr` a valid
/// expression.
pub(super) unsafe fn target_entry(expr: *mut pg_sys::Node, resno: usize, name: &str) -> *mut pg_sys::TargetEntry {
    let name = std::ffi::CString::new(name).expect("no NUL");
    // SAFETY: caller's promise; the name is copied into palloc'd memory.
    unsafe { pg_sys::makeTargetEntry(expr.cast(), resno as pg_sys::AttrNumber, pg_sys::pstrdup(name.as_ptr()), false) }
}

/// A reference to range table entry `rtindex` (a FROM list item).
///
/// # Safety
/// Backend (allocates in the current memory context).
pub(super) unsafe fn range_tbl_ref(rtindex: i32) -> *mut pg_sys::Node {
    // SAFETY: a new node of ours.
    unsafe {
        let rtr = pg_sys::palloc0(std::mem::size_of::<pg_sys::RangeTblRef>()) as *mut pg_sys::RangeTblRef;
        (*rtr).type_ = pg_sys::NodeTag::T_RangeTblRef;
        (*rtr).rtindex = rtindex;
        rtr.cast()
    }
}

/// Sub-query `sq` added to `q`'s range table as `alias` (not to its FROM
/// list); its range table index.
///
/// # Safety
/// Valid Query trees of ours.
pub(super) unsafe fn add_subquery(q: *mut pg_sys::Query, sq: *mut pg_sys::Query, alias: &std::ffi::CStr) -> i32 {
    // SAFETY: caller's promise; the parse state is ours and freed here.
    unsafe {
        let ps = pg_sys::make_parsestate(std::ptr::null_mut());
        (*ps).p_rtable = (*q).rtable;
        let alias = pg_sys::makeAlias(alias.as_ptr(), std::ptr::null_mut());
        pg_sys::addRangeTableEntryForSubquery(ps, sq, alias, false, true);
        (*q).rtable = (*ps).p_rtable;
        pg_sys::free_parsestate(ps);
        pg_sys::list_length((*q).rtable)
    }
}

/// The name of aggregate `a` where it is a plain one (not ordered-set,
/// not variadic) of this query level, built in (`pg_catalog`); None
/// otherwise.
///
/// # Safety
/// A valid Aggref; backend (catalog lookups).
pub(super) unsafe fn builtin_aggregate_name(a: *mut pg_sys::Aggref) -> Option<Vec<u8>> {
    // SAFETY: caller's promise.
    unsafe {
        if (*a).agglevelsup != 0
            || (*a).aggkind != b'n' as std::ffi::c_char
            || (*a).aggvariadic
            || !(*a).aggdirectargs.is_null()
            || pg_sys::get_func_namespace((*a).aggfnoid) != pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE)
        {
            return None;
        }
        let name = pg_sys::get_func_name((*a).aggfnoid);
        (!name.is_null()).then(|| std::ffi::CStr::from_ptr(name).to_bytes().to_vec())
    }
}

/// The unique keys of table `relid` whose columns are all NOT NULL (a
/// primary key, a unique index without predicate or expressions, not
/// deferrable): the columns of each.
pub(super) unsafe fn unique_keys(relid: pg_sys::Oid) -> Vec<Vec<i16>> {
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
                    .all(|&c| c > 0 && crate::pg::compat::attribute_proven_not_null((*rel).rd_att, c as i32 - 1));
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

/// The rows of table `relid` by its statistics (`reltuples`; 0 where
/// never analyzed).
///
/// # Safety
/// Backend (a syscache lookup).
pub(super) unsafe fn rel_tuples_of(relid: pg_sys::Oid) -> f64 {
    // SAFETY: caller's promise.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as i32, pg_sys::Datum::from(relid));
        if tup.is_null() {
            return 0.0;
        }
        let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_class>(tup);
        let n = (*form).reltuples as f64;
        pg_sys::ReleaseSysCache(tup);
        n.max(0.0)
    }
}

/// The distinct values of column `attno` of table `relid` by ANALYZE's
/// statistics (of the inheritance tree with `inh` where it has them: a
/// range table entry of a plain table says `inh` too); None where there
/// are none.
///
/// # Safety
/// Backend (syscache lookups).
unsafe fn column_distinct(relid: pg_sys::Oid, attno: i16, inh: bool) -> Option<f64> {
    // SAFETY: caller's promise.
    unsafe {
        let lookup = |inh: bool| {
            pg_sys::SearchSysCache3(
                pg_sys::SysCacheIdentifier::STATRELATTINH as i32,
                pg_sys::Datum::from(relid),
                pg_sys::Datum::from(attno),
                pg_sys::Datum::from(inh),
            )
        };
        let mut tup = lookup(inh);
        if tup.is_null() && inh {
            tup = lookup(false);
        }
        if tup.is_null() {
            return None;
        }
        let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_statistic>(tup);
        let d = (*form).stadistinct as f64;
        pg_sys::ReleaseSysCache(tup);
        if d > 0.0 {
            Some(d)
        } else if d < 0.0 {
            Some(-d * rel_tuples_of(relid))
        } else {
            None
        }
    }
}

/// Whether grouping by column `attno` of table `relid` (`inh`: with its
/// inheritance tree), which the query equates with column `unique_attno`
/// of table `unique_relid`, may form far more groups than PostgreSQL
/// expects: that column is a unique key of its table, whose rows are
/// more than twice the distinct values ANALYZE counted in `attno`.  A
/// foreign key stored in its referenced key's order (`l_orderkey`, each
/// value in a few neighbouring rows) is counted from a sample of whole
/// blocks: TPC-H's `l_orderkey` at SF 1 shows 381,984 distinct values of
/// 1.5 million, at SF 10 about 400,000 of 15 million, and a plan grouping
/// `lineitem` by it before the join with `orders` ran 14 times slower
/// than PostgreSQL's (SF 10, H100 machine).
///
/// # Safety
/// Backend (catalog lookups; the tables are locked by the query).
pub(super) unsafe fn distinct_underestimated(
    relid: pg_sys::Oid,
    attno: i16,
    inh: bool,
    unique_relid: pg_sys::Oid,
    unique_attno: i16,
) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        if relid == unique_relid && attno == unique_attno {
            return false;
        }
        if !unique_keys(unique_relid).iter().any(|cols| cols.as_slice() == [unique_attno]) {
            return false;
        }
        let Some(counted) = column_distinct(relid, attno, inh) else { return false };
        rel_tuples_of(unique_relid) > 2.0 * counted
    }
}

/// The aggregates (Aggref) and GROUPING() calls of expression `node` at
/// its own level, in the order a walk meets them (not inside them).
///
/// # Safety
/// A valid expression (or NULL).
pub(super) unsafe fn aggregates_of(node: *mut pg_sys::Node) -> Vec<*mut pg_sys::Node> {
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the Vec below.
        unsafe {
            if node.is_null() {
                return false;
            }
            if matches!((*node).type_, pg_sys::NodeTag::T_Aggref | pg_sys::NodeTag::T_GroupingFunc) {
                (*(ctx as *mut Vec<*mut pg_sys::Node>)).push(node);
                return false;
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    let mut out: Vec<*mut pg_sys::Node> = Vec::new();
    // SAFETY: caller's promise.
    unsafe { walker(node, (&mut out as *mut Vec<*mut pg_sys::Node>).cast()) };
    out
}

/// Call `f` on each SELECT level of `q` that has a WHERE clause and is not
/// a set operation (the levels whose WHERE conjuncts the rewrites that
/// change one level in place look at), nested ones first: the queries in
/// its FROM clause, in its non-recursive WITH clause and in the sub-links
/// of its WHERE clause, then `q` itself (a level's own sub-queries are
/// done before it).  Levels that are not a plain SELECT (a utility
/// statement, a data-modifying query) and their nested queries are
/// skipped; a set operation's branches, which are sub-queries in its
/// FROM list, are visited.
///
/// # Safety
/// A valid Query (or NULL); `f` may change the level it is given.
pub(super) unsafe fn each_where_level(q: *mut pg_sys::Query, f: &mut dyn FnMut(*mut pg_sys::Query)) {
    // SAFETY: a valid Query.
    unsafe {
        if q.is_null() || (*q).commandType != pg_sys::CmdType::CMD_SELECT || !(*q).utilityStmt.is_null() {
            return;
        }
        for rte in from_list((*q).rtable) {
            let rte = rte as *mut pg_sys::RangeTblEntry;
            if (*rte).rtekind == pg_sys::RTEKind::RTE_SUBQUERY {
                each_where_level((*rte).subquery, f);
            }
        }
        for cte in from_list((*q).cteList) {
            let cte = cte as *mut pg_sys::CommonTableExpr;
            if !(*cte).cterecursive
                && !(*cte).ctequery.is_null()
                && (*(*cte).ctequery).type_ == pg_sys::NodeTag::T_Query
            {
                each_where_level((*cte).ctequery.cast(), f);
            }
        }
        if !(*q).jointree.is_null() && !(*(*q).jointree).quals.is_null() {
            for s in sublinks_of((*(*q).jointree).quals) {
                each_where_level((*s).subselect.cast(), f);
            }
            if (*q).setOperations.is_null() {
                f(q);
            }
        }
    }
}

/// The sub-links of `node`, not those inside their sub-queries.
///
/// # Safety
/// A valid expression (or NULL).
pub(super) unsafe fn sublinks_of(node: *mut pg_sys::Node) -> Vec<*mut pg_sys::SubLink> {
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the Vec below.
        unsafe {
            if node.is_null() {
                return false;
            }
            if (*node).type_ == pg_sys::NodeTag::T_SubLink {
                let out = &mut *(ctx as *mut Vec<*mut pg_sys::SubLink>);
                out.push(node.cast());
                // its test expression may hold more
                return walker((*(node as *mut pg_sys::SubLink)).testexpr, ctx);
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    let mut out: Vec<*mut pg_sys::SubLink> = Vec::new();
    // SAFETY: a valid expression.
    unsafe { walker(node, (&mut out as *mut Vec<*mut pg_sys::SubLink>).cast()) };
    out
}

/// Whether expression `node` holds a sub-link.
///
/// # Safety
/// A valid expression (or NULL).
pub(super) unsafe fn has_sublink(node: *mut pg_sys::Node) -> bool {
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node.
        unsafe {
            !node.is_null()
                && ((*node).type_ == pg_sys::NodeTag::T_SubLink || crate::pg::compat::walk(node, walker, ctx))
        }
    }
    // SAFETY: caller's promise.
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// Whether `q` is one plain aggregating SELECT level, as every rewrite
/// needs: aggregates, no set operation, grouping sets, window functions,
/// set-returning functions in the target list, row locks, row security or
/// data-modifying WITH; each rewrite adds its own conditions.
///
/// # Safety
/// A valid Query.
pub(super) unsafe fn plain_aggregation(q: *mut pg_sys::Query) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        (*q).commandType == pg_sys::CmdType::CMD_SELECT
            && (*q).utilityStmt.is_null()
            && (*q).setOperations.is_null()
            && (*q).hasAggs
            && !(*q).hasWindowFuncs
            && !(*q).hasTargetSRFs
            && (*q).groupingSets.is_null()
            && (*q).rowMarks.is_null()
            && !(*q).hasForUpdate
            && !(*q).hasRowSecurity
            && !(*q).hasModifyingCTE
            && !(*q).jointree.is_null()
    }
}
