//! Reading a heap table in chunks for the device, shared by GpuScan and
//! GpuJoin: page by page where it can ([`PageReader`]: whole pages copied,
//! columns taken out of the tuples directly), otherwise through the table
//! AM with the query's snapshot; either way MVCC exactly as a SeqScan sees
//! it, serial or with blocks handed out by a parallel scan descriptor in
//! the DSM.  Owns the chunk's tuple copies and its device columns; plus the
//! parallel-scan DSM layout and the hoisted parameters both nodes evaluate
//! once per scan.

use pgrx::pg_sys;

use pgstrom_runtime::catalog;

use crate::chunk::ColumnChunk;
use crate::guc;
use crate::pg::memctx::Switched;
use crate::pg::memctx::new_context;
use crate::source::heap_pages::PageReader;

/// The word offset of a row the arena holds only as a TID.
const NOT_COPIED: usize = usize::MAX;

/// Copies of a chunk's heap tuples.  A returned row is presented to a
/// slot through one reusable HeapTupleData pointing into the buffer,
/// valid until the next row is stored (the slot protocol).
#[derive(Default)]
pub struct TupleArena {
    /// Tuple bodies (HeapTupleHeader and data), each at a MAXALIGN offset.
    words: Vec<u64>,
    /// Per row: word offset, t_len, t_self, t_tableOid.
    rows: Vec<(usize, u32, pg_sys::ItemPointerData, pg_sys::Oid)>,
    /// The header handed to ExecStoreHeapTuple.
    current: pg_sys::HeapTupleData,
}

impl TupleArena {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Drop every row.
    pub fn clear(&mut self) {
        self.words.clear();
        self.rows.clear();
    }

    /// Copy `tup`'s body.
    ///
    /// # Safety
    /// `tup` is a valid heap tuple.
    pub unsafe fn push(&mut self, tup: pg_sys::HeapTuple) {
        // SAFETY: t_data holds t_len bytes (caller); the words reserved
        // below hold them.
        unsafe {
            let len = (*tup).t_len as usize;
            let at = self.words.len();
            self.words.resize(at + len.div_ceil(8), 0);
            std::ptr::copy_nonoverlapping((*tup).t_data as *const u8, self.words.as_mut_ptr().add(at).cast(), len);
            self.rows.push((at, (*tup).t_len, (*tup).t_self, (*tup).t_tableOid));
        }
    }

    /// Copy a whole page; the word offset of its first byte.
    ///
    /// # Safety
    /// `page` points to a readable page.
    unsafe fn push_page(&mut self, page: *const u8) -> usize {
        let at = self.words.len();
        // SAFETY: a page is BLCKSZ bytes, aligned far beyond 8 (caller).
        let words = unsafe { std::slice::from_raw_parts(page.cast::<u64>(), pg_sys::BLCKSZ as usize / 8) };
        self.words.extend_from_slice(words);
        at
    }

    /// A row whose tuple lies at byte `off` (a multiple of 8) of the page
    /// copied at word `page`; its bytes.
    fn push_in_page(
        &mut self,
        page: usize,
        off: usize,
        len: usize,
        tid: pg_sys::ItemPointerData,
        oid: pg_sys::Oid,
    ) -> &[u8] {
        let at = page + off / 8;
        self.rows.push((at, len as u32, tid, oid));
        // SAFETY: off + len lies within the page copy (the page reader
        // checked its line pointers).
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().add(at).cast::<u8>(), len) }
    }

    /// A row kept only as its TID (the page path without copies): read
    /// again from its page when asked for ([`HeapChunks::tuple`]).
    fn push_tid(&mut self, tid: pg_sys::ItemPointerData, oid: pg_sys::Oid) {
        self.rows.push((NOT_COPIED, 0, tid, oid));
    }

    /// Row `i` as a HeapTuple, valid until the next call or the next chunk.
    pub fn get(&mut self, i: usize) -> pg_sys::HeapTuple {
        let (at, len, tid, oid) = self.rows[i];
        self.current = pg_sys::HeapTupleData {
            t_len: len,
            t_self: tid,
            t_tableOid: oid,
            t_data: self.words[at..].as_mut_ptr().cast(),
        };
        &mut self.current
    }
}

