//! The CPU engine's join session: the inner relations copied into host
//! memory, hash tables built by the device code's own hash function, and
//! the join steps of device/kernels/join.cu called through their C ABI.

use crate::agg::{AggGroups, AggSpec, DevAggOpRepr, DevAggSpecRepr, local_slots, table_slots};
use crate::devstore::{self, DevStoreViewRepr, StoreMvcc, StoreRows};
use crate::engine::{ColumnData, DevColumnRepr, DevDatumRepr};
use crate::error::DeviceError;
use crate::join::{
    Combos, DevJoinDepthRepr, DevProgramRefRepr, Finish, JoinKind, JoinSession, JoinSpec, JoinSteps, MAX_KEYS, Output,
    SharedBuilds, agg_reprs, build_buckets, no_agg, params_repr, program_ref, run_chunk, run_unmatched, step_error,
    validate_attach, validate_chunk, validate_spec,
};
use crate::program::{Instr, Program};
use std::sync::Arc;

unsafe extern "C" {
    fn pgstrom_cpu_join_scan(
        qual: *const DevProgramRefRepr,
        cols: *const DevColumnRepr,
        ncols: u32,
        params: *const DevDatumRepr,
        nparams: u32,
        nrows: u32,
        view: *const DevStoreViewRepr,
        out: *mut u32,
        capacity: u32,
        count: *mut u32,
        error_at: *mut u32,
    ) -> i32;
    fn pgstrom_cpu_join_probe(
        jd: *const DevJoinDepthRepr,
        depth: u32,
        cols: *const DevColumnRepr,
        ncols: u32,
        params: *const DevDatumRepr,
        nparams: u32,
        input: *const u32,
        in_stride: u32,
        n_in: u32,
        out: *mut u32,
        capacity: u32,
        count: *mut u32,
        error_at: *mut u32,
    ) -> i32;
    fn pgstrom_cpu_join_hash(
        keys: *const DevProgramRefRepr,
        nkeys: u32,
        depth: u32,
        cols: *const DevColumnRepr,
        ncols: u32,
        params: *const DevDatumRepr,
        nparams: u32,
        ninner: u32,
        hashes: *mut u32,
        valid: *mut u8,
        error_at: *mut u32,
    ) -> i32;
    fn pgstrom_cpu_agg(
        spec: *const DevAggSpecRepr,
        cols: *const DevColumnRepr,
        ncols: u32,
        params: *const DevDatumRepr,
        nparams: u32,
        input: *const u32,
        in_stride: u32,
        nsources: u32,
        n: u32,
        keybuf: *mut DevDatumRepr,
        hashes: *mut u32,
        table: *mut u32,
        nslots: u32,
        words: *mut u64,
        out_rows: *mut u32,
        out_keys: *mut DevDatumRepr,
        out_words: *mut u64,
        exc: *mut u32,
        local_slots: u32,
        count: *mut u32,
        error_at: *mut u32,
    ) -> i32;
}

/// An aggregation in host memory: the operations' and keys' C images
/// point into `spec`'s programs.
struct CpuAgg {
    spec: AggSpec,
    keys: Vec<DevProgramRefRepr>,
    ops: Vec<DevAggOpRepr>,
    init: Vec<u64>,
    nwords: usize,
}

impl CpuAgg {
    fn new(spec: &AggSpec) -> CpuAgg {
        let spec = spec.clone();
        let (keys, ops) = agg_reprs(&spec, &|p| (p.code.as_ptr() as u64, p.data.as_ptr() as u64));
        let (_, nwords) = spec.layout();
        CpuAgg { init: spec.init_words(), spec, keys, ops, nwords }
    }

    fn repr(&self) -> DevAggSpecRepr {
        DevAggSpecRepr {
            nkeys: self.spec.keys.len() as u32,
            nops: self.ops.len() as u32,
            nwords: self.nwords as u32,
            reserved: 0,
            keys: self.keys.as_ptr() as u64,
            ops: self.ops.as_ptr() as u64,
            init: self.init.as_ptr() as u64,
        }
    }
}

/// A column copied out of the caller's buffers.
struct OwnedColumn {
    source: u32,
    type_id: u16,
    values: Vec<u8>,
    validity: Option<Vec<u8>>,
    offsets: Option<Vec<u32>>,
}

impl OwnedColumn {
    fn repr(&self) -> DevColumnRepr {
        DevColumnRepr {
            type_id: self.type_id as u32,
            source: self.source,
            values: self.values.as_ptr() as u64,
            validity: self.validity.as_ref().map_or(0, |v| v.as_ptr() as u64),
            offsets: self.offsets.as_ref().map_or(0, |o| o.as_ptr() as u64),
        }
    }
}

