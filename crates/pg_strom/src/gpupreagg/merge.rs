//! GpuPreAgg's partial groups merged across the chunks of one process:
//! the engine returns one partial state per group and chunk; where the
//! groups can be told apart and their states combined exactly, the
//! process keeps one state per group and returns it after its last chunk
//! (or when `work_mem` is full), so the Gather and PostgreSQL's Finalize
//! Aggregate see each process's groups once instead of once per chunk.
//!
//! A group is known by its keys' device values (fixed-width types: the
//! value as the device computed it, bit for bit) and, for a text, bpchar
//! or bytea column of an inner relation, by the bytes of the value the
//! group's representative inner row holds (the device groups such keys
//! by their bytes too: deterministic collations only).  Groups whose keys
//! are equal but not bit-identical (1.0 and 1.00, -0 and 0, an unpadded
//! bpchar with and without trailing blanks) stay apart: the Finalize
//! Aggregate combines them, as it combines the processes' groups; merging
//! never joins groups PostgreSQL would keep apart.
//!
//! Merged only where every accumulator combines exactly or as
//! PostgreSQL's combine function would (counts, integer, numeric and
//! interval sums, float sums, integer and float minimum and maximum, and
//! those of numeric(p,s) columns with p <= 18, kept as scaled integers); a
//! float sum that would overflow when combined is left to the Finalize
//! Aggregate, which raises PostgreSQL's error.  Not merged: keys
//! PostgreSQL evaluates on the host, text keys read from the scanned
//! table's rows (the chunk is gone after it), numeric sums wider than the
//! device holds (their rows the host computes), moments and min/max of
//! other numerics, intervals or timetz values.  Merging a numeric sum matters
//! most: PostgreSQL's Finalize Aggregate combines numeric states at about
//! a microsecond each (TPC-H Q15 at SF 10: 2.1 million partial groups of
//! 100,000 took 3 s there).

use pgstrom_runtime::agg::{self, AggGroups, AggKind, AggSpec, KeyValue};

use crate::gpujoin::plan::{AggInfo, AggOutput};

/// What tells one group from another, per device key.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// The key's device value (key index).
    Value(usize),
    /// The bytes of column `key` of inner source s at the representative.
    Bytes(u8, i16),
}

/// Whether a key of device type width `width` (0: by row) read from
/// `column` can tell groups apart after its chunk.
pub fn mergeable_key(width: usize, column: Option<(u8, i16)>) -> bool {
    width > 0 || matches!(column, Some((s, _)) if s >= 1)
}

/// The merged groups' identities: an open-addressing table over an arena
/// of identity words (no allocation per group, a cheap hash: TPC-H Q18's
/// 15 million `l_orderkey` groups at SF 10 are each hashed twice when
/// they spill).
#[derive(Default)]
struct IdTable {
    /// Entry index + 1 per slot (0: empty); a power of two, at most half
    /// full.
    slots: Vec<u32>,
    /// Per entry: its hash, where its identity starts in `ids`, and its
    /// group.
    hashes: Vec<u64>,
    starts: Vec<usize>,
    groups: Vec<usize>,
    ids: Vec<u64>,
}

/// A hash of identity words (a multiply-rotate per word, then
/// MurmurHash3's finalizer, so that consecutive keys spread).
fn hash_words(id: &[u64]) -> u64 {
    hash_iter(id.len(), id.iter().copied())
}

