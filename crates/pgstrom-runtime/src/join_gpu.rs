//! The GPU engine's join session: the inner relations, their hash tables
//! and every program uploaded once into one device arena; per chunk only
//! the chunk's columns go over PCIe (staged in pinned memory), and only the
//! final combinations come back.  Hashes are computed on the GPU by the
//! same device function that probes; the bucket chains are linked on the
//! host (a few arrays of the inner relation's size).

use std::ffi::c_void;

use crate::agg::{AggGroups, DevAggSpecRepr, local_slots, local_table_bytes, table_slots};
use crate::cuda::CuDevicePtr;
use crate::devstore::{self, DevStoreViewRepr, StoreMvcc, StoreRows};
use crate::engine::{ColumnData, DevColumnRepr, DevDatumRepr};
use crate::error::DeviceError;
use crate::gpu::{DeviceBuffer, GpuEngine, PooledBuffer, ScratchGuard};
use crate::join::{
    Combos, DevJoinDepthRepr, DevProgramRefRepr, Finish, JoinKind, JoinSession, JoinSpec, JoinSteps, MAX_KEYS, Output,
    agg_reprs, build_buckets, no_agg, params_repr, run_chunk, run_unmatched, step_error, validate_attach,
    validate_chunk, validate_spec,
};
use crate::program::Program;
use std::sync::Arc;

/// Kernel parameters as the launch takes them.
fn align_up(n: usize) -> usize {
    n.next_multiple_of(256)
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: a view of plain-old-data.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// Host image of a device arena: byte ranges placed at aligned offsets.
#[derive(Default)]
struct Image {
    bytes: Vec<u8>,
}

impl Image {
    fn place(&mut self, data: &[u8]) -> usize {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.bytes.resize(align_up(self.bytes.len().max(at + 1)), 0);
        at
    }

    fn reserve(&mut self, len: usize) -> usize {
        let at = self.bytes.len();
        self.bytes.resize(align_up(at + len.max(1)), 0);
        at
    }
}

/// An inner column in the inner buffer: (source, type, values, validity,
/// offsets) offsets.
type ColumnPlace = (u32, u16, usize, Option<usize>, Option<usize>);

struct GpuDepth {
    kind: JoinKind,
    ninner: u32,
    /// Arena offsets of the outer keys and the qual (refs built at upload).
    outer_keys: Vec<(usize, usize, u32, u16)>,
    qual: Option<(usize, usize, u32, u16)>,
    inner_keys: Vec<(usize, usize, u32, u16)>,
    /// Arena offsets of the matched flags of a RIGHT or FULL depth (one
    /// byte per inner row), and of their copy by `save_matched`.
    matched: Option<(usize, usize)>,
}

/// One depth's hash table in a [`GpuInner`]'s buffer (offsets).
struct InnerTable {
    hashed: bool,
    hashes: usize,
    valid: usize,
    buckets: usize,
    nbuckets: u32,
    next: usize,
}

/// The inner relations in device memory: their columns and each depth's
/// hash table, read-only once built, shared by the sessions of one query
/// (the processes of a parallel plan) through the engine's
/// [`GpuEngine::shared_joins`].
pub(crate) struct GpuInner {
    buf: DeviceBuffer<'static>,
    len: usize,
    /// Descriptors of the inner columns (device addresses).
    cols: Vec<DevColumnRepr>,
    /// Columns per depth.
    ncols: Vec<usize>,
    /// Rows per depth.
    ninner: Vec<u32>,
    tables: Vec<InnerTable>,
}

impl GpuInner {
    /// Upload the inner columns of `spec` and make room for the tables.
    fn upload(eng: &GpuEngine, spec: &JoinSpec<'_>) -> Result<GpuInner, DeviceError> {
        let mut img = Image::default();
        let mut places: Vec<ColumnPlace> = Vec::new();
        let mut tables = Vec::new();
        for (i, d) in spec.depths.iter().enumerate() {
            let n = d.ninner as usize;
            for c in &d.inner {
                let v = img.place(c.values);
                let vb = c.validity.map(|b| img.place(&b[..n.div_ceil(8)]));
                let ob = c.offsets.map(|o| img.place(bytes_of(&o[..=n])));
                places.push(((i + 1) as u32, c.type_id, v, vb, ob));
            }
            let hashed = !d.outer_keys.is_empty();
            let nb = if hashed { n.max(1).next_power_of_two() } else { 0 };
            tables.push(InnerTable {
                hashed,
                hashes: img.reserve(if hashed { n * 4 } else { 0 }),
                valid: img.reserve(if hashed { n } else { 0 }),
                buckets: img.reserve(nb * 4),
                nbuckets: 0,
                next: img.reserve(if hashed { n * 4 } else { 0 }),
            });
        }
        let len = img.bytes.len();
        let drv = eng.drv;
        let buf = DeviceBuffer::alloc(drv, len)?;
        let base = buf.ptr;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        // SAFETY: the buffer holds len bytes.
        drv.check("cuMemcpyHtoD", unsafe { (drv.cuMemcpyHtoD)(base, img.bytes.as_ptr() as *const c_void, len) })?;
        let cols = places
            .iter()
            .map(|&(source, t, v, vb, ob)| DevColumnRepr {
                type_id: t as u32,
                source,
                values: base + v as u64,
                validity: vb.map_or(0, |o| base + o as u64),
                offsets: ob.map_or(0, |o| base + o as u64),
            })
            .collect();
        Ok(GpuInner {
            buf,
            len,
            cols,
            ncols: spec.depths.iter().map(|d| d.inner.len()).collect(),
            ninner: spec.depths.iter().map(|d| d.ninner).collect(),
            tables,
        })
    }

    fn addr(&self, off: usize) -> CuDevicePtr {
        self.buf.ptr + off as u64
    }
}

/// The session.
pub struct GpuJoin<'e> {
    eng: &'e GpuEngine,
    outer_types: Vec<u16>,
    depths: Vec<GpuDepth>,
    /// The inner relations (maybe another session's too).
    inner: Arc<GpuInner>,
    /// Programs, parameters and descriptors of this session.
    arena: PooledBuffer<'e>,
    arena_len: usize,
    /// Arena offset of the column array with placeholder outer columns.
    open_cols: usize,
    ncols: usize,
    params: usize,
    nparams: u32,
    scan_qual_at: usize,
    depth_reprs: usize,
    /// Per depth: arena offset of its inner key references.
    key_refs_at: Vec<usize>,
    /// Chunk staging: a scratch arena (pinned host memory and its device
    /// copy) of the engine's, held while the session lives.
    stage: Option<ScratchGuard<'e>>,
    out: Option<PooledBuffer<'e>>,
    out_cap: usize,
    input: Option<PooledBuffer<'e>>,
    in_cap: usize,
    /// count (u32) at 0, error word (u64) at 8.
    counters: PooledBuffer<'e>,
    /// The aggregation: (arena offset of its DevAggSpec, keys, words per
    /// group), or None.
    agg: Option<(usize, usize, usize)>,
    /// Its initial words, when it has a SumNumWide operation (whose
    /// exceptions come back as groups of their own).
    agg_wide_init: Option<Vec<u64>>,
    /// Per-chunk aggregation buffers.
    agg_scratch: Option<PooledBuffer<'e>>,
    agg_scratch_len: usize,
    /// The chunks are rows of a GPU store table (devstore.rs).
    store_rows: Option<StoreRows>,
    /// The copy of the store this session brought up to date or reads,
    /// held until the session ends so that a shortage of memory does not
    /// evict it mid-query (devstore_gpu.rs, `GpuStores`).
    store_pin: Option<crate::devstore_gpu::SharedStore>,
}

