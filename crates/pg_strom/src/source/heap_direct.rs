//! The heap direct path, backend side: a GpuScan, GpuJoin or GpuPreAgg
//! over a heap table hands the GPU service the blocks it may read from the
//! table's segment files itself (straight into GPU memory, by cuFile or
//! pinned buffers), where the heap kernels take the tuples apart; every
//! other block is read through the buffer manager as before.  A GpuPreAgg
//! gets groups back; a GpuJoin gets the combinations (a GpuScan those of a
//! join of no depth: the rows that passed its filter) with the tuples they
//! read, copied by the engine out of the blocks it read, and never reads
//! those pages itself.
//!
//! A block goes direct when the visibility map says all-visible (so every
//! tuple on it is visible to every snapshot, ours included) and shared
//! buffers do not hold a dirty copy of it (so the file has its latest
//! contents).  After the service answers, the blocks' visibility map bits
//! are read again: a bit cleared meanwhile means the block may have been
//! changed while it was read, and the request's groups are dropped and its
//! blocks read through the buffer manager instead.  (A bit, once cleared,
//! cannot be set again while our snapshot holds back the horizon: a
//! change made after our snapshot is not all-visible to it.)  The service
//! also checks each page's own all-visible flag and refuses any block its
//! deformer cannot take (those go through the buffer manager too).
//!
//! Owns: whether the path applies to a scan, the block classification,
//! the segment files handed to the session, and the counters EXPLAIN
//! ANALYZE shows.

use std::collections::{HashMap, HashSet};

use pgrx::pg_sys;

use pgstrom_runtime::DeviceError;
use pgstrom_runtime::catalog;
use pgstrom_runtime::fileread::FileAccess;
use pgstrom_runtime::heapscan::{CONV_COPY, CONV_NUMERIC, CONV_VARLENA, HeapAttr, HeapLayout, HeapProbed};
use pgstrom_runtime::join::JoinSession;

use crate::guc;
use crate::source::heap_chunks::TupleArena;
use crate::source::heap_pages::PageReader;

/// Blocks per request (64 MB of 8 kB blocks; within one segment file).
pub const BATCH_BLOCKS: usize = 8192;

/// Buffer descriptors one share of a scan of them covers
/// ([`dirty_blocks_among`]).
pub const DESCRIPTOR_SHARE: u32 = 1 << 16;

/// What the path did, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirectCounters {
    /// Blocks the service read and took apart.
    pub blocks: u64,
    /// Blocks the service read but refused (read again by the backend).
    pub refused: u64,
    /// Blocks whose visibility map bit was cleared during the read.
    pub changed: u64,
    /// Blocks sent through the buffer manager at once (not all-visible, or
    /// dirty in shared buffers).
    pub buffered: u64,
    /// Tuples the service sent back for the rows a GpuJoin or GpuScan
    /// returned, and their bytes (answers kept only).
    pub tuples: u64,
    pub tuple_bytes: u64,
}

/// How many counters [`DirectCounters`] has (`Counters::direct`).
pub const DIRECT_COUNTS: usize = 6;

/// How the heap kernels make a column of device type `type_id` from an
/// attribute of length `attlen` (`heapscan::CONV_*`), or None when they
/// do not take it: a numeric is decoded, a text-like value's bytes
/// (text, varchar, bpchar, bytea) copied, a fixed-width value stored as
/// the device holds it copied.  (The planner's credit for the path,
/// `customscan::cost::planned_fraction`, asks the same.)
pub fn conversion(type_id: u16, attlen: i16) -> Option<u8> {
    let width = catalog::type_info(type_id)?.width;
    match (type_id == pgstrom_runtime::program::type_id("NUMERIC"), width, attlen) {
        (true, _, -1) => Some(CONV_NUMERIC),
        (false, 0, -1) => Some(CONV_VARLENA),
        (false, w, l) if w > 0 && l as usize == w => Some(CONV_COPY),
        _ => None,
    }
}

