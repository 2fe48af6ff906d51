//! Which engine a backend runs device code on, per `pg_strom.engine`.
//!
//! - `cpu`: the CPU engine.
//! - `gpu`: the GPU engine; an ERROR when no GPU can be used.
//! - `auto`: the GPU when discovery found one and it opens, else the CPU
//!   engine (a WARNING, once per backend, when a GPU was found but failed).
//!
//! With `pg_strom.gpu_service` on (the default) the GPU engine is the GPU
//! service's ([`ServiceEngine`]: one process owns the GPUs, opened once at
//! server start; see `service_worker`).  Off, each backend opens the GPU
//! itself on first use (a CUDA context, device code from the cache under
//! `$PGDATA/pg_strom/device_code`, built by NVRTC the first time).  The
//! CPU engine runs in the backend, or in the service with
//! `pg_strom.cpu_engine_in_service`.  Executors see one `Engine` trait.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use pgrx::prelude::*;

use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::gpu::GpuEngine;
use pgstrom_runtime::service::CPU_ENGINE as SERVICE_CPU_INDEX;
use pgstrom_runtime::service::client::ServiceEngine;
use pgstrom_runtime::{DeviceError, Engine};

use crate::discovery_worker::{self, STATE_FOUND};
use crate::errors;
use crate::guc::{self, EngineSetting};

/// How long a backend waits for start-up discovery to finish.
pub const DISCOVERY_WAIT_MS: u64 = 30_000;

static GPU_ENGINE: OnceLock<Result<GpuEngine, DeviceError>> = OnceLock::new();
static WARNED_FALLBACK: AtomicBool = AtomicBool::new(false);
static CPU_ENGINE: CpuEngine = CpuEngine;

/// The GPU service's socket, relative to the data directory (the working
/// directory of every server process; a short path whatever PGDATA is).
pub const SERVICE_SOCKET: &str = "pg_strom/service.sock";
/// How long a backend waits for the service to listen (it is starting,
/// or restarting after a crash).
const SERVICE_WAIT: Duration = Duration::from_secs(30);

static SERVICE_GPU: LazyLock<ServiceEngine> =
    LazyLock::new(|| ServiceEngine::new(PathBuf::from(SERVICE_SOCKET), 0, SERVICE_WAIT));
static SERVICE_CPU: LazyLock<ServiceEngine> =
    LazyLock::new(|| ServiceEngine::new(PathBuf::from(SERVICE_SOCKET), SERVICE_CPU_INDEX, SERVICE_WAIT));

/// Whether this backend has an interrupt to serve (cancel, timeout,
/// termination): asked by the GPU service client while it waits.
pub fn interrupt_pending() -> bool {
    // SAFETY: flags of the backend, read in its main thread.  Only the
    // interrupts that end the query count (cancel and statement_timeout,
    // termination, transaction_timeout): InterruptPending alone is also set
    // by harmless ones (a shared-invalidation catch-up, a parallel worker's
    // message) that CHECK_FOR_INTERRUPTS handles without an error, and it
    // stays set until then.  Held-off interrupts wait, as
    // CHECK_FOR_INTERRUPTS would.
    unsafe {
        let pending = |f: *const pg_sys::sig_atomic_t| std::ptr::read_volatile(f) != 0;
        if !pending(&raw const pg_sys::InterruptPending)
            || pg_sys::InterruptHoldoffCount != 0
            || pg_sys::CritSectionCount != 0
        {
            return false;
        }
        pending(&raw const pg_sys::ProcDiePending)
            || pending(&raw const pg_sys::TransactionTimeoutPending)
            || (pending(&raw const pg_sys::QueryCancelPending) && pg_sys::QueryCancelHoldoffCount == 0)
    }
}

/// GPU `index` of the GPU service, on a connection of its own (for
/// requests aimed at one GPU, such as an injected fault): GPU0 is the
/// engine queries use; the CPU engine's index gives that one.
pub fn service_engine(index: u32) -> ServiceEngine {
    ServiceEngine::new(PathBuf::from(SERVICE_SOCKET), index, SERVICE_WAIT)
}

/// The GPU service's CPU engine (its connection is also used for status).
pub fn service_cpu() -> &'static ServiceEngine {
    &SERVICE_CPU
}

