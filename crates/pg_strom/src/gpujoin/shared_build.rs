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
//! Once the rows are there, one process loads them into its engine under
//! the build's random key (the first to claim the load); the others wait
//! for it and open their sessions over that engine's copy
//! (`Engine::join_attach`): the inner relations are hashed and kept once
//! per query, not once per process, and the others never take the rows
//! apart into columns.  A process whose engine holds no such copy (another
//! GPU, a session closed already) loads its own.
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
use pgstrom_runtime::join::{MAX_DEPTHS, MAX_KEYS};

use crate::pg::phase::PhaseWord;

/// A contribution of rows bigger than this is published in parts.
pub const PUBLISH_BYTES: usize = 32 << 20;

/// A join key range: the outer table's column (attnum) and the inner
/// keys' (min, max), None when the inner side has no non-NULL key.
pub type KeyRange = (i16, Option<(i64, i64)>);

/// Most join key ranges the loader publishes (one per depth and key).
pub const MAX_RANGES: usize = MAX_DEPTHS * MAX_KEYS;

/// `load` states: nobody loads yet, a process loads, the load is done.
const LOAD_FREE: u32 = 0;
const LOAD_CLAIMED: u32 = 1;
const LOAD_DONE: u32 = 2;

/// The node's part of the DSM area.
#[repr(C)]
pub struct SharedInner {
    cv: pg_sys::ConditionVariable,
    /// The processes building, until the last is done (the build is
    /// over then).
    phase: PhaseWord,
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
    /// The key of this build in the engines (random, new per build).
    share_key: AtomicU64,
    /// LOAD_FREE, LOAD_CLAIMED or LOAD_DONE.
    load: AtomicU32,
    /// Processes that loaded the inner relations into an engine, and
    /// processes that attached to a load.
    loads: AtomicU32,
    attaches: AtomicU32,
    /// The loader's figures: the inner relations' bytes, and the join key
    /// ranges an Arrow outer scan skips record batches by: attnum (0: no
    /// range, the inner side has no non-NULL key: the high bit set), low
    /// and high key.
    load_bytes: AtomicU64,
    nranges: AtomicU32,
    /// 1 when the ranges were kept with a cached build and stored by the
    /// process that looked into the cache (the loader takes them).
    cached_ranges: AtomicU32,
    range_attnum: [AtomicU32; MAX_RANGES],
    range_lo: [AtomicU64; MAX_RANGES],
    range_hi: [AtomicU64; MAX_RANGES],
    /// The cross-query cache (gpujoin::inner_cache): CACHE_FREE,
    /// CACHE_CHECKING or CACHE_DECIDED; the outcome (inner_cache::Outcome);
    /// the key (a dsa_pointer and its length; 0: none).
    cache_state: AtomicU32,
    cache_outcome: AtomicU32,
    cache_key: AtomicU64,
    cache_key_len: AtomicU64,
    /// A RIGHT, FULL, RIGHT SEMI or RIGHT ANTI depth's matched rows,
    /// gathered from every process (gpujoin::shared_matched).
    pub matched: crate::gpujoin::shared_matched::SharedMatched,
}

/// `cache_state` states: nobody looked yet, a process looks, decided.
const CACHE_FREE: u32 = 0;
const CACHE_CHECKING: u32 = 1;
const CACHE_DECIDED: u32 = 2;

/// The header of one contribution in the DSA area; the minimal tuples
/// follow, each at a MAXALIGNed offset, then (MAXALIGNed) the same rows'
/// columns as the programs read them (`ColumnChunk::encode`).
#[repr(C)]
struct Contribution {
    next: u64,
    nrows: u64,
    nbytes: u64,
    ncolbytes: u64,
}

/// What EXPLAIN ANALYZE says of a shared build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildStats {
    /// Processes that took part.
    pub builders: u32,
    /// The longest time one of them spent (ns).
    pub build_ns: u64,
    /// Processes that loaded the inner relations into their engine.
    pub loads: u32,
    /// Processes whose sessions used another process's load.
    pub attaches: u32,
    /// Whether a process loaded the inner relations for the others
    /// (false: each process loaded its own).
    pub shared_load: bool,
    /// The cross-query cache's outcome.
    pub cache: crate::gpujoin::inner_cache::Outcome,
}

