//! A gstore_fdw table as a device node's source, from the store this
//! process replayed (`crate::gstore::state`), in one of three ways:
//!
//! - **Visible rows** (GpuScan): the row versions the query's snapshot
//!   sees, decided here with PostgreSQL's snapshot and commit log, gathered
//!   into chunks in the device's columnar layout, as a heap table's rows
//!   are.
//! - **The engine's copy** (GpuJoin, GpuPreAgg, when the session's engine
//!   keeps copies: the GPU service's GPUs and CPU engine): the copy is
//!   brought up to date with what this process replayed (row versions and
//!   deletions it lacks, in batches; `pgstrom_runtime::devstore`), and each
//!   chunk is a range of row versions named by number: no row moves, and
//!   the engine decides per row, by the query's [`StoreView`], which
//!   versions the snapshot sees.
//! - **Inline row versions** (a session whose engine keeps no copies:
//!   the backend's own CPU engine, after a fallback too): the same ranges,
//!   their columns and row versions gathered here, the view decided by the
//!   engine as for a copy.
//!
//! Serial scans only: the planner gives gstore_fdw tables no parallel
//! device paths.

use std::sync::Arc;

use pgrx::pg_sys;
use pgstrom_runtime::DeviceError;
use pgstrom_runtime::devstore::{RowVersions, StoreId, StoreMvcc, StoreRows, StoreSync, StoreView};
use pgstrom_runtime::engine::ColumnData;
use pgstrom_runtime::join::JoinSession;

use crate::chunk::ColumnChunk;
use crate::gstore::modify::heap_tuple;
use crate::gstore::state::{self, Store, Visibility};
use crate::pg::memctx::Switched;

/// Row versions per batch that brings a copy up to date.
const SYNC_ROWS: usize = 65536;
/// Deletions per batch.
const SYNC_DELETES: usize = 1 << 20;
/// Row versions per chunk of the engine's copy (nothing moves with a
/// chunk but its view: few large chunks, few requests; measured on an
/// H200, 10 million rows: 153 chunks of 65,536 rows took 113 ms).
const COPY_CHUNK_ROWS: usize = 1 << 22;

/// How the chunks are made.
enum Mode {
    /// The visible rows.
    Visible,
    /// Ranges of row versions of the engine's copy `id` (columns by their
    /// index in the copy).
    Copy { id: StoreId, index: Vec<u32>, engine: String, bytes: u64 },
    /// Ranges of row versions, gathered here.
    Inline,
}

/// The scan's ranges of row versions (modes other than visible rows).
struct Ranges {
    /// Row versions the scan covers (those replayed when it began).
    end: u64,
    /// The current chunk's first row version and row count.
    first: u64,
    nrows: u32,
    /// The query's view (made at the first chunk, with its snapshot).
    view: Option<Arc<StoreView>>,
    /// The current chunk's row versions (inline mode).
    versions: Option<Arc<RowVersions>>,
}

/// A gstore_fdw table read chunk by chunk.
pub struct GstoreChunks {
    rel: pg_sys::Relation,
    /// The device columns of the chunk.
    pub chunk: ColumnChunk,
    /// The row ids of the chunk's rows (visible rows; a range's are
    /// `ranges.first` on).
    ids: Vec<u64>,
    /// The next row version to look at.
    next: usize,
    vis: Option<Visibility>,
    /// A heap-tuple slot the rows are deformed in.
    slot: *mut pg_sys::TupleTableSlot,
    /// Memory of the rows being taken apart (reset per chunk).
    cxt: pg_sys::MemoryContext,
    /// What EXPLAIN prints: versions, log generation and bytes replayed.
    pub replayed: Option<(usize, u64, u64)>,
    /// The device columns the query reads.
    columns: Vec<(i16, u16)>,
    mode: Mode,
    ranges: Ranges,
    /// A heap table's GPU cache (rows carry their heap ctid).
    heap_cache: bool,
}

impl GstoreChunks {
    /// The table's `gpu_device_id` option: the GPU its copy belongs on
    /// (the scan runs there when the machine has it).
    pub fn gpu_device_id(&self) -> u32 {
        // SAFETY: the scan's relation, open while the source lives.
        let relid = unsafe { (*self.rel).rd_id };
        if self.heap_cache {
            return crate::gstore::cache::lookup(relid).map_or(0, |e| e.gpu_device_id as u32);
        }
        crate::gstore::options::of_table(relid).gpu_device_id as u32
    }

