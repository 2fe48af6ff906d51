//! The heap direct path, engine side: blocks of a heap table's segment
//! file that the GPU service read itself (into device memory for a GPU,
//! host memory for the CPU engine), taken apart into device columns by
//! the heap kernels (device/kernels/heap.cu), one source for both
//! engines.
//!
//! Owns the tuple layout a backend sends ([`HeapLayout`]), its checks,
//! the two kernel passes (count, deform) on each engine, and which blocks
//! the kernels refused (read again by the backend through the buffer
//! manager).  What a block may be read this way for (all-visible, not
//! dirty in shared buffers) is the backend's business (source/heap_direct.rs of
//! the extension).

use std::ffi::c_void;

use crate::agg::AggGroups;
use crate::catalog::type_info;
use crate::engine::ColumnData;
use crate::error::DeviceError;
use crate::join::Combos;

/// A block the kernels did not take (device/kernels/heap.cu).
pub const HEAP_BLOCK_FALLBACK: u32 = u32::MAX;

/// An output column's value is the attribute's bytes as stored (a
/// fixed-width type the device holds as PostgreSQL stores it).
pub const CONV_COPY: u8 = 0;
/// An output column's value is a numeric varlena decoded into the device's
/// 24 bytes (a value the device cannot hold sends its block to the buffer
/// manager).
pub const CONV_NUMERIC: u8 = 1;

/// An output column's value is a varlena's bytes after its header (text,
/// varchar, bpchar, bytea), a variable-length column (a compressed or
/// out-of-line value sends its block to the buffer manager).
pub const CONV_VARLENA: u8 = 2;

/// Variable-length output columns a layout may have (HEAP_MAX_VAR).
pub const MAX_VAR: usize = 8;

/// Values of a variable-length column, one per row or group (None: NULL).
pub type VarValues = Vec<Option<Vec<u8>>>;

/// Blocks one request may carry.
pub const MAX_BLOCKS: usize = 1 << 16;

/// One attribute of a heap tuple descriptor, up to the last output
/// column (DevHeapAttr of heap.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapAttr {
    /// attlen: > 0 fixed, -1 varlena, -2 cstring.
    pub attlen: i16,
    /// Alignment in bytes: 1, 2, 4 or 8.
    pub attalign: u8,
    /// How an output column's value is made: [`CONV_COPY`],
    /// [`CONV_NUMERIC`] or [`CONV_VARLENA`] (zero for other attributes).
    pub conv: u8,
    /// The output column it goes to, or -1.
    pub column: i32,
}

/// How a relation's tuples lie and which columns a request takes out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeapLayout {
    /// Bytes of a block (BLCKSZ).
    pub blcksz: u32,
    /// Attributes 1..=n, n the last one an output column reads.
    pub attrs: Vec<HeapAttr>,
    /// Device type of each output column (fixed-width: stored in the
    /// tuple as the device holds it; a numeric; or a variable-length
    /// type, its varlena's bytes).
    pub types: Vec<u16>,
    /// Variable-length output columns whose value at each group's
    /// representative row comes back with the groups
    /// ([`HeapProbed::keys`]): the grouping keys the backend reads from
    /// the scanned table's row, which it does not have.
    pub keys: Vec<u32>,
}

impl HeapLayout {
    /// Each output column's width (0: variable-length); an error for a
    /// layout the kernels cannot take.
    pub fn widths(&self) -> Result<Vec<usize>, DeviceError> {
        let bad = |m: String| Err(DeviceError::InvalidRequest(format!("heap layout: {m}")));
        if !(1024..=32768).contains(&self.blcksz) || !self.blcksz.is_power_of_two() {
            return bad(format!("block size {}", self.blcksz));
        }
        if self.attrs.is_empty() || self.attrs.len() > 1600 || self.types.is_empty() {
            return bad(format!("{} attributes, {} columns", self.attrs.len(), self.types.len()));
        }
        let mut widths = Vec::with_capacity(self.types.len());
        for (i, &t) in self.types.iter().enumerate() {
            let Some(info) = type_info(t) else {
                return bad(format!("column {i} has unknown device type {t}"));
            };
            widths.push(info.width);
        }
        if self.var_columns().len() > MAX_VAR {
            return bad(format!("more than {MAX_VAR} variable-length columns"));
        }
        let mut seen = vec![false; self.types.len()];
        for (k, a) in self.attrs.iter().enumerate() {
            if !matches!(a.attalign, 1 | 2 | 4 | 8) || a.attlen == 0 || a.attlen < -2 {
                return bad(format!("attribute {} length {} alignment {}", k + 1, a.attlen, a.attalign));
            }
            if a.column < 0 {
                if a.conv != CONV_COPY {
                    return bad(format!("attribute {} is converted but goes to no column", k + 1));
                }
                continue;
            }
            let c = a.column as usize;
            if c >= widths.len() || seen[c] {
                return bad(format!("attribute {} goes to column {}", k + 1, a.column));
            }
            let fits = match a.conv {
                CONV_COPY => a.attlen > 0 && a.attlen as usize == widths[c],
                CONV_NUMERIC => a.attlen == -1 && self.types[c] == crate::program::type_id("NUMERIC"),
                CONV_VARLENA => a.attlen == -1 && widths[c] == 0,
                _ => false,
            };
            if !fits {
                return bad(format!("attribute {} (length {}) cannot fill column {c}", k + 1, a.attlen));
            }
            seen[c] = true;
        }
        if seen.iter().any(|s| !s) {
            return bad("a column no attribute fills".into());
        }
        if let Some(k) = self.keys.iter().find(|&&k| widths.get(k as usize) != Some(&0)) {
            return bad(format!("key column {k} is not a variable-length column"));
        }
        Ok(widths)
    }

    /// The variable-length output columns, in the kernels' order (their
    /// attributes').
    pub fn var_columns(&self) -> Vec<usize> {
        self.attrs.iter().filter(|a| a.conv == CONV_VARLENA && a.column >= 0).map(|a| a.column as usize).collect()
    }
}

/// What a heap request returns: the groups of the rows the engine took
/// (a request that aggregates) or their combinations (one that only
/// joins), and the blocks (as the request numbered them in the file) it
/// did not take.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeapProbed {
    /// The aggregated groups (a request that aggregates).
    pub groups: AggGroups,
    /// The combinations (a request that only joins): outer row r is the
    /// r-th tuple the blocks gave, in block order and, within a block, in
    /// line pointer order of its LP_NORMAL items (`counts`).
    pub combos: Combos,
    /// A request that only joins: per block of the request, the tuples
    /// taken out of it ([`HEAP_BLOCK_FALLBACK`] for a refused block), so
    /// that the backend finds each combination's tuple in its page; empty
    /// for a request that aggregates.
    pub counts: Vec<u32>,
    /// Rows the kernels took out of the blocks.
    pub nrows: u32,
    /// Blocks to read through the buffer manager instead.
    pub fallback: Vec<u32>,
    /// keys[g * layout.keys.len() + j]: the value of key column j at
    /// group g's representative row (None: NULL).
    pub keys: VarValues,
    /// A request that only joins: the tuples its combinations read, as
    /// the engine read them from the blocks, so that the backend forms its
    /// rows without reading the pages again.
    pub tuples: HeapTuples,
}

