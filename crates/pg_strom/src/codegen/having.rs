//! The group filter: a HAVING clause evaluated by a serial GpuPreAgg
//! once it holds every group (compiled here, at plan time; evaluated by
//! `gpupreagg::exec`).
//!
//! A GpuPreAgg that runs in one process (no Gather above it) and merges
//! its chunks' groups (`gpupreagg::merge`) holds, after its last chunk,
//! each group once with the state of all its rows.  Where the HAVING
//! clause is a conjunction of comparisons of an aggregate with a constant
//! (`sum(l_quantity) > 300`, `count(*) >= 2`), the node computes each
//! group's aggregate values from its words and returns only the groups
//! that pass: PostgreSQL's Finalize Aggregate, which still evaluates the
//! whole HAVING clause, then combines and finalizes a few groups instead
//! of all of them (TPC-H Q18's `l_orderkey` groups: one in 25,000 passes).
//!
//! Exactness: a group is removed only where every term is decided and
//! one is false or NULL, as PostgreSQL's qual would be; a value the node
//! cannot compare exactly (a numeric sum beyond 38 digits, an overflow)
//! keeps the group, and so does a group whose partial states would raise
//! an error when formed (`bigint out of range`, ...), so that the error
//! is raised as without the filter.  Only all-or-nothing: a HAVING with
//! any other term is not pushed (its terms' order of evaluation, and so
//! which errors it raises, stays PostgreSQL's).  The filter is not
//! applied where the merger gave up holding every group (more than
//! `hash_mem`: PostgreSQL's own budget for a hash aggregate), nor after
//! a chunk's groups passed it unmerged.
//!
//! Supported: `count`, `sum` of integers, numerics and floats, `min` and
//! `max` of integers, floats and numeric(p,s) columns (p <= 18), compared by the
//! built-in `=`, `<>`, `<`, `<=`, `>`, `>=` with an integer, numeric or
//! float constant of the same kind.

use pgrx::pg_sys;

use pgstrom_runtime::agg::{self, AggKind};

use super::aggregates::{self, Encoding};

pub use pgstrom_runtime::group_filter::{Cmp, Final, GroupFilter, Num, Value, decide, parse_numeric};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Num,
    Float,
}

fn kind_of_type(t: pg_sys::Oid) -> Option<Kind> {
    match t {
        pg_sys::INT2OID | pg_sys::INT4OID | pg_sys::INT8OID => Some(Kind::Int),
        pg_sys::NUMERICOID => Some(Kind::Num),
        pg_sys::FLOAT4OID | pg_sys::FLOAT8OID => Some(Kind::Float),
        _ => None,
    }
}

/// The kind of the final value of a (partial) aggregate the filter can
/// compute from its words, or None.
fn kind_of_aggregate(name: &str, enc: Encoding, arg: pg_sys::Oid) -> Option<Kind> {
    match (name, enc) {
        ("count", Encoding::Count) => Some(Kind::Int),
        ("sum", Encoding::SumInt8) => Some(Kind::Int),
        ("sum", Encoding::PolyNum | Encoding::NumAvg) => Some(Kind::Num),
        ("sum", Encoding::SumFloat4 | Encoding::SumFloat8) => Some(Kind::Float),
        ("min" | "max", Encoding::MinMaxInt) if kind_of_type(arg) == Some(Kind::Int) => Some(Kind::Int),
        ("min" | "max", Encoding::MinMaxFloat) => Some(Kind::Float),
        ("min" | "max", Encoding::MinMaxNum) => Some(Kind::Num),
        _ => None,
    }
}

