//! Where an engine's time goes: every engine adds the time of each piece
//! of work (a kernel, a copy between host and device, a storage read) to
//! a per-thread clock under its [`Phase`]; a join session takes the
//! difference around each of its calls ([`Clocked`]), and the GPU service
//! around the work it does for a session outside it (reading blocks and
//! taking heap tuples apart), so EXPLAIN ANALYZE can tell, per node, how
//! long the engine worked and on what.
//!
//! The clock of a thread only grows; a reader keeps a [`snapshot`] and
//! subtracts.  One service connection is served by one thread, and an
//! engine in a backend runs on the backend's thread, so the difference
//! around a call is that call's own work.

use std::cell::Cell;
use std::time::Instant;

use crate::agg::AggGroups;
use crate::engine::{ColumnData, Pending};
use crate::error::DeviceError;
use crate::join::{Combos, JoinSession, Probed};

/// What a piece of engine work was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Phase {
    /// Reading outer data from files or the GPU's caches into the engine.
    Read = 0,
    /// Taking heap tuples apart into columns (the heap direct path).
    Heap = 1,
    /// The scan quals over a chunk.
    Scan = 2,
    /// Hashing the inner relations' keys and linking the hash chains.
    Hash = 3,
    /// Probing the inner relations' hash tables.
    Probe = 4,
    /// Grouping and aggregating the joined rows.
    Aggregate = 5,
    /// Copies between host and device memory.
    Transfer = 6,
    /// Evaluating projections (GpuScan's device projection, expressions).
    Eval = 7,
    /// Allocating and freeing device and pinned host memory (the memory
    /// budget's waits included).
    Alloc = 8,
    /// The small synchronous steps between kernels: resetting and reading
    /// a step's counters, staging a request's descriptors.
    Sync = 9,
}

/// Number of phases.
pub const PHASES: usize = 10;

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; PHASES] = [
        Phase::Read,
        Phase::Heap,
        Phase::Scan,
        Phase::Hash,
        Phase::Probe,
        Phase::Aggregate,
        Phase::Transfer,
        Phase::Eval,
        Phase::Alloc,
        Phase::Sync,
    ];

    /// The words EXPLAIN ANALYZE uses.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Read => "storage reads",
            Phase::Heap => "heap tuples",
            Phase::Scan => "scan quals",
            Phase::Hash => "hash builds",
            Phase::Probe => "join probes",
            Phase::Aggregate => "aggregation",
            Phase::Transfer => "transfers",
            Phase::Eval => "projection",
            Phase::Alloc => "allocations",
            Phase::Sync => "step syncs",
        }
    }

    /// The phase of a device kernel, by its name.
    pub fn of_kernel(name: &str) -> Phase {
        match name {
            n if n.starts_with("kern_heap_") => Phase::Heap,
            // file columns widened as they are read into the column cache
            n if n.starts_with("kern_widen_") => Phase::Read,
            "kern_join_scan" => Phase::Scan,
            "kern_join_hash" => Phase::Hash,
            "kern_join_probe" => Phase::Probe,
            n if n.starts_with("kern_agg_") => Phase::Aggregate,
            _ => Phase::Eval,
        }
    }
}

/// Time an engine spent for one session, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceClock {
    /// Wall time of the engine's work for the session, every phase and
    /// everything between them included.
    pub total_ns: u64,
    /// Per [`Phase`].
    pub ns: [u64; PHASES],
}

impl DeviceClock {
    /// Add `o`.
    pub fn add(&mut self, o: &DeviceClock) {
        self.total_ns += o.total_ns;
        for (a, b) in self.ns.iter_mut().zip(o.ns) {
            *a += b;
        }
    }

    /// The part of the total no phase accounts for (launch and request
    /// handling, host work of the engine between kernels).
    pub fn other_ns(&self) -> u64 {
        self.total_ns.saturating_sub(self.ns.iter().sum())
    }
}

thread_local! {
    static PHASE_NS: Cell<[u64; PHASES]> = const { Cell::new([0; PHASES]) };
    /// Every nanosecond added to any phase so far (a timer subtracts what
    /// timers inside it added: each moment counts once).
    static ACCOUNTED_NS: Cell<u64> = const { Cell::new(0) };
}