/// [`hash_words`] of the `len` words `id` yields (no slice to gather them
/// in).
pub fn hash_iter(len: usize, id: impl Iterator<Item = u64>) -> u64 {
    let mut h: u64 = len as u64;
    for w in id {
        h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl IdTable {
    fn id(&self, e: usize) -> &[u64] {
        let end = self.starts.get(e + 1).copied().unwrap_or(self.ids.len());
        &self.ids[self.starts[e]..end]
    }

    /// The group of identity `id` (hash `h`), if any.
    fn find(&self, id: &[u64], h: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        loop {
            let e = self.slots[at] as usize;
            if e == 0 {
                return None;
            }
            if self.hashes[e - 1] == h && self.id(e - 1) == id {
                return Some(self.groups[e - 1]);
            }
            at = (at + 1) & mask;
        }
    }

    /// Add identity `id` (hash `h`, not in the table) of group `group`.
    fn insert(&mut self, id: &[u64], h: u64, group: usize) {
        if (self.hashes.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.hashes.push(h);
        self.starts.push(self.ids.len());
        self.groups.push(group);
        self.ids.extend_from_slice(id);
        let e = self.hashes.len();
        self.place(h, e as u32);
    }

    fn place(&mut self, h: u64, e: u32) {
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = e;
    }

    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(1024);
        self.slots = vec![0; n];
        for e in 0..self.hashes.len() {
            self.place(self.hashes[e], (e + 1) as u32);
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.hashes.clear();
        self.starts.clear();
        self.groups.clear();
        self.ids.clear();
    }
}

/// What a merger counts against its budget per group of `nkeys` keys and
/// `nwords` accumulator words (its copies, the key's identity in the hash
/// map, and the map's own overhead).
pub fn bytes_per_group(nkeys: usize, nwords: usize) -> usize {
    nwords * 8 + nkeys * (std::mem::size_of::<KeyValue>() + 32) + 64
}

/// The merged groups of one process.
pub struct GroupMerger {
    parts: Vec<Part>,
    /// Per operation: its kind and first word.
    ops: Vec<(AggKind, usize)>,
    map: IdTable,
    /// Row-major copies of the merged groups.
    nsources: usize,
    nkeys: usize,
    nwords: usize,
    rows: Vec<u32>,
    keys: Vec<KeyValue>,
    words: Vec<u64>,
    count: usize,
    /// Groups kept before they are returned.
    limit: usize,
    /// Reused for each group: its identity, and its accumulators while
    /// they are combined.
    id: Vec<u64>,
    scratch: Vec<u64>,
    /// Groups added since the merger last filled up.
    seen: usize,
    /// Set once a full merger had barely merged anything (each chunk
    /// holds groups no other chunk has: a key in the table's physical
    /// order, such as TPC-H's `l_orderkey`): chunks' groups then pass
    /// through unmerged, not hashed a second time for nothing.
    passthrough: bool,
    /// Whether the early check of the reduction was made.
    checked: bool,
    /// Chunks added (the early check waits for a second one).
    chunks: usize,
    /// Hold every group (a group filter needs them all): no early check.
    hold_all: bool,
    /// No group was returned before the last chunk since the scan began
    /// (but to a spill): what [`GroupMerger::take`] returns then holds
    /// every group once, or the rest of them beside the spill.
    complete: bool,
    /// A full merger's groups go to a spill (`gpupreagg::spill`), not up:
    /// they stay complete.
    spills: bool,
    /// The last full set of a merger that spills had barely merged.
    spilled_poorly: bool,
}

/// A merger that holds more than this share of the groups it was given
/// once it is full, or that merged less than the rest of a chunk's groups
/// at the early check, stops merging.
pub(crate) const POOR_REDUCTION: f64 = 0.9;

/// Groups given before the early check of the reduction, where the limit
/// is larger: TPC-H Q18's `l_orderkey` at SF 1 on the development machine
/// spent 1.8 s hashing 1.3 million groups of which none merged, before
/// the merger filled up.  The check is made at a chunk after the first
/// (each chunk's groups are distinct among themselves, merged on the
/// device), on the share of that chunk's groups that found one held:
/// TPC-H Q13 at SF 10 (1.5 million `c_custkey` groups, some 390,000 in each
/// of 33 chunks) had stopped at its first chunk and returned 12 million
/// partial groups.
pub(crate) const EARLY_CHECK: usize = 65_536;

impl GroupMerger {
    /// A merger for `agg` (`spec` its runtime form), or None where the
    /// groups are not merged; at most `limit_bytes` of groups are kept.
    /// A plan with a group filter holds its groups until that limit even
    /// where they barely merge.
    pub fn new(agg: &AggInfo, spec: &AggSpec, limit_bytes: usize) -> Option<GroupMerger> {
        if spec.ops.iter().any(|o| !o.kind.combines_on_host()) {
            return None;
        }
        let mut parts = Vec::with_capacity(agg.keys.len());
        for k in 0..agg.keys.len() {
            let out = agg.outputs.iter().find(|o| matches!(o, AggOutput::Key { index, .. } if *index as usize == k))?;
            let AggOutput::Key { type_oid, column, .. } = *out else { return None };
            if out.host_evaluated() {
                return None;
            }
            let width = crate::codegen::device_type_of(type_oid.into())
                .and_then(pgstrom_runtime::catalog::type_info)
                .map(|t| t.width)?;
            if !mergeable_key(width as usize, column) {
                return None;
            }
            parts.push(match column {
                Some((s, key)) if width == 0 => Part::Bytes(s, key),
                _ => Part::Value(k),
            });
        }
        let (at, nwords) = spec.layout();
        let ops = spec.ops.iter().zip(at).map(|(o, a)| (o.kind, a as usize)).collect();
        let per_group = bytes_per_group(agg.keys.len(), nwords);
        Some(GroupMerger {
            parts,
            ops,
            map: IdTable::default(),
            nsources: 0,
            nkeys: 0,
            nwords: 0,
            rows: Vec::new(),
            keys: Vec::new(),
            words: Vec::new(),
            count: 0,
            limit: (limit_bytes / per_group).max(1024),
            id: Vec::new(),
            scratch: Vec::new(),
            seen: 0,
            passthrough: false,
            checked: false,
            chunks: 0,
            hold_all: !agg.filters.is_empty(),
            complete: true,
            spills: false,
            spilled_poorly: false,
        })
    }

    /// Merge a chunk's groups; `bytes(s, key, row)` is the value of column
    /// `key` of inner source `s` at `row` (None: NULL).  Returns the groups
    /// to return now when the merged ones filled the limit (or the layout
    /// changed), else None.
    pub fn add(&mut self, g: AggGroups, bytes: &mut dyn FnMut(u8, i16, u32) -> Option<Vec<u8>>) -> Option<AggGroups> {
        if g.count == 0 {
            return None;
        }
        if self.passthrough {
            // (it holds nothing then: it was emptied when it stopped)
            debug_assert_eq!(self.count, 0);
            return Some(g);
        }
        self.seen += g.count;
        let mut out = None;
        if self.count > 0 && (g.nsources != self.nsources || g.nkeys != self.nkeys || g.nwords != self.nwords) {
            self.complete = false;
            out = self.take();
        }
        if self.count == 0 {
            (self.nsources, self.nkeys, self.nwords) = (g.nsources, g.nkeys, g.nwords);
        }
        self.chunks += 1;
        let mut merged = 0usize;
        let mut id = std::mem::take(&mut self.id);
        for i in 0..g.count {
            self.identity(&mut id, &g, i, bytes);
            let words = g.group_words(i);
            let h = hash_words(&id);
            let found = self.map.find(&id, h);
            match found {
                Some(at) if self.combine(at, words) => merged += 1,
                found => {
                    let at = self.push(&g, i);
                    if found.is_none() {
                        self.map.insert(&id, h, at);
                    }
                }
            }
        }
        self.id = id;
        if out.is_none() {
            // a full merger returns its groups; either check stops
            // merging where it barely merged
            let full = self.count >= self.limit;
            let early = !full && !self.checked && !self.hold_all && self.seen >= EARLY_CHECK && self.chunks >= 2;
            self.checked |= early;
            // (one chunk's groups alone tell nothing of merging)
            let poor = if early {
                (merged as f64) < (1.0 - POOR_REDUCTION) * g.count as f64
            } else {
                self.chunks >= 2 && self.count as f64 > POOR_REDUCTION * self.seen as f64
            };
            if full && self.spills {
                self.spilled_poorly = poor;
                self.seen = 0;
                out = self.take();
            } else if full || (early && poor) {
                self.passthrough = poor;
                self.seen = 0;
                self.complete = false;
                out = self.take();
            }
        }
        out
    }

    /// The groups it holds before it returns them.
    pub fn capacity(&self) -> usize {
        self.limit
    }

    /// Whether, after the last chunk, the groups held are every group of
    /// the scan, each once with the state of all its rows.
    pub fn holds_every_group(&self) -> bool {
        self.complete && !self.passthrough
    }

    /// Whether groups are told apart by their device key values alone
    /// (no inner row's bytes), as a spill needs.
    pub fn keys_by_value(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Value(_)))
    }

    /// Return each full set of groups to be spilled: the merger stays
    /// complete (the caller keeps every set it returns).
    pub fn spill_when_full(&mut self) {
        self.spills = true;
    }

    /// Whether the last full set it returned to be spilled had barely
    /// merged (each chunk's groups its own): the caller may spill the
    /// chunks' groups as they come, merging them only when read back.
    pub fn spilled_poorly(&self) -> bool {
        self.spilled_poorly
    }

    /// No longer complete: groups went up that are not every group's.
    pub fn give_up(&mut self) {
        self.complete = false;
    }

    /// Empty, for a new scan (a rescan).
    pub fn restart(&mut self) {
        self.take();
        self.complete = true;
        self.spilled_poorly = false;
    }

    /// The groups held, as one set (None when there are none); the
    /// merger starts empty again.
    pub fn take(&mut self) -> Option<AggGroups> {
        if self.count == 0 {
            return None;
        }
        let (count, nsources) = (self.count, self.nsources);
        let mut rows = vec![0u32; nsources * count];
        for g in 0..count {
            for s in 0..nsources {
                rows[s * count + g] = self.rows[g * nsources + s];
            }
        }
        let groups = AggGroups {
            nsources,
            count,
            rows,
            nkeys: self.nkeys,
            keys: std::mem::take(&mut self.keys),
            nwords: self.nwords,
            words: std::mem::take(&mut self.words),
            stage_counts: Vec::new(),
            exceptions: Vec::new(),
        };
        self.rows.clear();
        self.map.clear();
        self.count = 0;
        Some(groups)
    }

    /// Group `i`'s identity, into `id`.
    fn identity(
        &self,
        id: &mut Vec<u64>,
        g: &AggGroups,
        i: usize,
        bytes: &mut dyn FnMut(u8, i16, u32) -> Option<Vec<u8>>,
    ) {
        id.clear();
        for p in &self.parts {
            match *p {
                Part::Value(k) => {
                    let v = g.key_value(i, k);
                    id.push(v.bits as u64);
                    id.push(v.hi as u64);
                    id.push(v.len as u32 as u64 | (v.isnull as u64) << 32);
                }
                Part::Bytes(s, key) => match bytes(s, key, g.row(s as usize, i)) {
                    None => id.push(u64::MAX),
                    Some(b) => {
                        id.push(b.len() as u64);
                        id.extend(b.chunks(8).map(|c| {
                            let mut w = [0u8; 8];
                            w[..c.len()].copy_from_slice(c);
                            u64::from_le_bytes(w)
                        }));
                    }
                },
            }
        }
    }

    fn push(&mut self, g: &AggGroups, i: usize) -> usize {
        for s in 0..g.nsources {
            self.rows.push(g.row(s, i));
        }
        for k in 0..g.nkeys {
            self.keys.push(g.key_value(i, k));
        }
        self.words.extend_from_slice(g.group_words(i));
        self.count += 1;
        self.count - 1
    }

    /// Add `src`'s accumulators into merged group `at`; false (nothing
    /// changed) where an operation cannot combine them here.
    fn combine(&mut self, at: usize, src: &[u64]) -> bool {
        let dst = &mut self.words[at * self.nwords..(at + 1) * self.nwords];
        self.scratch.clear();
        self.scratch.extend_from_slice(dst);
        for &(kind, o) in &self.ops {
            if !agg::combine(kind, &mut self.scratch[o..o + kind.nwords()], &src[o..o + kind.nwords()]) {
                return false;
            }
        }
        dst.copy_from_slice(&self.scratch);
        true
    }
}
