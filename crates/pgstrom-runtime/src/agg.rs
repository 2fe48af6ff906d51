//! GROUP BY on an engine (device/kernels/preagg.cu): the aggregation a join
//! request may carry, the accumulator layout, and the groups a chunk
//! produces.
//!
//! The final combinations of a chunk (a scan is a join of no depth) are
//! grouped by the grouping keys on the engine and reduced to one set of
//! accumulator words per group; only the groups come back: for each, its
//! representative combination (one row index per source, where the host
//! reads the key values) and its words.  Groups of different chunks are
//! not merged here: the caller emits them as partial aggregates and
//! PostgreSQL combines them.

use crate::engine::check_program;
use crate::error::DeviceError;
use crate::join::DevProgramRefRepr;
use crate::program::{Program, type_id};

/// Most grouping keys (PGSTROM_MAX_GROUP_KEYS).
pub const MAX_GROUP_KEYS: usize = 16;
/// Most aggregate operations of one aggregation.
pub const MAX_AGG_OPS: usize = 256;

/// An accumulator operation (AGGOP_* in preagg.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum AggKind {
    /// Rows (with every argument non-NULL): `[n]`.
    Count = 1,
    /// Exact integer sum: `[n, sum of low 32 bits, sum of high 32 bits]`.
    SumInt = 2,
    /// Float sum in double: `[n, sum]`.
    SumFlt = 3,
    /// Shifted moments of x: `[n, Σd, Σd², c]`, d = x - c.
    Moments = 4,
    /// Shifted moments of (y, x): `[n, Σdx, Σdx², Σdy, Σdy², Σdxdy, cx, cy]`.
    Moments2 = 5,
    /// Integer minimum: `[n, value]`.
    MinInt = 6,
    /// Integer maximum: `[n, value]`.
    MaxInt = 7,
    /// Float minimum: `[n, ordered bits]`.
    MinFlt = 8,
    /// Float maximum: `[n, ordered bits]`.
    MaxFlt = 9,
    /// Exact numeric sum at the operation's scale:
    /// `[n, max scale << 48 | rows at it, NaN, +Inf, -Inf, 4 limbs]`
    /// (the finite values as 128-bit mantissas at that scale, summed in
    /// four 32-bit limbs, the last one signed).
    SumNum = 10,
    /// Exact interval sum: `[n, +Inf, -Inf, months, days, time low 32
    /// bits, time high 32 bits]` (n counts the finite values, whose
    /// fields are summed apart; infinite ones are counted).
    SumIntv = 11,
    /// Minimum of a numeric(p,s) column (p <= 18): `[n, value at scale s,
    /// NaN count]`.
    MinNum = 12,
    /// Maximum of a numeric(p,s) column: `[n, value at scale s, NaN count]`.
    MaxNum = 13,
    /// Minimum of a numeric (of at most 38 digits), interval or timetz
    /// argument: `[n, winner, value bits, value hi, len | NULL << 32]`:
    /// the combination holding the least value, and (written by the
    /// collect step) that value as a device datum.
    MinAny = 14,
    /// Maximum, as MinAny.
    MaxAny = 15,
}

impl AggKind {
    /// From its number (AGGOP_*).
    pub fn from_u32(v: u32) -> Option<AggKind> {
        use AggKind::*;
        [
            Count, SumInt, SumFlt, Moments, Moments2, MinInt, MaxInt, MinFlt, MaxFlt, SumNum, SumIntv, MinNum, MaxNum,
            MinAny, MaxAny,
        ]
        .into_iter()
        .find(|k| *k as u32 == v)
    }

    /// Accumulator words the operation takes.
    pub fn nwords(self) -> usize {
        match self {
            AggKind::Count => 1,
            AggKind::SumInt => 3,
            AggKind::SumFlt => 2,
            AggKind::Moments => 4,
            AggKind::Moments2 => 8,
            AggKind::MinInt | AggKind::MaxInt | AggKind::MinFlt | AggKind::MaxFlt => 2,
            AggKind::SumNum => 9,
            AggKind::SumIntv => 7,
            AggKind::MinNum | AggKind::MaxNum => 3,
            AggKind::MinAny | AggKind::MaxAny => 5,
        }
    }

    /// Arguments the operation reads (Count: 0, 1 or 2).
    fn nargs_ok(self, n: usize) -> bool {
        match self {
            AggKind::Count => n <= 2,
            AggKind::Moments2 => n == 2,
            _ => n == 1,
        }
    }

