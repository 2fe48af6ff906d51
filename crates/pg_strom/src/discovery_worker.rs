//! Device discovery at start-up.
//!
//! CUDA does not survive fork(), so the postmaster must never initialise
//! it.  Instead `_PG_init` registers a background worker that starts with
//! the postmaster, enumerates the GPUs through the runtime, writes what it
//! found into shared memory, logs one line, and then sleeps until the
//! server stops: a worker that exited would not run again after a crash
//! recovery, which resets shared memory (every backend would then wait for
//! a discovery that never comes).
//! Backends read the table (see [`snapshot`]); they initialise CUDA
//! themselves only when they actually run device code.
//!
//! Lifecycle: `init()` (in `_PG_init`: shared memory request + worker
//! registration) -> `pgstrom_discovery_main` (worker) -> `snapshot()`
//! (any backend, any time; waits while discovery is still running).

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::{PGRXSharedMemory, PgLwLock, pg_shmem_init};

use pgstrom_runtime::discovery::{self, DeviceInfo, PROPERTIES};
use pgstrom_runtime::error::DeviceError;

/// How long a backend waits for start-up discovery to finish.
pub const DISCOVERY_WAIT_MS: u64 = 30_000;

/// Most GPUs one server tracks.
pub const MAX_DEVICES: usize = 16;
const MAX_PROPERTIES: usize = 64;
const NAME_LEN: usize = 256;
const MESSAGE_LEN: usize = 512;
const _: () = assert!(PROPERTIES.len() <= MAX_PROPERTIES);

/// Discovery has not finished (or its worker could not start).
pub const STATE_PENDING: u32 = 0;
/// Discovery ran and found at least one GPU.
pub const STATE_FOUND: u32 = 1;
/// Discovery ran and found no usable GPU; `message` says why.
pub const STATE_NONE: u32 = 2;

/// One GPU in shared memory.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct DeviceSlot {
    ordinal: i32,
    total_memory: u64,
    name: [u8; NAME_LEN],
    values: [i32; MAX_PROPERTIES],
}

/// The discovery table in shared memory.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct DiscoveryTable {
    state: u32,
    driver_version: i32,
    ndevices: u32,
    message: [u8; MESSAGE_LEN],
    devices: [DeviceSlot; MAX_DEVICES],
}

impl Default for DiscoveryTable {
    fn default() -> Self {
        DiscoveryTable {
            state: STATE_PENDING,
            driver_version: 0,
            ndevices: 0,
            message: [0; MESSAGE_LEN],
            devices: [DeviceSlot { ordinal: 0, total_memory: 0, name: [0; NAME_LEN], values: [0; MAX_PROPERTIES] };
                MAX_DEVICES],
        }
    }
}

// SAFETY: plain old data with no pointers.
unsafe impl PGRXSharedMemory for DiscoveryTable {}

// SAFETY: one lock of this name, initialised by pg_shmem_init! in _PG_init
// before any backend reads it.
static TABLE: PgLwLock<DiscoveryTable> = unsafe { PgLwLock::new(c"pg_strom device discovery") };

fn put_str(dst: &mut [u8], s: &str) {
    let n = s.len().min(dst.len() - 1);
    // Never cut a UTF-8 sequence in half.
    let n = (0..=n).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
    dst[..n].copy_from_slice(&s.as_bytes()[..n]);
    dst[n..].fill(0);
}

fn get_str(src: &[u8]) -> String {
    let end = src.iter().position(|&b| b == 0).unwrap_or(src.len());
    String::from_utf8_lossy(&src[..end]).into_owned()
}

/// Called from `_PG_init`: shared memory and the start-up worker.
pub fn init() {
    pg_shmem_init!(TABLE);
    BackgroundWorkerBuilder::new("pg_strom device discovery")
        .set_type("pg_strom discovery")
        .set_library("pg_strom")
        .set_function("pgstrom_discovery_main")
        .set_start_time(BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(std::time::Duration::from_secs(10)))
        .enable_shmem_access(None)
        .load();
}

/// The worker's entry point.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pgstrom_discovery_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM);
    let found = discovery::discover();
    let mut t = TABLE.exclusive();
    match &found {
        Ok(d) => {
            t.driver_version = d.driver_version;
            t.ndevices = d.devices.len().min(MAX_DEVICES) as u32;
            for (slot, dev) in t.devices.iter_mut().zip(d.devices.iter()) {
                slot.ordinal = dev.ordinal;
                slot.total_memory = dev.total_memory;
                put_str(&mut slot.name, &dev.name);
                slot.values[..dev.values.len()].copy_from_slice(&dev.values);
            }
            t.state = STATE_FOUND;
            let summary: Vec<String> = d
                .devices
                .iter()
                .map(|dev| {
                    format!(
                        "GPU{} {} ({}, {} SMs, {} MB)",
                        dev.ordinal,
                        dev.name,
                        dev.arch(),
                        dev.sm_count(),
                        dev.total_memory >> 20
                    )
                })
                .collect();
            let msg = format!(
                "pg_strom: found {} GPU{}: {}; CUDA driver {}.{}",
                d.devices.len(),
                if d.devices.len() == 1 { "" } else { "s" },
                summary.join(", "),
                d.driver_version / 1000,
                (d.driver_version % 1000) / 10
            );
            put_str(&mut t.message, &msg);
            drop(t);
            log!("{msg}");
        }
        Err(e) => {
            t.state = STATE_NONE;
            if let DeviceError::DriverTooOld { found, .. } = e {
                t.driver_version = *found;
            }
            put_str(&mut t.message, &e.to_string());
            drop(t);
            log!("pg_strom: no GPU available ({e}); device code runs on the CPU engine");
        }
    }
    // stay until the server stops (see the module comment)
    while BackgroundWorker::wait_latch(Some(std::time::Duration::from_secs(3600))) {}
}

/// What discovery found, as a backend sees it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// STATE_*.
    pub state: u32,
    /// cuDriverGetVersion, 0 when unknown.
    pub driver_version: i32,
    /// The GPUs.
    pub devices: Vec<DeviceInfo>,
    /// The start-up line, or why no GPU is usable.
    pub message: String,
}

/// The discovery state (STATE_*) now, without waiting or copying the
/// device list: cheap enough for the planner.
pub fn state() -> u32 {
    TABLE.share().state
}

/// Read the discovery table, waiting up to `wait_ms` while it is pending.
pub fn snapshot(wait_ms: u64) -> Snapshot {
    let mut waited = 0;
    loop {
        let t = TABLE.share();
        if t.state != STATE_PENDING || waited >= wait_ms {
            let devices = t.devices[..t.ndevices as usize]
                .iter()
                .map(|s| DeviceInfo {
                    ordinal: s.ordinal,
                    name: get_str(&s.name),
                    total_memory: s.total_memory,
                    values: s.values[..PROPERTIES.len()].to_vec(),
                })
                .collect();
            let message = if t.state == STATE_PENDING {
                "device discovery has not finished; is max_worker_processes large enough?".to_string()
            } else {
                get_str(&t.message)
            };
            return Snapshot { state: t.state, driver_version: t.driver_version, devices, message };
        }
        drop(t);
        // SAFETY: plain sleep in the backend's main thread.
        unsafe { pg_sys::pg_usleep(10_000) };
        pgrx::check_for_interrupts!();
        waited += 10;
    }
}
