//! The cross-query cache of a GpuJoin's inner relations: whether a
//! node's build may be kept in the GPU service and found again by a later
//! query, the key it is kept under, and the rows kept with it.
//!
//! The service keeps a build (the inner relations' columns and hash
//! tables) and the rows the backends read it from under a key the backend
//! makes; it only compares keys.  The key holds everything the build
//! depends on, so that a key found again names the same rows:
//!
//! - the database, and per depth the relation, its file (relfilenode), its
//!   size in blocks, the inner plan's target list and quals (as plan text
//!   without source positions; a GpuScan's device program too) and the
//!   columns the device programs read;
//! - per depth, the LSN of every visibility-map page of the relation;
//!   for an Arrow_Fdw table instead, each of its files' identity (path,
//!   device, inode, size, modification and status-change times).
//!
//! A build is kept, and a kept one used, only when every heap page of
//! every inner relation is all-visible (checked under the visibility map
//! page's lock, with its LSN).  Every change of a row clears its page's
//! all-visible bit first (an INSERT, UPDATE or DELETE, committed or not,
//! rolled back or not); the bit is set again only by VACUUM, which also
//! moves the map page's LSN (the relation is WAL-logged: temporary and
//! unlogged tables are never cached).  TRUNCATE, VACUUM FULL, CLUSTER and
//! a rewriting ALTER TABLE give the relation a new file.  So a key made
//! now equals a key made at a build only when no row changed in between.
//! And a page all-visible now holds only rows every snapshot sees (VACUUM
//! sets the bit only when no snapshot could still see otherwise), so the
//! kept rows are the rows of the query's snapshot too.  The key is made
//! before the inner scans and again after them; a build is kept only when
//! both are equal.
//!
//! An Arrow_Fdw table's files change only by appends (INSERT, COPY FROM,
//! pg2arrow --append), truncation and replacement, each of which gives a
//! file another size, inode or times; a file being written (or whose
//! writer crashed) has an undo file, and then readers and the writer see
//! different rows in the same bytes, so such a table is never cached; nor
//! is one whose file changed in the last [`ARROW_SETTLED`] (a file system
//! stamps times with a coarse clock: a second write in the tick of the
//! first leaves them as they were, the size aside).
//!
//! Plans that can give other rows for the same relation contents are never
//! cached: an inner plan other than a Seq Scan, an Arrow_Fdw scan or a
//! GpuScan of the table;
//! a target list or qual with a parameter, a subplan, a function that is not immutable or
//! not built in (a user's function can be replaced by another body under
//! the same name and OID); a relation created or given a new file in the
//! current transaction (its writes may not be WAL-logged).

use pgrx::pg_sys;

use crate::source::heap_pages::page_of;

/// Heap blocks one visibility-map page covers (two bits per block).
const HEAPBLOCKS_PER_VM_PAGE: u32 = (pg_sys::BLCKSZ - 24) * 4;
/// Where the map starts on its page (MAXALIGN(SizeOfPageHeaderData)).
const VM_MAP_OFFSET: usize = 24;
/// How long an Arrow file must have been left alone before an inner
/// build read from it is kept or found (as the GPU service's rule for
/// heap extents in its column cache).
pub const ARROW_SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// What became of a node's build and the cache (EXPLAIN ANALYZE `Inner
/// Cache`); kept in the DSM area as a number for a parallel plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum Outcome {
    /// Not decided (the inner relations were not read).
    #[default]
    Unknown = 0,
    Off,
    OwnEngine,
    NoSharedLoad,
    NotSeqScan,
    NotTable,
    NotLogged,
    NotHeap,
    NewFile,
    Unstable,
    NotAllVisible,
    /// Found: the rows and the engine's build.
    Hit,
    /// Found the rows, but the engine's build was gone: loaded again.
    HitLoaded,
    /// Not found; the build is kept or not when loaded.
    Miss,
    Kept,
    Changed,
    Refused,
    /// Not used: the rows of an earlier node of the same query, read from
    /// the same inner plans (gpujoin/exec/query_share.rs).
    SameQuery,
    /// Not kept: the build and its rows are larger than the whole cache
    /// (the rows are not even sent).
    TooBig,
    /// Found, and only the rows' summary taken: the node reads no inner
    /// row on the host unless a fallback needs them (then they are taken
    /// from the cache at that moment).
    HitSummary,
    /// Not used: an Arrow file of an inner relation has an undo file (a
    /// transaction writes it, or its writer crashed).
    ArrowWriting,
    /// Not used: an Arrow file of an inner relation changed a moment ago.
    ArrowUnsettled,
    /// Not used: an Arrow file of an inner relation, or its undo file,
    /// could not be examined (permissions, a damaged undo file).
    ArrowUnreadable,
}

