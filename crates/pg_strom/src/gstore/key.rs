//! Gstore_Fdw's `primary_key`: which column it names, the key's bytes in
//! a stored row, and the index from keys to row versions that each
//! process keeps beside its replayed store.
//!
//! A key is compared by its bytes: the column's type must be one whose
//! equality is equality of bytes (integers, date, time, timestamp(tz),
//! uuid, text and varchar under a deterministic collation, bytea), so
//! that the index finds exactly the rows `=` finds.  Stored rows always
//! hold their key uncompressed and inline (the writer makes sure), so the
//! key's bytes are read from the minimal tuple without PostgreSQL's help.
//! The index maps a hash of the key to the row versions holding it, in row
//! order; a lookup compares the candidates' keys, so collisions never
//! matter.  Every version is indexed (dead ones too, until a checkpoint
//! drops them): visibility is the reader's business.

use std::collections::HashMap;
use std::ffi::CStr;
use std::hash::{BuildHasherDefault, Hasher};

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::raise_plain;

/// How the key column lies in a row: the attributes up to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    /// (attlen, attalign in bytes) of attributes 1..=attnum.
    attrs: Vec<(i16, u8)>,
    /// The key column's number (1-based), name and type.
    pub attnum: i16,
    pub name: String,
    pub type_oid: pg_sys::Oid,
}

/// The types whose `=` is equality of the stored bytes.
const BYTE_EQUAL_TYPES: &[pg_sys::Oid] = &[
    pg_sys::INT2OID,
    pg_sys::INT4OID,
    pg_sys::INT8OID,
    pg_sys::OIDOID,
    pg_sys::DATEOID,
    pg_sys::TIMEOID,
    pg_sys::TIMESTAMPOID,
    pg_sys::TIMESTAMPTZOID,
    pg_sys::UUIDOID,
    pg_sys::TEXTOID,
    pg_sys::VARCHAROID,
    pg_sys::BYTEAOID,
];

/// (attlen, attalign in bytes) of the first `n` attributes of `desc`.
///
/// # Safety
/// A valid tuple descriptor of at least `n` attributes.
unsafe fn layout_upto(desc: pg_sys::TupleDesc, n: i32) -> Vec<(i16, u8)> {
    (0..n)
        .map(|i| {
            // SAFETY: caller's promise.
            let a = unsafe { crate::pg::compat::tuple_desc_attr(desc, i) };
            // SAFETY: as above.
            unsafe { ((*a).attlen, crate::pg::attalign_bytes(a)) }
        })
        .collect()
}

