//! A parallel GpuPreAgg's partial groups exchanged between the processes
//! by their grouping keys, so that each process's own Finalize Aggregate
//! (below the Gather) combines every partial group of its share of the
//! keys: the groups are finalized by all the processes at once instead of
//! by one Finalize Aggregate above the Gather.
//!
//! The plan (`gpupreagg::path`, `pg_strom.enable_parallel_finalize`):
//!
//! ```text
//! Gather
//!   -> Finalize HashAggregate          (in every process)
//!        -> Parallel Custom Scan (GpuPreAgg)   (partial groups exchanged)
//! ```
//!
//! Each process returns no row before it has written every partial group
//! it made into one of [`PARTITIONS`] shared tuplestores (PostgreSQL's
//! SharedTuplestore: temporary files of a SharedFileSet, as Parallel Hash
//! Join's batches), the partition chosen by a hash of the grouping keys
//! computed with the hash functions of the grouping's equality operators
//! and the keys' collations: the functions PostgreSQL's hashed aggregate
//! groups by, so that keys it finds equal (1.0 and 1.00, 'a' and 'a  ' as
//! bpchar, -0 and 0) land in the same partition.  A barrier then waits for
//! every process that took part in the scan; after it, each process claims
//! partitions one at a time (an atomic counter) and returns all the
//! partial groups written to them, by every process.  The Finalize
//! Aggregate above each process thus sees every partial group of each key
//! it meets, and no other process meets that key: the union of the
//! processes' results is PostgreSQL's.
//!
//! A process that attaches after the barrier has passed (a worker started
//! late: the scan is over, its share empty) only claims partitions.
//! Nothing is waited on after a process returned a row, so a full tuple
//! queue to the Gather cannot block the barrier (the Finalize Aggregate
//! above a process reads all of its input before it returns a row).  An
//! ERROR in any process ends the query, and with it the wait (the
//! barrier's condition variable checks for interrupts).  Without a
//! parallel context (a plan run serially), the node returns its groups as
//! they come: its process finalizes every group.

use std::ffi::CString;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use pgrx::pg_sys;

use crate::pg::phase::PhaseWord;

/// Partitions of the exchange: each a shared tuplestore, the unit a
/// process claims.
pub const PARTITIONS: usize = 32;

/// The exchange's part of the node's DSM area, followed by the
/// partitions' shared tuplestores.
#[repr(C)]
struct Head {
    /// The processes writing their groups, until the last of them is done
    /// (two phases: write, then read).
    phase: PhaseWord,
    /// Where the writers wait for the last one.
    cv: pg_sys::ConditionVariable,
    /// The next partition to claim.
    next: AtomicU32,
    /// The parallel context's DSM segment, which the file set is attached
    /// to (workers find their mapping of it by its handle).
    handle: pg_sys::dsm_handle,
    fileset: pg_sys::SharedFileSet,
}

/// The wait event of a process waiting for the others' groups.
fn wait_event() -> u32 {
    static EVENT: OnceLock<u32> = OnceLock::new();
    // SAFETY: a backend with shared memory; the name is a C string.
    *EVENT.get_or_init(|| unsafe { crate::pg::compat::extension_wait_event(c"PgStromGroupExchange") })
}

impl Head {
    /// Take part in the writing if it still goes on (true: write, then
    /// [`Self::arrive_and_wait`]); false: it is over.
    fn attach(&self) -> bool {
        self.phase.attach()
    }

    /// This writer is done: wait until every writer is (the last wakes
    /// the others).
    ///
    /// # Safety
    /// Once per [`Self::attach`] that returned true; `self` lives in the
    /// DSM area.
    unsafe fn arrive_and_wait(&self) {
        self.phase.arrive();
        let cv = &raw const self.cv as *mut pg_sys::ConditionVariable;
        // SAFETY: the area's condition variable.
        unsafe {
            if self.phase.done() {
                pg_sys::ConditionVariableBroadcast(cv);
                return;
            }
            pg_sys::ConditionVariablePrepareToSleep(cv);
            while !self.phase.done() {
                pg_sys::ConditionVariableSleep(cv, wait_event());
            }
            pg_sys::ConditionVariableCancelSleep();
        }
    }

    /// Back to the first phase, nobody attached (a rescan).
    fn reset(&self) {
        self.phase.reset();
        self.next.store(0, Ordering::Relaxed);
    }
}

