//! Joins on an engine (device/kernels/join.cu): the request, the session
//! that keeps the inner relations' hash tables in the engine's memory, and
//! the step loop both engines share.
//!
//! A join runs per chunk of scanned (outer) rows: the scan quals make the
//! combinations of depth 0, each depth d = 1..N probes its inner relation
//! and makes the combinations of depth d.  A combination is one row index
//! per source (0 = the chunk, d = inner relation d), [`NULL_ROW`] for the
//! NULL-extended side of an outer join.  Programs address the columns of
//! every source by one index: the chunk's columns first, then those of
//! depth 1, 2, ...
//!
//! Output buffers start at a guess and grow: a step that produced more
//! combinations than fit is run again with room for all of them (steps are
//! idempotent), so a skewed key that multiplies rows never overflows.

use crate::agg::{AggGroups, AggSpec, DevAggOpRepr};
use crate::catalog::type_info;
use crate::engine::{ColumnData, DevDatumRepr, ParamValue, Pending, check_program, eval_error, validate_columns};
use crate::error::DeviceError;
use crate::program::{DEVERR_INVALID_PROGRAM, Program};

/// The row index of a NULL-extended source (PGSTROM_NULL_ROW).
pub const NULL_ROW: u32 = u32::MAX;
/// Most sources of a combination: the scan and 8 depths (PGSTROM_MAX_SOURCES).
pub const MAX_SOURCES: usize = 9;
/// Most depths of one join.
pub const MAX_DEPTHS: usize = MAX_SOURCES - 1;
/// Most hash keys of one depth (PGSTROM_MAX_JOIN_KEYS).
pub const MAX_KEYS: usize = 8;

/// Join type of a depth, numbered as PostgreSQL 18's JoinType (the
/// extension maps other versions' numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum JoinKind {
    /// INNER JOIN
    Inner = 0,
    /// LEFT OUTER JOIN (the scanned side is preserved)
    Left = 1,
    /// FULL OUTER JOIN
    Full = 2,
    /// RIGHT OUTER JOIN (the inner side is preserved)
    Right = 3,
    /// EXISTS / IN
    Semi = 4,
    /// NOT EXISTS
    Anti = 5,
    /// EXISTS / IN with the scanned side probing: the inner rows some
    /// scanned row matched, each once, after the last chunk
    RightSemi = 6,
    /// NOT EXISTS with the scanned side probing: the inner rows no
    /// scanned row matched, after the last chunk
    RightAnti = 7,
}

impl JoinKind {
    /// From its number (PostgreSQL 18's JoinType).
    pub fn from_pg(v: u32) -> Option<JoinKind> {
        Some(match v {
            0 => JoinKind::Inner,
            1 => JoinKind::Left,
            2 => JoinKind::Full,
            3 => JoinKind::Right,
            4 => JoinKind::Semi,
            5 => JoinKind::Anti,
            6 => JoinKind::RightSemi,
            7 => JoinKind::RightAnti,
            _ => return None,
        })
    }

    /// What EXPLAIN prints before "Join".
    pub fn label(self) -> &'static str {
        match self {
            JoinKind::Inner => "Inner",
            JoinKind::Left => "Left",
            JoinKind::Full => "Full",
            JoinKind::Right => "Right",
            JoinKind::Semi => "Semi",
            JoinKind::Anti => "Anti",
            JoinKind::RightSemi => "Right Semi",
            JoinKind::RightAnti => "Right Anti",
        }
    }

    /// True when the depth marks the inner rows that matched, and returns
    /// inner rows by those marks after the last chunk (RIGHT, FULL: the
    /// unmatched ones, NULL-extended; RIGHT SEMI the matched ones, RIGHT
    /// ANTI the unmatched ones).
    pub fn keeps_inner(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full | JoinKind::RightSemi | JoinKind::RightAnti)
    }

    /// True when a probe returns no combination (RIGHT SEMI, RIGHT ANTI:
    /// their rows come after the last chunk).
    pub fn only_marks(self) -> bool {
        matches!(self, JoinKind::RightSemi | JoinKind::RightAnti)
    }

    /// True when the combination keeps no inner row (SEMI, ANTI).
    pub fn drops_inner(self) -> bool {
        matches!(self, JoinKind::Semi | JoinKind::Anti)
    }
}

