//! The GPU's copies of GPU store tables (devstore.rs): each column and
//! row-version array in device memory, grown by doubling (the old
//! contents copied on the device), accounted in the GPU's memory pool.
//! Appended row versions are copied in; deletions are scattered by
//! `kern_store_delete`.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, RwLock};

use crate::catalog::type_info;
use crate::devstore::{StoreId, StoreState, StoreSync, append_bits, last_deletions, plan, rebased_text};
use crate::engine::ColumnData;
use crate::error::DeviceError;
use crate::gpu::{DeviceBuffer, GpuEngine};

/// A growable array in device memory.
#[derive(Default)]
pub(crate) struct DevVec {
    buf: Option<DeviceBuffer<'static>>,
    cap: usize,
    len: usize,
}

impl DevVec {
    /// The device address of byte 0 (0 when nothing was allocated).
    pub(crate) fn ptr(&self) -> u64 {
        self.buf.as_ref().map_or(0, |b| b.ptr)
    }

    /// Room for `need` bytes (contents kept).
    fn reserve(&mut self, eng: &GpuEngine, need: usize, what: &str) -> Result<(), DeviceError> {
        if need <= self.cap {
            return Ok(());
        }
        let cap = need.max(self.cap * 2).max(4096).next_multiple_of(4096);
        let drv = eng.drv;
        let buf = DeviceBuffer::alloc(drv, cap).map_err(|e| match e {
            DeviceError::OutOfMemory(m) => DeviceError::OutOfMemory(format!(
                "the GPU store copy's {what} needs {cap} bytes of GPU{} memory: {m}",
                eng.device.ordinal
            )),
            e => e,
        })?;
        if self.len > 0 {
            let old = self.ptr();
            // SAFETY: both allocations hold `len` bytes; the copy is
            // waited for before the old one is freed.
            unsafe {
                drv.check("cuMemcpyDtoDAsync", (drv.cuMemcpyDtoDAsync)(buf.ptr, old, self.len, std::ptr::null_mut()))?;
                drv.check("cuStreamSynchronize", (drv.cuStreamSynchronize)(std::ptr::null_mut()))?;
            }
        }
        self.buf = Some(buf);
        self.cap = cap;
        Ok(())
    }

    /// Write `data` at byte `at` (at most `len`), growing as needed.
    fn write(&mut self, eng: &GpuEngine, at: usize, data: &[u8], what: &str) -> Result<(), DeviceError> {
        let end = at + data.len();
        self.reserve(eng, end, what)?;
        if !data.is_empty() {
            let drv = eng.drv;
            // SAFETY: the allocation holds `end` bytes.
            drv.check("cuMemcpyHtoD", unsafe {
                (drv.cuMemcpyHtoD)(self.ptr() + at as u64, data.as_ptr() as *const c_void, data.len())
            })?;
        }
        self.len = self.len.max(end);
        Ok(())
    }

    fn append(&mut self, eng: &GpuEngine, data: &[u8], what: &str) -> Result<(), DeviceError> {
        self.write(eng, self.len, data, what)
    }
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: a view of plain-old-data.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// A column of a GPU copy.
pub(crate) struct GpuColumn {
    pub(crate) type_id: u16,
    pub(crate) width: usize,
    pub(crate) values: DevVec,
    pub(crate) validity: DevVec,
    /// The validity bitmap as written (the last byte is merged on append).
    bits: Vec<u8>,
    /// Variable-length types: offsets into `values` (rows + 1).
    pub(crate) offsets: DevVec,
}

/// A copy in device memory.
pub(crate) struct GpuStore {
    pub(crate) id: StoreId,
    types: Vec<u16>,
    pub(crate) cols: Vec<GpuColumn>,
    /// xmin, cmin, xmax, cmax.
    pub(crate) versions: [DevVec; 4],
    rows: u64,
    deletes: u64,
}

impl GpuStore {
    fn new(id: StoreId, types: &[u16]) -> GpuStore {
        GpuStore {
            id,
            types: types.to_vec(),
            cols: types
                .iter()
                .map(|&t| GpuColumn {
                    type_id: t,
                    width: type_info(t).map_or(0, |i| i.width),
                    values: DevVec::default(),
                    validity: DevVec::default(),
                    bits: Vec::new(),
                    offsets: DevVec::default(),
                })
                .collect(),
            versions: Default::default(),
            rows: 0,
            deletes: 0,
        }
    }

    /// Row versions held.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    fn state(&self) -> StoreState {
        let cols: usize = self.cols.iter().map(|c| c.values.cap + c.validity.cap + c.offsets.cap).sum();
        let versions: usize = self.versions.iter().map(|v| v.cap).sum();
        StoreState { rows: self.rows, deletes: self.deletes, bytes: (cols + versions) as u64 }
    }