fn place_program(img: &mut Image, p: &Program) -> (usize, usize, u32, u16) {
    let code = img.place(bytes_of(&p.code));
    let data = img.place(&p.data);
    (code, data, p.code.len() as u32, p.result_type)
}

impl<'e> GpuJoin<'e> {
    /// Upload the inner relations and programs; hash and link the tables.
    pub fn open(eng: &'e GpuEngine, spec: &JoinSpec<'_>) -> Result<GpuJoin<'e>, DeviceError> {
        let ncols = validate_spec(spec)?;
        eng.make_current()?;
        let inner = Arc::new(GpuInner::upload(eng, spec)?);
        let mut join = GpuJoin::with_inner(eng, spec, inner, ncols)?;
        // hash the inner keys on the GPU, link the chains here
        for i in 0..join.depths.len() {
            if !join.inner.tables[i].hashed {
                continue;
            }
            let n = join.depths[i].ninner as usize;
            join.reset_counters()?;
            let mut p_keys = join.addr(join.key_refs_at[i]);
            let mut p_nkeys = join.depths[i].inner_keys.len() as u32;
            let mut p_depth = (i + 1) as u32;
            let mut p_cols = join.addr(join.open_cols);
            let mut p_ncols = ncols as u32;
            let mut p_params = join.addr(join.params);
            let mut p_nparams = join.nparams;
            let mut p_ninner = n as u32;
            let mut p_hashes = join.inner.addr(join.inner.tables[i].hashes);
            let mut p_valid = join.inner.addr(join.inner.tables[i].valid);
            let mut p_error = join.counters.ptr + 8;
            let mut kp = kparams!(
                p_keys, p_nkeys, p_depth, p_cols, p_ncols, p_params, p_nparams, p_ninner, p_hashes, p_valid, p_error
            );
            if n > 0 {
                // SAFETY: kernel parameters in order; the arena outlives it.
                unsafe { eng.launch_and_wait("kern_join_hash", eng.grid_for(n as u32), &mut kp)? };
            }
            join.check_error()?;
            let mut hashes = vec![0u32; n];
            let mut valid = vec![0u8; n];
            let t = &join.inner.tables[i];
            join.copy_inner(t.hashes, &mut hashes, false)?;
            join.copy_inner(t.valid, &mut valid, false)?;
            let (mut buckets, mut next) = build_buckets(&hashes, &valid);
            join.copy_inner(t.buckets, &mut buckets, true)?;
            join.copy_inner(t.next, &mut next, true)?;
            Arc::get_mut(&mut join.inner).expect("not shared yet").tables[i].nbuckets = buckets.len() as u32;
        }
        join.upload_depths()?;
        Ok(join)
    }

    /// As [`Self::open`], and keep the inner relations under `key` for
    /// [`Self::attach`].
    pub fn open_shared(eng: &'e GpuEngine, spec: &JoinSpec<'_>, key: u64) -> Result<GpuJoin<'e>, DeviceError> {
        let join = GpuJoin::open(eng, spec)?;
        eng.shared_joins.keep(key, spec, &join.inner);
        Ok(join)
    }

    /// A session over the inner relations kept under `key` for requests
    /// like `spec` (which carries no inner rows), or None.
    pub fn attach(eng: &'e GpuEngine, spec: &JoinSpec<'_>, key: u64) -> Result<Option<GpuJoin<'e>>, DeviceError> {
        let Some(inner) = eng.shared_joins.find(key, spec) else { return Ok(None) };
        let ncols = validate_attach(spec, &inner.ncols, &inner.ninner)?;
        eng.make_current()?;
        let join = GpuJoin::with_inner(eng, spec, inner, ncols)?;
        join.upload_depths()?;
        Ok(Some(join))
    }

    /// A session over the build kept across queries under `key` for
    /// requests like `spec` (no inner rows), kept from now on also under
    /// share key `share`; or None.
    pub fn open_cached(
        eng: &'e GpuEngine,
        spec: &JoinSpec<'_>,
        key: &[u8],
        share: u64,
    ) -> Result<Option<GpuJoin<'e>>, DeviceError> {
        let Some(inner) = eng.shared_joins.cache_find(key, share, spec) else { return Ok(None) };
        let ncols = validate_attach(spec, &inner.ncols, &inner.ninner)?;
        eng.make_current()?;
        let join = GpuJoin::with_inner(eng, spec, inner, ncols)?;
        join.upload_depths()?;
        Ok(Some(join))
    }

    /// Keep the build held under share key `share` across queries under
    /// `key`, with `rows` (see `Engine::join_cache_keep`).
    pub fn cache_keep(eng: &GpuEngine, spec: &JoinSpec<'_>, share: u64, key: &[u8], rows: &[u8]) -> bool {
        let bytes = eng.shared_joins.find(share, spec).map_or(0, |b| b.len);
        eng.shared_joins.cache_keep(share, spec, key, rows.to_vec(), bytes)
    }

    /// Copy between host memory and the inner relations' buffer at `off`
    /// (`up`: to the device).
    fn copy_inner<T: Copy>(&self, off: usize, data: &mut [T], up: bool) -> Result<(), DeviceError> {
        let len = std::mem::size_of_val(data);
        if len == 0 {
            return Ok(());
        }
        assert!(off + len <= self.inner.len, "inner copy out of range");
        let drv = self.eng.drv;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        // SAFETY: within the inner buffer (checked); `data` holds len bytes.
        unsafe {
            if up {
                drv.check("cuMemcpyHtoD", (drv.cuMemcpyHtoD)(self.inner.addr(off), data.as_ptr() as *const c_void, len))
            } else {
                drv.check(
                    "cuMemcpyDtoH",
                    (drv.cuMemcpyDtoH)(data.as_mut_ptr() as *mut c_void, self.inner.addr(off), len),
                )
            }
        }
    }

    /// The session's own arena (programs, parameters, descriptors and the
    /// matched flags of RIGHT and FULL depths) over `inner`.
    fn with_inner(
        eng: &'e GpuEngine,
        spec: &JoinSpec<'_>,
        inner: Arc<GpuInner>,
        ncols: usize,
    ) -> Result<GpuJoin<'e>, DeviceError> {
        let drv = eng.drv;
        let mut img = Image::default();
        let scan_qual = spec.scan_qual.as_ref().map(|p| place_program(&mut img, p));
        let depths: Vec<GpuDepth> = spec
            .depths
            .iter()
            .map(|d| GpuDepth {
                kind: d.kind,
                ninner: d.ninner,
                outer_keys: d.outer_keys.iter().map(|p| place_program(&mut img, p)).collect(),
                qual: d.qual.as_ref().map(|p| place_program(&mut img, p)),
                inner_keys: d.inner_keys.iter().map(|p| place_program(&mut img, p)).collect(),
                matched: d.kind.keeps_inner().then(|| (img.reserve(d.ninner as usize), img.reserve(d.ninner as usize))),
            })
            .collect();
        let pars = params_repr(&spec.params);
        let params = img.place(bytes_of(&pars));
        let open_cols = img.reserve(ncols * std::mem::size_of::<DevColumnRepr>());
        let scan_qual_at = img.reserve(std::mem::size_of::<DevProgramRefRepr>());
        let key_refs_at: Vec<usize> =
            depths.iter().map(|_| img.reserve(MAX_KEYS * std::mem::size_of::<DevProgramRefRepr>())).collect();
        let depth_reprs = img.reserve(depths.len() * std::mem::size_of::<DevJoinDepthRepr>());
        // the aggregation: its programs, then (after the arena's address is
        // known) the key references, operations, initial words and spec
        let agg_progs: Vec<(usize, usize)> = spec
            .agg
            .iter()
            .flat_map(|a| a.keys.iter().chain(a.ops.iter().flat_map(|o| o.args.iter().chain(&o.filter))))
            .map(|p| {
                let (c, d, _, _) = place_program(&mut img, p);
                (c, d)
            })
            .collect();
        let agg_at = spec.agg.as_ref().map(|a| {
            let keys = img.reserve(a.keys.len() * std::mem::size_of::<DevProgramRefRepr>());
            let ops = img.reserve(a.ops.len() * std::mem::size_of::<crate::agg::DevAggOpRepr>());
            let init = img.place(bytes_of(&a.init_words()));
            let spec_at = img.reserve(std::mem::size_of::<DevAggSpecRepr>());
            (keys, ops, init, spec_at)
        });

        let arena_len = img.bytes.len();
        let arena = eng.buffer(arena_len)?;
        let base = arena.ptr;
        let addr = |off: usize| base + off as u64;
        let pref = |p: &(usize, usize, u32, u16)| DevProgramRefRepr {
            code: addr(p.0),
            ninstrs: p.2,
            result_type: p.3 as u32,
            data: addr(p.1),
        };
        let mut cols: Vec<DevColumnRepr> = spec
            .outer_types
            .iter()
            .map(|t| DevColumnRepr { type_id: *t as u32, source: 0, values: 0, validity: 0, offsets: 0 })
            .collect();
        cols.extend(&inner.cols);
        let put = |img: &mut Image, at: usize, b: &[u8]| img.bytes[at..at + b.len()].copy_from_slice(b);
        put(&mut img, open_cols, bytes_of(&cols));
        let sq = scan_qual.as_ref().map_or(DevProgramRefRepr::default(), pref);
        put(&mut img, scan_qual_at, bytes_of(&[sq]));
        for (d, at) in depths.iter().zip(&key_refs_at) {
            let mut keys = [DevProgramRefRepr::default(); MAX_KEYS];
            for (k, p) in d.inner_keys.iter().enumerate() {
                keys[k] = pref(p);
            }
            put(&mut img, *at, bytes_of(&keys));
        }
        let mut agg = None;
        let mut agg_wide_init = None;
        if let (Some(a), Some((keys_at, ops_at, init_at, spec_at))) = (&spec.agg, agg_at) {
            // programs were placed in this order: keys, then per op its
            // arguments and filter
            let order: Vec<*const crate::program::Program> = a
                .keys
                .iter()
                .chain(a.ops.iter().flat_map(|o| o.args.iter().chain(&o.filter)))
                .map(|p| p as *const _)
                .collect();
            let lookup = |p: &crate::program::Program| {
                let i = order.iter().position(|q| std::ptr::eq(*q, p)).unwrap_or(0);
                (addr(agg_progs[i].0), addr(agg_progs[i].1))
            };
            let (keys, ops) = agg_reprs(a, &lookup);
            let (_, nwords) = a.layout();
            put(&mut img, keys_at, bytes_of(&keys));
            put(&mut img, ops_at, bytes_of(&ops));
            let repr = DevAggSpecRepr {
                nkeys: a.keys.len() as u32,
                nops: a.ops.len() as u32,
                nwords: nwords as u32,
                reserved: 0,
                keys: addr(keys_at),
                ops: addr(ops_at),
                init: addr(init_at),
            };
            put(&mut img, spec_at, bytes_of(&[repr]));
            agg = Some((spec_at, a.keys.len(), nwords));
            agg_wide_init = a.ops.iter().any(|o| o.kind == crate::agg::AggKind::SumNumWide).then(|| a.init_words());
        }
        {
            let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
            // SAFETY: the arena holds arena_len bytes.
            drv.check("cuMemcpyHtoD", unsafe {
                (drv.cuMemcpyHtoD)(base, img.bytes.as_ptr() as *const c_void, arena_len)
            })?;
        }
        Ok(GpuJoin {
            eng,
            outer_types: spec.outer_types.clone(),
            depths,
            inner,
            arena,
            arena_len,
            open_cols,
            ncols,
            params,
            nparams: pars.len() as u32,
            scan_qual_at,
            depth_reprs,
            key_refs_at,
            stage: None,
            out: None,
            out_cap: 0,
            input: None,
            in_cap: 0,
            counters: eng.buffer_zeroed(16)?,
            agg,
            agg_scratch: None,
            agg_wide_init,
            agg_scratch_len: 0,
            store_rows: None,
            store_pin: None,
        })
    }

    fn addr(&self, off: usize) -> CuDevicePtr {
        self.arena.ptr + off as u64
    }

    fn upload<T: Copy>(&self, off: usize, data: &[T]) -> Result<(), DeviceError> {
        let b = bytes_of(data);
        if b.is_empty() {
            return Ok(());
        }
        assert!(off + b.len() <= self.arena_len, "arena upload out of range");
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        // SAFETY: within the arena (checked).
        self.eng.drv.check("cuMemcpyHtoD", unsafe {
            (self.eng.drv.cuMemcpyHtoD)(self.addr(off), b.as_ptr() as *const c_void, b.len())
        })
    }

    fn download<T: Copy>(&self, off: usize, out: &mut [T]) -> Result<(), DeviceError> {
        let len = std::mem::size_of_val(out);
        if len == 0 {
            return Ok(());
        }
        assert!(off + len <= self.arena_len, "arena download out of range");
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        // SAFETY: within the arena (checked).
        self.eng.drv.check("cuMemcpyDtoH", unsafe {
            (self.eng.drv.cuMemcpyDtoH)(out.as_mut_ptr() as *mut c_void, self.addr(off), len)
        })
    }

    fn upload_depths(&self) -> Result<(), DeviceError> {
        let reprs: Vec<DevJoinDepthRepr> = self
            .depths
            .iter()
            .zip(&self.inner.tables)
            .map(|(d, t)| {
                let pref = |p: &(usize, usize, u32, u16)| program_ref_at(self, p);
                let mut keys = [DevProgramRefRepr::default(); MAX_KEYS];
                for (k, p) in d.outer_keys.iter().enumerate() {
                    keys[k] = pref(p);
                }
                DevJoinDepthRepr {
                    kind: d.kind as u32,
                    nkeys: d.outer_keys.len() as u32,
                    ninner: d.ninner,
                    nbuckets: t.nbuckets,
                    qual: d.qual.as_ref().map_or(DevProgramRefRepr::default(), pref),
                    keys,
                    buckets: self.inner.addr(t.buckets),
                    next: self.inner.addr(t.next),
                    hashes: self.inner.addr(t.hashes),
                    matched: d.matched.map_or(0, |(m, _)| self.addr(m)),
                }
            })
            .collect();
        self.upload(self.depth_reprs, &reprs)
    }

    fn reset_counters(&self) -> Result<(), DeviceError> {
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Sync);
        let drv = self.eng.drv;
        // SAFETY: the 16-byte counters buffer.
        unsafe {
            drv.check("cuMemsetD8", (drv.cuMemsetD8)(self.counters.ptr, 0, 8))?;
            drv.check("cuMemsetD8", (drv.cuMemsetD8)(self.counters.ptr + 8, 0xff, 8))
        }
    }

    /// The count made by the last step, or its error.
    fn check_error(&self) -> Result<u64, DeviceError> {
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Sync);
        let mut words = [0u64; 2];
        self.counters.download(&mut words)?;
        if words[1] != u64::MAX {
            return Err(step_error((words[1] & 0xff) as i32, (words[1] >> 8) as u32));
        }
        Ok(words[0] & 0xffff_ffff)
    }

    /// Stage the chunk's columns and the full column array, and the view
    /// of a chunk of GPU store rows (with its row versions when they are
    /// not in the copy, `copy` None); returns the device addresses of the
    /// column array and of the view (0 without one).
    fn stage_chunk(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        store: Option<(&StoreRows, Option<[u64; 4]>)>,
    ) -> Result<(CuDevicePtr, CuDevicePtr), DeviceError> {
        let n = nrows as usize;
        let mut img = Image::default();
        // the view's lists, row versions and the view itself
        let mut view_places = None;
        if let Some((rows, copy)) = store {
            let v = &rows.view;
            let lists = [img.place(bytes_of(&v.aborted)), img.place(bytes_of(&v.window)), img.place(&v.states)];
            let arrays = match (&rows.mvcc, copy) {
                (_, Some(a)) => Err(a),
                (StoreMvcc::Inline(m), None) => Ok([
                    img.place(bytes_of(&m.xmin)),
                    img.place(bytes_of(&m.cmin)),
                    img.place(bytes_of(&m.xmax)),
                    img.place(bytes_of(&m.cmax)),
                ]),
                (StoreMvcc::Copy(id), None) => return Err(devstore::no_copy(id)),
            };
            let at = img.reserve(std::mem::size_of::<DevStoreViewRepr>());
            view_places = Some((rows, lists, arrays, at));
        }
        let mut places = Vec::new();
        for c in outer {
            if c.resident.is_some() {
                // already in device memory (the service's column cache)
                places.push((c.type_id, 0, None, None));
                continue;
            }
            let v = img.place(c.values);
            let vb = c.validity.map(|b| img.place(&b[..n.div_ceil(8)]));
            let ob = c.offsets.map(|o| img.place(bytes_of(&o[..=n])));
            places.push((c.type_id, v, vb, ob));
        }
        let cols_at = img.reserve(self.ncols * std::mem::size_of::<DevColumnRepr>());
        let total = img.bytes.len();
        match self.stage.as_mut() {
            Some(g) => self.eng.grow_scratch(g, total)?,
            None => self.stage = Some(self.eng.scratch(total)?),
        }
        let stage = self.stage.as_ref().expect("taken above");
        let (base, stage_host) = (stage.dev(), stage.host());
        let at = |off: usize| base + off as u64;
        let mut cols: Vec<DevColumnRepr> = places
            .iter()
            .zip(outer)
            .map(|(&(t, v, vb, ob), c)| match c.resident {
                Some((values, validity, offsets)) => {
                    DevColumnRepr { type_id: t as u32, source: 0, values, validity, offsets }
                }
                None => DevColumnRepr {
                    type_id: t as u32,
                    source: 0,
                    values: at(v),
                    validity: vb.map_or(0, at),
                    offsets: ob.map_or(0, at),
                },
            })
            .collect();
        cols.extend(&self.inner.cols);
        let cb = bytes_of(&cols);
        img.bytes[cols_at..cols_at + cb.len()].copy_from_slice(cb);
        let mut view_ptr = 0;
        if let Some((rows, lists, arrays, view_at)) = view_places {
            let arrays = match arrays {
                Err(in_copy) => in_copy,
                Ok(placed) => placed.map(at),
            };
            let view = DevStoreViewRepr::new(rows, arrays, lists.map(at));
            let vb = bytes_of(std::slice::from_ref(&view));
            img.bytes[view_at..view_at + vb.len()].copy_from_slice(vb);
            view_ptr = at(view_at);
        }
        let drv = self.eng.drv;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        // SAFETY: the arena's pinned buffer holds at least total bytes;
        // its device copy as many.
        unsafe {
            std::ptr::copy_nonoverlapping(img.bytes.as_ptr(), stage_host, total);
            drv.check("cuMemcpyHtoD", (drv.cuMemcpyHtoD)(base, stage_host as *const c_void, total))?;
        }
        Ok((at(cols_at), view_ptr))
    }
}