/// One depth of a join request.
#[derive(Debug, Clone)]
pub struct JoinDepthSpec<'a> {
    /// Join type.
    pub kind: JoinKind,
    /// Hash keys evaluated at a combination of the earlier sources; empty
    /// for a nested loop.
    pub outer_keys: Vec<Program>,
    /// The matching keys evaluated at an inner row (same count).
    pub inner_keys: Vec<Program>,
    /// Every join qual (hash clauses first), or None for "always true".
    pub qual: Option<Program>,
    /// The inner relation's columns, as many rows each as `ninner`.
    pub inner: Vec<ColumnData<'a>>,
    /// Rows of the inner relation.
    pub ninner: u32,
}

/// A join request: everything but the scanned chunks.
#[derive(Debug, Clone)]
pub struct JoinSpec<'a> {
    /// The scan quals (over the chunk's columns), or None.
    pub scan_qual: Option<Program>,
    /// Device types of the chunk's columns (source 0), in column order.
    pub outer_types: Vec<u16>,
    /// Depth 1..N.
    pub depths: Vec<JoinDepthSpec<'a>>,
    /// Parameter values shared by every program.
    pub params: Vec<ParamValue>,
    /// GROUP BY over the final combinations (GpuPreAgg), or None: the
    /// combinations themselves are the result.  A join may have no depth
    /// at all: a scan (GpuPreAgg's over a table; GpuScan's over a
    /// gstore_fdw table's copy, whose result is the rows that pass).
    pub agg: Option<AggSpec>,
}

/// Combinations a step produced, stored by source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Combos {
    /// Sources per combination.
    pub nsources: usize,
    /// Number of combinations.
    pub count: usize,
    /// rows[s * count + k]: source s of combination k.
    pub rows: Vec<u32>,
    /// Combinations after the scan quals and after each depth.
    pub stage_counts: Vec<u64>,
}

impl Combos {
    /// Source `s` of combination `k` ([`NULL_ROW`] when NULL-extended).
    pub fn get(&self, s: usize, k: usize) -> u32 {
        self.rows[s * self.count + k]
    }
}