    fn apply(&mut self, eng: &GpuEngine, s: &StoreSync<'_>) -> Result<(), DeviceError> {
        let p = plan(s, self.state());
        if p.rows {
            let n = s.nrows as usize;
            let at = self.rows;
            for (c, d) in self.cols.iter_mut().zip(s.columns) {
                if c.width == 0 {
                    if c.offsets.len == 0 {
                        c.offsets.append(eng, bytes_of(&[0u32]), "offsets")?;
                    }
                    let (bytes, ends) = rebased_text(d, n, c.values.len as u64)?;
                    c.values.append(eng, bytes, "text")?;
                    c.offsets.append(eng, bytes_of(&ends), "offsets")?;
                } else {
                    c.values.append(eng, &d.values[..n * c.width], "values")?;
                }
                let from = at as usize / 8;
                append_bits(&mut c.bits, at, d.validity, n);
                let part = c.bits[from..].to_vec();
                c.validity.write(eng, from, &part, "validity bitmap")?;
            }
            let zeros = vec![0u8; n * 8];
            self.versions[0].append(eng, bytes_of(s.xmin), "row versions")?;
            self.versions[1].append(eng, bytes_of(s.cmin), "row versions")?;
            self.versions[2].append(eng, &zeros, "row versions")?;
            self.versions[3].append(eng, &zeros[..n * 4], "row versions")?;
            self.rows += n as u64;
        }
        if p.deletes {
            let (rows, xids, cids) = last_deletions(s);
            let drv = eng.drv;
            let (r, x, c) = (
                DeviceBuffer::upload(drv, &rows)?,
                DeviceBuffer::upload(drv, &xids)?,
                DeviceBuffer::upload(drv, &cids)?,
            );
            let (mut p_rows, mut p_xids, mut p_cids) = (r.ptr, x.ptr, c.ptr);
            let mut p_n = rows.len() as u32;
            let mut p_held = self.rows;
            let (mut p_xmax, mut p_cmax) = (self.versions[2].ptr(), self.versions[3].ptr());
            let mut kp = kparams!(p_rows, p_xids, p_cids, p_n, p_held, p_xmax, p_cmax);
            if p_n > 0 && p_xmax != 0 {
                // SAFETY: kern_store_delete's parameters in order; the
                // arrays hold `p_n` entries, xmax and cmax `p_held` rows.
                unsafe { eng.launch_and_wait("kern_store_delete", eng.grid_for(p_n), &mut kp)? };
            }
            self.deletes += s.del_rows.len() as u64;
        }
        Ok(())
    }

    /// The device addresses of rows `first..` of the row-version arrays.
    pub(crate) fn versions_at(&self, first: u64) -> [u64; 4] {
        let w = [8u64, 4, 8, 4];
        std::array::from_fn(|i| self.versions[i].ptr() + first * w[i])
    }

