//! The engines' copy of GPU store tables (Gstore_Fdw): each table's row
//! versions, columnar, kept where the engine computes (device memory of a
//! GPU, host memory of the GPU service's CPU engine) and brought up to
//! date from the backends' replay of the table's redo log, so that a query
//! moves no rows.
//!
//! Owns: the identity of a copy ([`StoreId`]: a new checkpoint generation,
//! other files or other column types make another copy), the copies of
//! each engine, the batches that append row versions and apply deletions
//! ([`StoreSync`]; deletions are scattered on the GPU by
//! `kern_store_delete`), and the view of a query's snapshot
//! ([`StoreView`], evaluated per row by `device_store.h` in the scan
//! step).
//!
//! The backends know what the log holds; the copy knows how far it was
//! brought ([`StoreState`]: row versions and deletions applied, counted
//! from the generation's first).  A batch says where it starts, and is
//! applied only there: two backends bringing one copy up to date at once
//! never apply a record twice, and the one that lost asks again from where
//! the copy stands.  A copy may run ahead of a backend (another backend
//! replayed more of the log): the rows it does not know are past the end
//! of its scan, and their transactions are not in its view, so they are
//! invisible to it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::catalog::type_info;
use crate::engine::ColumnData;
use crate::error::DeviceError;

/// Which copy: a table of a database of a cluster, as of a checkpoint
/// generation of its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StoreId {
    /// The cluster's system identifier.
    pub sysid: u64,
    /// The database's oid.
    pub db: u32,
    /// The table's oid.
    pub rel: u32,
    /// The base file's generation.
    pub generation: u64,
    /// A hash of the files' paths and the columns' types.
    pub files: u64,
}

impl StoreId {
    fn table(&self) -> (u64, u32, u32) {
        (self.sysid, self.db, self.rel)
    }
}

/// How far a copy was brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreState {
    /// Row versions held.
    pub rows: u64,
    /// Deletions applied.
    pub deletes: u64,
    /// Bytes the copy holds (columns and row-version arrays).
    pub bytes: u64,
}

/// A batch for a copy: row versions `[from_rows, from_rows + nrows)` and
/// deletions `[from_deletes, from_deletes + del_rows.len())`.
#[derive(Debug, Clone, Copy)]
pub struct StoreSync<'a> {
    /// The copy.
    pub id: StoreId,
    /// Device types of the columns the copy holds, in order.
    pub types: &'a [u16],
    /// The first row version of the batch.
    pub from_rows: u64,
    /// Row versions in the batch.
    pub nrows: u32,
    /// Their columns (one per type, in host memory), or none when `nrows`
    /// is 0.
    pub columns: &'a [ColumnData<'a>],
    /// Per row version: the inserting transaction and command.
    pub xmin: &'a [u64],
    /// See `xmin`.
    pub cmin: &'a [u32],
    /// The first deletion of the batch.
    pub from_deletes: u64,
    /// Per deletion: the row version, the deleting transaction, command.
    pub del_rows: &'a [u64],
    /// See `del_rows`.
    pub del_xids: &'a [u64],
    /// See `del_rows`.
    pub del_cids: &'a [u32],
}

impl StoreSync<'_> {
    /// A batch of nothing: only asks where the copy stands.
    pub fn ask(id: StoreId, types: &[u16]) -> StoreSync<'_> {
        StoreSync {
            id,
            types,
            from_rows: 0,
            nrows: 0,
            columns: &[],
            xmin: &[],
            cmin: &[],
            from_deletes: 0,
            del_rows: &[],
            del_xids: &[],
            del_cids: &[],
        }
    }

    /// Check the batch's own consistency.
    pub fn validate(&self) -> Result<(), DeviceError> {
        let n = self.nrows as usize;
        let bad = |what: &str| Err(DeviceError::InvalidRequest(format!("store batch: {what}")));
        if self.types.iter().any(|&t| type_info(t).is_none()) {
            return bad("unknown column type");
        }
        if n > 0 && (self.columns.len() != self.types.len() || self.xmin.len() != n || self.cmin.len() != n) {
            return bad("columns or row versions do not match the row count");
        }
        if self.columns.iter().zip(self.types).any(|(c, &t)| c.type_id != t) {
            return bad("column types differ");
        }
        if n > 0 {
            crate::engine::validate_columns(self.columns, self.nrows)?;
        }
        if self.del_xids.len() != self.del_rows.len() || self.del_cids.len() != self.del_rows.len() {
            return bad("deletions do not match");
        }
        Ok(())
    }
}