/// Partial groups (of all processes) below which the exchange is not
/// offered: its fixed work (each process's files, one per partition it
/// writes to, and the wait for the slowest process) outweighs the
/// serial Finalize Aggregate's it spreads (about a microsecond a partial
/// group), and the planner's fuzzy comparison of costs would keep it
/// wherever the totals tie (TPC-H Q1's four groups).
pub const MIN_PARTIAL_GROUPS: f64 = 20_000.0;

/// What the exchange of `rows` partial groups of `width` bytes and
/// `nkeys` grouping keys costs a process: each group is formed as a tuple,
/// its keys hashed, written to a temporary file and read back and taken
/// apart, about what sending it through a Gather's tuple queue costs
/// (`parallel_tuple_cost`; measured on the development machine, TPC-H Q16
/// at SF 1: 118,000 partial groups exchanged between three processes took
/// 44 ms, a Gather of the same rows 12 ms and PostgreSQL's Finalize of
/// them 50 ms, while `cpu_tuple_cost` twice priced the exchange below the
/// Gather), and its pages written and read once (a shared tuplestore
/// writes in chunks of 4 pages: a process writes at least one to each
/// partition its groups fall in).
pub fn cost(rows: f64, width: i32, nkeys: usize) -> f64 {
    let parts = PARTITIONS as f64;
    // SAFETY: planner globals read in the backend.
    let (queue, op, page) = unsafe { (pg_sys::parallel_tuple_cost, pg_sys::cpu_operator_cost, pg_sys::seq_page_cost) };
    let pages = (rows * (width as f64 + 24.0) / pg_sys::BLCKSZ as f64).ceil().max(4.0 * rows.min(parts));
    rows * (queue + nkeys as f64 * op) + 2.0 * pages * page
}

/// Bytes of one partition's tuplestore, aligned.
fn sts_bytes() -> usize {
    // SAFETY: arithmetic on a setting fixed at server start.
    let n = unsafe { pg_sys::sts_estimate(participants()) };
    n.next_multiple_of(16)
}

/// The slot a node returns its rows in: its result slot where it
/// projects, else its scan slot.
///
/// # Safety
/// An initialized custom scan node.
pub unsafe fn output_slot(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: caller's promise.
    unsafe {
        if (*node).ss.ps.ps_ProjInfo.is_null() { (*node).ss.ss_ScanTupleSlot } else { (*node).ss.ps.ps_ResultTupleSlot }
    }
}

/// Participants a tuplestore has room for: the leader and every worker
/// the server may start (a worker's number is below the Gather's, which
/// is below max_worker_processes).
fn participants() -> i32 {
    // SAFETY: a setting fixed at server start.
    unsafe { pg_sys::max_worker_processes + 1 }
}

/// This process's participant number.
fn me() -> i32 {
    // SAFETY: a global of the backend.
    unsafe { pg_sys::ParallelWorkerNumber + 1 }
}

/// Where the process is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Nothing done yet.
    Start,
    /// Reading partition p (None: claim one).
    Reading(Option<usize>),
    /// Every partition read.
    Done,
}

/// One process's side of the exchange.
pub struct Exchange {
    /// Per grouping key: its output column (0-based), the hash function,
    /// its collation.
    keys: Vec<(usize, Box<pg_sys::FmgrInfo>, pg_sys::Oid)>,
    /// The shared part (NULL: not in a parallel context; the node's rows
    /// go up as they come).
    head: *mut Head,
    /// Per partition, this process's accessor.
    accessors: Vec<*mut pg_sys::SharedTuplestoreAccessor>,
    state: State,
    /// A slot holding the tuple read, deformed into the node's output
    /// slot.
    read_slot: *mut pg_sys::TupleTableSlot,
}

impl Exchange {
    /// The exchange of a plan's `keys` ((output column, hash function,
    /// collation) per grouping key).
    ///
    /// # Safety
    /// In a backend, at executor start.
    pub unsafe fn new(keys: &[(u32, u32, u32)]) -> Exchange {
        let keys = keys
            .iter()
            .map(|&(col, f, coll)| {
                // SAFETY: FmgrInfo is plain data (zero: not yet looked
                // up); f is a hash function of the grouping's operator.
                let finfo = unsafe {
                    let mut finfo: Box<pg_sys::FmgrInfo> = Box::new(std::mem::zeroed());
                    pg_sys::fmgr_info(pg_sys::Oid::from(f), &mut *finfo);
                    finfo
                };
                (col as usize, finfo, pg_sys::Oid::from(coll))
            })
            .collect();
        Exchange {
            keys,
            head: std::ptr::null_mut(),
            accessors: Vec::new(),
            state: State::Start,
            read_slot: std::ptr::null_mut(),
        }
    }