/// Why a node's build is not cached: an [`Outcome`] of the "not used" kind.
pub type NotCached = Outcome;

const OUTCOMES: [Outcome; 23] = [
    Outcome::Unknown,
    Outcome::Off,
    Outcome::OwnEngine,
    Outcome::NoSharedLoad,
    Outcome::NotSeqScan,
    Outcome::NotTable,
    Outcome::NotLogged,
    Outcome::NotHeap,
    Outcome::NewFile,
    Outcome::Unstable,
    Outcome::NotAllVisible,
    Outcome::Hit,
    Outcome::HitLoaded,
    Outcome::Miss,
    Outcome::Kept,
    Outcome::Changed,
    Outcome::Refused,
    Outcome::SameQuery,
    Outcome::TooBig,
    Outcome::HitSummary,
    Outcome::ArrowWriting,
    Outcome::ArrowUnsettled,
    Outcome::ArrowUnreadable,
];

impl Outcome {
    /// Whether a kept build was found (the inner plans do not run).
    pub fn is_hit(self) -> bool {
        matches!(self, Outcome::Hit | Outcome::HitSummary)
    }

    /// The outcome numbered `n` (as kept in the DSM area).
    pub fn from_u32(n: u32) -> Outcome {
        OUTCOMES.get(n as usize).copied().unwrap_or_default()
    }

    /// What EXPLAIN ANALYZE says.
    pub fn text(self) -> &'static str {
        match self {
            Outcome::Unknown => "not consulted",
            Outcome::Off => "not used (pg_strom.inner_cache is off)",
            Outcome::OwnEngine => "not used (the engine is this process's own, not the GPU service)",
            Outcome::NoSharedLoad => "not used (each process loads its own inner relations)",
            Outcome::NotSeqScan => "not used (an inner plan is not a Seq Scan, an Arrow_Fdw scan or a GpuScan)",
            Outcome::NotTable => "not used (an inner relation is not a table or an Arrow_Fdw table)",
            Outcome::NotLogged => "not used (an inner relation is temporary or unlogged)",
            Outcome::NotHeap => "not used (an inner relation is not a heap table)",
            Outcome::NewFile => "not used (an inner relation was created or rewritten in this transaction)",
            Outcome::Unstable => {
                "not used (an inner plan has a parameter, a subplan, or a function that is not immutable and built in)"
            }
            Outcome::NotAllVisible => "not used (a page of an inner relation is not all-visible)",
            Outcome::Hit => "hit",
            Outcome::HitSummary => "hit, the rows left in the service (no grouping key reads them)",
            Outcome::HitLoaded => "hit, loaded into the engine again",
            Outcome::Miss => "miss",
            Outcome::Kept => "miss, kept for later queries",
            Outcome::Changed => "miss, not kept (an inner relation changed during the build)",
            Outcome::Refused => "miss, not kept (the engine did not keep it)",
            Outcome::SameQuery => "not used (the rows of an earlier node of this query, from the same inner plans)",
            Outcome::TooBig => "miss, not kept (larger than the cache)",
            Outcome::ArrowWriting => "not used (an Arrow file of an inner relation is being written)",
            Outcome::ArrowUnsettled => "not used (an Arrow file of an inner relation changed in the last 2 seconds)",
            Outcome::ArrowUnreadable => "not used (an Arrow file of an inner relation could not be examined)",
        }
    }
}

/// What a node's inner relations are, for the cache: the part of the key
/// that the plan fixes, and the relations whose state completes it.
pub struct CachePlan {
    head: Vec<u8>,
    rels: Vec<pg_sys::Relation>,
}

