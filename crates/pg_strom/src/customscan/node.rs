//! The life of a device node's executor state, shared by GpuScan, GpuJoin
//! and GpuPreAgg: one generic implementation of PostgreSQL's
//! CustomExecMethods that each node plugs into by implementing
//! [`DeviceNode`].
//!
//! - The node PostgreSQL sees is a [`NodeState`]: its CustomScanState and
//!   a pointer to the Rust state, a `Box<T>` made at BeginCustomScan and
//!   freed by a reset callback on the query's memory context (so an ERROR
//!   anywhere frees it too) or at EndCustomScan, whichever comes first.
//! - Parallel plans: the DSM area starts with the node's
//!   [`SharedCounters`], then the node's own part at [`DSM_HEAD`]
//!   ([`DeviceNode::shared_size`] bytes: GpuJoin's shared inner build),
//!   then whatever its [`Source`] needs (a parallel table scan descriptor,
//!   an Arrow batch counter).  The leader copies the sums of every process
//!   at ShutdownCustomScan, before the area goes.
//! - Custom children (`custom_ps`, GpuJoin's inner plans) are ended with
//!   the node.

use std::ffi::CStr;

use pgrx::pg_guard;
use pgrx::pg_sys;

use pgstrom_runtime::Engine;
use pgstrom_runtime::placement::Preference;

use crate::customscan::counters::{Counters, SharedCounters};
use crate::engine;
use crate::pg::list::from_list;
use crate::pg::memctx;
use crate::source::Source;

/// Where the node's own part of the DSM area starts.
pub const DSM_HEAD: usize = std::mem::size_of::<SharedCounters>().next_multiple_of(64);

/// Where the source's part of the DSM area of `st` starts.
fn source_offset<T: DeviceNode>(st: &T) -> usize {
    DSM_HEAD + st.shared_size().next_multiple_of(64)
}

/// A device node's executor state.
pub trait DeviceNode: Sized + 'static {
    /// BeginCustomScan: the state of `node`, whose plan is this node's
    /// CustomScan.
    ///
    /// # Safety
    /// Executor start; the arguments are BeginCustomScan's.
    unsafe fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32) -> Self;

    /// ExecCustomScan: the next row, or an empty slot at the end.
    ///
    /// # Safety
    /// `node` is a live [`NodeState<Self>`].
    unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot;

    /// EndCustomScan: release what the state holds outside Rust (its
    /// source, slots, engine sessions); the state is freed after.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn end(&mut self, node: *mut pg_sys::CustomScanState);

    /// ReScanCustomScan.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState);

    /// ExplainCustomScan: the node's own EXPLAIN fields.
    ///
    /// # Safety
    /// `node` is this state's node, `es` a valid ExplainState.
    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    );

    /// The table the node reads chunk by chunk.
    fn source(&mut self) -> &mut Source;

    /// The node's engine and counters.
    fn device(&mut self) -> &mut DeviceState;

    /// Bytes of the node's own part of a parallel plan's DSM area (the
    /// same in every process: it depends on the plan only); 0: none.
    fn shared_size(&self) -> usize {
        0
    }

    /// Lay out the node's part (InitializeDSM, in the leader); attaching
    /// follows.  `seg` is the parallel context's DSM segment (NULL where
    /// PostgreSQL made none: then no worker runs).
    ///
    /// # Safety
    /// `area` has [`Self::shared_size`] bytes.
    unsafe fn shared_init(&mut self, area: *mut u8, seg: *mut pg_sys::dsm_segment) {
        let _ = (area, seg);
    }

    /// Reset the node's part for a rescan (ReInitializeDSM, in the leader,
    /// no worker running).
    ///
    /// # Safety
    /// `area` is the part [`Self::shared_init`] laid out.
    unsafe fn shared_reinit(&mut self, area: *mut u8) {
        let _ = area;
    }

    /// Use the node's part (the leader after InitializeDSM, a worker at
    /// InitializeWorker); `dsa` is the query's DSA area (or NULL).
    ///
    /// # Safety
    /// `area` is the laid-out part, alive until [`Self::shared_detach`].
    unsafe fn shared_attach(&mut self, area: *mut u8, dsa: *mut pg_sys::dsa_area) {
        let _ = (area, dsa);
    }

    /// The area goes (ShutdownCustomScan): keep what EXPLAIN needs of it.
    fn shared_detach(&mut self) {}

    /// At ShutdownCustomScan, in every process, before the sums are read:
    /// count what the node still holds uncounted (the engine's clock).
    fn finish_counters(&mut self) {}
}