/// What a query's snapshot makes of the transactions that wrote to a
/// store (`DevStoreView` of device_store.h, less the row arrays).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreView {
    /// Every transaction below has finished (the snapshot's xmin).
    pub horizon: u64,
    /// Row versions below this one (of the whole store) are hidden by a
    /// TRUNCATE.
    pub hide_below: u64,
    /// The snapshot's command id.
    pub curcid: u32,
    /// Sorted: the store's aborted transactions below the horizon.
    pub aborted: Vec<u64>,
    /// Sorted: the store's transactions at or above the horizon ...
    pub window: Vec<u64>,
    /// ... and what the snapshot makes of each (`XID_*`).
    pub states: Vec<u8>,
}

/// [`StoreView::states`]: running for the snapshot, or aborted.
pub const XID_INVISIBLE: u8 = 0;
/// Committed before the snapshot.
pub const XID_COMMITTED: u8 = 1;
/// The snapshot's own transaction.
pub const XID_CURRENT: u8 = 2;

impl StoreView {
    /// Check the view's consistency (sorted lists, matching lengths).
    pub fn validate(&self) -> Result<(), DeviceError> {
        let sorted = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
        if !sorted(&self.aborted) || !sorted(&self.window) || self.window.len() != self.states.len() {
            return Err(DeviceError::InvalidRequest("store view: lists out of order".into()));
        }
        if self.aborted.len() > u32::MAX as usize || self.window.len() > u32::MAX as usize {
            return Err(DeviceError::InvalidRequest("store view: lists too long".into()));
        }
        Ok(())
    }
}

/// The row-version arrays of a chunk's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowVersions {
    /// Inserting transaction of each row.
    pub xmin: Vec<u64>,
    /// Inserting command.
    pub cmin: Vec<u32>,
    /// Last deleting transaction (0: none).
    pub xmax: Vec<u64>,
    /// Last deleting command.
    pub cmax: Vec<u32>,
}

/// Where a chunk's row-version arrays are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreMvcc {
    /// In the engine's copy of the store.
    Copy(StoreId),
    /// With the request (the chunk's rows, from the backend's replay).
    Inline(Arc<RowVersions>),
}

/// The rows of a chunk of a GPU store: rows `[first_row, first_row +
/// nrows)` of the store's row versions, and the view that decides which
/// of them the scan sees.  Columns with [`ColumnData::store`] are read
/// from the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreRows {
    /// The query's view.
    pub view: Arc<StoreView>,
    /// The chunk's first row version.
    pub first_row: u64,
    /// Its row versions' arrays.
    pub mvcc: StoreMvcc,
}

/// `DevStoreView` of device_store.h.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevStoreViewRepr {
    pub xmin: u64,
    pub cmin: u64,
    pub xmax: u64,
    pub cmax: u64,
    pub aborted: u64,
    pub window: u64,
    pub states: u64,
    pub horizon: u64,
    pub hide_below: u64,
    pub naborted: u32,
    pub nwindow: u32,
    pub curcid: u32,
    pub reserved: u32,
}

const _: () = assert!(std::mem::size_of::<DevStoreViewRepr>() == 88);

impl DevStoreViewRepr {
    /// The view for the chunk of `rows` (of `nrows` rows): the row arrays
    /// and lists at the addresses given.
    pub(crate) fn new(rows: &StoreRows, arrays: [u64; 4], lists: [u64; 3]) -> DevStoreViewRepr {
        let v = &rows.view;
        DevStoreViewRepr {
            xmin: arrays[0],
            cmin: arrays[1],
            xmax: arrays[2],
            cmax: arrays[3],
            aborted: lists[0],
            window: lists[1],
            states: lists[2],
            horizon: v.horizon,
            hide_below: v.hide_below.saturating_sub(rows.first_row),
            naborted: v.aborted.len() as u32,
            nwindow: v.window.len() as u32,
            curcid: v.curcid,
            reserved: 0,
        }
    }
}

