//! Which aggregates GpuPreAgg reduces, and their partial states.
//!
//! The device accumulates words per group (see pgstrom_runtime::agg); the
//! node returns, per group and chunk, the partial state PostgreSQL's own
//! transition function would have made from the same rows, in the partial
//! Aggref's type: the transition type, or for an `internal` state its
//! serial form.  PostgreSQL's Finalize Aggregate then combines and
//! finalizes them with the aggregate's own functions, so results (and
//! errors such as `bigint out of range`) are PostgreSQL's.
//!
//! | aggregate | device op | partial state |
//! |---|---|---|
//! | count(*), count(x), regr_count(y, x) | Count | int8 |
//! | sum(int2), sum(int4) | SumInt | int8 (NULL: no input) |
//! | sum(int8), avg(int8) | SumInt | int8_avg_serialize's bytea |
//! | avg(int2), avg(int4) | SumInt | int8[] {N, sum} |
//! | sum(float4), sum(float8) | SumFlt | float4 / float8 |
//! | avg, variance, stddev families (float4, float8) | Moments | float8[] {N, Sx, Sxx} |
//! | corr, covar_*, regr_* (float8, float8) | Moments2 | float8[] {N, Sx, Sxx, Sy, Syy, Sxy} |
//! | min, max (integers, date, time, timestamp(tz)) | MinInt/MaxInt | the type |
//! | min, max (float4, float8) | MinFlt/MaxFlt | the type |
//! | sum(numeric), avg(numeric) | SumNum | numeric_avg_serialize's bytea |
//! | sum(interval), avg(interval) | SumIntv | interval_avg_serialize's bytea |
//! | min, max (numeric(p,s) columns, p <= 18) | MinNum/MaxNum | numeric |
//! | min, max (other numerics of <= 38 digits, interval, timetz) | MinAny/MaxAny | the type |
//!
//! Also the compilation of aggregate arguments and grouping keys, which
//! must never need PostgreSQL (an aggregation has no per-row fallback):
//! numerics only where [`numeric_bound`] proves 38 digits or fewer.

use pgrx::IntoDatum;
use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::agg::{self, AggKind};

use pgstrom_runtime::catalog::func_info;
use pgstrom_runtime::program::Program;

use super::catalog::device_function_of;
use super::datum::numeric_of;
use super::expr::{Fallback, compile_inner};
use super::{Inputs, NotSupported, unsupported};
use crate::errors;
use crate::pg::list::from_list as list_nodes;

pub(crate) use super::datum::varlena_datum;
pub use super::datum::{device_datum, int_datum};

/// How a group's words become a partial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Encoding {
    /// int8 count.
    Count = 1,
    /// int8 sum, NULL when no row.
    SumInt8 = 2,
    /// int8_avg_serialize's bytea {N, sum as numeric}.
    PolyNum = 3,
    /// int8[] {N, sum}.
    IntAvg = 4,
    /// float4 sum, NULL when no row.
    SumFloat4 = 5,
    /// float8 sum, NULL when no row.
    SumFloat8 = 6,
    /// float8[] {N, Sx, Sxx}.
    Moments = 7,
    /// float8[] {N, Sx, Sxx, Sy, Syy, Sxy}.
    Regr = 8,
    /// The argument's integer-like type, NULL when no row.
    MinMaxInt = 9,
    /// The argument's float type, NULL when no row.
    MinMaxFloat = 10,
    /// numeric_avg_serialize's bytea {N, sum, maxScale, maxScaleCount,
    /// NaN, +Infinity and -Infinity counts}.
    NumAvg = 11,
    /// interval_avg_serialize's bytea {N, sum, +Infinity and -Infinity
    /// counts}.
    IntervalAvg = 12,
    /// numeric at the operation's scale, NULL when no row.
    MinMaxNum = 13,
    /// The argument's type (numeric, interval, timetz) from the device's
    /// value, NULL when no row.
    MinMaxAny = 14,
}

