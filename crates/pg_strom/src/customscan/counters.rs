//! The counters EXPLAIN ANALYZE shows for a device node.  Each process
//! counts its own; in a parallel plan every process also adds them to a
//! [`SharedCounters`] at the head of the node's DSM area, and the leader
//! reads the sums when the node shuts down.

use std::sync::atomic::{AtomicU64, Ordering};

use pgstrom_runtime::clock::PHASES;
use pgstrom_runtime::join::MAX_SOURCES;

/// Host work a node times besides waiting for the engine: checking the
/// heap direct path's blocks, reading chunks, merging partial groups.
pub const HOST_PHASES: usize = 3;
/// [`Counters::host_ns`]: the heap direct path's block checks (visibility
/// map, shared buffers).
pub const HOST_BLOCK_CHECKS: usize = 0;
/// [`Counters::host_ns`]: reading chunks (the buffer manager's pages, an
/// Arrow file's batches), read-ahead included.
pub const HOST_CHUNK_READS: usize = 1;
/// [`Counters::host_ns`]: merging partial groups across chunks.
pub const HOST_MERGE: usize = 2;
/// EXPLAIN ANALYZE's words for the host phases.
pub const HOST_LABELS: [&str; HOST_PHASES] = ["block checks", "chunk reads", "group merging"];

/// What a device node counts (GpuScan uses the first eight).
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    /// Chunks handed to the engine.
    pub chunks: u64,
    /// Rows read (of the scanned or outer table).
    pub rows_in: u64,
    /// Rows of chunks that took the CPU path (chunks the engine could not
    /// finish; for a join, its scan quals).
    pub rows_cpu_path: u64,
    /// Bytes of chunks handed to the engine.
    pub bytes: u64,
    /// Nanoseconds spent handing chunks to the engine and waiting for its
    /// answers (reading ahead overlaps the rest).
    pub engine_ns: u64,
    /// Chunks read while the engine worked on the one before.
    pub ahead: u64,
    /// Chunks whose rows were kept as TIDs (few of them were returned).
    pub tid_chunks: u64,
    /// The GPUs the node's processes ran on (engine::gpu_bit).
    pub gpus: u64,
    /// GpuJoin: combinations after the scan quals (0) and after each
    /// depth (d).
    pub stage: [u64; MAX_SOURCES],
    /// GpuJoin: unmatched inner rows returned by RIGHT / FULL depths
    /// (counted by the process that returns them, never shared).
    pub unmatched: u64,
    /// GpuPreAgg: partial groups returned (one per group and chunk).
    pub groups: u64,
    /// GpuPreAgg's group filter (a serial node's, never shared): groups
    /// it removed, and groups returned without it (they outgrew hash_mem).
    pub groups_filtered: u64,
    pub groups_unfiltered: u64,
    /// Groups it wrote to its spill (`gpupreagg::spill`).
    pub groups_spilled: u64,
    /// Bytes of chunk columns the engine read from Arrow files itself.
    pub file_bytes: u64,
    /// Of the column buffers behind them: bytes cuFile read, bytes read
    /// through pinned buffers, bytes found in the GPU's column cache.
    pub cufile_bytes: u64,
    pub pinned_bytes: u64,
    pub cached_bytes: u64,
    /// The heap direct path: blocks the service took apart, refused,
    /// found changed after the read, and sent to the buffer manager at
    /// once, the tuples sent back and their bytes
    /// (source::heap_direct::DirectCounters).
    pub direct: [u64; crate::source::heap_direct::DIRECT_COUNTS],
    /// The engine's own time for the node's sessions
    /// (pgstrom_runtime::clock): the total, then per phase.
    pub device_total_ns: u64,
    pub device_ns: [u64; PHASES],
    /// Host work, per [`HOST_PHASES`] phase.
    pub host_ns: [u64; HOST_PHASES],
}

impl Counters {
    /// Counters of `ns` nanoseconds of host phase `phase` (one of
    /// [`HOST_PHASES`]), nothing else.
    pub fn host(phase: usize, ns: u64) -> Counters {
        let mut c = Counters::default();
        c.host_ns[phase] = ns;
        c
    }

    /// Counters of the bytes an engine read from files by storage path
    /// since `before` (a session's cumulative `now`), nothing else;
    /// `before` becomes `now`.
    pub fn file_reads_since(
        now: pgstrom_runtime::fileread::ReadStats,
        before: &mut pgstrom_runtime::fileread::ReadStats,
    ) -> Counters {
        let was = std::mem::replace(before, now);
        Counters {
            cufile_bytes: now.cufile_bytes.saturating_sub(was.cufile_bytes),
            pinned_bytes: now.pinned_bytes.saturating_sub(was.pinned_bytes),
            cached_bytes: now.cached_bytes.saturating_sub(was.cached_bytes),
            ..Counters::default()
        }
    }

