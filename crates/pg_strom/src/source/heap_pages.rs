//! Reading a heap table page by page for the device (the page path):
//! blocks read through the buffer manager, serially or as a parallel
//! scan descriptor hands them out; a page's visible tuples decided once
//! per page (all of them on an all-visible page, else
//! `HeapTupleSatisfiesVisibility` with the scan's snapshot, as the heap AM
//! does in page mode); the page copied whole into the chunk's tuple arena;
//! and the referenced columns taken out of each tuple by a deformer that
//! reads only the attributes up to the last referenced one.
//!
//! A tuple it cannot take apart itself (fewer attributes than the
//! columns need, a compressed or TOASTed value of a referenced column)
//! goes through PostgreSQL's own deforming and detoasting (the caller's
//! slot path), so every chunk row is what a SeqScan would return.  Only
//! plain MVCC snapshots outside SERIALIZABLE transactions read pages this
//! way (a SERIALIZABLE scan takes predicate locks in the heap AM).

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors;
use crate::pg::memctx::Switched;

/// Bytes of a page.
const BLCKSZ: usize = pg_sys::BLCKSZ as usize;
/// Size of a page header up to its line pointer array.
const PAGE_HEADER: usize = 24;
/// pd_flags bit: every tuple on the page is visible to everyone.
const PD_ALL_VISIBLE: u16 = 0x0004;
/// Line pointer state of a tuple in use.
const LP_NORMAL: u32 = 1;
/// t_infomask bit: the tuple has a null bitmap.
const HEAP_HASNULL: u16 = 0x0001;
/// t_infomask2 bits holding the number of attributes.
const HEAP_NATTS_MASK: u16 = 0x07ff;
/// Offset of t_bits in a tuple header.
const T_BITS: usize = 23;
/// The on-disk TOAST pointer's vartag.
const VARTAG_ONDISK: u8 = 18;

/// How one attribute lies in a tuple.
#[derive(Clone, Copy)]
struct Layout {
    /// attlen: > 0 fixed, -1 varlena, -2 cstring.
    len: i16,
    /// Alignment in bytes.
    align: usize,
    /// A column of the chunk reads it.
    wanted: bool,
}

/// Where one attribute's value lies in the tuple: (byte offset, length)
/// of its data (a varlena's without its header), or None for NULL.
pub type Value = Option<(u32, u32)>;

/// A parallel scan's heap direct requests: about this many for a table
/// ([`PageReader::direct_batch_blocks`]).
const DIRECT_SHARES: usize = 64;

/// The fewest blocks a heap direct request of a parallel scan takes
/// (2 MB: below it the request's fixed costs would dominate).
const DIRECT_MIN_BLOCKS: usize = 256;

/// The blocks of a parallel scan's heap direct request for a table of
/// `nblocks` blocks, `most` at most ([`PageReader::direct_batch_blocks`];
/// the planner counts requests by the same rule).
pub fn direct_batch_blocks(nblocks: f64, most: f64) -> f64 {
    (nblocks / DIRECT_SHARES as f64).floor().clamp((DIRECT_MIN_BLOCKS as f64).min(most), most)
}

