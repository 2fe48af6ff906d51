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
//!
//! On a machine with several GPUs each scan (each process of a parallel
//! scan) is placed on first use ([`active_for`]): the candidates are the
//! GPUs its storage prefers (gpu_preference.rs), and the service picks the
//! least-loaded of them.
//!
//! With the service, a GPU counts as usable for `auto` only once its
//! device code is built ([`device_code_pending`]): the service builds it
//! when it starts (about a minute after an install or an upgrade, the
//! cache is empty); meanwhile the planner costs and runs device nodes as
//! the CPU engine's, so that no query waits for NVRTC.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use pgrx::prelude::*;

use pgstrom_runtime::placement::{Preference, StorageRefs};

use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::gpu::GpuEngine;
use pgstrom_runtime::service::CPU_ENGINE as SERVICE_CPU_INDEX;
use pgstrom_runtime::service::client::ServiceEngine;
use pgstrom_runtime::{DeviceError, Engine};

use crate::discovery_worker::{self, DISCOVERY_WAIT_MS, STATE_FOUND};
use crate::errors;
use crate::gpu_preference;
use crate::guc::{self, EngineSetting};

/// GPUs an engine of this process may use (the service's numbering).
const MAX_GPUS: usize = pgstrom_runtime::placement::MAX_GPUS as usize;
/// Without the GPU service: this backend's own GPU engines, by number.
static GPU_ENGINES: [OnceLock<Result<GpuEngine, DeviceError>>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
static WARNED_FALLBACK: AtomicBool = AtomicBool::new(false);
static CPU_ENGINE: CpuEngine = CpuEngine;

/// The GPU service's socket, relative to the data directory (the working
/// directory of every server process; a short path whatever PGDATA is).
pub const SERVICE_SOCKET: &str = "pg_strom/service.sock";
/// How long a backend waits for the service to listen (it is starting,
/// or restarting after a crash).
const SERVICE_WAIT: Duration = Duration::from_secs(30);

/// The GPU service's GPUs, by number: a connection each, opened on use.
static SERVICE_GPUS: [OnceLock<ServiceEngine>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
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
            || crate::pg::compat::transaction_timeout_pending()
            || (pending(&raw const pg_sys::QueryCancelPending) && pg_sys::QueryCancelHoldoffCount == 0)
    }
}

/// GPU `index` of the GPU service, on a connection of its own (for
/// requests aimed at one GPU, such as an injected fault); the CPU
/// engine's index gives that one.
pub fn service_engine(index: u32) -> ServiceEngine {
    ServiceEngine::new(PathBuf::from(SERVICE_SOCKET), index, SERVICE_WAIT)
}

/// The GPU service's CPU engine (its connection is also used for status).
pub fn service_cpu() -> &'static ServiceEngine {
    &SERVICE_CPU
}

/// The GPU service's GPU `index`, on this process's connection for it.
fn service_gpu(index: usize) -> &'static ServiceEngine {
    SERVICE_GPUS[index.min(MAX_GPUS - 1)]
        .get_or_init(|| ServiceEngine::new(PathBuf::from(SERVICE_SOCKET), index as u32, SERVICE_WAIT))
}

/// The GPU engine a scan of `storage` (where its rows lie, asked only
/// with several GPUs) runs on, with the candidates it was chosen among
/// when there were several GPUs.  With the GPU service: the
/// least-loaded of the GPUs the storage prefers (the service counts the
/// work of every backend).  Without it: this backend's own engine on one
/// of them (spread over them by process id).  With one GPU: that one.
fn gpu_placed(
    storage: Option<&dyn Fn() -> StorageRefs>,
) -> Result<(&'static dyn Engine, Option<Preference>), DeviceError> {
    // start-up discovery says why there is none, as without the service
    let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
    if snap.devices.is_empty() {
        return Err(DeviceError::Unavailable(snap.message));
    }
    let prefer = || storage.map(|s| gpu_preference::prefer(&s(), &snap.devices)).unwrap_or_default();
    if guc::GPU_SERVICE.get() {
        let first = service_gpu(0);
        let info = first.hello_info()?;
        let usable: Vec<usize> = (0..info.gpus.len().min(MAX_GPUS)).filter(|&g| info.gpus[g].is_ok()).collect();
        let (index, pref) = match usable.as_slice() {
            [] => {
                first.check()?; // says why GPU0 could not be opened
                return Err(DeviceError::Unavailable("the GPU service has no usable GPU".into()));
            }
            [only] => (*only, None),
            _ => {
                let mut pref = prefer();
                let index = first.place(&pref.gpus)? as usize;
                if pref.gpus.is_empty() {
                    pref.gpus = usable.iter().map(|&g| g as u32).collect();
                }
                (index, Some(pref))
            }
        };
        let engine = service_gpu(index);
        engine.check()?;
        Ok((engine, pref))
    } else {
        let n = snap.devices.len().min(MAX_GPUS);
        if n == 1 {
            return Ok((gpu_engine(0)?, None));
        }
        let mut pref = prefer();
        if pref.gpus.is_empty() {
            pref.gpus = (0..n as u32).collect();
        }
        let candidates: Vec<usize> = pref.gpus.iter().map(|&g| g as usize).filter(|&g| g < n).collect();
        // SAFETY: MyProcPid is set for the life of every backend.
        let pid = unsafe { pg_sys::MyProcPid } as usize;
        let pick = candidates.get(pid % candidates.len().max(1)).copied().unwrap_or(0);
        Ok((gpu_engine(pick)?, Some(pref)))
    }
}