/// A join with its inner relations loaded into an engine.
pub trait JoinSession {
    /// Join one chunk: `outer` columns of `nrows` rows, in the types given
    /// at open.  With `selection`, the scan quals were applied elsewhere
    /// (the CPU path) and these rows passed them.
    fn probe(&mut self, outer: &[ColumnData<'_>], nrows: u32, selection: Option<&[u32]>)
    -> Result<Combos, DeviceError>;

    /// After the last chunk: the inner rows of RIGHT and FULL depths that
    /// matched nothing, NULL-extended and joined through the later depths.
    fn unmatched(&mut self) -> Result<Combos, DeviceError>;

    /// Forget which inner rows matched (a rescan).
    fn reset_matched(&mut self) -> Result<(), DeviceError>;

    /// Remember which inner rows of RIGHT and FULL depths matched so far,
    /// for [`Self::restore_matched`]: the GPU service calls it before each
    /// request of the heap direct path, whose answer the backend may drop
    /// (a block changed while it was read: its rows may be torn) and read
    /// the rows again, so that such rows never mark an inner row matched.
    /// Nothing to do for a session without such depths.
    fn save_matched(&mut self) -> Result<(), DeviceError>;

    /// Back to the matched inner rows [`Self::save_matched`] remembered
    /// last (before any save: none matched; nothing to do without RIGHT
    /// or FULL depths).
    fn restore_matched(&mut self) -> Result<(), DeviceError>;

    /// Which inner rows of each depth matched so far, one bit per inner
    /// row (bit `r % 64` of word `r / 64`; an empty list for a depth that
    /// keeps no flags): a parallel join's processes each probe a share
    /// of the outer rows, and one of them returns the unmatched rows of
    /// all (`merge_matched`).
    fn matched_bits(&mut self) -> Result<Vec<Vec<u64>>, DeviceError>;

    /// Mark matched every inner row whose bit is set in `bits` (as
    /// [`Self::matched_bits`] returns them: other processes' matches),
    /// besides those this session matched.
    fn merge_matched(&mut self, bits: &[Vec<u64>]) -> Result<(), DeviceError>;

    /// Bytes of inner data (columns and hash tables) the engine holds.
    fn inner_bytes(&self) -> usize;

    /// As [`Self::probe`], then the combinations grouped and aggregated
    /// by the request's [`AggSpec`] on the engine.
    fn probe_agg(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<AggGroups, DeviceError>;

    /// As [`Self::unmatched`], aggregated.
    fn unmatched_agg(&mut self) -> Result<AggGroups, DeviceError>;

    /// Begin [`Self::probe`] (`agg` false) or [`Self::probe_agg`]: the
    /// request goes to the engine and `outer`'s buffers are free again
    /// when this returns; the answer comes from [`Self::probe_end`], so
    /// the host can read the next chunk meanwhile.  A session in this
    /// process joins at once.
    fn probe_begin(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
        agg: bool,
    ) -> Pending<Probed> {
        Pending::Done(if agg {
            self.probe_agg(outer, nrows, selection).map(Probed::Groups)
        } else {
            self.probe(outer, nrows, selection).map(Probed::Combos)
        })
    }

    /// The answer to [`Self::probe_begin`].
    fn probe_end(&mut self, pending: Pending<Probed>) -> Result<Probed, DeviceError> {
        match pending {
            Pending::Done(r) => r,
            Pending::Sent(_) => Err(DeviceError::InvalidRequest("this session has no requests under way".into())),
        }
    }

    /// Let the engine read outer columns from `file` itself, by the
    /// storage path `policy` picks: a handle for
    /// [`crate::engine::FileSlice::file`], valid for this session, and how
    /// the file will be read; or None when the engine takes only columns
    /// in memory (the default).  The GPU service keeps what it reads in
    /// device memory for later queries.
    fn open_file(
        &mut self,
        file: &std::fs::File,
        policy: &crate::fileread::Policy,
    ) -> Result<Option<(u32, crate::fileread::FileAccess)>, DeviceError> {
        let _ = (file, policy);
        Ok(None)
    }

    /// The heap direct path: read `blocks` (numbers in `file`, a segment
    /// of a heap table opened with [`Self::open_file`]) in the engine,
    /// take their tuples apart by `layout`, and join and aggregate them
    /// as [`Self::probe_agg`] does (`agg`), or only join them as
    /// [`Self::probe`] does, with each block's tuple count; the blocks the
    /// engine refused are returned for the backend to read through the
    /// buffer manager.
    fn probe_heap(
        &mut self,
        file: u32,
        layout: &crate::heapscan::HeapLayout,
        blocks: &[u32],
        agg: bool,
    ) -> Result<crate::heapscan::HeapProbed, DeviceError> {
        let _ = (file, layout, blocks, agg);
        Err(DeviceError::InvalidRequest("this engine reads no heap files".into()))
    }

    /// The bytes the engine read from this session's files, by storage
    /// path (None: it reads none).
    fn file_stats(&mut self) -> Result<Option<crate::fileread::ReadStats>, DeviceError> {
        Ok(None)
    }

    /// The time the engine worked for this session since the last time
    /// asked, by phase ([`crate::clock`]); zero for an engine that keeps
    /// no clock.
    fn take_clock(&mut self) -> Result<crate::clock::DeviceClock, DeviceError> {
        Ok(crate::clock::DeviceClock::default())
    }

    /// Bring the engine's copy of a GPU store table up to date by `batch`
    /// (devstore.rs): where the copy stands after it, or None when the
    /// engine keeps no copies (the default: the backend's own CPU engine
    /// reads the backend's replay).
    fn store_sync(
        &mut self,
        batch: &crate::devstore::StoreSync<'_>,
    ) -> Result<Option<crate::devstore::StoreState>, DeviceError> {
        let _ = batch;
        Ok(None)
    }

    /// The chunks probed from now on are rows of a GPU store table
    /// (`Some`), read through the view they carry, or ordinary chunks
    /// (`None`).
    fn set_store_rows(&mut self, rows: Option<crate::devstore::StoreRows>) -> Result<(), DeviceError>;
}

/// What a probe returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Probed {
    /// The combinations (a join).
    Combos(Combos),
    /// The combinations grouped and aggregated (a join with an aggregation).
    Groups(AggGroups),
}

/// The C layout of DevProgramRef (join.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevProgramRefRepr {
    pub code: u64,
    pub ninstrs: u32,
    pub result_type: u32,
    pub data: u64,
}

/// The C layout of DevJoinDepth (join.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevJoinDepthRepr {
    pub kind: u32,
    pub nkeys: u32,
    pub ninner: u32,
    pub nbuckets: u32,
    pub qual: DevProgramRefRepr,
    pub keys: [DevProgramRefRepr; MAX_KEYS],
    pub buckets: u64,
    pub next: u64,
    pub hashes: u64,
    pub matched: u64,
}