/// The path for one scan.
pub struct HeapDirect {
    rel: pg_sys::Relation,
    layout: HeapLayout,
    /// The attribute numbers of `layout.keys`.
    key_attnos: Vec<i16>,
    vmbuf: pg_sys::Buffer,
    /// Segment number -> (its file, the session's handle for it).
    segments: HashMap<u32, (std::fs::File, u32)>,
    /// A block taken from the scan that starts the next batch (another
    /// segment than the batch before it).
    carry: Option<pg_sys::BlockNumber>,
    /// Still taking blocks from the scan.
    pub active: bool,
    /// The relation's blocks shared buffers held dirty when the scan
    /// began, from one pass over the buffer descriptors (None: each batch
    /// looks its blocks up in the buffer mapping table instead).
    dirty: Option<HashSet<pg_sys::BlockNumber>>,
    /// Files cuFile read, and why it refused one (EXPLAIN).
    pub cufile_files: u64,
    pub refused_why: Option<String>,
    pub counters: DirectCounters,
    /// `counters` as [`Self::take_counts`] last returned them.
    counted: DirectCounters,
    /// Requests answered (`pg_strom.debug_drop_heap_direct_answers`).
    answered: u64,
    /// The requests aggregate (a GpuPreAgg); else they only join, and
    /// the rows the combinations read are copied into `rows`.
    agg: bool,
    /// The last answer's outer rows (a request that only joins): its
    /// combinations' source-0 rows index these copies.
    pub rows: TupleArena,
}

impl HeapDirect {
    /// The path for a scan of `rel` gathering `columns` ((attnum, device
    /// type)), or None when it does not apply: the setting is off, the
    /// table is temporary or not a heap, recovery is in progress, or a
    /// column is neither a numeric (decoded by the kernels), nor of a
    /// variable-length device type (text, varchar, bpchar, bytea: the
    /// kernels copy a varlena's bytes; at most `heapscan::MAX_VAR` of
    /// them), nor of a fixed-width type stored as the device holds it.
    /// `keys`: the attribute numbers of grouping keys read from the
    /// table's rows (variable-length columns among `columns`), whose
    /// values at each group's representative row come back with the
    /// groups.
    ///
    /// # Safety
    /// `rel` is the scan's open relation.
    pub unsafe fn new(rel: pg_sys::Relation, columns: &[(i16, u16)], keys: &[i16]) -> Option<HeapDirect> {
        if !guc::HEAP_DIRECT.get() || columns.is_empty() {
            return None;
        }
        // SAFETY: an open relation (caller).
        unsafe {
            if (*rel).rd_tableam != pg_sys::GetHeapamTableAmRoutine()
                || (*(*rel).rd_rel).relpersistence as u8 == pg_sys::RELPERSISTENCE_TEMP
                || pg_sys::RecoveryInProgress()
            {
                return None;
            }
            let desc = (*rel).rd_att;
            let max = columns.iter().map(|c| c.0).max()?;
            if max <= 0 || max as i32 > (*desc).natts {
                return None;
            }
            let mut attrs = Vec::with_capacity(max as usize);
            for i in 0..max as usize {
                let att = crate::pg::compat::tuple_desc_attr(desc, i as i32);
                let attalign = crate::pg::attalign_bytes(att);
                attrs.push(HeapAttr { attlen: (*att).attlen, attalign, conv: CONV_COPY, column: -1 });
            }
            let mut types = Vec::with_capacity(columns.len());
            for (c, &(attnum, type_id)) in columns.iter().enumerate() {
                let a = attnum.checked_sub(1).and_then(|k| attrs.get_mut(k as usize))?;
                if attnum <= 0 || a.column >= 0 {
                    return None;
                }
                a.conv = conversion(type_id, a.attlen)?;
                a.column = c as i32;
                types.push(type_id);
            }
            let key_columns =
                keys.iter().map(|k| columns.iter().position(|c| c.0 == *k).map(|c| c as u32)).collect::<Option<_>>()?;
            let layout = HeapLayout { blcksz: pg_sys::BLCKSZ, attrs, types, keys: key_columns };
            layout.widths().ok()?;
            Some(HeapDirect {
                rel,
                layout,
                key_attnos: keys.to_vec(),
                vmbuf: pg_sys::InvalidBuffer as pg_sys::Buffer,
                segments: HashMap::new(),
                carry: None,
                active: true,
                dirty: None,
                cufile_files: 0,
                refused_why: None,
                counters: DirectCounters::default(),
                counted: DirectCounters::default(),
                answered: 0,
                agg: true,
                rows: TupleArena::default(),
            })
        }
    }