/// The cache plan of a GpuJoin whose inner plans are `children` and whose
/// programs read `columns` (per depth, (attnum, device type)); or why
/// there is none.
///
/// # Safety
/// Live executor state of the node's inner plans.
pub unsafe fn plan(children: &[*mut pg_sys::PlanState], columns: &[Vec<(i16, u16)>]) -> Result<CachePlan, NotCached> {
    let mut head = format!(
        "pg_strom {} protocol {} db {}\n",
        env!("CARGO_PKG_VERSION"),
        pgstrom_runtime::service::PROTOCOL_VERSION,
        // SAFETY: set at backend start.
        unsafe { pg_sys::MyDatabaseId }.to_u32()
    )
    .into_bytes();
    let mut rels = Vec::with_capacity(children.len());
    for (d, &child) in children.iter().enumerate() {
        // SAFETY: a live inner plan state (caller).
        unsafe {
            let plan = (*child).plan;
            // a Seq Scan, an Arrow_Fdw scan (its quals in fdw_exprs, what
            // it read in fdw_private), or a GpuScan (its quals in
            // custom_exprs, its device program in custom_private)
            let (exprs, private, scan_tlist) = match (*plan).type_ {
                pg_sys::NodeTag::T_SeqScan => (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()),
                pg_sys::NodeTag::T_ForeignScan => {
                    // (an Arrow_Fdw table's: checked with its relation below)
                    let f = plan as *mut pg_sys::ForeignScan;
                    (
                        (*f).fdw_exprs as *mut pg_sys::Node,
                        (*f).fdw_private as *mut pg_sys::Node,
                        (*f).fdw_scan_tlist as *mut pg_sys::Node,
                    )
                }
                pg_sys::NodeTag::T_CustomScan
                    if std::ffi::CStr::from_ptr((*(*(plan as *mut pg_sys::CustomScan)).methods).CustomName)
                        == crate::gpuscan::NAME =>
                {
                    let c = plan as *mut pg_sys::CustomScan;
                    (
                        (*c).custom_exprs as *mut pg_sys::Node,
                        (*c).custom_private as *mut pg_sys::Node,
                        (*c).custom_scan_tlist as *mut pg_sys::Node,
                    )
                }
                _ => return Err(Outcome::NotSeqScan),
            };
            if !(*plan).initPlan.is_null() {
                return Err(Outcome::NotSeqScan);
            }
            let rel = (*(child as *mut pg_sys::ScanState)).ss_currentRelation;
            if rel.is_null() {
                return Err(Outcome::NotSeqScan);
            }
            let arrow = is_arrow(rel);
            if (*plan).type_ == pg_sys::NodeTag::T_ForeignScan && !arrow {
                return Err(Outcome::NotSeqScan);
            }
            if !arrow {
                let form = (*rel).rd_rel;
                let kind = (*form).relkind as u8;
                if kind != pg_sys::RELKIND_RELATION && kind != pg_sys::RELKIND_MATVIEW {
                    return Err(Outcome::NotTable);
                }
                if (*form).relpersistence as u8 != pg_sys::RELPERSISTENCE_PERMANENT {
                    return Err(Outcome::NotLogged);
                }
                if (*rel).rd_tableam != pg_sys::GetHeapamTableAmRoutine() {
                    return Err(Outcome::NotHeap);
                }
                if (*rel).rd_createSubid != 0 || crate::pg::compat::rel_new_file_subid(rel) != 0 {
                    return Err(Outcome::NewFile);
                }
            }
            let tlist = (*plan).targetlist as *mut pg_sys::Node;
            let qual = (*plan).qual as *mut pg_sys::Node;
            for n in [tlist, qual, exprs, scan_tlist] {
                if !n.is_null() && (unstable(n) || pg_sys::contain_mutable_functions(n)) {
                    return Err(Outcome::Unstable);
                }
            }
            head.extend_from_slice(
                format!(
                    "depth {} rel {} columns {:?}\ntlist {}\nqual {}\nscan {:?} {} {} {}\n",
                    d + 1,
                    (*rel).rd_id.to_u32(),
                    columns.get(d),
                    node_text(tlist),
                    node_text(qual),
                    (*plan).type_,
                    node_text(exprs),
                    node_text(private),
                    node_text(scan_tlist)
                )
                .as_bytes(),
            );
            rels.push(rel);
        }
    }
    Ok(CachePlan { head, rels })
}