/// Blocks of one relation, read page by page.
pub struct PageReader {
    rel: pg_sys::Relation,
    layout: Vec<Layout>,
    /// The bulk-read ring, allocated in `cxt` (the query's context: the
    /// pages are read while a chunk's short-lived context is current).
    strategy: pg_sys::BufferAccessStrategy,
    cxt: pg_sys::MemoryContext,
    /// Serial scan: the next block and the number of blocks (read at the
    /// first page).
    next: pg_sys::BlockNumber,
    nblocks: Option<pg_sys::BlockNumber>,
    /// Parallel scan: the shared descriptor and this process's share.
    pscan: pg_sys::ParallelBlockTableScanDesc,
    worker: pg_sys::ParallelBlockTableScanWorkerData,
    worker_started: bool,
    /// The pinned buffer of the current page (InvalidBuffer: none).
    buffer: pg_sys::Buffer,
    blkno: pg_sys::BlockNumber,
    /// Visible tuples of the current page not yet read: (line pointer
    /// number, offset, length).
    items: Vec<(u16, u16, u16)>,
    pos: usize,
    /// Values of the last deformed tuple, per attribute.
    pub values: Vec<Value>,
    /// The leading fixed-width attributes: how many, the offset after
    /// them, and the referenced ones among them ((index, offset, length)).
    prefix: usize,
    prefix_end: usize,
    prefix_wanted: Vec<(usize, u32, u32)>,
    /// Blocks to read before (or, with `queue_only`, instead of) those the
    /// scan hands out: the heap direct path's leftovers (source::heap_direct).
    queue: std::collections::VecDeque<pg_sys::BlockNumber>,
    queue_only: bool,
    /// The block ranges a BRIN index keeps (None: every block).
    brin: Option<Box<crate::source::brin::BrinFilter>>,
    /// Blocks the BRIN filter ruled out in this process.
    pub brin_skipped: u64,
}

impl PageReader {
    /// A page reader for `rel`, whose chunk reads the attributes `attnums`
    /// as device columns of `widths` bytes (0: variable-length); None
    /// when the page path does not apply (not a heap table, a column
    /// whose storage is not the device's).
    ///
    /// # Safety
    /// `rel` is an open relation; the current memory context lives as
    /// long as the scan.
    pub unsafe fn new(rel: pg_sys::Relation, columns: &[(i16, usize)]) -> Option<PageReader> {
        // SAFETY: an open relation (caller); attributes within natts.
        unsafe {
            if (*rel).rd_tableam != pg_sys::GetHeapamTableAmRoutine() {
                return None;
            }
            let desc = (*rel).rd_att;
            let natts = (*desc).natts as usize;
            let max = columns.iter().map(|&(a, _)| a).max().unwrap_or(0);
            if max <= 0 || max as usize > natts {
                return None;
            }
            let mut layout = Vec::with_capacity(max as usize);
            for i in 0..max as usize {
                let att = crate::pg::compat::tuple_desc_attr(desc, i as i32);
                let align = crate::pg::attalign_bytes(att) as usize;
                layout.push(Layout { len: (*att).attlen, align, wanted: false });
            }
            for &(attnum, width) in columns {
                if attnum <= 0 {
                    return None;
                }
                let l = &mut layout[attnum as usize - 1];
                let stored_as_device = if width == 0 { l.len == -1 } else { l.len as usize == width };
                if !stored_as_device {
                    return None;
                }
                l.wanted = true;
            }
            let (mut prefix, mut prefix_end, mut prefix_wanted) = (0, 0usize, Vec::new());
            for (k, l) in layout.iter().enumerate() {
                if l.len <= 0 {
                    break;
                }
                let at = prefix_end.next_multiple_of(l.align);
                if l.wanted {
                    prefix_wanted.push((k, at as u32, l.len as u32));
                }
                prefix_end = at + l.len as usize;
                prefix = k + 1;
            }
            Some(PageReader {
                prefix,
                prefix_end,
                prefix_wanted,
                rel,
                values: vec![None; layout.len()],
                layout,
                strategy: std::ptr::null_mut(),
                cxt: pg_sys::CurrentMemoryContext,
                next: 0,
                nblocks: None,
                pscan: std::ptr::null_mut(),
                worker: pg_sys::ParallelBlockTableScanWorkerData::default(),
                worker_started: false,
                buffer: pg_sys::InvalidBuffer as pg_sys::Buffer,
                blkno: 0,
                items: Vec::new(),
                pos: 0,
                queue: std::collections::VecDeque::new(),
                queue_only: false,
                brin: None,
                brin_skipped: 0,
            })
        }
    }