    /// The source of a scan of `rel` reading the device `columns`.
    ///
    /// # Safety
    /// Executor start; `rel` is an open gstore_fdw table; `parent` the
    /// query's memory context.
    pub unsafe fn new(rel: pg_sys::Relation, columns: &[(i16, u16)], parent: pg_sys::MemoryContext) -> GstoreChunks {
        // SAFETY: caller's promise.
        unsafe {
            let cxt = pg_sys::AllocSetContextCreateExtended(
                parent,
                c"gstore chunk".as_ptr(),
                pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
                pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
                pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
            );
            let slot = {
                let _c = Switched::to(parent);
                pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, &pg_sys::TTSOpsHeapTuple)
            };
            let replayed = Some(state::with_store(rel, |st| (st.rows.len(), st.generation, st.log_pos)));
            GstoreChunks {
                rel,
                chunk: ColumnChunk::new(columns),
                ids: Vec::new(),
                next: 0,
                vis: None,
                slot,
                cxt,
                replayed,
                columns: columns.to_vec(),
                mode: Mode::Visible,
                ranges: Ranges { end: 0, first: 0, nrows: 0, view: None, versions: None },
                heap_cache: (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_RELATION,
            }
        }
    }

    /// The table's columns an engine's copy holds: every column of a
    /// device type, (attnum, type).
    ///
    /// # Safety
    /// Our relation is open.
    unsafe fn copy_layout(&self) -> Vec<(i16, u16)> {
        // SAFETY: caller's promise.
        unsafe {
            let tupdesc = (*self.rel).rd_att;
            (0..(*tupdesc).natts)
                .filter_map(|i| {
                    let a = crate::pg::compat::tuple_desc_attr(tupdesc, i);
                    if (*a).attisdropped {
                        return None;
                    }
                    crate::codegen::catalog::device_type_of((*a).atttypid).map(|t| ((i + 1) as i16, t))
                })
                .collect()
        }
    }

