//! Column builders: values in PostgreSQL's binary send format appended to
//! Arrow arrays, one builder per result column (nested for arrays and
//! composite types).  Every value is checked: a malformed or
//! unrepresentable value is an error naming what is wrong, never a guess.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, FixedSizeBinaryBuilder, Float16Builder,
    Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder, IntervalMonthDayNanoBuilder,
    StringBuilder, Time64MicrosecondBuilder, TimestampMicrosecondBuilder, UInt32Builder,
};
use arrow_array::types::IntervalMonthDayNano;
use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{FieldRef, Fields};

use crate::pgtype::{Plan, field};

/// Days from 1970-01-01 to PostgreSQL's epoch 2000-01-01.
pub const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// One column being built.
pub enum Column {
    Bool(BooleanBuilder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U32(UInt32Builder),
    F16(Float16Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    /// precision, scale, exact (digits beyond the scale are an error, not rounded)
    Decimal(Decimal128Builder, u8, i8, bool),
    Text(StringBuilder),
    Bpchar(FixedSizeBinaryBuilder, usize, Vec<u8>),
    Bytea(BinaryBuilder),
    Uuid(FixedSizeBinaryBuilder),
    Date(Date32Builder),
    Time(Time64MicrosecondBuilder),
    Timestamp(TimestampMicrosecondBuilder, Option<Arc<str>>),
    Interval(IntervalMonthDayNanoBuilder),
    List {
        item: FieldRef,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        values: Box<Column>,
    },
    Struct {
        fields: Fields,
        nulls: NullBufferBuilder,
        children: Vec<Column>,
    },
}

type R<T> = Result<T, String>;

fn be<const N: usize>(v: &[u8], what: &str) -> R<[u8; N]> {
    v.try_into().map_err(|_| format!("malformed {what} value ({} bytes, expected {N})", v.len()))
}

/// A reader over a nested binary value (arrays, records).
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn i32(&mut self) -> R<i32> {
        let (h, t) = self.0.split_at_checked(4).ok_or("truncated array or record value")?;
        self.0 = t;
        Ok(i32::from_be_bytes(h.try_into().expect("4 bytes")))
    }
    /// A length-prefixed element (-1: NULL).
    fn item(&mut self) -> R<Option<&'a [u8]>> {
        let len = self.i32()?;
        if len < 0 {
            return Ok(None);
        }
        let (h, t) = self.0.split_at_checked(len as usize).ok_or("truncated array or record value")?;
        self.0 = t;
        Ok(Some(h))
    }
}