impl Encoding {
    /// From its number in a plan.
    pub fn from_u32(v: u32) -> Option<Encoding> {
        use Encoding::*;
        [
            Count,
            SumInt8,
            PolyNum,
            IntAvg,
            SumFloat4,
            SumFloat8,
            Moments,
            Regr,
            MinMaxInt,
            MinMaxFloat,
            NumAvg,
            IntervalAvg,
            MinMaxNum,
            MinMaxAny,
        ]
        .into_iter()
        .find(|e| *e as u32 == v)
    }
}

const INT2: u32 = pg_sys::INT2OID.to_u32();
const INT4: u32 = pg_sys::INT4OID.to_u32();
const INT8: u32 = pg_sys::INT8OID.to_u32();
const FLOAT4: u32 = pg_sys::FLOAT4OID.to_u32();
const FLOAT8: u32 = pg_sys::FLOAT8OID.to_u32();

/// The device operation and partial encoding of an aggregate, by its
/// pg_catalog name and argument types; None when GpuPreAgg cannot reduce
/// it (the aggregation stays on the CPU).
pub fn classify(name: &str, args: &[pg_sys::Oid], star: bool) -> Option<(AggKind, Encoding)> {
    let a: Vec<u32> = args.iter().map(|o| o.to_u32()).collect();
    let one = if a.len() == 1 { a[0] } else { 0 };
    let int_like = |t: u32| {
        [INT2, INT4, INT8, pg_sys::DATEOID.to_u32(), pg_sys::TIMEOID.to_u32(), pg_sys::TIMESTAMPOID.to_u32()]
            .contains(&t)
            || t == pg_sys::TIMESTAMPTZOID.to_u32()
    };
    let float = |t: u32| t == FLOAT4 || t == FLOAT8;
    Some(match name {
        "count" if star || a.len() == 1 => (AggKind::Count, Encoding::Count),
        "sum" if one == INT2 || one == INT4 => (AggKind::SumInt, Encoding::SumInt8),
        "sum" if one == INT8 => (AggKind::SumInt, Encoding::PolyNum),
        "sum" if one == FLOAT4 => (AggKind::SumFlt, Encoding::SumFloat4),
        "sum" if one == FLOAT8 => (AggKind::SumFlt, Encoding::SumFloat8),
        "avg" if one == INT2 || one == INT4 => (AggKind::SumInt, Encoding::IntAvg),
        "avg" if one == INT8 => (AggKind::SumInt, Encoding::PolyNum),
        "sum" | "avg" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::SumNum, Encoding::NumAvg),
        "sum" | "avg" if one == pg_sys::INTERVALOID.to_u32() => (AggKind::SumIntv, Encoding::IntervalAvg),
        "min" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::MinNum, Encoding::MinMaxNum),
        "max" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::MaxNum, Encoding::MinMaxNum),
        "min" if one == pg_sys::INTERVALOID.to_u32() || one == pg_sys::TIMETZOID.to_u32() => {
            (AggKind::MinAny, Encoding::MinMaxAny)
        }
        "max" if one == pg_sys::INTERVALOID.to_u32() || one == pg_sys::TIMETZOID.to_u32() => {
            (AggKind::MaxAny, Encoding::MinMaxAny)
        }
        "avg" | "variance" | "var_pop" | "var_samp" | "stddev" | "stddev_pop" | "stddev_samp" if float(one) => {
            (AggKind::Moments, Encoding::Moments)
        }
        "min" if int_like(one) => (AggKind::MinInt, Encoding::MinMaxInt),
        "max" if int_like(one) => (AggKind::MaxInt, Encoding::MinMaxInt),
        "min" if float(one) => (AggKind::MinFlt, Encoding::MinMaxFloat),
        "max" if float(one) => (AggKind::MaxFlt, Encoding::MinMaxFloat),
        "regr_count" if a == [FLOAT8, FLOAT8] => (AggKind::Count, Encoding::Count),
        "corr" | "covar_pop" | "covar_samp" | "regr_avgx" | "regr_avgy" | "regr_intercept" | "regr_r2"
        | "regr_slope" | "regr_sxx" | "regr_sxy" | "regr_syy"
            if a == [FLOAT8, FLOAT8] =>
        {
            (AggKind::Moments2, Encoding::Regr)
        }
        _ => return None,
    })
}