/// The tuples a join-only heap request's combinations read (outer rows,
/// each once, in ascending order): their bytes as the pages hold them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeapTuples {
    /// The rows (numbered as the combinations number them), ascending.
    pub rows: Vec<u32>,
    /// Each row's offset number in its page (from 1).
    pub lineoffs: Vec<u32>,
    /// Where each row's bytes start in `bytes`, and where the last ends
    /// (`rows.len() + 1` offsets).
    pub starts: Vec<u32>,
    /// The tuples, one after another.
    pub bytes: Vec<u8>,
}

impl HeapTuples {
    /// Row `j`'s tuple (the `j`-th of `rows`).
    pub fn tuple(&self, j: usize) -> &[u8] {
        &self.bytes[self.starts[j] as usize..self.starts[j + 1] as usize]
    }

    /// Whether the parts agree with one another (`rows` ascending, every
    /// tuple within `bytes`).
    pub fn is_consistent(&self) -> bool {
        let n = self.rows.len();
        self.lineoffs.len() == n
            && self.starts.len() == n + 1
            && self.rows.windows(2).all(|w| w[0] < w[1])
            && self.starts.windows(2).all(|w| w[0] <= w[1])
            && self.starts.first() == Some(&0)
            && self.starts.last().map(|&e| e as usize) == Some(self.bytes.len())
    }
}

