//! The device memory pool of each GPU: a byte budget over everything the
//! process allocates on the device (requests' buffers, join sessions'
//! inner relations and hash tables, scratch arenas, the Arrow column
//! cache), and waiting instead of failing when the budget is spent.
//!
//! Owns: the per-GPU budget and the bytes reserved against it, the wait
//! for memory (a reservation that does not fit first asks the relief to
//! give back what the GPU keeps between queries: caches first, then idle
//! GPU store copies while it still does not fit; then it waits until
//! other requests free enough, up to [`MEMORY_WAIT`]), and the counters the service reports.
//! A reservation larger than the whole budget fails at once: waiting could
//! never satisfy it.  A wait also ends, with an error, as soon as the
//! thread's give-up check says the request is no longer wanted (the GPU
//! service's connection thread: its client went away, after a cancel).  GPUs without a configured pool (engines opened in a
//! backend, tests) reserve without limit.
//!
//! Device allocations (gpu.rs) take a [`Reservation`] first and keep it
//! as long as the memory: dropping it gives the bytes back and wakes the
//! waiters.

use std::cell::RefCell;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::error::DeviceError;

/// The longest a request waits for device memory before it fails.
pub const MEMORY_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting reservation asks the give-up check.
const GIVE_UP_POLL: Duration = Duration::from_millis(100);

thread_local! {
    /// Asked while this thread waits for memory: true ends the wait.
    static GIVE_UP: RefCell<Option<Box<dyn Fn() -> bool>>> = const { RefCell::new(None) };
}

/// Set (or clear) what this thread's waits for memory ask, every 100 ms,
/// whether the request is still wanted.
pub fn set_give_up(check: Option<Box<dyn Fn() -> bool>>) {
    GIVE_UP.with(|g| *g.borrow_mut() = check);
}

fn given_up() -> bool {
    GIVE_UP.with(|g| g.borrow().as_ref().is_some_and(|f| f()))
}

fn abandoned() -> DeviceError {
    DeviceError::Service("the request was abandoned by its client while it waited for GPU memory".into())
}

/// GPUs a process may have pools for.
pub const MAX_POOLS: usize = 16;

/// What a pool has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// The budget in bytes.
    pub budget: u64,
    /// Bytes reserved now.
    pub reserved: u64,
    /// The most ever reserved at once.
    pub peak: u64,
    /// Reservations that had to wait for memory.
    pub waits: u64,
    /// Reservations that failed (larger than the budget, or waited
    /// [`MEMORY_WAIT`] in vain).
    pub failures: u64,
}

/// One GPU's pool.
pub struct MemoryPool {
    state: Mutex<PoolStats>,
    freed: Condvar,
    /// Asked to give memory back when a reservation does not fit (the
    /// GPU's caches, then its idle GPU store copies), with a check of
    /// whether the reservation fits now.
    relief: OnceLock<Relief>,
}

/// What gives memory back when a reservation does not fit: called with
/// `fits` (does the reservation fit now?), so that it gives back its
/// costlier holdings only while the cheap ones did not suffice.
pub type Relief = Box<dyn Fn(&dyn Fn() -> bool) + Send + Sync>;

/// Bytes reserved in a pool, given back when dropped.
pub struct Reservation {
    pool: Option<&'static MemoryPool>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(p) = self.pool {
            let mut s = p.lock();
            s.reserved = s.reserved.saturating_sub(self.bytes);
            drop(s);
            p.freed.notify_all();
        }
    }
}

impl Reservation {
    /// A reservation against no pool (a GPU without a budget).
    pub const NONE: Reservation = Reservation { pool: None, bytes: 0 };
}

fn size_mb(b: u64) -> String {
    format!("{} MB", b.div_ceil(1 << 20))
}