/// The GPU engine: the service's GPU0, or with `pg_strom.gpu_service` off
/// this backend's own.
fn gpu() -> Result<&'static dyn Engine, DeviceError> {
    if guc::GPU_SERVICE.get() {
        // start-up discovery says why there is none, as without the service
        let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
        if snap.devices.is_empty() {
            return Err(DeviceError::Unavailable(snap.message));
        }
        SERVICE_GPU.check()?;
        Ok(&*SERVICE_GPU)
    } else {
        Ok(gpu_engine()?)
    }
}

/// Where compiled device code is cached.
pub fn device_code_dir() -> PathBuf {
    // SAFETY: DataDir is set for the life of every backend.
    let data_dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) }.to_string_lossy().into_owned();
    PathBuf::from(data_dir).join("pg_strom").join("device_code")
}

/// The GPU engine of this backend (device 0 for now), opened on first use.
pub fn gpu_engine() -> Result<&'static GpuEngine, DeviceError> {
    GPU_ENGINE
        .get_or_init(|| {
            let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
            let Some(dev) = snap.devices.first() else {
                return Err(DeviceError::Unavailable(snap.message));
            };
            GpuEngine::open(dev, &device_code_dir(), guc::nvrtc_library().as_deref())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether a device scan planned now would first have to open the GPU:
/// without the GPU service, the engine would be a GPU, and it is not open
/// in this backend yet, or the scan runs in parallel workers (new
/// processes, which open their own).  The planner charges
/// `pg_strom.gpu_context_cost` for it.  Never waits for start-up
/// discovery: while it runs, nothing is charged.
pub fn gpu_open_pending(in_new_processes: bool) -> bool {
    if matches!(guc::ENGINE.get(), EngineSetting::Cpu) || guc::GPU_SERVICE.get() {
        return false;
    }
    if discovery_worker::state() != STATE_FOUND {
        return false;
    }
    in_new_processes || GPU_ENGINE.get().is_none()
}

/// The engine device code runs on now.  Raises an ERROR when the setting
/// demands a GPU that cannot be used.
pub fn active() -> &'static dyn Engine {
    match guc::ENGINE.get() {
        EngineSetting::Cpu => cpu(),
        EngineSetting::Gpu => {
            let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
            if snap.state != STATE_FOUND {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "pg_strom.engine is 'gpu' but no GPU is available".to_string(),
                    Some(snap.message),
                    Some("Set pg_strom.engine to 'auto' or 'cpu' to run device code on the CPU engine."),
                );
            }
            match gpu() {
                Ok(g) => g,
                Err(e) => errors::raise("cannot use the GPU", &e),
            }
        }
        EngineSetting::Auto => {
            let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
            if snap.state != STATE_FOUND {
                return cpu();
            }
            match gpu() {
                Ok(g) => g,
                Err(e) => {
                    if !WARNED_FALLBACK.swap(true, Ordering::Relaxed) {
                        pgrx::pg_sys::panic::ErrorReport::new(
                            errors::sqlstate(&e),
                            format!("pg_strom: GPU unavailable, using the CPU engine: {e}"),
                            "pg_strom",
                        )
                        .set_hint("Set pg_strom.engine = 'gpu' to make this an error, or 'cpu' to silence it.")
                        .report(PgLogLevel::WARNING);
                    }
                    cpu()
                }
            }
        }
    }
}

/// The CPU engine (in the backend, or in the GPU service with
/// `pg_strom.cpu_engine_in_service`).
pub fn cpu() -> &'static dyn Engine {
    if guc::CPU_ENGINE_IN_SERVICE.get() && guc::GPU_SERVICE.get() { &*SERVICE_CPU } else { &CPU_ENGINE }
}

/// The CPU engine of this backend, whatever the settings: where a query
/// finishes when the GPU service went away under it.
pub fn local_cpu() -> &'static dyn Engine {
    &CPU_ENGINE
}

/// The engine a SQL function's `engine` argument names: 'gpu', 'cpu', or
/// NULL for the active one.  Raises an ERROR for anything else, or for
/// 'gpu' when no GPU can be used.
pub fn by_name(name: Option<&str>) -> &'static dyn Engine {
    match name {
        None => active(),
        Some("cpu") => cpu(),
        Some("gpu") => match gpu() {
            Ok(g) => g,
            Err(e) => errors::raise("cannot use the GPU", &e),
        },
        Some(other) => errors::raise_plain(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("unknown engine \"{other}\""),
            None,
            Some("Use 'gpu', 'cpu', or NULL for the active engine."),
        ),
    }
}
