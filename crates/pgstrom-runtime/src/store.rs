//! The GPU store's files (Gstore_Fdw): the redo log and the base file.
//!
//! Both files are a 32-byte header (magic, generation) followed by
//! records.  A record is `[length u32][crc32 u32][payload]`, little
//! endian, the CRC over the payload; a payload is a kind byte, the writing
//! transaction's full id (u64) and command id (u32), then the kind's own
//! bytes:
//!
//! - `Insert`: the row as a PostgreSQL minimal tuple; the row's id is its
//!   place among the inserts, counted from the base file's first.
//! - `Delete`: the id (u64) of the row the transaction deletes; an UPDATE
//!   writes one marked as such (its own kind byte) and the `Insert` of the
//!   new version together.
//! - `Truncate`: every row inserted before the record is deleted.
//! - `Layout`: the column types the rows were written with (the first
//!   record of each file).
//!
//! The redo log only grows; a checkpoint writes the rows every snapshot
//! still needs into a new base file of the next generation and starts a new
//! log of that generation.  A log whose generation is below the base
//! file's was folded into it (a checkpoint crashed between the two
//! renames) and is read as empty.
//!
//! Readers stop at the first record that is incomplete or fails its CRC:
//! the torn tail of a write that a crash interrupted, or one being written
//! now.  Writers, holding the log's lock, cut such a tail off before they
//! append.  Whether a record's transaction committed is PostgreSQL's to
//! say (its commit log); nothing here knows of transactions.

use std::io::{Read, Seek, SeekFrom, Write};

/// Magic of a redo log.
pub const LOG_MAGIC: &[u8; 8] = b"PGSTLOG1";
/// Magic of a base file.
pub const BASE_MAGIC: &[u8; 8] = b"PGSTBAS1";
/// Bytes of a file header.
pub const HEADER_LEN: u64 = 32;
/// Bytes a reader of [`holds_records`] should give it: a header and a
/// Layout record of PostgreSQL's most columns (1,600).
pub const HEAD_BYTES: usize = 8192;

/// Whether a log of `len` bytes whose first bytes (up to [`HEAD_BYTES`])
/// are `head` holds a record besides the Layout record every file starts
/// with (a checkpoint leaves the header and that record alone).  A first
/// record that is incomplete or damaged counts as one: what reads the
/// log decides about it.
pub fn holds_records(head: &[u8], len: u64) -> bool {
    match head.get(HEADER_LEN as usize..).and_then(Record::decode) {
        Some((Record::Layout { .. }, n)) => len > HEADER_LEN + n as u64,
        _ => len > HEADER_LEN,
    }
}

/// The largest record accepted (a row of 1 GB, as PostgreSQL's limit).
pub const MAX_RECORD: u32 = 1 << 30;

/// What a record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new row (a minimal tuple's bytes).
    Insert {
        /// The writing transaction (full id).
        xid: u64,
        /// Its command.
        cid: u32,
        /// The row.
        tuple: Vec<u8>,
    },
    /// Row `row` deleted, or replaced by an update (`updated`: the
    /// record that follows inserts the new version).
    Delete {
        /// The deleting transaction (full id).
        xid: u64,
        /// Its command.
        cid: u32,
        /// The row's id.
        row: u64,
        /// Whether an UPDATE replaced the row (rather than a DELETE).
        updated: bool,
    },
    /// Every row inserted before this record deleted.
    Truncate {
        /// The truncating transaction (full id).
        xid: u64,
        /// Its command.
        cid: u32,
    },
    /// The column types the rows after it were written with (type ids,
    /// 0 for a dropped column): the first record of every file.
    Layout {
        /// One per column.
        types: Vec<u32>,
    },
}

const KIND_INSERT: u8 = 1;
const KIND_DELETE: u8 = 2;
const KIND_TRUNCATE: u8 = 3;
const KIND_LAYOUT: u8 = 4;
const KIND_UPDATE: u8 = 5;