/// The outer rows (source 0) the combinations read, each once, ascending
/// (a NULL-extended outer side, which a probe never returns, reads none).
pub fn combo_outer_rows(combos: &Combos) -> Vec<u32> {
    let null_row = crate::join::NULL_ROW;
    let mut rows: Vec<u32> = combos.rows[..combos.count].iter().copied().filter(|&r| r != null_row).collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Where each of `rows` (ascending, numbered across the blocks by
/// `counts`) lies: its block's index and its ordinal among the block's
/// tuples, as pairs.
pub fn row_places(counts: &[u32], rows: &[u32]) -> Result<Vec<u32>, DeviceError> {
    let mut places = Vec::with_capacity(rows.len() * 2);
    let (mut b, mut first) = (0usize, 0u64);
    for &r in rows {
        loop {
            let Some(&c) = counts.get(b) else {
                return Err(DeviceError::InvalidRequest(format!("row {r} past the request's tuples")));
            };
            let c = if c == HEAP_BLOCK_FALLBACK { 0 } else { c as u64 };
            if (r as u64) < first + c {
                break;
            }
            first += c;
            b += 1;
        }
        places.push(b as u32);
        places.push((r as u64 - first) as u32);
    }
    Ok(places)
}

/// Each located tuple's start in the bytes of [`HeapTuples`] (from the
/// kernels' `loc`, three words a tuple: offset number, offset, length), or
/// an error for one the page did not hold.
fn tuple_starts(loc: &[u32]) -> Result<(Vec<u32>, Vec<u32>), DeviceError> {
    let n = loc.len() / 3;
    let (mut lineoffs, mut starts, mut at) = (Vec::with_capacity(n), Vec::with_capacity(n + 1), 0u64);
    for l in loc.chunks_exact(3) {
        if l[0] == 0 || l[2] == 0 {
            return Err(DeviceError::InvalidRequest("a page lacks a tuple its count included".into()));
        }
        lineoffs.push(l[0]);
        starts.push(at as u32);
        at += l[2] as u64;
    }
    let end = u32::try_from(at)
        .map_err(|_| DeviceError::InvalidRequest("the tuples of a heap request exceed 4 GB".into()))?;
    starts.push(end);
    Ok((lineoffs, starts))
}

/// The layout as the kernels take it, as raw pointers (kept alive by the caller).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HeapColumnRepr {
    pub values: u64,
    pub validity: u64,
    pub offsets: u64,
    pub width: u32,
    pub pad: u32,
}

unsafe extern "C" {
    fn pgstrom_cpu_heap_count(
        pages: *const u8,
        nblocks: u32,
        blcksz: u32,
        attrs: *const HeapAttr,
        nattrs: u32,
        counts: *mut u32,
        nvar: u32,
        vbytes: *mut u32,
    );
    fn pgstrom_cpu_heap_locate(pages: *const u8, nblocks: u32, blcksz: u32, n: u32, place: *const u32, loc: *mut u32);
    fn pgstrom_cpu_heap_deform(
        pages: *const u8,
        nblocks: u32,
        blcksz: u32,
        attrs: *const HeapAttr,
        nattrs: u32,
        counts: *const u32,
        row_base: *const u32,
        cols: *const HeapColumnRepr,
        nvar: u32,
        vbase: *const u32,
    );
}

/// Where each block's rows start, the total, and the refused blocks
/// (indexes into the request's list).
pub(crate) fn row_bases(counts: &[u32]) -> Result<(Vec<u32>, u32, Vec<usize>), DeviceError> {
    let (mut bases, mut total, mut refused) = (Vec::with_capacity(counts.len()), 0u64, Vec::new());
    for (i, &c) in counts.iter().enumerate() {
        bases.push(total as u32);
        if c == HEAP_BLOCK_FALLBACK {
            refused.push(i);
        } else {
            total += c as u64;
        }
    }
    let total = u32::try_from(total)
        .map_err(|_| DeviceError::InvalidRequest("the blocks of a heap request hold too many tuples".into()))?;
    Ok((bases, total, refused))
}

/// Where each block's bytes of each of the `nvar` variable-length columns
/// start (`vbytes` and the result: block-major, `nvar` per block), and
/// each column's total; refused blocks count nothing.
pub(crate) fn byte_bases(counts: &[u32], vbytes: &[u32], nvar: usize) -> Result<(Vec<u32>, Vec<u32>), DeviceError> {
    let mut totals = vec![0u64; nvar];
    let mut bases = Vec::with_capacity(vbytes.len());
    for (b, &c) in counts.iter().enumerate() {
        for (v, total) in totals.iter_mut().enumerate() {
            bases.push(*total as u32);
            if c != HEAP_BLOCK_FALLBACK {
                *total += vbytes[b * nvar + v] as u64;
            }
        }
    }
    let totals = totals
        .into_iter()
        .map(|t| {
            u32::try_from(t).map_err(|_| {
                DeviceError::InvalidRequest("the blocks of a heap request hold over 4 GB of one column".into())
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((bases, totals))
}

/// Columns taken out of blocks in host memory (the CPU engine).
pub struct HostHeap {
    /// Rows.
    pub nrows: u32,
    /// Per column: values, validity as words (bit i of word i/32: row i
    /// is not NULL; the Arrow bitmap's bytes on a little-endian host), and
    /// a variable-length column's nrows + 1 offsets (else empty).
    pub columns: Vec<(Vec<u8>, Vec<u32>, Vec<u32>)>,
    /// Indexes of the blocks the kernels refused.
    pub refused: Vec<usize>,
    /// Per block, its tuples (HEAP_BLOCK_FALLBACK: refused).
    pub counts: Vec<u32>,
}

impl HostHeap {
    /// Take apart `nblocks` blocks at `pages` by `layout`.
    pub fn deform(pages: &[u8], layout: &HeapLayout) -> Result<HostHeap, DeviceError> {
        let widths = layout.widths()?;
        let bs = layout.blcksz as usize;
        if !pages.len().is_multiple_of(bs) || pages.len() / bs > MAX_BLOCKS {
            return Err(DeviceError::InvalidRequest(format!("{} bytes of heap blocks", pages.len())));
        }
        let nblocks = pages.len() / bs;
        let vars = layout.var_columns();
        let nvar = vars.len();
        let mut counts = vec![0u32; nblocks];
        let mut vbytes = vec![0u32; nblocks * nvar];
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Heap);
        // SAFETY: nblocks blocks of blcksz bytes; counts holds nblocks,
        // vbytes nblocks * nvar.
        unsafe {
            pgstrom_cpu_heap_count(
                pages.as_ptr(),
                nblocks as u32,
                layout.blcksz,
                layout.attrs.as_ptr(),
                layout.attrs.len() as u32,
                counts.as_mut_ptr(),
                nvar as u32,
                vbytes.as_mut_ptr(),
            )
        };
        let (bases, nrows, refused) = row_bases(&counts)?;
        let (vbases, vtotals) = byte_bases(&counts, &vbytes, nvar)?;
        let n = nrows as usize;
        let mut columns: Vec<(Vec<u8>, Vec<u32>, Vec<u32>)> = widths
            .iter()
            .enumerate()
            .map(|(c, &w)| match vars.iter().position(|&k| k == c) {
                Some(v) => (vec![0u8; vtotals[v] as usize], vec![0u32; n.div_ceil(32)], vec![0u32; n + 1]),
                None => (vec![0u8; n * w], vec![0u32; n.div_ceil(32)], Vec::new()),
            })
            .collect();
        let reprs: Vec<HeapColumnRepr> = columns
            .iter_mut()
            .zip(&widths)
            .map(|((v, b, o), &w)| HeapColumnRepr {
                values: v.as_mut_ptr() as u64,
                validity: b.as_mut_ptr() as u64,
                offsets: if o.is_empty() { 0 } else { o.as_mut_ptr() as u64 },
                width: w as u32,
                pad: 0,
            })
            .collect();
        // SAFETY: as above; each column holds nrows rows (the counts
        // pass's totals: a variable-length one its blocks' bytes and
        // nrows + 1 offsets), validity (nrows + 31) / 32 words.
        unsafe {
            pgstrom_cpu_heap_deform(
                pages.as_ptr(),
                nblocks as u32,
                layout.blcksz,
                layout.attrs.as_ptr(),
                layout.attrs.len() as u32,
                counts.as_ptr(),
                bases.as_ptr(),
                reprs.as_ptr(),
                nvar as u32,
                vbases.as_ptr(),
            )
        };
        Ok(HostHeap { nrows, columns, refused, counts })
    }

    /// The tuples of `rows` (ascending, numbered as the rows taken out of
    /// `pages` by [`Self::deform`] are) as the pages hold them.
    pub fn tuples(&self, pages: &[u8], blcksz: u32, rows: Vec<u32>) -> Result<HeapTuples, DeviceError> {
        let bs = blcksz as usize;
        let nblocks = pages.len() / bs.max(1);
        if bs == 0 || nblocks != self.counts.len() {
            return Err(DeviceError::InvalidRequest(format!("{} bytes of heap blocks", pages.len())));
        }
        let places = row_places(&self.counts, &rows)?;
        let mut loc = vec![0u32; rows.len() * 3];
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Heap);
        // SAFETY: nblocks blocks of blcksz bytes; places holds 2 words a
        // row (blocks below nblocks: row_places), loc 3.
        unsafe {
            pgstrom_cpu_heap_locate(
                pages.as_ptr(),
                nblocks as u32,
                blcksz,
                rows.len() as u32,
                places.as_ptr(),
                loc.as_mut_ptr(),
            )
        };
        let (lineoffs, starts) = tuple_starts(&loc)?;
        let mut bytes = Vec::with_capacity(*starts.last().unwrap_or(&0) as usize);
        for (p, l) in places.chunks_exact(2).zip(loc.chunks_exact(3)) {
            let at = p[0] as usize * bs + l[1] as usize;
            bytes.extend_from_slice(&pages[at..at + l[2] as usize]);
        }
        Ok(HeapTuples { rows, lineoffs, starts, bytes })
    }

    /// The values of variable-length column `column` at `rows` (None:
    /// NULL).
    pub fn var_values_at(&self, column: usize, rows: &[u32]) -> VarValues {
        let (v, b, o) = &self.columns[column];
        rows.iter()
            .map(|&r| {
                let r = r as usize;
                ((b[r / 32] >> (r % 32)) & 1 == 1).then(|| v[o[r] as usize..o[r + 1] as usize].to_vec())
            })
            .collect()
    }

    /// The columns as an engine takes them.
    pub fn column_data<'a>(&'a self, layout: &HeapLayout) -> Vec<ColumnData<'a>> {
        self.columns
            .iter()
            .zip(&layout.types)
            .map(|((v, b, o), &t)| ColumnData {
                type_id: t,
                values: v,
                validity: Some(words_as_bytes(b)),
                offsets: (!o.is_empty()).then_some(o.as_slice()),
                file: None,
                resident: None,
                store: None,
            })
            .collect()
    }
}

/// Validity words as the Arrow bitmap's bytes (a little-endian host).
fn words_as_bytes(w: &[u32]) -> &[u8] {
    // SAFETY: u32 has no padding; the bytes live as long as the words.
    unsafe { std::slice::from_raw_parts(w.as_ptr() as *const u8, std::mem::size_of_val(w)) }
}

/// Columns taken out of blocks in a GPU's memory.
pub(crate) struct DeviceHeap<'a> {
    pub nrows: u32,
    /// Per column (values, validity, offsets or 0) device addresses,
    /// valid while the arenas live.
    pub columns: Vec<(u64, u64, u64)>,
    /// Per column, the bytes of its values.
    pub bytes: Vec<usize>,
    /// The pages, and the columns with the kernels' work.
    pub arenas: [crate::gpu::ScratchGuard<'a>; 2],
    pub refused: Vec<usize>,
    /// Per block, its tuples (HEAP_BLOCK_FALLBACK: refused).
    pub counts: Vec<u32>,
}

impl crate::gpu::GpuEngine {
    /// Take apart the `nblocks` blocks in `pages` (an arena of this
    /// engine, kept with the result) by `layout`.  Every buffer comes from
    /// the engine's scratch arenas (never freed per request: a
    /// `cuMemFree` waits for the whole device).  The GPU's context is
    /// current.
    pub(crate) fn heap_deform<'g>(
        &'g self,
        pages: crate::gpu::ScratchGuard<'g>,
        nblocks: usize,
        layout: &HeapLayout,
    ) -> Result<DeviceHeap<'g>, DeviceError> {
        let widths = layout.widths()?;
        if nblocks > MAX_BLOCKS || nblocks * layout.blcksz as usize > pages.len() {
            return Err(DeviceError::InvalidRequest(format!("{nblocks} heap blocks in one request")));
        }
        let drv = self.drv;
        let vars = layout.var_columns();
        let nvar = vars.len();
        let align = |n: usize| n.next_multiple_of(256);
        let attrs_bytes = std::mem::size_of_val(layout.attrs.as_slice());
        // arena: attrs | counts | per block bytes of the variable-length
        // columns | bases | their byte bases | column reprs | per column
        // values, validity (and offsets)
        let counts_off = align(attrs_bytes);
        let vbytes_off = counts_off + align(nblocks * 4);
        let bases_off = vbytes_off + align(nblocks * nvar * 4);
        let vbases_off = bases_off + align(nblocks * 4);
        let reprs_off = vbases_off + align(nblocks * nvar * 4);
        let cols_off = reprs_off + align(widths.len() * std::mem::size_of::<HeapColumnRepr>());
        let mut work = self.scratch(cols_off)?;
        let stage = |work: &crate::gpu::ScratchGuard<'_>, parts: &[(usize, &[u8])], upto: usize| {
            stage_parts(drv, work, parts, upto)
        };
        let attrs_b = pod_bytes(&layout.attrs);
        let zeros = vec![0u8; nblocks * 4];
        stage(&work, &[(0, attrs_b), (counts_off, &zeros)], bases_off)?;
        let grid = self.grid_for((nblocks as u32).saturating_mul(32));
        let (mut p_pages, mut n, mut bs, mut p_attrs, mut nattrs, mut p_counts, mut nv, mut p_vbytes) = (
            pages.dev(),
            nblocks as u32,
            layout.blcksz,
            work.dev(),
            layout.attrs.len() as u32,
            work.dev() + counts_off as u64,
            nvar as u32,
            work.dev() + vbytes_off as u64,
        );
        let mut params = [
            (&raw mut p_pages).cast::<c_void>(),
            (&raw mut n).cast(),
            (&raw mut bs).cast(),
            (&raw mut p_attrs).cast(),
            (&raw mut nattrs).cast(),
            (&raw mut p_counts).cast(),
            (&raw mut nv).cast(),
            (&raw mut p_vbytes).cast(),
        ];
        // SAFETY: the parameters are kern_heap_count's, in order; the
        // arenas live until the launch returns.
        unsafe { self.launch_and_wait("kern_heap_count", grid, &mut params)? };
        // the counts and the blocks' bytes, one copy
        let mut counted = vec![0u32; (vbytes_off - counts_off) / 4 + nblocks * nvar];
        crate::clock::timed(crate::clock::Phase::Sync, || {
            // SAFETY: counts and vbytes lie in the arena, from counts_off
            // on; the buffer is that long.
            drv.check("cuMemcpyDtoH", unsafe {
                (drv.cuMemcpyDtoH)(counted.as_mut_ptr().cast(), work.dev() + counts_off as u64, counted.len() * 4)
            })
        })?;
        let counts = &counted[..nblocks];
        let block_counts = counts.to_vec();
        let vbytes = &counted[(vbytes_off - counts_off) / 4..];
        let (bases, nrows, refused) = row_bases(counts)?;
        let (vbases, vtotals) = byte_bases(counts, vbytes, nvar)?;
        let n_rows = nrows as usize;
        // per column: values, validity, offsets (right after the validity
        // words, so that one memset clears both and the first offset)
        let mut places = Vec::with_capacity(widths.len());
        let mut value_bytes = Vec::with_capacity(widths.len());
        let mut end = cols_off;
        for (c, &w) in widths.iter().enumerate() {
            let var = vars.iter().position(|&k| k == c);
            let values = end;
            let bytes = var.map_or(n_rows * w, |v| vtotals[v] as usize);
            let validity = align(values + bytes);
            let words = n_rows.div_ceil(32) * 4;
            let offsets = var.map(|_| validity + words);
            end = align(validity + words + offsets.map_or(0, |_| (n_rows + 1) * 4));
            places.push((values, validity, offsets, w));
            value_bytes.push(bytes);
        }
        if nrows == 0 {
            return Ok(DeviceHeap {
                nrows,
                columns: Vec::new(),
                bytes: Vec::new(),
                arenas: [pages, work],
                refused,
                counts: block_counts,
            });
        }
        // (a grown arena loses its contents: everything is staged again)
        self.grow_scratch(&mut work, end)?;
        let dev = work.dev();
        let reprs: Vec<HeapColumnRepr> = places
            .iter()
            .map(|&(v, b, o, w)| HeapColumnRepr {
                values: dev + v as u64,
                validity: dev + b as u64,
                offsets: o.map_or(0, |o| dev + o as u64),
                width: w as u32,
                pad: 0,
            })
            .collect();
        stage(
            &work,
            &[
                (0, attrs_b),
                (counts_off, pod_bytes(counts)),
                (bases_off, pod_bytes(&bases)),
                (vbases_off, pod_bytes(&vbases)),
                (reprs_off, pod_bytes(&reprs)),
            ],
            cols_off,
        )?;
        crate::clock::timed(crate::clock::Phase::Sync, || {
            for &(_, b, o, _) in &places {
                let len = n_rows.div_ceil(32) * 4 + if o.is_some() { 4 } else { 0 };
                // SAFETY: the validity words (and the first offset after
                // them) lie within the arena.
                drv.check("cuMemsetD8", unsafe { (drv.cuMemsetD8)(dev + b as u64, 0, len) })?;
            }
            Ok::<(), DeviceError>(())
        })?;
        let (mut p_attrs, mut p_counts, mut p_bases, mut p_cols, mut p_vbases) =
            (dev, dev + counts_off as u64, dev + bases_off as u64, dev + reprs_off as u64, dev + vbases_off as u64);
        let mut params = [
            (&raw mut p_pages).cast::<c_void>(),
            (&raw mut n).cast(),
            (&raw mut bs).cast(),
            (&raw mut p_attrs).cast(),
            (&raw mut nattrs).cast(),
            (&raw mut p_counts).cast(),
            (&raw mut p_bases).cast(),
            (&raw mut p_cols).cast(),
            (&raw mut nv).cast(),
            (&raw mut p_vbases).cast(),
        ];
        // SAFETY: kern_heap_deform's parameters, in order; the arenas live
        // until the launch returns.
        unsafe { self.launch_and_wait("kern_heap_deform", grid, &mut params)? };
        let columns = places
            .iter()
            .map(|&(v, b, o, _)| (dev + v as u64, dev + b as u64, o.map_or(0, |o| dev + o as u64)))
            .collect();
        Ok(DeviceHeap { nrows, columns, bytes: value_bytes, arenas: [pages, work], refused, counts: block_counts })
    }
}