impl GpuJoin<'_> {
    /// Copy each RIGHT or FULL depth's matched flags to their saved copy
    /// (`save`) or back.
    fn copy_matched(&self, save: bool) -> Result<(), DeviceError> {
        if !self.depths.iter().any(|d| d.matched.is_some() && d.ninner > 0) {
            return Ok(());
        }
        self.eng.make_current()?;
        let drv = self.eng.drv;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        for d in &self.depths {
            if let Some((at, saved)) = d.matched
                && d.ninner > 0
            {
                let (from, to) = if save { (at, saved) } else { (saved, at) };
                // SAFETY: two regions of `ninner` bytes within the arena,
                // apart; the stream is waited for below.
                drv.check("cuMemcpyDtoDAsync", unsafe {
                    (drv.cuMemcpyDtoDAsync)(self.addr(to), self.addr(from), d.ninner as usize, std::ptr::null_mut())
                })?;
            }
        }
        // SAFETY: the per-thread default stream, as every launch uses.
        drv.check("cuStreamSynchronize", unsafe { (drv.cuStreamSynchronize)(std::ptr::null_mut()) })
    }

    /// Each depth's kind and matched-row flags (empty where not kept).
    fn matched_rows(&self) -> Result<(Vec<JoinKind>, Vec<Vec<u8>>), DeviceError> {
        let kinds: Vec<JoinKind> = self.depths.iter().map(|d| d.kind).collect();
        let mut matched = Vec::new();
        for d in &self.depths {
            let mut m = vec![0u8; if d.matched.is_some() { d.ninner as usize } else { 0 }];
            if let Some((at, _)) = d.matched {
                self.download(at, &mut m)?;
            }
            matched.push(m);
        }
        Ok((kinds, matched))
    }
}