    fn init(self) -> Vec<u64> {
        let mut w = vec![0u64; self.nwords()];
        match self {
            AggKind::MinInt | AggKind::MinNum => w[1] = i64::MAX as u64,
            AggKind::MaxInt | AggKind::MaxNum => w[1] = i64::MIN as u64,
            AggKind::MinFlt | AggKind::MinAny | AggKind::MaxAny => w[1] = u64::MAX,
            AggKind::Moments => w[3] = NO_SHIFT,
            AggKind::Moments2 => (w[6], w[7]) = (NO_SHIFT, NO_SHIFT),
            _ => {}
        }
        w
    }
}

/// One aggregate operation of a request.
#[derive(Debug, Clone)]
pub struct AggOp {
    /// What it accumulates.
    pub kind: AggKind,
    /// Its arguments (Moments2: y, then x).
    pub args: Vec<Program>,
    /// FILTER (WHERE ...), or None.
    pub filter: Option<Program>,
    /// SumNum: the scale its sum is kept at (no argument value has a
    /// larger one); MinNum / MaxNum: the column's scale; 0 otherwise.
    pub scale: i32,
}

/// The aggregation of a join request.
#[derive(Debug, Clone, Default)]
pub struct AggSpec {
    /// Grouping keys (none: one group per chunk).
    pub keys: Vec<Program>,
    /// Aggregate operations.
    pub ops: Vec<AggOp>,
}

impl AggSpec {
    /// First word of each operation, and the words per group.
    pub fn layout(&self) -> (Vec<u32>, usize) {
        let mut at = Vec::with_capacity(self.ops.len());
        let mut n = 0usize;
        for op in &self.ops {
            at.push(n as u32);
            n += op.kind.nwords();
        }
        (at, n.max(1))
    }

    /// Initial accumulator words of a group.
    pub fn init_words(&self) -> Vec<u64> {
        let mut w: Vec<u64> = self.ops.iter().flat_map(|o| o.kind.init()).collect();
        if w.is_empty() {
            w.push(0);
        }
        w
    }

    /// Check the aggregation against the join's columns and parameters.
    pub fn validate(&self, ncols: usize, nparams: usize) -> Result<(), DeviceError> {
        let bad = |m: String| Err(DeviceError::InvalidRequest(m));
        if self.keys.len() > MAX_GROUP_KEYS {
            return bad(format!("{} grouping keys; at most {MAX_GROUP_KEYS}", self.keys.len()));
        }
        if self.ops.len() > MAX_AGG_OPS {
            return bad(format!("{} aggregate operations; at most {MAX_AGG_OPS}", self.ops.len()));
        }
        let bool_t = type_id("BOOL");
        for op in &self.ops {
            if !op.kind.nargs_ok(op.args.len()) {
                return bad(format!("{:?} with {} arguments", op.kind, op.args.len()));
            }
            for a in &op.args {
                check_program(a, ncols, nparams)?;
                let t = a.result_type;
                let float = t == type_id("FLOAT4") || t == type_id("FLOAT8");
                let ok = match op.kind {
                    AggKind::Count => true,
                    AggKind::SumFlt | AggKind::Moments | AggKind::Moments2 | AggKind::MinFlt | AggKind::MaxFlt => {
                        float || is_integer(t)
                    }
                    AggKind::SumInt | AggKind::MinInt | AggKind::MaxInt => {
                        !float && fixed_width(t) && t != type_id("NUMERIC")
                    }
                    AggKind::SumNum => t == type_id("NUMERIC") && (0..=38).contains(&op.scale),
                    AggKind::SumIntv => t == type_id("INTERVAL"),
                    AggKind::MinNum | AggKind::MaxNum => t == type_id("NUMERIC") && (0..=18).contains(&op.scale),
                    AggKind::MinAny | AggKind::MaxAny => {
                        t == type_id("NUMERIC") || t == type_id("INTERVAL") || t == type_id("TIMETZ")
                    }
                };
                if !ok {
                    return bad(format!("{:?} over device type {t}", op.kind));
                }
            }
            if let Some(f) = &op.filter {
                check_program(f, ncols, nparams)?;
                if f.result_type != bool_t {
                    return bad("an aggregate FILTER is not boolean".into());
                }
            }
        }
        for k in &self.keys {
            check_program(k, ncols, nparams)?;
        }
        Ok(())
    }
}