/// A partial Aggref GpuPreAgg reduces: its name, argument expressions and
/// types, device operation and partial encoding.
pub struct AggrefInfo {
    /// pg_catalog name.
    pub name: String,
    /// Argument expressions.
    pub args: Vec<*mut pg_sys::Node>,
    /// Their types.
    pub types: Vec<pg_sys::Oid>,
    /// The device operation.
    pub kind: AggKind,
    /// How its words become the partial state.
    pub enc: Encoding,
}

/// Classify a partial Aggref (mark_partial_aggref done); Err says why the
/// device cannot reduce it.
///
/// # Safety
/// `a` is a valid Aggref.
pub unsafe fn classify_aggref(a: *mut pg_sys::Aggref) -> Result<AggrefInfo, String> {
    // SAFETY: a valid Aggref; catalog lookups.
    unsafe {
        if !(*a).aggdistinct.is_null()
            || !(*a).aggorder.is_null()
            || !(*a).aggdirectargs.is_null()
            || (*a).aggkind != b'n' as std::ffi::c_char
            || (*a).agglevelsup != 0
            || (*a).aggvariadic
            || pg_sys::get_func_namespace((*a).aggfnoid) != pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE)
        {
            return Err("an aggregate is not a plain built-in one".into());
        }
        let name_p = pg_sys::get_func_name((*a).aggfnoid);
        if name_p.is_null() {
            return Err("an aggregate has no name".into());
        }
        let name = std::ffi::CStr::from_ptr(name_p).to_string_lossy().into_owned();
        let args: Vec<*mut pg_sys::Node> = crate::pg::list::from_list((*a).args)
            .into_iter()
            .map(|t| (*(t as *mut pg_sys::TargetEntry)).expr.cast())
            .collect();
        let types: Vec<pg_sys::Oid> = args.iter().map(|&x| pg_sys::exprType(x)).collect();
        let Some((mut kind, mut enc)) = classify(&name, &types, (*a).aggstar) else {
            return Err(format!("aggregate {name} is not reduced on the device"));
        };
        // min / max of a numeric other than a numeric(p,s) column with p <=
        // 18 (compared as integers): by comparing device numerics
        if matches!(kind, AggKind::MinNum | AggKind::MaxNum) && crate::codegen::numeric_column_scale(args[0]).is_none()
        {
            kind = if kind == AggKind::MinNum { AggKind::MinAny } else { AggKind::MaxAny };
            enc = Encoding::MinMaxAny;
        }
        let arg0 = types.first().copied().unwrap_or(pg_sys::InvalidOid);
        if (*a).aggtype != partial_type(enc, arg0) {
            return Err(format!("the partial state of {name} is not the expected type"));
        }
        Ok(AggrefInfo { name, args, types, kind, enc })
    }
}

/// Where a grouping key's value comes from.
pub enum KeySource {
    /// A fixed-width key: the value the device computed.
    Device,
    /// A variable-length key (text, bpchar, bytea) that is a column (the
    /// Var under any RelabelType): read on the host at a representative
    /// row.
    Column(*mut pg_sys::Var),
    /// A variable-length key that is an expression: grouped on the device,
    /// its value evaluated by PostgreSQL at the group's representative
    /// combination.
    Expr,
}

/// Where grouping key `e` is read.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn key_source(e: *mut pg_sys::Node) -> KeySource {
    // SAFETY: a valid expression.
    unsafe {
        let by_row = crate::codegen::device_type_of(pg_sys::exprType(e))
            .and_then(pgstrom_runtime::catalog::type_info)
            .is_some_and(|ti| ti.width == 0);
        if !by_row {
            return KeySource::Device;
        }
        let v = crate::codegen::strip_relabel(e);
        if (*v).type_ == pg_sys::NodeTag::T_Var { KeySource::Column(v.cast()) } else { KeySource::Expr }
    }
}