    /// The relation's blocks shared buffers hold dirty, found by one pass
    /// over the buffer descriptors (of every process of a parallel plan
    /// together: [`crate::gpujoin::shared_build`]), for the rest of the
    /// scan: a block dirty now is never read direct; one that becomes
    /// dirty later can only have been changed (which clears its
    /// visibility map bit: the check after the read sees it) or been
    /// marked all-visible by a vacuum, which cannot happen to a change
    /// our snapshot does not see, so its file holds the rows we see.
    pub fn use_dirty_set(&mut self, set: HashSet<pg_sys::BlockNumber>) {
        self.dirty = Some(set);
    }

    /// For a scan this process makes alone: when the relation has more
    /// blocks than a 64th of shared buffers (a lookup costs about as much
    /// as scanning 64 descriptors), find its dirty blocks with one pass
    /// over the buffer descriptors instead of a lookup per block.
    ///
    /// # Safety
    /// Backend, after the query's snapshot was taken.
    pub unsafe fn scan_buffers_if_cheaper(&mut self) {
        // SAFETY: the open relation; a backend's shared memory.
        unsafe {
            if self.dirty.is_some() {
                return;
            }
            let nblocks = pg_sys::RelationGetNumberOfBlocksInFork(self.rel, pg_sys::ForkNumber::MAIN_FORKNUM);
            if nblocks as u64 > pg_sys::NBuffers as u64 / 64 {
                let set = dirty_blocks_among(self.rel, 0, pg_sys::NBuffers as u32).into_iter().collect();
                self.dirty = Some(set);
            }
        }
    }

    /// The requests only join (a GpuJoin): each answer's combinations
    /// come back with the tuples they read, as the engine read them from
    /// the blocks ([`Self::probe`]).
    pub fn join_only(&mut self) {
        self.agg = false;
    }

    /// True when the requests aggregate (a GpuPreAgg).
    pub fn aggregates(&self) -> bool {
        self.agg
    }

    /// The attribute numbers of the grouping keys whose values come back
    /// with each request's groups (`HeapProbed::keys`, in this order).
    pub fn key_attnos(&self) -> &[i16] {
        &self.key_attnos
    }

    /// The relation scanned.
    pub fn relation(&self) -> pg_sys::Relation {
        self.rel
    }

    /// Start over (ReScan).
    pub fn rescan(&mut self) {
        self.dirty = None;
        self.carry = None;
        self.active = true;
        // (a rescan opens a new session)
        self.segments.clear();
    }

    /// The block taken from the scan for the next batch, if any (the
    /// path stops: the buffer manager reads it).
    pub fn take_carry(&mut self) -> Option<pg_sys::BlockNumber> {
        self.carry.take()
    }

    /// Forget the session's file handles (a new session: the GPU service
    /// was lost, or the scan finishes elsewhere).
    pub fn forget_session(&mut self) {
        self.segments.clear();
    }

    /// Stop the path: the rest of `source`'s scan reads every block
    /// through the buffer manager (a block taken for the next batch with
    /// the rest).
    pub fn stop(&mut self, source: &mut crate::source::Source) {
        self.active = false;
        self.forget_session();
        source.end_direct(self.take_carry());
    }

