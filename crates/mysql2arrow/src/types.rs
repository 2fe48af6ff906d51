//! MySQL / MariaDB result columns as Arrow fields ([`plan`]) and their
//! values (binary protocol) as the builders' values ([`value`]).
//!
//! | MySQL type | Arrow | PostgreSQL reads it as |
//! |---|---|---|
//! | TINYINT, SMALLINT, TINYINT UNSIGNED, YEAR | Int16 | smallint |
//! | MEDIUMINT, INT, SMALLINT/MEDIUMINT UNSIGNED | Int32 | integer |
//! | BIGINT, INT UNSIGNED | Int64 | bigint |
//! | BIGINT UNSIGNED | Decimal128(20, 0) | numeric(20,0) |
//! | DECIMAL(p,s) | Decimal128(p, s); p over 38: (38, s) | numeric(p,s) |
//! | FLOAT, DOUBLE | Float32, Float64 | real, double precision |
//! | DATE | Date32 | date |
//! | DATETIME | Timestamp(us) | timestamp |
//! | TIMESTAMP | Timestamp(us, UTC) | timestamptz |
//! | TIME | Time64(us), or Interval with --time-as-interval | time, interval |
//! | BIT(1) | Bool | boolean |
//! | BIT(2..63) | Int64 | bigint |
//! | BIT(64) | Decimal128(20, 0) | numeric(20,0) |
//! | CHAR, VARCHAR, TEXT, ENUM, SET, JSON | Utf8 | text |
//! | BINARY, VARBINARY, BLOB, GEOMETRY (WKB after a 4-byte SRID) | Binary | bytea |
//! | NULL (`SELECT NULL`) | Utf8 | text |

use mysql::consts::{ColumnFlags, ColumnType};
use mysql::{Column, Value};
use pgstrom_arrow::column::Native;
use pgstrom_arrow::pgtype::Plan;

/// How a column's values become the builder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conv {
    Int,
    Bool,
    /// BIT(n): big-endian bytes as an unsigned integer.
    Bits,
    Float,
    Double,
    Decimal,
    Text,
    Bytes,
    Date,
    DateTime,
    Time,
    TimeInterval,
}

/// A result column's Arrow plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ColPlan {
    pub plan: Plan,
    pub conv: Conv,
    /// What the user should know (a DECIMAL narrowed to 38 digits).
    pub note: Option<String>,
}

/// The `utf8mb4`... character sets' "binary" number.
const BINARY_CHARSET: u16 = 63;

/// The plan for `c` (`time_as_interval`: TIME columns as intervals).
pub fn plan(c: &Column, time_as_interval: bool) -> ColPlan {
    use ColumnType::*;
    let unsigned = c.flags().contains(ColumnFlags::UNSIGNED_FLAG);
    let p = |plan, conv| ColPlan { plan, conv, note: None };
    match c.column_type() {
        MYSQL_TYPE_TINY | MYSQL_TYPE_YEAR => p(Plan::I16, Conv::Int),
        MYSQL_TYPE_SHORT if unsigned => p(Plan::I32, Conv::Int),
        MYSQL_TYPE_SHORT => p(Plan::I16, Conv::Int),
        MYSQL_TYPE_INT24 => p(Plan::I32, Conv::Int),
        MYSQL_TYPE_LONG if unsigned => p(Plan::I64, Conv::Int),
        MYSQL_TYPE_LONG => p(Plan::I32, Conv::Int),
        MYSQL_TYPE_LONGLONG if unsigned => p(Plan::Decimal(20, 0), Conv::Int),
        MYSQL_TYPE_LONGLONG => p(Plan::I64, Conv::Int),
        MYSQL_TYPE_FLOAT => p(Plan::F32, Conv::Float),
        MYSQL_TYPE_DOUBLE => p(Plan::F64, Conv::Double),
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => {
            let s = c.decimals().min(38);
            // the display length counts the point and the sign
            let len = c.column_length() as i64 - i64::from(s > 0) - i64::from(!unsigned);
            let prec = len.clamp(1, 65) as u8;
            if prec > 38 {
                let p38 = 38.max(s);
                ColPlan {
                    plan: Plan::Decimal(p38, s as i8),
                    conv: Conv::Decimal,
                    note: Some(format!(
                        "DECIMAL({prec},{s}) written as decimal({p38},{s}) (Arrow's Decimal128 holds 38 digits)"
                    )),
                }
            } else {
                p(Plan::Decimal(prec.max(s).max(1), s as i8), Conv::Decimal)
            }
        }
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => p(Plan::Date, Conv::Date),
        MYSQL_TYPE_DATETIME | MYSQL_TYPE_DATETIME2 => p(Plan::Timestamp, Conv::DateTime),
        MYSQL_TYPE_TIMESTAMP | MYSQL_TYPE_TIMESTAMP2 => p(Plan::TimestampTz, Conv::DateTime),
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 if time_as_interval => p(Plan::Interval, Conv::TimeInterval),
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => p(Plan::Time, Conv::Time),
        MYSQL_TYPE_BIT if c.column_length() <= 1 => p(Plan::Bool, Conv::Bool),
        MYSQL_TYPE_BIT if c.column_length() <= 63 => p(Plan::I64, Conv::Bits),
        MYSQL_TYPE_BIT => p(Plan::Decimal(20, 0), Conv::Bits),
        MYSQL_TYPE_GEOMETRY => p(Plan::Bytea, Conv::Bytes),
        MYSQL_TYPE_ENUM | MYSQL_TYPE_SET | MYSQL_TYPE_JSON | MYSQL_TYPE_NULL => p(Plan::Text, Conv::Text),
        _ if c.flags().intersects(ColumnFlags::ENUM_FLAG | ColumnFlags::SET_FLAG) => p(Plan::Text, Conv::Text),
        _ if c.character_set() == BINARY_CHARSET => p(Plan::Bytea, Conv::Bytes),
        _ => p(Plan::Text, Conv::Text),
    }
}