impl CachePlan {
    /// The key of the inner relations as they are now, or why they cannot
    /// be cached now (a page not all-visible).
    ///
    /// # Safety
    /// Backend, while the node's relations are open.
    pub unsafe fn key(&self) -> Result<Vec<u8>, NotCached> {
        let mut key = self.head.clone();
        for &rel in &self.rels {
            // SAFETY: an open relation (caller).
            unsafe {
                if is_arrow(rel) {
                    arrow_state(rel, &mut key)?;
                } else {
                    relation_state(rel, &mut key)?;
                }
            }
        }
        Ok(key)
    }
}

/// Whether `rel` is an Arrow_Fdw table.
///
/// # Safety
/// `rel` is an open relation.
unsafe fn is_arrow(rel: pg_sys::Relation) -> bool {
    // SAFETY: an open relation (caller).
    unsafe {
        (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && crate::arrow_fdw::is_arrow_table((*rel).rd_id)
    }
}

/// Append the identity of each file of Arrow_Fdw table `rel` to `out`
/// (a file a writable table has not made yet as absent); an error when
/// one has an undo file or changed within [`ARROW_SETTLED`], or when it
/// or its undo file cannot be examined (the scan then reports why).
///
/// # Safety
/// `rel` is an open Arrow_Fdw table.
unsafe fn arrow_state(rel: pg_sys::Relation, out: &mut Vec<u8>) -> Result<(), NotCached> {
    // SAFETY: an open relation (caller).
    let opts = crate::arrow_fdw::options::of_table(unsafe { (*rel).rd_id });
    out.extend_from_slice(b"arrow");
    for path in &opts.files {
        match crate::arrow_fdw::append::Undo::read(path) {
            Ok(None) => {}
            Ok(Some(_)) => return Err(Outcome::ArrowWriting),
            Err(_) => return Err(Outcome::ArrowUnreadable),
        }
        match std::fs::metadata(path) {
            Ok(m) => {
                let id = pgstrom_runtime::colcache::FileId::of_metadata(&m);
                if !id.settled(ARROW_SETTLED) {
                    return Err(Outcome::ArrowUnsettled);
                }
                out.extend_from_slice(
                    format!(" {path:?} {} {} {} {} {}", id.dev, id.ino, id.size, id.mtime_ns, id.ctime_ns).as_bytes(),
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.extend_from_slice(format!(" {path:?} absent").as_bytes())
            }
            Err(_) => return Err(Outcome::ArrowUnreadable),
        }
    }
    out.push(b'\n');
    Ok(())
}

/// Append `rel`'s file, size and visibility-map page LSNs to `out`; an
/// error when a page is not all-visible.
///
/// # Safety
/// `rel` is an open heap relation.
unsafe fn relation_state(rel: pg_sys::Relation, out: &mut Vec<u8>) -> Result<(), NotCached> {
    // SAFETY: an open relation (caller); the map buffer is pinned by
    // visibilitymap_get_status and read under its share lock.
    unsafe {
        let nblocks = pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM);
        out.extend_from_slice(
            format!("file {} blocks {nblocks} lsns", crate::pg::compat::rel_file(rel).rel).as_bytes(),
        );
        let mut vmbuf = pg_sys::InvalidBuffer as pg_sys::Buffer;
        let mut result = Ok(());
        let mut blk = 0;
        while blk < nblocks {
            let status = pg_sys::visibilitymap_get_status(rel, blk, &mut vmbuf);
            if status as u32 & pg_sys::VISIBILITYMAP_ALL_VISIBLE == 0
                || vmbuf == pg_sys::InvalidBuffer as pg_sys::Buffer
            {
                result = Err(Outcome::NotAllVisible);
                break;
            }
            let end = (blk / HEAPBLOCKS_PER_VM_PAGE + 1).saturating_mul(HEAPBLOCKS_PER_VM_PAGE).min(nblocks);
            pg_sys::LockBuffer(vmbuf, pg_sys::BUFFER_LOCK_SHARE as i32);
            let page = page_of(vmbuf);
            let lsn = *(page as *const [u8; 8]);
            let all = (blk..end).all(|b| {
                let i = (b % HEAPBLOCKS_PER_VM_PAGE) as usize;
                *page.add(VM_MAP_OFFSET + i / 4) >> ((i % 4) * 2) & 1 != 0
            });
            pg_sys::LockBuffer(vmbuf, pg_sys::BUFFER_LOCK_UNLOCK as i32);
            if !all {
                result = Err(Outcome::NotAllVisible);
                break;
            }
            out.push(b' ');
            out.extend_from_slice(&lsn);
            blk = end;
        }
        if vmbuf != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(vmbuf);
        }
        out.push(b'\n');
        result
    }
}