    /// Chunks go to `session` as ranges of row versions from now on: of
    /// its engine's copy (brought up to date first), or inline when the
    /// engine keeps none or no session is given.  `engine` names the
    /// engine for EXPLAIN.
    ///
    /// # Safety
    /// The node's executor callbacks, before the first chunk.
    pub unsafe fn use_session(
        &mut self,
        session: Option<&mut dyn JoinSession>,
        engine: &str,
    ) -> Result<(), DeviceError> {
        // SAFETY: our open relation (caller).
        unsafe {
            let layout = self.copy_layout();
            let index: Option<Vec<u32>> =
                self.columns.iter().map(|c| layout.iter().position(|l| l == c).map(|k| k as u32)).collect();
            let types: Vec<u16> = layout.iter().map(|l| l.1).collect();
            let relid = (*self.rel).rd_id;
            let (end, id) = state::with_store_as_is(self.rel, |st| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::hash::Hash::hash(&(&st.base_path, &st.log_path, &layout), &mut h);
                let id = StoreId {
                    sysid: state::system_id(),
                    db: pg_sys::MyDatabaseId.to_u32(),
                    rel: relid.to_u32(),
                    generation: st.generation,
                    files: std::hash::Hasher::finish(&h),
                };
                (st.rows.len() as u64, id)
            });
            self.ranges = Ranges { end, first: 0, nrows: 0, view: None, versions: None };
            self.mode = Mode::Inline;
            let (Some(index), Some(session)) = (index, session) else { return Ok(()) };
            let Some(mut at) = session.store_sync(&StoreSync::ask(id, &types))? else { return Ok(()) };
            // bring the copy up to date: row versions, then deletions
            let mut chunk = ColumnChunk::new(&layout);
            let max_attnum = chunk.max_attnum() as i32;
            loop {
                let (journal, rows) = state::with_store_as_is(self.rel, |st| (st.journal.len() as u64, st.rows.len()));
                let before = at;
                if (at.rows as usize) < rows {
                    let from = at.rows as usize;
                    let (xmin, cmin) = self.gather(&mut chunk, max_attnum, from, rows.min(from + SYNC_ROWS));
                    let cols = chunk.column_data();
                    let batch = StoreSync {
                        from_rows: from as u64,
                        nrows: chunk.nrows(),
                        columns: &cols,
                        xmin: &xmin,
                        cmin: &cmin,
                        ..StoreSync::ask(id, &types)
                    };
                    at = session.store_sync(&batch)?.unwrap_or_default();
                } else if at.deletes < journal {
                    let (r, x, c) = state::with_store_as_is(self.rel, |st| {
                        let part =
                            &st.journal[at.deletes as usize..journal.min(at.deletes + SYNC_DELETES as u64) as usize];
                        (
                            part.iter().map(|d| d.0).collect::<Vec<u64>>(),
                            part.iter().map(|d| d.1).collect::<Vec<u64>>(),
                            part.iter().map(|d| d.2).collect::<Vec<u32>>(),
                        )
                    });
                    let batch = StoreSync {
                        from_deletes: at.deletes,
                        del_rows: &r,
                        del_xids: &x,
                        del_cids: &c,
                        ..StoreSync::ask(id, &types)
                    };
                    at = session.store_sync(&batch)?.unwrap_or_default();
                } else {
                    break;
                }
                if (at.rows, at.deletes) == (before.rows, before.deletes) && at.rows != 0 {
                    return Err(DeviceError::InvalidRequest(format!(
                        "the copy of the GPU store stays at {} row versions and {} deletions",
                        at.rows, at.deletes
                    )));
                }
                pgrx::check_for_interrupts!();
            }
            self.mode = Mode::Copy { id, index, engine: engine.to_string(), bytes: at.bytes };
            Ok(())
        }
    }

    /// Gather row versions `[from, to)` of the store into `chunk`
    /// (emptied first; it may end early at its text limit); their xmin and
    /// cmin.
    ///
    /// # Safety
    /// The node's executor callbacks.
    unsafe fn gather(
        &mut self,
        chunk: &mut ColumnChunk,
        max_attnum: i32,
        from: usize,
        to: usize,
    ) -> (Vec<u64>, Vec<u32>) {
        // SAFETY: our relation, slot and context.
        unsafe {
            chunk.clear();
            pg_sys::MemoryContextReset(self.cxt);
            let relid = (*self.rel).rd_id;
            let (slot, cxt) = (self.slot, self.cxt);
            let mut xmin = Vec::with_capacity(to - from);
            let mut cmin = Vec::with_capacity(to - from);
            state::with_store_as_is(self.rel, |st| {
                let _c = Switched::to(cxt);
                for id in from..to {
                    if id.is_multiple_of(1024) {
                        pgrx::check_for_interrupts!();
                        pg_sys::MemoryContextReset(cxt);
                    }
                    let row = &st.rows[id];
                    let ht = heap_tuple(relid, id as u64, &row.tuple);
                    pg_sys::ExecStoreHeapTuple(ht, slot, true);
                    if max_attnum > 0 {
                        pg_sys::slot_getsomeattrs(slot, max_attnum);
                    }
                    chunk.append_slot(slot);
                    pg_sys::ExecClearTuple(slot);
                    xmin.push(row.xmin);
                    cmin.push(row.cmin);
                    if chunk.text_full() {
                        break;
                    }
                }
            });
            (xmin, cmin)
        }
    }

    /// Read the next range of row versions: its row count, 0 at the end.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    unsafe fn read_range(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        // SAFETY: our relation (caller).
        unsafe {
            if self.ranges.view.is_none() {
                let vis = self.vis.get_or_insert_with(|| Visibility::new(snapshot));
                let view = state::with_store_as_is_mut(self.rel, |st: &mut Store| state::store_view(st, vis));
                self.ranges.view = Some(Arc::new(view));
            }
            let r = &mut self.ranges;
            r.first += r.nrows as u64;
            // ranges start on a 64-row boundary (validity bitmaps by word)
            let limit = if matches!(self.mode, Mode::Copy { .. }) { limit.max(COPY_CHUNK_ROWS) } else { limit };
            let limit = (limit / 64).max(1) * 64;
            let n = r.end.saturating_sub(r.first).min(limit as u64) as usize;
            self.ids.clear();
            r.nrows = n as u32;
            r.versions = None;
            self.chunk.clear();
            if matches!(self.mode, Mode::Inline) && n > 0 {
                self.gather_inline(true);
            }
            self.ranges.nrows
        }
    }

    /// The current range's columns and row versions, gathered here.  With
    /// `may_shorten` (a range about to be handed out) a range whose text
    /// fills a chunk first ends there (on a 256-row boundary: the next
    /// range starts after it); otherwise that is an ERROR.
    ///
    /// # Safety
    /// The node's executor callbacks.
    unsafe fn gather_inline(&mut self, may_shorten: bool) {
        let first = self.ranges.first as usize;
        let mut chunk = std::mem::replace(&mut self.chunk, ColumnChunk::new(&[]));
        let max_attnum = chunk.max_attnum() as i32;
        // SAFETY: caller's promise.
        let (xmin, cmin) = unsafe { self.gather(&mut chunk, max_attnum, first, first + self.ranges.nrows as usize) };
        let got = chunk.nrows();
        if got != self.ranges.nrows {
            if !may_shorten || got == 0 || !got.is_multiple_of(64) {
                crate::chunk::too_much_text()
            }
            self.ranges.nrows = got;
        }
        let n = got as usize;
        self.chunk = chunk;
        // SAFETY: our relation (caller).
        let (xmax, cmax) = unsafe {
            state::with_store_as_is(self.rel, |st| {
                st.rows[first..first + n]
                    .iter()
                    .map(|r| r.deleters.last().map_or((0, 0), |d| (d.0, d.1)))
                    .unzip::<u64, u32, Vec<u64>, Vec<u32>>()
            })
        };
        self.ranges.versions = Some(Arc::new(RowVersions { xmin, cmin, xmax, cmax }));
    }

    /// The current chunk's rows for its engine's view (None when the
    /// chunk holds visible rows only).
    pub fn store_rows(&self) -> Option<StoreRows> {
        let view = self.ranges.view.clone()?;
        let mvcc = match &self.mode {
            Mode::Visible => return None,
            Mode::Copy { id, .. } => StoreMvcc::Copy(*id),
            Mode::Inline => StoreMvcc::Inline(self.ranges.versions.clone()?),
        };
        Some(StoreRows { view, first_row: self.ranges.first, mvcc })
    }

    /// The chunk's device columns and their bytes (moved per chunk).
    pub fn column_data(&self) -> (Vec<ColumnData<'_>>, usize) {
        match &self.mode {
            Mode::Copy { index, .. } => (
                self.columns
                    .iter()
                    .zip(index)
                    .map(|(&(_, type_id), &k)| ColumnData { type_id, store: Some(k), ..Default::default() })
                    .collect(),
                0,
            ),
            _ => (self.chunk.column_data(), self.chunk.bytes()),
        }
    }

    /// Whether the query's snapshot sees chunk row `i` (a row of the
    /// visible rows always is).
    ///
    /// # Safety
    /// The node's executor callbacks; `i` < [`Self::len`].
    pub unsafe fn row_visible(&mut self, i: usize) -> bool {
        if matches!(self.mode, Mode::Visible) {
            return true;
        }
        let id = self.row_id(i) as usize;
        let Some(vis) = self.vis.as_mut() else { return false };
        // SAFETY: our relation (caller).
        unsafe { state::with_store_as_is(self.rel, |st| vis.visible(st, id)) }
    }

    /// The engine at hand no longer reads the copy: the current range's
    /// columns and row versions are gathered here, and the later ones.
    ///
    /// # Safety
    /// The node's executor callbacks.
    pub unsafe fn leave_copy(&mut self) {
        if matches!(self.mode, Mode::Copy { .. }) {
            self.mode = Mode::Inline;
            self.chunk.clear();
            if self.ranges.nrows > 0 {
                // SAFETY: caller's promise (the caller holds the range's
                // row count: it cannot change)
                unsafe { self.gather_inline(false) };
            }
        }
    }

    /// Rows of the current chunk.
    pub fn len(&self) -> usize {
        match self.mode {
            Mode::Visible => self.ids.len(),
            _ => self.ranges.nrows as usize,
        }
    }

    /// True when the current chunk has no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row id of chunk row `i`.
    fn row_id(&self, i: usize) -> u64 {
        match self.mode {
            Mode::Visible => self.ids[i],
            _ => self.ranges.first + i as u64,
        }
    }

    /// Read the next chunk of at most `limit` rows the snapshot sees; its
    /// row count, 0 at the end.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    pub unsafe fn read(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        if !matches!(self.mode, Mode::Visible) {
            // SAFETY: caller's promise.
            return unsafe { self.read_range(snapshot, limit) };
        }
        // SAFETY: our relation, slot and context (caller).
        unsafe {
            self.chunk.clear();
            self.ids.clear();
            pg_sys::MemoryContextReset(self.cxt);
            let vis = self.vis.get_or_insert_with(|| Visibility::new(snapshot));
            let relid = (*self.rel).rd_id;
            let max_attnum = self.chunk.max_attnum() as i32;
            let (slot, cxt, chunk, ids, next) = (self.slot, self.cxt, &mut self.chunk, &mut self.ids, &mut self.next);
            state::with_store_as_is(self.rel, |st| {
                let _c = Switched::to(cxt);
                while *next < st.rows.len() && ids.len() < limit {
                    let id = *next;
                    *next += 1;
                    if id.is_multiple_of(1024) {
                        pgrx::check_for_interrupts!();
                    }
                    if !vis.visible(st, id) {
                        continue;
                    }
                    let ht = heap_tuple(relid, id as u64, &st.rows[id].tuple);
                    pg_sys::ExecStoreHeapTuple(ht, slot, true);
                    if max_attnum > 0 {
                        pg_sys::slot_getsomeattrs(slot, max_attnum);
                    }
                    chunk.append_slot(slot);
                    pg_sys::ExecClearTuple(slot);
                    ids.push(id as u64);
                    if chunk.text_full() {
                        break;
                    }
                }
            });
            self.chunk.nrows()
        }
    }

    /// Store chunk row `i` into `slot`, its memory from `cxt` (reset
    /// first).
    ///
    /// # Safety
    /// `i` < [`Self::len`]; `slot` a heap-tuple slot of the relation.
    pub unsafe fn store(&mut self, i: usize, slot: *mut pg_sys::TupleTableSlot, cxt: pg_sys::MemoryContext) {
        // SAFETY: caller's promise.
        unsafe {
            pg_sys::MemoryContextReset(cxt);
            let _c = Switched::to(cxt);
            let id = self.row_id(i);
            let relid = (*self.rel).rd_id;
            let cache = self.heap_cache;
            let ht = state::with_store_as_is(self.rel, |st| {
                let tuple = &st.rows[id as usize].tuple;
                let ht = heap_tuple(relid, id, tuple);
                // a GPU cache's row: the heap tuple's own ctid
                if let Some(k) = st.key.as_ref().filter(|_| cache)
                    && let Ok(Some(b)) = k.spec.of_row(tuple)
                    && let Ok(b) = <[u8; 8]>::try_from(b)
                {
                    (*ht).t_self = crate::gstore::cache::trigger::tid_of(i64::from_ne_bytes(b));
                }
                ht
            });
            pg_sys::ExecStoreHeapTuple(ht, slot, false);
        }
    }

    /// Start over (ReScan): the store is replayed again for the next
    /// pass.
    ///
    /// # Safety
    /// The node's executor callbacks.
    pub unsafe fn rescan(&mut self) {
        self.next = 0;
        self.ids.clear();
        self.chunk.clear();
        // the same ranges again (a copy brought up to date at the start
        // covers them), with the same view
        (self.ranges.first, self.ranges.nrows, self.ranges.versions) = (0, 0, None);
        // SAFETY: our open relation.
        self.replayed = Some(unsafe { state::with_store(self.rel, |st| (st.rows.len(), st.generation, st.log_pos)) });
    }

    /// End the scan: the slot goes (it holds a reference to the
    /// relation's descriptor).
    pub fn end(&mut self) {
        // SAFETY: our slot, dropped once.
        unsafe {
            if !self.slot.is_null() {
                pg_sys::ExecDropSingleTupleTableSlot(self.slot);
                self.slot = std::ptr::null_mut();
            }
        }
    }

    /// EXPLAIN's `GPU Store` text.
    ///
    /// # Safety
    /// Our relation is open.
    pub unsafe fn explain_text(&self) -> String {
        // SAFETY: caller's promise.
        let name = unsafe { std::ffi::CStr::from_ptr(pg_sys::get_rel_name((*self.rel).rd_id)).to_string_lossy() };
        let (versions, generation, pos) = self.replayed.unwrap_or_default();
        let place = match &self.mode {
            Mode::Copy { engine, bytes, .. } => format!("copy in {engine}, {bytes} bytes"),
            Mode::Inline | Mode::Visible => "host memory".to_string(),
        };
        let what = if self.heap_cache { "GPU cache of " } else { "" };
        format!(
            "{what}{name} ({place}, {versions} row versions, redo log generation {generation} applied up to byte {pos})"
        )
    }
}