/// Check a join request.  Returns the number of columns of every source.
pub fn validate_spec(spec: &JoinSpec<'_>) -> Result<usize, DeviceError> {
    let inner_cols: Vec<usize> = spec.depths.iter().map(|d| d.inner.len()).collect();
    // (row counts first: the columns are checked against them)
    let ncols = validate_programs(spec, &inner_cols)?;
    for d in &spec.depths {
        validate_columns(&d.inner, d.ninner)?;
    }
    Ok(ncols)
}

/// Check a request that attaches to a shared build ([`SharedBuilds`]):
/// its depths carry no columns; the build has `inner_cols` columns and
/// `ninner` rows per depth.  Returns the number of columns of every source.
pub(crate) fn validate_attach(spec: &JoinSpec<'_>, inner_cols: &[usize], ninner: &[u32]) -> Result<usize, DeviceError> {
    let same = spec.depths.len() == ninner.len()
        && spec.depths.iter().zip(ninner).all(|(d, &n)| d.ninner == n && d.inner.is_empty());
    if !same {
        return Err(DeviceError::InvalidRequest("a shared join build differs from the request".into()));
    }
    validate_programs(spec, inner_cols)
}

/// Check a request's programs and types, with `inner_cols` columns per depth.
fn validate_programs(spec: &JoinSpec<'_>, inner_cols: &[usize]) -> Result<usize, DeviceError> {
    let bad = |m: String| Err(DeviceError::InvalidRequest(m));
    if spec.depths.len() > MAX_DEPTHS {
        return bad(format!("a join has 0 to {MAX_DEPTHS} depths, not {}", spec.depths.len()));
    }
    let ncols = spec.outer_types.len() + inner_cols.iter().sum::<usize>();
    let mut programs: Vec<&Program> = spec.scan_qual.iter().collect();
    for (i, d) in spec.depths.iter().enumerate() {
        if d.outer_keys.len() != d.inner_keys.len() || d.outer_keys.len() > MAX_KEYS {
            return bad(format!(
                "depth {} has {} outer and {} inner keys",
                i + 1,
                d.outer_keys.len(),
                d.inner_keys.len()
            ));
        }
        if d.ninner == NULL_ROW {
            return bad(format!("depth {} has too many rows", i + 1));
        }
        programs.extend(d.outer_keys.iter().chain(&d.inner_keys).chain(&d.qual));
    }
    for p in programs {
        check_program(p, ncols, spec.params.len())?;
    }
    for t in &spec.outer_types {
        if type_info(*t).is_none() {
            return bad(format!("unknown device type {t}"));
        }
    }
    if let Some(agg) = &spec.agg {
        agg.validate(ncols, spec.params.len())?;
    }
    Ok(ncols)
}

/// What a join request is, but for its inner rows: two sessions of one
/// query (the processes of a parallel plan) have the same fingerprint.
pub(crate) fn fingerprint(spec: &JoinSpec<'_>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}|{:?}|{:?}|{:?}", spec.scan_qual, spec.outer_types, spec.params, spec.agg).hash(&mut h);
    for d in &spec.depths {
        format!("{:?}|{:?}|{:?}|{:?}|{}", d.kind, d.outer_keys, d.inner_keys, d.qual, d.ninner).hash(&mut h);
    }
    h.finish()
}

/// The inner relations an engine built for one session and keeps for the
/// other sessions of the same query ([`crate::engine::Engine::join_open_shared`]
/// and [`crate::engine::Engine::join_attach`]): by the query's key and the
/// request's [`fingerprint`], while a session holds the build.  A build
/// no session holds any more is gone; an attach then finds nothing and
/// the caller loads its own.
///
/// It also keeps builds across queries ([`crate::engine::Engine::join_cache_keep`]):
/// by a key the caller made (the inner relations' identity and state), with
/// the rows the caller gave, the most recently used first, up to
/// [`CACHE_MAX_ENTRIES`] builds and [`CACHE_MAX_BYTES`] bytes.  The engine
/// never judges a key: the backend's key says which relation contents the
/// build holds, and a changed relation makes another key.
pub(crate) struct SharedBuilds<T> {
    builds: std::sync::Mutex<Vec<(u64, u64, std::sync::Weak<T>)>>,
    cache: std::sync::Mutex<Vec<Cached<T>>>,
}

