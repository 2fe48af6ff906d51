//! The session time zone as the table device programs read
//! (device/include/device_tz.h): what PostgreSQL's own
//! `pg_next_dst_boundary` and `pg_localtime` say, segment by segment, from
//! 1800 to 2400, and the rule beyond (constant, or the 400-year cycle
//! PostgreSQL extrapolates with), each checked against PostgreSQL.
//!
//! Codegen puts the planning session's table into a program that needs
//! it; [`bind`] replaces it with the executing session's when a plan is
//! loaded, so a cached plan follows `SET TIME ZONE`.  Tables are cached
//! per zone for the life of the backend (PostgreSQL keeps its zones as
//! long).

use std::cell::RefCell;
use std::ffi::CStr;
use std::rc::Rc;

use pgrx::pg_sys;
use pgstrom_runtime::program::{Program, tz};

/// 400 Gregorian years, in seconds.
const PERIOD: i64 = 146_097 * 86_400;
/// 1800-01-01 00:00 UTC, in Unix seconds.
const LO: i64 = -5_364_662_400;
/// 2400-01-01 00:00 UTC.
const HI: i64 = 13_569_465_600;
/// The first second of a timestamptz (4714-11-24 BC), less two days for
/// DetermineTimeZoneOffset's look-back.
const FIRST: i64 = -210_866_803_200 - 2 * 86_400;
/// Segments at most (a zone changing every week for 600 years).
const MAX_SEGMENTS: usize = 40_000;

/// What PostgreSQL says of one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct At {
    res: i32,
    before: i64,
    boundary: i64,
    after: i64,
    gmtoff: i64,
}

impl At {
    fn shifted(self, by: i64) -> At {
        At { boundary: if self.res == 1 { self.boundary + by } else { 0 }, ..self }
    }
}

/// pg_next_dst_boundary and pg_localtime at Unix second `t`.
fn at(zone: *mut pg_sys::pg_tz, t: i64) -> Option<At> {
    let (mut before, mut after, mut bdst, mut adst, mut boundary): (std::ffi::c_long, std::ffi::c_long, i32, i32, i64) =
        (0, 0, 0, 0, 0);
    // SAFETY: a zone PostgreSQL keeps for the backend's life; the out
    // arguments are locals; pg_localtime returns its static buffer or NULL.
    unsafe {
        let res = pg_sys::pg_next_dst_boundary(&t, &mut before, &mut bdst, &mut boundary, &mut after, &mut adst, zone);
        if !(0..=1).contains(&res) {
            return None;
        }
        let tm = pg_sys::pg_localtime(&t, zone);
        if tm.is_null() {
            return None;
        }
        let (boundary, after) = if res == 1 { (boundary, after) } else { (0, 0) };
        Some(At { res, before, boundary, after, gmtoff: (*tm).tm_gmtoff })
    }
}

/// Whether seconds `x` (inside the covered ones) and `x + k * PERIOD`
/// agree, for every k that stays within the timestamptz range.
fn periodic_at(zone: *mut pg_sys::pg_tz, x: i64, ks: &[i64]) -> bool {
    let Some(base) = at(zone, x) else { return false };
    ks.iter().all(|&k| at(zone, x + k * PERIOD) == Some(base.shifted(k * PERIOD)))
}

/// Sample seconds of the segments in [from, to]: each segment's first and
/// last second and its middle.
fn samples(segs: &[(i64, At)], from: i64, to: i64) -> Vec<i64> {
    let mut v = Vec::new();
    for (k, (start, a)) in segs.iter().enumerate() {
        let end = segs.get(k + 1).map_or(if a.res == 1 { a.boundary } else { to + 1 }, |s| s.0) - 1;
        for x in [*start, start + (end - start) / 2, end] {
            if (from..=to).contains(&x) {
                v.push(x);
            }
        }
    }
    v.push(from);
    v.push(to);
    v
}

/// A zone's segments (start, answers) and its rules below and above them.
#[derive(Default)]
struct Built {
    segs: Vec<(i64, At)>,
    low: i32,
    high: i32,
}

/// The table of `zone`; None when PostgreSQL's answers do not fit it
/// (no zone is known to do that).
fn build(zone: *mut pg_sys::pg_tz) -> Option<Built> {
    let mut segs: Vec<(i64, At)> = Vec::new();
    let mut t = LO;
    let mut high = tz::NONE;
    loop {
        let a = at(zone, t)?;
        if a.res == 1 {
            // one answer through the segment: its last second agrees
            if a.boundary <= t || at(zone, a.boundary - 1)? != a {
                return None;
            }
        }
        segs.push((t, a));
        if a.res == 0 {
            high = tz::CONST;
            break;
        }
        if a.boundary > HI {
            break;
        }
        if segs.len() >= MAX_SEGMENTS {
            return None;
        }
        t = a.boundary;
    }
    if high == tz::NONE {
        // PostgreSQL extrapolates past its last transition by whole cycles
        let ks = [1, 2, (294_277 - 2400) / 400 + 1];
        if samples(&segs, HI - PERIOD + 1, HI).into_iter().all(|x| periodic_at(zone, x, &ks)) {
            high = tz::PERIODIC;
        }
    }
    let first = at(zone, LO)?;
    let low = if [1, 86_400, 400 * 365 * 86_400, LO - FIRST].iter().all(|&d| at(zone, LO - d) == Some(first)) {
        tz::CONST
    } else if samples(&segs, LO, LO + PERIOD - 1).into_iter().all(|x| periodic_at(zone, x, &[-1, -2, -17])) {
        tz::PERIODIC
    } else {
        tz::NONE
    };
    Some(Built { segs, low, high })
}

