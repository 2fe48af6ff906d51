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
//! - [`state`]: the device's accumulator words as PostgreSQL's partial
//!   aggregate states (the transition types, or the serialized form of
//!   `internal` ones).
//! - Planning and execution are GpuJoin's ([`crate::gpujoin`]), with the
//!   aggregation added: a scan is a join of no depth.

pub mod path;
pub mod state;

/// The name the plan and EXPLAIN show (`Custom Scan (GpuPreAgg)`).
pub const NAME: &std::ffi::CStr = c"GpuPreAgg";

/// Install the planner hooks.  Called from `_PG_init`.
pub fn init() {
    path::install_hooks();
}