struct CpuDepth {
    kind: JoinKind,
    outer_keys: Vec<Program>,
    qual: Option<Program>,
    ninner: u32,
    matched: Vec<u8>,
    /// `matched` as [`JoinSession::save_matched`] found it.
    saved: Vec<u8>,
}

/// The inner relations and their hash tables: read-only once built, and
/// shared by the sessions of one query ([`SHARED`]).
struct CpuInner {
    columns: Vec<OwnedColumn>,
    /// Columns per depth.
    ncols: Vec<usize>,
    /// Rows per depth.
    ninner: Vec<u32>,
    /// Per depth: bucket heads, chains and hashes (empty for a nested loop).
    tables: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)>,
}

/// The builds sessions opened with a share key keep for the others.
static SHARED: SharedBuilds<CpuInner> = SharedBuilds::new();

fn pref(p: Option<&Program>) -> DevProgramRefRepr {
    program_ref(p, p.map_or(0, |p| p.code.as_ptr() as u64), p.map_or(0, |p| p.data.as_ptr() as u64))
}

/// The session.
pub struct CpuJoin {
    scan_qual: Option<Program>,
    outer_types: Vec<u16>,
    depths: Vec<CpuDepth>,
    inner: Arc<CpuInner>,
    params: Vec<DevDatumRepr>,
    out: Vec<u32>,
    out_cap: usize,
    input: Vec<u32>,
    in_cap: usize,
    agg: Option<CpuAgg>,
    /// The chunks are rows of a GPU store table (devstore.rs).
    store_rows: Option<StoreRows>,
}

impl CpuJoin {
    /// Copy the inner relations and build their hash tables.
    pub fn open(spec: &JoinSpec<'_>) -> Result<CpuJoin, DeviceError> {
        validate_spec(spec)?;
        let mut columns = Vec::new();
        for (i, d) in spec.depths.iter().enumerate() {
            for c in &d.inner {
                columns.push(OwnedColumn {
                    source: (i + 1) as u32,
                    type_id: c.type_id,
                    values: c.values.to_vec(),
                    validity: c.validity.map(|v| v.to_vec()),
                    offsets: c.offsets.map(|o| o[..=d.ninner as usize].to_vec()),
                });
            }
        }
        let inner = CpuInner {
            columns,
            ncols: spec.depths.iter().map(|d| d.inner.len()).collect(),
            ninner: spec.depths.iter().map(|d| d.ninner).collect(),
            tables: Vec::new(),
        };
        let mut join = CpuJoin::with_inner(spec, Arc::new(inner));
        // placeholders for the chunk's columns: never read (source 0 is
        // NULL while the inner keys are hashed)
        let cols = join.columns(&[]);
        let mut tables = Vec::new();
        for (i, d) in spec.depths.iter().enumerate() {
            let n = d.ninner as usize;
            if d.outer_keys.is_empty() {
                tables.push((Vec::new(), Vec::new(), Vec::new()));
                continue;
            }
            let mut keys = [DevProgramRefRepr::default(); MAX_KEYS];
            for (k, p) in d.inner_keys.iter().enumerate() {
                keys[k] = pref(Some(p));
            }
            let mut hashes = vec![0u32; n];
            let mut valid = vec![0u8; n];
            let mut at = 0u32;
            let _clock = crate::clock::Timer::start(crate::clock::Phase::Hash);
            // SAFETY: validated programs and columns; outputs of n
            // entries; every pointer outlives the call.
            let rc = unsafe {
                pgstrom_cpu_join_hash(
                    keys.as_ptr(),
                    d.inner_keys.len() as u32,
                    (i + 1) as u32,
                    cols.as_ptr(),
                    cols.len() as u32,
                    join.params.as_ptr(),
                    join.params.len() as u32,
                    d.ninner,
                    hashes.as_mut_ptr(),
                    valid.as_mut_ptr(),
                    &mut at,
                )
            };
            if rc != 0 {
                return Err(step_error(rc, at));
            }
            let (b, nx) = build_buckets(&hashes, &valid);
            tables.push((b, nx, hashes));
        }
        Arc::get_mut(&mut join.inner).expect("not shared yet").tables = tables;
        Ok(join)
    }

