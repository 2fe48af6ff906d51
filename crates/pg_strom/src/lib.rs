//! pg_strom: a PostgreSQL extension that runs analytic SQL on NVIDIA GPUs.
//!
//! This crate is the only place that talks to PostgreSQL.  The device
//! runtime (CUDA, NVRTC, the engines) lives in `pgstrom-runtime` and never
//! calls PostgreSQL; the modules here translate between the two:
//!
//! - [`guc`]: the `pg_strom.*` settings.
//! - [`discovery_worker`]: the start-up background worker that finds the
//!   GPUs (CUDA must not be initialised in the postmaster) and publishes
//!   them in shared memory.
//! - [`engine`]: picks the engine a backend runs device code on.
//! - [`service_worker`]: keeps the GPU service process running.
//! - [`errors`]: runtime errors as `ereport`s with SQLSTATEs.
//! - [`sql_device`]: SQL functions about devices and device code.
//! - [`codegen`]: PostgreSQL expressions to device programs.
//! - [`device_eval`]: SQL entry points that run device programs.
//! - [`random`]: the `pgstrom.random_*` test-data generators.
//! - [`chunk`]: rows gathered into the device's columnar layout.
//! - [`heapchunk`]: heap tables read in chunks (GpuScan, GpuJoin).
//! - [`heapdirect`]: heap blocks the GPU service reads from the files itself (GpuPreAgg).
//! - [`scansource`]: a node's outer rows: heap chunks or Arrow batches.
//! - [`gpujoin`]: the GpuJoin custom scan (joins with up to eight inner
//!   relations on the device).
//! - [`arrow_fdw`]: Arrow_Fdw, Apache Arrow files as foreign tables.
//! - [`gpuscan`]: the GpuScan custom scan (planner path, plan, executor,
//!   EXPLAIN).
//! - [`timezone`]: the session time zone as a table device programs read.

// Every unsafe block says why it is sound; every unsafe fn says what its
// callers promise.
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

use pgrx::prelude::*;

pub mod arrow_fdw;
pub mod chunk;
pub mod codegen;
pub mod customscan;
pub mod device_eval;
pub mod discovery_worker;
pub mod engine;
pub mod errors;
pub mod float2;
pub mod gpu_preference;
pub mod gpujoin;
pub mod gpupreagg;
pub mod gpuscan;
pub mod guc;
pub mod pg;
pub mod random;
pub mod service_worker;
pub mod source;
pub mod sql_device;
pub mod timezone;

pgrx::pg_module_magic!();

/// Library initialisation.  pg_strom needs shared memory and a start-up
/// worker, so it must be loaded by `shared_preload_libraries`.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: reading a PostgreSQL global in the main thread.
    let preloading = unsafe { pg_sys::process_shared_preload_libraries_in_progress };
    if !preloading {
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "pg_strom must be loaded via shared_preload_libraries",
            "_PG_init",
        )
        .set_hint("Add 'pg_strom' to shared_preload_libraries in postgresql.conf and restart the server.")
        .report(PgLogLevel::ERROR);
        return;
    }
    guc::init();
    gpu_preference::init_guc();
    // waits for the GPU service stop for query cancels and timeouts
    pgstrom_runtime::service::client::set_interrupt_check(engine::interrupt_pending);
    discovery_worker::init();
    if guc::GPU_SERVICE.get() {
        service_worker::init();
    }
    gpuscan::init();
    gpujoin::init();
    gpupreagg::init();
}