fn is_integer(t: u16) -> bool {
    t == type_id("INT2") || t == type_id("INT4") || t == type_id("INT8")
}

fn fixed_width(t: u16) -> bool {
    crate::catalog::type_info(t).is_some_and(|i| i.width > 0)
}

/// A value as the device computed it (a DevDatum): integers, bool and
/// date/time types sign-extended in `bits`, float4 (and float2, as the
/// float4 of its value) in the low 32 bits, float8 as its bits; a
/// numeric's 128-bit mantissa in `bits` (low) and `hi`, its scale or kind
/// in `len`; the stored bytes of uuid, interval and timetz, the first 8 in
/// `bits`, the rest in `hi`.  Text, bpchar and bytea carry no value here
/// (read them at the representative's row).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyValue {
    /// Low 64 bits.
    pub bits: i64,
    /// High 64 bits (numeric, wide types).
    pub hi: i64,
    /// A numeric's scale or kind.
    pub len: i32,
    /// NULL.
    pub isnull: bool,
}

impl KeyValue {
    /// The stored bytes of a fixed-width type wider than 8 bytes (uuid,
    /// interval, timetz): `width` bytes.
    pub fn wide_bytes(&self, width: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(16);
        b.extend_from_slice(&self.bits.to_le_bytes());
        b.extend_from_slice(&self.hi.to_le_bytes());
        b.truncate(width.min(16));
        b
    }

    /// The device numeric it holds.
    pub fn numeric(&self) -> crate::numeric::DevNumeric {
        crate::numeric::DevNumeric { mant: ((self.hi as i128) << 64) | (self.bits as u64 as i128), scale: self.len }
    }
}

/// MinAny / MaxAny's value from its words (None: no row).
pub fn any_value(words: &[u64]) -> Option<KeyValue> {
    if words[0] == 0 || words[1] == u64::MAX || (words[4] >> 32) != 0 {
        return None;
    }
    Some(KeyValue { bits: words[2] as i64, hi: words[3] as i64, len: words[4] as u32 as i32, isnull: false })
}

/// The groups one chunk (or the unmatched rows) produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AggGroups {
    /// Sources per representative combination.
    pub nsources: usize,
    /// Number of groups.
    pub count: usize,
    /// rows[s * count + g]: source s of group g's representative.
    pub rows: Vec<u32>,
    /// Grouping keys per group.
    pub nkeys: usize,
    /// keys[g * nkeys + k]: key k of group g.
    pub keys: Vec<KeyValue>,
    /// Words per group.
    pub nwords: usize,
    /// words[g * nwords + w].
    pub words: Vec<u64>,
    /// Combinations after the scan quals and after each depth.
    pub stage_counts: Vec<u64>,
}

impl AggGroups {
    /// Source `s` of group `g`'s representative.
    pub fn row(&self, s: usize, g: usize) -> u32 {
        self.rows[s * self.count + g]
    }

    /// Key `k` of group `g`: (datum bits, NULL).
    pub fn key(&self, g: usize, k: usize) -> (i64, bool) {
        let v = self.keys[g * self.nkeys + k];
        (v.bits, v.isnull)
    }

    /// Key `k` of group `g`, all of it.
    pub fn key_value(&self, g: usize, k: usize) -> KeyValue {
        self.keys[g * self.nkeys + k]
    }

    /// The accumulator words of group `g`.
    pub fn group_words(&self, g: usize) -> &[u64] {
        &self.words[g * self.nwords..(g + 1) * self.nwords]
    }

    /// Append `other`'s groups (same sources and layout).
    pub fn append(&mut self, other: AggGroups) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            let stages = std::mem::take(&mut self.stage_counts);
            *self = other;
            self.stage_counts = stages;
            return;
        }
        let count = self.count + other.count;
        let mut rows = Vec::with_capacity(self.nsources * count);
        for s in 0..self.nsources {
            rows.extend_from_slice(&self.rows[s * self.count..(s + 1) * self.count]);
            rows.extend_from_slice(&other.rows[s * other.count..(s + 1) * other.count]);
        }
        self.rows = rows;
        self.keys.extend_from_slice(&other.keys);
        self.words.extend_from_slice(&other.words);
        self.count = count;
    }
}