impl Record {
    /// Append the record's bytes (length, CRC, payload) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0u8; 8]);
        let (kind, xid, cid) = match self {
            Record::Insert { xid, cid, .. } => (KIND_INSERT, *xid, *cid),
            Record::Delete { xid, cid, updated: false, .. } => (KIND_DELETE, *xid, *cid),
            Record::Delete { xid, cid, updated: true, .. } => (KIND_UPDATE, *xid, *cid),
            Record::Truncate { xid, cid } => (KIND_TRUNCATE, *xid, *cid),
            Record::Layout { .. } => (KIND_LAYOUT, 0, 0),
        };
        out.push(kind);
        out.extend_from_slice(&xid.to_le_bytes());
        out.extend_from_slice(&cid.to_le_bytes());
        match self {
            Record::Insert { tuple, .. } => out.extend_from_slice(tuple),
            Record::Delete { row, .. } => out.extend_from_slice(&row.to_le_bytes()),
            Record::Truncate { .. } => {}
            Record::Layout { types } => types.iter().for_each(|t| out.extend_from_slice(&t.to_le_bytes())),
        }
        let payload = &out[start + 8..];
        let len = payload.len() as u32;
        let crc = crc32(payload);
        out[start..start + 4].copy_from_slice(&len.to_le_bytes());
        out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    }

    /// The record at the start of `buf` and its length in bytes; None if
    /// `buf` holds no whole, intact record there.
    pub fn decode(buf: &[u8]) -> Option<(Record, usize)> {
        if buf.len() < 8 {
            return None;
        }
        let len = u32::from_le_bytes(buf[0..4].try_into().ok()?);
        let crc = u32::from_le_bytes(buf[4..8].try_into().ok()?);
        if !(13..=MAX_RECORD).contains(&len) || buf.len() < 8 + len as usize {
            return None;
        }
        let payload = &buf[8..8 + len as usize];
        if crc32(payload) != crc {
            return None;
        }
        let xid = u64::from_le_bytes(payload[1..9].try_into().ok()?);
        let cid = u32::from_le_bytes(payload[9..13].try_into().ok()?);
        let rest = &payload[13..];
        let rec = match payload[0] {
            KIND_INSERT => Record::Insert { xid, cid, tuple: rest.to_vec() },
            k @ (KIND_DELETE | KIND_UPDATE) if rest.len() == 8 => {
                Record::Delete { xid, cid, row: u64::from_le_bytes(rest.try_into().ok()?), updated: k == KIND_UPDATE }
            }
            KIND_TRUNCATE if rest.is_empty() => Record::Truncate { xid, cid },
            KIND_LAYOUT if rest.len().is_multiple_of(4) => Record::Layout {
                types: rest.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect(),
            },
            _ => return None,
        };
        Some((rec, 8 + len as usize))
    }
}

/// A file header: magic, generation and the owner (the database
/// cluster's system identifier: transaction ids mean something only in
/// the cluster that wrote them).
pub fn header(magic: &[u8; 8], generation: u64, owner: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(magic);
    h[8..16].copy_from_slice(&generation.to_le_bytes());
    h[16..24].copy_from_slice(&owner.to_le_bytes());
    h
}

/// The generation a header of `magic` holds, checked to belong to
/// `owner`; an error naming what is wrong otherwise.
pub fn read_header(buf: &[u8], magic: &[u8; 8], owner: u64) -> Result<u64, String> {
    if buf.len() < HEADER_LEN as usize {
        return Err(format!("file is shorter than its {HEADER_LEN}-byte header"));
    }
    if &buf[..8] != magic {
        return Err(format!(
            "not a pg_strom GPU store {} (bad magic)",
            if magic == LOG_MAGIC { "redo log" } else { "base file" }
        ));
    }
    let theirs = u64::from_le_bytes(buf[16..24].try_into().expect("8 bytes"));
    if theirs != owner {
        return Err(format!(
            "written by another database cluster (system identifier {theirs}, this one's is {owner}); each cluster needs its own files"
        ));
    }
    Ok(u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes")))
}

/// The records of `buf` from `offset` on, with the offset after the last
/// intact one.
pub fn records_from(buf: &[u8], mut offset: usize) -> (Vec<Record>, usize) {
    let mut out = Vec::new();
    while offset < buf.len() {
        match Record::decode(&buf[offset..]) {
            Some((r, n)) => {
                out.push(r);
                offset += n;
            }
            None => break,
        }
    }
    (out, offset)
}

/// Read `file` from `offset` to its end.
pub fn read_tail(file: &mut std::fs::File, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    file.seek(SeekFrom::Start(offset))?;
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Write a whole file of `magic`, `generation`, `owner` and `body` (encoded
/// records) at `path` atomically: a temporary file beside it, synced, then
/// renamed over it, then the directory synced.
pub fn write_file_atomic(
    path: &std::path::Path,
    magic: &[u8; 8],
    generation: u64,
    owner: u64,
    body: &[u8],
) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}tmp",
        path.extension().map(|e| format!("{}.", e.to_string_lossy())).unwrap_or_default()
    ));
    {
        let mut f = std::fs::OpenOptions::new().create(true).write(true).truncate(true).open(&tmp)?;
        f.write_all(&header(magic, generation, owner))?;
        f.write_all(body)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir })?.sync_all()?;
    }
    Ok(())
}