/// Whether target entry `e`, outside the GROUP BY (sortgroupref 0), is
/// a column of an inner relation (not of scanned relation
/// `outer_relid`): one value per group, as PostgreSQL proved, so it is no
/// grouping key on the device and its value is read from the group's
/// representative inner row (which lives as long as the query).  TPC-H
/// Q10 groups by `c_custkey` and five more columns of `customer`, which
/// PostgreSQL drops from the GROUP BY as functionally dependent on the
/// primary key: grouped by on the device, their 140 bytes a row were made
/// into columns, sent and hashed with the 573,000 inner rows.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn dependent_column(e: *mut pg_sys::Node, outer_relid: u32) -> bool {
    // SAFETY: a valid expression.
    unsafe {
        (*e).type_ == pg_sys::NodeTag::T_Var
            && (*e.cast::<pg_sys::Var>()).varlevelsup == 0
            && (*e.cast::<pg_sys::Var>()).varno != outer_relid as i32
    }
}

/// The type the partial state has (what mark_partial_aggref made the
/// Aggref's type); `arg` is the first argument's type.
pub fn partial_type(enc: Encoding, arg: pg_sys::Oid) -> pg_sys::Oid {
    match enc {
        Encoding::Count | Encoding::SumInt8 => pg_sys::INT8OID,
        Encoding::PolyNum | Encoding::NumAvg | Encoding::IntervalAvg => pg_sys::BYTEAOID,
        Encoding::IntAvg => pg_sys::INT8ARRAYOID,
        Encoding::SumFloat4 => pg_sys::FLOAT4OID,
        Encoding::SumFloat8 => pg_sys::FLOAT8OID,
        Encoding::Moments | Encoding::Regr => pg_sys::FLOAT8ARRAYOID,
        Encoding::MinMaxInt | Encoding::MinMaxFloat | Encoding::MinMaxNum | Encoding::MinMaxAny => arg,
    }
}

fn overflow(msg: &str) -> ! {
    errors::raise_plain(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, msg.into(), None, None)
}

/// An array of 8-byte by-value elements (int8, float8) of `elmtype`.
/// (Not construct_array_builtin: PostgreSQL 15's knows no float8.)
fn array(values: &[Datum8], elmtype: pg_sys::Oid) -> pg_sys::Datum {
    let mut d: Vec<pg_sys::Datum> = values.iter().map(|v| v.0).collect();
    // SAFETY: 8-byte by-value elements, double-aligned, of a built-in type.
    unsafe {
        pg_sys::Datum::from(pg_sys::construct_array(
            d.as_mut_ptr(),
            d.len() as i32,
            elmtype,
            8,
            true,
            pg_sys::TYPALIGN_DOUBLE as std::ffi::c_char,
        ))
    }
}

struct Datum8(pg_sys::Datum);

fn i8d(v: i64) -> Datum8 {
    Datum8(v.into_datum().expect("int8 datum"))
}

fn f8d(v: f64) -> Datum8 {
    Datum8(v.into_datum().expect("float8 datum"))
}

/// Compile aggregate argument `x` for operation `kind`: the program, the
/// operation's scale (`AggOp::scale`) and the operation the device runs
/// (`kind`, or SumNumWide for a numeric sum whose digits the planner
/// could not bound to 38).
///
/// # Safety
/// `x` is a valid expression.
pub unsafe fn compile_agg_arg(
    kind: AggKind,
    x: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut crate::codegen::Inputs,
) -> Result<(pgstrom_runtime::program::Program, i32, AggKind), crate::codegen::NotSupported> {
    use crate::codegen;
    // SAFETY: a valid expression (caller).
    unsafe {
        let (program, scale) = match kind {
            AggKind::SumNum => {
                let (p, s, wide) = codegen::compile_numeric_sum(x, resolve, inputs)?;
                return Ok((p, s, if wide { AggKind::SumNumWide } else { kind }));
            }
            AggKind::MinNum | AggKind::MaxNum => codegen::compile_numeric_column(x, resolve, inputs)?,
            AggKind::MinAny | AggKind::MaxAny => (codegen::compile_minmax_any(x, resolve, inputs)?, 0),
            AggKind::Count => (codegen::compile_count_arg(x, resolve, inputs)?.0, 0),
            // an interval sum's argument stays on the device
            AggKind::SumIntv => (codegen::compile_shared(x, resolve, inputs, true)?.0, 0),
            _ => (codegen::compile_shared(x, resolve, inputs, false)?.0, 0),
        };
        Ok((program, scale, kind))
    }
}