/// What every device node keeps about its engine and its counts.
pub struct DeviceState {
    /// The engine, chosen at first use ([`Self::engine_of`]).
    pub engine: Option<&'static dyn Engine>,
    /// The GPUs the engine was chosen among, with several GPUs.
    pub candidates: Option<Preference>,
    /// This process's counters.
    pub counters: Counters,
    /// The DSM area's counters (NULL outside a parallel plan).
    shared: *mut SharedCounters,
}

impl Default for DeviceState {
    fn default() -> DeviceState {
        DeviceState { engine: None, candidates: None, counters: Counters::default(), shared: std::ptr::null_mut() }
    }
}

impl DeviceState {
    /// The node's engine, chosen on first use among the GPUs the storage
    /// of `source` prefers (when there are several).
    pub fn engine_of(&mut self, source: &Source) -> &'static dyn Engine {
        // SAFETY: shared is NULL or the DSM area, alive during the scan.
        let shared = unsafe { self.shared.as_ref() }.map(|s| &s.gpus);
        engine::engine_of_scan(
            &mut self.engine,
            &|| source.storage_refs(),
            &mut self.candidates,
            &mut self.counters.gpus,
            shared,
        )
    }

    /// Count `c`, in this process and (in a parallel plan) in the sums.
    pub fn add_counters(&mut self, c: Counters) {
        self.counters.add(&c);
        // SAFETY: shared is NULL or the DSM area, alive during the scan.
        if let Some(s) = unsafe { self.shared.as_ref() } {
            s.add(&c);
        }
    }
}

/// The node PostgreSQL sees: a CustomScanState with the Rust state after it.
#[repr(C)]
pub struct NodeState<T> {
    css: pg_sys::CustomScanState,
    exec: *mut T,
    /// The scan slot's type (PostgreSQL 15 makes a virtual one first:
    /// `compat::scan_slot_after_init`).
    slot_ops: *const pg_sys::TupleTableSlotOps,
}

/// The Rust state of a node, if still alive.
///
/// # Safety
/// `node` is a [`NodeState<T>`] made by [`create`].
pub unsafe fn state_of<'a, T>(node: *mut pg_sys::CustomScanState) -> Option<&'a mut T> {
    // SAFETY: node is a NodeState<T> (caller); exec is NULL or a live Box.
    unsafe { (*(node as *mut NodeState<T>)).exec.as_mut() }
}

/// The CustomExecMethods of a node whose state is `T`.
pub const fn exec_methods<T: DeviceNode>(name: &'static CStr) -> pg_sys::CustomExecMethods {
    pg_sys::CustomExecMethods {
        CustomName: name.as_ptr(),
        BeginCustomScan: Some(begin::<T>),
        ExecCustomScan: Some(exec::<T>),
        EndCustomScan: Some(end::<T>),
        ReScanCustomScan: Some(rescan::<T>),
        MarkPosCustomScan: None,
        RestrPosCustomScan: None,
        EstimateDSMCustomScan: Some(estimate_dsm::<T>),
        InitializeDSMCustomScan: Some(initialize_dsm::<T>),
        ReInitializeDSMCustomScan: Some(reinitialize_dsm::<T>),
        InitializeWorkerCustomScan: Some(initialize_worker::<T>),
        ShutdownCustomScan: Some(shutdown::<T>),
        ExplainCustomScan: Some(explain::<T>),
    }
}

