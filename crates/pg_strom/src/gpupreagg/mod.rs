//! GpuPreAgg: GROUP BY and aggregates reduced on the device, in the same
//! node as the scan or join that feeds them (the combined kernel: the
//! joined rows never leave the device; only one partial aggregate per
//! group and chunk comes back), finalized by PostgreSQL's own Finalize
//! Aggregate with the aggregates' own combine and final functions.
//!
//! - [`path`]: `create_upper_paths_hook` at UPPERREL_GROUP_AGG: the partial
//!   grouping target, which aggregates the device reduces, the GpuPreAgg
//!   path over the input relation's scan or GpuJoin (serial, or parallel
//!   under Gather) and the Finalize Aggregate above it.
//! - [`partitions`]: over a partitioned table, a GpuPreAgg per partition
//!   under an Append (the partition-wise GROUP BY).
//! - [`plan`]: its path and scan methods; the plan is GpuJoin's with the
//!   aggregation stage filled in (a scan is a join of no depth).
//! - [`exec`]: the groups as rows, on GpuJoin's executor pipeline.
//! - [`merge`]: a process's partial groups merged across its chunks.
//! - [`exchange`]: a parallel node's partial groups exchanged between the
//!   processes by their keys, each process finalizing its share below the
//!   Gather; [`exchange_node`]: the same exchange over PostgreSQL's own
//!   partial aggregation (`Custom Scan (GroupExchange)`);
//!   [`exchange_rows`]: a grouping that cannot be partial (DISTINCT
//!   aggregates) with its input rows exchanged the same way, each process
//!   aggregating its groups whole.
//! - the group filter: the HAVING clause a serial node evaluates once it
//!   holds every group (compiled by `crate::codegen::having`).
//! - [`spill`]: the group filter's groups written to temporary files when
//!   they outgrow hash_mem.
//! - EXPLAIN: GpuJoin's fields (`crate::gpujoin::explain`), which begin
//!   with how the node reduces (`Reduction`, `Combined GpuJoin`).
//! - The device's accumulator words as PostgreSQL's partial aggregate
//!   states are `crate::codegen::aggregates`.

pub mod exchange;
pub mod exchange_node;
pub mod exchange_rows;
pub mod exec;
pub mod merge;
pub mod partitions;
pub mod path;
pub mod plan;
pub mod spill;

/// The name the plan and EXPLAIN show (`Custom Scan (GpuPreAgg)`).
pub const NAME: &std::ffi::CStr = c"GpuPreAgg";

/// Install the planner hooks.  Called from `_PG_init`.
pub fn init() {
    path::install_hooks();
    plan::register_methods();
    exchange_node::register_methods();
}
