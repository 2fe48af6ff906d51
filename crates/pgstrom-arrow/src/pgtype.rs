//! PostgreSQL values as Arrow fields: how each PostgreSQL type is written
//! (the inverse of Arrow_Fdw's mapping, docs/pg2arrow.md has the table).
//! Shared by pg2arrow and Arrow_Fdw's INSERT; [`crate::column`] builds the
//! arrays from values in PostgreSQL's binary send format.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit};

/// How one value is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    Bool,
    I16,
    I32,
    I64,
    /// oid, xid, cid: unsigned 32-bit.
    U32,
    /// float2 (pg_strom's half-precision type).
    F16,
    F32,
    F64,
    /// numeric(p, s); unconstrained numeric is numeric(38, 10).
    Decimal(u8, i8),
    /// text, varchar, name, enum labels, and every text fallback.
    Text,
    /// char(n): n bytes, blank-padded (field metadata pg_type=bpchar).
    Bpchar(i32),
    Bytea,
    /// 16 bytes (the `arrow.uuid` extension type).
    Uuid,
    Date,
    Time,
    Timestamp,
    TimestampTz,
    Interval,
    /// A one-dimensional array of the element's plan.
    List(Box<Plan>),
    /// A composite type: its attributes' names and plans.
    Struct(Vec<(String, Plan)>),
}

/// Precision and scale of unconstrained numeric.
pub const DEFAULT_NUMERIC: (u8, i8) = (38, 10);

/// The precision and scale a numeric column's type modifier declares
/// (the scale may be negative since PostgreSQL 15); None for unconstrained
/// numeric.
pub fn numeric_typmod(typmod: i32) -> Option<(i32, i32)> {
    if typmod < 4 {
        return None;
    }
    let t = typmod - 4;
    // the scale is an 11-bit two's complement number
    Some(((t >> 16) & 0xffff, ((t & 0x7ff) ^ 0x400) - 0x400))
}

/// Decimal128 holds numeric(p, s) when 1 <= p <= 38 and 0 <= s <= p.
pub fn decimal_fits(p: i32, s: i32) -> bool {
    (1..=38).contains(&p) && (0..=p).contains(&s)
}

/// The Arrow field for a column `name` written by `plan`.
pub fn field(name: &str, plan: &Plan) -> Field {
    let mut md = HashMap::new();
    let dt = match plan {
        Plan::Bool => DataType::Boolean,
        Plan::I16 => DataType::Int16,
        Plan::I32 => DataType::Int32,
        Plan::I64 => DataType::Int64,
        Plan::U32 => DataType::UInt32,
        Plan::F16 => DataType::Float16,
        Plan::F32 => DataType::Float32,
        Plan::F64 => DataType::Float64,
        Plan::Decimal(p, s) => DataType::Decimal128(*p, *s),
        Plan::Text => DataType::Utf8,
        Plan::Bpchar(n) => {
            md.insert("pg_type".to_string(), "bpchar".to_string());
            DataType::FixedSizeBinary(*n)
        }
        Plan::Bytea => DataType::Binary,
        Plan::Uuid => {
            md.insert("ARROW:extension:name".to_string(), "arrow.uuid".to_string());
            DataType::FixedSizeBinary(16)
        }
        Plan::Date => DataType::Date32,
        Plan::Time => DataType::Time64(TimeUnit::Microsecond),
        Plan::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        Plan::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Plan::Interval => DataType::Interval(IntervalUnit::MonthDayNano),
        Plan::List(e) => DataType::List(field("item", e).into()),
        Plan::Struct(attrs) => DataType::Struct(attrs.iter().map(|(n, p)| field(n, p)).collect()),
    };
    Field::new(name, dt, true).with_metadata(md)
}

/// Types whose per-batch min/max Arrow_Fdw can use (`--stat`).
pub fn has_stats(plan: &Plan) -> bool {
    matches!(
        plan,
        Plan::I16
            | Plan::I32
            | Plan::I64
            | Plan::F32
            | Plan::F64
            | Plan::Decimal(..)
            | Plan::Date
            | Plan::Time
            | Plan::Timestamp
            | Plan::TimestampTz
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_modifiers() {
        assert_eq!(numeric_typmod(-1), None);
        assert_eq!(numeric_typmod((12 << 16 | 2) + 4), Some((12, 2)));
        // numeric(5, -2): the scale's 11 bits are 0x7fe
        assert_eq!(numeric_typmod((5 << 16 | 0x7fe) + 4), Some((5, -2)));
        assert!(decimal_fits(38, 10) && !decimal_fits(39, 0) && !decimal_fits(5, -2) && !decimal_fits(3, 4));
    }
}
