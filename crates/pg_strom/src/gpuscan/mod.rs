//! GpuScan: a sequential scan of a heap table whose WHERE clauses run on
//! the device engine.
//!
//! Lifecycle, one file per callback group:
//! - [`path`]: `set_rel_pathlist_hook` adds a GpuScan CustomPath (and a
//!   partial one for parallel plans) when some of the relation's quals
//!   compile to a device program; costed against PostgreSQL's own paths.
//! - [`plan`]: PlanCustomPath turns the path into a CustomScan; the plan's
//!   private state is one [`plan::GpuScanInfo`], serialized into
//!   `custom_private` (so it survives copyObject and travels to parallel
//!   workers), the quals and hoisted parameters into `custom_exprs`.
//! - [`exec`]: CreateCustomScanState / Begin / Exec / ReScan / End and the
//!   parallel DSM callbacks: rows are read through the table AM with the
//!   query's snapshot (so MVCC is PostgreSQL's own), gathered into column
//!   chunks, filtered on the engine, and the survivors returned.
//! - [`explain`]: the EXPLAIN fields (`GPU Filter`, `Rows Removed by GPU
//!   Filter`, `GPU Preference`, `referenced`, chunk and fallback counts).

pub mod exec;
pub mod explain;
pub mod path;
pub mod plan;

/// The name the plan and EXPLAIN show (`Custom Scan (GpuScan)`).
pub const NAME: &std::ffi::CStr = c"GpuScan";

/// Install the planner hook and register the plan methods (so parallel
/// workers can find them by name).  Called from `_PG_init`.
pub fn init() {
    path::install_hook();
    plan::register_methods();
}
