//! Result columns of a query (rust-postgres types) as [`Plan`]s.  A column
//! whose type has no Arrow counterpart is fetched as text (the query is
//! wrapped with a cast) and written as Utf8.

use tokio_postgres::types::{Kind, Type};

pub use pgstrom_arrow::pgtype::{DEFAULT_NUMERIC, Plan, field};
use pgstrom_arrow::pgtype::{decimal_fits, numeric_typmod};

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
    // pg_strom's half-precision type: an extension type, known by name
    if ty.name() == "float2" && ty.schema() == "pg_catalog" {
        return Some(Plan::F16);
    }
    Some(match *ty {
        Type::BOOL => Plan::Bool,
        Type::INT2 => Plan::I16,
        Type::INT4 => Plan::I32,
        Type::INT8 => Plan::I64,
        Type::OID | Type::XID | Type::CID => Plan::U32,
        Type::FLOAT4 => Plan::F32,
        Type::FLOAT8 => Plan::F64,
        // constrained beyond Decimal128 (or a negative scale): the default
        Type::NUMERIC => match numeric_typmod(typmod) {
            Some((p, s)) if decimal_fits(p, s) => Plan::Decimal(p as u8, s as i8),
            _ => Plan::Decimal(DEFAULT_NUMERIC.0, DEFAULT_NUMERIC.1),
        },
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