    /// `cols` with their store columns pointed at this copy's rows
    /// `first..` (the GPU's context is current).
    pub(crate) fn resolve(&self, cols: &mut [ColumnData<'_>], first: u64) -> Result<(), DeviceError> {
        for c in cols.iter_mut() {
            let Some(k) = c.store else { continue };
            let g = self.cols.get(k as usize).filter(|g| g.type_id == c.type_id).ok_or_else(|| {
                DeviceError::InvalidRequest(format!("store column {k} is not one of type {}", c.type_id))
            })?;
            let bits = g.validity.ptr() + first / 8;
            c.resident = Some(if g.width == 0 {
                (g.values.ptr(), bits, g.offsets.ptr() + first * 4)
            } else {
                (g.values.ptr() + first * g.width as u64, bits, 0)
            });
        }
        Ok(())
    }
}

/// A copy, shared by the sessions that read it (at once) or bring it up
/// to date (one at a time, while none reads).
pub(crate) type SharedStore = Arc<RwLock<GpuStore>>;

/// A copy in the GPU's table: the copy, and when it was last used (a
/// tick of [`Copies::tick`]).
struct Entry {
    store: SharedStore,
    used: u64,
}

#[derive(Default)]
struct Copies {
    by_table: HashMap<(u64, u32, u32), Entry>,
    /// Counts uses: the least recently used idle copy goes first.
    tick: u64,
}

impl Copies {
    fn touch(&mut self, table: (u64, u32, u32)) {
        self.tick += 1;
        if let Some(e) = self.by_table.get_mut(&table) {
            e.used = self.tick;
        }
    }
}

/// The copies of one GPU, by table.
///
/// A copy stays in device memory between queries; when the GPU's memory
/// budget runs short and its caches did not give back enough (the memory
/// pool's relief), idle copies go, the least recently used first
/// ([`GpuStores::evict_idle`]).  A copy is idle when no session holds it:
/// a session holds the copy it brought up to date, or whose rows it reads,
/// until its scan ends (`JoinSession::store_pin`), so a copy never goes
/// in the middle of a query.  An evicted copy is built again, from the
/// backend's replay, by the next query that reads the table.
///
/// Lock order: a copy's lock may be held while the table's (`map`) is
/// taken (a batch's allocation that runs short evicts), never the other
/// way round.
#[derive(Default)]
pub(crate) struct GpuStores {
    map: Mutex<Copies>,
}

impl GpuStores {
    fn lock(&self) -> std::sync::MutexGuard<'_, Copies> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Apply batch `s` to the GPU's copy of its table (made, or made anew
    /// for another identity); where the copy stands after it, and the copy
    /// (which the caller holds while it reads it).  The GPU's context is
    /// current.
    pub(crate) fn sync(&self, eng: &GpuEngine, s: &StoreSync<'_>) -> Result<(StoreState, SharedStore), DeviceError> {
        s.validate()?;
        let table = (s.id.sysid, s.id.db, s.id.rel);
        let store = {
            let mut m = self.lock();
            let store = m
                .by_table
                .entry(table)
                .or_insert_with(|| Entry { store: Arc::new(RwLock::new(GpuStore::new(s.id, s.types))), used: 0 })
                .store
                .clone();
            m.touch(table);
            store
        };
        let mut st = store.write().unwrap_or_else(|p| p.into_inner());
        if st.id != s.id || st.types != s.types {
            // another generation (a checkpoint), other files or columns:
            // the old copy's memory goes now
            *st = GpuStore::new(s.id, s.types);
        }
        if let Err(e) = st.apply(eng, s) {
            // a half-applied batch leaves nothing behind
            *st = GpuStore::new(s.id, s.types);
            return Err(e);
        }
        let state = st.state();
        drop(st);
        Ok((state, store))
    }

    /// The copy `id` names, if the GPU holds it.
    pub(crate) fn get(&self, id: &StoreId) -> Option<SharedStore> {
        let table = (id.sysid, id.db, id.rel);
        let store = {
            let mut m = self.lock();
            let store = m.by_table.get(&table).map(|e| e.store.clone())?;
            m.touch(table);
            store
        };
        // (the copy's lock only once the table's is free: a batch bringing
        // the copy up to date holds its lock while its allocations may
        // evict copies under the table's)
        let same = store.read().unwrap_or_else(|p| p.into_inner()).id == *id;
        same.then_some(store)
    }

    /// Drop idle copies, the least recently used first, until `fits` says
    /// the reservation waiting for memory fits; the copies dropped and
    /// their bytes.  The GPU's context is current (the thread that needs
    /// the memory).
    pub(crate) fn evict_idle(&self, fits: &dyn Fn() -> bool) -> Vec<(StoreId, u64)> {
        let mut gone = Vec::new();
        loop {
            let victim = {
                let mut m = self.lock();
                let idle = m
                    .by_table
                    .iter()
                    .filter(|(_, e)| Arc::strong_count(&e.store) == 1)
                    .map(|(t, e)| (*t, e.used))
                    .collect::<Vec<_>>();
                match lru(&idle) {
                    Some(t) => m.by_table.remove(&t),
                    None => None,
                }
            };
            let Some(e) = victim else { break };
            // no session holds it (the map's was the only reference, and
            // sessions take theirs under the map's lock): freed here
            let st = e.store.read().unwrap_or_else(|p| p.into_inner());
            gone.push((st.id, st.state().bytes));
            drop(st);
            drop(e);
            if fits() {
                break;
            }
        }
        gone
    }
}

/// The least recently used of `idle` (table, last use).
fn lru(idle: &[((u64, u32, u32), u64)]) -> Option<(u64, u32, u32)> {
    idle.iter().min_by_key(|(_, used)| *used).map(|(t, _)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_idle_copy_goes_first() {
        assert_eq!(lru(&[]), None);
        assert_eq!(lru(&[((1, 2, 3), 7), ((1, 2, 4), 5), ((1, 3, 3), 9)]), Some((1, 2, 4)));
    }

    #[test]
    fn copies_in_use_are_not_idle_and_uses_are_counted() {
        let stores = GpuStores::default();
        let id = StoreId { sysid: 1, db: 2, rel: 3, generation: 1, files: 9 };
        let other = StoreId { rel: 4, ..id };
        {
            let mut m = stores.lock();
            for s in [id, other] {
                m.by_table.insert(
                    (s.sysid, s.db, s.rel),
                    Entry { store: Arc::new(RwLock::new(GpuStore::new(s, &[]))), used: 0 },
                );
            }
        }
        // a session holds `id`'s copy; `other` was used before it
        let held = stores.get(&id).expect("held");
        assert!(stores.get(&StoreId { generation: 2, ..id }).is_none(), "another generation is not this copy");
        let gone = stores.evict_idle(&|| false);
        assert_eq!(gone.iter().map(|g| g.0).collect::<Vec<_>>(), vec![other]);
        assert!(stores.get(&id).is_some() && stores.get(&other).is_none());
        drop(held);
        // idle now: the next shortage takes it, and stops when it fits
        let gone = stores.evict_idle(&|| true);
        assert_eq!(gone.len(), 1);
        assert!(stores.get(&id).is_none());
        assert!(stores.evict_idle(&|| false).is_empty());
    }
}