/// The constant's value as the filter compares it (None: a NULL, or a
/// value it cannot hold exactly).
///
/// # Safety
/// `c` is a valid Const.
unsafe fn const_value(c: *mut pg_sys::Const, kind: Kind) -> Option<Value> {
    // SAFETY: a valid Const of a type of `kind`.
    unsafe {
        if (*c).constisnull {
            return None;
        }
        let d = (*c).constvalue;
        Some(match ((*c).consttype, kind) {
            (pg_sys::INT2OID, Kind::Int) => Value::Int(d.value() as i16 as i128),
            (pg_sys::INT4OID, Kind::Int) => Value::Int(d.value() as i32 as i128),
            (pg_sys::INT8OID, Kind::Int) => Value::Int(d.value() as i64 as i128),
            (pg_sys::FLOAT4OID, Kind::Float) => Value::Float(f32::from_bits(d.value() as u32) as f64),
            (pg_sys::FLOAT8OID, Kind::Float) => Value::Float(f64::from_bits(d.value() as u64)),
            (pg_sys::NUMERICOID, Kind::Num) => {
                let text = pg_sys::OidOutputFunctionCall(pg_sys::F_NUMERIC_OUT.into(), d);
                Value::Num(parse_numeric(&std::ffi::CStr::from_ptr(text).to_string_lossy())?)
            }
            _ => return None,
        })
    }
}

/// The position in `target` (a partial grouping target) of the partial
/// form of HAVING's Aggref `a`.
///
/// # Safety
/// Planner state: `a` a valid Aggref, `target` valid expressions.
unsafe fn target_index(a: *mut pg_sys::Aggref, target: &[*mut pg_sys::Node]) -> Option<usize> {
    // SAFETY: caller's promise; the copy is the planner's memory.
    unsafe {
        let copy = pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref;
        pg_sys::mark_partial_aggref(copy, pg_sys::AggSplit::AGGSPLIT_INITIAL_SERIAL);
        target.iter().position(|&t| pg_sys::equal(t.cast(), copy.cast()))
    }
}

/// One HAVING term as a [`GroupFilter`] over `target` (the output column
/// is the term's Aggref's position there), or None where it is not one.
///
/// # Safety
/// Planner state, as for [`compile`].
unsafe fn term(q: *mut pg_sys::Node, target: &[*mut pg_sys::Node]) -> Option<GroupFilter> {
    // SAFETY: caller's promise.
    unsafe {
        if q.is_null() || (*q).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = q as *mut pg_sys::OpExpr;
        let args = crate::pg::list::from_list((*op).args);
        if args.len() != 2 || (*op).opretset {
            return None;
        }
        // a built-in comparison (user-made operators have OIDs past the
        // catalogs' own)
        if (*op).opno.to_u32() >= pg_sys::FirstGenbkiObjectId {
            return None;
        }
        let name_p = pg_sys::get_opname((*op).opno);
        if name_p.is_null() {
            return None;
        }
        let mut cmp = Cmp::from_name(&std::ffi::CStr::from_ptr(name_p).to_string_lossy())?;
        let (agg, cst) = match ((*args[0]).type_, (*args[1]).type_) {
            (pg_sys::NodeTag::T_Aggref, pg_sys::NodeTag::T_Const) => (args[0], args[1]),
            (pg_sys::NodeTag::T_Const, pg_sys::NodeTag::T_Aggref) => {
                cmp = cmp.commuted();
                (args[1], args[0])
            }
            _ => return None,
        };
        let (a, c) = (agg as *mut pg_sys::Aggref, cst as *mut pg_sys::Const);
        let kind = kind_of_type((*a).aggtype)?;
        if kind_of_type((*c).consttype)? != kind {
            return None;
        }
        let output = target_index(a, target)?;
        let info = aggregates::classify_aggref(target[output].cast()).ok()?;
        let arg = info.types.first().copied().unwrap_or(pg_sys::InvalidOid);
        if kind_of_aggregate(&info.name, info.enc, arg)? != kind {
            return None;
        }
        Some(GroupFilter { output: output as u32, cmp, value: const_value(c, kind)? })
    }
}

/// The group filter of HAVING clause `having` (PostgreSQL's implicit-AND
/// list) over the partial grouping target `target`: every term, or None
/// where any term is not one the filter evaluates.
///
/// # Safety
/// Planner state: valid expressions.
pub unsafe fn compile(having: *mut pg_sys::Node, target: &[*mut pg_sys::Node]) -> Option<Vec<GroupFilter>> {
    // SAFETY: caller's promise.
    unsafe {
        if having.is_null() {
            return None;
        }
        let quals = if (*having).type_ == pg_sys::NodeTag::T_List {
            crate::pg::list::from_list(having.cast())
        } else {
            vec![having]
        };
        if quals.is_empty() {
            return None;
        }
        quals.iter().map(|&q| term(q, target)).collect()
    }
}