fn program_ref_at(j: &GpuJoin<'_>, p: &(usize, usize, u32, u16)) -> DevProgramRefRepr {
    DevProgramRefRepr { code: j.addr(p.0), ninstrs: p.2, result_type: p.3 as u32, data: j.addr(p.1) }
}

struct Steps<'s, 'e> {
    join: &'s mut GpuJoin<'e>,
    cols: CuDevicePtr,
    nsources: usize,
    /// The view of a chunk of GPU store rows, or 0.
    view: CuDevicePtr,
}

impl JoinSteps for Steps<'_, '_> {
    fn capacity(&self) -> usize {
        self.join.out_cap
    }

    fn grow(&mut self, n: usize) -> Result<(), DeviceError> {
        // as large as the other buffer too: the two trade places every
        // step, and a free (cuMemFree waits for the whole device, every
        // connection's work) per chunk would serialize the connections
        let cap = (n + n / 4).max(1024).max(self.join.in_cap);
        self.join.out = None;
        self.join.out = Some(self.join.eng.buffer(cap * self.nsources * 4)?);
        self.join.out_cap = cap;
        Ok(())
    }

    fn scan(&mut self, nrows: u32) -> Result<u64, DeviceError> {
        let j = &mut *self.join;
        j.reset_counters()?;
        if nrows == 0 {
            return Ok(0);
        }
        let mut p_qual = j.addr(j.scan_qual_at);
        let mut p_cols = self.cols;
        let mut p_ncols = j.ncols as u32;
        let mut p_params = j.addr(j.params);
        let mut p_nparams = j.nparams;
        let mut p_nrows = nrows;
        let mut p_view = self.view;
        let mut p_out = j.out.as_ref().expect("grown before use").ptr;
        let mut p_cap = j.out_cap as u32;
        let mut p_count = j.counters.ptr;
        let mut p_error = j.counters.ptr + 8;
        let mut kp =
            kparams!(p_qual, p_cols, p_ncols, p_params, p_nparams, p_nrows, p_view, p_out, p_cap, p_count, p_error);
        // SAFETY: kernel parameters in order; buffers outlive the call.
        unsafe { j.eng.launch_and_wait("kern_join_scan", j.eng.grid_for(nrows), &mut kp)? };
        j.check_error()
    }