/// An exact integer sum from SumInt's words (low and high halves).
pub fn sum_int(words: &[u64]) -> i128 {
    let lo = words[1] as i128;
    let hi = words[2] as i64 as i128;
    hi * (1i128 << 32) + lo
}

/// A float accumulator word.
pub fn word_f8(w: u64) -> f64 {
    f64::from_bits(w)
}

/// A moments shift word no finite value has claimed yet (AGG_NO_SHIFT in
/// preagg.cu): the shift is 0.
pub const NO_SHIFT: u64 = 0x7ff8_dead_beef_0001;

fn shift(w: u64) -> f64 {
    if w == NO_SHIFT { 0.0 } else { f64::from_bits(w) }
}

/// The float behind MinFlt/MaxFlt's ordered bits.
pub fn flt_from_order(w: u64) -> f64 {
    if w & (1u64 << 63) != 0 { f64::from_bits(w & !(1u64 << 63)) } else { f64::from_bits(!w) }
}

/// PostgreSQL's float8 moments state {N, Sx, Sxx} from Moments' words.
pub fn moments(words: &[u64]) -> [f64; 3] {
    let n = words[0] as f64;
    if words[0] == 0 {
        return [0.0, 0.0, 0.0];
    }
    let (sd, sdd, c) = (word_f8(words[1]), word_f8(words[2]), shift(words[3]));
    let sxx = sdd - sd * sd / n;
    [n, sd + n * c, if sxx.is_nan() { sxx } else { sxx.max(0.0) }]
}

/// Whether PostgreSQL's float8_accum / float8_regr_accum would have raised
/// "value out of range: overflow" over the values behind `words` (Moments'
/// or Moments2's words, `kind` says which): the device raises the
/// overflows of first-order sums and deviations itself; with those sums
/// finite (every input finite), an infinite second-order sum, product of
/// sums on the way to PostgreSQL's state, or PostgreSQL sum is one too.
/// With an infinite or NaN input PostgreSQL returns NaN/Infinity instead.
pub fn moments_overflow(kind: AggKind, words: &[u64]) -> bool {
    if words[0] == 0 {
        return false;
    }
    let f = |i: usize| word_f8(words[i]);
    let (first, second, sums): (&[f64], Vec<f64>, Vec<f64>) = match kind {
        AggKind::Moments => (&[f(1)], vec![f(2), f(1) * f(1)], moments(words).to_vec()),
        AggKind::Moments2 => {
            (&[f(1), f(3)], vec![f(2), f(4), f(5), f(1) * f(1), f(3) * f(3), f(1) * f(3)], moments2(words).to_vec())
        }
        _ => return false,
    };
    first.iter().all(|v| v.is_finite()) && second.iter().chain(&sums).any(|v| !v.is_finite())
}

/// PostgreSQL's float8 regression state {N, Sx, Sxx, Sy, Syy, Sxy} from
/// Moments2's words.
pub fn moments2(words: &[u64]) -> [f64; 6] {
    if words[0] == 0 {
        return [0.0; 6];
    }
    let n = words[0] as f64;
    let f = |i: usize| word_f8(words[i]);
    let (sdx, sdxx, sdy, sdyy, sdxy, cx, cy) = (f(1), f(2), f(3), f(4), f(5), shift(words[6]), shift(words[7]));
    let clamp = |v: f64| if v.is_nan() { v } else { v.max(0.0) };
    [n, sdx + n * cx, clamp(sdxx - sdx * sdx / n), sdy + n * cy, clamp(sdyy - sdy * sdy / n), sdxy - sdx * sdy / n]
}

