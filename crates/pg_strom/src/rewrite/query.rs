//! Pieces of Query trees both rewrites build or test: a type's grouping
//! operators and the GROUP BY clause made of them, range table references
//! and sub-query entries, and the name of a plain built-in aggregate.

use pgrx::pg_sys;

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