    fn load(&mut self, rows: &[u32], nsources: usize, count: usize) -> Result<(), DeviceError> {
        let j = &mut *self.join;
        let out = j.out.as_ref().expect("grown before use").ptr;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        for s in 0..nsources {
            let part = &rows[s * count..(s + 1) * count];
            if part.is_empty() {
                continue;
            }
            // SAFETY: the output holds out_cap >= count entries per source.
            j.eng.drv.check("cuMemcpyHtoD", unsafe {
                (j.eng.drv.cuMemcpyHtoD)(out + (s * j.out_cap * 4) as u64, part.as_ptr() as *const c_void, count * 4)
            })?;
        }
        self.swap();
        Ok(())
    }

    fn probe(&mut self, depth: u32, n_in: u32) -> Result<u64, DeviceError> {
        let j = &mut *self.join;
        j.reset_counters()?;
        if n_in == 0 {
            return Ok(0);
        }
        let mut p_jd = j.addr(j.depth_reprs) + ((depth as usize - 1) * std::mem::size_of::<DevJoinDepthRepr>()) as u64;
        let mut p_depth = depth;
        let mut p_cols = self.cols;
        let mut p_ncols = j.ncols as u32;
        let mut p_params = j.addr(j.params);
        let mut p_nparams = j.nparams;
        let mut p_in = j.input.as_ref().expect("input exists").ptr;
        let mut p_stride = j.in_cap as u32;
        let mut p_n_in = n_in;
        let mut p_out = j.out.as_ref().expect("grown before use").ptr;
        let mut p_cap = j.out_cap as u32;
        let mut p_count = j.counters.ptr;
        let mut p_error = j.counters.ptr + 8;
        let mut kp = kparams!(
            p_jd, p_depth, p_cols, p_ncols, p_params, p_nparams, p_in, p_stride, p_n_in, p_out, p_cap, p_count, p_error
        );
        // SAFETY: kernel parameters in order; buffers outlive the call.
        unsafe { j.eng.launch_and_wait("kern_join_probe", j.eng.grid_for(n_in), &mut kp)? };
        j.check_error()
    }