    /// As [`Self::open`], and keep the build under `key` for
    /// [`Self::attach`].
    pub fn open_shared(spec: &JoinSpec<'_>, key: u64) -> Result<CpuJoin, DeviceError> {
        let join = CpuJoin::open(spec)?;
        SHARED.keep(key, spec, &join.inner);
        Ok(join)
    }

    /// A session over the build kept under `key` for requests like `spec`
    /// (which carries no inner rows), or None.
    pub fn attach(spec: &JoinSpec<'_>, key: u64) -> Result<Option<CpuJoin>, DeviceError> {
        let Some(inner) = SHARED.find(key, spec) else { return Ok(None) };
        validate_attach(spec, &inner.ncols, &inner.ninner)?;
        Ok(Some(CpuJoin::with_inner(spec, inner)))
    }

    /// A session over the build kept across queries under `key` for
    /// requests like `spec` (no inner rows), kept from now on also under
    /// share key `share`; or None.
    pub fn open_cached(spec: &JoinSpec<'_>, key: &[u8], share: u64) -> Result<Option<CpuJoin>, DeviceError> {
        let Some(inner) = SHARED.cache_find(key, share, spec) else { return Ok(None) };
        validate_attach(spec, &inner.ncols, &inner.ninner)?;
        Ok(Some(CpuJoin::with_inner(spec, inner)))
    }

    /// Keep the build held under share key `share` across queries under
    /// `key`, with `rows` (see `Engine::join_cache_keep`).
    pub fn cache_keep(spec: &JoinSpec<'_>, share: u64, key: &[u8], rows: &[u8]) -> bool {
        let bytes = SHARED.find(share, spec).map_or(0, |b| {
            b.columns
                .iter()
                .map(|c| {
                    c.values.len()
                        + c.validity.as_ref().map_or(0, Vec::len)
                        + 4 * c.offsets.as_ref().map_or(0, Vec::len)
                })
                .sum::<usize>()
                + b.tables.iter().map(|(b, n, h)| 4 * (b.len() + n.len() + h.len())).sum::<usize>()
        });
        SHARED.cache_keep(share, spec, key, rows.to_vec(), bytes)
    }

    /// The rows kept with the build under `key`.
    pub fn cache_rows(key: &[u8]) -> Option<Arc<Vec<u8>>> {
        SHARED.cache_rows(key)
    }

    /// The session's own parts over `inner`.
    fn with_inner(spec: &JoinSpec<'_>, inner: Arc<CpuInner>) -> CpuJoin {
        CpuJoin {
            scan_qual: spec.scan_qual.clone(),
            outer_types: spec.outer_types.clone(),
            depths: spec
                .depths
                .iter()
                .map(|d| CpuDepth {
                    kind: d.kind,
                    outer_keys: d.outer_keys.clone(),
                    qual: d.qual.clone(),
                    ninner: d.ninner,
                    matched: if d.kind.keeps_inner() { vec![0; d.ninner as usize] } else { Vec::new() },
                    saved: if d.kind.keeps_inner() { vec![0; d.ninner as usize] } else { Vec::new() },
                })
                .collect(),
            inner,
            params: params_repr(&spec.params),
            out: Vec::new(),
            out_cap: 0,
            input: Vec::new(),
            in_cap: 0,
            agg: spec.agg.as_ref().map(CpuAgg::new),
            store_rows: None,
        }
    }

    /// Column descriptors: the chunk's (or placeholders), then the inner ones.
    fn columns(&self, outer: &[ColumnData<'_>]) -> Vec<DevColumnRepr> {
        let mut cols: Vec<DevColumnRepr> = if outer.is_empty() {
            self.outer_types
                .iter()
                .map(|t| DevColumnRepr { type_id: *t as u32, source: 0, values: 0, validity: 0, offsets: 0 })
                .collect()
        } else {
            outer
                .iter()
                .map(|c| DevColumnRepr {
                    type_id: c.type_id as u32,
                    source: 0,
                    values: c.values.as_ptr() as u64,
                    validity: c.validity.map_or(0, |v| v.as_ptr() as u64),
                    offsets: c.offsets.map_or(0, |o| o.as_ptr() as u64),
                })
                .collect()
        };
        cols.extend(self.inner.columns.iter().map(OwnedColumn::repr));
        cols
    }

    fn depth_reprs(&mut self) -> Vec<DevJoinDepthRepr> {
        let inner = &self.inner;
        self.depths
            .iter_mut()
            .zip(&inner.tables)
            .map(|(d, (buckets, next, hashes))| {
                let mut keys = [DevProgramRefRepr::default(); MAX_KEYS];
                for (k, p) in d.outer_keys.iter().enumerate() {
                    keys[k] = pref(Some(p));
                }
                DevJoinDepthRepr {
                    kind: d.kind as u32,
                    nkeys: d.outer_keys.len() as u32,
                    ninner: d.ninner,
                    nbuckets: buckets.len() as u32,
                    qual: pref(d.qual.as_ref()),
                    keys,
                    // read only by the steps
                    buckets: buckets.as_ptr() as u64,
                    next: next.as_ptr() as u64,
                    hashes: hashes.as_ptr() as u64,
                    matched: if d.matched.is_empty() { 0 } else { d.matched.as_mut_ptr() as u64 },
                }
            })
            .collect()
    }
}

/// The steps over one chunk (or over the unmatched rows).
struct Steps<'s> {
    join: &'s mut CpuJoin,
    cols: Vec<DevColumnRepr>,
    depths: Vec<DevJoinDepthRepr>,
    nsources: usize,
    /// The view of a chunk of GPU store rows (its arrays live as long as
    /// the steps).
    view: Option<DevStoreViewRepr>,
}