    /// True when `snapshot` lets pages be read this way: a plain MVCC
    /// snapshot, and not a SERIALIZABLE transaction.
    ///
    /// # Safety
    /// A valid snapshot.
    pub unsafe fn applies(snapshot: pg_sys::Snapshot) -> bool {
        // SAFETY: caller's promise; XactIsoLevel is the backend's.
        unsafe {
            (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_MVCC
                && pg_sys::XactIsoLevel != pg_sys::XACT_SERIALIZABLE as i32
        }
    }

    /// Read the blocks `pscan` (a heap table's parallel scan descriptor)
    /// hands out instead of all blocks.
    pub fn set_parallel(&mut self, pscan: pg_sys::ParallelTableScanDesc) {
        self.pscan = pscan.cast();
        self.worker_started = false;
    }

    /// Read only the blocks `filter` keeps.
    pub fn set_brin(&mut self, filter: Box<crate::source::brin::BrinFilter>) {
        self.brin = Some(filter);
    }

    /// The BRIN filter, for EXPLAIN.
    pub fn brin(&self) -> Option<&crate::source::brin::BrinFilter> {
        self.brin.as_deref()
    }

    /// Take the BRIN filter's bitmap now unless it is there (EXPLAIN
    /// ANALYZE of a process that read no block).
    ///
    /// # Safety
    /// Backend, during the scan.
    pub unsafe fn brin_ensure(&mut self) {
        let rel = self.rel;
        if let Some(b) = self.brin.as_mut() {
            // SAFETY: caller's promise.
            unsafe { b.ensure(rel) };
        }
    }

    /// Start over (ReScan; a parallel descriptor is reset by the leader).
    pub fn rescan(&mut self) {
        if let Some(b) = self.brin.as_mut() {
            b.rescan();
        }
        self.release();
        self.next = 0;
        self.nblocks = None;
        self.worker_started = false;
        self.items.clear();
        self.pos = 0;
        self.queue.clear();
        self.queue_only = false;
    }

    /// Drop the pin of the current page.
    fn release(&mut self) {
        if self.buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            // SAFETY: a buffer this reader pinned.
            unsafe { pg_sys::ReleaseBuffer(self.buffer) };
            self.buffer = pg_sys::InvalidBuffer as pg_sys::Buffer;
        }
    }

    /// End the scan (EndCustomScan).
    pub fn end(&mut self) {
        self.release();
        if !self.strategy.is_null() {
            // SAFETY: a strategy this reader made.
            unsafe { pg_sys::FreeAccessStrategy(self.strategy) };
            self.strategy = std::ptr::null_mut();
        }
    }

    /// Read `blocks` next (before the blocks the scan hands out).
    pub fn queue_blocks(&mut self, blocks: &[pg_sys::BlockNumber]) {
        self.queue.extend(blocks.iter().copied());
    }

    /// Blocks queued and not yet read.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// With `only`, pages are read from the queue alone (the heap direct
    /// path takes the scan's blocks itself, [`Self::take_block`]).
    pub fn set_queue_only(&mut self, only: bool) {
        self.queue_only = only;
    }

    /// The next block the scan hands out, not read here (None at the end).
    ///
    /// # Safety
    /// Backend, during the scan.
    pub unsafe fn take_block(&mut self) -> Option<pg_sys::BlockNumber> {
        // SAFETY: caller's promise.
        unsafe { self.next_scan_block() }
    }