impl DeviceHeap<'_> {
    /// The tuples of `rows` (ascending, numbered as this heap's rows) as
    /// the pages in the GPU's memory hold them: one kernel finds them, a
    /// second copies them next to one another, and only their bytes come
    /// back.  The kernels work in the arena of the columns, which the
    /// join has read by now (a third arena per request made the engine's
    /// pool regrow arenas, each a `cuMemFree` that waits for the device,
    /// under every query's requests).
    pub(crate) fn tuples(
        &mut self,
        gpu: &crate::gpu::GpuEngine,
        blcksz: u32,
        rows: Vec<u32>,
    ) -> Result<HeapTuples, DeviceError> {
        if rows.is_empty() {
            return Ok(HeapTuples { starts: vec![0], ..HeapTuples::default() });
        }
        let drv = gpu.drv;
        let n = rows.len();
        let places = row_places(&self.counts, &rows)?;
        let align = |n: usize| n.next_multiple_of(256);
        // arena: places | loc | starts | bytes
        let loc_off = align(n * 8);
        let starts_off = loc_off + align(n * 12);
        let bytes_off = starts_off + align((n + 1) * 4);
        let pages = self.arenas[0].dev();
        let work = &mut self.arenas[1];
        gpu.grow_scratch(work, bytes_off)?;
        let stage = |work: &crate::gpu::ScratchGuard<'_>, parts: &[(usize, &[u8])], upto: usize| {
            stage_parts(drv, work, parts, upto)
        };
        let download = |dst: &mut [u8], src: u64| {
            crate::clock::timed(crate::clock::Phase::Transfer, || {
                // SAFETY: src..src + dst.len() lies within the arena.
                drv.check("cuMemcpyDtoH", unsafe { (drv.cuMemcpyDtoH)(dst.as_mut_ptr().cast(), src, dst.len()) })
            })
        };
        stage(work, &[(0, pod_bytes(&places))], loc_off)?;
        let (mut p_pages, mut nb, mut bs, mut nn, mut p_place, mut p_loc) =
            (pages, self.counts.len() as u32, blcksz, n as u32, work.dev(), work.dev() + loc_off as u64);
        let mut params = [
            (&raw mut p_pages).cast::<c_void>(),
            (&raw mut nb).cast(),
            (&raw mut bs).cast(),
            (&raw mut nn).cast(),
            (&raw mut p_place).cast(),
            (&raw mut p_loc).cast(),
        ];
        // SAFETY: kern_heap_locate's parameters, in order; the arenas live
        // until the launch returns (blocks below nb: row_places).
        unsafe { gpu.launch_and_wait("kern_heap_locate", gpu.grid_for(n as u32), &mut params)? };
        let mut loc = vec![0u32; n * 3];
        download(bytemuck_u32(&mut loc), work.dev() + loc_off as u64)?;
        let (lineoffs, starts) = tuple_starts(&loc)?;
        let total = *starts.last().unwrap_or(&0) as usize;
        // (a grown arena loses its contents: everything is staged again)
        gpu.grow_scratch(work, bytes_off + total.max(1))?;
        stage(
            work,
            &[(0, pod_bytes(&places)), (loc_off, pod_bytes(&loc)), (starts_off, pod_bytes(&starts))],
            bytes_off,
        )?;
        let dev = work.dev();
        let (mut p_place, mut p_loc, mut p_starts, mut p_out) =
            (dev, dev + loc_off as u64, dev + starts_off as u64, dev + bytes_off as u64);
        let mut params = [
            (&raw mut p_pages).cast::<c_void>(),
            (&raw mut bs).cast(),
            (&raw mut nn).cast(),
            (&raw mut p_place).cast(),
            (&raw mut p_loc).cast(),
            (&raw mut p_starts).cast(),
            (&raw mut p_out).cast(),
        ];
        // SAFETY: kern_heap_copy's parameters, in order; every tuple lies
        // within its page (kern_heap_locate checked) and its bytes within
        // the arena (starts, total above).
        unsafe { gpu.launch_and_wait("kern_heap_copy", gpu.grid_for((n as u32).saturating_mul(32)), &mut params)? };
        let mut bytes = vec![0u8; total];
        download(&mut bytes, dev + bytes_off as u64)?;
        Ok(HeapTuples { rows, lineoffs, starts, bytes })
    }

    /// The values of variable-length column `column` at `rows` (None:
    /// NULL), copied back from the GPU: row by row (a validity word, two
    /// offsets, the bytes) for a few rows, else the whole column at once,
    /// whichever moves less time (a copy's latency taken as 10 us, the
    /// bus as 10 GB/s: 100 kB a copy).
    pub(crate) fn var_values_at(
        &self,
        gpu: &crate::gpu::GpuEngine,
        column: usize,
        rows: &[u32],
    ) -> Result<VarValues, DeviceError> {
        let drv = gpu.drv;
        let (values, validity, offsets) = self.columns[column];
        let n = self.nrows as usize;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Transfer);
        let copy = |dst: &mut [u8], src: u64| {
            if dst.is_empty() {
                return Ok(());
            }
            // SAFETY: src..src + dst.len() lies within the column's device
            // memory (the callers' bounds: nrows rows, their bytes).
            drv.check("cuMemcpyDtoH", unsafe { (drv.cuMemcpyDtoH)(dst.as_mut_ptr().cast(), src, dst.len()) })
        };
        let whole = n.div_ceil(32) * 4 + (n + 1) * 4 + self.bytes[column];
        if rows.len() * 3 * 100_000 < whole {
            let mut out = Vec::with_capacity(rows.len());
            for &r in rows {
                let r = r as usize;
                if r >= n {
                    return Err(DeviceError::InvalidRequest(format!("row {r} of {n} heap rows")));
                }
                let (mut word, mut ends) = ([0u8; 4], [0u8; 8]);
                copy(&mut word, validity + (r / 32 * 4) as u64)?;
                if (u32::from_le_bytes(word) >> (r % 32)) & 1 == 0 {
                    out.push(None);
                    continue;
                }
                copy(&mut ends, offsets + (r * 4) as u64)?;
                let (a, b) = (
                    u32::from_le_bytes(ends[..4].try_into().expect("4")),
                    u32::from_le_bytes(ends[4..].try_into().expect("4")),
                );
                if a > b || b as usize > self.bytes[column] {
                    return Err(DeviceError::InvalidRequest(format!("offsets of heap row {r} out of range")));
                }
                let mut v = vec![0u8; (b - a) as usize];
                copy(&mut v, values + a as u64)?;
                out.push(Some(v));
            }
            return Ok(out);
        }
        let mut words = vec![0u8; n.div_ceil(32) * 4];
        let mut ends = vec![0u8; (n + 1) * 4];
        let mut bytes = vec![0u8; self.bytes[column]];
        copy(&mut words, validity)?;
        copy(&mut ends, offsets)?;
        copy(&mut bytes, values)?;
        let end = |i: usize| u32::from_le_bytes(ends[4 * i..4 * i + 4].try_into().expect("4")) as usize;
        rows.iter()
            .map(|&r| {
                let r = r as usize;
                if r >= n || end(r) > end(r + 1) || end(r + 1) > bytes.len() {
                    return Err(DeviceError::InvalidRequest(format!("row {r} of {n} heap rows")));
                }
                Ok(((words[r / 8] >> (r % 8)) & 1 == 1).then(|| bytes[end(r)..end(r + 1)].to_vec()))
            })
            .collect()
    }
}