/// CreateCustomScanState: a zeroed [`NodeState<T>`] with `methods`.
///
/// # Safety
/// Planner/executor context; `methods` and `slot_ops` live for the process.
pub unsafe fn create<T>(
    methods: *const pg_sys::CustomExecMethods,
    slot_ops: *const pg_sys::TupleTableSlotOps,
) -> *mut pg_sys::Node {
    // SAFETY: palloc0 of our node; the executor fills the standard fields.
    unsafe {
        let node = pg_sys::palloc0(std::mem::size_of::<NodeState<T>>()) as *mut NodeState<T>;
        (*node).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*node).css.methods = methods;
        crate::pg::compat::set_custom_slot_ops(&raw mut (*node).css, slot_ops);
        (*node).slot_ops = slot_ops;
        node.cast()
    }
}

/// Frees the Rust state when the query's memory goes (normal end or ERROR).
#[pg_guard]
unsafe extern "C-unwind" fn free_state<T>(arg: *mut std::ffi::c_void) {
    // SAFETY: arg is the node; its exec pointer is a Box or NULL.
    unsafe {
        let node = arg as *mut NodeState<T>;
        if !(*node).exec.is_null() {
            drop(Box::from_raw((*node).exec));
            (*node).exec = std::ptr::null_mut();
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) {
    // SAFETY: executor callback for a node made by create::<T>.
    unsafe {
        let gnode = node as *mut NodeState<T>;
        crate::pg::compat::scan_slot_after_init(node, estate, (*gnode).slot_ops);
        let state = Box::new(T::begin(node, estate, eflags));
        (*gnode).exec = Box::into_raw(state);
        memctx::on_reset((*estate).es_query_cxt, free_state::<T>, gnode.cast());
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn exec<T: DeviceNode>(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback for our node.
    unsafe { T::exec(node) }
}

#[pg_guard]
unsafe extern "C-unwind" fn end<T: DeviceNode>(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback; resources released once (EXPLAIN ANALYZE
    // has printed the counters before the executor ends).
    unsafe {
        if let Some(st) = state_of::<T>(node) {
            pg_sys::ExecClearTuple((*node).ss.ss_ScanTupleSlot);
            st.end(node);
        }
        for child in from_list((*node).custom_ps) {
            pg_sys::ExecEndNode(child.cast());
        }
        free_state::<T>(node.cast());
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: EXPLAIN callback with our node and a valid ExplainState.
    unsafe {
        if let Some(st) = state_of::<T>(node) {
            st.explain(node, ancestors, es);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan<T: DeviceNode>(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback for our node.
    unsafe {
        if let Some(st) = state_of::<T>(node) {
            pg_sys::ExecClearTuple((*node).ss.ss_ScanTupleSlot);
            st.rescan(node);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn estimate_dsm<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
) -> usize {
    // SAFETY: executor callback for our node.
    unsafe {
        state_of::<T>(node).map_or(DSM_HEAD, |st| {
            let at = source_offset(st);
            st.source().dsm_size(node, at)
        })
    }
}

/// Point the node at the coordination area and begin the parallel scan.
///
/// # Safety
/// `coordinate` is the node's DSM area, laid out by initialize_dsm.
unsafe fn attach_shared<T: DeviceNode>(node: *mut pg_sys::CustomScanState, coordinate: *mut std::ffi::c_void) {
    // SAFETY: caller's promise; the counters are at the area's head.
    unsafe {
        let Some(st) = state_of::<T>(node) else { return };
        st.device().shared = coordinate.cast();
        let dsa = (*(*node).ss.ps.state).es_query_dsa;
        st.shared_attach((coordinate as *mut u8).add(DSM_HEAD), dsa);
        let at = source_offset(st);
        st.source().dsm_attach(coordinate, at);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_dsm<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: coordinate has estimate_dsm's size.
    unsafe {
        if let Some(st) = state_of::<T>(node) {
            // the source zeroes everything before its part: the node's
            // part is laid out after
            let at = source_offset(st);
            st.source().dsm_initialize(node, coordinate, at);
            st.shared_init((coordinate as *mut u8).add(DSM_HEAD), (*pcxt).seg);
        }
        attach_shared::<T>(node, coordinate);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn reinitialize_dsm<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: the area initialize_dsm laid out.
    unsafe {
        if let Some(st) = state_of::<T>(node) {
            st.shared_reinit((coordinate as *mut u8).add(DSM_HEAD));
            let at = source_offset(st);
            st.source().dsm_reinitialize(node, coordinate, at);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_worker<T: DeviceNode>(
    node: *mut pg_sys::CustomScanState,
    _toc: *mut pg_sys::shm_toc,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: the leader's area.
    unsafe { attach_shared::<T>(node, coordinate) }
}

/// Before the DSM goes away: the leader keeps the sums of every process.
#[pg_guard]
unsafe extern "C-unwind" fn shutdown<T: DeviceNode>(node: *mut pg_sys::CustomScanState) {
    // SAFETY: executor callback; shared is NULL or the still-mapped area.
    unsafe {
        let Some(st) = state_of::<T>(node) else { return };
        st.finish_counters();
        st.source().dsm_detach();
        st.shared_detach();
        let dev = st.device();
        let shared = std::mem::replace(&mut dev.shared, std::ptr::null_mut());
        if pg_sys::ParallelWorkerNumber >= 0 {
            return;
        }
        if let Some(s) = shared.as_ref() {
            s.load_into(&mut dev.counters);
        }
    }
}

/// The statics and entry points of a node whose executor state is
/// `$state` (a [`DeviceNode`]), in the module that invokes it:
/// `EXEC_METHODS`, `state_of(node)`,
/// and `create_scan_state`, the CreateCustomScanState callback, whose
/// scan slots have the ops `pg_sys::$slot_ops`.
macro_rules! device_node {
    ($state:ty, $name:expr, $slot_ops:ident) => {
        static mut EXEC_METHODS: pgrx::pg_sys::CustomExecMethods =
            $crate::customscan::node::exec_methods::<$state>($name);

        /// The Rust state of a node, if it is still alive.
        ///
        /// # Safety
        /// `node` is a node made by [`create_scan_state`].
        pub unsafe fn state_of<'a>(node: *mut pgrx::pg_sys::CustomScanState) -> Option<&'a mut $state> {
            // SAFETY: caller's promise.
            unsafe { $crate::customscan::node::state_of::<$state>(node) }
        }

        /// CreateCustomScanState: allocate the node.
        ///
        /// # Safety
        /// Called by PostgreSQL's executor, for a plan of this node.
        #[pgrx::pg_guard]
        pub unsafe extern "C-unwind" fn create_scan_state(
            _cscan: *mut pgrx::pg_sys::CustomScan,
        ) -> *mut pgrx::pg_sys::Node {
            // SAFETY: the methods and slot ops are statics.
            unsafe {
                $crate::customscan::node::create::<$state>(&raw const EXEC_METHODS, &raw const pgrx::pg_sys::$slot_ops)
            }
        }
    };
}
pub(crate) use device_node;

/// A node's CustomPathMethods and CustomScanMethods, in the module that
/// invokes it: `PATH_METHODS` (PlanCustomPath `$plan`), `SCAN_METHODS`
/// (CreateCustomScanState `$create`), `path_methods()` (also how the
/// node's paths are recognised) and `register_methods()` (by name, for
/// parallel workers; called once from `_PG_init`).
macro_rules! plan_methods {
    ($name:expr, $plan:path, $create:path) => {
        static mut PATH_METHODS: pgrx::pg_sys::CustomPathMethods = pgrx::pg_sys::CustomPathMethods {
            CustomName: $name.as_ptr(),
            PlanCustomPath: Some($plan),
            ReparameterizeCustomPathByChild: None,
        };

        static mut SCAN_METHODS: pgrx::pg_sys::CustomScanMethods =
            pgrx::pg_sys::CustomScanMethods { CustomName: $name.as_ptr(), CreateCustomScanState: Some($create) };

        /// The path methods (PlanCustomPath); also how the node's paths are
        /// recognised.
        pub fn path_methods() -> *const pgrx::pg_sys::CustomPathMethods {
            &raw const PATH_METHODS
        }

        /// Register the scan methods by name, for parallel workers.
        pub fn register_methods() {
            // SAFETY: _PG_init, once; the methods live for the process.
            unsafe { pgrx::pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS) };
        }
    };
}
pub(crate) use plan_methods;