/// Check a chunk of store rows against the `held` row versions of its
/// copy (or of the chunk itself, for inline row versions).
pub(crate) fn check_rows(rows: &StoreRows, nrows: u32, held: u64) -> Result<(), DeviceError> {
    rows.view.validate()?;
    let end = rows.first_row.checked_add(nrows as u64);
    if end.is_none_or(|e| e > held) {
        return Err(DeviceError::InvalidRequest(format!(
            "the store chunk of rows {}..+{nrows} lies beyond the {held} row versions held",
            rows.first_row
        )));
    }
    if !rows.first_row.is_multiple_of(64) {
        return Err(DeviceError::InvalidRequest("a store chunk must start on a 64-row boundary".into()));
    }
    if let StoreMvcc::Inline(v) = &rows.mvcc {
        let n = nrows as usize;
        if v.xmin.len() != n || v.cmin.len() != n || v.xmax.len() != n || v.cmax.len() != n {
            return Err(DeviceError::InvalidRequest("store chunk: row versions do not match the rows".into()));
        }
    }
    Ok(())
}

/// Keep only the last deletion of each row of a batch (in log order):
/// (rows, xids, cids) for a scatter in which no two write one row.
pub(crate) fn last_deletions(s: &StoreSync<'_>) -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let mut at: HashMap<u64, usize> = HashMap::with_capacity(s.del_rows.len());
    let mut out: (Vec<u64>, Vec<u64>, Vec<u32>) = Default::default();
    for i in 0..s.del_rows.len() {
        let (r, x, c) = (s.del_rows[i], s.del_xids[i], s.del_cids[i]);
        match at.get(&r) {
            Some(&k) => {
                out.1[k] = x;
                out.2[k] = c;
            }
            None => {
                at.insert(r, out.0.len());
                out.0.push(r);
                out.1.push(x);
                out.2.push(c);
            }
        }
    }
    out
}

/// What to do with a batch for a copy that stands at `state`.
pub(crate) struct Plan {
    /// Append the batch's rows.
    pub rows: bool,
    /// Apply its deletions.
    pub deletes: bool,
}

/// Which parts of batch `s` apply to a copy at `state`: each only where it
/// starts where the copy stands.
pub(crate) fn plan(s: &StoreSync<'_>, state: StoreState) -> Plan {
    Plan {
        rows: s.nrows > 0 && s.from_rows == state.rows,
        deletes: !s.del_rows.is_empty() && s.from_deletes == state.deletes,
    }
}

/// Whether engines of this process keep copies in host memory (the GPU
/// service's CPU engine); a backend's own CPU engine does not: the
/// backend's replay is its copy.
static HOST_COPIES: AtomicBool = AtomicBool::new(false);

/// Let this process's CPU engine keep copies (the GPU service).
pub fn keep_host_copies(on: bool) {
    HOST_COPIES.store(on, Ordering::Relaxed);
}

/// Whether this process's CPU engine keeps copies.
pub fn host_copies() -> bool {
    HOST_COPIES.load(Ordering::Relaxed)
}

/// A column of a copy in host memory.
pub(crate) struct HostColumn {
    pub type_id: u16,
    width: usize,
    pub values: Vec<u8>,
    /// One bit per row version, set when not NULL.
    pub validity: Vec<u8>,
    /// Variable-length types: offsets into `values` (rows + 1).
    pub offsets: Vec<u32>,
}

/// A copy in host memory.
pub(crate) struct HostStore {
    id: StoreId,
    types: Vec<u16>,
    pub cols: Vec<HostColumn>,
    pub versions: RowVersions,
    deletes: u64,
}

/// The copies of host memory, by table.
type HostCopies = Mutex<HashMap<(u64, u32, u32), Arc<RwLock<HostStore>>>>;
static HOST_STORES: std::sync::OnceLock<HostCopies> = std::sync::OnceLock::new();

fn host_stores() -> &'static HostCopies {
    HOST_STORES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Append `n` validity bits (all set when `src` is None) at bit `at` of
/// `bits`.
pub(crate) fn append_bits(bits: &mut Vec<u8>, at: u64, src: Option<&[u8]>, n: usize) {
    let end = at as usize + n;
    bits.resize(end.div_ceil(8), 0);
    for i in 0..n {
        let set = src.is_none_or(|b| b[i / 8] >> (i % 8) & 1 == 1);
        let j = at as usize + i;
        if set {
            bits[j / 8] |= 1 << (j % 8);
        } else {
            bits[j / 8] &= !(1 << (j % 8));
        }
    }
}