    /// The next block to read, None at the end.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn next_block(&mut self) -> Option<pg_sys::BlockNumber> {
        if let Some(b) = self.queue.pop_front() {
            return Some(b);
        }
        if self.queue_only {
            return None;
        }
        // SAFETY: caller's promise.
        unsafe { self.next_scan_block() }
    }

    /// The next block the scan (serial, or a parallel descriptor) hands
    /// out that the BRIN filter (if any) keeps.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn next_scan_block(&mut self) -> Option<pg_sys::BlockNumber> {
        loop {
            // SAFETY: caller's promise.
            let b = unsafe { self.next_handed_block() }?;
            let rel = self.rel;
            // SAFETY: caller's promise.
            let keep = self.brin.as_mut().is_none_or(|f| unsafe { f.allows(rel, b) });
            if keep {
                return Some(b);
            }
            self.brin_skipped += 1;
        }
    }

    /// The next block the scan (serial, or a parallel descriptor) hands
    /// out.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn next_handed_block(&mut self) -> Option<pg_sys::BlockNumber> {
        // SAFETY: the relation is open; pscan (when set) its descriptor.
        unsafe {
            if !self.pscan.is_null() {
                if !self.worker_started {
                    count_stats(self.rel, 1, 0);
                    self.worker = pg_sys::ParallelBlockTableScanWorkerData::default();
                    pg_sys::table_block_parallelscan_startblock_init(self.rel, &mut self.worker, self.pscan);
                    self.worker_started = true;
                    self.use_strategy((*self.pscan).phs_nblocks);
                }
                let b = pg_sys::table_block_parallelscan_nextpage(self.rel, &mut self.worker, self.pscan);
                return (b != pg_sys::InvalidBlockNumber).then_some(b);
            }
            let nblocks = match self.nblocks {
                Some(n) => n,
                None => {
                    count_stats(self.rel, 1, 0);
                    let n = pg_sys::RelationGetNumberOfBlocksInFork(self.rel, pg_sys::ForkNumber::MAIN_FORKNUM);
                    self.use_strategy(n);
                    self.nblocks = Some(n);
                    n
                }
            };
            if self.next >= nblocks {
                return None;
            }
            self.next += 1;
            Some(self.next - 1)
        }
    }

    /// Block `blkno` of the relation, pinned (not locked), read through
    /// the scan's ring when it has one (a table larger than a quarter of
    /// shared buffers).
    ///
    /// # Safety
    /// Backend, during the scan; `blkno` below the relation's size.
    pub unsafe fn read_block(&self, blkno: pg_sys::BlockNumber) -> pg_sys::Buffer {
        // SAFETY: caller's promise; the relation is open.
        unsafe {
            pg_sys::ReadBufferExtended(
                self.rel,
                pg_sys::ForkNumber::MAIN_FORKNUM,
                blkno,
                pg_sys::ReadBufferMode::RBM_NORMAL,
                self.strategy,
            )
        }
    }

    /// The most blocks one request of the heap direct path should take
    /// (`most` at most): in a parallel scan, a `DIRECT_SHARES`-th of the
    /// table (at least `DIRECT_MIN_BLOCKS`), so that a table of a few
    /// requests' size is divided among the processes instead of being
    /// taken by the first few of them (their rows' work after the device,
    /// probing a PostgreSQL join above, publishing an inner relation's
    /// rows, waits on them); a serial scan takes `most`.
    pub fn direct_batch_blocks(&self, most: usize) -> usize {
        if self.pscan.is_null() {
            return most;
        }
        // SAFETY: the scan's parallel descriptor, in the DSM.
        let n = unsafe { (*self.pscan).phs_nblocks };
        direct_batch_blocks(n as f64, most as f64) as usize
    }

    /// A bulk-read ring for a table larger than a quarter of shared
    /// buffers, as the heap AM's own scans use.
    /// True when blocks go through a bulk-read ring (a table larger than
    /// a quarter of shared_buffers): a page is gone from shared buffers
    /// soon after it was read, so reading a row again costs a read.
    pub fn uses_ring(&self) -> bool {
        !self.strategy.is_null()
    }

    fn use_strategy(&mut self, nblocks: pg_sys::BlockNumber) {
        // SAFETY: backend globals.
        unsafe {
            if self.strategy.is_null() && nblocks as i64 > (pg_sys::NBuffers / 4) as i64 {
                let _cxt = Switched::to(self.cxt);
                self.strategy = pg_sys::GetAccessStrategy(pg_sys::BufferAccessStrategyType::BAS_BULKREAD);
            }
        }
    }

    /// Read the next page that has visible tuples and keep it pinned;
    /// false at the end of the scan.
    ///
    /// # Safety
    /// Backend, during the scan; `snapshot` the scan's.
    unsafe fn next_page(&mut self, snapshot: pg_sys::Snapshot) -> bool {
        self.release();
        self.items.clear();
        self.pos = 0;
        // SAFETY: buffers read, locked and released here; the page's
        // line pointers and tuples are read under the share lock.
        unsafe {
            let table_oid = (*self.rel).rd_id;
            while let Some(blkno) = self.next_block() {
                pgrx::check_for_interrupts!();
                let buffer = self.read_block(blkno);
                pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as i32);
                let page = page_of(buffer);
                let all_visible = read_u16(page, 10) & PD_ALL_VISIBLE != 0 && !(*snapshot).takenDuringRecovery;
                for i in 0..line_pointers(page) {
                    let (normal, off, len) = line_pointer(page, i);
                    if !normal {
                        continue;
                    }
                    if !tuple_fits(off, len) {
                        let blk = blkno;
                        pg_sys::UnlockReleaseBuffer(buffer);
                        errors::raise_plain(
                            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                            format!(
                                "invalid line pointer {} in block {blk} of relation \"{}\"",
                                i + 1,
                                rel_name(self.rel)
                            ),
                            Some(format!("offset {off}, length {len}")),
                            None,
                        );
                    }
                    let lineoff = (i + 1) as u16;
                    if !all_visible {
                        let mut tup = pg_sys::HeapTupleData {
                            t_len: len as u32,
                            t_self: item_pointer(blkno, lineoff),
                            t_tableOid: table_oid,
                            t_data: page.add(off).cast_mut().cast(),
                        };
                        if !pg_sys::HeapTupleSatisfiesVisibility(&mut tup, snapshot, buffer) {
                            continue;
                        }
                    }
                    self.items.push((lineoff, off as u16, len as u16));
                }
                // the visible tuples stay as they are while the page is
                // pinned (pruning needs a cleanup lock): read them unlocked
                pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_UNLOCK as i32);
                if self.items.is_empty() {
                    pg_sys::ReleaseBuffer(buffer);
                    continue;
                }
                count_stats(self.rel, 0, self.items.len() as i64);
                self.buffer = buffer;
                self.blkno = blkno;
                return true;
            }
            false
        }
    }

    /// The next visible tuple: (block, line pointer, offset, length), its
    /// page's bytes (pinned until the page is done) and whether the page
    /// changed since the last tuple; None at the end of the scan.
    ///
    /// # Safety
    /// Backend, during the scan; `snapshot` the scan's.
    pub unsafe fn next_tuple(&mut self, snapshot: pg_sys::Snapshot) -> Option<Tuple> {
        let mut new_page = false;
        if self.pos >= self.items.len() {
            // SAFETY: caller's promise.
            if !unsafe { self.next_page(snapshot) } {
                return None;
            }
            new_page = true;
        }
        let (lineoff, off, len) = self.items[self.pos];
        self.pos += 1;
        Some(Tuple {
            blkno: self.blkno,
            lineoff,
            off: off as usize,
            len: len as usize,
            // SAFETY: the pinned buffer's page.
            page: unsafe { page_of(self.buffer) },
            new_page,
        })
    }

    /// Take the attributes up to the last referenced one out of `tup`
    /// (its bytes) into [`Self::values`] (only the referenced ones are
    /// set); false when PostgreSQL must deform it (missing attributes, a
    /// referenced value compressed or stored out of line, a length past
    /// the tuple's end).
    pub fn deform(&mut self, tup: &[u8]) -> bool {
        if tup.len() < T_BITS {
            return false;
        }
        let infomask2 = u16::from_le_bytes([tup[18], tup[19]]);
        let infomask = u16::from_le_bytes([tup[20], tup[21]]);
        let hoff = tup[22] as usize;
        let natts = (infomask2 & HEAP_NATTS_MASK) as usize;
        let n = self.layout.len();
        if natts < n || hoff > tup.len() {
            return false;
        }
        let data = &tup[hoff..];
        let base = hoff as u32;
        let hasnull = infomask & HEAP_HASNULL != 0;
        let (mut first, mut off) = (0, 0);
        if hasnull {
            if T_BITS + n.div_ceil(8) > hoff {
                return false;
            }
        } else {
            // without NULLs the leading fixed-width attributes lie at
            // fixed offsets
            if self.prefix_end > data.len() {
                return false;
            }
            for &(k, at, len) in &self.prefix_wanted {
                self.values[k] = Some((base + at, len));
            }
            first = self.prefix;
            off = self.prefix_end;
        }
        for k in first..n {
            let l = self.layout[k];
            if hasnull && tup[T_BITS + k / 8] & (1 << (k % 8)) == 0 {
                if l.wanted {
                    self.values[k] = None;
                }
                continue;
            }
            if l.len > 0 {
                off = (off + l.align - 1) & !(l.align - 1);
                let end = off + l.len as usize;
                if end > data.len() {
                    return false;
                }
                if l.wanted {
                    self.values[k] = Some((base + off as u32, l.len as u32));
                }
                off = end;
            } else if l.len == -1 {
                // a pad byte is 0; a varlena header never is
                let Some(&b) = data.get(off) else { return false };
                if b == 0 {
                    off = (off + l.align - 1) & !(l.align - 1);
                }
                let Some(&b0) = data.get(off) else { return false };
                let (head, size) = if b0 & 0x01 == 0x01 {
                    if b0 == 0x01 {
                        // an out-of-line TOAST pointer
                        if l.wanted || data.get(off + 1) != Some(&VARTAG_ONDISK) {
                            return false;
                        }
                        (2, 2 + 16)
                    } else {
                        (1, (b0 >> 1) as usize)
                    }
                } else {
                    let Some(w) = data.get(off..off + 4) else { return false };
                    // compressed in line
                    if b0 & 0x03 == 0x02 && l.wanted {
                        return false;
                    }
                    (4, (u32::from_le_bytes([w[0], w[1], w[2], w[3]]) >> 2) as usize)
                };
                if size < head || off + size > data.len() {
                    return false;
                }
                if l.wanted {
                    self.values[k] = Some((base + (off + head) as u32, (size - head) as u32));
                }
                off += size;
            } else {
                // a cstring: up to and including its NUL
                let Some(len) = data.get(off..).and_then(|d| d.iter().position(|&b| b == 0)) else {
                    return false;
                };
                off += len + 1;
            }
        }
        true
    }
}