impl JoinSteps for Steps<'_> {
    fn capacity(&self) -> usize {
        self.join.out_cap
    }

    fn grow(&mut self, n: usize) -> Result<(), DeviceError> {
        let cap = (n + n / 4).max(1024);
        self.join.out = vec![0; cap * self.nsources];
        self.join.out_cap = cap;
        Ok(())
    }

    fn scan(&mut self, nrows: u32) -> Result<u64, DeviceError> {
        let qual = pref(self.join.scan_qual.as_ref());
        let (mut count, mut at) = (0u32, 0u32);
        let j = &mut *self.join;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Scan);
        // SAFETY: validated chunk and programs; the output holds out_cap
        // combinations of nsources sources.
        let rc = unsafe {
            pgstrom_cpu_join_scan(
                &qual,
                self.cols.as_ptr(),
                self.cols.len() as u32,
                j.params.as_ptr(),
                j.params.len() as u32,
                nrows,
                self.view.as_ref().map_or(std::ptr::null(), |v| v as *const DevStoreViewRepr),
                j.out.as_mut_ptr(),
                j.out_cap as u32,
                &mut count,
                &mut at,
            )
        };
        if rc != 0 {
            return Err(step_error(rc, at));
        }
        Ok(count as u64)
    }

    fn load(&mut self, rows: &[u32], nsources: usize, count: usize) -> Result<(), DeviceError> {
        // written as the output, then made the input
        let j = &mut *self.join;
        for s in 0..nsources {
            j.out[s * j.out_cap..s * j.out_cap + count].copy_from_slice(&rows[s * count..(s + 1) * count]);
        }
        self.swap();
        Ok(())
    }

    fn probe(&mut self, depth: u32, n_in: u32) -> Result<u64, DeviceError> {
        let (mut count, mut at) = (0u32, 0u32);
        let j = &mut *self.join;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Probe);
        // SAFETY: the input holds n_in combinations at stride in_cap (made
        // by our own steps), the output out_cap; depth is within range.
        let rc = unsafe {
            pgstrom_cpu_join_probe(
                &self.depths[depth as usize - 1],
                depth,
                self.cols.as_ptr(),
                self.cols.len() as u32,
                j.params.as_ptr(),
                j.params.len() as u32,
                j.input.as_ptr(),
                j.in_cap as u32,
                n_in,
                j.out.as_mut_ptr(),
                j.out_cap as u32,
                &mut count,
                &mut at,
            )
        };
        if rc != 0 {
            return Err(step_error(rc, at));
        }
        Ok(count as u64)
    }

    fn swap(&mut self) {
        let j = &mut *self.join;
        std::mem::swap(&mut j.out, &mut j.input);
        std::mem::swap(&mut j.out_cap, &mut j.in_cap);
        if j.out_cap < j.in_cap {
            j.out = vec![0; j.in_cap * self.nsources];
            j.out_cap = j.in_cap;
        }
    }

    fn fetch(&mut self, nsources: usize, count: usize) -> Result<Vec<u32>, DeviceError> {
        let j = &*self.join;
        let mut rows = Vec::with_capacity(nsources * count);
        for s in 0..nsources {
            rows.extend_from_slice(&j.input[s * j.in_cap..s * j.in_cap + count]);
        }
        Ok(rows)
    }

    fn aggregate(&mut self, nsources: usize, count: usize) -> Result<AggGroups, DeviceError> {
        let j = &mut *self.join;
        let agg = j.agg.as_ref().ok_or_else(no_agg)?;
        let repr = agg.repr();
        let nslots = table_slots(count);
        let nkeys = agg.spec.keys.len();
        let mut keybuf = vec![DevDatumRepr::default(); (count * nkeys).max(1)];
        let mut hashes = vec![0u32; count.max(1)];
        let mut table = vec![0u32; nslots];
        let mut words = vec![0u64; nslots * agg.nwords];
        let mut out_rows = vec![0u32; (nsources * count).max(1)];
        let mut out_keys = vec![DevDatumRepr::default(); (count * nkeys).max(1)];
        let mut out_words = vec![0u64; (count * agg.nwords).max(1)];
        let mut exc = vec![0u32; count + 1];
        let (mut ngroups, mut at) = (0u32, 0u32);
        let input = if count == 0 { [0u32].as_ptr() } else { j.input.as_ptr() };
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Aggregate);
        // SAFETY: the input holds `count` combinations at stride in_cap
        // (made by our own steps); every buffer has the size the entry
        // point documents; the spec's pointers live in `agg`.
        let rc = unsafe {
            pgstrom_cpu_agg(
                &repr,
                self.cols.as_ptr(),
                self.cols.len() as u32,
                j.params.as_ptr(),
                j.params.len() as u32,
                input,
                j.in_cap as u32,
                nsources as u32,
                count as u32,
                keybuf.as_mut_ptr(),
                hashes.as_mut_ptr(),
                table.as_mut_ptr(),
                nslots as u32,
                words.as_mut_ptr(),
                out_rows.as_mut_ptr(),
                out_keys.as_mut_ptr(),
                out_words.as_mut_ptr(),
                exc.as_mut_ptr(),
                local_slots(agg.nwords),
                &mut ngroups,
                &mut at,
            )
        };
        if rc != 0 {
            return Err(step_error(rc, at));
        }
        let g = ngroups as usize;
        let mut rows = Vec::with_capacity(nsources * g);
        for s in 0..nsources {
            rows.extend_from_slice(&out_rows[s * count..s * count + g]);
        }
        out_words.truncate(g * agg.nwords);
        let keys = out_keys[..g * nkeys].iter().map(DevDatumRepr::key_value).collect();
        let mut groups = AggGroups {
            nsources,
            count: g,
            rows,
            nkeys,
            keys,
            nwords: agg.nwords,
            words: out_words,
            stage_counts: Vec::new(),
            exceptions: Vec::new(),
        };
        // the exceptions: their combinations' rows and keys
        let nexc = (exc[0] as usize).min(count);
        groups.add_exception_combos(&exc[1..=nexc], |s, k| j.input[s * j.in_cap + k], &keybuf, &agg.init);
        Ok(groups)
    }
}