/// Copy `parts` (each at its offset) into the arena's pinned staging
/// buffer and its first `upto` bytes to the device, in one copy.
fn stage_parts(
    drv: &crate::cuda::Driver,
    work: &crate::gpu::ScratchGuard<'_>,
    parts: &[(usize, &[u8])],
    upto: usize,
) -> Result<(), DeviceError> {
    let _clock = crate::clock::Timer::start(crate::clock::Phase::Sync);
    if parts.iter().any(|(off, bytes)| off + bytes.len() > upto) || upto > work.len() {
        return Err(DeviceError::InvalidRequest("staged parts beyond the arena".into()));
    }
    // SAFETY: every part lies within the first `upto` bytes of the arena's
    // pinned staging buffer, which is as long as the arena (checked).
    unsafe {
        for (off, bytes) in parts {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), work.host().add(*off), bytes.len());
        }
        drv.check("cuMemcpyHtoD", (drv.cuMemcpyHtoD)(work.dev(), work.host() as *const c_void, upto))
    }
}

/// Words as the bytes they occupy, to be written.
fn bytemuck_u32(v: &mut [u32]) -> &mut [u8] {
    // SAFETY: u32 has no padding and every bit pattern of its bytes is a
    // u32; the bytes live as long as the words.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

/// A slice of plain-old-data values as bytes.
fn pod_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: the types passed (u32, HeapAttr, HeapColumnRepr) are
    // repr(C) without padding bytes; the bytes live as long as the slice.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of `tuples` (each: null bitmap or None, data bytes), all
    /// visible, as PostgreSQL lays it out.
    fn page(tuples: &[(Option<u8>, u16, Vec<u8>)], flags: u16) -> Vec<u8> {
        let bs = 8192usize;
        let mut p = vec![0u8; bs];
        let mut upper = bs;
        for (i, (bits, natts, data)) in tuples.iter().enumerate() {
            // t_bits and its padding (23 + one bitmap byte, MAXALIGNed)
            let hoff = 24;
            let len = hoff + data.len();
            upper = (upper - len) & !7;
            let t = &mut p[upper..upper + len];
            t[18..20].copy_from_slice(&natts.to_le_bytes());
            t[20..22].copy_from_slice(&(if bits.is_some() { 1u16 } else { 0 }).to_le_bytes());
            t[22] = hoff as u8;
            if let Some(b) = bits {
                t[23] = *b;
            }
            t[hoff..].copy_from_slice(data);
            let lp = (upper as u32) | (1 << 15) | ((len as u32) << 17);
            p[24 + 4 * i..28 + 4 * i].copy_from_slice(&lp.to_le_bytes());
        }
        let lower = 24 + 4 * tuples.len();
        p[10..12].copy_from_slice(&flags.to_le_bytes());
        p[12..14].copy_from_slice(&(lower as u16).to_le_bytes());
        p[14..16].copy_from_slice(&(upper as u16).to_le_bytes());
        p[16..18].copy_from_slice(&(bs as u16).to_le_bytes());
        p[18..20].copy_from_slice(&((bs as u16) | 4).to_le_bytes());
        p
    }

    fn int4_type() -> u16 {
        crate::catalog::type_by_name("INT4").unwrap().id
    }

    /// (int4, text, int4): the second int4 after a varlena, NULLs, a
    /// page that is not all-visible and one with a short tuple refused.
    #[test]
    fn host_kernels_take_tuples_apart() {
        let t4 = int4_type();
        let layout = HeapLayout {
            blcksz: 8192,
            attrs: vec![
                HeapAttr { attlen: 4, attalign: 4, conv: CONV_COPY, column: 0 },
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_COPY, column: -1 },
                HeapAttr { attlen: 4, attalign: 4, conv: CONV_COPY, column: 1 },
            ],
            types: vec![t4, t4],
            keys: Vec::new(),
        };
        let row = |a: i32, s: &str, b: i32| {
            let mut d = a.to_le_bytes().to_vec();
            d.push(((s.len() as u8 + 1) << 1) | 1);
            d.extend_from_slice(s.as_bytes());
            while !d.len().is_multiple_of(4) {
                d.push(0);
            }
            d.extend_from_slice(&b.to_le_bytes());
            (None, 3u16, d)
        };
        // the first attribute NULL: bitmap 0b110
        let nulled = (Some(0b110u8), 3u16, {
            let mut d = vec![(3u8 << 1) | 1, b'x', b'y', 0];
            d.extend_from_slice(&7i32.to_le_bytes());
            d
        });
        let mut pages = page(&[row(1, "abc", 10), nulled, row(-5, "", i32::MIN)], 4);
        pages.extend(page(&[row(9, "z", 9)], 0)); // not all-visible
        pages.extend(page(&[(None, 2u16, vec![0; 8])], 4)); // two attributes
        pages.extend(page(&[row(2, "q", 20)], 4));
        let h = HostHeap::deform(&pages, &layout).unwrap();
        assert_eq!(h.nrows, 4);
        assert_eq!(h.refused, vec![1, 2]);
        let ints = |v: &[u8]| v.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
        assert_eq!(ints(&h.columns[1].0), vec![10, 7, i32::MIN, 20]);
        assert_eq!(ints(&h.columns[0].0), vec![1, 0, -5, 2]);
        assert_eq!(h.columns[0].1, vec![0b1101]);
        assert_eq!(h.columns[1].1, vec![0b1111]);
        // a damaged header: refused, never read past the page
        let mut bad = page(&[row(1, "abc", 10)], 4);
        bad[12..14].copy_from_slice(&9000u16.to_le_bytes());
        assert_eq!(HostHeap::deform(&bad, &layout).unwrap().refused, vec![0]);
        // a line pointer past the page's end
        let mut bad = page(&[row(1, "abc", 10)], 4);
        bad[24..28].copy_from_slice(&((8184u32) | (1 << 15) | (64 << 17)).to_le_bytes());
        assert_eq!(HostHeap::deform(&bad, &layout).unwrap().refused, vec![0]);
        // layouts the kernels cannot take
        let mut l = layout.clone();
        l.attrs[0].attlen = 8;
        assert!(l.widths().is_err());
        let mut l = layout.clone();
        l.attrs[2].column = 0;
        assert!(l.widths().is_err());
    }

    /// PostgreSQL's numeric bytes after the varlena header for a decimal
    /// text (make_result's form: base-10000 digits without leading or
    /// trailing zero digits, the short form where it fits), or the
    /// special values.
    fn pg_numeric(text: &str) -> Vec<u8> {
        let special = match text {
            "NaN" => Some(0xC000u16),
            "Infinity" => Some(0xD000),
            "-Infinity" => Some(0xF000),
            _ => None,
        };
        if let Some(h) = special {
            return h.to_ne_bytes().to_vec();
        }
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        let dscale = frac.len() as i32;
        // pad the integer part on the left and the fraction on the right
        // to whole base-10000 digits
        let ipad = (4 - int.len() % 4) % 4;
        let fpad = (4 - frac.len() % 4) % 4;
        let all = format!("{}{int}{frac}{}", "0".repeat(ipad), "0".repeat(fpad));
        let mut digits: Vec<u16> =
            all.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap().parse().unwrap()).collect();
        let mut weight = ((int.len() + ipad) / 4) as i32 - 1;
        while digits.first() == Some(&0) {
            digits.remove(0);
            weight -= 1;
        }
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            weight = 0;
        }
        let mut b = Vec::new();
        if dscale <= 63 && (-64..=63).contains(&weight) {
            let h = 0x8000u16
                | if neg { 0x2000 } else { 0 }
                | ((dscale as u16) << 7)
                | if weight < 0 { 0x0040 | (weight + 64) as u16 } else { weight as u16 };
            b.extend_from_slice(&h.to_ne_bytes());
        } else {
            let h = if neg { 0x4000u16 } else { 0 } | dscale as u16;
            b.extend_from_slice(&h.to_ne_bytes());
            b.extend_from_slice(&(weight as i16).to_ne_bytes());
        }
        for d in digits {
            b.extend_from_slice(&d.to_ne_bytes());
        }
        b
    }

    /// A varlena of `payload`: a 1-byte header when short, else 4 bytes
    /// (aligned to 4 from `at`, the data's offset so far).
    fn varlena(payload: &[u8], at: usize) -> Vec<u8> {
        if payload.len() < 127 {
            let mut v = vec![(((payload.len() + 1) as u8) << 1) | 1];
            v.extend_from_slice(payload);
            v
        } else {
            let mut v = vec![0u8; (4 - at % 4) % 4];
            v.extend_from_slice(&(((payload.len() + 4) as u32) << 2).to_le_bytes());
            v.extend_from_slice(payload);
            v
        }
    }

    /// (text, int4, bpchar, bytea): variable-length values as Arrow's
    /// offsets and bytes, short and long headers, empty strings, NULLs,
    /// multibyte text, over several blocks; a compressed value and a TOAST
    /// pointer send their blocks to the buffer manager.
    /// The tuples a join's combinations read, found by their row numbers
    /// across blocks with a dead line pointer and a refused block, as
    /// the pages hold them.
    #[test]
    fn host_kernels_find_the_tuples_of_rows() {
        let t4 = int4_type();
        let layout = HeapLayout {
            blcksz: 8192,
            attrs: vec![HeapAttr { attlen: 4, attalign: 4, conv: CONV_COPY, column: 0 }],
            types: vec![t4],
            keys: Vec::new(),
        };
        let row = |a: i32| (None, 1u16, a.to_le_bytes().to_vec());
        let mut first = page(&[row(1), row(2), row(3)], 4);
        // item 2 dead: the block's rows are items 1 and 3
        let lp = u32::from_le_bytes(first[28..32].try_into().unwrap());
        first[28..32].copy_from_slice(&((lp & !(3 << 15)) | (3 << 15)).to_le_bytes());
        let mut pages = first;
        pages.extend(page(&[row(4)], 0)); // not all-visible: refused
        pages.extend(page(&[row(5), row(6)], 4));
        let h = HostHeap::deform(&pages, &layout).unwrap();
        assert_eq!(h.nrows, 4);
        assert_eq!(h.counts, vec![2, HEAP_BLOCK_FALLBACK, 2]);
        let t = h.tuples(&pages, 8192, vec![0, 1, 3]).unwrap();
        assert!(t.is_consistent());
        assert_eq!(t.lineoffs, vec![1, 3, 2]);
        let value = |j: usize| i32::from_le_bytes(t.tuple(j)[24..28].try_into().unwrap());
        assert_eq!((value(0), value(1), value(2)), (1, 3, 6));
        // each tuple's bytes are its page's, by its line pointer
        let item = |blk: usize, i: usize| {
            let p = &pages[blk * 8192..];
            let lp = u32::from_le_bytes(p[24 + 4 * i..28 + 4 * i].try_into().unwrap());
            p[(lp & 0x7fff) as usize..((lp & 0x7fff) + (lp >> 17)) as usize].to_vec()
        };
        assert_eq!(t.tuple(2), item(2, 1).as_slice());
        assert_eq!(row_places(&h.counts, &[0, 1, 2, 3]).unwrap(), vec![0, 0, 0, 1, 2, 0, 2, 1]);
        // a row past the blocks' tuples
        assert!(h.tuples(&pages, 8192, vec![4]).is_err());
        // the outer rows of combinations, each once, NULLs left out
        let combos = Combos {
            nsources: 2,
            count: 4,
            rows: vec![3, 1, 3, crate::join::NULL_ROW, 0, 0, 1, 2],
            ..Combos::default()
        };
        assert_eq!(combo_outer_rows(&combos), vec![1, 3]);
    }

    #[test]
    fn host_kernels_take_variable_length_values() {
        let ty = |n: &str| crate::catalog::type_by_name(n).unwrap().id;
        let layout = HeapLayout {
            blcksz: 8192,
            attrs: vec![
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_VARLENA, column: 0 },
                HeapAttr { attlen: 4, attalign: 4, conv: CONV_COPY, column: 1 },
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_VARLENA, column: 2 },
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_COPY, column: -1 },
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_VARLENA, column: 3 },
            ],
            types: vec![ty("TEXT"), int4_type(), ty("BPCHAR"), ty("BYTEA")],
            keys: vec![0, 2],
        };
        // a row: Some(text) or NULL per variable-length attribute
        type Row<'a> = (Option<&'a str>, i32, Option<&'a str>, &'a str, Option<&'a [u8]>);
        let tuple = |r: &Row<'_>| {
            let (mut d, mut bits) = (Vec::new(), 0b10u8);
            let mut var = |d: &mut Vec<u8>, v: Option<&[u8]>, k: u8| {
                if let Some(v) = v {
                    let at = d.len();
                    d.extend(varlena(v, at));
                    bits |= 1 << k;
                }
            };
            var(&mut d, r.0.map(str::as_bytes), 0);
            while !d.len().is_multiple_of(4) {
                d.push(0);
            }
            d.extend_from_slice(&r.1.to_le_bytes());
            var(&mut d, r.2.map(str::as_bytes), 2);
            var(&mut d, Some(r.3.as_bytes()), 3);
            var(&mut d, r.4, 4);
            (Some(bits), 5u16, d)
        };
        let long = "x".repeat(300);
        let rows: Vec<Row<'_>> = vec![
            (Some("abc"), 1, Some("AIR       "), "skipped", Some(b"\x00\x01")),
            (None, 2, Some(""), "", None),
            (Some("日本語テキスト"), 3, None, "q", Some(b"")),
            (Some(&long), 4, Some("MAIL"), &long, Some(&[0xff; 200])),
            (Some(""), 5, Some("x"), "", Some(b"z")),
        ];
        let mut pages = page(&rows[..3].iter().map(tuple).collect::<Vec<_>>(), 4);
        pages.extend(page(&rows[3..].iter().map(tuple).collect::<Vec<_>>(), 4));
        // a compressed text and a TOAST pointer: refused
        let mut compressed = vec![0u8; 0];
        compressed.extend_from_slice(&(((8u32 + 4) << 2) | 2).to_le_bytes());
        compressed.extend_from_slice(&[0u8; 8]);
        compressed.extend_from_slice(&9i32.to_le_bytes());
        pages.extend(page(&[(Some(0b00011u8), 5u16, compressed)], 4));
        let mut pointer = vec![1u8, 18];
        pointer.extend_from_slice(&[0u8; 16]);
        pointer.extend_from_slice(&[0u8; 2]);
        pointer.extend_from_slice(&9i32.to_le_bytes());
        pages.extend(page(&[(Some(0b00011u8), 5u16, pointer)], 4));
        pages.extend(page(&[tuple(&rows[0])], 4));
        let h = HostHeap::deform(&pages, &layout).unwrap();
        assert_eq!(h.refused, vec![2, 3]);
        assert_eq!(h.nrows, 6);
        let all: Vec<Row<'_>> = rows.iter().chain(std::iter::once(&rows[0])).cloned().collect();
        let values = |c: usize| {
            let (v, b, o) = &h.columns[c];
            (0..h.nrows as usize)
                .map(|i| ((b[i / 32] >> (i % 32)) & 1 == 1).then(|| v[o[i] as usize..o[i + 1] as usize].to_vec()))
                .collect::<Vec<_>>()
        };
        assert_eq!(values(0), all.iter().map(|r| r.0.map(|s| s.as_bytes().to_vec())).collect::<Vec<_>>());
        assert_eq!(values(2), all.iter().map(|r| r.2.map(|s| s.as_bytes().to_vec())).collect::<Vec<_>>());
        assert_eq!(values(3), all.iter().map(|r| r.4.map(|s| s.to_vec())).collect::<Vec<_>>());
        let ints: Vec<i32> = h.columns[1].0.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ints, vec![1, 2, 3, 4, 5, 1]);
        assert_eq!(h.columns[0].2[0], 0);
        assert!(h.columns[1].2.is_empty());
        // the columns as an engine checks them; key values at rows
        crate::engine::validate_columns(&h.column_data(&layout), h.nrows).unwrap();
        assert_eq!(h.var_values_at(2, &[2, 0, 3]), vec![None, Some(b"AIR       ".to_vec()), Some(b"MAIL".to_vec())]);
        let mut l = layout.clone();
        l.keys = vec![1];
        assert!(l.widths().is_err());
        // layouts the kernels cannot take: a copy into a text column, a
        // varlena into an int4 one, too many variable-length columns
        let mut l = layout.clone();
        l.attrs[0].conv = CONV_COPY;
        assert!(l.widths().is_err());
        let mut l = layout.clone();
        l.attrs[1].conv = CONV_VARLENA;
        assert!(l.widths().is_err());
        let many = HeapLayout {
            blcksz: 8192,
            attrs: (0..9).map(|c| HeapAttr { attlen: -1, attalign: 4, conv: CONV_VARLENA, column: c }).collect(),
            types: vec![ty("TEXT"); 9],
            keys: Vec::new(),
        };
        assert!(many.widths().is_err());
    }

    /// (int4, numeric): numerics decoded by the kernels as the host
    /// decodes them; one the device cannot hold, a compressed one and a
    /// TOAST pointer send their blocks to the buffer manager.
    #[test]
    fn host_kernels_decode_numerics() {
        let t4 = int4_type();
        let tn = crate::program::type_id("NUMERIC");
        let layout = HeapLayout {
            blcksz: 8192,
            attrs: vec![
                HeapAttr { attlen: 4, attalign: 4, conv: CONV_COPY, column: 0 },
                HeapAttr { attlen: -1, attalign: 4, conv: CONV_NUMERIC, column: 1 },
            ],
            types: vec![t4, tn],
            keys: Vec::new(),
        };
        let long_int = format!("1{}", "0".repeat(300));
        let texts = [
            "0",
            "1",
            "-1",
            "12345.6789",
            "-0.0001",
            "0.00",
            "100000000",
            "3.14159265358979323846264338327950288",
            "99999999999999999999999999999999999999",
            "-99999999999999999999999999999999999999",
            "0.00000000000000000000000000000000000000000000000000000000000000000000000000001",
            "1.5000",
            "NaN",
            "Infinity",
            "-Infinity",
            "123456789012345678901234567890.12345678",
        ];
        let row = |i: i32, payload: &[u8]| {
            let mut d = i.to_le_bytes().to_vec();
            d.extend(varlena(payload, 4));
            (None, 2u16, d)
        };
        let payloads: Vec<Vec<u8>> = texts.iter().map(|t| pg_numeric(t)).collect();
        let rows: Vec<_> = payloads.iter().enumerate().map(|(i, p)| row(i as i32, p)).collect();
        let mut pages = page(&rows, 4);
        // a NULL numeric
        pages.extend(page(&[(Some(0b01u8), 2u16, 77i32.to_le_bytes().to_vec())], 4));
        // more than 38 digits; 10^300 (the long form); a compressed
        // varlena; a TOAST pointer: refused
        pages.extend(page(&[row(90, &pg_numeric("999999999999999999999999999999999999999"))], 4));
        pages.extend(page(&[row(91, &pg_numeric(&long_int))], 4));
        let mut compressed = 7i32.to_le_bytes().to_vec();
        compressed.extend_from_slice(&(((8u32 + 4) << 2) | 2).to_le_bytes());
        compressed.extend_from_slice(&[0u8; 8]);
        pages.extend(page(&[(None, 2u16, compressed)], 4));
        let mut pointer = 8i32.to_le_bytes().to_vec();
        pointer.extend_from_slice(&[1u8, 18]);
        pointer.extend_from_slice(&[0u8; 16]);
        pages.extend(page(&[(None, 2u16, pointer)], 4));
        let h = HostHeap::deform(&pages, &layout).unwrap();
        assert_eq!(h.refused, vec![2, 3, 4, 5]);
        assert_eq!(h.nrows as usize, texts.len() + 1);
        for (i, p) in payloads.iter().enumerate() {
            let got = crate::numeric::DevNumeric::from_bytes(&h.columns[1].0[24 * i..24 * (i + 1)]).unwrap();
            let want = crate::numeric::DevNumeric::from_pg_payload(p);
            assert_ne!(want.scale, crate::numeric::NUM_BIG, "{}", texts[i]);
            assert_eq!(got, want, "{}", texts[i]);
            assert_eq!(&h.columns[1].0[24 * i + 20..24 * (i + 1)], &[0u8; 4]);
        }
        assert_eq!(crate::numeric::DevNumeric::from_bytes(&h.columns[1].0[24 * 3..]).unwrap().to_text(), "12345.6789");
        // the NULL: no validity bit, zero bytes
        let n = texts.len();
        assert_eq!(h.columns[1].1[0] >> n & 1, 0);
        assert_eq!(h.columns[0].1[0] >> n & 1, 1);
        assert_eq!(&h.columns[1].0[24 * n..], &[0u8; 24]);
        // a numeric attribute whose conversion is missing, or a copy to a
        // numeric column: layouts the kernels cannot take
        let mut l = layout.clone();
        l.attrs[1].conv = CONV_COPY;
        assert!(l.widths().is_err());
        let mut l = layout.clone();
        l.attrs[0].conv = CONV_NUMERIC;
        assert!(l.widths().is_err());
    }
}
