//! The matched inner rows of a parallel GpuJoin's RIGHT, FULL, RIGHT
//! SEMI and RIGHT ANTI depth, gathered from every process, so that one
//! process returns the inner rows no process matched (or, for RIGHT
//! SEMI, those some process matched), each once.
//!
//! Every process of the parallel plan loads the same inner rows, in the
//! same order (the shared build's lists: `shared_build`), and probes its
//! share of the outer rows, marking the inner rows it matched in its own
//! session.  After its last chunk it ORs those marks, one bit per inner
//! row, into the depth's bit words in the query's DSA area and arrives;
//! the last process to arrive (it knows: the phase word counts the
//! processes probing) merges every process's bits into its session and
//! returns the rows as a serial plan would, the others nothing.  No
//! process waits for another: the last one to finish does the work.
//!
//! A process attaches before its first chunk.  One that comes after the
//! last has arrived (a worker started late: the scan is over, every
//! block handed out) neither probes nor returns anything: the rows were
//! returned already (`pg::phase`, without the wait the shared build has).

use std::sync::atomic::{AtomicU64, Ordering};

use pgrx::pg_sys;
use pgstrom_runtime::join::MAX_DEPTHS;

use crate::pg::phase::PhaseWord;

/// The matched rows' part of the node's DSM area.
#[repr(C)]
pub struct SharedMatched {
    /// The processes probing, until the last is done.
    phase: PhaseWord,
    /// Per depth: the bit words of every process's matched rows so far
    /// (a dsa_pointer; 0: none yet), and how many words it holds.
    bits: [AtomicU64; MAX_DEPTHS],
    words: [AtomicU64; MAX_DEPTHS],
}

impl SharedMatched {
    /// Take part in the probing if it still goes on (true: probe, then
    /// [`Self::arrive`]); false: it is over, the rows were returned.
    pub fn attach(&self) -> bool {
        self.phase.attach()
    }

    /// OR this process's matched rows (`bits`, per depth, as
    /// `JoinSession::matched_bits` returns them) into every process's.
    ///
    /// # Safety
    /// `dsa` is the query's DSA area; between [`Self::attach`] and
    /// [`Self::arrive`].
    pub unsafe fn merge(&self, dsa: *mut pg_sys::dsa_area, bits: &[Vec<u64>]) {
        for (d, b) in bits.iter().enumerate().take(MAX_DEPTHS) {
            if b.is_empty() {
                continue;
            }
            // SAFETY: caller's promise.
            let words = unsafe { self.words_of(dsa, d, b.len()) };
            for (w, &v) in words.iter().zip(b) {
                if v != 0 {
                    w.fetch_or(v, Ordering::AcqRel);
                }
            }
        }
    }

    /// Depth `d`'s bit words (`n` of them), allocated zeroed by the first
    /// process that needs them.
    ///
    /// # Safety
    /// As [`Self::merge`].
    unsafe fn words_of(&self, dsa: *mut pg_sys::dsa_area, d: usize, n: usize) -> &[AtomicU64] {
        let mut dp = self.bits[d].load(Ordering::Acquire);
        if dp == 0 {
            // SAFETY: the query's area; a zeroed allocation of n words.
            let mine = unsafe { pg_sys::dsa_allocate_extended(dsa, n * 8, pg_sys::DSA_ALLOC_ZERO as i32) };
            match self.bits[d].compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    self.words[d].store(n as u64, Ordering::Release);
                    dp = mine;
                }
                Err(theirs) => {
                    // SAFETY: our own allocation, never published.
                    unsafe { pg_sys::dsa_free(dsa, mine) };
                    dp = theirs;
                }
            }
        }
        // every process loads the same inner rows: the same word count
        // SAFETY: an allocation of n zeroed (or OR-ed) words of the area,
        // which lives as long as the query; AtomicU64 has u64's layout.
        unsafe { std::slice::from_raw_parts(pg_sys::dsa_get_address(dsa, dp) as *const AtomicU64, n) }
    }

    /// This process is done probing and has merged its matched rows:
    /// whether it is the last (it returns the rows then).
    ///
    /// # Safety
    /// Once per [`Self::attach`] that returned true.
    pub unsafe fn arrive(&self) -> bool {
        self.phase.arrive()
    }

    /// Every process's matched rows, per depth (`ndepths`; empty where no
    /// process had any), for the last process to arrive.
    ///
    /// # Safety
    /// `dsa` is the query's DSA area; after [`Self::arrive`] returned
    /// true.
    pub unsafe fn gathered(&self, dsa: *mut pg_sys::dsa_area, ndepths: usize) -> Vec<Vec<u64>> {
        (0..ndepths.min(MAX_DEPTHS))
            .map(|d| {
                let dp = self.bits[d].load(Ordering::Acquire);
                let n = self.words[d].load(Ordering::Acquire) as usize;
                if dp == 0 {
                    return Vec::new();
                }
                // SAFETY: caller's promise; the words are no longer written.
                let words =
                    unsafe { std::slice::from_raw_parts(pg_sys::dsa_get_address(dsa, dp) as *const AtomicU64, n) };
                words.iter().map(|w| w.load(Ordering::Acquire)).collect()
            })
            .collect()
    }

    /// Forget the last scan's rows (ReInitializeDSM: no process attached).
    ///
    /// # Safety
    /// `dsa` is the area the words were allocated in (or NULL: none was).
    pub unsafe fn reset(&self, dsa: *mut pg_sys::dsa_area) {
        for (b, w) in self.bits.iter().zip(&self.words) {
            let dp = b.swap(0, Ordering::AcqRel);
            w.store(0, Ordering::Release);
            if dp != 0 && !dsa.is_null() {
                // SAFETY: an allocation of this area.
                unsafe { pg_sys::dsa_free(dsa, dp) };
            }
        }
        self.phase.reset();
    }
}
