//! GpuJoin: a heap table scanned in chunks and joined on the device with
//! up to eight inner relations in one node (a star join in one pass).
//!
//! Lifecycle, one file per callback group:
//! - [`path`]: `set_join_pathlist_hook` adds a GpuJoin CustomPath (and a
//!   partial one for parallel plans) for a join whose outer side is a heap
//!   table or another GpuJoin path, when every qual and key compiles.
//! - [`plan`]: PlanCustomPath compiles the device programs against the
//!   inner plans' target lists and builds the scan tuple; the plan's
//!   private state is one [`plan::GpuJoinInfo`].
//! - [`exec`]: the executor pipeline: inner relations loaded into the
//!   engine once, chunks of the outer table joined there, joined rows
//!   formed on the host (GpuPreAgg runs on the same pipeline, its
//!   aggregation in the same device pass); the node's life and parallel
//!   DSM are `crate::customscan::node`'s.
//! - [`partitions`]: the asymmetric partition-wise join: a join of a
//!   partitioned table with plain tables as a GpuJoin per partition under
//!   PostgreSQL's Append.
//! - [`shared_build`]: in a parallel plan, the inner relations read once
//!   for all processes (partial inner plans scanned in shares), through
//!   the node's DSM area and the query's DSA area.
//! - `exec/query_share.rs`: the inner rows and builds the nodes of one
//!   query with the same inner plans share (a join per partition).
//! - [`inner_cache`]: the cross-query cache of inner builds in the GPU
//!   service: when a build may be kept and found again, and its key.
//! - [`explain`]: `Depth N: GpuHashJoin ...`, `JoinQuals`, `Nrows`,
//!   `KDS-Hash` as PG-Strom prints it.

pub mod exec;
pub mod explain;
pub mod inner_cache;
pub mod partitions;
pub mod path;
pub mod plan;
pub mod shared_build;
pub mod shared_matched;

/// The name the plan and EXPLAIN show (`Custom Scan (GpuJoin)`).
pub const NAME: &std::ffi::CStr = c"GpuJoin";

/// Install the planner hook and register the plan methods.  Called from
/// `_PG_init`.
pub fn init() {
    path::install_hook();
    plan::register_methods();
}
