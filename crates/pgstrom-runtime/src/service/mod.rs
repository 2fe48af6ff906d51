//! The GPU service: one process that owns the GPUs (a CUDA context per
//! device, the loaded device code) and runs device code for every backend
//! and parallel worker of the cluster.
//!
//! - [`shm`]: the transport (a SOCK_SEQPACKET socket for small headers,
//!   memfd regions shared by both processes for the payloads).
//! - [`wire`]: the payload encoding.
//! - [`server`]: the service side (a thread per connection).
//! - [`client`]: [`client::ServiceEngine`], an [`crate::Engine`] whose
//!   work runs in the service, so the executor cannot tell it from an
//!   in-process engine.
//!
//! The service knows nothing of PostgreSQL: the extension starts it (a
//! process forked by a background worker, so its crash never takes the
//! cluster through crash recovery) and restarts it when it dies; backends
//! that were using it get [`crate::DeviceError::ServiceLost`].

pub mod client;
pub mod files;
pub mod server;
pub mod shm;
pub mod wire;

/// Protocol version (HELLO).
pub const PROTOCOL_VERSION: u32 = 19;
/// The engine number of the CPU engine (GPUs are 0..n).
pub const CPU_ENGINE: u32 = u32::MAX;

/// Operations of a request header.
pub mod op {
    /// Version in, engines out.
    pub const HELLO: u32 = 1;
    // 2: the single-program evaluation of protocol 2 (now EVAL_MULTI)
    /// The filter kernels (self-test).
    pub const FILTER: u32 = 3;
    /// Load a join's inner relations (kept for JOIN_ATTACH under the
    /// request's share key, unless 0); a session number out.
    pub const JOIN_OPEN: u32 = 4;
    /// Join a chunk.
    pub const JOIN_PROBE: u32 = 5;
    /// Join and aggregate a chunk.
    pub const JOIN_PROBE_AGG: u32 = 6;
    /// Unmatched inner rows.
    pub const JOIN_UNMATCHED: u32 = 7;
    /// Unmatched inner rows, aggregated.
    pub const JOIN_UNMATCHED_AGG: u32 = 8;
    /// Forget matched inner rows.
    pub const JOIN_RESET: u32 = 9;
    /// Drop a session.
    pub const JOIN_CLOSE: u32 = 10;
    /// The service's counters.
    pub const STATUS: u32 = 11;
    /// Hand a join session an open file (its descriptor comes with the
    /// header) and the storage policy to read it by; the file's number
    /// and whether cuFile reads it out.
    pub const FILE_OPEN: u32 = 12;
    /// Make a GPU fault after the given number of kernel launches (tests
    /// of fault handling; superusers only on the SQL side).
    pub const INJECT_FAULT: u32 = 13;
    /// Evaluate device programs over one chunk (one, or a scan's filter
    /// and its GPU Projection).
    pub const EVAL_MULTI: u32 = 14;
    /// The bytes a join session's files moved, by storage path.
    pub const FILE_STATS: u32 = 15;
    /// Choose the GPU a scan runs on: the least-loaded of the candidates
    /// given (see `server::choose_gpu`); its number out.
    pub const PLACE: u32 = 16;
    /// Read heap blocks of a session's file, take their tuples apart and
    /// join and aggregate them, or only join them (the heap direct path);
    /// the groups (or the combinations with each block's tuple count) and
    /// the blocks refused out.
    pub const JOIN_PROBE_HEAP: u32 = 17;
    /// The time the engine worked for a join session since the last
    /// time asked, by phase (crate::clock).
    pub const JOIN_CLOCK: u32 = 18;
    /// A join session over the inner relations another session of the
    /// same query loaded with JOIN_OPEN under the request's share key; a
    /// session number out, 0 when the service holds no such build.
    pub const JOIN_ATTACH: u32 = 19;
    /// Keep the build a session holds under the request's share key across
    /// queries, under the request's cache key, with the rows given; 1 out
    /// when kept.
    pub const JOIN_CACHE_KEEP: u32 = 20;
    /// The rows kept with the build under the request's cache key, if any.
    pub const JOIN_CACHE_ROWS: u32 = 21;
    /// A join session over the build kept under the request's cache key
    /// (kept from now on also under its share key); session 0 when none.
    pub const JOIN_OPEN_CACHED: u32 = 22;
    /// Bring the session's engine's copy of a GPU store table up to date
    /// by a batch (devstore.rs); where the copy stands out (none: the
    /// engine keeps no copies).
    pub const STORE_SYNC: u32 = 23;
    /// Back to the matched inner rows of RIGHT and FULL depths as they
    /// were before the session's last heap direct request (its answer was
    /// dropped: JoinSession::restore_matched).
    pub const JOIN_RESTORE_MATCHED: u32 = 24;
    /// The session's matched inner rows, as bits
    /// (JoinSession::matched_bits).
    pub const JOIN_MATCHED_BITS: u32 = 25;
    /// Mark matched the inner rows the payload's bits name
    /// (JoinSession::merge_matched).
    pub const JOIN_MERGE_MATCHED: u32 = 26;
    /// The summary of the rows kept with the build under the request's
    /// cache key (their leading bytes, Engine::join_cache_summary), if any.
    pub const JOIN_CACHE_SUMMARY: u32 = 27;
}