/// Add `ns` nanoseconds of `phase` to this thread's clock.
pub fn add(phase: Phase, ns: u64) {
    PHASE_NS.with(|c| {
        let mut v = c.get();
        v[phase as usize] = v[phase as usize].wrapping_add(ns);
        c.set(v);
    });
    ACCOUNTED_NS.with(|a| a.set(a.get().wrapping_add(ns)));
}

/// Run `f`, adding its time to `phase` (less what timers inside it took).
pub fn timed<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
    let _t = Timer::start(phase);
    f()
}

/// A guard that adds the time until it is dropped to a phase, less the
/// time timers started meanwhile added to theirs (an allocation inside a
/// storage read counts as an allocation only).
pub struct Timer {
    phase: Phase,
    t0: Instant,
    accounted: u64,
}

impl Timer {
    /// Start timing `phase`.
    pub fn start(phase: Phase) -> Timer {
        Timer { phase, t0: Instant::now(), accounted: ACCOUNTED_NS.with(Cell::get) }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let inner = ACCOUNTED_NS.with(Cell::get).wrapping_sub(self.accounted);
        add(self.phase, (self.t0.elapsed().as_nanos() as u64).saturating_sub(inner));
    }
}

/// This thread's clock now (only differences mean anything).
pub fn snapshot() -> [u64; PHASES] {
    PHASE_NS.with(|c| c.get())
}

/// A stopwatch over this thread's clock: [`Self::stop`] gives the work
/// done since [`Self::start`], with its wall time as the total.
pub struct Lap {
    t0: Instant,
    at: [u64; PHASES],
}

impl Lap {
    /// Start now.
    pub fn start() -> Lap {
        Lap { t0: Instant::now(), at: snapshot() }
    }

    /// The work since the start.
    pub fn stop(&self) -> DeviceClock {
        let now = snapshot();
        let mut c = DeviceClock { total_ns: self.t0.elapsed().as_nanos() as u64, ns: [0; PHASES] };
        for ((d, n), a) in c.ns.iter_mut().zip(now).zip(self.at) {
            *d = n.wrapping_sub(a);
        }
        c
    }
}

/// A join session of an engine that works on the calling thread, with
/// the time of each call added to its clock ([`JoinSession::take_clock`]).
pub struct Clocked<S> {
    inner: S,
    clock: DeviceClock,
}

impl<S: JoinSession> Clocked<S> {
    /// Open a session with `open`, counting the opening (the inner
    /// relations' upload and hashing) as the session's first work.
    pub fn open(open: impl FnOnce() -> Result<S, DeviceError>) -> Result<Clocked<S>, DeviceError> {
        let lap = Lap::start();
        let inner = open()?;
        Ok(Clocked { inner, clock: lap.stop() })
    }

    /// As [`Self::open`] for an opening that may find nothing to open
    /// (an attach to a shared build).
    pub fn open_if(open: impl FnOnce() -> Result<Option<S>, DeviceError>) -> Result<Option<Clocked<S>>, DeviceError> {
        let lap = Lap::start();
        Ok(open()?.map(|inner| Clocked { inner, clock: lap.stop() }))
    }

    fn run<T>(&mut self, f: impl FnOnce(&mut S) -> T) -> T {
        let lap = Lap::start();
        let r = f(&mut self.inner);
        self.clock.add(&lap.stop());
        r
    }
}