/// The GPU engine, wherever the storage.
fn gpu() -> Result<&'static dyn Engine, DeviceError> {
    gpu_placed(None).map(|(e, _)| e)
}

/// Where compiled device code is cached.
pub fn device_code_dir() -> PathBuf {
    // SAFETY: DataDir is set for the life of every backend.
    let data_dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) }.to_string_lossy().into_owned();
    PathBuf::from(data_dir).join("pg_strom").join("device_code")
}

/// GPU `index` of this backend (without the GPU service), opened on
/// first use.
fn gpu_engine(index: usize) -> Result<&'static GpuEngine, DeviceError> {
    GPU_ENGINES[index.min(MAX_GPUS - 1)]
        .get_or_init(|| {
            let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
            let Some(dev) = snap.devices.get(index) else {
                return Err(DeviceError::Unavailable(snap.message));
            };
            GpuEngine::open(dev, &device_code_dir(), guc::nvrtc_library().as_deref())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether a device scan planned now would run in the GPU service (a GPU
/// of the service, or the CPU engine there with
/// `pg_strom.cpu_engine_in_service`): the engine that reads an Arrow
/// table's columns from the files itself, a whole record batch per chunk.
/// Never waits for start-up discovery: while it runs, no GPU counts as
/// found.
pub fn planned_in_service() -> bool {
    if !guc::GPU_SERVICE.get() {
        return false;
    }
    match guc::ENGINE.get() {
        EngineSetting::Cpu => guc::CPU_ENGINE_IN_SERVICE.get(),
        EngineSetting::Gpu => true,
        EngineSetting::Auto => {
            guc::CPU_ENGINE_IN_SERVICE.get()
                || (discovery_worker::state() == STATE_FOUND && device_code_pending().is_none())
        }
    }
}

/// Whether a device node planned now would run on a GPU (not the CPU
/// engine, in the backend or the GPU service).  Never waits for start-up
/// discovery: while it runs, no GPU counts as found.
pub fn planned_gpu() -> bool {
    match guc::ENGINE.get() {
        EngineSetting::Cpu => false,
        EngineSetting::Gpu => true,
        EngineSetting::Auto => discovery_worker::state() == STATE_FOUND && device_code_pending().is_none(),
    }
}

/// Set once every GPU found has its device code built (it stays built:
/// a new build of pg_strom is a new process).
static DEVICE_CODE_BUILT: AtomicBool = AtomicBool::new(false);

/// The last answer of [`device_code_pending`] while not built, and when
/// it was found: the planner asks it at every cost, the files are read at
/// most once a second.
static PENDING_SEEN: std::sync::Mutex<Option<(std::time::Instant, Option<String>)>> = std::sync::Mutex::new(None);

/// With the GPU service, while the device code of a GPU start-up
/// discovery found is not built yet (the service builds it when it
/// starts: about a minute after an install or upgrade): which
/// architectures wait.  None when it is built, without the service (each
/// process builds it on first use), or before discovery found a GPU.
/// Reads two small files per GPU at most once a second until the code is
/// built, nothing after.
pub fn device_code_pending() -> Option<String> {
    if DEVICE_CODE_BUILT.load(Ordering::Relaxed) || !guc::GPU_SERVICE.get() {
        return None;
    }
    if discovery_worker::state() != STATE_FOUND {
        return None;
    }
    let mut seen = PENDING_SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, pending)) = seen.as_ref()
        && at.elapsed() < Duration::from_secs(1)
    {
        return pending.clone();
    }
    let snap = discovery_worker::snapshot(0);
    let dir = device_code_dir();
    let mut archs: Vec<String> = snap.devices.iter().map(|d| d.arch()).collect();
    archs.dedup();
    let missing: Vec<String> = archs.into_iter().filter(|a| !pgstrom_runtime::cache::is_built(&dir, a)).collect();
    if missing.is_empty() {
        DEVICE_CODE_BUILT.store(true, Ordering::Relaxed);
        return None;
    }
    let pending = Some(missing.join(", "));
    *seen = Some((std::time::Instant::now(), pending.clone()));
    pending
}

/// Whether the GPU service is opening its GPUs now (building their device
/// code), as it says itself; false when it opened them, could not, or
/// cannot be reached.
fn service_gpus_opening() -> bool {
    let opening =
        |g: &Result<String, String>| matches!(g, Err(e) if e.contains(pgstrom_runtime::service::server::OPENING_TEXT));
    service_cpu().info().is_ok_and(|i| !i.gpus.is_empty() && i.gpus.iter().all(opening))
}

/// While `auto` runs device code on the CPU engine because the GPU
/// service is still building the device code (planned and run so: no
/// query waits for it): the architectures it builds.
fn waiting_for_device_code() -> Option<String> {
    device_code_pending().filter(|_| service_gpus_opening())
}

/// How EXPLAIN names `engine`: its own description, and for the CPU
/// engine while the GPU service builds the device code, that.
pub fn describe(engine: &dyn Engine) -> String {
    let text = engine.describe();
    if engine.device_index().is_none()
        && matches!(guc::ENGINE.get(), EngineSetting::Auto)
        && let Some(archs) = waiting_for_device_code()
    {
        return format!(
            "{text}: the GPU service is building the device code for {archs}, once after an install or upgrade"
        );
    }
    text
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
    in_new_processes || GPU_ENGINES.iter().all(|g| g.get().is_none())
}

/// The engine device code runs on now.  Raises an ERROR when the setting
/// demands a GPU that cannot be used.
pub fn active() -> &'static dyn Engine {
    active_for(None).0
}