/// Reply status words.
pub mod status {
    /// The payload is the answer.
    pub const OK: u32 = 0;
    /// The payload is an error.
    pub const ERROR: u32 = 1;
}

/// What the service says about itself (HELLO and STATUS).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceInfo {
    /// Its process id.
    pub pid: u32,
    /// Seconds since the epoch when it started.
    pub started: u64,
    /// Connections open now.
    pub connections: u64,
    /// Requests served since it started.
    pub requests: u64,
    /// Join sessions open now.
    pub sessions: u64,
    /// Per GPU: Ok(description) or Err(why it could not be opened).
    pub gpus: Vec<Result<String, String>>,
    /// Requests being served now (the queue depth).
    pub in_flight: u64,
    /// Payload bytes received (chunks, inner relations, programs).
    pub bytes_in: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// Its resident memory, in bytes.
    pub rss: u64,
    /// Per GPU: device memory in use, in bytes (0 when unknown).
    pub gpu_memory_used: Vec<u64>,
    /// Per GPU: its column cache (default counters for a GPU not opened).
    pub gpu_cache: Vec<crate::colcache::CacheStats>,
    /// Per GPU: its device memory pool (budget, reserved, waits).
    pub gpu_pool: Vec<crate::mempool::PoolStats>,
    /// Per engine: each GPU's work, then the CPU engine's (last).
    pub work: Vec<EngineWork>,
    /// GPUDirect SQL: cuFile's mode, or why it cannot be used (None when
    /// the service has no GPU).
    pub gpudirect: Option<Result<crate::cufile::Mode, String>>,
    /// cuFile's version and library, when it opened.
    pub cufile: String,
}

/// The work one engine of the service did (requests naming it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineWork {
    /// Requests served.
    pub requests: u64,
    /// Requests being served now (its queue depth).
    pub in_flight: u64,
    /// Chunks evaluated or joined.
    pub chunks: u64,
    /// Payload bytes received.
    pub bytes_in: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// Join sessions open on it now.
    pub sessions: u64,
    /// Scans placed on it ([`op::PLACE`]) since the service started.
    pub placed: u64,
    /// Wall time (ns) during which at least one request was being served
    /// on it, since the service started.
    pub busy_ns: u64,
}