/// A value from a source that is not PostgreSQL (mysql2arrow), already
/// decoded; [`Column::append_native`] checks that it fits the column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Native<'a> {
    Null,
    Bool(bool),
    /// Any integer; must fit the column (an integer or a decimal column).
    Int(i128),
    F32(f32),
    F64(f64),
    /// A decimal number as text (`-12.50`, `7`, `1e3` not accepted): for
    /// decimal columns, rounded half away from zero to the scale.
    Decimal(&'a str),
    /// UTF-8 text (checked).
    Text(&'a [u8]),
    Bytes(&'a [u8]),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since midnight, in [0, 24h).
    Time(i64),
    /// Microseconds since 1970-01-01 00:00:00 (UTC for a timestamptz column).
    Timestamp(i64),
    /// Months, days, microseconds.
    Interval(i32, i32, i64),
}

impl Column {
    /// A column whose numerics are rounded to the field's scale (as a cast
    /// to numeric(p, s) rounds): pg2arrow.
    pub fn new(plan: &Plan) -> Column {
        Self::build(plan, false)
    }

    /// A column whose numerics must fit the field's scale exactly: an
    /// INSERT, where rounding would change the stored value.
    pub fn new_exact(plan: &Plan) -> Column {
        Self::build(plan, true)
    }

    fn build(plan: &Plan, exact: bool) -> Column {
        match plan {
            Plan::Bool => Column::Bool(BooleanBuilder::new()),
            Plan::I16 => Column::I16(Int16Builder::new()),
            Plan::I32 => Column::I32(Int32Builder::new()),
            Plan::I64 => Column::I64(Int64Builder::new()),
            Plan::U32 => Column::U32(UInt32Builder::new()),
            Plan::F16 => Column::F16(Float16Builder::new()),
            Plan::F32 => Column::F32(Float32Builder::new()),
            Plan::F64 => Column::F64(Float64Builder::new()),
            Plan::Decimal(p, s) => Column::Decimal(Decimal128Builder::new(), *p, *s, exact),
            Plan::Text => Column::Text(StringBuilder::new()),
            Plan::Bpchar(n) => Column::Bpchar(FixedSizeBinaryBuilder::new(*n), *n as usize, Vec::new()),
            Plan::Bytea => Column::Bytea(BinaryBuilder::new()),
            Plan::Uuid => Column::Uuid(FixedSizeBinaryBuilder::new(16)),
            Plan::Date => Column::Date(Date32Builder::new()),
            Plan::Time => Column::Time(Time64MicrosecondBuilder::new()),
            Plan::Timestamp => Column::Timestamp(TimestampMicrosecondBuilder::new(), None),
            Plan::TimestampTz => Column::Timestamp(TimestampMicrosecondBuilder::new(), Some("UTC".into())),
            Plan::Interval => Column::Interval(IntervalMonthDayNanoBuilder::new()),
            Plan::List(e) => Column::List {
                item: field("item", e).into(),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
                values: Box::new(Column::build(e, exact)),
            },
            Plan::Struct(attrs) => Column::Struct {
                fields: attrs.iter().map(|(n, p)| field(n, p)).collect(),
                nulls: NullBufferBuilder::new(0),
                children: attrs.iter().map(|(_, p)| Column::build(p, exact)).collect(),
            },
        }
    }

    /// Append one value (None: NULL); returns the bytes it adds to the
    /// record batch (for the segment size).
    pub fn append(&mut self, v: Option<&[u8]>) -> R<usize> {
        let Some(v) = v else {
            self.append_null();
            return Ok(1);
        };
        Ok(match self {
            Column::Bool(b) => {
                b.append_value(be::<1>(v, "boolean")?[0] != 0);
                1
            }
            Column::I16(b) => {
                b.append_value(i16::from_be_bytes(be(v, "smallint")?));
                2
            }
            Column::I32(b) => {
                b.append_value(i32::from_be_bytes(be(v, "integer")?));
                4
            }
            Column::I64(b) => {
                b.append_value(i64::from_be_bytes(be(v, "bigint")?));
                8
            }
            Column::U32(b) => {
                b.append_value(u32::from_be_bytes(be(v, "oid")?));
                4
            }
            Column::F16(b) => {
                b.append_value(half::f16::from_bits(u16::from_be_bytes(be(v, "float2")?)));
                2
            }
            Column::F32(b) => {
                b.append_value(f32::from_be_bytes(be(v, "real")?));
                4
            }
            Column::F64(b) => {
                b.append_value(f64::from_be_bytes(be(v, "double precision")?));
                8
            }
            Column::Decimal(b, p, s, exact) => {
                b.append_value(numeric_to_i128(v, *p, *s, *exact)?);
                16
            }
            Column::Text(b) => {
                b.append_value(std::str::from_utf8(v).map_err(|e| format!("invalid UTF-8 in a text value: {e}"))?);
                v.len() + 4
            }
            Column::Bpchar(b, n, pad) => {
                if v.len() > *n {
                    return Err(format!(
                        "a character({n}) value takes {} bytes in UTF-8, more than the {n} bytes of its Arrow \
                         field (multibyte characters)",
                        v.len()
                    ));
                }
                pad.clear();
                pad.extend_from_slice(v);
                pad.resize(*n, b' ');
                b.append_value(pad.as_slice()).map_err(|e| e.to_string())?;
                *n
            }
            Column::Bytea(b) => {
                b.append_value(v);
                v.len() + 4
            }
            Column::Uuid(b) => {
                b.append_value(be::<16>(v, "uuid")?).map_err(|e| e.to_string())?;
                16
            }
            Column::Date(b) => {
                let d = i32::from_be_bytes(be(v, "date")?);
                if d == i32::MAX || d == i32::MIN {
                    return Err("infinite dates have no Arrow representation".into());
                }
                b.append_value(d.checked_add(PG_EPOCH_DAYS).ok_or("date out of range for Arrow Date32")?);
                4
            }
            Column::Time(b) => {
                b.append_value(i64::from_be_bytes(be(v, "time")?));
                8
            }
            Column::Timestamp(b, _) => {
                let t = i64::from_be_bytes(be(v, "timestamp")?);
                if t == i64::MAX || t == i64::MIN {
                    return Err("infinite timestamps have no Arrow representation".into());
                }
                b.append_value(t.checked_add(PG_EPOCH_US).ok_or("timestamp out of range for Arrow")?);
                8
            }
            Column::Interval(b) => {
                let raw: [u8; 16] = be(v, "interval")?;
                let us = i64::from_be_bytes(raw[0..8].try_into().expect("8"));
                let days = i32::from_be_bytes(raw[8..12].try_into().expect("4"));
                let months = i32::from_be_bytes(raw[12..16].try_into().expect("4"));
                if us == i64::MAX || us == i64::MIN {
                    return Err("infinite intervals have no Arrow representation".into());
                }
                let ns = us.checked_mul(1000).ok_or("interval's time part out of range for nanoseconds")?;
                b.append_value(IntervalMonthDayNano::new(months, days, ns));
                16
            }
            Column::List { offsets, nulls, values, .. } => {
                let mut c = Cursor(v);
                let ndim = c.i32()?;
                let _flags = c.i32()?;
                let _elem = c.i32()?;
                if ndim > 1 {
                    return Err(format!("a {ndim}-dimensional array: only one-dimensional arrays become Arrow lists"));
                }
                let n = if ndim == 1 {
                    let n = c.i32()?;
                    let _lower = c.i32()?;
                    n
                } else {
                    0
                };
                let mut size = 4;
                for _ in 0..n {
                    size += values.append(c.item()?)?;
                }
                let last = *offsets.last().expect("starts with 0");
                offsets.push(last.checked_add(n).ok_or("list offsets overflow: a smaller --segment-size helps")?);
                nulls.append_non_null();
                size
            }
            Column::Struct { nulls, children, fields } => {
                let mut c = Cursor(v);
                let n = c.i32()?;
                if n as usize != children.len() {
                    return Err(format!("a record of {n} attributes for a type of {}", children.len()));
                }
                let mut size = 0;
                for (i, ch) in children.iter_mut().enumerate() {
                    let _oid = c.i32()?;
                    size += ch.append(c.item()?).map_err(|e| format!("attribute \"{}\": {e}", fields[i].name()))?;
                }
                nulls.append_non_null();
                size
            }
        })
    }

    /// Append one decoded value; returns the bytes it adds to the record
    /// batch.  A value the column's type cannot hold is an error naming
    /// both.
    pub fn append_native(&mut self, v: Native<'_>) -> R<usize> {
        fn int<T: TryFrom<i128>>(v: i128, what: &str) -> R<T> {
            T::try_from(v).map_err(|_| format!("{v} is out of range for {what}"))
        }
        let tn = self.data_type_name();
        let mismatch = |what: &str| Err(format!("a {what} value for an Arrow {tn} column"));
        Ok(match (&mut *self, v) {
            (c, Native::Null) => {
                c.append_null();
                1
            }
            (Column::Bool(b), Native::Bool(x)) => {
                b.append_value(x);
                1
            }
            (Column::I16(b), Native::Int(x)) => {
                b.append_value(int(x, "smallint")?);
                2
            }
            (Column::I32(b), Native::Int(x)) => {
                b.append_value(int(x, "integer")?);
                4
            }
            (Column::I64(b), Native::Int(x)) => {
                b.append_value(int(x, "bigint")?);
                8
            }
            (Column::Decimal(b, p, s, _), Native::Int(x)) => {
                let (p, s) = (*p, *s);
                let v = (s >= 0)
                    .then(|| 10i128.checked_pow(s as u32).and_then(|m| x.checked_mul(m)))
                    .flatten()
                    .filter(|v| v.unsigned_abs() < 10u128.pow(p as u32))
                    .ok_or_else(|| format!("{x} is out of range for decimal({p},{s})"))?;
                b.append_value(v);
                16
            }
            (Column::F32(b), Native::F32(x)) => {
                b.append_value(x);
                4
            }
            (Column::F64(b), Native::F64(x)) => {
                b.append_value(x);
                8
            }
            (Column::F64(b), Native::F32(x)) => {
                b.append_value(x as f64);
                8
            }
            (Column::Decimal(b, p, s, exact), Native::Decimal(t)) => {
                b.append_value(decimal_text_to_i128(t, *p, *s, *exact)?);
                16
            }
            (Column::Text(b), Native::Text(t)) => {
                b.append_value(std::str::from_utf8(t).map_err(|e| format!("invalid UTF-8 in a text value: {e}"))?);
                t.len() + 4
            }
            (Column::Bytea(b), Native::Bytes(t) | Native::Text(t)) => {
                b.append_value(t);
                t.len() + 4
            }
            (Column::Date(b), Native::Date(d)) => {
                b.append_value(d);
                4
            }
            (Column::Time(b), Native::Time(us)) => {
                if !(0..86_400_000_000).contains(&us) {
                    return Err(format!("{us} microseconds is out of range for a time of day"));
                }
                b.append_value(us);
                8
            }
            (Column::Timestamp(b, _), Native::Timestamp(us)) => {
                b.append_value(us);
                8
            }
            (Column::Interval(b), Native::Interval(m, d, us)) => {
                let ns = us.checked_mul(1000).ok_or("interval's time part out of range for nanoseconds")?;
                b.append_value(IntervalMonthDayNano::new(m, d, ns));
                16
            }
            (_, Native::Bool(_)) => return mismatch("boolean"),
            (_, Native::Int(_)) => return mismatch("integer"),
            (_, Native::F32(_) | Native::F64(_)) => return mismatch("floating point"),
            (_, Native::Decimal(_)) => return mismatch("decimal"),
            (_, Native::Text(_)) => return mismatch("text"),
            (_, Native::Bytes(_)) => return mismatch("binary"),
            (_, Native::Date(_)) => return mismatch("date"),
            (_, Native::Time(_)) => return mismatch("time"),
            (_, Native::Timestamp(_)) => return mismatch("timestamp"),
            (_, Native::Interval(..)) => return mismatch("interval"),
        })
    }

    /// The Arrow type's name, for messages.
    fn data_type_name(&self) -> &'static str {
        match self {
            Column::Bool(_) => "Bool",
            Column::I16(_) => "Int16",
            Column::I32(_) => "Int32",
            Column::I64(_) => "Int64",
            Column::U32(_) => "UInt32",
            Column::F16(_) => "Float16",
            Column::F32(_) => "Float32",
            Column::F64(_) => "Float64",
            Column::Decimal(..) => "Decimal128",
            Column::Text(_) => "Utf8",
            Column::Bpchar(..) | Column::Uuid(_) => "FixedSizeBinary",
            Column::Bytea(_) => "Binary",
            Column::Date(_) => "Date32",
            Column::Time(_) => "Time64",
            Column::Timestamp(..) => "Timestamp",
            Column::Interval(_) => "Interval",
            Column::List { .. } => "List",
            Column::Struct { .. } => "Struct",
        }
    }

    fn append_null(&mut self) {
        match self {
            Column::Bool(b) => b.append_null(),
            Column::I16(b) => b.append_null(),
            Column::I32(b) => b.append_null(),
            Column::I64(b) => b.append_null(),
            Column::U32(b) => b.append_null(),
            Column::F16(b) => b.append_null(),
            Column::F32(b) => b.append_null(),
            Column::F64(b) => b.append_null(),
            Column::Decimal(b, ..) => b.append_null(),
            Column::Text(b) => b.append_null(),
            Column::Bpchar(b, ..) | Column::Uuid(b) => b.append_null(),
            Column::Bytea(b) => b.append_null(),
            Column::Date(b) => b.append_null(),
            Column::Time(b) => b.append_null(),
            Column::Timestamp(b, _) => b.append_null(),
            Column::Interval(b) => b.append_null(),
            Column::List { offsets, nulls, .. } => {
                offsets.push(*offsets.last().expect("starts with 0"));
                nulls.append_null();
            }
            Column::Struct { nulls, children, .. } => {
                // the children hold a (null) slot for every row
                children.iter_mut().for_each(Column::append_null);
                nulls.append_null();
            }
        }
    }

    /// The array of the values appended since the last call.
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(b) => Arc::new(b.finish()),
            Column::I16(b) => Arc::new(b.finish()),
            Column::I32(b) => Arc::new(b.finish()),
            Column::I64(b) => Arc::new(b.finish()),
            Column::U32(b) => Arc::new(b.finish()),
            Column::F16(b) => Arc::new(b.finish()),
            Column::F32(b) => Arc::new(b.finish()),
            Column::F64(b) => Arc::new(b.finish()),
            Column::Decimal(b, p, s, _) => {
                Arc::new(b.finish().with_precision_and_scale(*p, *s).expect("precision and scale checked by the plan"))
            }
            Column::Text(b) => Arc::new(b.finish()),
            Column::Bpchar(b, ..) | Column::Uuid(b) => Arc::new(b.finish()),
            Column::Bytea(b) => Arc::new(b.finish()),
            Column::Date(b) => Arc::new(b.finish()),
            Column::Time(b) => Arc::new(b.finish()),
            Column::Timestamp(b, tz) => Arc::new(b.finish().with_timezone_opt(tz.clone())),
            Column::Interval(b) => Arc::new(b.finish()),
            Column::List { item, offsets, nulls, values } => {
                let o = std::mem::replace(offsets, vec![0]);
                Arc::new(ListArray::new(
                    item.clone(),
                    OffsetBuffer::new(ScalarBuffer::from(o)),
                    values.finish(),
                    nulls.finish(),
                ))
            }
            Column::Struct { fields, nulls, children } => {
                let arrays: Vec<ArrayRef> = children.iter_mut().map(Column::finish).collect();
                let n = nulls.len();
                let nb = nulls.finish();
                if fields.is_empty() {
                    Arc::new(StructArray::new_empty_fields(n, nb))
                } else {
                    Arc::new(StructArray::new(fields.clone(), arrays, nb))
                }
            }
        }
    }
}