    fn swap(&mut self) {
        let j = &mut *self.join;
        std::mem::swap(&mut j.out, &mut j.input);
        std::mem::swap(&mut j.out_cap, &mut j.in_cap);
        // a smaller output buffer stays: the step loop grows it before
        // writing when capacity() is short
    }

    fn aggregate(&mut self, nsources: usize, count: usize) -> Result<AggGroups, DeviceError> {
        self.run_agg(nsources, count)
    }

    fn fetch(&mut self, nsources: usize, count: usize) -> Result<Vec<u32>, DeviceError> {
        let j = &*self.join;
        let mut rows = vec![0u32; nsources * count];
        if count == 0 {
            return Ok(rows);
        }
        let input = j.input.as_ref().expect("input exists").ptr;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        for s in 0..nsources {
            // SAFETY: the input holds in_cap >= count entries per source.
            j.eng.drv.check("cuMemcpyDtoH", unsafe {
                (j.eng.drv.cuMemcpyDtoH)(
                    rows[s * count..].as_mut_ptr() as *mut c_void,
                    input + (s * j.in_cap * 4) as u64,
                    count * 4,
                )
            })?;
        }
        Ok(rows)
    }
}

impl Steps<'_, '_> {
    /// The aggregation steps over the `count` input combinations.
    fn run_agg(&mut self, nsources: usize, count: usize) -> Result<AggGroups, DeviceError> {
        let j = &mut *self.join;
        let (spec_at, nkeys, nwords) = j.agg.ok_or_else(no_agg)?;
        if count == 0 {
            return Ok(AggGroups { nsources, nkeys, nwords, ..AggGroups::default() });
        }
        let nslots = table_slots(count);
        // scratch: keybuf | hashes | table | words | out_rows | out_words |
        // out_keys | exceptions (count, then combinations)
        let dsz = std::mem::size_of::<DevDatumRepr>();
        let sizes = [
            count * nkeys.max(1) * dsz,
            count * 4,
            nslots * 4,
            nslots * nwords * 8,
            nsources * count * 4,
            count * nwords * 8,
            count * nkeys.max(1) * dsz,
            (count + 1) * 4,
        ];
        let mut offs = [0usize; 8];
        let mut total = 0;
        for (i, sz) in sizes.iter().enumerate() {
            offs[i] = total;
            total += sz.next_multiple_of(256);
        }
        if j.agg_scratch_len < total {
            j.agg_scratch = None;
            let len = total + total / 4;
            j.agg_scratch = Some(j.eng.buffer(len)?);
            j.agg_scratch_len = len;
        }
        let base = j.agg_scratch.as_ref().expect("allocated above").ptr;
        let at = |i: usize| base + offs[i] as u64;
        let mut p_spec = j.addr(spec_at);
        let mut p_nslots = nslots as u32;
        let mut p_table = at(2);
        let mut p_words = at(3);
        let mut kp = kparams!(p_spec, p_nslots, p_table, p_words);
        // SAFETY: kernel parameters in order; buffers outlive the calls.
        unsafe { j.eng.launch_and_wait("kern_agg_init", j.eng.grid_for(nslots as u32), &mut kp)? };

        let mut p_cols = self.cols;
        let mut p_ncols = j.ncols as u32;
        let mut p_params = j.addr(j.params);
        let mut p_nparams = j.nparams;
        let mut p_in = j.input.as_ref().expect("input exists").ptr;
        let mut p_stride = j.in_cap as u32;
        let mut p_nsources = nsources as u32;
        let mut p_n = count as u32;
        let mut p_keybuf = at(0);
        let mut p_hashes = at(1);
        let mut p_error = j.counters.ptr + 8;
        j.reset_counters()?;
        let mut kp = kparams!(
            p_spec, p_cols, p_ncols, p_params, p_nparams, p_in, p_stride, p_nsources, p_n, p_keybuf, p_hashes, p_error
        );
        // SAFETY: as above.
        unsafe { j.eng.launch_and_wait("kern_agg_keys", j.eng.grid_for(count as u32), &mut kp)? };
        j.check_error()?;

        let mut p_mask = nslots as u32 - 1;
        let wide = j.agg_wide_init.is_some();
        let mut p_exc = if wide { at(7) } else { 0 };
        if wide {
            let drv = j.eng.drv;
            // SAFETY: the exception count lies in the scratch buffer.
            drv.check("cuMemsetD8", unsafe { (drv.cuMemsetD8)(at(7), 0, 4) })?;
        }
        let mut p_local = local_slots(nwords);
        let shared = if p_local > 0 { local_table_bytes(p_local, nwords) as u32 } else { 0 };
        let grid = if p_local > 0 { j.eng.grid_resident(count as u32) } else { j.eng.grid_for(count as u32) };
        let mut kp = kparams!(
            p_spec, p_cols, p_ncols, p_params, p_nparams, p_in, p_stride, p_nsources, p_n, p_keybuf, p_hashes, p_table,
            p_mask, p_words, p_exc, p_local, p_error
        );
        // SAFETY: as above; `shared` bytes hold the block table of p_local
        // slots the kernel lays out.
        unsafe { j.eng.launch_shared_and_wait("kern_agg_rows", grid, shared, &mut kp)? };
        j.check_error()?;
        // the exceptions' combinations (rows of each source, keys), read
        // back while the input and the keys are still there
        let mut exceptions = None;
        if wide {
            let drv = j.eng.drv;
            let mut n = [0u32; 1];
            // SAFETY: the exception count lies in the scratch buffer.
            drv.check("cuMemcpyDtoH", unsafe { (drv.cuMemcpyDtoH)(n.as_mut_ptr().cast(), at(7), 4) })?;
            let n = (n[0] as usize).min(count);
            if n > 0 {
                let mut combos = vec![0u32; n];
                let mut input = vec![0u32; nsources * count];
                let mut keybuf = vec![DevDatumRepr::default(); count * nkeys];
                // SAFETY: n combinations after the count; the input holds
                // `count` rows per source at stride in_cap; keybuf count *
                // nkeys datums.
                unsafe {
                    drv.check("cuMemcpyDtoH", (drv.cuMemcpyDtoH)(combos.as_mut_ptr().cast(), at(7) + 4, n * 4))?;
                    for s in 0..nsources {
                        drv.check(
                            "cuMemcpyDtoH",
                            (drv.cuMemcpyDtoH)(
                                input[s * count..].as_mut_ptr().cast(),
                                p_in + (s * j.in_cap * 4) as u64,
                                count * 4,
                            ),
                        )?;
                    }
                    if nkeys > 0 {
                        drv.check(
                            "cuMemcpyDtoH",
                            (drv.cuMemcpyDtoH)(keybuf.as_mut_ptr().cast(), at(0), count * nkeys * dsz),
                        )?;
                    }
                }
                exceptions = Some((combos, input, keybuf));
            }
        }

        j.reset_counters()?;
        let mut p_out_rows = at(4);
        let mut p_out_keys = at(6);
        let mut p_out_words = at(5);
        let mut p_out_cap = count as u32;
        let mut p_count = j.counters.ptr;
        let mut kp = kparams!(
            p_spec,
            p_cols,
            p_ncols,
            p_params,
            p_nparams,
            p_in,
            p_stride,
            p_nsources,
            p_table,
            p_words,
            p_keybuf,
            p_nslots,
            p_out_rows,
            p_out_keys,
            p_out_words,
            p_out_cap,
            p_count,
            p_error
        );
        // SAFETY: as above.
        unsafe { j.eng.launch_and_wait("kern_agg_collect", j.eng.grid_for(nslots as u32), &mut kp)? };
        let g = (j.check_error()? as usize).min(count);
        let mut rows = vec![0u32; nsources * g];
        let mut words = vec![0u64; g * nwords];
        let mut keys = vec![DevDatumRepr::default(); g * nkeys];
        let drv = j.eng.drv;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        if g > 0 {
            for s in 0..nsources {
                // SAFETY: out_rows holds `count` >= g entries per source.
                drv.check("cuMemcpyDtoH", unsafe {
                    (drv.cuMemcpyDtoH)(rows[s * g..].as_mut_ptr() as *mut c_void, at(4) + (s * count * 4) as u64, g * 4)
                })?;
            }
            // SAFETY: out_words holds count * nwords >= g * nwords words.
            drv.check("cuMemcpyDtoH", unsafe {
                (drv.cuMemcpyDtoH)(words.as_mut_ptr() as *mut c_void, at(5), g * nwords * 8)
            })?;
            if nkeys > 0 {
                // SAFETY: out_keys holds count * nkeys >= g * nkeys datums.
                drv.check("cuMemcpyDtoH", unsafe {
                    (drv.cuMemcpyDtoH)(keys.as_mut_ptr() as *mut c_void, at(6), g * nkeys * dsz)
                })?;
            }
        }
        let keys = keys.iter().map(DevDatumRepr::key_value).collect();
        let mut groups = AggGroups {
            nsources,
            count: g,
            rows,
            nkeys,
            keys,
            nwords,
            words,
            stage_counts: Vec::new(),
            exceptions: Vec::new(),
        };
        if let (Some((combos, input, keybuf)), Some(init)) = (exceptions, j.agg_wide_init.as_ref()) {
            groups.add_exception_combos(&combos, |s, k| input[s * count + k], &keybuf, init);
        }
        Ok(groups)
    }
}

