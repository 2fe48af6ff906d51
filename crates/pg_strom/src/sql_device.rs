//! SQL functions about GPUs, engines and device code:
//!
//! - `pgstrom_device_info()` and `pgstrom.gpu_device_info()` (+ the view
//!   `pgstrom.gpu_device_info`): one row per device property.
//! - `pgstrom.device_discovery()`: what start-up discovery found.
//! - `pgstrom.active_engine()`: the engine device code runs on now.
//! - `pgstrom.device_code_build(arch)`: build (or load from the cache) the
//!   device code with NVRTC.
//! - `pgstrom.engine_selftest(nrows, engine)`: run the device code's filter
//!   kernels on an engine and check every result against the reference.

use pgrx::prelude::*;

use pgstrom_runtime::discovery;

use crate::discovery_worker::DISCOVERY_WAIT_MS;
use crate::discovery_worker::{self, STATE_FOUND, STATE_NONE};

/// Largest self-test (about 20 bytes of test data per row in the backend).
const SELFTEST_MAX_ROWS: i32 = 50_000_000;

fn device_info_rows() -> TableIterator<'static, (name!(id, i32), name!(property, String), name!(value, String))> {
    let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
    let rows: Vec<(i32, String, String)> = snap
        .devices
        .iter()
        .flat_map(|d| discovery::describe(d).into_iter().map(move |(p, v)| (d.ordinal, p, v)))
        .collect();
    TableIterator::new(rows)
}

/// PG-Strom's `pgstrom_device_info()`: every GPU property, one per row.
#[pg_extern(volatile, parallel_safe)]
fn pgstrom_device_info() -> TableIterator<'static, (name!(id, i32), name!(property, String), name!(value, String))> {
    device_info_rows()
}

#[pg_schema]
mod pgstrom {
    use super::*;
    use crate::engine;
    use crate::errors;
    use pgstrom_runtime::cache;
    use pgstrom_runtime::nvrtc::Nvrtc;
    use pgstrom_runtime::selftest;