    /// What the path did since the last call, as `Counters::direct` holds
    /// it (blocks, refused, changed, buffered, tuples, their bytes).
    pub fn take_counts(&mut self) -> [u64; DIRECT_COUNTS] {
        let (now, was) = (self.counters, std::mem::replace(&mut self.counted, self.counters));
        [
            now.blocks - was.blocks,
            now.refused - was.refused,
            now.changed - was.changed,
            now.buffered - was.buffered,
            now.tuples - was.tuples,
            now.tuple_bytes - was.tuple_bytes,
        ]
    }

    /// The next request's blocks ([`Self::next_batch`]), taken while
    /// `pages` reads only the blocks queued for the buffer manager; None
    /// when those go first (many wait, or the batch had no block the
    /// service may read), or when the scan has no more blocks: the path is
    /// then over and `pages` takes blocks from the scan again.  The time
    /// spent checking the blocks is added to `check_ns`.
    ///
    /// # Safety
    /// Backend, during the scan.
    pub unsafe fn next_request(&mut self, pages: &mut PageReader, check_ns: &mut u64) -> Option<(u32, Vec<u32>)> {
        if pages.queued() >= BATCH_BLOCKS / 8 {
            return None;
        }
        pages.set_queue_only(true);
        let checking = std::time::Instant::now();
        // SAFETY: caller's promise.
        let batch = unsafe { self.next_batch(pages) };
        *check_ns += checking.elapsed().as_nanos() as u64;
        match batch {
            None => {
                self.active = false;
                pages.set_queue_only(false);
                None
            }
            Some((_, blocks)) if blocks.is_empty() => None,
            batch => batch,
        }
    }