impl HostStore {
    fn new(id: StoreId, types: &[u16]) -> HostStore {
        HostStore {
            id,
            types: types.to_vec(),
            cols: types
                .iter()
                .map(|&t| HostColumn {
                    type_id: t,
                    width: type_info(t).map_or(0, |i| i.width),
                    values: Vec::new(),
                    validity: Vec::new(),
                    offsets: vec![0],
                })
                .collect(),
            versions: RowVersions::default(),
            deletes: 0,
        }
    }

    /// Row versions held.
    pub(crate) fn rows(&self) -> u64 {
        self.versions.xmin.len() as u64
    }

    fn state(&self) -> StoreState {
        let cols: usize = self.cols.iter().map(|c| c.values.len() + c.validity.len() + c.offsets.len() * 4).sum();
        StoreState {
            rows: self.versions.xmin.len() as u64,
            deletes: self.deletes,
            bytes: (cols + self.versions.xmin.len() * 24) as u64,
        }
    }

    fn apply(&mut self, s: &StoreSync<'_>) -> Result<(), DeviceError> {
        let p = plan(s, self.state());
        if p.rows {
            let n = s.nrows as usize;
            let at = self.versions.xmin.len() as u64;
            for (c, d) in self.cols.iter_mut().zip(s.columns) {
                if c.width == 0 {
                    let (bytes, ends) = rebased_text(d, n, c.values.len() as u64)?;
                    c.values.extend_from_slice(bytes);
                    c.offsets.extend(ends);
                } else {
                    c.values.extend_from_slice(&d.values[..n * c.width]);
                }
                append_bits(&mut c.validity, at, d.validity, n);
            }
            self.versions.xmin.extend_from_slice(s.xmin);
            self.versions.cmin.extend_from_slice(s.cmin);
            self.versions.xmax.resize(self.versions.xmin.len(), 0);
            self.versions.cmax.resize(self.versions.xmin.len(), 0);
        }
        if p.deletes {
            let held = self.versions.xmin.len() as u64;
            for i in 0..s.del_rows.len() {
                let r = s.del_rows[i];
                if r < held {
                    self.versions.xmax[r as usize] = s.del_xids[i];
                    self.versions.cmax[r as usize] = s.del_cids[i];
                }
            }
            self.deletes += s.del_rows.len() as u64;
        }
        Ok(())
    }
}

/// The bytes of the `n` values of batch column `d` (a variable-length
/// type) and their end offsets rebased onto a copy's column that holds
/// `base` bytes already; an error past the 4 GB its offsets address.
pub(crate) fn rebased_text<'a>(d: &ColumnData<'a>, n: usize, base: u64) -> Result<(&'a [u8], Vec<u32>), DeviceError> {
    let off = d.offsets.expect("validated");
    let (lo, hi) = (off[0] as usize, off[n] as usize);
    if base + (hi - lo) as u64 > u32::MAX as u64 {
        return Err(too_much_text());
    }
    Ok((&d.values[lo..hi], off[1..=n].iter().map(|&o| (base + (o as usize - lo) as u64) as u32).collect()))
}

/// The error for a text column past what a copy's offsets address.
pub(crate) fn too_much_text() -> DeviceError {
    DeviceError::OutOfMemory(
        "a text column of a GPU store copy may hold at most 4 GB; larger copies are not supported yet".into(),
    )
}

/// Apply batch `s` to the host copy of its table (made, or made anew for
/// another identity, when the batch starts at the beginning); where the
/// copy stands after it.
pub fn host_sync(s: &StoreSync<'_>) -> Result<StoreState, DeviceError> {
    s.validate()?;
    let store = {
        let mut m = host_stores().lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(s.id.table()).or_insert_with(|| Arc::new(RwLock::new(HostStore::new(s.id, s.types))));
        {
            let mut st = e.write().unwrap_or_else(|p| p.into_inner());
            if st.id != s.id || st.types != s.types {
                *st = HostStore::new(s.id, s.types);
            }
        }
        e.clone()
    };
    let mut st = store.write().unwrap_or_else(|p| p.into_inner());
    if st.id != s.id {
        // another batch made it anew meanwhile
        return Ok(StoreState::default());
    }
    st.apply(s)?;
    Ok(st.state())
}

/// The host copy `id` names, if this process holds it.
pub(crate) fn host_store(id: &StoreId) -> Option<Arc<RwLock<HostStore>>> {
    let m = host_stores().lock().unwrap_or_else(|p| p.into_inner());
    m.get(&id.table()).filter(|s| s.read().unwrap_or_else(|p| p.into_inner()).id == *id).cloned()
}