impl KeySpec {
    /// The key column `name` of `rel`: an ERROR when the table has no such
    /// column or its type cannot be a gstore_fdw key.
    ///
    /// # Safety
    /// `rel` is an open relation.
    pub unsafe fn resolve(rel: pg_sys::Relation, name: &str) -> KeySpec {
        // SAFETY: caller's promise.
        unsafe {
            let desc = (*rel).rd_att;
            // (only for an ERROR: this runs at every use of the table)
            let relname = || CStr::from_ptr(pg_sys::get_rel_name((*rel).rd_id)).to_string_lossy().into_owned();
            let found = (0..(*desc).natts).find(|&i| {
                let a = crate::pg::compat::tuple_desc_attr(desc, i);
                !(*a).attisdropped && CStr::from_ptr((*a).attname.data.as_ptr()).to_str() == Ok(name)
            });
            let Some(k) = found else {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                    format!("primary_key column \"{name}\" of gstore_fdw table \"{}\" does not exist", relname()),
                    None,
                    Some("Name one column of the table in the primary_key option."),
                )
            };
            let a = crate::pg::compat::tuple_desc_attr(desc, k);
            let base = pg_sys::getBaseType((*a).atttypid);
            let mut ok = BYTE_EQUAL_TYPES.contains(&base);
            if ok
                && matches!(base, pg_sys::TEXTOID | pg_sys::VARCHAROID)
                && (*a).attcollation != pg_sys::InvalidOid
                && !pg_sys::get_collation_isdeterministic((*a).attcollation)
            {
                ok = false;
            }
            if !ok {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    format!(
                        "column \"{name}\" of gstore_fdw table \"{}\" cannot be its primary key: type {} is not supported as a key",
                        relname(),
                        CStr::from_ptr(pg_sys::format_type_be((*a).atttypid)).to_string_lossy()
                    ),
                    Some(
                        "A key's values are compared by their bytes: integers, oid, date, time, timestamp, timestamptz, \
                         uuid, bytea, and text or varchar under a deterministic collation."
                            .into(),
                    ),
                    None,
                );
            }
            let attrs = layout_upto(desc, k + 1);
            KeySpec { attrs, attnum: (k + 1) as i16, name: name.to_string(), type_oid: (*a).atttypid }
        }
    }

    /// The hidden ctid column a GPU cache stores after the table's
    /// columns (an `int8`, never NULL): the index UPDATE and DELETE find
    /// a heap tuple's row version by.
    ///
    /// # Safety
    /// `rel` is an open relation.
    pub unsafe fn hidden_tid(rel: pg_sys::Relation) -> KeySpec {
        // SAFETY: caller's promise.
        unsafe {
            let desc = (*rel).rd_att;
            let mut attrs = layout_upto(desc, (*desc).natts);
            attrs.push((8, 8));
            KeySpec { attnum: attrs.len() as i16, attrs, name: "ctid".into(), type_oid: pg_sys::INT8OID }
        }
    }

    /// The key's bytes in a stored row (a minimal tuple): the value of a
    /// fixed-width type, a varlena's data after its header; None for a
    /// NULL (or a row older than the column).  A compressed or external
    /// key, which writers never store, is damage.
    pub fn of_row<'t>(&self, mt: &'t [u8]) -> Result<Option<&'t [u8]>, String> {
        // the minimal tuple's header: t_infomask2 at 10, t_infomask at
        // 12, t_hoff at 14 (counted from the HeapTupleHeader, 8 bytes
        // before the minimal tuple: MINIMAL_TUPLE_OFFSET), t_bits at 15
        let bad = |m: &str| Err(format!("a stored row's {m}"));
        if mt.len() < 15 {
            return bad("header is short");
        }
        let natts = (u16::from_ne_bytes([mt[10], mt[11]]) & 0x07ff) as usize;
        let hasnull = u16::from_ne_bytes([mt[12], mt[13]]) & 0x0001 != 0;
        let hoff = mt[14] as usize;
        if hoff < 8 + 15 || hoff - 8 > mt.len() {
            return bad("header is damaged");
        }
        let k = self.attrs.len() - 1;
        if natts <= k {
            return Ok(None);
        }
        let is_null = |i: usize| hasnull && (mt[15 + i / 8] >> (i % 8)) & 1 == 0;
        if is_null(k) {
            return Ok(None);
        }
        let data = &mt[hoff - 8..];
        let mut pos = 0usize;
        for (i, &(len, align)) in self.attrs.iter().enumerate() {
            if is_null(i) {
                continue;
            }
            let align = align as usize;
            let (at, size, head) = if len > 0 {
                pos = pos.next_multiple_of(align);
                (pos, len as usize, 0)
            } else if len == -1 {
                // a pad byte is 0; a varlena's first byte never is
                if data.get(pos) == Some(&0) {
                    pos = pos.next_multiple_of(align);
                }
                let Some(&b0) = data.get(pos) else { return bad("value runs past it") };
                if b0 & 1 == 1 {
                    if b0 == 1 {
                        if i == k {
                            return bad("key is stored out of line");
                        }
                        (pos, 18, 2)
                    } else {
                        (pos, (b0 >> 1) as usize, 1)
                    }
                } else {
                    let Some(h) = data.get(pos..pos + 4) else { return bad("value runs past it") };
                    if i == k && b0 & 3 != 0 {
                        return bad("key is compressed");
                    }
                    (pos, (u32::from_le_bytes([h[0], h[1], h[2], h[3]]) >> 2) as usize, 4)
                }
            } else {
                let Some(n) = data[pos.min(data.len())..].iter().position(|&b| b == 0) else {
                    return bad("value runs past it");
                };
                (pos, n + 1, 0)
            };
            if size < head || at + size > data.len() {
                return bad("value runs past it");
            }
            if i == k {
                return Ok(Some(&data[at + head..at + size]));
            }
            pos = at + size;
        }
        bad("key is missing")
    }

    /// The key's bytes of a datum of the key's type, as [`Self::of_row`]
    /// gives them for a row holding it.
    ///
    /// # Safety
    /// `value` is a non-NULL datum of the key column's type.
    pub unsafe fn of_datum(&self, value: pg_sys::Datum) -> Vec<u8> {
        let (len, _) = self.attrs[self.attrs.len() - 1];
        // SAFETY: caller's promise.
        unsafe {
            if len == -1 {
                let p = pg_sys::pg_detoast_datum_packed(value.cast_mut_ptr());
                let n = pgrx::varlena::varsize_any_exhdr(p);
                let d = pgrx::varlena::vardata_any(p) as *const u8;
                let out = std::slice::from_raw_parts(d, n).to_vec();
                if p != value.cast_mut_ptr() {
                    pg_sys::pfree(p.cast());
                }
                out
            } else if len <= 8 && pg_sys::get_typbyval(self.type_oid) {
                // store_att_byval: the low `len` bytes, native order
                let v = value.value() as u64;
                v.to_ne_bytes()[..len as usize].to_vec()
            } else {
                std::slice::from_raw_parts(value.cast_mut_ptr::<u8>(), len as usize).to_vec()
            }
        }
    }

    /// The key of a stored row as text (for messages).
    ///
    /// # Safety
    /// A backend; `key` bytes of this spec's type.
    pub unsafe fn text_of(&self, key: &[u8]) -> String {
        // SAFETY: a datum made of the key's bytes in its stored form.
        unsafe {
            let (len, _) = self.attrs[self.attrs.len() - 1];
            let datum = if len == -1 {
                let p = pg_sys::palloc(key.len() + 4) as *mut u8;
                (p as *mut u32).write_unaligned(((key.len() + 4) as u32) << 2);
                std::ptr::copy_nonoverlapping(key.as_ptr(), p.add(4), key.len());
                pg_sys::Datum::from(p)
            } else if len <= 8 && pg_sys::get_typbyval(self.type_oid) {
                let mut b = [0u8; 8];
                b[..key.len()].copy_from_slice(key);
                // sign-extend as fetch_att does for the narrower types
                let v = match len {
                    1 => b[0] as i8 as i64,
                    2 => i16::from_ne_bytes([b[0], b[1]]) as i64,
                    4 => i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as i64,
                    _ => i64::from_ne_bytes(b),
                };
                pg_sys::Datum::from(v)
            } else {
                let p = pg_sys::palloc(key.len()) as *mut u8;
                std::ptr::copy_nonoverlapping(key.as_ptr(), p, key.len());
                pg_sys::Datum::from(p)
            };
            let (mut out, mut varlena) = (pg_sys::InvalidOid, false);
            pg_sys::getTypeOutputInfo(self.type_oid, &mut out, &mut varlena);
            CStr::from_ptr(pg_sys::OidOutputFunctionCall(out, datum)).to_string_lossy().into_owned()
        }
    }
}

