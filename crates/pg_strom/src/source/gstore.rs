//! A gstore_fdw table as a device node's source: the row versions the
//! query's snapshot sees, gathered into chunks in the device's columnar
//! layout, from the store this process replayed (`crate::gstore::state`).
//!
//! The store lives in the backend's memory for now, so the rows are handed
//! to the engine chunk by chunk as a heap table's are; visibility is
//! decided here, with PostgreSQL's snapshot and commit log, before a row
//! joins a chunk.  Serial scans only: the planner gives gstore_fdw tables
//! no parallel device paths.

use pgrx::pg_sys;

use crate::chunk::ColumnChunk;
use crate::gstore::modify::heap_tuple;
use crate::gstore::state::{self, Visibility};
use crate::pg::memctx::Switched;

/// A gstore_fdw table read chunk by chunk.
pub struct GstoreChunks {
    rel: pg_sys::Relation,
    /// The device columns of the chunk.
    pub chunk: ColumnChunk,
    /// The row ids of the chunk's rows.
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
}

impl GstoreChunks {
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
            }
        }
    }

    /// Rows of the current chunk.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when the current chunk has no row.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Read the next chunk of at most `limit` rows the snapshot sees; its
    /// row count, 0 at the end.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the query's.
    pub unsafe fn read(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
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
            let id = self.ids[i];
            let relid = (*self.rel).rd_id;
            let ht = state::with_store_as_is(self.rel, |st| heap_tuple(relid, id, &st.rows[id as usize].tuple));
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
        format!(
            "{name} (host memory, {versions} row versions, redo log generation {generation} applied up to byte {pos})"
        )
    }
}