/// One visible tuple of a pinned page.
pub struct Tuple {
    pub blkno: pg_sys::BlockNumber,
    pub lineoff: u16,
    pub off: usize,
    pub len: usize,
    pub page: *const u8,
    pub new_page: bool,
}

impl Tuple {
    /// Its block and line pointer as a TID.
    pub fn tid(&self) -> pg_sys::ItemPointerData {
        item_pointer(self.blkno, self.lineoff)
    }
}

/// Line pointers on a page (at most as many as fit).
///
/// # Safety
/// `page` points to a page.
unsafe fn line_pointers(page: *const u8) -> usize {
    // SAFETY: caller's promise.
    let lower = unsafe { read_u16(page, 12) } as usize;
    (lower.saturating_sub(PAGE_HEADER) / 4).min((BLCKSZ - PAGE_HEADER) / 4)
}

/// Line pointer `i` (from 0) of a page: (it holds a tuple: LP_NORMAL,
/// the tuple's offset, its length).
///
/// # Safety
/// `i < line_pointers(page)`.
unsafe fn line_pointer(page: *const u8, i: usize) -> (bool, usize, usize) {
    // SAFETY: the entry lies within the page's line pointer array (caller).
    let lp = unsafe { u32::from_le_bytes(*(page.add(PAGE_HEADER + 4 * i) as *const [u8; 4])) };
    ((lp >> 15) & 3 == LP_NORMAL, (lp & 0x7fff) as usize, (lp >> 17) as usize)
}

