//! The service side: listen, open the engines, and serve each connection
//! on its own thread.  Requests are decoded in place from the connection's
//! shared region and answered into it (a larger region is created and
//! handed over when an answer does not fit).  A panic while serving a
//! request becomes an error reply; a request can never take the service
//! down, and a client that disappears only ends its own thread (its join
//! sessions and their device memory are dropped with it).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use std::os::fd::OwnedFd;

use super::files::{self, SessionFiles};
use super::shm::{Header, MAGIC, Region, Socket};
use super::wire::{self, Reader, Writer};
use super::{CPU_ENGINE, PROTOCOL_VERSION, ServiceInfo, op, status};
use crate::agg::AggGroups;
use crate::clock::{DeviceClock, Lap, Phase, Timer};
use crate::cpu::CpuEngine;
use crate::engine::{ColumnData, CompareOp, Engine, EvalOutput, FilterColumn, FilterResult};
use crate::error::DeviceError;
use crate::fileread::{Direct, FileAccess, Policy, ReadStats};
use crate::gpu::GpuEngine;
use crate::heapscan::{HeapProbed, HostHeap};
use crate::join::{Combos, JoinSession};

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Where it listens (relative paths are resolved against the working
    /// directory, the data directory for PostgreSQL processes).
    pub socket: PathBuf,
    /// The device-code cache.
    pub cache_dir: PathBuf,
    /// NVRTC library to use, if set.
    pub nvrtc_library: Option<String>,
    /// Open the GPUs (false: the CPU engine only, for machines without one).
    pub open_gpus: bool,
    /// Bytes of Arrow file columns each GPU keeps in device memory between
    /// queries: None for the default (a quarter of the device's memory),
    /// Some(0) to keep nothing.
    pub column_cache: Option<u64>,
    /// Bytes of device memory each GPU's work may take at once (the memory
    /// pool's budget, mempool.rs): None for the default, 90% of the
    /// device's memory.
    pub memory_budget: Option<u64>,
}

struct Engines {
    gpus: Vec<Result<&'static GpuEngine, DeviceError>>,
}

static CPU: CpuEngine = CpuEngine;
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
static REQUESTS: AtomicU64 = AtomicU64::new(0);
static SESSIONS: AtomicU64 = AtomicU64::new(0);
static STARTED: AtomicU64 = AtomicU64::new(0);
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static BYTES_IN: AtomicU64 = AtomicU64::new(0);
/// Per-engine counters: GPUs 0..MAX_GPUS, then the CPU engine.
const MAX_GPUS: usize = 16;
static WORK: [[AtomicU64; W_COUNTERS]; MAX_GPUS + 1] =
    [const { [const { AtomicU64::new(0) }; W_COUNTERS] }; MAX_GPUS + 1];
const W_REQUESTS: usize = 0;
const W_IN_FLIGHT: usize = 1;
const W_CHUNKS: usize = 2;
const W_BYTES_IN: usize = 3;
const W_ERRORS: usize = 4;
const W_SESSIONS: usize = 5;
const W_PLACED: usize = 6;
const W_COUNTERS: usize = 7;

/// An engine's busy clock: the wall time during which at least one
/// request was being served on it (the union of the requests' times, so
/// that requests served together count once).
struct Busy {
    /// Requests being served on the engine now.
    active: u64,
    /// When `active` last went from 0 to 1.
    since: Option<Instant>,
    /// Nanoseconds of the intervals that ended.
    total_ns: u64,
}

/// Per engine, as [`WORK`].
static BUSY: [Mutex<Busy>; MAX_GPUS + 1] =
    [const { Mutex::new(Busy { active: 0, since: None, total_ns: 0 }) }; MAX_GPUS + 1];

/// The place of engine `engine` (a GPU's number or [`CPU_ENGINE`]) among
/// the per-engine counters.
fn engine_slot(engine: u32) -> usize {
    if engine == CPU_ENGINE { MAX_GPUS } else { engine as usize }
}

/// A request on the engine at `slot` begins (true) or ends (false).
fn busy_mark(slot: usize, begins: bool) {
    let Some(b) = BUSY.get(slot) else { return };
    let mut b = b.lock().unwrap_or_else(|e| e.into_inner());
    if begins {
        b.active += 1;
        if b.active == 1 {
            b.since = Some(Instant::now());
        }
    } else if b.active > 0 {
        b.active -= 1;
        if b.active == 0
            && let Some(t) = b.since.take()
        {
            b.total_ns += t.elapsed().as_nanos() as u64;
        }
    }
}

/// The engine at `slot`'s busy time so far (ns), the interval under way
/// included.
fn busy_ns(slot: usize) -> u64 {
    let Some(b) = BUSY.get(slot) else { return 0 };
    let b = b.lock().unwrap_or_else(|e| e.into_inner());
    b.total_ns + b.since.map_or(0, |t| t.elapsed().as_nanos() as u64)
}

/// The counters of engine `engine` (a GPU's number or [`CPU_ENGINE`]).
fn work_counters_of(engine: u32) -> Option<&'static [AtomicU64; W_COUNTERS]> {
    WORK.get(engine_slot(engine))
}

/// The counters of the engine a request names (None: no engine's work).
fn work_of(h: &Header) -> Option<&'static [AtomicU64; W_COUNTERS]> {
    if matches!(h.op, op::HELLO | op::STATUS | op::PLACE) {
        return None;
    }
    work_counters_of(h.engine)
}