/// A heap table read chunk by chunk.
pub struct HeapChunks {
    /// Why the table's GPU cache is not read (EXPLAIN), where it has one.
    pub cache_note: Option<String>,
    rel: pg_sys::Relation,
    scan: pg_sys::TableScanDesc,
    /// The table AM's slot rows are read into.
    read_slot: *mut pg_sys::TupleTableSlot,
    /// Holds this chunk's detoasted copies.
    cxt: pg_sys::MemoryContext,
    /// The device columns of the chunk.
    pub chunk: ColumnChunk,
    /// The chunk's rows.
    pub tuples: TupleArena,
    /// True once the scan returned its last row.
    pub eof: bool,
    /// Pages read directly, while the scan's snapshot allows it (decided
    /// at the first chunk; None: the table AM reads the rows).
    pages: Option<Box<PageReader>>,
    pages_checked: bool,
    /// A heap-tuple slot for the page path's tuples PostgreSQL deforms.
    page_slot: *mut pg_sys::TupleTableSlot,
    /// The page path copies the next chunk's pages (rows are returned);
    /// false keeps TIDs only and reads a row again when it is asked for
    /// (a GpuPreAgg returns groups, rarely rows; a selective GpuScan
    /// returns few of the rows it reads).
    copy_pages: bool,
    /// `copy_pages` follows the share of rows the node returned from
    /// recent chunks ([`Self::note_returned`]); false: fixed.
    adaptive: bool,
    /// Rows read and rows returned by recent chunks (halved per chunk).
    recent: (f64, f64),
    /// The current chunk's rows are held as TIDs only.
    by_tid: bool,
    /// The pinned page a row was last read again from, and its copy.
    refetch: (pg_sys::Buffer, pg_sys::BlockNumber),
    refetch_words: Vec<u64>,
    refetch_tuple: pg_sys::HeapTupleData,
    /// The parallel scan descriptor (null: a serial scan).
    pscan: pg_sys::ParallelTableScanDesc,
    /// The second chunk buffer: a chunk read ahead while the engine works
    /// on the current one ([`Self::read_ahead`]).
    spare: Box<Spare>,
}

/// Copy a chunk's pages when the node returned more than one row in
/// this many of the recent chunks' rows; keep TIDs below that.  A page
/// copy costs about 17 ns per row read (8 kB per 60 rows), a row read
/// again by TID about 100-200 ns (buffer lookup, share lock, tuple copy).
const COPY_RATIO: f64 = 10.0;

/// A chunk's buffers, as [`HeapChunks`] holds the current chunk's.
struct Spare {
    chunk: ColumnChunk,
    tuples: TupleArena,
    cxt: pg_sys::MemoryContext,
    by_tid: bool,
    /// Rows of the chunk read ahead into it (0: none).
    rows: u32,
}

impl HeapChunks {
    /// The table (open for the life of the scan).
    pub fn relation(&self) -> pg_sys::Relation {
        self.rel
    }