/// Days from 1970-01-01 of a proleptic Gregorian date (y may be 0: 1 BC).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: u16, m: u8) -> u8 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970 of MySQL's date parts; None for a zero date (a zero
/// month or day); an impossible date (`2021-02-30` under
/// ALLOW_INVALID_DATES) is an error.
fn date_days(y: u16, m: u8, d: u8) -> Result<Option<i32>, String> {
    if m == 0 || d == 0 {
        return Ok(None);
    }
    if m > 12 || d > days_in_month(y, m) {
        return Err(format!("invalid date {y:04}-{m:02}-{d:02}"));
    }
    Ok(Some(days_from_civil(y as i64, m as u32, d as u32) as i32))
}

fn zero(what: &str, zero_null: bool) -> Result<Native<'static>, String> {
    if zero_null {
        Ok(Native::Null)
    } else {
        Err(format!("a zero {what} (a zero year, month or day): Arrow has no such value; --zero-date=null writes NULL"))
    }
}

/// `v` of a column converted by `conv` (`zero_null`: zero dates as NULL).
pub fn value<'a>(conv: Conv, v: &'a Value, zero_null: bool) -> Result<Native<'a>, String> {
    let unexpected = || Err(format!("unexpected value {v:?} for the column's type"));
    Ok(match (conv, v) {
        (_, Value::NULL) => Native::Null,
        (Conv::Int, Value::Int(x)) => Native::Int(*x as i128),
        (Conv::Int, Value::UInt(x)) => Native::Int(*x as i128),
        (Conv::Bool | Conv::Bits, Value::Bytes(b)) if b.len() <= 8 => {
            let n = b.iter().fold(0u64, |a, &x| (a << 8) | x as u64);
            if conv == Conv::Bool { Native::Bool(n != 0) } else { Native::Int(n as i128) }
        }
        (Conv::Bool | Conv::Bits, Value::Int(x)) => {
            if conv == Conv::Bool {
                Native::Bool(*x != 0)
            } else {
                Native::Int(*x as i128)
            }
        }
        (Conv::Bool | Conv::Bits, Value::UInt(x)) => {
            if conv == Conv::Bool {
                Native::Bool(*x != 0)
            } else {
                Native::Int(*x as i128)
            }
        }
        (Conv::Float, Value::Float(x)) => Native::F32(*x),
        (Conv::Float, Value::Double(x)) => Native::F32(*x as f32),
        (Conv::Double, Value::Double(x)) => Native::F64(*x),
        (Conv::Double, Value::Float(x)) => Native::F64(*x as f64),
        (Conv::Decimal, Value::Bytes(b)) => {
            Native::Decimal(std::str::from_utf8(b).map_err(|_| "a DECIMAL value that is not text".to_string())?)
        }
        (Conv::Decimal, Value::Int(x)) => Native::Int(*x as i128),
        (Conv::Decimal, Value::UInt(x)) => Native::Int(*x as i128),
        (Conv::Text, Value::Bytes(b)) => Native::Text(b),
        (Conv::Bytes, Value::Bytes(b)) => Native::Bytes(b),
        (Conv::Date, Value::Date(y, m, d, ..)) => match date_days(*y, *m, *d)? {
            Some(days) => Native::Date(days),
            None => return zero("date", zero_null),
        },
        (Conv::DateTime, Value::Date(y, m, d, hh, mi, ss, us)) => match date_days(*y, *m, *d)? {
            Some(days) => {
                let secs = days as i64 * 86_400 + *hh as i64 * 3600 + *mi as i64 * 60 + *ss as i64;
                Native::Timestamp(secs * 1_000_000 + *us as i64)
            }
            None => return zero("datetime", zero_null),
        },
        (Conv::Time | Conv::TimeInterval, Value::Time(neg, days, hh, mi, ss, us)) => {
            let mag = ((*days as i64 * 24 + *hh as i64) * 3600 + *mi as i64 * 60 + *ss as i64) * 1_000_000 + *us as i64;
            let t = if *neg { -mag } else { mag };
            if conv == Conv::TimeInterval {
                Native::Interval(0, 0, t)
            } else if (0..86_400_000_000).contains(&t) {
                Native::Time(t)
            } else {
                let sign = if *neg { "-" } else { "" };
                let h = *days as u64 * 24 + *hh as u64;
                return Err(format!(
                    "TIME value {sign}{h:02}:{mi:02}:{ss:02} is not a time of day; --time-as-interval writes TIME \
                     columns as intervals"
                ));
            }
        }
        _ => return unexpected(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgstrom_arrow::column::PG_EPOCH_DAYS;

    #[test]
    fn dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), PG_EPOCH_DAYS as i64);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(2024, 3, 1) - days_from_civil(2024, 2, 28), 2);
        assert_eq!(days_from_civil(1, 1, 1), -719_162);
        assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
        assert_eq!(date_days(2021, 2, 29), Err("invalid date 2021-02-29".into()));
        assert_eq!(date_days(2020, 0, 0), Ok(None));
    }

    #[test]
    fn values() {
        let v = |c, x: Value| value(c, &x, false).map(|n| format!("{n:?}"));
        assert_eq!(v(Conv::Int, Value::UInt(u64::MAX)).unwrap(), format!("Int({})", u64::MAX));
        assert_eq!(v(Conv::Bits, Value::Bytes(vec![1, 2])).unwrap(), "Int(258)");
        assert_eq!(v(Conv::Bool, Value::Bytes(vec![1])).unwrap(), "Bool(true)");
        assert_eq!(v(Conv::Date, Value::Date(1970, 1, 2, 0, 0, 0, 0)).unwrap(), "Date(1)");
        assert_eq!(v(Conv::DateTime, Value::Date(1970, 1, 1, 1, 0, 0, 5)).unwrap(), "Timestamp(3600000005)");
        assert!(v(Conv::Date, Value::Date(0, 0, 0, 0, 0, 0, 0)).unwrap_err().contains("--zero-date=null"));
        assert_eq!(value(Conv::Date, &Value::Date(0, 0, 0, 0, 0, 0, 0), true), Ok(Native::Null));
        assert_eq!(v(Conv::Time, Value::Time(false, 0, 23, 59, 59, 999_999)).unwrap(), "Time(86399999999)");
        assert!(v(Conv::Time, Value::Time(true, 0, 1, 0, 0, 0)).unwrap_err().contains("-01:00:00"));
        assert!(v(Conv::Time, Value::Time(false, 34, 22, 59, 59, 0)).unwrap_err().contains("838:59:59"));
        assert_eq!(
            v(Conv::TimeInterval, Value::Time(true, 1, 1, 0, 0, 500_000)).unwrap(),
            format!("Interval(0, 0, {})", -(25 * 3600 * 1_000_000i64 + 500_000))
        );
        assert!(v(Conv::Int, Value::Bytes(vec![b'1'])).unwrap_err().contains("unexpected"));
    }
}