/// The table's bytes (device_tz.h) under `magic` (session or named); no
/// segments when [`build`] failed, which makes every lookup PostgreSQL's.
fn encode(magic: u32, name: &str, built: Option<Built>) -> Vec<u8> {
    let Built { segs, low, high } = built.unwrap_or_default();
    let mut b = Vec::with_capacity(tz::HEADER + segs.len() * tz::SEGMENT);
    b.extend_from_slice(&magic.to_le_bytes());
    b.extend_from_slice(&(segs.len() as u32).to_le_bytes());
    b.extend_from_slice(&LO.to_le_bytes());
    b.extend_from_slice(&HI.to_le_bytes());
    b.extend_from_slice(&low.to_le_bytes());
    b.extend_from_slice(&high.to_le_bytes());
    b.extend_from_slice(&PERIOD.to_le_bytes());
    let mut n = [0u8; tz::NAME];
    let name = name.as_bytes();
    // a whole UTF-8 prefix that leaves a terminating NUL
    let mut len = name.len().min(tz::NAME - 1);
    while len > 0 && std::str::from_utf8(&name[..len]).is_err() {
        len -= 1;
    }
    n[..len].copy_from_slice(&name[..len]);
    b.extend_from_slice(&n);
    for (start, a) in segs {
        b.extend_from_slice(&start.to_le_bytes());
        b.extend_from_slice(&a.boundary.to_le_bytes());
        b.extend_from_slice(&(a.before as i32).to_le_bytes());
        b.extend_from_slice(&(a.after as i32).to_le_bytes());
        b.extend_from_slice(&a.res.to_le_bytes());
        b.extend_from_slice(&(a.gmtoff as i32).to_le_bytes());
    }
    b
}

/// A cached table: (zone, magic) and its bytes.
type Cached = ((usize, u32), Rc<Vec<u8>>);

thread_local! {
    /// The tables made so far, oldest first.
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// The table of `zone` with `magic` (session or named), cached.
fn table_of(zone: *mut pg_sys::pg_tz, magic: u32) -> Rc<Vec<u8>> {
    let key = (zone as usize, magic);
    if let Some(t) = CACHE.with_borrow(|c| c.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone())) {
        return t;
    }
    // SAFETY: a valid zone; its name is a NUL-terminated string it owns.
    let name = unsafe { CStr::from_ptr(pg_sys::pg_get_timezone_name(zone)) }.to_string_lossy().into_owned();
    let table = Rc::new(encode(magic, &name, build(zone)));
    CACHE.with_borrow_mut(|c| {
        if c.len() >= 16 {
            c.remove(0);
        }
        c.push((key, table.clone()));
    });
    table
}

/// The session time zone's table.
pub fn session_table() -> Rc<Vec<u8>> {
    // SAFETY: the backend's session time zone (set during start-up).
    table_of(unsafe { pg_sys::session_timezone }, tz::MAGIC)
}

/// The table of the zone `name` names in `AT TIME ZONE name`, as
/// PostgreSQL's DecodeTimezoneName takes it: a full zone name, or an
/// abbreviation of one fixed offset (UTC, EST; under the
/// timezone_abbreviations of planning time).  None for the abbreviations
/// whose offset depends on the date, names PostgreSQL does not know, and
/// zones that could not be tabulated: those stay with PostgreSQL.
pub fn named_table(name: &str) -> Option<Rc<Vec<u8>>> {
    // text_to_cstring_buffer's limit (TZ_STRLEN_MAX), no NULs
    if name.len() > 255 || name.contains('\0') {
        return None;
    }
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name.  pg_tzset returns NULL for a name it
    // does not know (where DecodeTimezoneName would raise); an
    // abbreviation is looked up first, as DecodeTimezoneName does.
    unsafe {
        if pg_sys::pg_tzset(c.as_ptr()).is_null() {
            return None;
        }
        match crate::pg::compat::decode_timezone_name(&c)? {
            crate::pg::compat::TzName::Fixed(offset) => {
                // an abbreviation of one offset (UTC, EST): one segment
                let at = At { res: 0, before: offset.into(), boundary: 0, after: 0, gmtoff: offset.into() };
                let fixed = Built { segs: vec![(LO, at)], low: tz::CONST, high: tz::CONST };
                Some(Rc::new(encode(tz::MAGIC_NAMED, name, Some(fixed))))
            }
            crate::pg::compat::TzName::Zone(zone) => {
                let t = table_of(zone, tz::MAGIC_NAMED);
                (u32::from_le_bytes(t[4..8].try_into().unwrap()) > 0).then_some(t)
            }
        }
    }
}

/// Whether the session time zone could be tabulated (codegen offloads the
/// functions that depend on it only then).
pub fn session_usable() -> bool {
    let t = session_table();
    u32::from_le_bytes(t[4..8].try_into().unwrap()) > 0
}

/// Give a program loaded from a plan the executing session's time zone.
pub fn bind(program: &mut Program) {
    if program.uses_time_zone()
        && let Err(e) = program.set_time_zone(&session_table())
    {
        crate::errors::raise("cannot load the plan's device program", &e);
    }
}