    /// Every GPU property, one per row (also the view of the same name).
    #[pg_extern(volatile, parallel_safe)]
    fn gpu_device_info() -> TableIterator<'static, (name!(id, i32), name!(property, String), name!(value, String))> {
        device_info_rows()
    }

    /// What device discovery found at start-up.
    #[pg_extern(volatile, parallel_safe)]
    fn device_discovery() -> TableIterator<
        'static,
        (name!(state, String), name!(driver_version, Option<String>), name!(gpus, i32), name!(message, String)),
    > {
        let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
        let state = match snap.state {
            STATE_FOUND => "found",
            STATE_NONE => "none",
            _ => "pending",
        };
        let driver = (snap.driver_version > 0)
            .then(|| format!("{}.{}", snap.driver_version / 1000, (snap.driver_version % 1000) / 10));
        TableIterator::once((state.to_string(), driver, snap.devices.len() as i32, snap.message))
    }

    /// The engine that runs device code in this session: 'gpu' or 'cpu'.
    #[pg_extern(volatile, parallel_safe)]
    fn active_engine() -> String {
        engine::active().kind().name().to_string()
    }

    /// The engine the planner prices device nodes for in this session:
    /// 'gpu', 'cpu in the GPU service' or 'cpu'.  It differs from
    /// [`active_engine`] while the GPU service builds the device code
    /// (after an install or upgrade): plans made then are priced for the
    /// CPU engine.
    #[pg_extern(volatile, parallel_safe)]
    fn planned_engine() -> String {
        if engine::planned_gpu() {
            "gpu"
        } else if engine::planned_in_service() {
            "cpu in the GPU service"
        } else {
            "cpu"
        }
        .to_string()
    }

    /// The GPU service's engines, one row each (every GPU, then the CPU
    /// engine run there): what it is, its device memory in use, requests
    /// served and being served (the queue depth), chunks evaluated or
    /// joined, bytes received, error replies, a GPU's Arrow column cache
    /// (bytes held, hits, misses, bytes read from files, of those by
    /// cuFile) and its device memory pool (budget, bytes reserved now,
    /// requests that waited for memory, requests that failed for it), its
    /// join sessions, scans placed on it, and its busy time (wall time
    /// with at least one request being served on it, in milliseconds).
    #[pg_extern(volatile, parallel_safe)]
    #[allow(clippy::type_complexity)]
    fn gpu_service_engines_info() -> TableIterator<
        'static,
        (
            name!(engine, String),
            name!(device, String),
            name!(memory_used, Option<i64>),
            name!(requests, i64),
            name!(in_flight, i64),
            name!(chunks, i64),
            name!(bytes_in, i64),
            name!(errors, i64),
            name!(arrow_cache_bytes, Option<i64>),
            name!(arrow_cache_hits, Option<i64>),
            name!(arrow_cache_misses, Option<i64>),
            name!(arrow_cache_read_bytes, Option<i64>),
            name!(arrow_cache_cufile_bytes, Option<i64>),
            name!(memory_budget, Option<i64>),
            name!(memory_reserved, Option<i64>),
            name!(memory_waits, Option<i64>),
            name!(memory_failures, Option<i64>),
            name!(join_sessions, i64),
            name!(scans_placed, Option<i64>),
            name!(busy_ms, f64),
        ),
    > {
        let info = service_info();
        let ngpus = info.gpus.len().min(info.work.len().saturating_sub(1));
        let mut rows = Vec::new();
        for (i, w) in info.work.iter().enumerate() {
            let gpu = i < ngpus;
            let (engine, device) = if gpu {
                let d = match &info.gpus[i] {
                    Ok(d) => d.clone(),
                    Err(e) => format!("unavailable: {e}"),
                };
                (format!("GPU{i}"), d)
            } else {
                ("CPU".to_string(), "CPU engine in the GPU service".to_string())
            };
            let cache = info.gpu_cache.get(i).filter(|_| gpu);
            let pool = info.gpu_pool.get(i).filter(|_| gpu);
            rows.push((
                engine,
                device,
                gpu.then(|| info.gpu_memory_used.get(i).copied().unwrap_or(0) as i64),
                w.requests as i64,
                w.in_flight as i64,
                w.chunks as i64,
                w.bytes_in as i64,
                w.errors as i64,
                cache.map(|c| c.bytes as i64),
                cache.map(|c| c.hits as i64),
                cache.map(|c| c.misses as i64),
                cache.map(|c| c.bytes_read as i64),
                cache.map(|c| c.cufile_bytes as i64),
                pool.map(|p| p.budget as i64),
                pool.map(|p| p.reserved as i64),
                pool.map(|p| p.waits as i64),
                pool.map(|p| p.failures as i64),
                w.sessions as i64,
                gpu.then_some(w.placed as i64),
                w.busy_ns as f64 / 1e6,
            ));
        }
        TableIterator::new(rows)
    }

    /// The GPU service: its process id, when it started, its open
    /// connections, requests served and join sessions held, each GPU it
    /// owns (or why it could not open it), requests being served, bytes
    /// received, error replies, its resident memory and each GPU's device
    /// memory in use, and GPUDirect SQL's state (cuFile's version and
    /// mode, or why it cannot be used; NULL without a GPU).
    #[pg_extern(volatile, parallel_safe)]
    #[allow(clippy::type_complexity)]
    fn gpu_service_info() -> TableIterator<
        'static,
        (
            name!(pid, i32),
            name!(started, pgrx::datum::TimestampWithTimeZone),
            name!(connections, i64),
            name!(requests, i64),
            name!(join_sessions, i64),
            name!(gpus, Vec<String>),
            name!(in_flight, i64),
            name!(bytes_in, i64),
            name!(errors, i64),
            name!(rss_bytes, i64),
            name!(gpu_memory_used, Vec<i64>),
            name!(arrow_cache_bytes, Vec<i64>),
            name!(arrow_cache_hits, Vec<i64>),
            name!(arrow_cache_misses, Vec<i64>),
            name!(arrow_cache_read_bytes, Vec<i64>),
            name!(arrow_cache_cufile_bytes, Vec<i64>),
            name!(gpudirect, Option<String>),
        ),
    > {
        let info = service_info();
        let started = pgrx::datum::TimestampWithTimeZone::try_from(
            // Unix seconds to PostgreSQL microseconds since 2000-01-01
            (info.started as i64 - 946_684_800) * 1_000_000,
        )
        .unwrap_or_else(|_| pgrx::datum::TimestampWithTimeZone::try_from(0i64).expect("epoch"));
        let gpus = info
            .gpus
            .iter()
            .map(|g| match g {
                Ok(d) => d.clone(),
                Err(e) => format!("unavailable: {e}"),
            })
            .collect();
        TableIterator::once((
            info.pid as i32,
            started,
            info.connections as i64,
            info.requests as i64,
            info.sessions as i64,
            gpus,
            info.in_flight as i64,
            info.bytes_in as i64,
            info.errors as i64,
            info.rss as i64,
            info.gpu_memory_used.iter().map(|&m| m as i64).collect(),
            info.gpu_cache.iter().map(|c| c.bytes as i64).collect(),
            info.gpu_cache.iter().map(|c| c.hits as i64).collect(),
            info.gpu_cache.iter().map(|c| c.misses as i64).collect(),
            info.gpu_cache.iter().map(|c| c.bytes_read as i64).collect(),
            info.gpu_cache.iter().map(|c| c.cufile_bytes as i64).collect(),
            info.gpudirect.as_ref().map(|g| match g {
                Ok(mode) => format!("{}: {}", info.cufile, mode.describe()),
                Err(why) => format!("unavailable: {why}"),
            }),
        ))
    }

    /// Build the device code for `arch` (e.g. 'sm_90'), or for every GPU's
    /// architecture when NULL, using the on-disk cache.
    #[pg_extern(volatile, parallel_restricted)]
    fn device_code_build(
        arch: default!(Option<&str>, "NULL"),
    ) -> TableIterator<
        'static,
        (
            name!(arch, String),
            name!(from_cache, bool),
            name!(compile_ms, f64),
            name!(nvrtc_version, Option<String>),
            name!(cache_file, String),
        ),
    > {
        // it runs the compiler for up to minutes and writes into the data
        // directory: what pg_write_server_files may do
        // SAFETY: a backend's own role check.
        if !unsafe {
            pg_sys::superuser()
                || pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(pg_sys::ROLE_PG_WRITE_SERVER_FILES))
        } {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to build device code".into(),
                Some("Only roles with privileges of the \"pg_write_server_files\" role may build device code.".into()),
                Some("Queries build the device code they need themselves; this function is for administrators."),
            );
        }
        let archs: Vec<String> = match arch {
            Some(a) => {
                let ok = a.strip_prefix("sm_").is_some_and(|rest| {
                    let digits = rest.strip_suffix('a').unwrap_or(rest);
                    !digits.is_empty() && digits.len() <= 3 && digits.chars().all(|c| c.is_ascii_digit())
                });
                if !ok {
                    errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                        format!("invalid GPU architecture \"{a}\""),
                        None,
                        Some("Name a CUDA architecture such as 'sm_80' or 'sm_90'."),
                    );
                }
                vec![a.to_string()]
            }
            None => {
                let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
                if snap.devices.is_empty() {
                    errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no GPU found to build device code for".to_string(),
                        Some(snap.message),
                        Some("Name the architecture to build for, such as pgstrom.device_code_build('sm_90')."),
                    );
                }
                let mut v: Vec<String> = snap.devices.iter().map(|d| d.arch()).collect();
                v.dedup();
                v
            }
        };
        let dir = engine::device_code_dir();
        let library = crate::guc::nvrtc_library();
        let mut rows = Vec::new();
        for a in archs {
            match cache::load_or_build(&dir, &a, || Nvrtc::load(library.as_deref())) {
                Ok(m) => rows.push((
                    m.arch,
                    m.from_cache,
                    m.compile_ms,
                    m.nvrtc_version.map(|(x, y)| format!("{x}.{y}")),
                    m.path.display().to_string(),
                )),
                Err(e) => errors::raise("cannot build the device code", &e),
            }
        }
        TableIterator::new(rows)
    }

    /// Make GPU `gpu` of the GPU service fault after `after_launches` more
    /// kernel launches (a store to an illegal address: the CUDA context
    /// dies as with a bug in device code or an Xid error), to test how a
    /// faulting GPU is handled.  Superusers only.
    #[pg_extern(volatile, parallel_unsafe)]
    fn inject_device_fault(after_launches: default!(i32, 0), gpu: default!(i32, 0)) {
        // SAFETY: a backend's own role check.
        if !unsafe { pg_sys::superuser() } {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to inject a device fault".into(),
                Some("Only superusers may make a GPU fault.".into()),
                None,
            );
        }
        if after_launches < 0 || gpu < 0 {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("after_launches ({after_launches}) and gpu ({gpu}) must not be negative"),
                None,
                None,
            );
        }
        service_info(); // an ERROR when the service is off or unreachable
        let target = engine::service_engine(gpu as u32);
        if let Err(e) = target.inject_fault(after_launches as u32) {
            errors::raise(&format!("cannot inject a fault into GPU{gpu}"), &e);
        }
    }

    /// Run the filter kernels on an engine ('gpu', 'cpu', or NULL for the
    /// active one) over `nrows` generated rows and check each result.
    // pgrx needs the row type spelled out inline (name! cannot be aliased).
    #[allow(clippy::type_complexity)]
    #[pg_extern(volatile, parallel_restricted)]
    fn engine_selftest(
        nrows: default!(i32, 1000000),
        engine: default!(Option<&str>, "NULL"),
    ) -> TableIterator<
        'static,
        (
            name!(engine, String),
            name!(data_type, String),
            name!(constant, String),
            name!(op, String),
            name!(with_nulls, bool),
            name!(nrows, i64),
            name!(nmatched, i64),
            name!(matches_reference, bool),
            name!(elapsed_ms, f64),
        ),
    > {
        if !(0..=SELFTEST_MAX_ROWS).contains(&nrows) {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("nrows must be between 0 and {SELFTEST_MAX_ROWS}, not {nrows}"),
                None,
                None,
            );
        }
        let eng = engine::by_name(engine);
        let name = eng.kind().name().to_string();
        let rows = match selftest::run(eng, nrows as usize, 0x5eed) {
            Ok(r) => r,
            Err(e) => errors::raise("engine self-test failed", &e),
        };
        TableIterator::new(rows.into_iter().map(move |r| {
            (
                name.clone(),
                r.data_type.to_string(),
                r.constant,
                r.op.sql().to_string(),
                r.with_nulls,
                r.nrows as i64,
                r.nmatched as i64,
                r.matches_reference,
                r.elapsed_ms,
            )
        }))
    }
}