/// The partial state of one operation's words: (datum, is NULL).  `scale`
/// is the scale a SumNum kept its sum at.  Memory comes from the current
/// context.
pub fn partial_datum(enc: Encoding, kind: AggKind, arg: pg_sys::Oid, scale: i32, w: &[u64]) -> (pg_sys::Datum, bool) {
    let null = (pg_sys::Datum::from(0), true);
    let n = w[0];
    match enc {
        Encoding::NumAvg => (varlena_datum(&agg::num_avg_state(w, scale)), false),
        Encoding::IntervalAvg => match agg::interval_avg_state(w) {
            Some(b) => (varlena_datum(&b), false),
            None => errors::raise_plain(
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, // 22008
                "interval out of range".into(),
                None,
                None,
            ),
        },
        Encoding::Count => (i8d(n as i64).0, false),
        Encoding::SumInt8 => {
            if n == 0 {
                return null;
            }
            match i64::try_from(agg::sum_int(w)) {
                Ok(v) => (i8d(v).0, false),
                Err(_) => overflow("bigint out of range"),
            }
        }
        Encoding::PolyNum => {
            (varlena_datum(&pgstrom_runtime::numeric::poly_num_bytes(n as i64, agg::sum_int(w))), false)
        }
        Encoding::IntAvg => {
            let s = agg::sum_int(w);
            // int4_avg_accum adds in int64 without a check; the device sum
            // is exact, so wrap as PostgreSQL would
            (array(&[i8d(n as i64), i8d(s as i64)], pg_sys::INT8OID), false)
        }
        Encoding::SumFloat4 | Encoding::SumFloat8 => {
            if n == 0 {
                return null;
            }
            let s = agg::word_f8(w[1]);
            if enc == Encoding::SumFloat8 {
                return (s.into_datum().expect("float8"), false);
            }
            let f = s as f32;
            if f.is_infinite() && s.is_finite() {
                overflow("value out of range: overflow");
            }
            (f.into_datum().expect("float4"), false)
        }
        Encoding::Moments => {
            if agg::moments_overflow(AggKind::Moments, w) {
                overflow("value out of range: overflow");
            }
            let m = agg::moments(w);
            (array(&[f8d(m[0]), f8d(m[1]), f8d(m[2])], pg_sys::FLOAT8OID), false)
        }
        Encoding::Regr => {
            if agg::moments_overflow(AggKind::Moments2, w) {
                overflow("value out of range: overflow");
            }
            let m = agg::moments2(w);
            (array(&m.iter().map(|v| f8d(*v)).collect::<Vec<_>>(), pg_sys::FLOAT8OID), false)
        }
        Encoding::MinMaxNum => {
            // NaN is above every number: the max once any, the min when all
            let nan = w[2];
            if n == 0 {
                return null;
            }
            let text = if (kind == AggKind::MaxNum && nan > 0) || nan == n {
                "NaN".to_string()
            } else {
                agg::scaled_decimal(w[1] as i64, scale)
            };
            let numeric = pgrx::AnyNumeric::try_from(text.as_str()).unwrap_or_else(|e| {
                errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("numeric min/max: {e}"), None, None)
            });
            (numeric.into_datum().expect("numeric datum"), false)
        }
        Encoding::MinMaxInt => {
            if n == 0 {
                return null;
            }
            (int_datum(arg, w[1] as i64), false)
        }
        Encoding::MinMaxAny => match agg::any_value(w) {
            Some(v) => (device_datum(arg, &v), false),
            None => null,
        },
        Encoding::MinMaxFloat => {
            if n == 0 {
                return null;
            }
            let _ = kind;
            let v = agg::flt_from_order(w[1]);
            if arg == pg_sys::FLOAT4OID {
                ((v as f32).into_datum().expect("float4"), false)
            } else {
                (v.into_datum().expect("float8"), false)
            }
        }
    }
}