    /// Bytes of the exchange's part of the DSM area.
    pub fn shared_size() -> usize {
        std::mem::size_of::<Head>().next_multiple_of(16) + PARTITIONS * sts_bytes()
    }

    fn sts(&self, p: usize) -> *mut pg_sys::SharedTuplestore {
        // SAFETY: the area has shared_size bytes.
        unsafe { (self.head as *mut u8).add(std::mem::size_of::<Head>().next_multiple_of(16) + p * sts_bytes()).cast() }
    }

    fn name(p: usize) -> CString {
        CString::new(format!("gpupreagg{p}")).expect("no NUL")
    }

    /// Lay out the part (the leader, InitializeDSM); `seg` NULL: no
    /// worker runs, the exchange is not used.
    ///
    /// # Safety
    /// `area` has [`Self::shared_size`] bytes.
    pub unsafe fn init(&mut self, area: *mut u8, seg: *mut pg_sys::dsm_segment) {
        if seg.is_null() {
            return;
        }
        // SAFETY: caller's promise.
        unsafe {
            let head = area as *mut Head;
            std::ptr::write_bytes(area, 0, Self::shared_size());
            pg_sys::ConditionVariableInit(&raw mut (*head).cv);
            (*head).reset();
            (*head).handle = pg_sys::dsm_segment_handle(seg);
            pg_sys::SharedFileSetInit(&raw mut (*head).fileset, seg);
            self.head = head;
            self.create_accessors();
        }
    }

    /// The leader's accessors over freshly initialized tuplestores.
    unsafe fn create_accessors(&mut self) {
        // SAFETY: the laid-out part.
        unsafe {
            self.accessors = (0..PARTITIONS)
                .map(|p| {
                    let name = Self::name(p);
                    pg_sys::sts_initialize(
                        self.sts(p),
                        participants(),
                        me(),
                        0,
                        pg_sys::SHARED_TUPLESTORE_SINGLE_PASS as i32,
                        &raw mut (*self.head).fileset,
                        name.as_ptr(),
                    )
                })
                .collect();
        }
        self.state = State::Start;
    }

    /// Reset the part for a rescan (the leader, no worker running).
    ///
    /// # Safety
    /// `area` is the part [`Self::init`] laid out.
    pub unsafe fn reinit(&mut self, area: *mut u8) {
        if self.head.is_null() {
            return;
        }
        self.end_read();
        // SAFETY: caller's promise.
        unsafe {
            let head = area as *mut Head;
            pg_sys::SharedFileSetDeleteAll(&raw mut (*head).fileset);
            (*head).reset();
            self.create_accessors();
        }
    }

    /// A worker attaches to the part the leader laid out.
    ///
    /// # Safety
    /// `area` is the laid-out part.
    pub unsafe fn attach(&mut self, area: *mut u8) {
        // SAFETY: caller's promise.
        unsafe {
            let head = area as *mut Head;
            if pg_sys::ParallelWorkerNumber < 0 || (*head).handle == 0 {
                // (the leader attached in init; a zero handle: no segment)
                return;
            }
            let seg = pg_sys::dsm_find_mapping((*head).handle);
            if seg.is_null() {
                crate::errors::raise_plain(
                    pgrx::PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "GpuPreAgg: the parallel query's shared memory segment is not mapped".into(),
                    None,
                    None,
                );
            }
            pg_sys::SharedFileSetAttach(&raw mut (*head).fileset, seg);
            self.head = head;
            self.accessors =
                (0..PARTITIONS).map(|p| pg_sys::sts_attach(self.sts(p), me(), &raw mut (*head).fileset)).collect();
        }
        self.state = State::Start;
    }

    /// The part goes (ShutdownCustomScan).
    pub fn detach(&mut self) {
        self.end_read();
        self.head = std::ptr::null_mut();
        self.accessors.clear();
    }

    /// A rescan: the process starts over (the leader's part is reset by
    /// [`Self::reinit`] before the workers start again).
    pub fn restart(&mut self) {
        self.end_read();
        self.state = State::Start;
    }

