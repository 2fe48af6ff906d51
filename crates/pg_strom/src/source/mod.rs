//! Where a GpuScan's or GpuJoin's outer rows come from: a heap table read
//! in chunks through the table AM ([`HeapChunks`]), or an Arrow_Fdw table
//! read record batch by record batch ([`ArrowReader`]), each batch cut
//! into chunks of at most `pg_strom.chunk_rows` rows.
//!
//! Owns the choice between the two and one interface over both: read the
//! next chunk, its device columns, store a chunk row into a slot, rescan,
//! and the parallel coordination area after the node's own head (the
//! table AM's parallel scan descriptor, or Arrow_Fdw's batch counter).
//! The nodes keep their counters, programs and engines.
//!
//! The family: [`heap_chunks`] (rows through the table AM, copied or kept
//! as TIDs), [`heap_pages`] (the pages of a heap table taken apart in the
//! backend), [`heap_direct`] (blocks the GPU service reads from the files
//! itself, for GpuPreAgg), Arrow_Fdw's reader
//! (`crate::arrow_fdw::reader`, which lives with the FDW it shares its
//! files and statistics with), and a gstore_fdw table's rows
//! ([`gstore`]).

pub mod brin;
pub mod gstore;
pub mod heap_chunks;
pub mod heap_direct;
pub mod heap_pages;

use pgrx::pg_sys;

use pgstrom_runtime::DeviceError;
use pgstrom_runtime::engine::ColumnData;
use pgstrom_runtime::join::JoinSession;

use crate::arrow_fdw::reader::{self, ArrowReader};
use crate::pg::memctx::Switched;
use gstore::GstoreChunks;
use heap_chunks::HeapChunks;

/// EXPLAIN ANALYZE's `Heap Read`: how the heap was read, in how many of
/// the `chunks` the rows were kept as TIDs by the adaptive choice, and how
/// many chunks were read ahead while the engine worked (when any were).
pub fn read_mode_text(mode: &str, chunks: u64, tid_chunks: u64, ahead: u64) -> String {
    let mut text = mode.to_string();
    if tid_chunks > 0 && tid_chunks >= chunks {
        text.push_str(", rows by TID");
    } else if tid_chunks > 0 {
        text.push_str(&format!(", rows by TID in {tid_chunks} of {chunks} chunks"));
    }
    if ahead > 0 {
        text.push_str(&format!(", {ahead} chunks read ahead"));
    }
    text
}

/// A node's source of rows.
pub enum Source {
    /// A heap table, read through the table AM in chunks.
    Heap(Box<HeapChunks>),
    /// An Arrow_Fdw table: the current chunk is rows [start, start + len)
    /// of the reader's current record batch.
    Arrow { reader: Box<ArrowReader>, start: usize, len: usize },
    /// A gstore_fdw table: the rows its store holds, as the snapshot sees
    /// them (serial scans only).
    Gstore(Box<GstoreChunks>),
}