/// A bound on the values of numeric expression `e`: (precision, scale):
/// every value has at most `scale` decimals and, at that scale, at most
/// `precision` digits.  Known for typmod'd columns, constants, integers
/// cast to numeric, + - * and the unary functions, round/trunc to a
/// constant scale, ceil/floor/sign, extract(... from date), and CASE and
/// COALESCE over bounded values; None otherwise (division, ...).
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn numeric_bound(e: *mut pg_sys::Node) -> Option<(i32, i32)> {
    let int_digits = |t: pg_sys::Oid| match t {
        pg_sys::INT2OID => Some(5),
        pg_sys::INT4OID => Some(10),
        pg_sys::INT8OID => Some(19),
        _ => None,
    };
    // SAFETY: a valid expression (caller); each arm reads the node as the
    // struct its tag names.
    unsafe {
        match (*e).type_ {
            pg_sys::NodeTag::T_RelabelType => numeric_bound((*(e as *mut pg_sys::RelabelType)).arg.cast()),
            pg_sys::NodeTag::T_Var => var_bound(&*e.cast()),
            pg_sys::NodeTag::T_Const => const_bound(&*e.cast(), int_digits),
            pg_sys::NodeTag::T_OpExpr => {
                let o: &pg_sys::OpExpr = &*e.cast();
                call_bound(o.opfuncid, o.args, int_digits)
            }
            pg_sys::NodeTag::T_FuncExpr => {
                let f: &pg_sys::FuncExpr = &*e.cast();
                call_bound(f.funcid, f.args, int_digits)
            }
            // every value is one of the branches' (or NULL, when there is
            // no ELSE): the widest integer part at the largest scale
            pg_sys::NodeTag::T_CaseExpr => {
                let c: &pg_sys::CaseExpr = &*e.cast();
                let mut parts = list_nodes(c.args)
                    .into_iter()
                    .map(|w| (*(w as *mut pg_sys::CaseWhen)).result.cast::<pg_sys::Node>())
                    .collect::<Vec<_>>();
                if !c.defresult.is_null() {
                    parts.push(c.defresult.cast());
                }
                union_bound(&parts)
            }
            pg_sys::NodeTag::T_CoalesceExpr => {
                let c: &pg_sys::CoalesceExpr = &*e.cast();
                union_bound(&list_nodes(c.args))
            }
            _ => None,
        }
    }
}

/// A bound that holds for the values of every expression of `parts`.
///
/// # Safety
/// `parts` are valid expressions.
unsafe fn union_bound(parts: &[*mut pg_sys::Node]) -> Option<(i32, i32)> {
    let mut int = 1;
    let mut scale = 0;
    for &p in parts {
        // SAFETY: valid expressions (caller).
        let (pp, ps) = unsafe { numeric_bound(p) }?;
        int = int.max(pp - ps);
        scale = scale.max(ps);
    }
    Some((int + scale, scale))
}

/// Digits of `m` (1 for 0).
fn digits(m: u128) -> i32 {
    m.checked_ilog10().map_or(1, |d| d as i32 + 1)
}

/// A numeric(p,s) column's (p, s); None for an unconstrained numeric or
/// another type.
fn var_bound(v: &pg_sys::Var) -> Option<(i32, i32)> {
    if v.vartype != pg_sys::NUMERICOID {
        return None;
    }
    let (p, s) = pgstrom_arrow::pgtype::numeric_typmod(v.vartypmod)?;
    (s >= 0 && p >= s).then_some((p, s))
}

/// A constant's bound: its own digits (a numeric), an integer type's.
fn const_bound(c: &pg_sys::Const, int_digits: impl Fn(pg_sys::Oid) -> Option<i32>) -> Option<(i32, i32)> {
    if c.constisnull {
        return Some((1, 0));
    }
    match c.consttype {
        pg_sys::NUMERICOID => {
            // SAFETY: a non-NULL numeric constant.
            let n = unsafe { numeric_of(c.constvalue) };
            match n.scale {
                pgstrom_runtime::numeric::NUM_BIG => None,
                s if s < 0 => Some((1, 0)),
                s => Some((digits(n.mant.unsigned_abs()).max(s), s)),
            }
        }
        t => int_digits(t).map(|p| (p, 0)),
    }
}