/// The plan text of `node` without source positions (the same qual in two
/// queries stands at different places of their texts).
///
/// # Safety
/// `node` is NULL or a valid node tree.
unsafe fn node_text(node: *mut pg_sys::Node) -> String {
    if node.is_null() {
        return String::new();
    }
    // SAFETY: a valid node tree (caller); nodeToString pallocs its text.
    let text = unsafe {
        let s = pg_sys::nodeToString(node as *const std::ffi::c_void);
        let t = std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned();
        pg_sys::pfree(s.cast());
        t
    };
    strip_locations(&text)
}

/// `text` without its `:location N` fields.
fn strip_locations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" :location ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " :location ".len()..];
        let n = after.find(|c: char| c != '-' && !c.is_ascii_digit()).unwrap_or(after.len());
        rest = &after[n..];
    }
    out.push_str(rest);
    out
}

/// Whether `node` holds a parameter, a subplan or sublink, a sequence's
/// next value, or a function that is not built in.
///
/// # Safety
/// `node` is a valid expression tree.
unsafe fn unstable(node: *mut pg_sys::Node) -> bool {
    #[pgrx::pg_guard]
    unsafe extern "C-unwind" fn not_builtin(func: pg_sys::Oid, _ctx: *mut std::ffi::c_void) -> bool {
        func.to_u32() >= pg_sys::FirstNormalObjectId
    }
    #[pgrx::pg_guard]
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        if node.is_null() {
            return false;
        }
        // SAFETY: expression_tree_walker hands us valid nodes.
        unsafe {
            match (*node).type_ {
                pg_sys::NodeTag::T_Param
                | pg_sys::NodeTag::T_SubPlan
                | pg_sys::NodeTag::T_AlternativeSubPlan
                | pg_sys::NodeTag::T_SubLink
                | pg_sys::NodeTag::T_NextValueExpr => return true,
                _ => {}
            }
            if pg_sys::check_functions_in_node(node, Some(not_builtin), ctx) {
                return true;
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    // SAFETY: valid tree (caller).
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// The rows kept with a build: per depth, the parts as the processes
/// published them (the minimal tuples, MAXALIGNed, and the same rows'
/// columns as the programs read them), and the ranges of the integer key
/// columns (what an Arrow outer scan skips record batches by, so that a
/// hit need not make the columns to find them).  Encoded as a summary
/// (magic, the summary's own length in bytes, the number of depths, parts
/// per depth, then per part its rows, tuple bytes and column bytes, then
/// the ranges: magic, their number, and room for [`MAX_RANGES`] of them,
/// per range the depth, the column among the depth's, 1 when it has a
/// value, low and high), then the parts, each piece starting 8-aligned.
/// The GPU service sends the summary alone to a process that will not
/// read the rows (`Engine::join_cache_summary`: the second word says how
/// long it is).  Written once, into one buffer of the size said up
/// front: a build of millions of rows is hundreds of MB, and every copy of
/// it (and every page of memory it touches first) is paid by the loading
/// process.
pub struct KeptRows {
    /// The summary's words (filled in by [`Self::encode`]), then the parts.
    out: Vec<u8>,
    head_len: usize,
    /// Per depth, per part: (rows, tuple bytes, column bytes).
    depths: Vec<Vec<[u64; 3]>>,
}

/// A key column's range kept with a build: (depth, the column among the
/// depth's inner columns, (min, max) or None when it has no non-NULL
/// value).
pub type KeptRange = (usize, usize, Option<(i64, i64)>);

/// The header word of kept rows.
const ROWS_MAGIC: u64 = u64::from_be_bytes(*b"pgstrom2");
/// The word before the ranges.
const RANGES_MAGIC: u64 = u64::from_be_bytes(*b"pgsrange");
/// Ranges the summary has room for.
const MAX_RANGES: usize = crate::gpujoin::shared_build::MAX_RANGES;

impl KeptRows {
    /// No rows yet, for `ndepths` depths, with room for `nparts` parts of
    /// `bytes` in all (their tuples and columns, each padded to 8 bytes,
    /// as [`Self::part_bytes`] counts them).  More parts or bytes still
    /// fit, at the price of a copy.
    pub fn with_capacity(ndepths: usize, nparts: usize, bytes: usize) -> KeptRows {
        let head_len = Self::head_len(ndepths, nparts);
        let mut out = Vec::with_capacity(head_len + bytes);
        out.resize(head_len, 0);
        KeptRows { out, head_len, depths: vec![Vec::new(); ndepths] }
    }

    fn head_len(ndepths: usize, nparts: usize) -> usize {
        (3 + ndepths + 3 * nparts + 2 + 5 * MAX_RANGES) * 8
    }

    /// What a part of `tuples` and `columns` bytes takes.
    pub fn part_bytes(tuples: usize, columns: usize) -> usize {
        tuples.next_multiple_of(8) + columns.next_multiple_of(8)
    }

    fn pad(&mut self) {
        self.out.resize(self.out.len().next_multiple_of(8), 0);
    }

    /// Add a part of depth `d`: `nrows` tuples (`tuples`, back to back)
    /// and their columns.
    pub fn add(&mut self, d: usize, nrows: u64, tuples: &[u8], columns: &[u8]) {
        self.add_tuples(d, nrows, std::iter::once(tuples), columns);
    }

    /// Add a part of depth `d` whose tuples come one by one (each padded
    /// to MAXALIGN, as they lie in a part).
    pub fn add_tuples<'a>(&mut self, d: usize, nrows: u64, tuples: impl Iterator<Item = &'a [u8]>, columns: &[u8]) {
        let at = self.out.len();
        for t in tuples {
            self.out.extend_from_slice(t);
            let len = self.out.len() - at;
            self.out.resize(at + crate::gpujoin::shared_build::max_align(len), 0);
        }
        let ntup = self.out.len() - at;
        self.pad();
        self.out.extend_from_slice(columns);
        self.pad();
        self.depths[d].push([nrows, ntup as u64, columns.len() as u64]);
    }

    /// The bytes to keep, with the key columns' `ranges` (at most
    /// [`MAX_RANGES`]; more are dropped).
    pub fn encode(mut self, ranges: &[KeptRange]) -> Vec<u8> {
        let nparts = self.depths.iter().map(Vec::len).sum();
        let head_len = Self::head_len(self.depths.len(), nparts);
        let mut head: Vec<u64> = vec![ROWS_MAGIC, head_len as u64, self.depths.len() as u64];
        head.extend(self.depths.iter().map(|p| p.len() as u64));
        head.extend(self.depths.iter().flatten().flatten());
        let ranges = &ranges[..ranges.len().min(MAX_RANGES)];
        head.extend([RANGES_MAGIC, ranges.len() as u64]);
        for &(d, k, range) in ranges {
            let (lo, hi) = range.unwrap_or((0, 0));
            head.extend([d as u64, k as u64, range.is_some() as u64, lo as u64, hi as u64]);
        }
        let mut head: Vec<u8> = head.iter().flat_map(|w| w.to_ne_bytes()).collect();
        head.resize(head_len, 0);
        if head_len == self.head_len {
            self.out[..head_len].copy_from_slice(&head);
        } else {
            // (more parts than room was made for)
            self.out.splice(..self.head_len, head);
        }
        self.out
    }
}

/// A part of kept rows: its rows, their minimal tuples and their columns.
pub type KeptPart<'a> = (u64, &'a [u8], &'a [u8]);

/// The parts of kept rows `bytes` (as [`KeptRows::encode`] made them), per
/// depth: (rows, tuples, columns); None when the bytes are not such rows of
/// `ndepths` depths.
pub fn decode_rows(bytes: &[u8], ndepths: usize) -> Option<Vec<Vec<KeptPart<'_>>>> {
    let (parts, _) = decode_summary(bytes, ndepths)?;
    let mut at = pgstrom_runtime::join::summary_len(bytes)?;
    let mut piece = |len: usize| -> Option<&[u8]> {
        let p = bytes.get(at..at.checked_add(len)?)?;
        at = (at + len).next_multiple_of(8);
        Some(p)
    };
    parts
        .into_iter()
        .map(|parts| {
            parts
                .into_iter()
                .map(|(nrows, ntup, ncol)| {
                    // (the tuples are walked, and their lengths checked, by
                    // the readers: shared_build::for_each_tuple)
                    let tuples = piece(ntup)?;
                    let columns = piece(ncol)?;
                    Some((nrows, tuples, columns))
                })
                .collect()
        })
        .collect()
}

/// The rows of each depth of kept rows `bytes`, from their summary alone
/// (the rows need not follow it); None when the bytes are not such rows of
/// `ndepths` depths.
pub fn decode_counts(bytes: &[u8], ndepths: usize) -> Option<Vec<u64>> {
    let (parts, _) = decode_summary(bytes, ndepths)?;
    Some(parts.iter().map(|p| p.iter().map(|&(n, _, _)| n).sum()).collect())
}

/// The key columns' ranges kept with rows `bytes` (their summary suffices);
/// None when the bytes are not such rows of `ndepths` depths.
pub fn decode_ranges(bytes: &[u8], ndepths: usize) -> Option<Vec<KeptRange>> {
    decode_summary(bytes, ndepths).map(|(_, ranges)| ranges)
}

/// Per depth, per part: (rows, tuple bytes, column bytes); and the ranges.
#[allow(clippy::type_complexity)]
fn decode_summary(bytes: &[u8], ndepths: usize) -> Option<(Vec<Vec<(u64, usize, usize)>>, Vec<KeptRange>)> {
    let len = pgstrom_runtime::join::summary_len(bytes)?;
    let head = &bytes[..len];
    let word = |i: usize| -> Option<u64> {
        let at = i.checked_mul(8)?;
        Some(u64::from_ne_bytes(head.get(at..at.checked_add(8)?)?.try_into().ok()?))
    };
    if word(0)? != ROWS_MAGIC || word(2)? != ndepths as u64 {
        return None;
    }
    let counts: Vec<usize> =
        (0..ndepths).map(|d| word(3 + d).and_then(|n| usize::try_from(n).ok())).collect::<Option<_>>()?;
    let nparts = counts.iter().try_fold(0usize, |a, &n| a.checked_add(n))?;
    if nparts > len / 24 {
        return None;
    }
    let mut w = 3 + ndepths;
    let mut parts = Vec::with_capacity(ndepths);
    for &n in &counts {
        let mut depth = Vec::with_capacity(n);
        for _ in 0..n {
            depth.push((word(w)?, usize::try_from(word(w + 1)?).ok()?, usize::try_from(word(w + 2)?).ok()?));
            w += 3;
        }
        parts.push(depth);
    }
    if word(w)? != RANGES_MAGIC {
        return None;
    }
    let n = usize::try_from(word(w + 1)?).ok()?;
    if n > MAX_RANGES {
        return None;
    }
    let ranges = (0..n)
        .map(|i| {
            let r = w + 2 + i * 5;
            let (d, k, has) = (word(r)? as usize, word(r + 1)? as usize, word(r + 2)? != 0);
            let range = has.then_some((word(r + 3)? as i64, word(r + 4)? as i64));
            Some((d, k, range))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((parts, ranges))
}