    /// Take the next batch of blocks from the scan (`pages`' allocator):
    /// the segment they lie in, the blocks the service may read (as block
    /// numbers within the segment) and, queued on `pages` for the buffer
    /// manager, the rest.  None once the scan has no more blocks.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn next_batch(&mut self, pages: &mut PageReader) -> Option<(u32, Vec<u32>)> {
        let seg_blocks = pg_sys::RELSEG_SIZE;
        let most = pages.direct_batch_blocks(BATCH_BLOCKS);
        let mut taken = Vec::with_capacity(most);
        // SAFETY: the scan is running (caller).
        unsafe {
            if let Some(b) = self.carry.take() {
                taken.push(b);
            }
            while taken.len() < most {
                let Some(b) = pages.take_block() else { break };
                if let Some(&first) = taken.first()
                    && b / seg_blocks != first / seg_blocks
                {
                    self.carry = Some(b);
                    break;
                }
                taken.push(b);
            }
            let &first = taken.first()?;
            let segno = first / seg_blocks;
            let visible: Vec<bool> = taken.iter().map(|&b| self.all_visible(b)).collect();
            let dirty = match &self.dirty {
                Some(set) => taken.iter().map(|b| set.contains(b)).collect(),
                None => dirty_in_shared_buffers(self.rel, &taken, &visible),
            };
            let mut direct = Vec::with_capacity(taken.len());
            let mut rest = Vec::new();
            for (i, &b) in taken.iter().enumerate() {
                if visible[i] && !dirty[i] {
                    direct.push(b % seg_blocks);
                } else {
                    rest.push(b);
                }
            }
            self.counters.buffered += rest.len() as u64;
            pages.queue_blocks(&rest);
            Some((segno, direct))
        }
    }

    /// The visibility map says `blkno` is all-visible.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn all_visible(&mut self, blkno: pg_sys::BlockNumber) -> bool {
        // SAFETY: the open relation; vmbuf is ours (pinned by the call).
        let status = unsafe { pg_sys::visibilitymap_get_status(self.rel, blkno, &mut self.vmbuf) };
        status as u32 & pg_sys::VISIBILITYMAP_ALL_VISIBLE != 0
    }

    /// The session's handle of segment `segno`'s file, opened and handed
    /// over on first use.
    ///
    /// # Safety
    /// Backend, during the scan.
    unsafe fn segment(&mut self, session: &mut dyn JoinSession, segno: u32) -> Result<u32, DeviceError> {
        if let Some((_, h)) = self.segments.get(&segno) {
            return Ok(*h);
        }
        // SAFETY: the open relation's locator; DataDir is the backend's.
        let path = unsafe {
            let rel = crate::pg::compat::relation_path(crate::pg::compat::rel_file(self.rel));
            let dir = std::ffi::CStr::from_ptr(pg_sys::DataDir).to_string_lossy().into_owned();
            let name = if segno == 0 { rel } else { format!("{rel}.{segno}") };
            format!("{dir}/{name}")
        };
        let file = std::fs::File::open(&path)
            .map_err(|e| DeviceError::InvalidRequest(format!("cannot open the heap file \"{path}\": {e}")))?;
        let policy = guc::read_policy();
        let Some((h, access)) = session.open_file(&file, &policy)? else {
            return Err(DeviceError::InvalidRequest("this engine reads no heap files".into()));
        };
        match access {
            FileAccess::CuFile(_) => self.cufile_files += 1,
            FileAccess::Refused(why) => self.refused_why = Some(why),
            FileAccess::Pinned => {}
        }
        self.segments.insert(segno, (file, h));
        Ok(h)
    }

    /// Send segment `segno`'s `blocks` to `session`; afterwards their
    /// visibility map bits are read again.  Ok(Some): the groups (or the
    /// combinations, their outer rows renumbered to the copies in
    /// `self.rows`), with the refused blocks already queued on `pages`;
    /// Ok(None): a bit was cleared meanwhile, every block was queued
    /// instead.  With `keeps_inner` (a RIGHT or FULL depth), a dropped
    /// answer's marks of matched inner rows are undone too (the rows may
    /// have been torn).
    ///
    /// # Safety
    /// Backend, during the scan.
    pub unsafe fn probe(
        &mut self,
        session: &mut dyn JoinSession,
        pages: &mut PageReader,
        segno: u32,
        blocks: &[u32],
        keeps_inner: bool,
    ) -> Result<Option<HeapProbed>, DeviceError> {
        // SAFETY: caller's promise.
        unsafe {
            let file = self.segment(session, segno)?;
            let mut probed = session.probe_heap(file, &self.layout, blocks, self.agg)?;
            let base = segno * pg_sys::RELSEG_SIZE;
            self.answered += 1;
            // the tuples the combinations read, as the service read them
            // from the file: they are the pages' as long as the blocks'
            // bits stay set (read again below)
            let copied = self.agg || self.copy_rows(&mut probed, base, blocks);
            // (a test setting drops every n-th answer as a changed block would)
            let every = guc::DEBUG_DROP_HEAP_DIRECT_ANSWERS.get() as u64;
            let dropped = every > 0 && self.answered.is_multiple_of(every);
            if !copied || dropped || blocks.iter().any(|&b| !self.all_visible(base + b)) {
                if keeps_inner {
                    session.restore_matched()?;
                }
                self.rows.clear();
                let all: Vec<_> = blocks.iter().map(|&b| base + b).collect();
                pages.queue_blocks(&all);
                self.counters.changed += blocks.len() as u64;
                return Ok(None);
            }
            let refused: Vec<_> = probed.fallback.iter().map(|&b| base + b).collect();
            pages.queue_blocks(&refused);
            self.counters.refused += refused.len() as u64;
            self.counters.blocks += (blocks.len() - refused.len()) as u64;
            if !self.agg {
                self.counters.tuples += probed.tuples.rows.len() as u64;
                self.counters.tuple_bytes += probed.tuples.bytes.len() as u64;
            }
            Ok(Some(probed))
        }
    }

    /// Copy the outer tuples of a join-only answer's combinations into
    /// `self.rows` and renumber the combinations' source-0 rows to them.
    /// The engine sends the tuples (`HeapProbed::tuples`) as it read them
    /// from the blocks: row r of the answer is the k-th LP_NORMAL item of
    /// the block whose rows it falls in (the heap kernels' order,
    /// `HeapProbed::counts`), which gives its item pointer.  The caller
    /// reads the blocks' visibility map bits after this: while a bit
    /// stays set the block did not change since the service read it (a
    /// change clears it first, and it cannot be set again while our
    /// snapshot holds the horizon back), so the tuples are the ones the
    /// page holds.  False when the answer's tuples do not fit its
    /// combinations and counts (the answer is then dropped).
    fn copy_rows(&mut self, probed: &mut HeapProbed, base: u32, blocks: &[u32]) -> bool {
        self.rows.clear();
        let combos = &mut probed.combos;
        let t = &probed.tuples;
        if combos.count == 0 {
            return true;
        }
        if probed.counts.len() != blocks.len() || !t.is_consistent() {
            return false;
        }
        // each row's block, by the blocks' tuple counts
        let Ok(places) = pgstrom_runtime::heapscan::row_places(&probed.counts, &t.rows) else { return false };
        // SAFETY: the scan's open relation.
        let oid = unsafe { (*self.rel).rd_id };
        for (j, place) in places.chunks_exact(2).enumerate() {
            let Ok(lineoff) = u16::try_from(t.lineoffs[j]) else { return false };
            let bytes = t.tuple(j);
            let mut tup = pg_sys::HeapTupleData {
                t_len: bytes.len() as u32,
                t_self: crate::source::heap_pages::item_pointer(base + blocks[place[0] as usize], lineoff),
                t_tableOid: oid,
                t_data: bytes.as_ptr() as *mut pg_sys::HeapTupleHeaderData,
            };
            // SAFETY: t_data holds t_len bytes; push only reads (copies) them.
            unsafe { self.rows.push(&mut tup) };
        }
        // source 0 of each combination: its row's copy
        for r in combos.rows[..combos.count].iter_mut() {
            if *r != pgstrom_runtime::join::NULL_ROW {
                match t.rows.binary_search(r) {
                    Ok(i) => *r = i as u32,
                    Err(_) => return false,
                }
            }
        }
        true
    }

    /// Give every block of a failed request to the buffer manager.
    pub fn requeue(&mut self, pages: &mut PageReader, segno: u32, blocks: &[u32]) {
        let base = segno * pg_sys::RELSEG_SIZE;
        let all: Vec<_> = blocks.iter().map(|&b| base + b).collect();
        pages.queue_blocks(&all);
        self.counters.buffered += blocks.len() as u64;
    }

    /// EXPLAIN ANALYZE's `Heap Direct Read` for the counters `c`
    /// ([`DirectCounters`] as an array, summed over the processes).
    pub fn explain_text(c: [u64; DIRECT_COUNTS]) -> String {
        let [blocks, refused, changed, buffered, tuples, tuple_bytes] = c;
        let bytes = blocks * pg_sys::BLCKSZ as u64;
        let mut text = format!(
            "{blocks} blocks ({}) by the GPU service, {} through the buffer manager",
            crate::pg::explain::size_text(bytes),
            buffered + refused + changed
        );
        if refused + changed > 0 {
            text.push_str(&format!(" ({refused} refused by the device, {changed} changed during the read)"));
        }
        if tuples > 0 {
            text.push_str(&format!(
                "; {tuples} tuples ({}) sent back for the rows returned",
                crate::pg::explain::size_text(tuple_bytes)
            ));
        }
        text
    }

    /// Release the visibility map page and the copied rows (EndCustomScan).
    pub fn end(&mut self) {
        self.rows.clear();
        if self.vmbuf != pg_sys::InvalidBuffer as pg_sys::Buffer {
            // SAFETY: a buffer visibilitymap_get_status pinned for us.
            unsafe { pg_sys::ReleaseBuffer(self.vmbuf) };
            self.vmbuf = pg_sys::InvalidBuffer as pg_sys::Buffer;
        }
    }
}