impl Source {
    /// The source of a scan node over `rel` reading the device `columns`
    /// ((attnum, device type)); for an Arrow table also the columns rows
    /// are stored with (`attnums`, or None: every column the plan's target
    /// list and quals read from `rel`) and the statistics hints (clauses
    /// of [`stats::hint_clauses`]).  `cache`: whether the node reads a
    /// heap table's GPU cache (`gstore::cache::usable`, asked once by the
    /// node, whose other choices follow it too).
    ///
    /// # Safety
    /// Executor start (query memory context); `node` is the scan node,
    /// `rel` its open relation.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn open(
        node: *mut pg_sys::CustomScanState,
        rel: pg_sys::Relation,
        columns: &[(i16, u16)],
        attnums: Option<&[i16]>,
        hints: Vec<*mut pg_sys::Node>,
        eflags: i32,
        name: &'static std::ffi::CStr,
        cache: crate::gstore::cache::Choice,
    ) -> Source {
        // SAFETY: caller's promise.
        unsafe {
            if (*(*rel).rd_rel).relkind as u8 != pg_sys::RELKIND_FOREIGN_TABLE {
                let estate = (*node).ss.ps.state;
                // a heap table's GPU cache, where the query may read it
                if let Some(Ok(())) = cache {
                    return Source::Gstore(Box::new(GstoreChunks::new(rel, columns, (*estate).es_query_cxt)));
                }
                let mut h = Box::new(HeapChunks::new(rel, columns, (*estate).es_query_cxt, name));
                if let Some(Err(why)) = cache {
                    h.cache_note = Some(why);
                }
                // a BRIN index rules out block ranges for the same clauses
                if let Some(f) = brin::BrinFilter::prepare(rel, &hints, &raw mut (*node).ss.ps) {
                    h.set_brin(f);
                }
                return Source::Heap(h);
            }
            if crate::gstore::is_gstore_table((*rel).rd_id) {
                let estate = (*node).ss.ps.state;
                return Source::Gstore(Box::new(GstoreChunks::new(rel, columns, (*estate).es_query_cxt)));
            }
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let scanrelid = (*cscan).scan.scanrelid;
            let natts = (*(*rel).rd_att).natts as usize;
            let attnums = match attnums {
                Some(a) => a.to_vec(),
                None => reader::plan_attnums(&raw mut (*cscan).scan.plan, scanrelid, natts),
            };
            let explain_only = eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as i32 != 0;
            let reader = ArrowReader::open(rel, &attnums, hints, &raw mut (*node).ss.ps, columns, explain_only);
            Source::Arrow { reader, start: 0, len: 0 }
        }
    }

    /// Where the rows lie (the GPU a scan prefers): a heap table's
    /// tablespace directory, an Arrow table's files.  Asked only on a
    /// machine with several GPUs, when the scan picks its engine.
    pub fn storage_refs(&self) -> pgstrom_runtime::placement::StorageRefs {
        match self {
            // SAFETY: the scan's relation, open while the source lives; a
            // backend's main thread.
            Source::Heap(h) => unsafe { crate::gpu_preference::of_relation(h.relation()) },
            Source::Arrow { reader, .. } => {
                pgstrom_runtime::placement::StorageRefs { paths: reader.file_paths(), ..Default::default() }
            }
            Source::Gstore(g) => {
                let id = g.gpu_device_id();
                pgstrom_runtime::placement::StorageRefs {
                    pinned: Some((id, format!("gstore_fdw option gpu_device_id '{id}'"))),
                    ..Default::default()
                }
            }
        }
    }

    /// The node returns partial groups, seldom its source rows (only on
    /// the CPU path): a heap table's pages are not copied, rows are read
    /// again by TID when asked for.
    pub fn set_rows_seldom_read(&mut self) {
        if let Source::Heap(h) = self {
            h.set_copy_pages(false);
        }
    }

    /// The node returned `rows_out` of the current chunk's `rows_in` rows
    /// (a heap table's later chunks keep TIDs only when few rows are
    /// returned: see `HeapChunks::note_returned`).
    pub fn note_returned(&mut self, rows_in: u64, rows_out: u64) {
        if let Source::Heap(h) = self {
            h.note_returned(rows_in, rows_out);
        }
    }

    /// True when the current chunk's heap rows are held as TIDs only,
    /// chosen because few rows were returned (EXPLAIN ANALYZE counts them).
    pub fn chunk_by_tid(&self) -> bool {
        matches!(self, Source::Heap(h) if h.chunk_by_tid())
    }

    /// How a heap table is read, once the scan has begun (None for an
    /// Arrow table or before the first chunk).
    pub fn heap_read_mode(&self) -> Option<&'static str> {
        match self {
            Source::Heap(h) => h.read_mode(),
            Source::Arrow { .. } | Source::Gstore(_) => None,
        }
    }

    /// Rows of the current chunk.
    pub fn len(&self) -> usize {
        match self {
            Source::Heap(h) => h.tuples.len(),
            Source::Arrow { len, .. } => *len,
            Source::Gstore(g) => g.len(),
        }
    }

    /// True when the current chunk has no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop the heap chunk's copies (an Arrow batch stays: the next chunk
    /// starts where this one ended).
    pub fn clear(&mut self) {
        if let Source::Heap(h) = self {
            h.clear();
        }
    }

    /// Read the next chunk of at most `limit` rows; its row count, 0 at
    /// the end of the scan.
    ///
    /// # Safety
    /// The node's executor callbacks, after [`Self::clear`].
    pub unsafe fn read(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Heap(h) => h.read(snapshot, limit),
                Source::Gstore(g) => g.read(snapshot, limit),
                Source::Arrow { reader, start, len } => {
                    // the next slice of this batch, or of the next batch
                    *start += *len;
                    *len = 0;
                    reader.push_context();
                    while *start >= reader.batch_rows() {
                        *start = 0;
                        if !reader.read_next() {
                            break;
                        }
                    }
                    // an engine that reads the columns from the files takes
                    // a whole record batch at once: nothing is gathered here
                    let limit = if reader.reads_files() { limit.max(reader::FILE_CHUNK_ROWS) } else { limit };
                    let n = reader.batch_rows().saturating_sub(*start).min(limit);
                    if n > 0 {
                        reader.fill_device(*start, n);
                    }
                    reader.pop_context();
                    *len = n;
                    n as u32
                }
            }
        }
    }

    /// Drop the current chunk and take the next: the one read ahead
    /// ([`Self::read_ahead`]), if any, else one read now (see
    /// [`Self::read`]).
    ///
    /// # Safety
    /// As [`Self::read`] (without the clear: this drops the chunk).
    pub unsafe fn next_chunk(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Heap(h) => h.next_chunk(snapshot, limit),
                Source::Arrow { .. } | Source::Gstore(_) => self.read(snapshot, limit),
            }
        }
    }

    /// Read the chunk after the current one while an engine works on the
    /// current one (its rows stay), when the current chunk's request went
    /// to an engine that works meanwhile (`sent`: not answered at once):
    /// a heap table only, with `pg_strom.chunk_read_ahead` on; an Arrow
    /// table's next chunk is a slice of a record batch read in a moment,
    /// or columns the GPU service reads itself.  The chunks read ahead (0
    /// or 1), for EXPLAIN ANALYZE.
    ///
    /// # Safety
    /// As [`Self::read`].
    pub unsafe fn read_ahead(&mut self, sent: bool, snapshot: pg_sys::Snapshot, limit: usize) -> u64 {
        match self {
            Source::Heap(h) if sent && crate::guc::CHUNK_READ_AHEAD.get() => {
                // SAFETY: caller's promise.
                (unsafe { h.read_ahead(snapshot, limit) } > 0) as u64
            }
            _ => 0,
        }
    }

    /// The chunk's device columns and their bytes.
    pub fn column_data(&self) -> (Vec<ColumnData<'_>>, usize) {
        match self {
            Source::Heap(h) => (h.chunk.column_data(), h.chunk.bytes()),
            Source::Gstore(g) => g.column_data(),
            Source::Arrow { reader, .. } => (reader.column_data(), reader.device_bytes()),
        }
    }

    /// The current chunk's rows of a gstore_fdw table as its engine reads
    /// them (`JoinSession::set_store_rows`), or None.
    pub fn store_rows(&self) -> Option<pgstrom_runtime::devstore::StoreRows> {
        match self {
            Source::Gstore(g) => g.store_rows(),
            _ => None,
        }
    }

    /// Whether the query's snapshot sees chunk row `i` (false only for a
    /// row version of a gstore_fdw table it does not see: chunks of
    /// heap and Arrow tables hold visible rows only).
    ///
    /// # Safety
    /// The node's executor callbacks; `i` < [`Self::len`].
    pub unsafe fn row_visible(&mut self, i: usize) -> bool {
        match self {
            // SAFETY: caller's promise.
            Source::Gstore(g) => unsafe { g.row_visible(i) },
            _ => true,
        }
    }

    /// Let `session` read a gstore_fdw table's rows from its engine's copy
    /// (brought up to date now), or as ranges of row versions with their
    /// view when the engine keeps no copy or no session is given (`engine`
    /// names it for EXPLAIN); other tables are unchanged.
    ///
    /// # Safety
    /// The node's executor callbacks, before the first chunk.
    pub unsafe fn use_session(
        &mut self,
        session: Option<&mut dyn JoinSession>,
        engine: &str,
    ) -> Result<(), DeviceError> {
        match self {
            // SAFETY: caller's promise.
            Source::Gstore(g) => unsafe { g.use_session(session, engine) },
            _ => Ok(()),
        }
    }

    /// True when the engine reads an Arrow table's columns from the files
    /// itself.
    pub fn reads_files(&self) -> bool {
        matches!(self, Source::Arrow { reader, .. } if reader.reads_files())
    }

    /// Let `session`'s engine read an Arrow table's fixed-width columns
    /// from the files itself, where it can (the GPU service: it keeps
    /// them in device memory between queries); a heap table is unchanged.
    pub fn offer_files(&mut self, session: &mut dyn JoinSession) -> Result<(), DeviceError> {
        match self {
            Source::Arrow { reader, .. } => reader.open_files_in(session),
            Source::Heap(_) | Source::Gstore(_) => Ok(()),
        }
    }

    /// Hand every column over in memory from now on, the current chunk's
    /// included (the work moves to an engine that does not read files).
    ///
    /// # Safety
    /// The node's executor callbacks.
    pub unsafe fn columns_in_memory(&mut self) {
        if let Source::Gstore(g) = self {
            // SAFETY: caller's promise.
            unsafe { g.leave_copy() };
            return;
        }
        if let Source::Arrow { reader, start, len } = self
            && reader.reads_files()
        {
            reader.push_context();
            reader.forget_files();
            if *len > 0 {
                // SAFETY: the error context is pushed.
                unsafe { reader.fill_device(*start, *len) };
            }
            reader.pop_context();
        }
    }

    /// Skip Arrow record batches whose statistics put an outer join key
    /// outside the inner relation's key range ((attnum, range) pairs; see
    /// `ArrowReader::set_join_hints`); a heap table is unchanged.
    ///
    /// # Safety
    /// A backend, before the scan reads (or after a rescan).
    pub unsafe fn set_join_hints(&mut self, ranges: &[(i16, Option<(i64, i64)>)]) {
        if let Source::Arrow { reader, .. } = self {
            // SAFETY: caller's promise.
            unsafe { reader.set_join_hints(ranges) };
        }
    }

    /// Bytes of the current chunk the engine reads from files itself.
    pub fn file_bytes(&self) -> usize {
        match self {
            Source::Arrow { reader, .. } => reader.file_bytes(),
            Source::Heap(_) | Source::Gstore(_) => 0,
        }
    }

    /// Store chunk row `i` into `slot` (a heap-tuple slot of the
    /// relation); an Arrow row's values are made in `cxt`, which is reset
    /// first, so they live until the next call.
    ///
    /// # Safety
    /// `i` < [`Self::len`]; `slot` has the relation's descriptor.
    pub unsafe fn store(&mut self, i: usize, slot: *mut pg_sys::TupleTableSlot, cxt: pg_sys::MemoryContext) {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Heap(h) => {
                    pg_sys::ExecStoreHeapTuple(h.tuple(i), slot, false);
                }
                Source::Gstore(g) => g.store(i, slot, cxt),
                Source::Arrow { reader, start, .. } => {
                    pg_sys::MemoryContextReset(cxt);
                    let _cxt = Switched::to(cxt);
                    reader.push_context();
                    reader.store_row(*start + i, slot);
                    reader.pop_context();
                }
            }
        }
    }

    /// True for a heap table.
    pub fn is_heap(&self) -> bool {
        matches!(self, Source::Heap(_))
    }

    /// A heap table's page reader, when pages are read directly with
    /// `snapshot` (see `HeapChunks::page_reader`); None for an Arrow table.
    ///
    /// # Safety
    /// The node's executor callbacks; `snapshot` the scan's.
    pub unsafe fn page_reader(
        &mut self,
        snapshot: pg_sys::Snapshot,
    ) -> Option<&mut crate::source::heap_pages::PageReader> {
        match self {
            // SAFETY: caller's promise.
            Source::Heap(h) => unsafe { h.page_reader(snapshot) },
            Source::Arrow { .. } | Source::Gstore(_) => None,
        }
    }

    /// The heap direct path is over: pages are read from the scan's
    /// blocks again (after those queued, and `carry`, a block it took
    /// from the scan and did not send), and the scan is not over while
    /// some are left.
    pub fn end_direct(&mut self, carry: Option<pg_sys::BlockNumber>) {
        if let Source::Heap(h) = self {
            h.queue_blocks(carry.as_slice());
            h.end_direct();
        }
    }

    /// Start over (ReScan).
    pub fn rescan(&mut self) {
        match self {
            Source::Heap(h) => h.rescan(),
            Source::Arrow { reader, start, len } => {
                reader.rescan();
                (*start, *len) = (0, 0);
            }
            // SAFETY: the node's executor callbacks.
            Source::Gstore(g) => unsafe { g.rescan() },
        }
    }

    /// End the scan (EndCustomScan).
    pub fn end(&mut self) {
        match self {
            Source::Heap(h) => h.end(),
            Source::Gstore(g) => g.end(),
            Source::Arrow { .. } => {}
        }
    }

    /// The Arrow_Fdw reader, for EXPLAIN.
    pub fn arrow(&self) -> Option<&ArrowReader> {
        match self {
            Source::Arrow { reader, .. } => Some(reader),
            Source::Heap(_) | Source::Gstore(_) => None,
        }
    }

    /// EXPLAIN of a heap table's BRIN filter: `BRIN cond`, `BRIN index`,
    /// and with ANALYZE `BRIN ranges` (the bitmap is taken now if this
    /// process read no block).
    ///
    /// # Safety
    /// `plan` is the node's plan, `es` the ExplainState; a backend.
    pub unsafe fn explain_brin(&mut self, plan: *mut pg_sys::Plan, es: *mut pg_sys::ExplainState) {
        if let Source::Heap(h) = self {
            // SAFETY: caller's promise.
            unsafe {
                if (*es).analyze {
                    h.brin_ensure();
                }
                if let Some((f, _)) = h.brin() {
                    f.explain(plan, es);
                }
            }
        }
    }

    /// EXPLAIN's `GPU Store` line of a gstore_fdw table or a heap
    /// table's GPU cache (why a query does not read it, where it does
    /// not).
    pub fn gstore_text(&self) -> Option<String> {
        match self {
            // SAFETY: the relation is open while the source lives.
            Source::Gstore(g) => Some(unsafe { g.explain_text() }),
            Source::Heap(h) => h.cache_note.as_ref().map(|why| format!("GPU cache not read: {why}")),
            _ => None,
        }
    }

    /// Bytes of the coordination area: `head` bytes of the node's, then
    /// the source's.
    ///
    /// # Safety
    /// `node` is the live scan node.
    pub unsafe fn dsm_size(&self, node: *mut pg_sys::CustomScanState, head: usize) -> usize {
        match self {
            Source::Arrow { .. } => head + reader::SHARED_SIZE,
            // SAFETY: caller's promise.
            Source::Heap(_) => unsafe { heap_chunks::pscan_estimate(node, head) },
            Source::Gstore(_) => head,
        }
    }

    /// Lay out the source's part of the area (InitializeDSM, leader); the
    /// node's head is zeroed.
    ///
    /// # Safety
    /// `coordinate` has [`Self::dsm_size`]'s size.
    pub unsafe fn dsm_initialize(
        &self,
        node: *mut pg_sys::CustomScanState,
        coordinate: *mut std::ffi::c_void,
        head: usize,
    ) {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Arrow { .. } => {
                    std::ptr::write_bytes(coordinate as *mut u8, 0, head);
                    reader::init_shared(coordinate.cast::<u8>().add(head).cast());
                }
                Source::Heap(_) => heap_chunks::pscan_initialize(node, coordinate, head),
                Source::Gstore(_) => std::ptr::write_bytes(coordinate as *mut u8, 0, head),
            }
        }
    }

    /// Reset the source's part for a rescan (ReInitializeDSM).
    ///
    /// # Safety
    /// As [`Self::dsm_initialize`].
    pub unsafe fn dsm_reinitialize(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        coordinate: *mut std::ffi::c_void,
        head: usize,
    ) {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Arrow { reader, start, len } => {
                    reader::reset_shared(coordinate.cast::<u8>().add(head).cast());
                    reader.reset();
                    (*start, *len) = (0, 0);
                }
                Source::Heap(_) => heap_chunks::pscan_reinitialize(node, coordinate, head),
                Source::Gstore(_) => {}
            }
        }
    }

    /// Read the chunks the coordination area hands out (leader and workers).
    ///
    /// # Safety
    /// As [`Self::dsm_initialize`], after it ran in the leader.
    pub unsafe fn dsm_attach(&mut self, coordinate: *mut std::ffi::c_void, head: usize) {
        // SAFETY: caller's promise.
        unsafe {
            match self {
                Source::Heap(h) => h.begin_parallel(heap_chunks::pscan_at(coordinate, head)),
                Source::Arrow { reader, .. } => reader.attach(coordinate.cast::<u8>().add(head).cast()),
                // never parallel-aware (see `customscan::cost::scan_pages`)
                Source::Gstore(_) => {}
            }
        }
    }

    /// Before the area goes: keep what EXPLAIN shows.
    pub fn dsm_detach(&mut self) {
        if let Source::Arrow { reader, .. } = self {
            reader.detach();
        }
    }
}