    /// Prepare to read `rel`, gathering `columns` ((attnum, device type)).
    ///
    /// # Safety
    /// `rel` is the node's open relation; `parent` a live memory context.
    pub unsafe fn new(
        rel: pg_sys::Relation,
        columns: &[(i16, u16)],
        parent: pg_sys::MemoryContext,
        name: &'static std::ffi::CStr,
    ) -> HeapChunks {
        // SAFETY: caller's contract.
        unsafe {
            // how each column is stored in the tuple: a numeric is a varlena
            // there (the chunk converts it)
            let numeric = pgstrom_runtime::program::type_id("NUMERIC");
            let widths: Vec<(i16, usize)> = columns
                .iter()
                .map(|&(attnum, t)| {
                    (attnum, if t == numeric { 0 } else { catalog::type_info(t).map_or(0, |t| t.width) })
                })
                .collect();
            let pages = if guc::HEAP_PAGE_READS.get() { PageReader::new(rel, &widths).map(Box::new) } else { None };
            HeapChunks {
                cache_note: None,
                pages_checked: false,
                page_slot: if pages.is_some() {
                    pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, &pg_sys::TTSOpsHeapTuple)
                } else {
                    std::ptr::null_mut()
                },
                pscan: std::ptr::null_mut(),
                copy_pages: true,
                adaptive: true,
                recent: (0.0, 0.0),
                by_tid: false,
                refetch: (pg_sys::InvalidBuffer as pg_sys::Buffer, 0),
                refetch_words: Vec::new(),
                refetch_tuple: pg_sys::HeapTupleData::default(),
                pages,
                rel,
                scan: std::ptr::null_mut(),
                read_slot: pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, pg_sys::table_slot_callbacks(rel)),
                cxt: new_context(parent, name),
                chunk: ColumnChunk::new(columns),
                tuples: TupleArena::default(),
                eof: false,
                spare: Box::new(Spare {
                    chunk: ColumnChunk::new(columns),
                    tuples: TupleArena::default(),
                    by_tid: false,
                    cxt: new_context(parent, name),
                    rows: 0,
                }),
            }
        }
    }

    /// Drop the chunk's rows (no slot may point into them any more).
    pub fn clear(&mut self) {
        self.release_refetch();
        self.tuples.clear();
        self.chunk.clear();
        // SAFETY: the context holds only this chunk's copies.
        unsafe { pg_sys::MemoryContextReset(self.cxt) };
    }

    /// Make the spare buffers the current ones and the other way round
    /// (no slot may point into either chunk's rows).
    fn swap_buffers(&mut self) {
        self.release_refetch();
        std::mem::swap(&mut self.chunk, &mut self.spare.chunk);
        std::mem::swap(&mut self.tuples, &mut self.spare.tuples);
        std::mem::swap(&mut self.cxt, &mut self.spare.cxt);
        std::mem::swap(&mut self.by_tid, &mut self.spare.by_tid);
    }

    /// The node returned `rows_out` of the current chunk's `rows_in` rows:
    /// later chunks copy their pages when recent chunks returned more than
    /// one row in [`COPY_RATIO`], and keep TIDs otherwise.  A table read
    /// through a bulk-read ring always copies: its pages leave shared
    /// buffers right after the scan, and a row read again by TID costs a
    /// block read (measured on the H100 machine: 30M rows returning 0.5%,
    /// 3.3 s with TIDs against 2.3 s with page copies).
    pub fn note_returned(&mut self, rows_in: u64, rows_out: u64) {
        if !self.adaptive || self.pages.as_ref().is_none_or(|p| p.uses_ring()) {
            return;
        }
        self.recent = (self.recent.0 * 0.5 + rows_in as f64, self.recent.1 * 0.5 + rows_out as f64);
        self.copy_pages = self.recent.1 * COPY_RATIO > self.recent.0;
    }

    /// True when the current chunk's rows were kept as TIDs by the
    /// adaptive choice (not by a node that always keeps TIDs).
    pub fn chunk_by_tid(&self) -> bool {
        self.adaptive && self.by_tid
    }

    /// The next chunk: the one read ahead, if any, else one read now (see
    /// [`Self::read`]); its row count, 0 at the end of the scan.
    ///
    /// # Safety
    /// As [`Self::read`].
    pub unsafe fn next_chunk(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        self.clear();
        if self.spare.rows > 0 {
            self.spare.rows = 0;
            self.swap_buffers();
            return self.chunk.nrows();
        }
        // SAFETY: caller's promise.
        unsafe { self.read(snapshot, limit) }
    }

    /// Whether the scan is over: it read its last block, and no block is
    /// queued on the page reader since.  (The heap direct path queues the
    /// blocks it leaves to the buffer manager on the page reader itself,
    /// also after a chunk read the queue empty in its queue-only mode and
    /// set `eof`: those blocks are read, never dropped.)
    fn at_end(&mut self) -> bool {
        if self.eof && self.pages.as_ref().is_some_and(|p| p.queued() > 0) {
            self.eof = false;
        }
        self.eof
    }

    /// Read the chunk after the current one into the spare buffers (the
    /// current chunk's rows stay as they are), for [`Self::next_chunk`];
    /// its row count (0 at the end of the scan).
    ///
    /// # Safety
    /// As [`Self::read`]; no chunk is held ahead already.
    pub unsafe fn read_ahead(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        if self.at_end() || self.spare.rows > 0 {
            return 0;
        }
        self.swap_buffers();
        self.clear();
        // SAFETY: caller's promise.
        let n = unsafe { self.read(snapshot, limit) };
        self.swap_buffers();
        self.spare.rows = n;
        n
    }

    /// Read the next chunk of up to `limit` rows with `snapshot`; returns
    /// its row count (0 at the end of the scan).
    ///
    /// # Safety
    /// Called from the node's executor callbacks, after [`Self::clear`].
    pub unsafe fn read(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        if self.at_end() {
            return 0;
        }
        // SAFETY: a live relation and slot of the node (caller).
        unsafe {
            if !self.pages_checked {
                // (also for a scan that never had a page reader: EXPLAIN
                // tells the table AM read it)
                self.pages_checked = true;
                if !PageReader::applies(snapshot)
                    && let Some(mut p) = self.pages.take()
                {
                    p.end();
                }
            }
            if self.pages.is_some() {
                return self.read_pages(snapshot, limit);
            }
            if self.scan.is_null() {
                self.scan = if self.pscan.is_null() {
                    pg_sys::table_beginscan(self.rel, snapshot, 0, std::ptr::null_mut())
                } else {
                    pg_sys::table_beginscan_parallel(self.rel, self.pscan)
                };
            }
            let max_attnum = self.chunk.max_attnum() as i32;
            let cxt = Switched::to(self.cxt);
            while self.tuples.len() < limit {
                if self.tuples.len().is_multiple_of(1024) {
                    pgrx::check_for_interrupts!();
                }
                if !pg_sys::table_scan_getnextslot(
                    self.scan,
                    pg_sys::ScanDirection::ForwardScanDirection,
                    self.read_slot,
                ) {
                    self.eof = true;
                    break;
                }
                if max_attnum > 0 {
                    pg_sys::slot_getsomeattrs(self.read_slot, max_attnum);
                }
                self.chunk.append_slot(self.read_slot);
                // the buffer's own tuple for a heap slot: no copy until ours
                let mut should_free = false;
                let tup = pg_sys::ExecFetchSlotHeapTuple(self.read_slot, false, &mut should_free);
                self.tuples.push(tup);
                if should_free {
                    pg_sys::heap_freetuple(tup);
                }
                if self.chunk.text_full() {
                    break;
                }
            }
            drop(cxt);
            self.chunk.nrows()
        }
    }

    /// Read the next chunk page by page (see [`Self::read`]).
    ///
    /// # Safety
    /// As [`Self::read`]; the page reader is set.
    unsafe fn read_pages(&mut self, snapshot: pg_sys::Snapshot, limit: usize) -> u32 {
        let Some(pages) = self.pages.as_mut() else { return 0 };
        // SAFETY: the relation and slot are live (caller); the tuples
        // handed to the slot are the arena's copies.
        unsafe {
            let oid = (*self.rel).rd_id;
            let max_attnum = self.chunk.max_attnum() as i32;
            let cxt = Switched::to(self.cxt);
            self.by_tid = !self.copy_pages;
            // the word offset of the current page's copy in this chunk
            let mut page_at = None;
            while self.tuples.len() < limit {
                let Some(t) = pages.next_tuple(snapshot) else {
                    self.eof = true;
                    break;
                };
                let bytes = if self.copy_pages {
                    let at = match page_at {
                        Some(at) if !t.new_page => at,
                        _ => {
                            let at = self.tuples.push_page(t.page);
                            page_at = Some(at);
                            at
                        }
                    };
                    self.tuples.push_in_page(at, t.off, t.len, t.tid(), oid)
                } else {
                    // the pinned page's own bytes, valid while it is read
                    self.tuples.push_tid(t.tid(), oid);
                    std::slice::from_raw_parts(t.page.add(t.off), t.len)
                };
                if pages.deform(bytes) {
                    self.chunk.append_raw(bytes, &pages.values);
                } else {
                    // PostgreSQL's own deforming and detoasting
                    let mut tup = pg_sys::HeapTupleData {
                        t_len: t.len as u32,
                        t_self: t.tid(),
                        t_tableOid: oid,
                        t_data: bytes.as_ptr().cast_mut().cast(),
                    };
                    pg_sys::ExecStoreHeapTuple(&mut tup, self.page_slot, false);
                    pg_sys::slot_getsomeattrs(self.page_slot, max_attnum);
                    self.chunk.append_slot(self.page_slot);
                    pg_sys::ExecClearTuple(self.page_slot);
                }
                if self.chunk.text_full() {
                    break;
                }
            }
            drop(cxt);
            self.chunk.nrows()
        }
    }

    /// How the scan reads the table, once it has begun (EXPLAIN ANALYZE):
    /// `pages` (page by page; `rows by TID` where pages are not copied) or
    /// `table access method`.
    pub fn read_mode(&self) -> Option<&'static str> {
        match (&self.pages, self.pages_checked) {
            (_, false) => None,
            (Some(_), true) if self.adaptive || self.copy_pages => Some("pages"),
            (Some(_), true) => Some("pages, rows by TID"),
            (None, true) => Some("table access method"),
        }
    }

    /// Keep only TIDs of the chunk's rows on the page path (see
    /// `copy_pages`): for a node that seldom returns its source rows.
    pub fn set_copy_pages(&mut self, copy: bool) {
        self.copy_pages = copy;
        self.adaptive = false;
    }

    /// Row `i` of the chunk as a HeapTuple, valid until the next call or
    /// the next chunk.
    ///
    /// # Safety
    /// Backend, during the scan; `i` is a row of the current chunk.
    pub unsafe fn tuple(&mut self, i: usize) -> pg_sys::HeapTuple {
        let (at, _, tid, oid) = self.tuples.rows[i];
        if at != NOT_COPIED {
            return self.tuples.get(i);
        }
        // SAFETY: the row's page is read through the buffer manager; a
        // tuple visible to the scan's snapshot stays at its TID while
        // the snapshot lives, and is read under the page's share lock.
        unsafe {
            let blkno = ((tid.ip_blkid.bi_hi as u32) << 16) | tid.ip_blkid.bi_lo as u32;
            if self.refetch.0 == pg_sys::InvalidBuffer as pg_sys::Buffer || self.refetch.1 != blkno {
                self.release_refetch();
                let buf = pg_sys::ReadBufferExtended(
                    self.rel,
                    pg_sys::ForkNumber::MAIN_FORKNUM,
                    blkno,
                    pg_sys::ReadBufferMode::RBM_NORMAL,
                    std::ptr::null_mut(),
                );
                self.refetch = (buf, blkno);
            }
            let buf = self.refetch.0;
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
            let (off, len) = crate::source::heap_pages::item(buf, tid.ip_posid);
            self.refetch_words.clear();
            self.refetch_words.resize(len.div_ceil(8), 0);
            std::ptr::copy_nonoverlapping(
                crate::source::heap_pages::page_of(buf).add(off),
                self.refetch_words.as_mut_ptr().cast::<u8>(),
                len,
            );
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_UNLOCK as i32);
            self.refetch_tuple = pg_sys::HeapTupleData {
                t_len: len as u32,
                t_self: tid,
                t_tableOid: oid,
                t_data: self.refetch_words.as_mut_ptr().cast(),
            };
            &mut self.refetch_tuple
        }
    }

    /// Unpin the page rows were last read again from.
    fn release_refetch(&mut self) {
        if self.refetch.0 != pg_sys::InvalidBuffer as pg_sys::Buffer {
            // SAFETY: a buffer this reader pinned.
            unsafe { pg_sys::ReleaseBuffer(self.refetch.0) };
            self.refetch.0 = pg_sys::InvalidBuffer as pg_sys::Buffer;
        }
    }

    /// The page reader, when pages are read directly with `snapshot` (the
    /// heap direct path builds on it); decides the page path as the
    /// first chunk would.
    ///
    /// # Safety
    /// Backend, during the scan; `snapshot` the scan's.
    pub unsafe fn page_reader(&mut self, snapshot: pg_sys::Snapshot) -> Option<&mut PageReader> {
        if !self.pages_checked {
            self.pages_checked = true;
            // SAFETY: the scan's snapshot (caller).
            if !unsafe { PageReader::applies(snapshot) }
                && let Some(mut p) = self.pages.take()
            {
                p.end();
            }
        }
        self.pages.as_deref_mut()
    }

    /// Let the page reader skip the block ranges `filter` rules out (no
    /// page reader, rows through the table AM: every block is read).
    pub fn set_brin(&mut self, filter: Box<crate::source::brin::BrinFilter>) {
        if let Some(p) = self.pages.as_mut() {
            p.set_brin(filter);
        }
    }

    /// The page reader's BRIN filter and the blocks it ruled out here.
    pub fn brin(&self) -> Option<(&crate::source::brin::BrinFilter, u64)> {
        self.pages.as_deref().and_then(|p| p.brin().map(|b| (b, p.brin_skipped)))
    }

    /// Take the BRIN bitmap now unless it is there.
    ///
    /// # Safety
    /// Backend, during the scan.
    pub unsafe fn brin_ensure(&mut self) {
        if let Some(p) = self.pages.as_mut() {
            // SAFETY: caller's promise.
            unsafe { p.brin_ensure() };
        }
    }

    /// Read `blocks` page by page in later chunks (the heap direct path's
    /// leftovers): the scan is not over while they wait.
    pub fn queue_blocks(&mut self, blocks: &[pg_sys::BlockNumber]) {
        if let Some(p) = self.pages.as_mut()
            && !blocks.is_empty()
        {
            p.queue_blocks(blocks);
            self.eof = false;
        }
    }

    /// The heap direct path is over (see `Source::end_direct`).
    pub fn end_direct(&mut self) {
        if let Some(p) = self.pages.as_mut() {
            p.set_queue_only(false);
            self.eof = false;
        }
    }

    /// Start over (ReScan).
    pub fn rescan(&mut self) {
        // the chunk read ahead too
        self.swap_buffers();
        self.clear();
        self.swap_buffers();
        self.spare.rows = 0;
        self.clear();
        self.eof = false;
        if let Some(p) = self.pages.as_mut() {
            p.rescan();
        }
        if !self.scan.is_null() {
            // SAFETY: a scan this reader began.
            unsafe { pg_sys::table_rescan(self.scan, std::ptr::null_mut()) };
        }
    }

    /// Read the blocks a parallel scan descriptor hands out.
    ///
    /// # Safety
    /// `pscan` was initialised for this relation (see [`pscan_initialize`]).
    pub unsafe fn begin_parallel(&mut self, pscan: pg_sys::ParallelTableScanDesc) {
        // the scan itself starts with the first chunk (page by page or
        // through the table AM); a scan begun on an earlier area (a
        // rescan of the Gather made a new one) is not used again
        self.pscan = pscan;
        self.scan = std::ptr::null_mut();
        if let Some(p) = self.pages.as_mut() {
            p.set_parallel(pscan);
        }
    }

    /// End the scan and release the slot (EndCustomScan).
    pub fn end(&mut self) {
        self.release_refetch();
        if let Some(p) = self.pages.as_mut() {
            p.end();
        }
        // SAFETY: resources this reader made, released once.
        unsafe {
            if !self.scan.is_null() {
                pg_sys::table_endscan(self.scan);
                self.scan = std::ptr::null_mut();
            }
            for slot in [&mut self.read_slot, &mut self.page_slot] {
                if !slot.is_null() {
                    pg_sys::ExecDropSingleTupleTableSlot(*slot);
                    *slot = std::ptr::null_mut();
                }
            }
        }
    }
}