/// Most builds the cross-query cache keeps.
pub const CACHE_MAX_ENTRIES: usize = 32;
/// Most bytes (the builds' and their rows') the cross-query cache keeps.
pub const CACHE_MAX_BYTES: usize = 1 << 30;

/// True when a build and its rows, `bytes` in all (the build, the rows
/// and the key), fit in the cross-query cache at all.  The backend asks
/// before it copies and sends the rows of a build that could not be kept.
pub fn cache_fits(bytes: usize) -> bool {
    bytes <= CACHE_MAX_BYTES
}

/// The length of the summary at the start of kept rows `rows`
/// ([`crate::engine::Engine::join_cache_summary`]): their second 8-byte
/// word; None when it is missing or larger than the rows (the engine then
/// sends them all).
pub fn summary_len(rows: &[u8]) -> Option<usize> {
    let n = usize::try_from(u64::from_ne_bytes(rows.get(8..16)?.try_into().ok()?)).ok()?;
    (n <= rows.len()).then_some(n)
}

/// A build kept across queries.
struct Cached<T> {
    key: Vec<u8>,
    fingerprint: u64,
    build: std::sync::Arc<T>,
    rows: std::sync::Arc<Vec<u8>>,
    bytes: usize,
}

impl<T> SharedBuilds<T> {
    /// None kept.
    pub(crate) const fn new() -> SharedBuilds<T> {
        SharedBuilds { builds: std::sync::Mutex::new(Vec::new()), cache: std::sync::Mutex::new(Vec::new()) }
    }

    /// Keep the build a session holds under share key `share` for requests
    /// like `spec` across queries, under `key`, with `rows` (the caller's
    /// copy of the inner rows); `bytes` is the build's size.  False when
    /// no session holds such a build, or it is too big to keep.
    pub(crate) fn cache_keep(&self, share: u64, spec: &JoinSpec<'_>, key: &[u8], rows: Vec<u8>, bytes: usize) -> bool {
        let Some(build) = self.find(share, spec) else { return false };
        let bytes = bytes + rows.len() + key.len();
        if !cache_fits(bytes) {
            return false;
        }
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        c.retain(|e| e.key != key);
        c.insert(
            0,
            Cached { key: key.to_vec(), fingerprint: fingerprint(spec), build, rows: std::sync::Arc::new(rows), bytes },
        );
        let mut total = 0;
        let mut n = 0;
        for e in c.iter() {
            if n == CACHE_MAX_ENTRIES || total + e.bytes > CACHE_MAX_BYTES {
                break;
            }
            total += e.bytes;
            n += 1;
        }
        c.truncate(n);
        true
    }

    /// The rows kept with the build under `key`, which becomes the most
    /// recently used.
    pub(crate) fn cache_rows(&self, key: &[u8]) -> Option<std::sync::Arc<Vec<u8>>> {
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let i = c.iter().position(|e| e.key == key)?;
        let e = c.remove(i);
        let rows = e.rows.clone();
        c.insert(0, e);
        Some(rows)
    }

    /// The build kept under `key` for requests like `spec`, kept from now
    /// on also under share key `share` for the query's other sessions.
    pub(crate) fn cache_find(&self, key: &[u8], share: u64, spec: &JoinSpec<'_>) -> Option<std::sync::Arc<T>> {
        let fp = fingerprint(spec);
        let build = {
            let c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            c.iter().find(|e| e.key == key && e.fingerprint == fp)?.build.clone()
        };
        self.keep(share, spec, &build);
        Some(build)
    }

