//! PostgreSQL Lists as Rust vectors, and Float nodes (lists that must
//! survive copyObject and nodeToString, such as a CustomPath's private
//! state).

use pgrx::pg_sys;

/// A List built from node pointers.
///
/// # Safety
/// Every pointer is a valid node.
pub unsafe fn to_list(nodes: &[*mut pg_sys::Node]) -> *mut pg_sys::List {
    let mut list: *mut pg_sys::List = std::ptr::null_mut();
    for &n in nodes {
        // SAFETY: appending a valid node pointer to a (possibly NIL) list.
        list = unsafe { pg_sys::lappend(list, n.cast()) };
    }
    list
}

/// Node pointers of a List.
///
/// # Safety
/// `list` is NIL or a valid List of node pointers.
pub unsafe fn from_list(list: *mut pg_sys::List) -> Vec<*mut pg_sys::Node> {
    // SAFETY: valid list (caller).
    unsafe { (0..pg_sys::list_length(list)).map(|i| pg_sys::list_nth(list, i) as *mut pg_sys::Node).collect() }
}

/// The OIDs of an OID List.
///
/// # Safety
/// `list` is NIL or a valid OID List.
pub unsafe fn from_oid_list(list: *mut pg_sys::List) -> Vec<pg_sys::Oid> {
    // SAFETY: valid list (caller): `length` cells of OIDs.
    unsafe {
        if list.is_null() {
            return Vec::new();
        }
        (0..(*list).length as usize).map(|i| (*(*list).elements.add(i)).oid_value).collect()
    }
}

/// A Float node holding `v` (exactly, in scientific notation).
pub fn float_node(v: f64) -> *mut pg_sys::Node {
    let s = std::ffi::CString::new(format!("{v:e}")).expect("no NUL");
    // SAFETY: makeFloat keeps the palloc'd string.
    unsafe { pg_sys::makeFloat(pg_sys::pstrdup(s.as_ptr())).cast() }
}

/// The value of a Float node made by [`float_node`] (0 if unreadable).
///
/// # Safety
/// `n` is a Float node.
pub unsafe fn float_of(n: *mut pg_sys::Node) -> f64 {
    // SAFETY: a Float node (caller); its string is NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr((*(n as *mut pg_sys::Float)).fval).to_string_lossy().parse().unwrap_or(0.0) }
}