/// The wait event of a process waiting for the others' inner rows.
fn wait_event() -> u32 {
    static EVENT: OnceLock<u32> = OnceLock::new();
    // SAFETY: a backend with shared memory; the name is a C string.
    *EVENT.get_or_init(|| unsafe { crate::pg::compat::extension_wait_event(c"PgStromInnerBuild") })
}

/// A key for a new build: random, so that no other query's sessions in
/// the GPU service can take it for theirs.
pub fn new_key() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: an 8-byte buffer.
    if !unsafe { pg_sys::pg_strong_random(b.as_mut_ptr().cast(), b.len()) } {
        // no strong source: time and process make it unique enough
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        b = (t ^ ((std::process::id() as u64) << 40)).to_ne_bytes();
    }
    u64::from_ne_bytes(b).max(1)
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
            (*p).share_key.store(new_key(), Ordering::Relaxed);
        }
    }

    /// Forget the last build and free its rows (ReInitializeDSM: only the
    /// leader runs, no process is attached).
    ///
    /// # Safety
    /// `dsa` is the area the rows were published in (or NULL: none was).
    pub unsafe fn reset(&self, dsa: *mut pg_sys::dsa_area) {
        // SAFETY: caller's promise.
        unsafe { self.matched.reset(dsa) };
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
        let key = self.cache_key.swap(0, Ordering::AcqRel);
        if key != 0 && !dsa.is_null() {
            // SAFETY: the key's allocation in this area.
            unsafe { pg_sys::dsa_free(dsa, key) };
        }
        self.cache_key_len.store(0, Ordering::Relaxed);
        self.cache_outcome.store(0, Ordering::Relaxed);
        self.cache_state.store(CACHE_FREE, Ordering::Relaxed);
        self.cached_ranges.store(0, Ordering::Relaxed);
        for c in &self.claimed {
            c.store(0, Ordering::Relaxed);
        }
        self.builders.store(0, Ordering::Relaxed);
        self.build_ns.store(0, Ordering::Relaxed);
        self.dirty_next.store(0, Ordering::Relaxed);
        self.share_key.store(new_key(), Ordering::Relaxed);
        self.load.store(LOAD_FREE, Ordering::Relaxed);
        self.loads.store(0, Ordering::Relaxed);
        self.attaches.store(0, Ordering::Relaxed);
        self.phase.reset();
    }

    /// The key the loader keeps the inner relations under in its engine.
    pub fn share_key(&self) -> u64 {
        self.share_key.load(Ordering::Relaxed)
    }

    /// Take the look into the cross-query cache (true: this process looks,
    /// publishes the kept rows when found, and calls
    /// [`Self::cache_decided`]; the others call [`Self::wait_cache_decided`]).
    pub fn claim_cache_check(&self) -> bool {
        self.cache_state.compare_exchange(CACHE_FREE, CACHE_CHECKING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// The cache is looked into: its `outcome` and the build's `key`.
    ///
    /// # Safety
    /// `dsa` is the query's DSA area; called once, after
    /// [`Self::claim_cache_check`] returned true.
    pub unsafe fn cache_decided(
        &self,
        dsa: *mut pg_sys::dsa_area,
        key: Option<&[u8]>,
        outcome: crate::gpujoin::inner_cache::Outcome,
    ) {
        if let Some(key) = key.filter(|k| !k.is_empty()) {
            // SAFETY: a fresh allocation of the key's length (an ERROR if
            // the area cannot grow, which ends the query).
            unsafe {
                let dp = pg_sys::dsa_allocate_extended(dsa, key.len(), pg_sys::DSA_ALLOC_HUGE as i32);
                let at = pg_sys::dsa_get_address(dsa, dp) as *mut u8;
                std::ptr::copy_nonoverlapping(key.as_ptr(), at, key.len());
                self.cache_key.store(dp, Ordering::Relaxed);
            }
            self.cache_key_len.store(key.len() as u64, Ordering::Relaxed);
        }
        self.cache_outcome.store(outcome as u32, Ordering::Relaxed);
        self.cache_state.store(CACHE_DECIDED, Ordering::Release);
        self.wake_all();
    }

    /// Wait until the process looking into the cache decided.
    ///
    /// # Safety
    /// `self` lives in the DSM area; another process claimed the look.
    pub unsafe fn wait_cache_decided(&self) {
        // SAFETY: caller's promise.
        unsafe { self.sleep_until(|| self.cache_state.load(Ordering::Acquire) == CACHE_DECIDED) }
    }

    /// The cache's outcome (once decided; later changed by the loader).
    pub fn cache_outcome(&self) -> crate::gpujoin::inner_cache::Outcome {
        crate::gpujoin::inner_cache::Outcome::from_u32(self.cache_outcome.load(Ordering::Acquire))
    }

    /// The loader's outcome (kept or not, loaded again).
    pub fn set_cache_outcome(&self, outcome: crate::gpujoin::inner_cache::Outcome) {
        self.cache_outcome.store(outcome as u32, Ordering::Release);
    }

    /// The build's key in the cache (once decided), or None.
    ///
    /// # Safety
    /// `dsa` is the area the key was stored in.
    pub unsafe fn cache_key(&self, dsa: *mut pg_sys::dsa_area) -> Option<Vec<u8>> {
        let dp = self.cache_key.load(Ordering::Acquire);
        let len = self.cache_key_len.load(Ordering::Acquire) as usize;
        // SAFETY: the key's allocation of `len` bytes (caller's area).
        (dp != 0)
            .then(|| unsafe { std::slice::from_raw_parts(pg_sys::dsa_get_address(dsa, dp) as *const u8, len).to_vec() })
    }

    /// Every contribution of depth `d` (after the build): its rows, tuple
    /// bytes and column bytes.
    ///
    /// # Safety
    /// As [`Self::for_each_row`].
    pub unsafe fn for_each_published(&self, dsa: *mut pg_sys::dsa_area, d: usize, f: impl FnMut(u64, &[u8], &[u8])) {
        // SAFETY: caller's promise.
        unsafe { Self::for_each_part(&self.heads[d], dsa, f) }
    }

    /// Take the load (true: this process loads the inner relations into
    /// its engine for all, then calls [`Self::loaded`]).
    pub fn claim_load(&self) -> bool {
        self.load.compare_exchange(LOAD_FREE, LOAD_CLAIMED, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// The load is done (or failed: the others then load their own): its
    /// figures for the others.
    pub fn loaded(&self, bytes: u64, ranges: &[KeyRange]) {
        self.store_ranges(ranges);
        self.load_bytes.store(bytes, Ordering::Relaxed);
        self.load.store(LOAD_DONE, Ordering::Release);
        self.wake_all();
    }

    fn store_ranges(&self, ranges: &[KeyRange]) {
        let n = ranges.len().min(MAX_RANGES);
        for (i, (attnum, range)) in ranges.iter().take(n).enumerate() {
            let (lo, hi) = range.unwrap_or((0, 0));
            let tag = (*attnum as u16 as u32) | if range.is_some() { 1 << 31 } else { 0 };
            self.range_attnum[i].store(tag, Ordering::Relaxed);
            self.range_lo[i].store(lo as u64, Ordering::Relaxed);
            self.range_hi[i].store(hi as u64, Ordering::Relaxed);
        }
        self.nranges.store(n as u32, Ordering::Relaxed);
    }

    fn read_ranges(&self) -> Vec<KeyRange> {
        let n = (self.nranges.load(Ordering::Relaxed) as usize).min(MAX_RANGES);
        (0..n)
            .map(|i| {
                let tag = self.range_attnum[i].load(Ordering::Relaxed);
                let range = (tag & (1 << 31) != 0).then(|| {
                    (self.range_lo[i].load(Ordering::Relaxed) as i64, self.range_hi[i].load(Ordering::Relaxed) as i64)
                });
                (tag as u16 as i16, range)
            })
            .collect()
    }

    /// The process looking into the cache found a kept build with its
    /// join key ranges: store them for the loader (before
    /// [`Self::cache_decided`]).
    pub fn keep_cached_ranges(&self, ranges: &[KeyRange]) {
        self.store_ranges(ranges);
        self.cached_ranges.store(1, Ordering::Relaxed);
    }

    /// The join key ranges kept with a cached build, when the process that
    /// looked into the cache stored them (after it decided).
    pub fn cached_ranges(&self) -> Option<Vec<KeyRange>> {
        (self.cached_ranges.load(Ordering::Relaxed) == 1).then(|| self.read_ranges())
    }

    /// Wait until the loader is done; its figures (as given to
    /// [`Self::loaded`]).
    ///
    /// # Safety
    /// `self` lives in the DSM area; another process claimed the load.
    pub unsafe fn wait_loaded(&self) -> (u64, Vec<KeyRange>) {
        // SAFETY: caller's promise.
        unsafe { self.sleep_until(|| self.load.load(Ordering::Acquire) == LOAD_DONE) };
        (self.load_bytes.load(Ordering::Relaxed), self.read_ranges())
    }

    /// Count this process's session: its own load, or an attach.  Every
    /// process of the build counts one (the loader waits for them all).
    pub fn count_session(&self, attached: bool) {
        if attached { &self.attaches } else { &self.loads }.fetch_add(1, Ordering::AcqRel);
        self.wake_all();
    }

    /// The loader: wait until every process that took part in the build
    /// has its session, so that none finds the load closed (the loader's
    /// session holds it).  Nobody waits on the loader meanwhile: the
    /// others only open their sessions.
    ///
    /// # Safety
    /// `self` lives in the DSM area; the build is over.
    pub unsafe fn wait_sessions(&self) {
        // SAFETY: caller's promise.
        unsafe {
            self.sleep_until(|| {
                self.loads.load(Ordering::Acquire) + self.attaches.load(Ordering::Acquire)
                    >= self.builders.load(Ordering::Acquire)
            })
        }
    }

    /// Wake every process sleeping on the area's condition variable.
    fn wake_all(&self) {
        let cv = &raw const self.cv as *mut pg_sys::ConditionVariable;
        // SAFETY: the area's condition variable.
        unsafe { pg_sys::ConditionVariableBroadcast(cv) };
    }

    /// Sleep on the area's condition variable (wait event
    /// `PgStromInnerBuild`) until `done`; at once when it already is.  The
    /// sleep checks for interrupts: an ERROR leaves through PostgreSQL's
    /// longjmp, and the abort cancels the wait.
    ///
    /// # Safety
    /// `self` lives in the DSM area; whoever makes `done` true calls
    /// [`Self::wake_all`] after.
    unsafe fn sleep_until(&self, done: impl Fn() -> bool) {
        if done() {
            return;
        }
        let cv = &raw const self.cv as *mut pg_sys::ConditionVariable;
        let event = wait_event();
        // SAFETY: the area's condition variable (caller's promise).
        unsafe {
            pg_sys::ConditionVariablePrepareToSleep(cv);
            while !done() {
                pg_sys::ConditionVariableSleep(cv, event);
            }
            pg_sys::ConditionVariableCancelSleep();
        }
    }

    /// Join the build if it still runs (true: this process builds, then
    /// calls [`Self::arrive_and_wait`]); false: it is over.
    pub fn attach(&self) -> bool {
        let attached = self.phase.attach();
        if attached {
            self.builders.fetch_add(1, Ordering::Relaxed);
        }
        attached
    }

    /// Take depth `d`'s non-partial inner plan (true: this process runs it).
    pub fn claim(&self, d: usize) -> bool {
        self.claimed[d].swap(1, Ordering::AcqRel) == 0
    }

    /// Publish `nrows` minimal tuples (`bytes`, each MAXALIGNed) of depth
    /// `d`, and the same rows' columns (`columns`).
    ///
    /// # Safety
    /// `dsa` is the query's DSA area; called while attached.
    pub unsafe fn publish(&self, dsa: *mut pg_sys::dsa_area, d: usize, bytes: &[u8], columns: &[u8], nrows: u64) {
        // SAFETY: caller's promise.
        unsafe { self.push(&self.heads[d], dsa, bytes, columns, nrows) }
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
        unsafe { self.push(&self.dirty_head, dsa, &bytes, &[], blocks.len() as u64) }
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

    /// Push a contribution of `nrows` items (`bytes`, and `extra` after
    /// them) on list `list`.
    ///
    /// # Safety
    /// As [`Self::publish`].
    unsafe fn push(&self, list: &AtomicU64, dsa: *mut pg_sys::dsa_area, bytes: &[u8], extra: &[u8], nrows: u64) {
        if nrows == 0 {
            return;
        }
        let head = max_align(std::mem::size_of::<Contribution>());
        let extra_at = head + max_align(bytes.len());
        // SAFETY: a fresh allocation of header + bytes + extra (an ERROR
        // if the area cannot grow, which ends the query).
        unsafe {
            let dp = pg_sys::dsa_allocate_extended(dsa, extra_at + extra.len(), pg_sys::DSA_ALLOC_HUGE as i32);
            let at = pg_sys::dsa_get_address(dsa, dp) as *mut u8;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.add(head), bytes.len());
            std::ptr::copy_nonoverlapping(extra.as_ptr(), at.add(extra_at), extra.len());
            let c = at as *mut Contribution;
            (*c).nrows = nrows;
            (*c).nbytes = bytes.len() as u64;
            (*c).ncolbytes = extra.len() as u64;
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
        if self.phase.arrive() {
            self.wake_all();
            return;
        }
        // SAFETY: caller's promise; the last to arrive wakes everyone.
        unsafe { self.sleep_until(|| self.phase.done()) }
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
                for_each_tuple(bytes, &mut f);
            })
        }
    }

    /// The columns of every contribution of depth `d` (after the build),
    /// in the order [`Self::for_each_row`] gives their rows.
    ///
    /// # Safety
    /// As [`Self::for_each_row`].
    pub unsafe fn for_each_columns(&self, dsa: *mut pg_sys::dsa_area, d: usize, mut f: impl FnMut(&[u8])) {
        // SAFETY: caller's promise.
        unsafe { Self::for_each_part(&self.heads[d], dsa, |_, _, columns| f(columns)) }
    }

    /// The rows each contribution of depth `d` counts (after the build),
    /// also of contributions published without their rows (a summary of
    /// kept rows).
    ///
    /// # Safety
    /// As [`Self::for_each_row`].
    pub unsafe fn for_each_counted(&self, dsa: *mut pg_sys::dsa_area, d: usize, mut f: impl FnMut(u64)) {
        // SAFETY: caller's promise.
        unsafe { Self::for_each_part(&self.heads[d], dsa, |n, _, _| f(n)) }
    }

    /// The bytes of every contribution on list `list`.
    ///
    /// # Safety
    /// `dsa` is the area they were published in; nothing is pushed meanwhile.
    unsafe fn for_each_contribution(list: &AtomicU64, dsa: *mut pg_sys::dsa_area, mut f: impl FnMut(&[u8])) {
        // SAFETY: caller's promise.
        unsafe { Self::for_each_part(list, dsa, |_, bytes, _| f(bytes)) }
    }

    /// The items, the bytes and the extra bytes of every contribution on
    /// `list`.
    ///
    /// # Safety
    /// As [`Self::for_each_contribution`].
    unsafe fn for_each_part(list: &AtomicU64, dsa: *mut pg_sys::dsa_area, mut f: impl FnMut(u64, &[u8], &[u8])) {
        let head = max_align(std::mem::size_of::<Contribution>());
        let mut dp = list.load(Ordering::Acquire);
        while dp != 0 {
            // SAFETY: a contribution pushed by `push`: header, `nbytes` of
            // payload, then (MAXALIGNed) `ncolbytes` of extra bytes.
            unsafe {
                let at = pg_sys::dsa_get_address(dsa, dp) as *const u8;
                let c = at as *const Contribution;
                let n = (*c).nbytes as usize;
                let extra_at = head + max_align(n);
                f(
                    (*c).nrows,
                    std::slice::from_raw_parts(at.add(head), n),
                    std::slice::from_raw_parts(at.add(extra_at), (*c).ncolbytes as usize),
                );
                dp = (*c).next;
            }
        }
    }

    /// The build's figures.
    pub fn stats(&self) -> BuildStats {
        BuildStats {
            builders: self.builders.load(Ordering::Relaxed),
            build_ns: self.build_ns.load(Ordering::Relaxed),
            loads: self.loads.load(Ordering::Relaxed),
            attaches: self.attaches.load(Ordering::Relaxed),
            shared_load: self.load.load(Ordering::Relaxed) != LOAD_FREE,
            cache: self.cache_outcome(),
        }
    }
}

/// Every minimal tuple of `bytes` (MAXALIGNed minimal tuples, each starting
/// with its length), as bytes; false when the bytes are not such tuples
/// (a length that is too short or runs past the end).
pub fn for_each_tuple(bytes: &[u8], mut f: impl FnMut(&[u8])) -> bool {
    let mut off = 0;
    while off + 4 <= bytes.len() {
        let len = u32::from_ne_bytes(bytes[off..off + 4].try_into().expect("4 bytes")) as usize;
        if len < 4 || off + len > bytes.len() {
            return false;
        }
        f(&bytes[off..off + len]);
        off += max_align(len);
    }
    off >= bytes.len()
}