/// Bytes of a node's coordination area: `head` bytes of its own, then the
/// parallel table scan descriptor.
///
/// # Safety
/// `node` is a live scan node with an open relation.
pub unsafe fn pscan_estimate(node: *mut pg_sys::CustomScanState, head: usize) -> usize {
    // SAFETY: caller's contract.
    unsafe {
        let estate = (*node).ss.ps.state;
        head + pg_sys::table_parallelscan_estimate((*node).ss.ss_currentRelation, (*estate).es_snapshot)
    }
}

/// The parallel table scan descriptor inside a coordination area.
///
/// # Safety
/// `coordinate` is an area of [`pscan_estimate`]'s size for the same `head`.
pub unsafe fn pscan_at(coordinate: *mut std::ffi::c_void, head: usize) -> pg_sys::ParallelTableScanDesc {
    // SAFETY: the descriptor follows the head (caller).
    unsafe { (coordinate as *mut u8).add(head).cast() }
}

/// Zero the head and initialise the descriptor (InitializeDSM).
///
/// # Safety
/// As [`pscan_at`]; `node` is the leader's node.
pub unsafe fn pscan_initialize(node: *mut pg_sys::CustomScanState, coordinate: *mut std::ffi::c_void, head: usize) {
    // SAFETY: caller's contract.
    unsafe {
        let estate = (*node).ss.ps.state;
        std::ptr::write_bytes(coordinate as *mut u8, 0, head);
        pg_sys::table_parallelscan_initialize(
            (*node).ss.ss_currentRelation,
            pscan_at(coordinate, head),
            (*estate).es_snapshot,
        );
    }
}

/// Reset the descriptor for a rescan (ReInitializeDSM).
///
/// # Safety
/// As [`pscan_at`].
pub unsafe fn pscan_reinitialize(node: *mut pg_sys::CustomScanState, coordinate: *mut std::ffi::c_void, head: usize) {
    // SAFETY: caller's contract.
    unsafe { pg_sys::table_parallelscan_reinitialize((*node).ss.ss_currentRelation, pscan_at(coordinate, head)) }
}
