//! The inner relations the GpuJoin (and GpuPreAgg) nodes of one query
//! share.  A join over partitions (`gpujoin::partitions`) plans a node
//! per partition, each with the same inner plans; the first node of the
//! query to read them keeps its rows here, and each later node with the
//! same inner plans takes those rows instead of running its own plans
//! (pointers to the first node's tuples, which live in its inner memory
//! until the query ends) and opens its session over the build an earlier
//! node left in the same engine (`Engine::join_attach`): the inner
//! relations are read once per query and loaded once per engine (a node
//! on another GPU loads them there once, for the nodes after it).
//!
//! Shared only where the rows cannot differ between the nodes: nodes of
//! no parallel plan (a parallel plan has its own shared build,
//! `gpujoin::shared_build`), whose inner plans are single scans (of a
//! table, by an index, of a foreign table, a GpuScan) without parameters
//! (no initplan, no parameter they depend on: such plans are read once
//! and never again) and without volatile functions, equal as plan text
//! but for their node numbers; the query's snapshot is the same for all
//! of its nodes.  An
//! entry goes when the first node's inner memory is reset or deleted.
//! `pg_strom.shared_inner_tables = off` shares nothing.

use pgrx::pg_sys;
use pgstrom_runtime::Engine;

use super::{GpuJoinExec, InnerRows};
use crate::guc;

/// One query's inner rows, as the first node read them.
struct Entry {
    /// The query (its executor state's memory context).
    query: usize,
    /// The inner plans (text without node numbers) and columns.
    key: String,
    /// The first node's inner memory, which holds the tuples.
    cxt: usize,
    /// Per depth, the rows (minimal tuples in `cxt`).
    tuples: Vec<Vec<usize>>,
    /// The inner relations' bytes in an engine, once the first node
    /// counted them.
    bytes: Option<usize>,
    /// The builds the query's nodes opened to share: (engine, share key).
    builds: Vec<(usize, u64)>,
    /// The later nodes that took the rows.
    takers: usize,
}

thread_local! {
    static ENTRIES: std::cell::RefCell<Vec<Entry>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What a node is to its query's shared inner rows (EXPLAIN ANALYZE's
/// `Inner Build`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Role {
    /// Not shared.
    #[default]
    None,
    /// The first: it read the rows, and keeps them for the others.
    First,
    /// A later node: it took the first node's rows (and, `attached`, an
    /// earlier node's build in its engine).
    Later { attached: bool },
}

/// `f` over the entry of query `query` under `key`; None when there is
/// none.
fn with_entry<R>(query: usize, key: &str, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
    ENTRIES.with(|e| e.borrow_mut().iter_mut().find(|x| x.query == query && x.key == key).map(f))
}

/// An engine's identity among the builds.
fn engine_id(eng: &'static dyn Engine) -> usize {
    eng as *const dyn Engine as *const () as usize
}

/// Reset or delete callback of the first node's inner memory: its rows
/// are gone.
unsafe extern "C-unwind" fn forget_rows(arg: *mut std::ffi::c_void) {
    let cxt = arg as usize;
    // (try_with: never a panic inside PostgreSQL's memory manager)
    let _ = ENTRIES.try_with(|e| e.borrow_mut().retain(|x| x.cxt != cxt));
}

/// `plan` as text without its node number.
///
/// # Safety
/// A valid plan node.
unsafe fn plan_text(plan: *mut pg_sys::Plan) -> String {
    // SAFETY: caller's promise; nodeToString pallocs the text.
    let text = unsafe {
        let s = pg_sys::nodeToString(plan.cast());
        let t = std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned();
        pg_sys::pfree(s.cast());
        t
    };
    // (":plan_node_id 3", or as 18 writes a scan's ":scan.plan.plan_node_id 3")
    const ID: &str = "plan_node_id ";
    match text.find(ID) {
        Some(at) => {
            let rest = &text[at + ID.len()..];
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            format!("{}{}", &text[..at], &rest[digits..])
        }
        None => text,
    }
}

impl GpuJoinExec {
    /// The key of this node's inner plans `children` among the query's
    /// shared rows, or None when they may not be shared.
    ///
    /// # Safety
    /// `children` are the node's live inner plans.
    unsafe fn query_key(&self, children: &[*mut pg_sys::PlanState]) -> Option<String> {
        if !guc::SHARED_INNER_TABLES.get() || !self.shared.is_null() {
            return None;
        }
        let mut key = String::new();
        for (d, &child) in children.iter().enumerate() {
            // SAFETY: caller's promise.
            unsafe {
                let plan = (*child).plan;
                if !(*plan).lefttree.is_null()
                    || !(*plan).righttree.is_null()
                    || !(*plan).initPlan.is_null()
                    || !(*plan).allParam.is_null()
                    || !(*plan).extParam.is_null()
                    || (*plan).parallel_aware
                {
                    return None;
                }
                // scans that give the same rows each time under one
                // snapshot: no sampling, no volatile function (PostgreSQL
                // would call it again for another scan)
                let exprs: Vec<*mut pg_sys::Node> = match (*plan).type_ {
                    pg_sys::NodeTag::T_SeqScan | pg_sys::NodeTag::T_IndexScan | pg_sys::NodeTag::T_IndexOnlyScan => {
                        Vec::new()
                    }
                    pg_sys::NodeTag::T_ForeignScan => vec![(*(plan as *mut pg_sys::ForeignScan)).fdw_exprs.cast()],
                    pg_sys::NodeTag::T_CustomScan => {
                        let c = plan as *mut pg_sys::CustomScan;
                        if !(*c).custom_plans.is_null() {
                            return None;
                        }
                        vec![(*c).custom_exprs.cast()]
                    }
                    _ => return None,
                };
                if [(*plan).targetlist.cast(), (*plan).qual.cast()]
                    .into_iter()
                    .chain(exprs)
                    .any(|e: *mut pg_sys::Node| !e.is_null() && pg_sys::contain_volatile_functions(e))
                {
                    return None;
                }
                key.push_str(&format!("depth {d} columns {:?}\n", self.info.depths[d].inner_columns));
                key.push_str(&plan_text(plan));
                key.push('\n');
            }
        }
        Some(key)
    }

