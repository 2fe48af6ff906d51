//! One build of a GpuJoin's inner relations for every process of a
//! parallel query: the node's part of the DSM area and the rows in the
//! query's DSA area.
//!
//! Without it each process of a parallel GpuJoin (or GpuPreAgg with a
//! combined join) ran every inner plan to its end by itself.  Now:
//!
//! - A depth whose inner plan is *partial* (a Parallel Seq Scan of the
//!   dimension, say; the planner picks one when it is cheaper) is scanned
//!   by all the processes that arrive during the build, each taking its
//!   share of the blocks.
//! - A depth whose inner plan is not partial is run by one process: the
//!   first to claim it.
//! - Each process publishes the rows it read, as minimal tuples in the
//!   query's DSA area, on the depth's list; when the last process building
//!   arrives, the build is over and every process (also those that come
//!   later) reads every depth's rows from the lists.
//!
//! The phase word works as PostgreSQL's Barrier with dynamic attach does:
//! a process attaches while the build runs (and then takes part in it) or
//! after it (and only reads).  Processes wait on a condition variable,
//! which checks for interrupts: an ERROR in any process ends the query
//! and with it the waits.  Nothing is waited on after a process returned
//! rows, so a full tuple queue cannot block the build.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pgrx::pg_sys;
use pgstrom_runtime::join::MAX_DEPTHS;

/// The phase word's bit set once the build is over.
const BUILT: u64 = 1 << 63;

/// A contribution of rows bigger than this is published in parts.
pub const PUBLISH_BYTES: usize = 32 << 20;

/// The node's part of the DSM area.
#[repr(C)]
pub struct SharedInner {
    cv: pg_sys::ConditionVariable,
    /// [`BUILT`], or the number of processes building.
    phase: AtomicU64,
    /// Per depth: the newest contribution (a dsa_pointer; 0 = none).
    heads: [AtomicU64; MAX_DEPTHS],
    /// Per depth whose inner plan is not partial: taken by a process.
    claimed: [AtomicU32; MAX_DEPTHS],
    /// Processes that took part in the build.
    builders: AtomicU32,
    /// The longest time a process spent building (ns).
    build_ns: AtomicU64,
    /// The heap direct path of the outer scan: the next buffer descriptor
    /// a builder scans for the relation's dirty blocks
    /// (source::heap_direct::dirty_blocks_among), in shares.
    dirty_next: AtomicU32,
    /// The dirty blocks found, as contributions of u32 block numbers.
    dirty_head: AtomicU64,
}

/// The header of one contribution in the DSA area; the minimal tuples
/// follow, each at a MAXALIGNed offset.
#[repr(C)]
struct Contribution {
    next: u64,
    nrows: u64,
    nbytes: u64,
}

/// What EXPLAIN ANALYZE says of a shared build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildStats {
    /// Processes that took part.
    pub builders: u32,
    /// The longest time one of them spent (ns).
    pub build_ns: u64,
}

/// The wait event of a process waiting for the others' inner rows.
fn wait_event() -> u32 {
    static EVENT: OnceLock<u32> = OnceLock::new();
    // SAFETY: a backend with shared memory; the name is a C string.
    *EVENT.get_or_init(|| unsafe { pg_sys::WaitEventExtensionNew(c"PgStromInnerBuild".as_ptr()) })
}

/// MAXALIGN.
pub fn max_align(n: usize) -> usize {
    n.next_multiple_of(pg_sys::MAXIMUM_ALIGNOF as usize)
}

impl SharedInner {
    /// Lay out a fresh area (InitializeDSM).
    ///
    /// # Safety
    /// `p` points at `size_of::<SharedInner>()` writable bytes.
    pub unsafe fn init(p: *mut SharedInner) {
        // SAFETY: caller's promise; all-zero is a valid value of every field.
        unsafe {
            std::ptr::write_bytes(p, 0, 1);
            pg_sys::ConditionVariableInit(&raw mut (*p).cv);
        }
    }