/// The bound of a call of function `funcid` on `args`, from its
/// arguments' bounds, where the device catalog has the function.
fn call_bound(
    funcid: pg_sys::Oid,
    args: *mut pg_sys::List,
    int_digits: impl Fn(pg_sys::Oid) -> Option<i32>,
) -> Option<(i32, i32)> {
    let f = func_info(device_function_of(funcid)?)?;
    // SAFETY: the call's argument list.
    let args = unsafe { list_nodes(args) };
    // SAFETY: arguments of a valid expression.
    let arg = |i: usize| args.get(i).and_then(|&a| unsafe { numeric_bound(a) });
    Some(match f.name {
        "NUMERIC_ADD" | "NUMERIC_SUB" => {
            let ((p1, s1), (p2, s2)) = (arg(0)?, arg(1)?);
            let s = s1.max(s2);
            ((p1 - s1).max(p2 - s2) + 1 + s, s)
        }
        "NUMERIC_MUL" => {
            let ((p1, s1), (p2, s2)) = (arg(0)?, arg(1)?);
            (p1 + p2, s1 + s2)
        }
        "NUMERIC_UMINUS" | "NUMERIC_UPLUS" | "NUMERIC_ABS" | "ABS_NUMERIC" => arg(0)?,
        // SAFETY: an argument of a valid expression.
        "NUMERIC_INT2" | "NUMERIC_INT4" | "NUMERIC_INT8" => (int_digits(unsafe { pg_sys::exprType(args[0]) })?, 0),
        "ROUND_NUMERIC" | "TRUNC_NUMERIC" => {
            let (p, s) = arg(0)?;
            let c = args.get(1).copied()?;
            // SAFETY: an argument of a valid expression, read as a Const
            // when its tag says so.
            let to = unsafe {
                if (*c).type_ != pg_sys::NodeTag::T_Const || (*(c as *mut pg_sys::Const)).constisnull {
                    return None;
                }
                (*(c as *mut pg_sys::Const)).constvalue.value() as i32
            };
            if !(0..=38).contains(&to) {
                return None;
            }
            (p - s + 1 + to, to)
        }
        "CEIL_NUMERIC" | "CEILING_NUMERIC" | "FLOOR_NUMERIC" => {
            let (p, s) = arg(0)?;
            (p - s + 1, 0)
        }
        "SIGN_NUMERIC" => (1, 0),
        // every field of a date is a whole number, the largest the epoch
        // of 5874897-12-31 (about 1.9e14 seconds): 15 digits; infinite
        // dates give infinities, which the device's numeric sums and
        // keys carry as PostgreSQL does
        "EXTRACT_DATE" => (15, 0),
        _ => return None,
    })
}

/// Compile sum()'s or avg()'s numeric argument, when [`numeric_bound`]
/// bounds its scale: where it also proves its values fit the device (38
/// digits) the device never needs PostgreSQL for it; else (`wide`) a row
/// whose value the device cannot hold is an exception, whose value
/// PostgreSQL computes (SumNumWide: TPC-H Q1's `sum(l_extendedprice * (1
/// - l_discount) * (1 + l_tax))`, 47 digits by the bound, a dozen in
/// fact).  Returns the program, the scale to sum at, and `wide`.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_numeric_sum(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, i32, bool), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        match numeric_bound(expr) {
            Some((p, s)) if (0..=38).contains(&s) => {
                // proven to fit (every numeric node of it too): never
                // PostgreSQL's
                if p <= 38
                    && let Ok((program, _)) = compile_inner(expr, resolve, inputs, false, true, Fallback::None)
                {
                    return Ok((program, s, false));
                }
                // else wide: a row the device cannot compute, for any
                // reason, is an exception PostgreSQL computes
                let (program, _) = compile_inner(expr, resolve, inputs, false, true, Fallback::Pg)?;
                Ok((program, s, true))
            }
            Some((_, s)) => unsupported(format!("a numeric sum at scale {s} (the device sums at up to 38)")),
            None => unsupported("a numeric sum whose scale the planner cannot bound (declare numeric(p,s))".into()),
        }
    }
}