/// A tuple at `off` of `len` bytes lies within the page, after its
/// header, at a MAXALIGN offset, with a whole tuple header.
fn tuple_fits(off: usize, len: usize) -> bool {
    off.is_multiple_of(8) && off >= PAGE_HEADER && off + len <= BLCKSZ && len >= T_BITS
}

/// (offset, length) of line pointer `lineoff` of a pinned, locked page,
/// checked to lie within the page; an ERROR when the line pointer is not
/// a tuple's.
///
/// # Safety
/// `buffer` is pinned and locked.
pub unsafe fn item(buffer: pg_sys::Buffer, lineoff: u16) -> (usize, usize) {
    // SAFETY: the line pointer array lies within the page (checked).
    unsafe {
        let page = page_of(buffer);
        let i = lineoff as usize;
        if i >= 1 && i <= line_pointers(page) {
            let (normal, off, len) = line_pointer(page, i - 1);
            if normal && tuple_fits(off, len) {
                return (off, len);
            }
        }
        pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_UNLOCK as i32);
        errors::raise_plain(
            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
            format!("tuple ({}, {lineoff}) is gone from its page", pg_sys::BufferGetBlockNumber(buffer)),
            None,
            None,
        )
    }
}

/// The LP_NORMAL items of a pinned, locked page, in line pointer order:
/// (line pointer number, offset, length), or None when one of them does
/// not lie within the page (the heap kernels refuse such a page).
///
/// # Safety
/// `buffer` is pinned and locked.
pub unsafe fn normal_items(buffer: pg_sys::Buffer) -> Option<Vec<(u16, usize, usize)>> {
    // SAFETY: the line pointer array lies within the page (line_pointers).
    unsafe {
        let page = page_of(buffer);
        let mut out = Vec::new();
        for i in 0..line_pointers(page) {
            let (normal, off, len) = line_pointer(page, i);
            if normal {
                if !tuple_fits(off, len) {
                    return None;
                }
                out.push(((i + 1) as u16, off, len));
            }
        }
        Some(out)
    }
}