/// Count a join session opened (+1) or dropped (-1) on `engine`.
fn count_session(engine: u32, opened: bool) {
    if opened {
        SESSIONS.fetch_add(1, Ordering::Relaxed);
    } else {
        SESSIONS.fetch_sub(1, Ordering::Relaxed);
    }
    if let Some(w) = work_counters_of(engine) {
        if opened {
            w[W_SESSIONS].fetch_add(1, Ordering::Relaxed);
        } else {
            w[W_SESSIONS].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A GPU a scan may run on, with its load now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The GPU's number.
    pub gpu: u32,
    /// Requests being served on it plus join sessions open on it.
    pub load: u64,
    /// Scans placed on it so far.
    pub placed: u64,
}

/// The least-loaded candidate; among equally loaded ones, the one given
/// the fewest scans so far (scans starting together spread round-robin),
/// then the lowest number.
pub fn choose_gpu(candidates: &[Candidate]) -> Option<u32> {
    candidates.iter().min_by_key(|c| (c.load, c.placed, c.gpu)).map(|c| c.gpu)
}

fn work_counters(i: usize) -> super::EngineWork {
    let w = &WORK[i];
    let get = |k: usize| w[k].load(Ordering::Relaxed);
    super::EngineWork {
        requests: get(W_REQUESTS),
        in_flight: get(W_IN_FLIGHT),
        chunks: get(W_CHUNKS),
        bytes_in: get(W_BYTES_IN),
        errors: get(W_ERRORS),
        sessions: get(W_SESSIONS),
        placed: get(W_PLACED),
        busy_ns: busy_ns(i),
    }
}
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// The engines, once the opener thread has opened every GPU; until then
/// the service serves its CPU engine and status requests, and a request
/// for a GPU waits ([`engines`]).
static ENGINES: OnceLock<Engines> = OnceLock::new();

/// While the GPUs are being opened: when it began (ms since the epoch)
/// and each GPU found, as `GPUn (name, sm_XX)`.
static OPENING: Mutex<(u64, Vec<String>)> = Mutex::new((0, Vec::new()));

/// The engines, waiting for the opener (a GPU request that arrives while
/// the device code is being built: about a minute after an install).
fn engines() -> &'static Engines {
    loop {
        if let Some(e) = ENGINES.get() {
            return e;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// GPU `engine` of the service, waiting for the opener; None for the CPU
/// engine and for a GPU that could not be opened.
fn gpu_of(engine: u32) -> Option<&'static GpuEngine> {
    if engine == CPU_ENGINE {
        return None;
    }
    engines().gpus.get(engine as usize).and_then(|g| g.as_ref().ok().copied())
}

/// The service's GPUs, found by discovery (fast: no device code yet).
fn discover(config: &ServiceConfig) -> Vec<crate::discovery::DeviceInfo> {
    if !config.open_gpus {
        return Vec::new();
    }
    match crate::discovery::discover() {
        Ok(d) => d.devices,
        Err(e) => {
            eprintln!("pg_strom service: no GPU: {e}");
            Vec::new()
        }
    }
}

/// Open each GPU found: its context and device code (from the cache, or
/// built by NVRTC the first time: about a minute for all of it).
fn open_engines(config: &ServiceConfig, found: &[crate::discovery::DeviceInfo]) -> Engines {
    let gpus = found
        .iter()
        .map(|dev| {
            let t = std::time::Instant::now();
            let budget = config.memory_budget.unwrap_or(dev.total_memory / 10 * 9).min(dev.total_memory);
            let pool = crate::mempool::configure(dev.ordinal as usize, budget);
            let g = GpuEngine::open(dev, &config.cache_dir, config.nvrtc_library.as_deref());
            match &g {
                Ok(_) => eprintln!(
                    "pg_strom service: GPU{} ({}) ready in {} ms",
                    dev.ordinal,
                    dev.name,
                    t.elapsed().as_millis()
                ),
                Err(e) => eprintln!("pg_strom service: GPU{} ({}) cannot be used: {e}", dev.ordinal, dev.name),
            }
            if let Ok(g) = &g {
                g.columns.set_budget(config.column_cache.unwrap_or(dev.total_memory / 4));
            }
            g.map(|g| {
                let g: &'static GpuEngine = Box::leak(Box::new(g));
                // memory short: the column cache gives back what it
                // holds, and the idle session buffers and scratch arenas go;
                // then, while it is still short, the idle GPU store copies
                // (the least recently used first: a query rebuilds one)
                if let Some(p) = pool {
                    let ordinal = dev.ordinal;
                    p.set_relief(Box::new(move |fits| {
                        g.columns.clear();
                        g.shared_joins.cache_clear();
                        g.release_buffers();
                        g.release_scratch();
                        if !fits() {
                            for (id, bytes) in g.stores.evict_idle(fits) {
                                eprintln!(
                                    "pg_strom service: GPU{ordinal}: memory short: dropped the idle copy of GPU store table {} of database {} ({bytes} bytes); the next query that reads it builds it again",
                                    id.rel, id.db
                                );
                            }
                        }
                    }));
                }
                g
            })
        })
        .collect::<Vec<_>>();
    if gpus.iter().any(|g| g.is_ok()) {
        // GPUDirect SQL: cuFile opens now, so the log says which path
        // Arrow columns will take (its own log: CUFILE_LOGFILE_PATH, set
        // by the keeper to the device-code folder's cufile.log)
        match crate::cufile::cufile() {
            Ok(c) => eprintln!("pg_strom service: GPUDirect SQL: {}, {}", c.name(), c.mode.describe()),
            Err(e) => eprintln!("pg_strom service: GPUDirect SQL unavailable ({e}): reads go through pinned buffers"),
        }
    }
    Engines { gpus }
}

/// Run the service: listen at `config.socket`, open the engines, serve
/// until the process is killed.  Returns only when it cannot listen.
///
/// The GPUs open on a thread of their own while connections are served:
/// the CPU engine and status requests are answered at once, a request for
/// a GPU waits until it is open.  (Building the device code after an
/// install takes about a minute; the planner of a backend plans no GPU
/// until it is built, so user queries do not wait for it.)
pub fn serve(config: &ServiceConfig) -> Result<(), DeviceError> {
    // the service's CPU engine keeps copies of GPU store tables, as its
    // GPUs do
    crate::devstore::keep_host_copies(true);
    // listening first: clients that connect while the GPUs are found wait
    // in the backlog instead of failing
    let listener = Socket::listen(&config.socket)?;
    let now_ms = || SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    STARTED.store(now_ms() / 1000, Ordering::Relaxed);
    let found = discover(config);
    *OPENING.lock().unwrap_or_else(|p| p.into_inner()) =
        (now_ms(), found.iter().map(|d| format!("GPU{} ({}, {})", d.ordinal, d.name, d.arch())).collect());
    let opener_config = config.clone();
    let opener = std::thread::Builder::new().name("pg_strom open".into()).spawn(move || {
        let _ = ENGINES.set(open_engines(&opener_config, &found));
    });
    if let Err(e) = opener {
        eprintln!("pg_strom service: cannot start the thread that opens the GPUs: {e}; opening them first");
        let _ = ENGINES.set(open_engines(config, &discover(config)));
    }
    loop {
        let conn = match listener.accept() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("pg_strom service: {e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
                continue;
            }
        };
        CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        let spawned = std::thread::Builder::new().name("pg_strom conn".into()).spawn(move || {
            Connection { sock: conn, region: None, sessions: HashMap::new(), next_session: 1 }.run();
            CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
        });
        if let Err(e) = spawned {
            eprintln!("pg_strom service: cannot start a connection thread: {e}");
            CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The service's counters now; while the GPUs are being opened, each GPU
/// found says so (and for how long) in `gpus`.
fn info_now() -> ServiceInfo {
    if let Some(e) = ENGINES.get() {
        return info(e);
    }
    let empty = Engines { gpus: Vec::new() };
    let mut i = info(&empty);
    let (since, names) = OPENING.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let secs = now.saturating_sub(since) / 1000;
    i.gpus = names.iter().map(|n| Err(format!("{n}: {OPENING_TEXT} ({secs} s so far)"))).collect();
    i
}

/// What a GPU being opened says in `gpus` (clients recognize it).
pub const OPENING_TEXT: &str = "being opened: the device code is loaded, or built once after an install or upgrade";

/// The service's counters now.
fn info(engines: &Engines) -> ServiceInfo {
    // GPUDirect SQL's state, for a service with a GPU
    let cufile = engines.gpus.iter().any(|g| g.is_ok()).then(crate::cufile::cufile);
    ServiceInfo {
        pid: std::process::id(),
        started: STARTED.load(Ordering::Relaxed),
        connections: CONNECTIONS.load(Ordering::Relaxed),
        requests: REQUESTS.load(Ordering::Relaxed),
        sessions: SESSIONS.load(Ordering::Relaxed),
        gpus: engines
            .gpus
            .iter()
            .map(|g| match g {
                Ok(g) => Ok(g.describe()),
                Err(e) => Err(e.to_string()),
            })
            .collect(),
        in_flight: IN_FLIGHT.load(Ordering::Relaxed),
        bytes_in: BYTES_IN.load(Ordering::Relaxed),
        errors: ERRORS.load(Ordering::Relaxed),
        rss: resident_bytes(),
        gpu_memory_used: engines
            .gpus
            .iter()
            .map(|g| g.as_ref().ok().and_then(|g| g.memory_used().ok()).unwrap_or(0))
            .collect(),
        gpu_cache: engines.gpus.iter().map(|g| g.as_ref().map(|g| g.columns.stats()).unwrap_or_default()).collect(),
        gpu_pool: (0..engines.gpus.len())
            .map(|i| crate::mempool::pool(i).map(|p| p.stats()).unwrap_or_default())
            .collect(),
        work: (0..engines.gpus.len().min(MAX_GPUS)).chain([MAX_GPUS]).map(work_counters).collect(),
        gpudirect: cufile.as_ref().map(|r| r.map(|c| c.mode).map_err(|e| e.to_string())),
        cufile: cufile.and_then(|r| r.ok()).map(|c| c.name()).unwrap_or_default(),
    }
}

/// What the kernels took out of a heap request's blocks, on a GPU or in
/// host memory: the rows, the refused blocks (indexes into the request's
/// list), each block's tuples, and what an answer reads from them.
trait TakenHeap {
    fn nrows(&self) -> u32;
    fn refused(&self) -> &[usize];
    fn counts(&self) -> &[u32];
    /// The values of a variable-length column at `rows` (None: NULL).
    fn var_values_at(&self, column: usize, rows: &[u32]) -> Result<crate::heapscan::VarValues, DeviceError>;
    /// The tuples of `rows` (ascending), as the pages hold them; the
    /// columns are not read after this (a GPU copies the tuples in their
    /// arena).
    fn tuples(&mut self, rows: Vec<u32>) -> Result<crate::heapscan::HeapTuples, DeviceError>;
}

/// A heap request's blocks taken apart in a GPU's memory.
struct GpuTaken<'g> {
    heap: crate::heapscan::DeviceHeap<'g>,
    gpu: &'g crate::gpu::GpuEngine,
    blcksz: u32,
}

impl TakenHeap for GpuTaken<'_> {
    fn nrows(&self) -> u32 {
        self.heap.nrows
    }
    fn refused(&self) -> &[usize] {
        &self.heap.refused
    }
    fn counts(&self) -> &[u32] {
        &self.heap.counts
    }
    fn var_values_at(&self, column: usize, rows: &[u32]) -> Result<crate::heapscan::VarValues, DeviceError> {
        self.heap.var_values_at(self.gpu, column, rows)
    }
    fn tuples(&mut self, rows: Vec<u32>) -> Result<crate::heapscan::HeapTuples, DeviceError> {
        self.heap.tuples(self.gpu, self.blcksz, rows)
    }
}

/// A heap request's blocks taken apart in host memory (the CPU engine).
struct HostTaken<'a> {
    heap: &'a HostHeap,
    pages: &'a [u8],
    blcksz: u32,
}

impl TakenHeap for HostTaken<'_> {
    fn nrows(&self) -> u32 {
        self.heap.nrows
    }
    fn refused(&self) -> &[usize] {
        &self.heap.refused
    }
    fn counts(&self) -> &[u32] {
        &self.heap.counts
    }
    fn var_values_at(&self, column: usize, rows: &[u32]) -> Result<crate::heapscan::VarValues, DeviceError> {
        Ok(self.heap.var_values_at(column, rows))
    }
    fn tuples(&mut self, rows: Vec<u32>) -> Result<crate::heapscan::HeapTuples, DeviceError> {
        self.heap.tuples(self.pages, self.blcksz, rows)
    }
}

/// Join and aggregate (`agg`) or only join the rows a heap request's
/// blocks gave (`taken`); the refused blocks by their numbers in the
/// file; for an aggregation the values of `key_columns` at the groups'
/// representative rows (of the heap rows, the groups' first source), for
/// a join each block's tuple count and the tuples its combinations read.
fn heap_probed(
    s: &mut Session,
    cols: &[ColumnData<'_>],
    taken: &mut dyn TakenHeap,
    blocks: &[u32],
    agg: bool,
    key_columns: &[u32],
) -> Result<HeapProbed, DeviceError> {
    let nrows = taken.nrows();
    let fallback = taken.refused().iter().map(|&i| blocks[i]).collect();
    // (the backend may drop this answer: the inner rows its rows match
    // are then forgotten by JOIN_RESTORE_MATCHED)
    s.join.save_matched()?;
    if !agg {
        let combos = if nrows == 0 { Combos::default() } else { s.join.probe(cols, nrows, None)? };
        let tuples = taken.tuples(crate::heapscan::combo_outer_rows(&combos))?;
        return Ok(HeapProbed {
            combos,
            counts: taken.counts().to_vec(),
            nrows,
            fallback,
            tuples,
            ..HeapProbed::default()
        });
    }
    let groups = if nrows == 0 { AggGroups::default() } else { s.join.probe_agg(cols, nrows, None)? };
    if let Some(g) = groups.exceptions.iter().position(|&e| e) {
        // an exception's value is PostgreSQL's to compute, at rows the
        // backend does not have: its blocks go through the buffer manager
        return Err(DeviceError::NeedsCpu { row: groups.row(0, g) });
    }
    let mut keys = Vec::new();
    if !key_columns.is_empty() && groups.count > 0 {
        let rows = &groups.rows[..groups.count];
        let mut per_column = Vec::with_capacity(key_columns.len());
        for &c in key_columns {
            let values = taken.var_values_at(c as usize, rows)?;
            if values.len() != rows.len() {
                return Err(DeviceError::InvalidRequest(format!(
                    "{} key values for {} groups",
                    values.len(),
                    rows.len()
                )));
            }
            per_column.push(values.into_iter());
        }
        // group-major, as HeapProbed::keys lies (moved, not copied)
        keys.reserve(groups.count * key_columns.len());
        for _ in 0..groups.count {
            keys.extend(per_column.iter_mut().map(|column| column.next().flatten()));
        }
    }
    Ok(HeapProbed { groups, nrows, fallback, keys, ..HeapProbed::default() })
}

/// This process's resident memory (/proc/self/statm), 0 when unknown.
fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64
}

enum Answer {
    Empty,
    Info(ServiceInfo),
    Evals(Vec<EvalOutput>),
    Filter(FilterResult),
    Session(u32, u64),
    Placed(u32),
    FileOpened(u32, FileAccess),
    ReadStats(ReadStats),
    Combos(Combos),
    Groups(AggGroups),
    HeapGroups(HeapProbed),
    Clock(DeviceClock),
    Flag(bool),
    /// Kept rows, and how many of their bytes to send (all, or their
    /// summary).
    Rows(Option<(std::sync::Arc<Vec<u8>>, usize)>),
    Store(Option<crate::devstore::StoreState>),
    Bits(Vec<Vec<u64>>),
}

impl Answer {
    fn put(&self, w: &mut Writer<'_>) {
        match self {
            Answer::Empty => {}
            Answer::Info(i) => i.put(w),
            Answer::Evals(os) => {
                w.u32(os.len() as u32);
                for o in os {
                    wire::put_eval_output(w, o);
                }
            }
            Answer::Filter(f) => wire::put_filter_result(w, f),
            Answer::Session(id, bytes) => {
                w.u32(*id);
                w.u64(*bytes);
            }
            Answer::Placed(gpu) => w.u32(*gpu),
            Answer::Flag(b) => w.u32(*b as u32),
            Answer::Store(s) => wire::put_store_state(w, s.as_ref()),
            Answer::Rows(rows) => w.opt(rows.as_ref().map(|(r, n)| &r[..*n]), |w, r| w.blob(r)),
            Answer::FileOpened(n, access) => {
                w.u32(*n);
                wire::put_file_access(w, access);
            }
            Answer::ReadStats(st) => {
                for v in [st.cufile_bytes, st.pinned_bytes, st.cached_bytes] {
                    w.u64(v);
                }
            }
            Answer::Combos(c) => wire::put_combos(w, c),
            Answer::Groups(g) => wire::put_groups(w, g),
            Answer::HeapGroups(p) => wire::put_heap_probed(w, p),
            Answer::Clock(c) => wire::put_clock(w, c),
            Answer::Bits(b) => wire::put_bit_lists(w, b),
        }
    }
}

struct Connection {
    sock: Socket,
    region: Option<Region>,
    sessions: HashMap<u32, Session>,
    next_session: u32,
}

/// A join session with the engine it runs on (a GPU's index or
/// [`CPU_ENGINE`]) and the files it reads itself.
struct Session {
    join: Box<dyn JoinSession + 'static>,
    engine: u32,
    files: SessionFiles,
    /// The engine's work for the session outside the join session's own
    /// calls (reading file columns and heap blocks, taking heap tuples
    /// apart), since JOIN_CLOCK last asked.
    clock: DeviceClock,
}

impl Drop for Connection {
    fn drop(&mut self) {
        for s in self.sessions.values() {
            count_session(s.engine, false);
        }
    }
}

/// Whether the peer of socket `fd` hung up (a client that went away, as
/// a cancelled backend's does while its request is still served).
fn peer_gone(fd: std::os::fd::RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: one valid pollfd; zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR) != 0
}

