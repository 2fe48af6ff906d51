//! The group filter's spill: a serial GpuPreAgg with a group filter
//! (`codegen::having`) whose groups outgrow hash_mem writes each full
//! set of merged groups to PostgreSQL temporary files, partitioned by the
//! groups' keys, instead of returning them; after its last chunk it reads
//! the partitions back one at a time, merges each (a group's partial
//! states all lie in one partition), filters it and returns what passes.
//! PostgreSQL's own hash aggregate spills the same way.  TPC-H Q18's
//! `GROUP BY l_orderkey HAVING sum(l_quantity) > 300` at SF 10 holds 15
//! million groups (at SF 1, 57 of 1.5 million pass).
//!
//! Only for groups told apart by their device key values (no text key of
//! an inner relation: those are read at a representative row).  A
//! partition that outgrows hash_mem in turn is returned unfiltered, a
//! merger's worth at a time (the Finalize Aggregate filters it), as is
//! everything when a chunk's groups change layout.  The files are BufFiles of the current resource
//! owner: closed at the end of the scan, or by PostgreSQL at the end of
//! the transaction after an error.

use pgrx::pg_sys;

use pgstrom_runtime::agg::{AggGroups, KeyValue};

/// Partitions of a spill: at hash_mem's default of 8 MB a partition
/// holds tens of thousands of groups, so a few million groups reload
/// without a second spill.
pub const PARTITIONS: usize = 128;

/// Bytes of a key in a record.
const KEY_BYTES: usize = 24;

/// The groups written so far, by partition.
pub struct Spill {
    files: Vec<*mut pg_sys::BufFile>,
    counts: Vec<usize>,
    nsources: usize,
    nkeys: usize,
    nwords: usize,
    /// Per partition: records not yet written to its file.
    bufs: Vec<Vec<u8>>,
    /// Per partition: being read back (its file rewound).
    reading: Vec<bool>,
}

/// Bytes a partition gathers before they are written.
const WRITE_BYTES: usize = 64 * 1024;

/// A group's partition: the top bits of the hash the merger gives its
/// identity (its keys' value bits, high bits, length and NULL), so that
/// the low bits, which place it in the merger's table when read back,
/// still spread over the table.
fn partition(keys: &[KeyValue]) -> usize {
    let id = keys.iter().flat_map(|k| [k.bits as u64, k.hi as u64, k.len as u32 as u64 | (k.isnull as u64) << 32]);
    (super::merge::hash_iter(3 * keys.len(), id) >> (64 - PARTITIONS.trailing_zeros())) as usize
}

impl Spill {
    /// An empty spill for groups of `g`'s layout.
    pub fn new(g: &AggGroups) -> Spill {
        Spill {
            files: vec![std::ptr::null_mut(); PARTITIONS],
            counts: vec![0; PARTITIONS],
            nsources: g.nsources,
            nkeys: g.nkeys,
            nwords: g.nwords,
            bufs: vec![Vec::new(); PARTITIONS],
            reading: vec![false; PARTITIONS],
        }
    }

    /// Whether `g` has the layout of the groups written.
    pub fn fits(&self, g: &AggGroups) -> bool {
        g.count == 0 || (g.nsources, g.nkeys, g.nwords) == (self.nsources, self.nkeys, self.nwords)
    }

    fn record_bytes(&self) -> usize {
        self.nsources * 4 + self.nkeys * KEY_BYTES + self.nwords * 8
    }

    /// Write groups `g` (of the spill's layout) to their partitions.
    pub fn write(&mut self, g: &AggGroups) {
        for i in 0..g.count {
            let keys = &g.keys[i * g.nkeys..(i + 1) * g.nkeys];
            let p = partition(keys);
            let buf = &mut self.bufs[p];
            for s in 0..g.nsources {
                buf.extend_from_slice(&g.row(s, i).to_le_bytes());
            }
            for k in keys {
                buf.extend_from_slice(&k.bits.to_le_bytes());
                buf.extend_from_slice(&k.hi.to_le_bytes());
                buf.extend_from_slice(&k.len.to_le_bytes());
                buf.extend_from_slice(&(k.isnull as u32).to_le_bytes());
            }
            for w in g.group_words(i) {
                buf.extend_from_slice(&w.to_le_bytes());
            }
            self.counts[p] += 1;
            if buf.len() >= WRITE_BYTES {
                self.flush(p);
            }
        }
    }