/// A grouping key, hashed and compared on the device, which returns its
/// value (text, bpchar and bytea keys are read at the group's
/// representative row instead).  A numeric key needs [`numeric_bound`] to
/// prove at most 38 digits: with no PostgreSQL fallback in an aggregation,
/// the device must hold every value.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_group_key(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if pg_sys::exprType(expr) != pg_sys::NUMERICOID {
            return compile_inner(expr, resolve, inputs, true, false, Fallback::None);
        }
        match numeric_bound(expr) {
            Some((p, _)) if p <= 38 => compile_inner(expr, resolve, inputs, true, true, Fallback::None),
            Some((p, _)) => unsupported(format!("a numeric grouping key of up to {p} digits (the device holds 38)")),
            None => unsupported(
                "a numeric grouping key whose digits the planner cannot bound (declare numeric(p,s))".into(),
            ),
        }
    }
}

/// The argument of min() / max() over numeric (of at most 38 digits, by
/// [`numeric_bound`]), interval or timetz, compared on the device, which
/// returns the winning value.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_minmax_any(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<Program, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if pg_sys::exprType(expr) != pg_sys::NUMERICOID {
            return compile_inner(expr, resolve, inputs, false, true, Fallback::None).map(|(p, _)| p);
        }
        match numeric_bound(expr) {
            Some((p, _)) if p <= 38 => {
                compile_inner(expr, resolve, inputs, false, true, Fallback::None).map(|(p, _)| p)
            }
            Some((p, _)) => unsupported(format!("min / max of a numeric of up to {p} digits (the device holds 38)")),
            None => unsupported(
                "min / max of a numeric whose digits the planner cannot bound (declare numeric(p,s))".into(),
            ),
        }
    }
}

/// The scale s of `e` when it is a column of type numeric(p,s) with p <=
/// 18 (under any RelabelType): its values, NaN aside, are integers below
/// 10^18 at scale s, which min() and max() compare on the device.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn numeric_column_scale(e: *mut pg_sys::Node) -> Option<i32> {
    // SAFETY: a valid expression (caller).
    unsafe {
        let v = strip_relabel(e);
        if (*v).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        // a numeric Var's bound is its typmod's (precision, scale)
        numeric_bound(v).filter(|&(p, _)| p <= 18).map(|(_, s)| s)
    }
}

pub use crate::pg::strip_relabel;

/// The argument of min() / max() over a numeric(p,s) column
/// ([`numeric_column_scale`]): the column, its value kept on the device.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_numeric_column(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, i32), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        let Some(scale) = numeric_column_scale(expr) else {
            return unsupported("min / max of numeric other than a numeric(p,s) column with p <= 18".into());
        };
        // a column of the type holds no value the device cannot
        let (p, _) = compile_inner(expr, resolve, inputs, true, true, Fallback::None)?;
        Ok((p, scale))
    }
}

/// A count() argument, of which only NULLs matter: a bare column of any
/// device type compiles as `CASE WHEN col IS NOT NULL THEN true END`
/// (numeric included: testing a value never needs PostgreSQL, and the
/// program returns no numeric), anything else as [`compile_shared`] with
/// its value kept on the device.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_count_arg(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if (*strip_relabel(expr)).type_ != pg_sys::NodeTag::T_Var {
            return compile_inner(expr, resolve, inputs, true, false, Fallback::None);
        }
        let nt = pg_sys::palloc0(std::mem::size_of::<pg_sys::NullTest>()) as *mut pg_sys::NullTest;
        (*nt).xpr.type_ = pg_sys::NodeTag::T_NullTest;
        (*nt).arg = expr.cast();
        (*nt).nulltesttype = pg_sys::NullTestType::IS_NOT_NULL;
        (*nt).location = -1;
        let cw = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseWhen>()) as *mut pg_sys::CaseWhen;
        (*cw).xpr.type_ = pg_sys::NodeTag::T_CaseWhen;
        (*cw).expr = nt.cast();
        (*cw).result = pg_sys::makeBoolConst(true, false).cast();
        (*cw).location = -1;
        let ce = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseExpr>()) as *mut pg_sys::CaseExpr;
        (*ce).xpr.type_ = pg_sys::NodeTag::T_CaseExpr;
        (*ce).casetype = pg_sys::BOOLOID;
        (*ce).args = pg_sys::lappend(std::ptr::null_mut(), cw.cast());
        (*ce).defresult = pg_sys::makeBoolConst(false, true).cast();
        (*ce).location = -1;
        compile_inner(ce.cast(), resolve, inputs, false, false, Fallback::NullTestedNumeric)
    }
}
