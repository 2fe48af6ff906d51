//! `--stat`: per record batch min/max of chosen columns, written as the
//! fields' `min_values` / `max_values` custom metadata (comma-separated,
//! one entry per batch, empty for a batch of only NULLs), as PostgreSQL
//! input text that Arrow_Fdw parses with the column type's input function.
//! Order is PostgreSQL's: NaN above every number.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType,
};
use arrow_array::{Array, ArrowPrimitiveType};

use pgstrom_arrow::pgtype::Plan;

/// Min and max of one batch's column as text, None when every value is NULL.
pub fn min_max(plan: &Plan, a: &dyn Array) -> Option<(String, String)> {
    fn ord<T: ArrowPrimitiveType>(
        a: &dyn Array,
        cmp: impl Fn(&T::Native, &T::Native) -> std::cmp::Ordering,
    ) -> Option<(T::Native, T::Native)> {
        let p = a.as_primitive::<T>();
        let mut it = p.iter().flatten();
        let first = it.next()?;
        Some(it.fold((first, first), |(lo, hi), v| {
            (if cmp(&v, &lo).is_lt() { v } else { lo }, if cmp(&v, &hi).is_gt() { v } else { hi })
        }))
    }
    let plain = |x: &dyn std::fmt::Display| x.to_string();
    macro_rules! int {
        ($t:ty) => {
            ord::<$t>(a, |x, y| x.cmp(y)).map(|(l, h)| (plain(&l), plain(&h)))
        };
    }
    match plan {
        Plan::I16 => int!(Int16Type),
        Plan::I32 => int!(Int32Type),
        Plan::I64 => int!(Int64Type),
        // NaN last, as PostgreSQL orders floats; -0 and 0 are equal there
        Plan::F32 => ord::<Float32Type>(a, |x, y| pg_float_cmp(*x as f64, *y as f64))
            .map(|(l, h)| (float(l as f64), float(h as f64))),
        Plan::F64 => ord::<Float64Type>(a, |x, y| pg_float_cmp(*x, *y)).map(|(l, h)| (float(l), float(h))),
        Plan::Decimal(_, s) => ord::<Decimal128Type>(a, |x, y| x.cmp(y)).map(|(l, h)| (decimal(l, *s), decimal(h, *s))),
        Plan::Date => ord::<Date32Type>(a, |x, y| x.cmp(y)).map(|(l, h)| (date(l as i64), date(h as i64))),
        Plan::Time => ord::<Time64MicrosecondType>(a, |x, y| x.cmp(y)).map(|(l, h)| (time(l), time(h))),
        Plan::Timestamp => {
            ord::<TimestampMicrosecondType>(a, |x, y| x.cmp(y)).map(|(l, h)| (timestamp(l), timestamp(h)))
        }
        Plan::TimestampTz => ord::<TimestampMicrosecondType>(a, |x, y| x.cmp(y))
            .map(|(l, h)| (format!("{}+00", timestamp(l)), format!("{}+00", timestamp(h)))),
        _ => None,
    }
}

fn pg_float_cmp(x: f64, y: f64) -> std::cmp::Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => x.partial_cmp(&y).expect("no NaN"),
    }
}

fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else {
        // shortest text that reads back as the same value
        format!("{v:e}")
    }
}

fn decimal(v: i128, s: i8) -> String {
    if s <= 0 {
        return format!("{v}{}", "0".repeat((-s) as usize));
    }
    let digits = v.unsigned_abs().to_string();
    let s = s as usize;
    let padded = format!("{digits:0>width$}", width = s + 1);
    let (i, f) = padded.split_at(padded.len() - s);
    format!("{}{i}.{f}", if v < 0 { "-" } else { "" })
}

/// Civil date of days since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    // year 0 is 1 BC in PostgreSQL's notation
    if y <= 0 { format!("{:04}-{m:02}-{d:02} BC", 1 - y) } else { format!("{y:04}-{m:02}-{d:02}") }
}

fn time(us: i64) -> String {
    let s = us.div_euclid(1_000_000);
    format!("{:02}:{:02}:{:02}.{:06}", s / 3600, s / 60 % 60, s % 60, us.rem_euclid(1_000_000))
}

fn timestamp(us: i64) -> String {
    let days = us.div_euclid(86_400_000_000);
    let t = time(us.rem_euclid(86_400_000_000));
    let d = date(days);
    match d.strip_suffix(" BC") {
        Some(d) => format!("{d} {t} BC"),
        None => format!("{d} {t}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Decimal128Array, Float64Array, Int32Array, TimestampMicrosecondArray};

    #[test]
    fn texts() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(8766), "1994-01-01");
        assert_eq!(date(-719_163), "0001-12-31 BC");
        assert_eq!(date(-719_162), "0001-01-01");
        assert_eq!(timestamp(-1), "1969-12-31 23:59:59.999999");
        assert_eq!(decimal(-5, 2), "-0.05");
        assert_eq!(decimal(12345, 2), "123.45");
        assert_eq!(decimal(7, 0), "7");
        assert_eq!(float(0.1), "1e-1");
        assert_eq!("1e-1".parse::<f64>().unwrap(), 0.1);
    }

    #[test]
    fn batches() {
        let a = Int32Array::from(vec![Some(5), None, Some(-3), Some(9)]);
        assert_eq!(min_max(&Plan::I32, &a), Some(("-3".into(), "9".into())));
        let n = Int32Array::from(vec![None::<i32>, None]);
        assert_eq!(min_max(&Plan::I32, &n), None);
        let f = Float64Array::from(vec![1.5, f64::NAN, -2.0]);
        assert_eq!(min_max(&Plan::F64, &f), Some(("-2e0".into(), "NaN".into())));
        let d = Decimal128Array::from(vec![150, -20]).with_precision_and_scale(10, 2).unwrap();
        assert_eq!(min_max(&Plan::Decimal(10, 2), &d), Some(("-0.20".into(), "1.50".into())));
        let t = TimestampMicrosecondArray::from(vec![0]).with_timezone("UTC");
        assert_eq!(
            min_max(&Plan::TimestampTz, &t),
            Some(("1970-01-01 00:00:00.000000+00".into(), "1970-01-01 00:00:00.000000+00".into()))
        );
    }
}