impl Connection {
    fn run(&mut self) {
        // a request waiting for device memory gives up when its client goes
        let fd = self.sock.raw_fd();
        crate::mempool::set_give_up(Some(Box::new(move || peer_gone(fd))));
        loop {
            let (h, fd) = match self.sock.recv() {
                Ok(m) => m,
                Err(_) => return, // the client went away
            };
            REQUESTS.fetch_add(1, Ordering::Relaxed);
            BYTES_IN.fetch_add(h.len, Ordering::Relaxed);
            let status_request = h.op == op::STATUS;
            if !status_request {
                IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
            }
            let work = work_of(&h);
            if let Some(w) = work {
                busy_mark(engine_slot(h.engine), true);
                w[W_REQUESTS].fetch_add(1, Ordering::Relaxed);
                w[W_IN_FLIGHT].fetch_add(1, Ordering::Relaxed);
                w[W_BYTES_IN].fetch_add(h.len, Ordering::Relaxed);
                if matches!(h.op, op::EVAL_MULTI | op::FILTER | op::JOIN_PROBE | op::JOIN_PROBE_AGG) {
                    w[W_CHUNKS].fetch_add(1, Ordering::Relaxed);
                }
            }
            // FILE_OPEN carries a file; any other request, a new region
            let (fd, file) = if h.op == op::FILE_OPEN { (None, fd) } else { (fd, None) };
            let answer = match fd.map(|fd| Region::map(fd, h.region as usize)).transpose() {
                Err(e) => Err(e),
                Ok(new) => {
                    if let Some(r) = new {
                        self.region = Some(r);
                    }
                    catch_unwind(AssertUnwindSafe(|| self.handle(&h, file))).unwrap_or_else(|p| {
                        let why = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown panic".into());
                        Err(DeviceError::Service(format!("request failed inside the service: {why}")))
                    })
                }
            };
            if !status_request {
                IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
            }
            // a GPU whose context faulted can do no more work: the client
            // hears which GPU and why, then the service exits and its
            // keeper starts a new one (a new context); other connections
            // see the service go, as after a crash
            let (answer, faulted) = match answer {
                Err(e) if e.is_sticky() && h.engine != CPU_ENGINE => {
                    let device = match gpu_of(h.engine) {
                        Some(g) => g.describe(),
                        None => format!("GPU{}", h.engine),
                    };
                    let lost = DeviceError::DeviceLost { device, cause: e.to_string() };
                    (Err(lost.clone()), Some(lost))
                }
                other => (other, None),
            };
            if answer.is_err() {
                ERRORS.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(w) = work {
                busy_mark(engine_slot(h.engine), false);
                w[W_IN_FLIGHT].fetch_sub(1, Ordering::Relaxed);
                if answer.is_err() {
                    w[W_ERRORS].fetch_add(1, Ordering::Relaxed);
                }
            }
            let replied = self.reply(answer);
            if let Some(lost) = faulted {
                eprintln!("pg_strom service: {lost}; the service exits and restarts with a new CUDA context");
                // SAFETY: leaving at once: the context is unusable, and
                // other threads' work on it can only fail.
                unsafe { libc::_exit(3) };
            }
            if replied.is_err() {
                return;
            }
        }
    }

    fn engine(&self, n: u32) -> Result<&'static dyn Engine, DeviceError> {
        if n == CPU_ENGINE {
            return Ok(&CPU);
        }
        match engines().gpus.get(n as usize) {
            Some(Ok(g)) => Ok(*g),
            Some(Err(e)) => Err(DeviceError::Unavailable(format!("GPU{n} could not be opened by the service: {e}"))),
            None => Err(DeviceError::Unavailable(format!("the GPU service has no GPU{n}"))),
        }
    }

