//! PostgreSQL result columns as Arrow fields: the inverse of Arrow_Fdw's
//! type mapping (docs/pg2arrow.md has the table).  A column whose type has
//! no Arrow counterpart is fetched as text (the query is wrapped with a
//! cast) and written as Utf8.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit};
use postgres::types::{Kind, Type};

/// How one value is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    Bool,
    I16,
    I32,
    I64,
    /// oid, xid, cid: unsigned 32-bit.
    U32,
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

/// The plan for a value of `ty` with modifier `typmod`, or None when it
/// has no Arrow counterpart (the column goes as text).  `attrs` gives a
/// composite type's attribute modifiers (by the type's oid).
pub fn plan_of(ty: &Type, typmod: i32, attrs: &mut dyn FnMut(&Type) -> Vec<i32>) -> Option<Plan> {
    match ty.kind() {
        Kind::Domain(base) => return plan_of(base, -1, attrs),
        Kind::Enum(_) => return Some(Plan::Text),
        Kind::Array(elem) => return plan_of(elem, typmod, attrs).map(|p| Plan::List(Box::new(p))),
        Kind::Composite(fields) => {
            let mods = attrs(ty);
            let mut out = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                out.push((f.name().to_string(), plan_of(f.type_(), mods.get(i).copied().unwrap_or(-1), attrs)?));
            }
            return Some(Plan::Struct(out));
        }
        Kind::Simple => {}
        _ => return None,
    }
    Some(match *ty {
        Type::BOOL => Plan::Bool,
        Type::INT2 => Plan::I16,
        Type::INT4 => Plan::I32,
        Type::INT8 => Plan::I64,
        Type::OID | Type::XID | Type::CID => Plan::U32,
        Type::FLOAT4 => Plan::F32,
        Type::FLOAT8 => Plan::F64,
        Type::NUMERIC => {
            if typmod >= 4 {
                let t = typmod - 4;
                let (p, s) = ((t >> 16) & 0xffff, t & 0x7ff);
                // scales beyond precision or negative (PostgreSQL 15+): the default
                if (1..=38).contains(&p) && s <= p && (t & 0x400) == 0 {
                    Plan::Decimal(p as u8, s as i8)
                } else {
                    Plan::Decimal(DEFAULT_NUMERIC.0, DEFAULT_NUMERIC.1)
                }
            } else {
                Plan::Decimal(DEFAULT_NUMERIC.0, DEFAULT_NUMERIC.1)
            }
        }
        Type::TEXT | Type::VARCHAR | Type::NAME => Plan::Text,
        Type::BPCHAR if typmod > 4 => Plan::Bpchar(typmod - 4),
        Type::BPCHAR => Plan::Text,
        Type::BYTEA => Plan::Bytea,
        Type::UUID => Plan::Uuid,
        Type::DATE => Plan::Date,
        Type::TIME => Plan::Time,
        Type::TIMESTAMP => Plan::Timestamp,
        Type::TIMESTAMPTZ => Plan::TimestampTz,
        Type::INTERVAL => Plan::Interval,
        _ => return None,
    })
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

    fn none(_: &Type) -> Vec<i32> {
        Vec::new()
    }

    #[test]
    fn numeric_modifiers() {
        let n = |m| plan_of(&Type::NUMERIC, m, &mut none);
        assert_eq!(n((12 << 16 | 2) + 4), Some(Plan::Decimal(12, 2)));
        assert_eq!(n(-1), Some(Plan::Decimal(38, 10)));
        assert_eq!(n((60 << 16 | 2) + 4), Some(Plan::Decimal(38, 10)));
        assert_eq!(plan_of(&Type::BPCHAR, 19, &mut none), Some(Plan::Bpchar(15)));
        assert_eq!(plan_of(&Type::INT4_ARRAY, -1, &mut none), Some(Plan::List(Box::new(Plan::I32))));
        assert_eq!(plan_of(&Type::JSONB, -1, &mut none), None);
        assert_eq!(plan_of(&Type::INET_ARRAY, -1, &mut none), None);
    }
}
