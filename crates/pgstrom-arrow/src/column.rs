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