/// Count a sequential scan begun and tuples returned in the table's
/// statistics (`pg_stat_user_tables.seq_scan` / `seq_tup_read`), as the
/// heap AM does (pgstat_count_heap_scan / _getnext).
///
/// # Safety
/// An open relation, in a backend.
unsafe fn count_stats(rel: pg_sys::Relation, scans: i64, tuples: i64) {
    // SAFETY: the relation's statistics entry, set up as pgstat does.
    unsafe {
        if (*rel).pgstat_info.is_null() && (*rel).pgstat_enabled {
            pg_sys::pgstat_assoc_relation(rel);
        }
        if let Some(info) = (*rel).pgstat_info.as_mut() {
            crate::pg::compat::count_scan(info, scans, tuples);
        }
    }
}

/// The page of a pinned buffer (BufferGetPage).
///
/// # Safety
/// `buffer` is pinned.
pub unsafe fn page_of(buffer: pg_sys::Buffer) -> *const u8 {
    // SAFETY: shared buffers are numbered from 1, local ones from -1.
    unsafe {
        if buffer < 0 {
            *pg_sys::LocalBufferBlockPointers.add((-buffer - 1) as usize) as *const u8
        } else {
            pg_sys::BufferBlocks.add((buffer as usize - 1) * BLCKSZ) as *const u8
        }
    }
}

/// A little-endian u16 of a page.
///
/// # Safety
/// `at + 2 <= BLCKSZ`.
unsafe fn read_u16(page: *const u8, at: usize) -> u16 {
    // SAFETY: caller's promise.
    unsafe { u16::from_le_bytes(*(page.add(at) as *const [u8; 2])) }
}

pub fn item_pointer(blkno: pg_sys::BlockNumber, lineoff: u16) -> pg_sys::ItemPointerData {
    pg_sys::ItemPointerData {
        ip_blkid: pg_sys::BlockIdData { bi_hi: (blkno >> 16) as u16, bi_lo: (blkno & 0xffff) as u16 },
        ip_posid: lineoff,
    }
}

/// The relation's name, for messages.
///
/// # Safety
/// An open relation.
unsafe fn rel_name(rel: pg_sys::Relation) -> String {
    // SAFETY: caller's promise.
    unsafe { std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned() }
}