impl GpuJoin<'_> {
    /// The copy `id` names: the one this session holds when it is that
    /// copy, else the GPU's, which the session then holds.
    fn pinned_copy(&mut self, id: &devstore::StoreId) -> Result<crate::devstore_gpu::SharedStore, DeviceError> {
        if let Some(p) = &self.store_pin
            && p.read().unwrap_or_else(|e| e.into_inner()).id == *id
        {
            return Ok(p.clone());
        }
        let copy = self.eng.stores.get(id).ok_or_else(|| devstore::no_copy(id))?;
        self.store_pin = Some(copy.clone());
        Ok(copy)
    }

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
        self.eng.make_current()?;
        let rows = self.store_rows.clone();
        // a chunk of a store's copy: its columns and row versions in the
        // copy, read-locked until the chunk is done (its buffers stay in
        // place: a batch bringing it up to date waits)
        let copy = match rows.as_ref().map(|r| &r.mvcc) {
            Some(StoreMvcc::Copy(id)) => Some(self.pinned_copy(id)?),
            _ => None,
        };
        let guard = copy.as_ref().map(|c| c.read().unwrap_or_else(|p| p.into_inner()));
        let mut resolved: Vec<ColumnData<'_>> = outer.to_vec();
        let mut arrays = None;
        match (&rows, &guard) {
            (Some(r), Some(st)) => {
                devstore::check_rows(r, nrows, st.rows())?;
                st.resolve(&mut resolved, r.first_row)?;
                arrays = Some(st.versions_at(r.first_row));
            }
            (Some(r), None) => devstore::check_rows(r, nrows, r.first_row + nrows as u64)?,
            _ => {}
        }
        if resolved.iter().any(|c| c.store.is_some() && c.resident.is_none()) {
            return Err(DeviceError::InvalidRequest("a store column outside a chunk of the store's copy".into()));
        }
        validate_chunk(&self.outer_types, &resolved, nrows, selection, crate::engine::Holds::Device)?;
        let (cols, view) = self.stage_chunk(&resolved, nrows, rows.as_ref().map(|r| (r, arrays)))?;
        let ndepths = self.depths.len();
        let mut steps = Steps { join: self, cols, nsources: ndepths + 1, view };
        let out = run_chunk(&mut steps, ndepths, nrows, selection, finish);
        drop(guard);
        out
    }

    /// The unmatched inner rows through the later depths, finished as asked.
    fn run_unmatched_rows(&mut self, finish: Finish) -> Result<Output, DeviceError> {
        if finish == Finish::Aggregate && self.agg.is_none() {
            return Err(no_agg());
        }
        self.eng.make_current()?;
        let (kinds, matched) = self.matched_rows()?;
        let cols = self.addr(self.open_cols);
        let ndepths = self.depths.len();
        let mut steps = Steps { join: self, cols, nsources: ndepths + 1, view: 0 };
        run_unmatched(&mut steps, &kinds, &matched, finish)
    }
}