impl CpuJoin {
    /// One chunk through every step, finished as asked.
    fn run(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
        finish: Finish,
    ) -> Result<Output, DeviceError> {
        if finish == Finish::Aggregate && self.agg.is_none() {
            return Err(no_agg());
        }
        let rows = self.store_rows.clone();
        let copy = match rows.as_ref().map(|r| &r.mvcc) {
            Some(StoreMvcc::Copy(id)) if devstore::host_copies() => {
                Some(devstore::host_store(id).ok_or_else(|| devstore::no_copy(id))?)
            }
            Some(StoreMvcc::Copy(id)) => return Err(devstore::no_copy(id)),
            _ => None,
        };
        let guard = copy.as_ref().map(|c| c.read().unwrap_or_else(|p| p.into_inner()));
        let resolved;
        let (outer, view) = match (&rows, &guard) {
            (Some(r), Some(st)) => {
                devstore::check_rows(r, nrows, st.rows())?;
                resolved = devstore::host_columns(st, outer, r.first_row, nrows)?;
                let arrays = devstore::host_versions(st, r.first_row, nrows);
                (&resolved[..], Some(DevStoreViewRepr::new(r, arrays, view_lists(r))))
            }
            (Some(r), None) => {
                devstore::check_rows(r, nrows, r.first_row + nrows as u64)?;
                let StoreMvcc::Inline(v) = &r.mvcc else { unreachable!("copies resolved above") };
                let arrays =
                    [v.xmin.as_ptr() as u64, v.cmin.as_ptr() as u64, v.xmax.as_ptr() as u64, v.cmax.as_ptr() as u64];
                (outer, Some(DevStoreViewRepr::new(r, arrays, view_lists(r))))
            }
            _ => (outer, None),
        };
        if outer.iter().any(|c| c.store.is_some()) {
            return Err(DeviceError::InvalidRequest("a store column outside a chunk of the store's copy".into()));
        }
        validate_chunk(&self.outer_types, outer, nrows, selection, crate::engine::Holds::Memory)?;
        let cols = self.columns(outer);
        let depths = self.depth_reprs();
        let nsources = depths.len() + 1;
        let ndepths = depths.len();
        let mut steps = Steps { join: self, cols, depths, nsources, view };
        run_chunk(&mut steps, ndepths, nrows, selection, finish)
    }