/// A hasher that takes a `u64` as its own hash (the index's keys are
/// hashes already).
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A key's hash (FNV-1a, then mixed).
pub fn hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// The row versions of one hash: one, or several (row order).
#[derive(Debug, Clone)]
enum Ids {
    One(u64),
    Many(Vec<u64>),
}

/// The index of a store's rows by key.
#[derive(Debug)]
pub struct KeyIndex {
    pub spec: KeySpec,
    map: HashMap<u64, Ids, BuildHasherDefault<PassThrough>>,
}

impl KeyIndex {
    /// An empty index of `spec`'s key.
    pub fn new(spec: KeySpec) -> KeyIndex {
        KeyIndex { spec, map: HashMap::default() }
    }

    /// Room for `n` more keys (a replay knows how many rows follow).
    pub fn reserve(&mut self, n: usize) {
        self.map.reserve(n);
    }

    /// Index row `id` (the next row version): nothing for a NULL key.
    pub fn add(&mut self, id: u64, tuple: &[u8]) -> Result<(), String> {
        let Some(key) = self.spec.of_row(tuple)? else { return Ok(()) };
        match self.map.entry(hash(key)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Ids::One(id));
            }
            std::collections::hash_map::Entry::Occupied(mut o) => match o.get_mut() {
                Ids::One(first) => {
                    let first = *first;
                    o.insert(Ids::Many(vec![first, id]));
                }
                Ids::Many(v) => v.push(id),
            },
        }
        Ok(())
    }

    /// The row versions whose hash is `key`'s (candidates: the caller
    /// compares their keys), in row order.
    pub fn candidates(&self, key: &[u8]) -> &[u64] {
        match self.map.get(&hash(key)) {
            None => &[],
            Some(Ids::One(id)) => std::slice::from_ref(id),
            Some(Ids::Many(v)) => v,
        }
    }
}
