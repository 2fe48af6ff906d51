//! A phase word in shared memory for processes that join a piece of work
//! while it runs and leave it when done: PostgreSQL's Barrier with
//! dynamic attach, reduced to its two phases (its `storage/barrier.h` is
//! not in pgrx's bindings).  The word counts the processes taking part;
//! the last to arrive sets [`DONE`], after which nobody can attach.  What
//! the others do meanwhile (wait on a condition variable, or nothing) is
//! up to the user: the shared inner build and the group exchange wait,
//! the matched rows of a parallel RIGHT join do not.

use std::sync::atomic::{AtomicU64, Ordering};

/// The word's bit set once the last process taking part has arrived.
const DONE: u64 = 1 << 63;

/// The phase word (all-zero: the first phase, nobody attached).
#[repr(transparent)]
pub struct PhaseWord(AtomicU64);

impl PhaseWord {
    /// Take part if the first phase still goes on (true: then
    /// [`Self::arrive`] once); false: it is over.
    pub fn attach(&self) -> bool {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            if cur & DONE != 0 {
                return false;
            }
            match self.0.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// This process is done: whether it was the last (the phase is over
    /// then).  Once per [`Self::attach`] that returned true.
    pub fn arrive(&self) -> bool {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let last = cur & !DONE <= 1;
            let next = if last { DONE } else { cur - 1 };
            match self.0.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return last,
                Err(now) => cur = now,
            }
        }
    }

    /// Whether the first phase is over.
    pub fn done(&self) -> bool {
        self.0.load(Ordering::Acquire) & DONE != 0
    }

    /// Back to the first phase, nobody attached (a rescan, with no
    /// process attached).
    pub fn reset(&self) {
        self.0.store(0, Ordering::Release);
    }
}