impl MemoryPool {
    /// A pool of `budget` bytes.
    pub fn new(budget: u64) -> MemoryPool {
        MemoryPool {
            state: Mutex::new(PoolStats { budget, ..PoolStats::default() }),
            freed: Condvar::new(),
            relief: OnceLock::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PoolStats> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait for a reservation to be given back, at most until `deadline`
    /// and [`GIVE_UP_POLL`]; Err when the thread's request was abandoned.
    fn wait_a_while<'a>(
        &'a self,
        s: MutexGuard<'a, PoolStats>,
        deadline: Instant,
    ) -> Result<MutexGuard<'a, PoolStats>, MutexGuard<'a, PoolStats>> {
        let slice = deadline.saturating_duration_since(Instant::now()).min(GIVE_UP_POLL);
        let s = self.freed.wait_timeout(s, slice).unwrap_or_else(|p| p.into_inner()).0;
        if given_up() { Err(s) } else { Ok(s) }
    }

    /// Set what gives memory back when a reservation does not fit (once).
    pub fn set_relief(&self, f: Relief) {
        let _ = self.relief.set(f);
    }

    /// The counters now.
    pub fn stats(&self) -> PoolStats {
        *self.lock()
    }

    /// Reserve `bytes`, waiting up to `wait` for other requests to free
    /// memory (after asking the relief to give back what it holds).
    pub fn reserve(&'static self, bytes: u64, wait: Duration) -> Result<Reservation, DeviceError> {
        let mut s = self.lock();
        if bytes > s.budget {
            s.failures += 1;
            return Err(DeviceError::OutOfMemory(format!(
                "a request needs {} of GPU memory, more than the GPU's budget of {} (pg_strom.gpu_memory_budget)",
                size_mb(bytes),
                size_mb(s.budget)
            )));
        }
        if s.reserved + bytes > s.budget {
            s.waits += 1;
            if let Some(relieve) = self.relief.get() {
                drop(s);
                relieve(&|| {
                    let s = self.lock();
                    s.reserved + bytes <= s.budget
                });
                s = self.lock();
            }
            let deadline = Instant::now() + wait;
            while s.reserved + bytes > s.budget {
                let now = Instant::now();
                if now >= deadline {
                    s.failures += 1;
                    return Err(DeviceError::OutOfMemory(format!(
                        "waited {} s for {} of GPU memory: {} of the budget of {} stayed in use by other requests (pg_strom.gpu_memory_budget)",
                        wait.as_secs(),
                        size_mb(bytes),
                        size_mb(s.reserved),
                        size_mb(s.budget)
                    )));
                }
                s = match self.wait_a_while(s, deadline) {
                    Ok(s) => s,
                    Err(mut s) => {
                        s.failures += 1;
                        return Err(abandoned());
                    }
                };
            }
        }
        s.reserved += bytes;
        s.peak = s.peak.max(s.reserved);
        Ok(Reservation { pool: Some(self), bytes })
    }

    /// When the device refused memory the budget allowed (other processes
    /// use the GPU): ask the relief, then wait for some reservation to be
    /// given back, at most `wait` (less when the request is abandoned).
    /// True when one was.
    pub fn wait_for_free(&'static self, wait: Duration) -> bool {
        if let Some(relieve) = self.relief.get() {
            // (the device, not the budget, is short: everything idle goes)
            relieve(&|| false);
        }
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        let before = s.reserved;
        while s.reserved >= before {
            if Instant::now() >= deadline {
                return false;
            }
            s = match self.wait_a_while(s, deadline) {
                Ok(s) => s,
                Err(_) => return false,
            };
        }
        true
    }
}

static POOLS: [OnceLock<MemoryPool>; MAX_POOLS] = [const { OnceLock::new() }; MAX_POOLS];

/// Give GPU `ordinal` a pool of `budget` bytes (once; later calls keep the
/// first budget).
pub fn configure(ordinal: usize, budget: u64) -> Option<&'static MemoryPool> {
    let slot = POOLS.get(ordinal)?;
    Some(slot.get_or_init(|| MemoryPool::new(budget)))
}