/// The decimal text of `v / 10^scale` with exactly `scale` decimals
/// (MinNum / MaxNum's value at its column's scale).
pub fn scaled_decimal(v: i64, scale: i32) -> String {
    let digits = v.unsigned_abs().to_string();
    let s = scale.max(0) as usize;
    let padded = format!("{digits:0>width$}", width = s + 1);
    let (int, frac) = padded.split_at(padded.len() - s);
    let sign = if v < 0 { "-" } else { "" };
    if s == 0 { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

/// PostgreSQL's interval sum state from SumIntv's words: what
/// interval_avg_serialize writes (N, sumX's time, day and month,
/// pInfcount, nInfcount), big-endian; None when the sum leaves the
/// interval range (PostgreSQL raises "interval out of range" then).
pub fn interval_avg_state(words: &[u64]) -> Option<Vec<u8>> {
    let months = i32::try_from(words[3] as i64).ok()?;
    let days = i32::try_from(words[4] as i64).ok()?;
    let time = i64::try_from(words[6] as i64 as i128 * (1i128 << 32) + words[5] as i128).ok()?;
    // a finite sum equal to an infinity's fields is out of range too
    let infinite = |m: i32, d: i32, t: i64| {
        (m, d, t) == (i32::MAX, i32::MAX, i64::MAX) || (m, d, t) == (i32::MIN, i32::MIN, i64::MIN)
    };
    if infinite(months, days, time) {
        return None;
    }
    let mut out = Vec::with_capacity(40);
    out.extend_from_slice(&(words[0] as i64).to_be_bytes());
    out.extend_from_slice(&time.to_be_bytes());
    out.extend_from_slice(&days.to_be_bytes());
    out.extend_from_slice(&months.to_be_bytes());
    out.extend_from_slice(&(words[1] as i64).to_be_bytes());
    out.extend_from_slice(&(words[2] as i64).to_be_bytes());
    Some(out)
}

/// PostgreSQL's numeric sum state from SumNum's words: what
/// numeric_avg_serialize writes (N, sumX as a NumericVar, maxScale,
/// maxScaleCount, NaNcount, pInfcount, nInfcount), big-endian.
/// `scale` is the scale the device kept the sum at.
pub fn num_avg_state(words: &[u64], scale: i32) -> Vec<u8> {
    let n = words[0] as i64;
    let max_scale = (words[1] >> 48) as i32;
    let max_scale_count = (words[1] & ((1u64 << 48) - 1)) as i64;
    // the sum: limbs 0..2 unsigned, 3 signed, each of 32-bit weight
    // 2^(32 k), summed over < 2^32 rows: normalize with carries
    let cols = [words[5] as i128, words[6] as i128, words[7] as i128, words[8] as i64 as i128];
    let mut limbs: Vec<u32> = Vec::new();
    let mut carry: i128 = 0;
    for c in cols {
        let v = c + carry;
        limbs.push(v.rem_euclid(1 << 32) as u32);
        carry = v.div_euclid(1 << 32);
    }
    while carry != 0 && carry != -1 {
        limbs.push(carry.rem_euclid(1 << 32) as u32);
        carry = carry.div_euclid(1 << 32);
    }
    let neg = carry == -1;
    if neg {
        // two's complement of the limbs (with the -1 above them)
        let mut c = 1u64;
        for l in limbs.iter_mut() {
            let v = (!*l) as u64 + c;
            *l = v as u32;
            c = v >> 32;
        }
    }
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&n.to_be_bytes());
    numeric_var_bytes(&mut out, neg, limbs, scale, max_scale);
    out.extend_from_slice(&max_scale.to_be_bytes());
    out.extend_from_slice(&max_scale_count.to_be_bytes());
    for w in &words[2..5] {
        out.extend_from_slice(&(*w as i64).to_be_bytes());
    }
    out
}

/// numericvar_serialize's form (ndigits, weight, sign, dscale as int32,
/// then base-10000 digits as int16) of the integer `mag` (little-endian
/// 32-bit limbs) divided by 10^scale, with display scale `dscale`.
pub fn numeric_var_bytes(out: &mut Vec<u8>, neg: bool, mut mag: Vec<u32>, scale: i32, dscale: i32) {
    // decimal digits of the magnitude, least significant first
    let mut dec: Vec<u8> = Vec::new();
    while mag.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for l in mag.iter_mut().rev() {
            let cur = (rem << 32) | *l as u64;
            *l = (cur / 10) as u32;
            rem = cur % 10;
        }
        dec.push(rem as u8);
    }
    // digit i of `dec` stands for 10^(i - scale); group by 10000 aligned
    // on the decimal point: group g covers 10^(4g) .. 10^(4g+3)
    let lo = -(((scale + 3) / 4) * 4); // lowest exponent, a multiple of 4
    let mut groups: Vec<(i32, i16)> = Vec::new(); // (weight, digit)
    let mut e = lo;
    let top = dec.len() as i32 - scale;
    while e < top.max(0) {
        let mut d = 0i16;
        for k in (0..4).rev() {
            let idx = e + k + scale;
            let digit = if idx >= 0 && (idx as usize) < dec.len() { dec[idx as usize] as i16 } else { 0 };
            d = d * 10 + digit;
        }
        groups.push((e / 4, d));
        e += 4;
    }
    // most significant first, without leading or trailing zero groups
    groups.reverse();
    while groups.first().is_some_and(|g| g.1 == 0) {
        groups.remove(0);
    }
    while groups.last().is_some_and(|g| g.1 == 0) {
        groups.pop();
    }
    let weight = groups.first().map_or(0, |g| g.0);
    out.extend_from_slice(&(groups.len() as i32).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&(if neg && !groups.is_empty() { 0x4000i32 } else { 0 }).to_be_bytes());
    out.extend_from_slice(&dscale.to_be_bytes());
    for (_, d) in groups {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// The C layout of DevAggOp (preagg.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevAggOpRepr {
    pub kind: u32,
    pub nargs: u32,
    pub word: u32,
    pub scale: i32,
    pub args: [DevProgramRefRepr; 2],
    pub filter: DevProgramRefRepr,
}

/// The C layout of DevAggSpec (preagg.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevAggSpecRepr {
    pub nkeys: u32,
    pub nops: u32,
    pub nwords: u32,
    pub reserved: u32,
    pub keys: u64,
    pub ops: u64,
    pub init: u64,
}

