//! pg_strom: a PostgreSQL extension that runs analytic SQL on NVIDIA GPUs.
//!
//! This crate is the only place that talks to PostgreSQL.  The device
//! runtime (CUDA, NVRTC, the engines) lives in `pgstrom-runtime` and never
//! calls PostgreSQL; the modules here translate between the two:
//!
//! Modules by layer; each imports only from layers above it (no import
//! cycles: `scripts/check-module-cycles.py`, run by `make lint`).  The
//! map with the way a query takes through them is docs/architecture.md.
//!
//! 0. PostgreSQL helpers: [`pg`] (Lists, memory contexts, EXPLAIN
//!    properties, the planner's parallel rules), [`errors`] (`ereport`s
//!    with SQLSTATEs), [`guc`] (the `pg_strom.*` and `arrow_fdw.*`
//!    settings), [`float2`] (the float2 type), [`timezone`] (the session
//!    time zone as a table device programs read).
//! 1. Device programs: [`codegen`] (expressions to device programs, the
//!    device catalog, datums, aggregates), [`chunk`] (rows gathered into
//!    the device's columnar layout).
//! 2. GPUs: [`discovery_worker`] (the start-up worker that finds the GPUs;
//!    CUDA is never initialised in the postmaster), [`gpu_preference`]
//!    (which GPUs a relation's storage prefers), [`engine`] (the engine a
//!    node runs device code on), [`service_worker`] (keeps the GPU
//!    service running), [`sql_device`] and [`device_eval`] (SQL functions
//!    about devices and device code), [`random`] (`pgstrom.random_*`).
//! 3. Storage: [`arrow_fdw`] (Apache Arrow files as foreign tables, and
//!    their reader), [`source`] (a node's outer rows: heap chunks, heap
//!    pages, the heap direct path, or Arrow batches, behind one interface).
//! 4. [`customscan`]: what every device node shares (costs, plan-private
//!    encoding, parameters, the executor life and parallel DSM, counters).
//! 5. Nodes: [`gpuscan`], [`gpujoin`] (up to eight inner relations on the
//!    device), [`gpupreagg`] (GROUP BY on the device, on GpuJoin's
//!    pipeline); [`rewrite`] (queries planned a second way, rewritten so
//!    that a GpuPreAgg can group them: correlated aggregate sub-queries as
//!    a join with a grouped sub-query, aggregation below joins).

use pgrx::prelude::*;

pub mod arrow_fdw;
pub mod chunk;
pub mod codegen;
pub mod crash_report;
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
pub mod gstore;
pub mod guc;
pub mod pg;
pub mod random;
pub mod rewrite;
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
    crash_report::init();
    guc::init();
    gpu_preference::init_guc();
    // waits for the GPU service stop for query cancels and timeouts
    pgstrom_runtime::service::client::set_interrupt_check(engine::interrupt_pending);
    discovery_worker::init();
    if guc::GPU_SERVICE.get() {
        service_worker::init();
    }
    arrow_fdw::foreign_keys::install_hook();
    gpuscan::init();
    gpujoin::init();
    gpupreagg::init();
}