/// What the GPU service says about itself; an ERROR when it is off or
/// cannot be reached.
fn service_info() -> pgstrom_runtime::service::ServiceInfo {
    if !crate::guc::GPU_SERVICE.get() {
        crate::errors::raise_plain(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "the GPU service is off".into(),
            None,
            Some("Set pg_strom.gpu_service = on and restart the server."),
        );
    }
    match crate::engine::service_cpu().info() {
        Ok(i) => i,
        Err(e) => crate::errors::raise("cannot reach the GPU service", &e),
    }
}

extension_sql!(
    r#"
CREATE VIEW pgstrom.gpu_device_info AS SELECT * FROM pgstrom.gpu_device_info();
CREATE VIEW pgstrom.gpu_service_engines AS SELECT * FROM pgstrom.gpu_service_engines_info();
COMMENT ON VIEW pgstrom.gpu_service_engines IS 'The GPU service per engine (each GPU, then its CPU engine): memory, queue depth, chunks, bytes, errors, Arrow column cache, busy time';
CREATE VIEW pgstrom.gpu_service_status AS SELECT * FROM pgstrom.gpu_service_info();
COMMENT ON VIEW pgstrom.gpu_service_status IS 'The GPU service process: connections, requests, queue depth, bytes in, errors, memory';
COMMENT ON VIEW pgstrom.gpu_device_info IS 'GPU properties found by pg_strom at start-up, one row per property';
REVOKE EXECUTE ON FUNCTION pgstrom.inject_device_fault(integer, integer) FROM PUBLIC;
"#,
    name = "gpu_device_info_view",
    requires = [
        pgstrom::gpu_device_info,
        pgstrom::gpu_service_info,
        pgstrom::gpu_service_engines_info,
        pgstrom::inject_device_fault
    ]
);

// Every role may use what is safe for everyone (docs/functions.md,
// "Access"): the schema, and the views over device, service and device
// function information (no paths in them).  The functions that read
// server files, write into the data directory or change the service's
// state check their privileges themselves, or are revoked from PUBLIC.
extension_sql!(
    r#"
GRANT USAGE ON SCHEMA pgstrom TO PUBLIC;
GRANT SELECT ON pgstrom.gpu_device_info, pgstrom.gpu_service_engines, pgstrom.gpu_service_status,
                pgstrom.device_functions TO PUBLIC;
"#,
    name = "public_access",
    finalize
);