const _: () = assert!(std::mem::size_of::<DevAggOpRepr>() == 16 + 3 * 24);
const _: () = assert!(std::mem::size_of::<DevAggSpecRepr>() == 40);

/// Slots of the group table for `n` combinations: a power of two > 2n.
pub(crate) fn table_slots(n: usize) -> usize {
    (2 * n + 2).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sums_are_exact() {
        // what preagg.cu accumulates for values v
        let vals = [i64::MAX, i64::MAX, -5, i64::MIN, 123456789012];
        let mut w = [0u64; 3];
        for v in vals {
            w[0] += 1;
            w[1] = w[1].wrapping_add(v as u64 & 0xffff_ffff);
            w[2] = w[2].wrapping_add((v >> 32) as u64);
        }
        assert_eq!(sum_int(&w), vals.iter().map(|&v| v as i128).sum::<i128>());
    }

    #[test]
    fn scaled_decimals_keep_the_scale() {
        assert_eq!(scaled_decimal(12345, 2), "123.45");
        assert_eq!(scaled_decimal(-5, 3), "-0.005");
        assert_eq!(scaled_decimal(0, 4), "0.0000");
        assert_eq!(scaled_decimal(-999_999_999_999_999_999, 0), "-999999999999999999");
        assert_eq!(scaled_decimal(7, 18), "0.000000000000000007");
    }

    #[test]
    fn interval_states_are_interval_avg_serialize() {
        // 3 finite values summing to 1 mon 2 days -00:00:01, one +infinity
        let t: i64 = -1_000_000;
        let w = [3u64, 1, 0, 1, 2, t as u64 & 0xffff_ffff, (t >> 32) as u64];
        let b = interval_avg_state(&w).expect("in range");
        assert_eq!(b.len(), 40);
        assert_eq!(i64::from_be_bytes(b[0..8].try_into().unwrap()), 3);
        assert_eq!(i64::from_be_bytes(b[8..16].try_into().unwrap()), t);
        assert_eq!(i32::from_be_bytes(b[16..20].try_into().unwrap()), 2);
        assert_eq!(i32::from_be_bytes(b[20..24].try_into().unwrap()), 1);
        assert_eq!(i64::from_be_bytes(b[24..32].try_into().unwrap()), 1);
        // months past int32: out of range
        let big = [2u64, 0, 0, i32::MAX as u64 + 1, 0, 0, 0];
        assert!(interval_avg_state(&big).is_none());
    }

    #[test]
    fn float_order_round_trips() {
        let order = |x: f64| {
            let u = if x.is_nan() { 0x7ff8_0000_0000_0000u64 } else { x.to_bits() };
            if u & (1 << 63) != 0 { !u } else { u | (1 << 63) }
        };
        let xs = [f64::NEG_INFINITY, -1e300, -1.0, -0.0, 0.0, 1e-300, 2.5, f64::INFINITY, f64::NAN];
        for w in xs.windows(2) {
            assert!(order(w[0]) <= order(w[1]), "{} {}", w[0], w[1]);
        }
        for x in xs {
            let back = flt_from_order(order(x));
            assert!(back.to_bits() == x.to_bits() || (x.is_nan() && back.is_nan()));
        }
    }

    fn var(bytes: &[u8]) -> (i32, i32, i32, i32, Vec<i16>) {
        let i = |o: usize| i32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
        let n = i(0) as usize;
        let digits = (0..n).map(|k| i16::from_be_bytes([bytes[16 + 2 * k], bytes[17 + 2 * k]])).collect();
        (i(0), i(4), i(8), i(12), digits)
    }

    #[test]
    fn numeric_vars_are_numeric_c_s() {
        let mut b = Vec::new();
        // 1234567.8900 at scale 4 (mantissa 12345678900), dscale 2
        numeric_var_bytes(
            &mut b,
            false,
            vec![(12345678900u64 & 0xffff_ffff) as u32, (12345678900u64 >> 32) as u32],
            4,
            2,
        );
        assert_eq!(var(&b), (3, 1, 0, 2, vec![123, 4567, 8900]));
        // -0.05 at scale 3 (mantissa 50): weight -1, digit 500
        b.clear();
        numeric_var_bytes(&mut b, true, vec![50], 3, 2);
        assert_eq!(var(&b), (1, -1, 0x4000, 2, vec![500]));
        // zero
        b.clear();
        numeric_var_bytes(&mut b, true, vec![0], 5, 5);
        assert_eq!(var(&b), (0, 0, 0, 5, vec![]));
        // 10^40 (past 128 bits' 38 digits): 1 followed by ten zero groups
        b.clear();
        let big = 10u128.pow(20) * 10u128.pow(18); // 10^38
        let limbs = vec![big as u32, (big >> 32) as u32, (big >> 64) as u32, (big >> 96) as u32, 0];
        numeric_var_bytes(&mut b, false, limbs, 0, 0);
        assert_eq!(var(&b), (1, 9, 0, 0, vec![100]));
    }

    #[test]
    fn numeric_sums_carry_and_sign() {
        // what preagg.cu adds for mantissas m: 4 limbs, the last signed
        let add = |w: &mut [u64; 9], m: i128| {
            w[0] += 1;
            for k in 0..3 {
                w[5 + k] = w[5 + k].wrapping_add(((m >> (32 * k)) as u64) & 0xffff_ffff);
            }
            w[8] = w[8].wrapping_add((m >> 96) as i64 as u64);
        };
        let mut w = [0u64; 9];
        let ms = [i128::MAX / 2, i128::MAX / 2, i128::MAX / 2, -5];
        for m in ms {
            add(&mut w, m);
        }
        w[1] = (2u64 << 48) | 4;
        let st = num_avg_state(&w, 2);
        // the exact sum, as decimal digits: 3 * (2^126 - 1) - 5 (scale 2)
        let sum: u128 = 3 * (i128::MAX / 2) as u128 - 5;
        let (_, weight, sign, dscale, digits) = var(&st[8..]);
        assert_eq!((sign, dscale), (0, 2));
        let text: String =
            digits.iter().enumerate().map(|(i, d)| if i == 0 { d.to_string() } else { format!("{d:04}") }).collect();
        let want = sum.to_string();
        let (int, frac) = want.split_at(want.len() - 2);
        let got_int_groups = weight + 1;
        assert_eq!(text.trim_end_matches('0'), format!("{int}{frac}").trim_end_matches('0'), "weight {got_int_groups}");
        // a negative sum
        let mut w = [0u64; 9];
        add(&mut w, -1234567);
        add(&mut w, 2);
        let st = num_avg_state(&w, 0);
        assert_eq!(var(&st[8..]), (2, 1, 0x4000, 0, vec![123, 4565]));
    }

    #[test]
    fn shifted_moments_match_the_definition() {
        let xs = [1e9 + 1.0, 1e9 + 2.0, 1e9 + 4.0];
        let c = xs[0];
        let n = xs.len() as f64;
        let (sd, sdd) = xs.iter().fold((0.0f64, 0.0f64), |(a, b), x| (a + (x - c), b + (x - c) * (x - c)));
        let m = moments(&[3, sd.to_bits(), sdd.to_bits(), c.to_bits()]);
        let mean = xs.iter().sum::<f64>() / n;
        let sxx: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        assert_eq!(m[0], 3.0);
        assert_eq!(m[1], xs.iter().sum::<f64>());
        assert!((m[2] - sxx).abs() < 1e-9 * sxx, "{} vs {}", m[2], sxx);
    }
}