/// The engine a scan of `storage` runs on (see [`gpu_placed`]), with the
/// candidate GPUs when there were several.  Raises an ERROR when the
/// setting demands a GPU that cannot be used.
pub fn active_for(storage: Option<&dyn Fn() -> StorageRefs>) -> (&'static dyn Engine, Option<Preference>) {
    match guc::ENGINE.get() {
        EngineSetting::Cpu => (cpu(), None),
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
            match gpu_placed(storage) {
                Ok(g) => g,
                Err(e) => errors::raise("cannot use the GPU", &e),
            }
        }
        EngineSetting::Auto => {
            let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
            if snap.state != STATE_FOUND || waiting_for_device_code().is_some() {
                return (cpu(), None);
            }
            match gpu_placed(storage) {
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
                    (cpu(), None)
                }
            }
        }
    }
}

/// The engine of a scan node, chosen on first use (`storage` says where
/// its rows lie): `slot` keeps it, `candidates` the GPUs it was chosen
/// among; its GPU's bit goes into
/// `gpus` and, in a parallel scan, into the shared mask `shared_gpus`.
pub fn engine_of_scan(
    slot: &mut Option<&'static dyn Engine>,
    storage: &dyn Fn() -> StorageRefs,
    candidates: &mut Option<Preference>,
    gpus: &mut u64,
    shared_gpus: Option<&std::sync::atomic::AtomicU64>,
) -> &'static dyn Engine {
    if let Some(e) = *slot {
        return e;
    }
    let (e, c) = active_for(Some(storage));
    *slot = Some(e);
    *candidates = c;
    let bit = gpu_bit(e);
    *gpus |= bit;
    if let Some(s) = shared_gpus {
        s.fetch_or(bit, Ordering::Relaxed);
    }
    e
}

/// The bit of `engine`'s GPU in a mask of GPUs used (0 for a CPU engine).
pub fn gpu_bit(engine: &dyn Engine) -> u64 {
    engine.device_index().filter(|&g| g < 64).map_or(0, |g| 1u64 << g)
}

/// `GPU0, GPU1` for a mask of [`gpu_bit`]s.
pub fn gpus_text(mask: u64) -> String {
    (0..64).filter(|g| mask & (1u64 << g) != 0).map(|g| format!("GPU{g}")).collect::<Vec<_>>().join(", ")
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