    /// The unmatched inner rows through the later depths, finished as asked.
    fn run_unmatched_rows(&mut self, finish: Finish) -> Result<Output, DeviceError> {
        if finish == Finish::Aggregate && self.agg.is_none() {
            return Err(no_agg());
        }
        let cols = self.columns(&[]);
        let depths = self.depth_reprs();
        let kinds: Vec<JoinKind> = self.depths.iter().map(|d| d.kind).collect();
        let matched: Vec<Vec<u8>> = self.depths.iter().map(|d| d.matched.clone()).collect();
        let nsources = depths.len() + 1;
        let mut steps = Steps { join: self, cols, depths, nsources, view: None };
        run_unmatched(&mut steps, &kinds, &matched, finish)
    }
}

impl JoinSession for CpuJoin {
    fn probe(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<Combos, DeviceError> {
        self.run(outer, nrows, selection, Finish::Fetch)?.combos()
    }

    fn unmatched(&mut self) -> Result<Combos, DeviceError> {
        self.run_unmatched_rows(Finish::Fetch)?.combos()
    }

    fn probe_agg(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<AggGroups, DeviceError> {
        self.run(outer, nrows, selection, Finish::Aggregate)?.groups()
    }

    fn unmatched_agg(&mut self) -> Result<AggGroups, DeviceError> {
        self.run_unmatched_rows(Finish::Aggregate)?.groups()
    }

    fn reset_matched(&mut self) -> Result<(), DeviceError> {
        for d in &mut self.depths {
            d.matched.iter_mut().for_each(|m| *m = 0);
            d.saved.iter_mut().for_each(|m| *m = 0);
        }
        Ok(())
    }

    fn save_matched(&mut self) -> Result<(), DeviceError> {
        for d in &mut self.depths {
            d.saved.copy_from_slice(&d.matched);
        }
        Ok(())
    }

    fn restore_matched(&mut self) -> Result<(), DeviceError> {
        for d in &mut self.depths {
            d.matched.copy_from_slice(&d.saved);
        }
        Ok(())
    }

    fn matched_bits(&mut self) -> Result<Vec<Vec<u64>>, DeviceError> {
        Ok(self.depths.iter().map(|d| crate::join::flags_to_bits(&d.matched)).collect())
    }

    fn merge_matched(&mut self, bits: &[Vec<u64>]) -> Result<(), DeviceError> {
        for (d, b) in self.depths.iter_mut().zip(bits) {
            crate::join::merge_bits_into(&mut d.matched, b);
        }
        Ok(())
    }

    fn inner_bytes(&self) -> usize {
        let cols: usize = self
            .inner
            .columns
            .iter()
            .map(|c| {
                c.values.len() + c.validity.as_ref().map_or(0, Vec::len) + c.offsets.as_ref().map_or(0, |o| o.len() * 4)
            })
            .sum();
        let tables: usize = self.inner.tables.iter().map(|(b, n, h)| (b.len() + n.len() + h.len()) * 4).sum();
        let matched: usize = self.depths.iter().map(|d| d.matched.len()).sum();
        cols + tables + matched
    }

    fn store_sync(&mut self, batch: &devstore::StoreSync<'_>) -> Result<Option<devstore::StoreState>, DeviceError> {
        if !devstore::host_copies() {
            return Ok(None);
        }
        devstore::host_sync(batch).map(Some)
    }

    fn set_store_rows(&mut self, rows: Option<StoreRows>) -> Result<(), DeviceError> {
        self.store_rows = rows;
        Ok(())
    }
}

/// The addresses of the lists of a view (host memory).
fn view_lists(r: &StoreRows) -> [u64; 3] {
    [r.view.aborted.as_ptr() as u64, r.view.window.as_ptr() as u64, r.view.states.as_ptr() as u64]
}

// Instr is the C DevInstr: pointers to program code are passed as such.
const _: () = assert!(std::mem::size_of::<Instr>() == 16);