/// The blocks of `rel`'s main fork that buffers `from..to` (descriptor
/// numbers) hold dirty.  Read without the buffer headers' locks: a dirty
/// buffer keeps its tag until it is written (a buffer is re-tagged only
/// once clean), so a buffer holding one of our blocks dirty throughout is
/// always seen; a torn read can only add a block (read through the buffer
/// manager for nothing) or miss one that was written meanwhile.
///
/// # Safety
/// Backend; `rel` open.
pub unsafe fn dirty_blocks_among(rel: pg_sys::Relation, from: u32, to: u32) -> Vec<pg_sys::BlockNumber> {
    let mut out = Vec::new();
    // SAFETY: descriptors below NBuffers, in shared memory; the state word
    // read atomically (volatile), the tag after it.
    unsafe {
        let loc = crate::pg::compat::rel_file(rel);
        for i in from..to.min(pg_sys::NBuffers as u32) {
            if i % 65536 == 0 {
                pgrx::check_for_interrupts!();
            }
            let desc = &raw const (*pg_sys::BufferDescriptors.add(i as usize)).bufferdesc;
            let state = std::ptr::read_volatile(&raw const (*desc).state.value);
            if state & pg_sys::BM_DIRTY == 0 {
                continue;
            }
            let tag = std::ptr::read_volatile(&raw const (*desc).tag);
            if crate::pg::compat::tag_is(&tag, loc) {
                out.push(tag.blockNum);
            }
        }
    }
    out
}