/// A numeric in PostgreSQL's binary format as a Decimal128 of precision
/// `p` and scale `s`: digits beyond the scale are rounded half away from
/// zero (as a cast to numeric(p, s) rounds), or with `exact` an error; a
/// value needing more than `p` digits is an error, as are NaN and
/// infinities.
pub fn numeric_to_i128(v: &[u8], p: u8, s: i8, exact: bool) -> R<i128> {
    let mut c = v;
    let mut u16_at = || -> R<u16> {
        let (h, t) = c.split_at_checked(2).ok_or("malformed numeric value")?;
        c = t;
        Ok(u16::from_be_bytes(h.try_into().expect("2")))
    };
    let ndigits = u16_at()? as usize;
    let weight = u16_at()? as i16 as i32;
    let sign = u16_at()?;
    let _dscale = u16_at()?;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Err("NaN has no Decimal128 representation".into()),
        0xD000 | 0xF000 => return Err("infinity has no Decimal128 representation".into()),
        _ => return Err("malformed numeric value".into()),
    }
    let overflow = || format!("numeric value out of range for decimal({p},{s})");
    let mut acc: i128 = 0;
    for i in 0..ndigits {
        let d = u16_at()? as i128;
        if d >= 10_000 {
            return Err("malformed numeric value".into());
        }
        // this base-10000 digit is worth d * 10^t in units of 10^-s
        let t = 4 * (weight - i as i32) + s as i32;
        if t >= 0 {
            let m = 10i128.checked_pow(t as u32).ok_or_else(overflow)?;
            acc = d.checked_mul(m).and_then(|x| acc.checked_add(x)).ok_or_else(overflow)?;
        } else {
            if exact && (d != 0 && (t < -4 || d % 10i128.pow((-t) as u32) != 0) || i + 1 < ndigits) {
                return Err(format!(
                    "numeric value has more than {s} fractional digits: a decimal({p},{s}) field cannot hold it exactly"
                ));
            }
            if t >= -4 {
                let div = 10i128.pow((-t) as u32);
                acc = acc.checked_add(d / div).ok_or_else(overflow)?;
                if (d / (div / 10)) % 10 >= 5 {
                    acc = acc.checked_add(1).ok_or_else(overflow)?;
                }
            }
            break;
        }
    }
    if acc >= 10i128.pow(p as u32) {
        return Err(overflow());
    }
    Ok(if sign == 0x4000 { -acc } else { acc })
}