/// The HAVING terms of `having` a filter would evaluate, as expressions
/// (for a path's private list); empty where the filter would not apply.
///
/// # Safety
/// As for [`compile`].
pub unsafe fn pushable(having: *mut pg_sys::Node, target: &[*mut pg_sys::Node]) -> Vec<*mut pg_sys::Node> {
    // SAFETY: caller's promise.
    unsafe {
        if compile(having, target).is_none() {
            return Vec::new();
        }
        if (*having).type_ == pg_sys::NodeTag::T_List {
            crate::pg::list::from_list(having.cast())
        } else {
            vec![having]
        }
    }
}

/// The final value of operation words `w` (kind `kind`, partial encoding
/// `enc`, argument type `arg`, SumNum / MinNum scale `scale`) for the
/// aggregate a [`GroupFilter`] compares.
pub fn final_value(enc: Encoding, kind: AggKind, arg: pg_sys::Oid, scale: i32, w: &[u64]) -> Final {
    let n = w[0];
    match enc {
        Encoding::Count => Final::Value(Value::Int(n as i128)),
        Encoding::SumInt8 | Encoding::PolyNum if n == 0 => Final::Null,
        Encoding::SumInt8 => match i64::try_from(agg::sum_int(w)) {
            Ok(v) => Final::Value(Value::Int(v as i128)),
            Err(_) => Final::Unknown,
        },
        Encoding::PolyNum => Final::Value(Value::Num(Num::Fin(agg::sum_int(w), 0))),
        Encoding::NumAvg => pgstrom_runtime::group_filter::numeric_sum(w, scale),
        Encoding::SumFloat4 | Encoding::SumFloat8 if n == 0 => Final::Null,
        Encoding::SumFloat8 => Final::Value(Value::Float(agg::word_f8(w[1]))),
        Encoding::SumFloat4 => {
            let s = agg::word_f8(w[1]);
            let f = s as f32;
            if f.is_infinite() && s.is_finite() {
                return Final::Unknown;
            }
            Final::Value(Value::Float(f as f64))
        }
        Encoding::MinMaxInt if n == 0 => Final::Null,
        Encoding::MinMaxInt => {
            let v = w[1] as i64;
            Final::Value(Value::Int(match arg {
                pg_sys::INT2OID => v as i16 as i128,
                pg_sys::INT4OID => v as i32 as i128,
                _ => v as i128,
            }))
        }
        Encoding::MinMaxFloat if n == 0 => Final::Null,
        Encoding::MinMaxFloat => {
            let v = agg::flt_from_order(w[1]);
            Final::Value(Value::Float(if arg == pg_sys::FLOAT4OID { v as f32 as f64 } else { v }))
        }
        Encoding::MinMaxNum if n == 0 => Final::Null,
        Encoding::MinMaxNum => {
            let nan = w[2];
            if (kind == AggKind::MaxNum && nan > 0) || nan == n {
                Final::Value(Value::Num(Num::NaN))
            } else {
                Final::Value(Value::Num(Num::Fin(w[1] as i64 as i128, scale)))
            }
        }
        _ => Final::Unknown,
    }
}

/// Whether forming the partial state of words `w` raises an error
/// (`codegen::aggregates::partial_datum`'s checks).
pub fn state_raises(enc: Encoding, kind: AggKind, w: &[u64]) -> bool {
    match enc {
        Encoding::SumInt8 => w[0] > 0 && i64::try_from(agg::sum_int(w)).is_err(),
        Encoding::SumFloat4 => {
            let s = agg::word_f8(w[1]);
            w[0] > 0 && (s as f32).is_infinite() && s.is_finite()
        }
        Encoding::Moments | Encoding::Regr => agg::moments_overflow(kind, w),
        Encoding::IntervalAvg => agg::interval_avg_state(w).is_none(),
        _ => false,
    }
}