/// Forget every host copy (tests).
pub fn clear_host_copies() {
    host_stores().lock().unwrap_or_else(|p| p.into_inner()).clear();
}

/// The error for a chunk whose copy the engine does not hold (dropped for
/// another generation, or lost with a restart).
pub(crate) fn no_copy(id: &StoreId) -> DeviceError {
    DeviceError::InvalidRequest(format!(
        "the engine holds no copy of GPU store table {} (generation {})",
        id.rel, id.generation
    ))
}

/// The columns of a chunk of host copy `st`: those marked
/// [`ColumnData::store`] read from it, rows `[first, first + nrows)`.
pub(crate) fn host_columns<'a>(
    st: &'a HostStore,
    cols: &[ColumnData<'a>],
    first: u64,
    nrows: u32,
) -> Result<Vec<ColumnData<'a>>, DeviceError> {
    cols.iter()
        .map(|c| {
            let Some(k) = c.store else { return Ok(*c) };
            let h = st.cols.get(k as usize).filter(|h| h.type_id == c.type_id).ok_or_else(|| {
                DeviceError::InvalidRequest(format!("store column {k} is not one of type {}", c.type_id))
            })?;
            let (f, n) = (first as usize, nrows as usize);
            Ok(if h.width == 0 {
                ColumnData {
                    type_id: c.type_id,
                    values: &h.values,
                    validity: Some(&h.validity[f / 8..]),
                    offsets: Some(&h.offsets[f..=f + n]),
                    ..Default::default()
                }
            } else {
                ColumnData {
                    type_id: c.type_id,
                    values: &h.values[f * h.width..(f + n) * h.width],
                    validity: Some(&h.validity[f / 8..]),
                    ..Default::default()
                }
            })
        })
        .collect()
}

/// The row versions of host copy `st` for rows `[first, first + n)`.
pub(crate) fn host_versions(st: &HostStore, first: u64, n: u32) -> [u64; 4] {
    let f = first as usize;
    let v = &st.versions;
    [v.xmin[f..].as_ptr() as u64, v.cmin[f..].as_ptr() as u64, v.xmax[f..].as_ptr() as u64, v.cmax[f..].as_ptr() as u64]
        .map(|p| if n == 0 { 0 } else { p })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int4(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn batches_apply_where_they_start() {
        clear_host_copies();
        let id = StoreId { sysid: 1, db: 2, rel: 3, generation: 0, files: 9 };
        let t = [crate::program::type_id("INT4")];
        let vals = int4(&[1, 2, 3]);
        let cols = [ColumnData { type_id: t[0], values: &vals, ..Default::default() }];
        let mut s = StoreSync::ask(id, &t);
        assert_eq!(host_sync(&s).unwrap().rows, 0);
        s.nrows = 3;
        s.columns = &cols;
        s.xmin = &[5, 5, 6];
        s.cmin = &[0, 1, 0];
        assert_eq!(host_sync(&s).unwrap().rows, 3);
        // the same batch again: already applied
        assert_eq!(host_sync(&s).unwrap().rows, 3);
        let mut d = StoreSync::ask(id, &t);
        d.del_rows = &[1, 1];
        d.del_xids = &[7, 8];
        d.del_cids = &[0, 2];
        assert_eq!(host_sync(&d).unwrap().deletes, 2);
        let st = host_store(&id).unwrap();
        let st = st.read().unwrap();
        assert_eq!(st.versions.xmax, vec![0, 8, 0]);
        assert_eq!(st.versions.cmax, vec![0, 2, 0]);
        assert_eq!(last_deletions(&d), (vec![1], vec![8], vec![2]));
        drop(st);
        // another generation: made anew
        let id2 = StoreId { generation: 1, ..id };
        assert_eq!(host_sync(&StoreSync::ask(id2, &t)).unwrap().rows, 0);
        assert!(host_store(&id).is_none());
    }

    #[test]
    fn bits_append_at_any_offset() {
        let mut b = Vec::new();
        append_bits(&mut b, 0, Some(&[0b101]), 3);
        append_bits(&mut b, 3, None, 6);
        assert_eq!(b, vec![0b1111_1101, 0b1]);
        append_bits(&mut b, 9, Some(&[0]), 1);
        assert_eq!(b, vec![0b1111_1101, 0b1]);
    }
}