impl<S: JoinSession> JoinSession for Clocked<S> {
    fn probe(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<Combos, DeviceError> {
        self.run(|s| s.probe(outer, nrows, selection))
    }

    fn unmatched(&mut self) -> Result<Combos, DeviceError> {
        self.run(|s| s.unmatched())
    }

    fn reset_matched(&mut self) -> Result<(), DeviceError> {
        self.run(|s| s.reset_matched())
    }

    fn save_matched(&mut self) -> Result<(), DeviceError> {
        self.run(|s| s.save_matched())
    }

    fn restore_matched(&mut self) -> Result<(), DeviceError> {
        self.run(|s| s.restore_matched())
    }

    fn matched_bits(&mut self) -> Result<Vec<Vec<u64>>, DeviceError> {
        self.run(|s| s.matched_bits())
    }

    fn merge_matched(&mut self, bits: &[Vec<u64>]) -> Result<(), DeviceError> {
        self.run(|s| s.merge_matched(bits))
    }

    fn inner_bytes(&self) -> usize {
        self.inner.inner_bytes()
    }

    fn probe_agg(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<AggGroups, DeviceError> {
        self.run(|s| s.probe_agg(outer, nrows, selection))
    }

    fn unmatched_agg(&mut self) -> Result<AggGroups, DeviceError> {
        self.run(|s| s.unmatched_agg())
    }

    fn probe_begin(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
        agg: bool,
    ) -> Pending<Probed> {
        self.run(|s| s.probe_begin(outer, nrows, selection, agg))
    }

    fn probe_end(&mut self, pending: Pending<Probed>) -> Result<Probed, DeviceError> {
        self.run(|s| s.probe_end(pending))
    }

    fn open_file(
        &mut self,
        file: &std::fs::File,
        policy: &crate::fileread::Policy,
    ) -> Result<Option<(u32, crate::fileread::FileAccess)>, DeviceError> {
        self.run(|s| s.open_file(file, policy))
    }

    fn probe_heap(
        &mut self,
        file: u32,
        layout: &crate::heapscan::HeapLayout,
        blocks: &[u32],
        agg: bool,
    ) -> Result<crate::heapscan::HeapProbed, DeviceError> {
        self.run(|s| s.probe_heap(file, layout, blocks, agg))
    }

    fn file_stats(&mut self) -> Result<Option<crate::fileread::ReadStats>, DeviceError> {
        self.inner.file_stats()
    }

    fn store_sync(
        &mut self,
        batch: &crate::devstore::StoreSync<'_>,
    ) -> Result<Option<crate::devstore::StoreState>, DeviceError> {
        self.run(|s| s.store_sync(batch))
    }

    fn set_store_rows(&mut self, rows: Option<crate::devstore::StoreRows>) -> Result<(), DeviceError> {
        self.inner.set_store_rows(rows)
    }

    fn take_clock(&mut self) -> Result<DeviceClock, DeviceError> {
        Ok(std::mem::take(&mut self.clock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lap_counts_only_its_own_work() {
        add(Phase::Probe, 5);
        let lap = Lap::start();
        add(Phase::Probe, 7);
        timed(Phase::Aggregate, || add(Phase::Transfer, 3));
        let c = lap.stop();
        assert_eq!(c.ns[Phase::Probe as usize], 7);
        assert_eq!(c.ns[Phase::Transfer as usize], 3);
        assert!(c.ns[Phase::Aggregate as usize] <= c.total_ns);
        assert!(c.total_ns >= c.ns.iter().sum::<u64>() - 10, "the wall time covers the phases timed inside it");
    }

    #[test]
    fn kernels_map_to_phases() {
        assert_eq!(Phase::of_kernel("kern_heap_deform"), Phase::Heap);
        assert_eq!(Phase::of_kernel("kern_agg_rows"), Phase::Aggregate);
        assert_eq!(Phase::of_kernel("kern_join_probe"), Phase::Probe);
        assert_eq!(Phase::of_kernel("kern_eval_program"), Phase::Eval);
    }

    #[test]
    fn other_is_what_no_phase_took() {
        let mut c = DeviceClock { total_ns: 100, ns: [0; PHASES] };
        c.ns[Phase::Scan as usize] = 30;
        c.add(&DeviceClock { total_ns: 50, ns: [1; PHASES] });
        assert_eq!(c.total_ns, 150);
        assert_eq!(c.other_ns(), 150 - (30 + PHASES as u64));
    }

    #[test]
    fn a_timer_inside_another_counts_once() {
        let lap = Lap::start();
        timed(Phase::Read, || {
            std::thread::sleep(std::time::Duration::from_millis(4));
            let _alloc = Timer::start(Phase::Alloc);
            std::thread::sleep(std::time::Duration::from_millis(6));
        });
        let c = lap.stop();
        let (read, alloc) = (c.ns[Phase::Read as usize], c.ns[Phase::Alloc as usize]);
        assert!(alloc >= 6_000_000, "{alloc}");
        assert!(read >= 4_000_000, "the read's own time: {read}");
        // counted once: the read's time leaves out the allocation's (a
        // bound on the read alone failed on a loaded machine, whose
        // sleeps overshoot)
        assert!(read + alloc <= c.total_ns, "{read} + {alloc} > {}", c.total_ns);
    }
}