    /// The GPU a scan runs on: the least-loaded usable GPU of `wanted`
    /// (of every usable GPU when none of `wanted` is usable).
    fn place(&self, wanted: &[u32]) -> Result<u32, DeviceError> {
        let engines = engines();
        let usable = |g: u32| matches!(engines.gpus.get(g as usize), Some(Ok(_))) && (g as usize) < MAX_GPUS;
        let mut gpus: Vec<u32> = wanted.iter().copied().filter(|&g| usable(g)).collect();
        if gpus.is_empty() {
            gpus = (0..engines.gpus.len() as u32).filter(|&g| usable(g)).collect();
        }
        let candidates: Vec<Candidate> = gpus
            .iter()
            .map(|&gpu| {
                let w = work_counters(gpu as usize);
                Candidate { gpu, load: w.in_flight + w.sessions, placed: w.placed }
            })
            .collect();
        let gpu = choose_gpu(&candidates)
            .ok_or_else(|| DeviceError::Unavailable("the GPU service has no usable GPU".into()))?;
        WORK[gpu as usize][W_PLACED].fetch_add(1, Ordering::Relaxed);
        Ok(gpu)
    }

    fn session(&mut self, id: u32) -> Result<&mut Session, DeviceError> {
        self.sessions.get_mut(&id).ok_or_else(|| DeviceError::InvalidRequest(format!("no join session {id}")))
    }