    /// A node of no parallel plan, before it reads its inner plans: take
    /// the rows an earlier node of the query read from the same plans;
    /// true when `inners` holds them.
    ///
    /// # Safety
    /// `node` is this live node, `children` its inner plans.
    pub(super) unsafe fn inners_from_query(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        children: &[*mut pg_sys::PlanState],
    ) -> bool {
        self.query_role = Role::None;
        self.query_entry = None;
        // SAFETY: caller's promise.
        let Some(key) = (unsafe { self.query_key(children) }) else { return false };
        // SAFETY: a live node's executor state.
        let query = unsafe { (*(*node).ss.ps.state).es_query_cxt } as usize;
        let found = with_entry(query, &key, |x| {
            x.takers += 1;
            x.tuples.clone()
        });
        self.query_entry = Some((query, key));
        let Some(tuples) = found else { return false };
        self.inners = tuples
            .iter()
            .enumerate()
            .map(|(d, rows)| {
                let mut inner = InnerRows::new(&self.info.depths[d].inner_columns, self.inner_slots[d]);
                for &t in rows {
                    inner.add(t as pg_sys::MinimalTuple);
                }
                inner
            })
            .collect();
        self.query_role = Role::Later { attached: false };
        self.cache_outcome = crate::gpujoin::inner_cache::Outcome::SameQuery;
        true
    }

    /// After this node read its inner plans itself: keep the rows for the
    /// query's later nodes with the same plans.
    ///
    /// # Safety
    /// The node's rows are loaded, in its inner memory.
    pub(super) unsafe fn keep_for_query(&mut self) {
        let Some((query, key)) = self.query_entry.clone() else { return };
        if self.query_role != Role::None {
            return;
        }
        let cxt = self.inner_cxt as usize;
        let tuples: Vec<Vec<usize>> =
            self.inners.iter().map(|i| i.tuples.iter().map(|&t| t as usize).collect()).collect();
        if with_entry(query, &key, |_| ()).is_none() {
            ENTRIES.with(|e| {
                e.borrow_mut().push(Entry { query, key, cxt, tuples, bytes: None, builds: Vec::new(), takers: 0 })
            });
            // SAFETY: the node's inner memory, alive; the callback forgets
            // the entry when the rows go.
            unsafe { crate::pg::memctx::on_reset(self.inner_cxt, forget_rows, self.inner_cxt.cast()) };
            self.query_role = Role::First;
        }
    }

    /// The bytes of the inner relations in an engine: as the first node
    /// of the query counted them (a later node makes no columns to count
    /// them), else counted here, and kept for the later nodes.
    pub(super) fn query_bytes(&mut self) -> usize {
        let entry = self.query_entry.clone().filter(|_| self.query_role != Role::None);
        let Some((query, key)) = entry else { return self.inner_load_bytes() };
        let known = with_entry(query, &key, |x| x.bytes).flatten();
        if let Some(b) = known {
            return b;
        }
        let b = self.inner_load_bytes();
        with_entry(query, &key, |x| x.bytes = Some(b));
        b
    }

    /// The share keys of the builds earlier nodes of the query opened in
    /// `eng` over these rows, to attach to (a build serves only nodes
    /// whose device programs are the same: the engine compares them).
    pub(super) fn query_builds(&self, eng: &'static dyn Engine) -> Vec<u64> {
        if !matches!(self.query_role, Role::Later { .. }) {
            return Vec::new();
        }
        let Some((query, key)) = self.query_entry.as_ref() else { return Vec::new() };
        let id = engine_id(eng);
        with_entry(*query, key, |x| x.builds.iter().filter(|b| b.0 == id).map(|b| b.1).collect()).unwrap_or_default()
    }

    /// How many later nodes took the rows this node read (the first).
    pub(crate) fn query_takers(&self) -> usize {
        let Some((query, key)) = self.query_entry.as_ref().filter(|_| self.query_role == Role::First) else {
            return 0;
        };
        with_entry(*query, key, |x| x.takers).unwrap_or(0)
    }

    /// This node attached to an earlier node's build.
    pub(super) fn query_attached(&mut self) {
        self.query_role = Role::Later { attached: true };
    }

    /// The share key this node opens its session in `eng` under, so that
    /// the query's later nodes with the same device programs attach to
    /// its build.
    pub(super) fn query_share(&self) -> Option<u64> {
        if self.query_role == Role::None {
            return None;
        }
        let (query, key) = self.query_entry.as_ref()?;
        // (a few builds at most: one per engine and set of programs)
        with_entry(*query, key, |x| x.builds.len() < 16)?.then(crate::gpujoin::shared_build::new_key)
    }

    /// This node opened its session in `eng` under `share`.
    pub(super) fn query_opened(&self, eng: &'static dyn Engine, share: u64) {
        let Some((query, key)) = self.query_entry.as_ref() else { return };
        with_entry(*query, key, |x| x.builds.push((engine_id(eng), share)));
    }
}