/// For each of `blocks` of `rel` whose `wanted` entry is true: shared
/// buffers hold it with changes not yet written to its file (false for
/// the others).  The blocks are looked up by buffer-mapping partition,
/// each partition's lock taken once for all of its blocks of the batch.
///
/// # Safety
/// Backend; `rel` open.
unsafe fn dirty_in_shared_buffers(rel: pg_sys::Relation, blocks: &[pg_sys::BlockNumber], wanted: &[bool]) -> Vec<bool> {
    let mut dirty = vec![false; blocks.len()];
    // SAFETY: the buffer mapping table is read under its partition's
    // lock, which keeps each buffer's tag while held; the state word is
    // read atomically.
    unsafe {
        let loc = crate::pg::compat::rel_file(rel);
        let tag_of = |blkno| crate::pg::compat::tag_of(loc, blkno);
        // (partition, hash, index into blocks), by partition
        let mut order: Vec<(u32, u32, usize)> = blocks
            .iter()
            .enumerate()
            .filter(|(i, _)| wanted[*i])
            .map(|(i, &b)| {
                let mut tag = tag_of(b);
                let hash = pg_sys::BufTableHashCode(&mut tag);
                (hash % pg_sys::NUM_BUFFER_PARTITIONS, hash, i)
            })
            .collect();
        order.sort_unstable_by_key(|e| e.0);
        for group in order.chunk_by(|a, b| a.0 == b.0) {
            let lock = &raw mut (*pg_sys::MainLWLockArray
                .add((pg_sys::BUFFER_MAPPING_LWLOCK_OFFSET + group[0].0) as usize))
            .lock;
            pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_SHARED);
            for &(_, hash, i) in group {
                let mut tag = tag_of(blocks[i]);
                let id = pg_sys::BufTableLookup(&mut tag, hash);
                dirty[i] = id >= 0 && {
                    let desc = &raw const (*pg_sys::BufferDescriptors.add(id as usize)).bufferdesc;
                    let state = std::ptr::read_volatile(&raw const (*desc).state.value);
                    state & pg_sys::BM_DIRTY != 0
                };
            }
            pg_sys::LWLockRelease(lock);
        }
    }
    dirty
}