    fn handle(&mut self, h: &Header, file: Option<OwnedFd>) -> Result<Answer, DeviceError> {
        let region = self.region.as_ref().ok_or_else(|| DeviceError::InvalidRequest("no shared region".into()))?;
        let len = usize::try_from(h.len).ok().filter(|&l| l <= region.size());
        let len = len.ok_or_else(|| DeviceError::InvalidRequest("payload longer than the region".into()))?;
        // SAFETY-free view: the client waits for our reply and does not
        // write the region meanwhile.  The slice is detached from
        // `self.region`'s borrow so sessions can be used while reading.
        // SAFETY: the mapping lives until a reply hands over a new region,
        // which happens after this function returns.
        let payload: &[u8] = unsafe { std::slice::from_raw_parts(region.bytes().as_ptr(), len) };
        let mut r = Reader::new(payload);
        match h.op {
            op::HELLO => {
                let v = r.u32()?;
                if v != PROTOCOL_VERSION {
                    return Err(DeviceError::Service(format!(
                        "protocol version {v} requested, the service speaks {PROTOCOL_VERSION}; restart the server after an upgrade"
                    )));
                }
                // a GPU's connection hears about the GPUs once they are
                // open (it waits); the CPU engine's, at once
                if h.engine == CPU_ENGINE { Ok(Answer::Info(info_now())) } else { Ok(Answer::Info(info(engines()))) }
            }
            op::STATUS => Ok(Answer::Info(info_now())),
            op::EVAL_MULTI => {
                let eng = self.engine(h.engine)?;
                let n = r.u32()? as usize;
                let programs = (0..n).map(|_| wire::get_program(&mut r)).collect::<Result<Vec<_>, _>>()?;
                let params = wire::get_params(&mut r)?;
                let nrows = r.u32()?;
                let cols = wire::get_columns(&mut r)?;
                let outs = programs
                    .iter()
                    .map(|p| eng.eval_program(p, &cols, &params, nrows))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Answer::Evals(outs))
            }
            op::FILTER => {
                let eng = self.engine(h.engine)?;
                let kind = r.u8()?;
                let values = r.blob()?;
                let constant = r.i64()?;
                let validity = r.opt(|r| r.blob())?;
                let op = CompareOp::ALL
                    .get(r.u32()? as usize)
                    .copied()
                    .ok_or_else(|| DeviceError::InvalidRequest("comparison operator".into()))?;
                let cast_err = || DeviceError::InvalidRequest("misaligned filter column".into());
                let col = match kind {
                    0 => FilterColumn::Int32 {
                        values: wire::cast(values).ok_or_else(cast_err)?,
                        constant: constant as i32,
                    },
                    1 => FilterColumn::Int64 { values: wire::cast(values).ok_or_else(cast_err)?, constant },
                    _ => FilterColumn::Float64 {
                        values: wire::cast(values).ok_or_else(cast_err)?,
                        constant: f64::from_bits(constant as u64),
                    },
                };
                Ok(Answer::Filter(eng.filter_compare(&col, validity, op)?))
            }
            op::JOIN_CACHE_KEEP => {
                let eng = self.engine(h.engine)?;
                let share = r.u64()?;
                let key = r.blob()?;
                let rows = r.blob()?;
                let spec = wire::get_join_spec(&mut r)?;
                Ok(Answer::Flag(eng.join_cache_keep(&spec, share, key, rows)?))
            }
            op::JOIN_CACHE_ROWS => {
                let eng = self.engine(h.engine)?;
                let key = r.blob()?;
                // the kept rows themselves, written once into the answer
                Ok(Answer::Rows(eng.join_cache_rows_kept(key).map(|r| {
                    let n = r.len();
                    (r, n)
                })))
            }
            op::JOIN_CACHE_SUMMARY => {
                let eng = self.engine(h.engine)?;
                let key = r.blob()?;
                Ok(Answer::Rows(eng.join_cache_rows_kept(key).map(|r| {
                    let n = crate::join::summary_len(&r).unwrap_or(r.len());
                    (r, n)
                })))
            }
            op::JOIN_OPEN | op::JOIN_ATTACH | op::JOIN_OPEN_CACHED => {
                let eng = self.engine(h.engine)?;
                let key = r.u64()?;
                let cache_key = if h.op == op::JOIN_OPEN_CACHED { Some(r.blob()?) } else { None };
                let spec = wire::get_join_spec(&mut r)?;
                let s = if let Some(ck) = cache_key {
                    match eng.join_open_cached(&spec, ck, key)? {
                        Some(s) => s,
                        None => return Ok(Answer::Session(0, 0)),
                    }
                } else if h.op == op::JOIN_ATTACH {
                    match eng.join_attach(&spec, key)? {
                        Some(s) => s,
                        None => return Ok(Answer::Session(0, 0)),
                    }
                } else if key != 0 {
                    eng.join_open_shared(&spec, key)?
                } else {
                    eng.join_open(&spec)?
                };
                let id = self.next_session;
                self.next_session = self.next_session.wrapping_add(1).max(1);
                let bytes = s.inner_bytes() as u64;
                self.sessions.insert(
                    id,
                    Session {
                        join: s,
                        engine: h.engine,
                        files: SessionFiles::default(),
                        clock: DeviceClock::default(),
                    },
                );
                count_session(h.engine, true);
                Ok(Answer::Session(id, bytes))
            }
            op::JOIN_PROBE | op::JOIN_PROBE_AGG => {
                let nrows = r.u32()?;
                let selection = r.opt(|r| r.slice::<u32>())?;
                let store_rows = r.opt(wire::get_store_rows)?;
                let mut cols = wire::get_columns(&mut r)?;
                let s = self.session(h.session)?;
                s.join.set_store_rows(store_rows)?;
                // file columns: device memory of the GPU's column cache, or
                // bytes read now for the CPU engine
                let (mut _keep, mut host) = (Vec::new(), None);
                if cols.iter().any(|c| c.file.is_some()) {
                    let lap = Lap::start();
                    let read = Timer::start(Phase::Read);
                    match gpu_of(s.engine) {
                        Some(gpu) => {
                            gpu.make_current()?;
                            _keep = s.files.resolve_on_gpu(gpu, &mut cols, nrows)?;
                        }
                        _ => host = Some(s.files.read_for_host(&cols, nrows)?),
                    }
                    drop(read);
                    s.clock.add(&lap.stop());
                }
                let cols = match &host {
                    Some(h) => files::with_host(&cols, h),
                    None => cols,
                };
                if h.op == op::JOIN_PROBE {
                    Ok(Answer::Combos(s.join.probe(&cols, nrows, selection)?))
                } else {
                    Ok(Answer::Groups(s.join.probe_agg(&cols, nrows, selection)?))
                }
            }
            op::STORE_SYNC => {
                let batch = wire::get_store_sync(&mut r)?;
                let s = self.session(h.session)?;
                if let Some(gpu) = gpu_of(s.engine) {
                    gpu.make_current()?;
                }
                Ok(Answer::Store(s.join.store_sync(&batch.batch())?))
            }
            op::JOIN_PROBE_HEAP => {
                let file = r.u32()?;
                let agg = r.u8()? != 0;
                let layout = wire::get_heap_layout(&mut r)?;
                let blocks = r.slice::<u32>()?;
                let s = self.session(h.session)?;
                let lap = Lap::start();
                Ok(Answer::HeapGroups(match gpu_of(s.engine) {
                    Some(gpu) => {
                        gpu.make_current()?;
                        let (pages, _extents) = crate::clock::timed(Phase::Read, || {
                            s.files.read_blocks_to_gpu(gpu, file, blocks, layout.blcksz)
                        })?;
                        let heap = gpu.heap_deform(pages, blocks.len(), &layout)?;
                        s.clock.add(&lap.stop());
                        let cols: Vec<ColumnData<'_>> = heap
                            .columns
                            .iter()
                            .zip(&layout.types)
                            .map(|(&place, &type_id)| ColumnData {
                                type_id,
                                values: &[],
                                validity: None,
                                offsets: None,
                                file: None,
                                resident: Some(place),
                                store: None,
                            })
                            .collect();
                        let mut taken = GpuTaken { heap, gpu, blcksz: layout.blcksz };
                        heap_probed(s, &cols, &mut taken, blocks, agg, &layout.keys)?
                    }
                    _ => {
                        let pages =
                            crate::clock::timed(Phase::Read, || s.files.read_blocks(file, blocks, layout.blcksz))?;
                        let heap = HostHeap::deform(&pages, &layout)?;
                        s.clock.add(&lap.stop());
                        let cols = heap.column_data(&layout);
                        let mut taken = HostTaken { heap: &heap, pages: &pages, blcksz: layout.blcksz };
                        heap_probed(s, &cols, &mut taken, blocks, agg, &layout.keys)?
                    }
                }))
            }
            op::FILE_OPEN => {
                let file =
                    file.ok_or_else(|| DeviceError::InvalidRequest("no file descriptor came with FILE_OPEN".into()))?;
                let policy = wire::get_policy(&mut r)?;
                let s = self.session(h.session)?;
                // only a GPU reads into device memory
                let policy = if s.engine == CPU_ENGINE { Policy { direct: Direct::Off, ..policy } } else { policy };
                let (n, access) = s.files.open(file, &policy)?;
                Ok(Answer::FileOpened(n, access))
            }
            op::PLACE => {
                let wanted = (0..r.count()?).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
                Ok(Answer::Placed(self.place(&wanted)?))
            }
            op::FILE_STATS => Ok(Answer::ReadStats(self.session(h.session)?.files.read_stats())),
            op::JOIN_CLOCK => {
                let s = self.session(h.session)?;
                let mut c = std::mem::take(&mut s.clock);
                c.add(&s.join.take_clock()?);
                Ok(Answer::Clock(c))
            }
            op::JOIN_UNMATCHED => Ok(Answer::Combos(self.session(h.session)?.join.unmatched()?)),
            op::JOIN_UNMATCHED_AGG => Ok(Answer::Groups(self.session(h.session)?.join.unmatched_agg()?)),
            op::JOIN_RESET => {
                self.session(h.session)?.join.reset_matched()?;
                Ok(Answer::Empty)
            }
            op::JOIN_RESTORE_MATCHED => {
                let s = self.session(h.session)?;
                if let Some(gpu) = gpu_of(s.engine) {
                    gpu.make_current()?;
                }
                s.join.restore_matched()?;
                Ok(Answer::Empty)
            }
            op::JOIN_MATCHED_BITS => Ok(Answer::Bits(self.session(h.session)?.join.matched_bits()?)),
            op::JOIN_MERGE_MATCHED => {
                let bits = wire::get_bit_lists(&mut r)?;
                self.session(h.session)?.join.merge_matched(&bits)?;
                Ok(Answer::Empty)
            }
            op::INJECT_FAULT => {
                let after = r.u32()?;
                match gpu_of(h.engine) {
                    Some(g) => {
                        g.arm_fault(after);
                        eprintln!(
                            "pg_strom service: GPU{}: device fault armed after {after} kernel launches",
                            h.engine
                        );
                        Ok(Answer::Empty)
                    }
                    _ => Err(DeviceError::InvalidRequest(if h.engine == CPU_ENGINE {
                        "the CPU engine has no device to fault".into()
                    } else {
                        format!("the GPU service has no usable GPU{}", h.engine)
                    })),
                }
            }
            op::JOIN_CLOSE => {
                if let Some(s) = self.sessions.remove(&h.session) {
                    count_session(s.engine, false);
                }
                Ok(Answer::Empty)
            }
            other => Err(DeviceError::InvalidRequest(format!("unknown service operation {other}"))),
        }
    }

    /// Write the answer (or the error) into the region and send the header.
    fn reply(&mut self, answer: Result<Answer, DeviceError>) -> Result<(), DeviceError> {
        let put = |w: &mut Writer<'_>| match &answer {
            Ok(a) => a.put(w),
            Err(e) => wire::put_error(w, e),
        };
        let st = if answer.is_ok() { status::OK } else { status::ERROR };
        let mut new_region = None;
        let len = match self.region.as_mut() {
            None => 0, // nothing can be said without a region; the header's status tells
            Some(reg) => {
                let mut w = Writer::new(reg.bytes_mut());
                put(&mut w);
                let (len, overflowed) = (w.len(), w.overflowed());
                if overflowed {
                    let mut bigger = Region::create(len.next_power_of_two())?;
                    put(&mut Writer::new(bigger.bytes_mut()));
                    new_region = Some(bigger);
                }
                len
            }
        };
        let mut h = Header { magic: MAGIC, op: st, engine: 0, session: 0, len: len as u64, region: 0 };
        if let Some(r) = new_region {
            h.region = r.size() as u64;
            self.sock.send(&h, Some(r.fd()))?;
            self.region = Some(r);
            return Ok(());
        }
        self.sock.send(&h, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_go_to_the_least_loaded_gpu_then_round_robin() {
        let c = |gpu, load, placed| Candidate { gpu, load, placed };
        assert_eq!(choose_gpu(&[]), None);
        assert_eq!(choose_gpu(&[c(3, 9, 9)]), Some(3));
        // the least loaded wins whatever it was given before
        assert_eq!(choose_gpu(&[c(0, 2, 0), c(1, 1, 50)]), Some(1));
        // equal load: the one given fewer scans
        assert_eq!(choose_gpu(&[c(0, 0, 4), c(1, 0, 3), c(2, 0, 3)]), Some(1));
        // scans starting together on idle GPUs spread over all of them
        let mut placed = [0u64; 4];
        let mut order = Vec::new();
        for _ in 0..8 {
            let cands: Vec<_> = (0..4).map(|g| c(g, 0, placed[g as usize])).collect();
            let g = choose_gpu(&cands).unwrap();
            placed[g as usize] += 1;
            order.push(g);
        }
        assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3]);
    }
}