/// GPU `ordinal`'s pool, when it has one.
pub fn pool(ordinal: usize) -> Option<&'static MemoryPool> {
    POOLS.get(ordinal).and_then(|p| p.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn leak(budget: u64) -> &'static MemoryPool {
        Box::leak(Box::new(MemoryPool::new(budget)))
    }

    #[test]
    fn reservations_wait_for_memory_and_fail_clearly() {
        let p = leak(100);
        let a = p.reserve(60, Duration::ZERO).unwrap();
        assert_eq!(p.stats().reserved, 60);
        // too much for the whole budget: at once
        let e = p.reserve(101, MEMORY_WAIT).err().unwrap();
        assert!(matches!(e, DeviceError::OutOfMemory(_)) && e.hint().is_some(), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("more than the GPU's budget"), "{e}");
        // does not fit now, nothing frees: fails after the wait
        let t = Instant::now();
        let e = p.reserve(50, Duration::from_millis(50)).err().unwrap().to_string();
        assert!(e.contains("waited 0 s for 1 MB") && t.elapsed() >= Duration::from_millis(50), "{e}");
        // freed by another thread meanwhile: succeeds
        let waiter = std::thread::spawn(move || p.reserve(50, Duration::from_secs(10)).map(|r| r.bytes));
        std::thread::sleep(Duration::from_millis(50));
        drop(a);
        assert_eq!(waiter.join().unwrap().unwrap(), 50);
        let s = p.stats();
        assert_eq!((s.reserved, s.peak, s.waits, s.failures), (0, 60, 2, 2), "{s:?}");
        assert!(Reservation::NONE.pool.is_none());
    }

    #[test]
    fn an_abandoned_request_stops_waiting() {
        static GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let p = leak(100);
        let _held = p.reserve(80, Duration::ZERO).unwrap();
        let waiter = std::thread::spawn(move || {
            set_give_up(Some(Box::new(|| GONE.load(Ordering::Relaxed))));
            let t = Instant::now();
            let e = p.reserve(50, MEMORY_WAIT).err().unwrap();
            let freed = p.wait_for_free(MEMORY_WAIT);
            (e, freed, t.elapsed())
        });
        std::thread::sleep(Duration::from_millis(150));
        GONE.store(true, Ordering::Relaxed);
        let (e, freed, took) = waiter.join().unwrap();
        assert!(e.to_string().contains("abandoned"), "{e}");
        assert!(!freed);
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert_eq!(p.stats().failures, 1);
        // other threads have no check: unaffected
        assert!(p.reserve(20, Duration::ZERO).is_ok());
    }

    #[test]
    fn a_reservation_that_does_not_fit_asks_the_relief_first() {
        static RELIEVED: AtomicU32 = AtomicU32::new(0);
        let p = leak(100);
        let cached = std::sync::Mutex::new(Some(p.reserve(90, Duration::ZERO).unwrap()));
        let cached: &'static _ = Box::leak(Box::new(cached));
        p.set_relief(Box::new(|_fits| {
            RELIEVED.fetch_add(1, Ordering::Relaxed);
            cached.lock().unwrap().take();
        }));
        let r = p.reserve(50, Duration::ZERO).unwrap();
        assert_eq!(RELIEVED.load(Ordering::Relaxed), 1);
        assert_eq!(p.stats().reserved, 50);
        drop(r);
    }

    #[test]
    fn the_relief_gives_back_costlier_memory_only_while_the_reservation_does_not_fit() {
        // a cache of 30 bytes (cheap to give back) and a store copy of 40
        // (costly): a reservation of 40 needs only the cache, one of 60
        // both
        type Held = std::sync::Mutex<Option<Reservation>>;
        let p = leak(100);
        let cache: &'static Held = Box::leak(Box::new(Held::new(Some(p.reserve(30, Duration::ZERO).unwrap()))));
        let copy: &'static Held = Box::leak(Box::new(Held::new(Some(p.reserve(40, Duration::ZERO).unwrap()))));
        let _other = p.reserve(20, Duration::ZERO).unwrap();
        p.set_relief(Box::new(move |fits| {
            cache.lock().unwrap().take();
            if !fits() {
                copy.lock().unwrap().take();
            }
        }));
        let a = p.reserve(40, Duration::ZERO).unwrap();
        assert!(cache.lock().unwrap().is_none() && copy.lock().unwrap().is_some());
        assert_eq!(p.stats().reserved, 100);
        drop(a);
        *cache.lock().unwrap() = Some(p.reserve(30, Duration::ZERO).unwrap());
        let b = p.reserve(60, Duration::ZERO).unwrap();
        assert!(cache.lock().unwrap().is_none() && copy.lock().unwrap().is_none());
        assert_eq!(p.stats().reserved, 80);
        drop(b);
    }
}