    /// Forget every build kept across queries (memory ran short); those
    /// that sessions hold live on until the sessions end.
    pub(crate) fn cache_clear(&self) {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Keep `build` under `key` for requests like `spec` (the newest build
    /// of a key wins).
    pub(crate) fn keep(&self, key: u64, spec: &JoinSpec<'_>, build: &std::sync::Arc<T>) {
        let fp = fingerprint(spec);
        let mut b = self.builds.lock().unwrap_or_else(|p| p.into_inner());
        b.retain(|(k, _, w)| *k != key && w.strong_count() > 0);
        b.push((key, fp, std::sync::Arc::downgrade(build)));
    }

    /// The build kept under `key` for a request like `spec`, if a session
    /// still holds it.
    pub(crate) fn find(&self, key: u64, spec: &JoinSpec<'_>) -> Option<std::sync::Arc<T>> {
        let fp = fingerprint(spec);
        let b = self.builds.lock().unwrap_or_else(|p| p.into_inner());
        b.iter().find(|(k, f, _)| *k == key && *f == fp).and_then(|(_, _, w)| w.upgrade())
    }
}

/// Check a chunk against the types given at open.
pub(crate) fn validate_chunk(
    outer_types: &[u16],
    outer: &[ColumnData<'_>],
    nrows: u32,
    selection: Option<&[u32]>,
    holds: crate::engine::Holds,
) -> Result<(), DeviceError> {
    if outer.len() != outer_types.len() || outer.iter().zip(outer_types).any(|(c, t)| c.type_id != *t) {
        return Err(DeviceError::InvalidRequest("chunk columns differ from the join's outer columns".into()));
    }
    if nrows == NULL_ROW {
        return Err(DeviceError::InvalidRequest("chunk has too many rows".into()));
    }
    crate::engine::validate_columns_in(outer, nrows, holds)?;
    if let Some(sel) = selection
        && sel.iter().any(|&r| r >= nrows)
    {
        return Err(DeviceError::InvalidRequest("selected row beyond the chunk".into()));
    }
    Ok(())
}

/// Bucket heads and chains for inner rows with `hashes` (rows whose key is
/// NULL, `valid` 0, are left out: they never match).  Chains list rows in
/// ascending order.
pub(crate) fn build_buckets(hashes: &[u32], valid: &[u8]) -> (Vec<u32>, Vec<u32>) {
    let n = valid.iter().filter(|&&v| v != 0).count();
    let nbuckets = n.max(1).next_power_of_two();
    let mut buckets = vec![NULL_ROW; nbuckets];
    let mut next = vec![NULL_ROW; hashes.len()];
    for j in (0..hashes.len()).rev() {
        if valid[j] == 0 {
            continue;
        }
        let b = hashes[j] as usize & (nbuckets - 1);
        next[j] = buckets[b];
        buckets[b] = j as u32;
    }
    (buckets, next)
}

/// The primitive steps of one engine (buffers live in the engine).
pub(crate) trait JoinSteps {
    /// Combinations the output buffer holds now.
    fn capacity(&self) -> usize;
    /// Make room for `n` combinations of up to MAX_SOURCES sources (the
    /// input buffer keeps its contents).
    fn grow(&mut self, n: usize) -> Result<(), DeviceError>;
    /// Scan quals over the chunk into the output buffer; the count made.
    fn scan(&mut self, nrows: u32) -> Result<u64, DeviceError>;
    /// Store host-made combinations of `nsources` sources as the input.
    fn load(&mut self, rows: &[u32], nsources: usize, count: usize) -> Result<(), DeviceError>;
    /// Probe `depth` with `n_in` input combinations into the output buffer.
    fn probe(&mut self, depth: u32, n_in: u32) -> Result<u64, DeviceError>;
    /// Swap output and input.
    fn swap(&mut self);
    /// Read `count` input combinations of `nsources` sources.
    fn fetch(&mut self, nsources: usize, count: usize) -> Result<Vec<u32>, DeviceError>;
    /// Group and aggregate the `count` input combinations of `nsources`
    /// sources (the request's aggregation).
    fn aggregate(&mut self, nsources: usize, count: usize) -> Result<AggGroups, DeviceError>;
}

/// What to do with the final combinations of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Return them.
    Fetch,
    /// Return their groups.
    Aggregate,
}

/// The result of a chunk: combinations or groups.
pub(crate) enum Output {
    Combos(Combos),
    Groups(AggGroups),
}

impl Output {
    pub(crate) fn combos(self) -> Result<Combos, DeviceError> {
        match self {
            Output::Combos(c) => Ok(c),
            Output::Groups(_) => Err(DeviceError::InvalidRequest("a join step returned groups".into())),
        }
    }
    pub(crate) fn groups(self) -> Result<AggGroups, DeviceError> {
        match self {
            Output::Groups(g) => Ok(g),
            Output::Combos(_) => Err(DeviceError::InvalidRequest("an aggregation step returned rows".into())),
        }
    }
}

/// The C image of an aggregation whose programs, operations and initial
/// words live at the given addresses (`prog(p)` gives a program's code
/// and data addresses).
pub(crate) fn agg_reprs(
    agg: &AggSpec,
    prog: &dyn Fn(&Program) -> (u64, u64),
) -> (Vec<DevProgramRefRepr>, Vec<DevAggOpRepr>) {
    let pref = |p: &Program| {
        let (c, d) = prog(p);
        program_ref(Some(p), c, d)
    };
    let keys = agg.keys.iter().map(pref).collect();
    let (at, _) = agg.layout();
    let ops = agg
        .ops
        .iter()
        .zip(at)
        .map(|(o, word)| {
            let mut args = [DevProgramRefRepr::default(); 2];
            for (i, a) in o.args.iter().enumerate().take(2) {
                args[i] = pref(a);
            }
            DevAggOpRepr {
                kind: o.kind as u32,
                nargs: o.args.len() as u32,
                word,
                scale: o.scale,
                args,
                filter: o.filter.as_ref().map_or(DevProgramRefRepr::default(), pref),
            }
        })
        .collect();
    (keys, ops)
}

/// Error for a session opened without an aggregation.
pub(crate) fn no_agg() -> DeviceError {
    DeviceError::InvalidRequest("the join was opened without an aggregation".into())
}

/// Run the depths `from..=ndepths` over the input the steps hold.
pub(crate) fn run_depths(
    steps: &mut dyn JoinSteps,
    from: usize,
    ndepths: usize,
    mut n: u64,
    stage_counts: &mut Vec<u64>,
    finish: Finish,
) -> Result<Output, DeviceError> {
    for depth in from..=ndepths {
        if steps.capacity() == 0 || n as usize > steps.capacity() {
            steps.grow(n as usize)?;
        }
        let made = loop {
            let made = steps.probe(depth as u32, n as u32)?;
            if made as usize <= steps.capacity() {
                break made;
            }
            if made >= NULL_ROW as u64 {
                return Err(DeviceError::InvalidRequest(format!(
                    "join depth {depth} made {made} rows from one chunk; lower pg_strom.chunk_rows"
                )));
            }
            steps.grow(made as usize)?;
        };
        steps.swap();
        stage_counts.push(made);
        n = made;
    }
    if finish == Finish::Aggregate {
        let mut groups = steps.aggregate(ndepths + 1, n as usize)?;
        groups.stage_counts = std::mem::take(stage_counts);
        return Ok(Output::Groups(groups));
    }
    let rows = steps.fetch(ndepths + 1, n as usize)?;
    Ok(Output::Combos(Combos {
        nsources: ndepths + 1,
        count: n as usize,
        rows,
        stage_counts: std::mem::take(stage_counts),
    }))
}

/// One chunk through the scan quals (or the given selection) and every depth.
pub(crate) fn run_chunk(
    steps: &mut dyn JoinSteps,
    ndepths: usize,
    nrows: u32,
    selection: Option<&[u32]>,
    finish: Finish,
) -> Result<Output, DeviceError> {
    let n = match selection {
        Some(sel) => {
            if steps.capacity() == 0 || sel.len() > steps.capacity() {
                steps.grow(sel.len())?;
            }
            steps.load(sel, 1, sel.len())?;
            sel.len() as u64
        }
        None => {
            if steps.capacity() == 0 || (nrows as usize) > steps.capacity() {
                steps.grow(nrows as usize)?;
            }
            let made = steps.scan(nrows)?;
            steps.swap();
            made
        }
    };
    let mut stages = vec![n];
    run_depths(steps, 1, ndepths, n, &mut stages, finish)
}

/// After the last chunk: the inner rows of every depth that keeps them
/// (RIGHT, FULL, RIGHT ANTI: the unmatched; RIGHT SEMI: the matched),
/// through the later depths.
pub(crate) fn run_unmatched(
    steps: &mut dyn JoinSteps,
    kinds: &[JoinKind],
    matched: &[Vec<u8>],
    finish: Finish,
) -> Result<Output, DeviceError> {
    let ndepths = kinds.len();
    let mut all = Combos { nsources: ndepths + 1, ..Combos::default() };
    let mut parts: Vec<Combos> = Vec::new();
    let mut groups = AggGroups { nsources: ndepths + 1, ..AggGroups::default() };
    for (i, kind) in kinds.iter().enumerate() {
        if !kind.keeps_inner() {
            continue;
        }
        let depth = i + 1;
        let want = u8::from(*kind == JoinKind::RightSemi);
        let rows: Vec<u32> =
            matched[i].iter().enumerate().filter(|(_, m)| (**m != 0) as u8 == want).map(|(j, _)| j as u32).collect();
        if rows.is_empty() {
            continue;
        }
        // sources 0..depth-1 NULL, source `depth` the inner row
        let count = rows.len();
        let mut input = vec![NULL_ROW; (depth + 1) * count];
        input[depth * count..].copy_from_slice(&rows);
        if steps.capacity() == 0 || count > steps.capacity() {
            steps.grow(count)?;
        }
        steps.load(&input, depth + 1, count)?;
        let mut stages = vec![count as u64];
        match run_depths(steps, depth + 1, ndepths, count as u64, &mut stages, finish)? {
            Output::Combos(c) => parts.push(c),
            Output::Groups(g) => groups.append(g),
        }
    }
    if finish == Finish::Aggregate {
        groups.stage_counts = vec![groups.count as u64];
        return Ok(Output::Groups(groups));
    }
    all.count = parts.iter().map(|p| p.count).sum();
    all.rows = vec![0; all.nsources * all.count];
    let mut at = 0;
    for p in &parts {
        for s in 0..all.nsources {
            all.rows[s * all.count + at..s * all.count + at + p.count]
                .copy_from_slice(&p.rows[s * p.count..(s + 1) * p.count]);
        }
        at += p.count;
    }
    all.stage_counts = vec![all.count as u64];
    Ok(Output::Combos(all))
}

/// A program's reference in the engine's memory (`code`/`data` addresses).
pub(crate) fn program_ref(p: Option<&Program>, code: u64, data: u64) -> DevProgramRefRepr {
    match p {
        Some(p) => DevProgramRefRepr { code, ninstrs: p.code.len() as u32, result_type: p.result_type as u32, data },
        None => DevProgramRefRepr::default(),
    }
}

/// Turn a step's error code into a [`DeviceError`].
pub(crate) fn step_error(code: i32, at: u32) -> DeviceError {
    if code == DEVERR_INVALID_PROGRAM {
        return DeviceError::InvalidProgram(format!("the join step rejected its input at {at}"));
    }
    eval_error(code, at)
}

/// Parameters in the device layout.
pub(crate) fn params_repr(params: &[ParamValue]) -> Vec<DevDatumRepr> {
    DevDatumRepr::from_params(params)
}

/// Matched flags (one byte per inner row, non-zero: matched) as bits:
/// bit `r % 64` of word `r / 64` for row `r` ([`JoinSession::matched_bits`]).
pub fn flags_to_bits(flags: &[u8]) -> Vec<u64> {
    let mut bits = vec![0u64; flags.len().div_ceil(64)];
    for (r, _) in flags.iter().enumerate().filter(|(_, f)| **f != 0) {
        bits[r / 64] |= 1 << (r % 64);
    }
    bits
}

/// Set the flag of every row whose bit `bits` holds (rows past the flags'
/// end ignored).
pub fn merge_bits_into(flags: &mut [u8], bits: &[u64]) {
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let r = w * 64 + word.trailing_zeros() as usize;
            if r < flags.len() {
                flags[r] = 1;
            }
            word &= word - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{flags_to_bits, merge_bits_into};

    #[test]
    fn matched_flags_through_bits() {
        // rows 0, 63, 64 and 129 of 130 matched in one process
        let mut a = vec![0u8; 130];
        for r in [0, 63, 64, 129] {
            a[r] = 1;
        }
        let bits = flags_to_bits(&a);
        assert_eq!(bits.len(), 3);
        assert_eq!(bits[0], 1 | (1 << 63));
        assert_eq!(bits[1], 1);
        assert_eq!(bits[2], 1 << 1);
        // merged into another process's flags: the union, nothing else
        let mut b = vec![0u8; 130];
        b[5] = 1;
        merge_bits_into(&mut b, &bits);
        let set: Vec<usize> = b.iter().enumerate().filter(|(_, f)| **f != 0).map(|(r, _)| r).collect();
        assert_eq!(set, vec![0, 5, 63, 64, 129]);
        // bits past the flags' end are ignored; no rows, no words
        let mut short = vec![0u8; 64];
        merge_bits_into(&mut short, &bits);
        assert_eq!(short.iter().filter(|f| **f != 0).count(), 2);
        assert!(flags_to_bits(&[]).is_empty());
    }
}