impl ServiceInfo {
    fn put(&self, w: &mut wire::Writer<'_>) {
        w.u32(self.pid);
        w.u64(self.started);
        w.u64(self.connections);
        w.u64(self.requests);
        w.u64(self.sessions);
        w.u64(self.gpus.len() as u64);
        for g in &self.gpus {
            match g {
                Ok(d) => {
                    w.u8(1);
                    w.str(d)
                }
                Err(e) => {
                    w.u8(0);
                    w.str(e)
                }
            }
        }
        w.u64(self.in_flight);
        w.u64(self.bytes_in);
        w.u64(self.errors);
        w.u64(self.rss);
        w.u64(self.gpu_memory_used.len() as u64);
        self.gpu_memory_used.iter().for_each(|m| w.u64(*m));
        w.u64(self.work.len() as u64);
        for e in &self.work {
            for v in [e.requests, e.in_flight, e.chunks, e.bytes_in, e.errors, e.sessions, e.placed, e.busy_ns] {
                w.u64(v);
            }
        }
        w.u64(self.gpu_cache.len() as u64);
        for c in &self.gpu_cache {
            for v in [c.budget, c.bytes, c.buffers, c.hits, c.misses, c.bytes_read, c.evictions, c.cufile_bytes] {
                w.u64(v);
            }
        }
        w.u64(self.gpu_pool.len() as u64);
        for p in &self.gpu_pool {
            for v in [p.budget, p.reserved, p.peak, p.waits, p.failures] {
                w.u64(v);
            }
        }
        match &self.gpudirect {
            None => w.u8(0),
            Some(Ok(crate::cufile::Mode::Compat)) => w.u8(1),
            Some(Ok(crate::cufile::Mode::PeerToPeer)) => w.u8(2),
            Some(Err(e)) => {
                w.u8(3);
                w.str(e)
            }
        }
        w.str(&self.cufile);
    }

    fn get(r: &mut wire::Reader<'_>) -> Result<ServiceInfo, crate::DeviceError> {
        let pid = r.u32()?;
        let started = r.u64()?;
        let connections = r.u64()?;
        let requests = r.u64()?;
        let sessions = r.u64()?;
        let gpus = (0..r.count()?)
            .map(|_| Ok(if r.u8()? == 1 { Ok(r.string()?) } else { Err(r.string()?) }))
            .collect::<Result<_, crate::DeviceError>>()?;
        let in_flight = r.u64()?;
        let bytes_in = r.u64()?;
        let errors = r.u64()?;
        let rss = r.u64()?;
        let gpu_memory_used = (0..r.count()?).map(|_| r.u64()).collect::<Result<_, _>>()?;
        let work = (0..r.count()?)
            .map(|_| {
                Ok(EngineWork {
                    requests: r.u64()?,
                    in_flight: r.u64()?,
                    chunks: r.u64()?,
                    bytes_in: r.u64()?,
                    errors: r.u64()?,
                    sessions: r.u64()?,
                    placed: r.u64()?,
                    busy_ns: r.u64()?,
                })
            })
            .collect::<Result<_, crate::DeviceError>>()?;
        let gpu_cache = (0..r.count()?)
            .map(|_| {
                Ok(crate::colcache::CacheStats {
                    budget: r.u64()?,
                    bytes: r.u64()?,
                    buffers: r.u64()?,
                    hits: r.u64()?,
                    misses: r.u64()?,
                    bytes_read: r.u64()?,
                    evictions: r.u64()?,
                    cufile_bytes: r.u64()?,
                })
            })
            .collect::<Result<_, crate::DeviceError>>()?;
        let gpu_pool = (0..r.count()?)
            .map(|_| {
                Ok(crate::mempool::PoolStats {
                    budget: r.u64()?,
                    reserved: r.u64()?,
                    peak: r.u64()?,
                    waits: r.u64()?,
                    failures: r.u64()?,
                })
            })
            .collect::<Result<_, crate::DeviceError>>()?;
        let gpudirect = match r.u8()? {
            0 => None,
            1 => Some(Ok(crate::cufile::Mode::Compat)),
            2 => Some(Ok(crate::cufile::Mode::PeerToPeer)),
            _ => Some(Err(r.string()?)),
        };
        let cufile = r.string()?;
        Ok(ServiceInfo {
            pid,
            started,
            connections,
            requests,
            sessions,
            gpus,
            in_flight,
            bytes_in,
            errors,
            rss,
            gpu_memory_used,
            gpu_cache,
            gpu_pool,
            work,
            gpudirect,
            cufile,
        })
    }
}