    /// Forget the last build and free its rows (ReInitializeDSM: only the
    /// leader runs, no process is attached).
    ///
    /// # Safety
    /// `dsa` is the area the rows were published in (or NULL: none was).
    pub unsafe fn reset(&self, dsa: *mut pg_sys::dsa_area) {
        for head in self.heads.iter().chain([&self.dirty_head]) {
            let mut dp = head.swap(0, Ordering::AcqRel);
            while dp != 0 && !dsa.is_null() {
                // SAFETY: dp is a contribution of this area.
                unsafe {
                    let c = pg_sys::dsa_get_address(dsa, dp) as *const Contribution;
                    let next = (*c).next;
                    pg_sys::dsa_free(dsa, dp);
                    dp = next;
                }
            }
        }
        for c in &self.claimed {
            c.store(0, Ordering::Relaxed);
        }
        self.builders.store(0, Ordering::Relaxed);
        self.build_ns.store(0, Ordering::Relaxed);
        self.dirty_next.store(0, Ordering::Relaxed);
        self.phase.store(0, Ordering::Release);
    }

    /// Join the build if it still runs (true: this process builds, then
    /// calls [`Self::arrive_and_wait`]); false: it is over.
    pub fn attach(&self) -> bool {
        let mut cur = self.phase.load(Ordering::Acquire);
        loop {
            if cur & BUILT != 0 {
                return false;
            }
            match self.phase.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    self.builders.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// Take depth `d`'s non-partial inner plan (true: this process runs it).
    pub fn claim(&self, d: usize) -> bool {
        self.claimed[d].swap(1, Ordering::AcqRel) == 0
    }

    /// Publish `nrows` minimal tuples (`bytes`, each MAXALIGNed) of depth `d`.
    ///
    /// # Safety
    /// `dsa` is the query's DSA area; called while attached.
    pub unsafe fn publish(&self, dsa: *mut pg_sys::dsa_area, d: usize, bytes: &[u8], nrows: u64) {
        // SAFETY: caller's promise.
        unsafe { self.push(&self.heads[d], dsa, bytes, nrows) }
    }

    /// The next share of buffer descriptors to scan for the outer
    /// relation's dirty blocks (None: every share was taken).  A builder
    /// takes shares until none is left, before it arrives: when the build
    /// is over, every share was scanned.
    pub fn claim_descriptors(&self) -> Option<(u32, u32)> {
        // SAFETY: set at start-up, read-only afterwards.
        let n = unsafe { pg_sys::NBuffers }.max(0) as u32;
        let share = crate::source::heap_direct::DESCRIPTOR_SHARE;
        let from = self.dirty_next.fetch_add(share, Ordering::AcqRel);
        (from < n).then(|| (from, from.saturating_add(share).min(n)))
    }

    /// Publish dirty blocks found in a share.
    ///
    /// # Safety
    /// As [`Self::publish`].
    pub unsafe fn publish_dirty(&self, dsa: *mut pg_sys::dsa_area, blocks: &[pg_sys::BlockNumber]) {
        let bytes: Vec<u8> = blocks.iter().flat_map(|b| b.to_ne_bytes()).collect();
        // SAFETY: caller's promise.
        unsafe { self.push(&self.dirty_head, dsa, &bytes, blocks.len() as u64) }
    }

    /// After the build: the outer relation's dirty blocks, or None when no
    /// builder scanned the descriptors (the scan looks blocks up itself).
    ///
    /// # Safety
    /// `dsa` is the area they were published in; the build is over.
    pub unsafe fn dirty_set(
        &self,
        dsa: *mut pg_sys::dsa_area,
    ) -> Option<std::collections::HashSet<pg_sys::BlockNumber>> {
        // SAFETY: set at start-up, read-only afterwards.
        let nbuffers = unsafe { pg_sys::NBuffers }.max(0) as u64;
        if (self.dirty_next.load(Ordering::Acquire) as u64) < nbuffers {
            return None;
        }
        let mut set = std::collections::HashSet::new();
        // SAFETY: caller's promise; contributions of `publish_dirty`
        // hold block numbers.
        unsafe {
            Self::for_each_contribution(&self.dirty_head, dsa, |bytes| {
                set.extend(bytes.chunks_exact(4).map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes"))));
            });
        }
        Some(set)
    }

    /// Push a contribution of `nrows` items (`bytes`) on list `list`.
    ///
    /// # Safety
    /// As [`Self::publish`].
    unsafe fn push(&self, list: &AtomicU64, dsa: *mut pg_sys::dsa_area, bytes: &[u8], nrows: u64) {
        if nrows == 0 {
            return;
        }
        let head = max_align(std::mem::size_of::<Contribution>());
        // SAFETY: a fresh allocation of header + bytes (an ERROR if the
        // area cannot grow, which ends the query).
        unsafe {
            let dp = pg_sys::dsa_allocate_extended(dsa, head + bytes.len(), pg_sys::DSA_ALLOC_HUGE as i32);
            let at = pg_sys::dsa_get_address(dsa, dp) as *mut u8;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.add(head), bytes.len());
            let c = at as *mut Contribution;
            (*c).nrows = nrows;
            (*c).nbytes = bytes.len() as u64;
            let mut cur = list.load(Ordering::Acquire);
            loop {
                (*c).next = cur;
                match list.compare_exchange_weak(cur, dp, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
    }

    /// This process has published everything: leave the build, and wait
    /// until every other process building has too.
    ///
    /// # Safety
    /// Called once per [`Self::attach`] that returned true; `self` lives
    /// in the DSM area.
    pub unsafe fn arrive_and_wait(&self, build_ns: u64) {
        self.build_ns.fetch_max(build_ns, Ordering::Relaxed);
        let mut cur = self.phase.load(Ordering::Acquire);
        loop {
            let next = if cur & !BUILT <= 1 { BUILT } else { cur - 1 };
            match self.phase.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if next == BUILT {
                        let cv = &raw const self.cv as *mut pg_sys::ConditionVariable;
                        // SAFETY: the area's condition variable.
                        unsafe { pg_sys::ConditionVariableBroadcast(cv) };
                        return;
                    }
                    break;
                }
                Err(now) => cur = now,
            }
        }
        let cv = &raw const self.cv as *mut pg_sys::ConditionVariable;
        let event = wait_event();
        // SAFETY: the area's condition variable; the sleep checks for
        // interrupts (an ERROR leaves through PostgreSQL's longjmp, and
        // the wait is cancelled by the abort).
        unsafe {
            pg_sys::ConditionVariablePrepareToSleep(cv);
            while self.phase.load(Ordering::Acquire) & BUILT == 0 {
                pg_sys::ConditionVariableSleep(cv, event);
            }
            pg_sys::ConditionVariableCancelSleep();
        }
    }

    /// Every minimal tuple of depth `d` (after the build), as bytes.
    ///
    /// # Safety
    /// `dsa` is the area the rows were published in; the build is over.
    pub unsafe fn for_each_row(&self, dsa: *mut pg_sys::dsa_area, d: usize, mut f: impl FnMut(&[u8])) {
        // SAFETY: caller's promise; contributions of `publish` hold
        // MAXALIGNed minimal tuples, each starting with its length.
        unsafe {
            Self::for_each_contribution(&self.heads[d], dsa, |bytes| {
                let mut off = 0;
                while off + 4 <= bytes.len() {
                    let len = u32::from_ne_bytes(bytes[off..off + 4].try_into().expect("4 bytes")) as usize;
                    f(&bytes[off..off + len]);
                    off += max_align(len);
                }
            });
        }
    }

    /// The bytes of every contribution on list `list`.
    ///
    /// # Safety
    /// `dsa` is the area they were published in; nothing is pushed meanwhile.
    unsafe fn for_each_contribution(list: &AtomicU64, dsa: *mut pg_sys::dsa_area, mut f: impl FnMut(&[u8])) {
        let head = max_align(std::mem::size_of::<Contribution>());
        let mut dp = list.load(Ordering::Acquire);
        while dp != 0 {
            // SAFETY: a contribution pushed by `push`: header, then
            // `nbytes` of payload.
            unsafe {
                let at = pg_sys::dsa_get_address(dsa, dp) as *const u8;
                let c = at as *const Contribution;
                f(std::slice::from_raw_parts(at.add(head), (*c).nbytes as usize));
                dp = (*c).next;
            }
        }
    }

    /// The build's figures.
    pub fn stats(&self) -> BuildStats {
        BuildStats { builders: self.builders.load(Ordering::Relaxed), build_ns: self.build_ns.load(Ordering::Relaxed) }
    }
}