    /// Add `c` (whose `gpus` is ignored: that mask is kept by
    /// engine::engine_of_scan).
    pub fn add(&mut self, c: &Counters) {
        self.chunks += c.chunks;
        self.rows_in += c.rows_in;
        self.rows_cpu_path += c.rows_cpu_path;
        self.bytes += c.bytes;
        self.engine_ns += c.engine_ns;
        self.ahead += c.ahead;
        self.tid_chunks += c.tid_chunks;
        self.groups += c.groups;
        self.groups_filtered += c.groups_filtered;
        self.groups_unfiltered += c.groups_unfiltered;
        self.groups_spilled += c.groups_spilled;
        self.file_bytes += c.file_bytes;
        self.cufile_bytes += c.cufile_bytes;
        self.pinned_bytes += c.pinned_bytes;
        self.cached_bytes += c.cached_bytes;
        for i in 0..MAX_SOURCES {
            self.stage[i] += c.stage[i];
        }
        for i in 0..crate::source::heap_direct::DIRECT_COUNTS {
            self.direct[i] += c.direct[i];
        }
        self.device_total_ns += c.device_total_ns;
        for i in 0..PHASES {
            self.device_ns[i] += c.device_ns[i];
        }
        for i in 0..HOST_PHASES {
            self.host_ns[i] += c.host_ns[i];
        }
    }
}

/// The counters of every process of a parallel plan, in its DSM area.
#[repr(C)]
pub struct SharedCounters {
    chunks: AtomicU64,
    rows_in: AtomicU64,
    rows_cpu_path: AtomicU64,
    bytes: AtomicU64,
    engine_ns: AtomicU64,
    ahead: AtomicU64,
    tid_chunks: AtomicU64,
    /// The GPUs any process ran on (engine::engine_of_scan sets bits).
    pub gpus: AtomicU64,
    stage: [AtomicU64; MAX_SOURCES],
    groups: AtomicU64,
    file_bytes: AtomicU64,
    cufile_bytes: AtomicU64,
    pinned_bytes: AtomicU64,
    cached_bytes: AtomicU64,
    direct: [AtomicU64; crate::source::heap_direct::DIRECT_COUNTS],
    device_total_ns: AtomicU64,
    device_ns: [AtomicU64; PHASES],
    host_ns: [AtomicU64; HOST_PHASES],
}

impl SharedCounters {
    /// Add one process's counts.
    pub fn add(&self, c: &Counters) {
        let add = |a: &AtomicU64, v: u64| {
            if v != 0 {
                a.fetch_add(v, Ordering::Relaxed);
            }
        };
        add(&self.chunks, c.chunks);
        add(&self.rows_in, c.rows_in);
        add(&self.rows_cpu_path, c.rows_cpu_path);
        add(&self.bytes, c.bytes);
        add(&self.engine_ns, c.engine_ns);
        add(&self.ahead, c.ahead);
        add(&self.tid_chunks, c.tid_chunks);
        add(&self.groups, c.groups);
        add(&self.file_bytes, c.file_bytes);
        add(&self.cufile_bytes, c.cufile_bytes);
        add(&self.pinned_bytes, c.pinned_bytes);
        add(&self.cached_bytes, c.cached_bytes);
        for i in 0..MAX_SOURCES {
            add(&self.stage[i], c.stage[i]);
        }
        for i in 0..crate::source::heap_direct::DIRECT_COUNTS {
            add(&self.direct[i], c.direct[i]);
        }
        add(&self.device_total_ns, c.device_total_ns);
        for i in 0..PHASES {
            add(&self.device_ns[i], c.device_ns[i]);
        }
        for i in 0..HOST_PHASES {
            add(&self.host_ns[i], c.host_ns[i]);
        }
    }

    /// The sums over every process into `c` (the leader's, at shutdown):
    /// each shared count replaces the leader's own; `gpus` is the union;
    /// `unmatched` stays the leader's.
    pub fn load_into(&self, c: &mut Counters) {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        c.chunks = get(&self.chunks);
        c.rows_in = get(&self.rows_in);
        c.rows_cpu_path = get(&self.rows_cpu_path);
        c.bytes = get(&self.bytes);
        c.engine_ns = get(&self.engine_ns);
        c.ahead = get(&self.ahead);
        c.tid_chunks = get(&self.tid_chunks);
        c.gpus |= get(&self.gpus);
        c.groups = get(&self.groups);
        c.file_bytes = get(&self.file_bytes);
        c.cufile_bytes = get(&self.cufile_bytes);
        c.pinned_bytes = get(&self.pinned_bytes);
        c.cached_bytes = get(&self.cached_bytes);
        for i in 0..MAX_SOURCES {
            c.stage[i] = get(&self.stage[i]);
        }
        for i in 0..crate::source::heap_direct::DIRECT_COUNTS {
            c.direct[i] = get(&self.direct[i]);
        }
        c.device_total_ns = get(&self.device_total_ns);
        for i in 0..PHASES {
            c.device_ns[i] = get(&self.device_ns[i]);
        }
        for i in 0..HOST_PHASES {
            c.host_ns[i] = get(&self.host_ns[i]);
        }
    }
}