    /// Close the partition being read, if any.
    fn end_read(&mut self) {
        if let State::Reading(Some(p)) = self.state
            && let Some(&a) = self.accessors.get(p)
        {
            // SAFETY: an accessor of this process, in a scan.
            unsafe { pg_sys::sts_end_parallel_scan(a) };
            self.state = State::Reading(None);
        }
    }

    /// Whether the node's rows go through the exchange.
    pub fn active(&self) -> bool {
        !self.head.is_null()
    }

    /// The partition of the row in `slot`.
    unsafe fn partition_of(&mut self, slot: *mut pg_sys::TupleTableSlot) -> usize {
        let mut h: u32 = 0;
        // SAFETY: a slot of the node's output; the hash functions take
        // the key's type.
        unsafe {
            pg_sys::slot_getsomeattrs(slot, (*(*slot).tts_tupleDescriptor).natts);
            for (col, finfo, coll) in self.keys.iter_mut() {
                h = h.rotate_left(1);
                if *(*slot).tts_isnull.add(*col) {
                    continue;
                }
                let d = *(*slot).tts_values.add(*col);
                let v = pg_sys::FunctionCall1Coll(&mut **finfo, *coll, d);
                h ^= v.value() as u32;
            }
        }
        // (murmur3's finalizer: the hash functions' low bits need not mix)
        let mut x = h;
        x ^= x >> 16;
        x = x.wrapping_mul(0x85eb_ca6b);
        x ^= x >> 13;
        x = x.wrapping_mul(0xc2b2_ae35);
        x ^= x >> 16;
        x as usize % PARTITIONS
    }

    /// The node's next row: `produce` returns the node's own rows (an
    /// empty slot or NULL at the end); they are exchanged first.
    ///
    /// # Safety
    /// Executor state of the node; `produce` returns slots of its output.
    pub unsafe fn next(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        mut produce: impl FnMut() -> *mut pg_sys::TupleTableSlot,
    ) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: caller's promise.
        unsafe {
            if self.state == State::Start {
                let head = self.head;
                if (*head).attach() {
                    loop {
                        let slot = produce();
                        if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                            break;
                        }
                        let p = self.partition_of(slot);
                        let mut free = false;
                        let tuple = pg_sys::ExecFetchSlotMinimalTuple(slot, &mut free);
                        pg_sys::sts_puttuple(self.accessors[p], std::ptr::null_mut(), tuple);
                        if free {
                            pg_sys::pfree(tuple.cast());
                        }
                    }
                    for &a in &self.accessors {
                        pg_sys::sts_end_write(a);
                    }
                    (*head).arrive_and_wait();
                }
                self.state = State::Reading(None);
            }
            let out = output_slot(node);
            loop {
                match self.state {
                    State::Done | State::Start => return pg_sys::ExecClearTuple(out),
                    State::Reading(None) => {
                        let p = (*self.head).next.fetch_add(1, Ordering::Relaxed) as usize;
                        if p >= PARTITIONS {
                            self.state = State::Done;
                            continue;
                        }
                        pg_sys::sts_begin_parallel_scan(self.accessors[p]);
                        self.state = State::Reading(Some(p));
                    }
                    State::Reading(Some(p)) => {
                        let tuple = pg_sys::sts_parallel_scan_next(self.accessors[p], std::ptr::null_mut());
                        if tuple.is_null() {
                            self.end_read();
                            continue;
                        }
                        if self.read_slot.is_null() {
                            self.read_slot = pg_sys::ExecInitExtraTupleSlot(
                                (*node).ss.ps.state,
                                (*out).tts_tupleDescriptor,
                                &raw const pg_sys::TTSOpsMinimalTuple,
                            );
                        }
                        // the tuple stays in the reader's buffer until the
                        // next one is read: the output slot points into it
                        pg_sys::ExecStoreMinimalTuple(tuple, self.read_slot, false);
                        pg_sys::slot_getsomeattrs(self.read_slot, (*(*out).tts_tupleDescriptor).natts);
                        pg_sys::ExecClearTuple(out);
                        let n = (*(*out).tts_tupleDescriptor).natts as usize;
                        std::ptr::copy_nonoverlapping((*self.read_slot).tts_values, (*out).tts_values, n);
                        std::ptr::copy_nonoverlapping((*self.read_slot).tts_isnull, (*out).tts_isnull, n);
                        return pg_sys::ExecStoreVirtualTuple(out);
                    }
                }
            }
        }
    }
}