    /// Write partition `p`'s gathered records to its file.
    fn flush(&mut self, p: usize) {
        let buf = &mut self.bufs[p];
        if buf.is_empty() {
            return;
        }
        // SAFETY: a temporary BufFile of this backend, opened here and
        // closed only by read() or close() (or by PostgreSQL at the end
        // of the transaction); the buffer holds buf.len() bytes.
        unsafe {
            if self.files[p].is_null() {
                // (temp_tablespaces, as PostgreSQL's own spills read it)
                pg_sys::PrepareTempTablespaces();
                self.files[p] = pg_sys::BufFileCreateTemp(false);
            }
            pg_sys::BufFileWrite(self.files[p], buf.as_mut_ptr().cast(), buf.len());
        }
        buf.clear();
    }

    /// Whether partition `p` was read back in part (its next groups are
    /// not all of its groups).
    pub fn read_in_pieces(&self, p: usize) -> bool {
        self.reading[p]
    }

    /// Groups of partition `p` not read back yet.
    pub fn left(&self, p: usize) -> usize {
        self.counts[p]
    }

    /// The next groups of partition `p` (at most `max`), read back in the
    /// order written; the file is closed after its last.
    pub fn read(&mut self, p: usize, max: usize) -> AggGroups {
        let n = self.counts[p].min(max.max(1));
        let rb = self.record_bytes();
        let mut g = AggGroups {
            nsources: self.nsources,
            count: n,
            rows: vec![0; self.nsources * n],
            nkeys: self.nkeys,
            keys: Vec::with_capacity(self.nkeys * n),
            nwords: self.nwords,
            words: Vec::with_capacity(self.nwords * n),
            stage_counts: Vec::new(),
            exceptions: Vec::new(),
        };
        if n == 0 {
            return g;
        }
        if !self.bufs[p].is_empty() || !self.reading[p] {
            // the first read: what is gathered goes to the file, which is
            // rewound (written no more after this)
            self.flush(p);
            self.reading[p] = true;
            // SAFETY: the partition's file, written by write().
            if unsafe { pg_sys::BufFileSeek(self.files[p], 0, 0, libc::SEEK_SET) } != 0 {
                crate::errors::raise_plain(
                    pgrx::PgSqlErrorCode::ERRCODE_IO_ERROR,
                    "could not rewind a temporary file of a GpuPreAgg".into(),
                    None,
                    None,
                );
            }
        }
        let file = self.files[p];
        let mut bytes = vec![0u8; n * rb];
        // SAFETY: the partition's file holds counts[p] >= n more records
        // of rb bytes from its position on.
        let got = unsafe { pg_sys::BufFileRead(file, bytes.as_mut_ptr().cast(), bytes.len()) };
        if got != bytes.len() {
            crate::errors::raise_plain(
                pgrx::PgSqlErrorCode::ERRCODE_IO_ERROR,
                format!("could not read a temporary file of a GpuPreAgg: read only {got} of {} bytes", bytes.len()),
                None,
                None,
            );
        }
        let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        for (i, r) in bytes.chunks_exact(rb).enumerate() {
            let mut o = 0;
            for s in 0..self.nsources {
                g.rows[s * n + i] = u32_at(r, o);
                o += 4;
            }
            for _ in 0..self.nkeys {
                g.keys.push(KeyValue {
                    bits: u64_at(r, o) as i64,
                    hi: u64_at(r, o + 8) as i64,
                    len: u32_at(r, o + 16) as i32,
                    isnull: u32_at(r, o + 20) != 0,
                });
                o += KEY_BYTES;
            }
            for _ in 0..self.nwords {
                g.words.push(u64_at(r, o));
                o += 8;
            }
        }
        self.counts[p] -= n;
        if self.counts[p] == 0 {
            self.files[p] = std::ptr::null_mut();
            self.reading[p] = false;
            // SAFETY: the file, read whole; closed once.
            unsafe { pg_sys::BufFileClose(file) };
        }
        g
    }

    /// Close every file still open (a scan that ends or restarts early).
    pub fn close(&mut self) {
        for f in self.files.iter_mut() {
            if !f.is_null() {
                // SAFETY: a file this spill opened and has not closed.
                unsafe { pg_sys::BufFileClose(*f) };
                *f = std::ptr::null_mut();
            }
        }
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.bufs.iter_mut().for_each(|b| *b = Vec::new());
        self.reading.iter_mut().for_each(|r| *r = false);
    }
}