/// CRC-32 (IEEE) of `data`, eight bytes a step (slicing-by-8: a
/// store's replay checks every record of its files, and bytewise this was
/// a fifth of a replay's time).
pub fn crc32(data: &[u8]) -> u32 {
    static TABLES: std::sync::OnceLock<[[u32; 256]; 8]> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(|| {
        let mut t = [[0u32; 256]; 8];
        for (i, e) in t[0].iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
            *e = c;
        }
        // t[k][i]: the CRC of byte i followed by k zero bytes
        for k in 1..8 {
            let (done, rest) = t.split_at_mut(k);
            for (i, e) in rest[0].iter_mut().enumerate() {
                let prev = done[k - 1][i];
                *e = done[0][(prev & 0xff) as usize] ^ (prev >> 8);
            }
        }
        t
    });
    let mut crc = 0xFFFF_FFFFu32;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        crc = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xff) as usize]
            ^ t[2][((hi >> 8) & 0xff) as usize]
            ^ t[1][((hi >> 16) & 0xff) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_the_check_string() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        // every length around the 8-byte steps, against the bytewise sum
        let bytewise = |d: &[u8]| {
            let mut crc = 0xFFFF_FFFFu32;
            for &b in d {
                crc ^= b as u32;
                for _ in 0..8 {
                    crc = if crc & 1 != 0 { 0xEDB8_8320 ^ (crc >> 1) } else { crc >> 1 };
                }
            }
            !crc
        };
        let data: Vec<u8> = (0..100u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for n in 0..data.len() {
            assert_eq!(crc32(&data[..n]), bytewise(&data[..n]), "{n} bytes");
        }
    }

    #[test]
    fn records_round_trip_and_stop_at_a_torn_tail() {
        let recs = vec![
            Record::Insert { xid: 1 << 33 | 7, cid: 0, tuple: vec![1, 2, 3, 4, 5] },
            Record::Delete { xid: 9, cid: 2, row: 123_456_789_012, updated: false },
            Record::Delete { xid: 9, cid: 3, row: 5, updated: true },
            Record::Truncate { xid: 10, cid: 0 },
            Record::Insert { xid: 11, cid: 1, tuple: Vec::new() },
        ];
        let mut layout = Vec::new();
        Record::Layout { types: vec![23, 0, 25] }.encode(&mut layout);
        assert_eq!(records_from(&layout, 0).0, vec![Record::Layout { types: vec![23, 0, 25] }]);
        let mut buf = Vec::new();
        for r in &recs {
            r.encode(&mut buf);
        }
        let whole = buf.len();
        assert_eq!(records_from(&buf, 0), (recs.clone(), whole));
        // every cut inside the last record leaves the first three
        let third_end = {
            let mut b = Vec::new();
            for r in &recs[..4] {
                r.encode(&mut b);
            }
            b.len()
        };
        for cut in third_end..whole {
            assert_eq!(records_from(&buf[..cut], 0), (recs[..4].to_vec(), third_end), "cut at {cut}");
        }
        // a flipped bit stops the read at the record it hits
        let mut bad = buf.clone();
        bad[third_end + 12] ^= 0x10;
        assert_eq!(records_from(&bad, 0).1, third_end);
        // a length beyond the limit is never trusted
        let mut huge = buf.clone();
        huge[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(records_from(&huge, 0), (Vec::new(), 0));
    }

    #[test]
    fn a_checkpointed_log_holds_no_records() {
        let mut f = header(LOG_MAGIC, 3, 7).to_vec();
        assert!(!holds_records(&f, f.len() as u64));
        Record::Layout { types: vec![23, 25] }.encode(&mut f);
        assert!(!holds_records(&f, f.len() as u64));
        let layout_end = f.len();
        Record::Truncate { xid: 9, cid: 0 }.encode(&mut f);
        assert!(holds_records(&f, f.len() as u64));
        // (a head cut inside the first record: counted as a record)
        assert!(holds_records(&f[..layout_end - 1], f.len() as u64));
        // a log without a Layout record first
        let mut g = header(LOG_MAGIC, 3, 7).to_vec();
        Record::Truncate { xid: 9, cid: 0 }.encode(&mut g);
        assert!(holds_records(&g, g.len() as u64));
    }

    #[test]
    fn headers_are_checked() {
        let h = header(LOG_MAGIC, 42, 7);
        assert_eq!(read_header(&h, LOG_MAGIC, 7), Ok(42));
        assert!(read_header(&h, LOG_MAGIC, 8).unwrap_err().contains("another database cluster"));
        assert!(read_header(&h, BASE_MAGIC, 7).unwrap_err().contains("bad magic"));
        assert!(read_header(&h[..10], LOG_MAGIC, 7).unwrap_err().contains("shorter"));
    }

    #[test]
    fn atomic_writes_replace_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("pgstrom-store-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.base");
        let mut body = Vec::new();
        Record::Truncate { xid: 3, cid: 0 }.encode(&mut body);
        write_file_atomic(&p, BASE_MAGIC, 5, 1, &body).unwrap();
        write_file_atomic(&p, BASE_MAGIC, 6, 1, &body).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(read_header(&bytes, BASE_MAGIC, 1), Ok(6));
        assert_eq!(records_from(&bytes, HEADER_LEN as usize).0.len(), 1);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