impl JoinSession for GpuJoin<'_> {
    fn probe(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<Combos, DeviceError> {
        self.run(outer, nrows, selection, Finish::Fetch)?.combos()
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

    fn unmatched(&mut self) -> Result<Combos, DeviceError> {
        self.run_unmatched_rows(Finish::Fetch)?.combos()
    }

    fn reset_matched(&mut self) -> Result<(), DeviceError> {
        self.eng.make_current()?;
        let drv = self.eng.drv;
        for d in &self.depths {
            if let Some((at, saved)) = d.matched
                && d.ninner > 0
            {
                // SAFETY: within the arena.
                drv.check("cuMemsetD8", unsafe { (drv.cuMemsetD8)(self.addr(at), 0, d.ninner as usize) })?;
                // SAFETY: as above.
                drv.check("cuMemsetD8", unsafe { (drv.cuMemsetD8)(self.addr(saved), 0, d.ninner as usize) })?;
            }
        }
        Ok(())
    }

    fn save_matched(&mut self) -> Result<(), DeviceError> {
        self.copy_matched(true)
    }

    fn restore_matched(&mut self) -> Result<(), DeviceError> {
        self.copy_matched(false)
    }

    fn matched_bits(&mut self) -> Result<Vec<Vec<u64>>, DeviceError> {
        self.eng.make_current()?;
        let (_, flags) = self.matched_rows()?;
        Ok(flags.iter().map(|f| crate::join::flags_to_bits(f)).collect())
    }

    fn merge_matched(&mut self, bits: &[Vec<u64>]) -> Result<(), DeviceError> {
        self.eng.make_current()?;
        let (_, mut flags) = self.matched_rows()?;
        for ((d, f), b) in self.depths.iter().zip(&mut flags).zip(bits) {
            if let Some((at, _)) = d.matched
                && !f.is_empty()
            {
                crate::join::merge_bits_into(f, b);
                self.upload(at, f)?;
            }
        }
        Ok(())
    }

    fn inner_bytes(&self) -> usize {
        self.arena_len + self.inner.len
    }

    fn store_sync(&mut self, batch: &devstore::StoreSync<'_>) -> Result<Option<devstore::StoreState>, DeviceError> {
        self.eng.make_current()?;
        let (state, copy) = self.eng.stores.sync(self.eng, batch)?;
        self.store_pin = Some(copy);
        Ok(Some(state))
    }

    fn set_store_rows(&mut self, rows: Option<StoreRows>) -> Result<(), DeviceError> {
        if let Some(StoreMvcc::Copy(id)) = rows.as_ref().map(|r| &r.mvcc) {
            self.pinned_copy(id)?;
        }
        self.store_rows = rows;
        Ok(())
    }
}

// the program reference layout used by both engines
const _: () = assert!(std::mem::size_of::<DevProgramRefRepr>() == 24);
const _: () = assert!(std::mem::size_of::<DevJoinDepthRepr>() == 16 + 24 * (MAX_KEYS + 1) + 32);