/// A decimal number's text (`-12.345`, `+7`, `.5`, `0012.`) as a
/// Decimal128 of precision `p` and scale `s`: digits beyond the scale are
/// rounded half away from zero, or with `exact` an error; a value needing
/// more than `p` digits is an error, as is anything but digits, one point
/// and a leading sign.
pub fn decimal_text_to_i128(t: &str, p: u8, s: i8, exact: bool) -> R<i128> {
    let bad = || format!("invalid decimal value \"{t}\"");
    let overflow = || format!("decimal value {t} is out of range for decimal({p},{s})");
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let mut acc: i128 = 0;
    let push = |acc: i128, d: u8| acc.checked_mul(10).and_then(|a| a.checked_add((d - b'0') as i128));
    for d in int.bytes() {
        acc = push(acc, d).ok_or_else(overflow)?;
    }
    // the scale's digits; a negative scale drops integer digits
    let keep = s.max(0) as usize;
    let fb = frac.as_bytes();
    for i in 0..keep {
        acc = push(acc, *fb.get(i).unwrap_or(&b'0')).ok_or_else(overflow)?;
    }
    let rest = fb.get(keep..).unwrap_or(&[]);
    if exact && rest.iter().any(|&d| d != b'0') {
        return Err(format!(
            "decimal value {t} has more than {s} fractional digits: a decimal({p},{s}) field cannot hold it exactly"
        ));
    }
    if rest.first().is_some_and(|&d| d >= b'5') {
        acc = acc.checked_add(1).ok_or_else(overflow)?;
    }
    if s < 0 {
        let div = 10i128.checked_pow((-s) as u32).ok_or_else(overflow)?;
        let r = acc % div;
        acc /= div;
        if r * 2 >= div {
            acc += 1;
        }
    }
    if acc >= 10i128.pow(p as u32) {
        return Err(overflow());
    }
    Ok(if neg { -acc } else { acc })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL's binary form of a decimal string (base-10000 digits).
    fn numeric(s: &str) -> Vec<u8> {
        let neg = s.starts_with('-');
        let s = s.trim_start_matches('-');
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let ipad = (4 - int.len() % 4) % 4;
        let int = format!("{}{int}", "0".repeat(ipad));
        let frac = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
        let digits: Vec<u16> = int
            .as_bytes()
            .chunks(4)
            .chain(frac.as_bytes().chunks(4))
            .map(|c| std::str::from_utf8(c).unwrap().parse().unwrap())
            .collect();
        let weight = (int.len() / 4) as i16 - 1;
        let mut out = Vec::new();
        out.extend_from_slice(&(digits.len() as u16).to_be_bytes());
        out.extend_from_slice(&weight.to_be_bytes());
        out.extend_from_slice(&(if neg { 0x4000u16 } else { 0 }).to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        for d in digits {
            out.extend_from_slice(&d.to_be_bytes());
        }
        out
    }

    #[test]
    fn decimal_texts() {
        let n = |t: &str, p, s| decimal_text_to_i128(t, p, s, false);
        assert_eq!(n("123.45", 10, 2), Ok(12345));
        assert_eq!(n("-123.45", 10, 2), Ok(-12345));
        assert_eq!(n("-0.005", 10, 2), Ok(-1));
        assert_eq!(n("0.00499", 10, 2), Ok(0));
        assert_eq!(n("+7", 5, 0), Ok(7));
        assert_eq!(n(".5", 5, 1), Ok(5));
        assert_eq!(n("12.", 5, 1), Ok(120));
        assert_eq!(n("99999999999999999999999999999999999999", 38, 0), Ok(10i128.pow(38) - 1));
        assert!(n("100", 2, 0).unwrap_err().contains("out of range"));
        assert!(n("99.995", 4, 2).unwrap_err().contains("out of range"));
        assert_eq!(n("1250", 5, -2), Ok(13));
        for bad in ["", "-", ".", "1.2.3", "1e3", "12a", " 1"] {
            assert!(n(bad, 10, 2).unwrap_err().contains("invalid"), "{bad}");
        }
        assert!(decimal_text_to_i128("0.005", 10, 2, true).unwrap_err().contains("fractional"));
        assert_eq!(decimal_text_to_i128("0.500", 10, 1, true), Ok(5));
    }

    #[test]
    fn natives() {
        let mut c = Column::new(&Plan::I16);
        assert_eq!(c.append_native(Native::Int(-32768)), Ok(2));
        assert!(c.append_native(Native::Int(40000)).unwrap_err().contains("out of range for smallint"));
        assert!(c.append_native(Native::Text(b"x")).unwrap_err().contains("text value for an Arrow Int16"));
        assert_eq!(c.append_native(Native::Null), Ok(1));
        let a = c.finish();
        assert_eq!((a.len(), a.null_count()), (2, 1));
        let mut d = Column::new(&Plan::Decimal(20, 0));
        assert_eq!(d.append_native(Native::Int(u64::MAX as i128)), Ok(16));
        let mut d = Column::new(&Plan::Decimal(3, 1));
        assert!(d.append_native(Native::Int(100)).unwrap_err().contains("out of range for decimal(3,1)"));
        let mut t = Column::new(&Plan::Time);
        assert!(t.append_native(Native::Time(86_400_000_000)).unwrap_err().contains("time of day"));
        let mut s = Column::new(&Plan::Text);
        assert!(s.append_native(Native::Text(b"\xff")).unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn numerics() {
        let n = |s: &str, p, sc| numeric_to_i128(&numeric(s), p, sc, false);
        let x = |s: &str, p, sc| numeric_to_i128(&numeric(s), p, sc, true);
        assert_eq!(n("123.45", 10, 2), Ok(12345));
        assert_eq!(n("-123.45", 10, 2), Ok(-12345));
        assert_eq!(n("0.005", 10, 2), Ok(1));
        assert_eq!(n("-0.005", 10, 2), Ok(-1));
        assert_eq!(n("0.00499999", 10, 2), Ok(0));
        assert_eq!(n("12345678.9", 38, 10), Ok(123_456_789_000_000_000));
        assert_eq!(n("99999999", 8, 0), Ok(99_999_999));
        assert!(n("100000000", 8, 0).unwrap_err().contains("out of range"));
        assert!(n("99.995", 4, 2).unwrap_err().contains("out of range"));
        assert_eq!(n("1.23456789012345678901234", 38, 10), Ok(12_345_678_901));
        assert_eq!(n("0", 5, 0), Ok(0));
        assert_eq!(n("10000.0001", 12, 4), Ok(100_000_001));
        assert_eq!(x("123.45", 10, 2), Ok(12345));
        assert_eq!(x("123.4", 10, 2), Ok(12340));
        assert_eq!(x("1.5", 38, 10), Ok(15_000_000_000));
        assert!(x("0.005", 10, 2).unwrap_err().contains("more than 2 fractional digits"));
        assert!(x("1.00000000001", 38, 10).unwrap_err().contains("fractional"));
        let nan = [0, 0, 0, 0, 0xC0, 0, 0, 0];
        assert!(numeric_to_i128(&nan, 10, 2, false).unwrap_err().contains("NaN"));
    }

    #[test]
    fn nested_nulls() {
        use arrow_array::Array;
        let plan = Plan::Struct(vec![("a".into(), Plan::I32), ("b".into(), Plan::List(Box::new(Plan::Text)))]);
        let mut c = Column::new(&plan);
        // (7, {x,NULL})
        let mut list = Vec::new();
        for v in [
            &[1i32.to_be_bytes(), 0i32.to_be_bytes(), 25i32.to_be_bytes(), 2i32.to_be_bytes(), 1i32.to_be_bytes()]
                .concat()[..],
            &1i32.to_be_bytes()[..],
            b"x",
            &(-1i32).to_be_bytes()[..],
        ] {
            list.extend_from_slice(v);
        }
        let mut rec = Vec::new();
        rec.extend_from_slice(&2i32.to_be_bytes());
        rec.extend_from_slice(&23i32.to_be_bytes());
        rec.extend_from_slice(&4i32.to_be_bytes());
        rec.extend_from_slice(&7i32.to_be_bytes());
        rec.extend_from_slice(&1009i32.to_be_bytes());
        rec.extend_from_slice(&(list.len() as i32).to_be_bytes());
        rec.extend_from_slice(&list);
        c.append(Some(&rec)).unwrap();
        c.append(None).unwrap();
        let a = c.finish();
        assert_eq!(a.len(), 2);
        assert!(a.is_null(1) && !a.is_null(0));
        let s = a.as_any().downcast_ref::<StructArray>().unwrap();
        let l = s.column(1).as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(l.value_length(0), 2);
        assert!(l.value(0).is_null(1));
        assert!(c.append(Some(&[0, 0])).is_err());
    }
}
