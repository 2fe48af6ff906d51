//! The group filter's values: a HAVING term (`sum(x) > 300`) decided
//! over a group's final aggregate value, with PostgreSQL's ordering of
//! integers, numerics (NaN and the infinities) and floats.  What reads
//! the values from a plan and from a group's words is the extension's
//! (`gpupreagg::having`); this is its logic, without PostgreSQL.

use std::cmp::Ordering;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt = 1,
    /// `<=`
    Le = 2,
    /// `=`
    Eq = 3,
    /// `>=`
    Ge = 4,
    /// `>`
    Gt = 5,
    /// `<>`
    Ne = 6,
}

impl Cmp {
    /// The operator named `name`.
    pub fn from_name(name: &str) -> Option<Cmp> {
        Some(match name {
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            "=" => Cmp::Eq,
            ">=" => Cmp::Ge,
            ">" => Cmp::Gt,
            "<>" => Cmp::Ne,
            _ => return None,
        })
    }

    /// The operator with its operands swapped (`300 < x` is `x > 300`).
    pub fn commuted(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            c => c,
        }
    }

    /// The operator's name.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Eq => "=",
            Cmp::Ge => ">=",
            Cmp::Gt => ">",
            Cmp::Ne => "<>",
        }
    }

    /// From its number in a plan.
    pub fn from_u32(v: u32) -> Option<Cmp> {
        [Cmp::Lt, Cmp::Le, Cmp::Eq, Cmp::Ge, Cmp::Gt, Cmp::Ne].into_iter().find(|c| *c as u32 == v)
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            Cmp::Lt => o == Ordering::Less,
            Cmp::Le => o != Ordering::Greater,
            Cmp::Eq => o == Ordering::Equal,
            Cmp::Ge => o != Ordering::Less,
            Cmp::Gt => o == Ordering::Greater,
            Cmp::Ne => o != Ordering::Equal,
        }
    }
}

/// A numeric value as PostgreSQL orders it: NaN above +Infinity above
/// every finite value above -Infinity; a finite one is `mantissa` *
/// 10^-`scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// NaN.
    NaN,
    /// +Infinity.
    PInf,
    /// -Infinity.
    NInf,
    /// (mantissa, scale).
    Fin(i128, i32),
}

/// A value of one of the three kinds the filter compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer (int2, int4, int8).
    Int(i128),
    /// A numeric.
    Num(Num),
    /// A float4 or float8 (float4 values widened exactly).
    Float(f64),
}

impl Value {
    /// The constant as EXPLAIN shows it.
    pub fn text(&self) -> String {
        match *self {
            Value::Int(v) => v.to_string(),
            Value::Float(v) if v.is_nan() => "'NaN'".into(),
            Value::Float(v) if v.is_infinite() => if v > 0.0 { "'Infinity'" } else { "'-Infinity'" }.into(),
            Value::Float(v) => v.to_string(),
            Value::Num(Num::NaN) => "'NaN'".into(),
            Value::Num(Num::PInf) => "'Infinity'".into(),
            Value::Num(Num::NInf) => "'-Infinity'".into(),
            Value::Num(Num::Fin(m, s)) => crate::agg::scaled_decimal_wide(m, s),
        }
    }
}

/// One term: the aggregate of output column `output` compared with
/// `value` by `cmp` (aggregate on the left).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupFilter {
    /// The output column (of the node's partial target) of the aggregate.
    pub output: u32,
    /// The comparison.
    pub cmp: Cmp,
    /// The constant.
    pub value: Value,
}

/// Parse numeric_out's text into a [`Num`] (None beyond 38 digits).
pub fn parse_numeric(text: &str) -> Option<Num> {
    match text {
        "NaN" => return Some(Num::NaN),
        "Infinity" => return Some(Num::PInf),
        "-Infinity" => return Some(Num::NInf),
        _ => {}
    }
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int}{frac}");
    let all = all.trim_start_matches('0');
    if all.len() > 38 {
        return None;
    }
    let m: i128 = if all.is_empty() { 0 } else { all.parse().ok()? };
    Some(Num::Fin(if neg { -m } else { m }, frac.len() as i32))
}

/// A group's final aggregate value as the filter sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Final {
    /// The aggregate is NULL (no row): the comparison is NULL.
    Null,
    /// A value the filter cannot hold exactly: the group is kept.
    Unknown,
    /// The value.
    Value(Value),
}

/// The numeric sum of SumNum words `w` at `scale` (numeric_sum's result;
/// the layout of `crate::agg`'s SumNum: [n, max scale, NaN, +Inf, -Inf,
/// limbs 0..3]).
pub fn numeric_sum(w: &[u64], scale: i32) -> Final {
    if w[0] == 0 {
        return Final::Null;
    }
    let (nan, pinf, ninf) = (w[2], w[3], w[4]);
    if nan > 0 || (pinf > 0 && ninf > 0) {
        return Final::Value(Value::Num(Num::NaN));
    }
    if pinf > 0 {
        return Final::Value(Value::Num(Num::PInf));
    }
    if ninf > 0 {
        return Final::Value(Value::Num(Num::NInf));
    }
    // limbs of 32-bit weight 2^(32 k), 0..2 unsigned and 3 signed
    let limbs = [w[5] as i128, w[6] as i128, w[7] as i128, w[8] as i64 as i128];
    let mut v: i128 = 0;
    for (k, l) in limbs.into_iter().enumerate() {
        let Some(part) = l.checked_mul(1i128 << (32 * k)) else { return Final::Unknown };
        let Some(s) = v.checked_add(part) else { return Final::Unknown };
        v = s;
    }
    Final::Value(Value::Num(Num::Fin(v, scale)))
}

fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    let rank = |n: Num| match n {
        Num::NInf => 0,
        Num::Fin(..) => 1,
        Num::PInf => 2,
        Num::NaN => 3,
    };
    match (a, b) {
        (Num::Fin(ma, sa), Num::Fin(mb, sb)) => {
            let up = |m: i128, by: i32| 10i128.checked_pow(by as u32).and_then(|p| m.checked_mul(p));
            let (ma, mb) = if sa < sb { (up(ma, sb - sa)?, mb) } else { (ma, up(mb, sa - sb)?) };
            Some(ma.cmp(&mb))
        }
        _ => Some(rank(a).cmp(&rank(b))),
    }
}

/// float8's order: NaN equal to NaN and above everything, -0 equal to 0.
fn cmp_float(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).expect("no NaN"),
    }
}

/// Whether the term decides the group: Some(true) passes, Some(false)
/// fails (false or NULL), None undecided (the group is kept).
pub fn decide(f: &GroupFilter, v: Final) -> Option<bool> {
    let o = match (v, f.value) {
        (Final::Null, _) => return Some(false),
        (Final::Unknown, _) => return None,
        (Final::Value(Value::Int(a)), Value::Int(b)) => a.cmp(&b),
        (Final::Value(Value::Float(a)), Value::Float(b)) => cmp_float(a, b),
        (Final::Value(Value::Num(a)), Value::Num(b)) => cmp_num(a, b)?,
        _ => return None,
    };
    Some(f.cmp.holds(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Num {
        parse_numeric(s).expect("a numeric")
    }

    #[test]
    fn numerics_parse_exactly() {
        assert_eq!(num("300"), Num::Fin(300, 0));
        assert_eq!(num("-0.050"), Num::Fin(-50, 3));
        assert_eq!(num("NaN"), Num::NaN);
        assert_eq!(num("-Infinity"), Num::NInf);
        assert_eq!(parse_numeric("1234567890123456789012345678901234567890"), None);
        assert_eq!(parse_numeric("1e5"), None);
    }

    #[test]
    fn numerics_order_as_postgresql() {
        let f = |c, v: &str| GroupFilter { output: 0, cmp: c, value: Value::Num(num(v)) };
        let v = |s: &str| Final::Value(Value::Num(num(s)));
        assert_eq!(decide(&f(Cmp::Gt, "300"), v("300.01")), Some(true));
        assert_eq!(decide(&f(Cmp::Gt, "300"), v("300.00")), Some(false));
        assert_eq!(decide(&f(Cmp::Eq, "300"), v("300.00")), Some(true));
        assert_eq!(decide(&f(Cmp::Gt, "300"), v("NaN")), Some(true));
        assert_eq!(decide(&f(Cmp::Lt, "Infinity"), v("NaN")), Some(false));
        assert_eq!(decide(&f(Cmp::Eq, "NaN"), v("NaN")), Some(true));
        assert_eq!(decide(&f(Cmp::Gt, "-Infinity"), v("-99999")), Some(true));
        assert_eq!(decide(&f(Cmp::Ne, "1"), Final::Null), Some(false));
        assert_eq!(decide(&f(Cmp::Ne, "1"), Final::Unknown), None);
        // aligning scales past i128: undecided, not wrong
        let big = Final::Value(Value::Num(Num::Fin(i128::MAX / 2, 0)));
        assert_eq!(decide(&f(Cmp::Gt, "0.000000000000000000001"), big), None);
    }

    #[test]
    fn floats_order_as_postgresql() {
        let f = |c, v| GroupFilter { output: 0, cmp: c, value: Value::Float(v) };
        let v = |x| Final::Value(Value::Float(x));
        assert_eq!(decide(&f(Cmp::Gt, 1e300), v(f64::NAN)), Some(true));
        assert_eq!(decide(&f(Cmp::Eq, f64::NAN), v(f64::NAN)), Some(true));
        assert_eq!(decide(&f(Cmp::Eq, 0.0), v(-0.0)), Some(true));
        assert_eq!(decide(&f(Cmp::Le, 1.5), v(1.5)), Some(true));
    }

    #[test]
    fn numeric_sums_read_their_limbs() {
        // 2^40 + 5 at scale 2, spread over limbs 0 and 1
        let w = [3u64, 0, 0, 0, 0, 5, 1 << 8, 0, 0];
        assert_eq!(numeric_sum(&w, 2), Final::Value(Value::Num(Num::Fin((1i128 << 40) + 5, 2))));
        // a negative sum: limb 3 is signed
        let w = [1u64, 0, 0, 0, 0, 0, 0, 0, u64::MAX];
        assert_eq!(numeric_sum(&w, 0), Final::Value(Value::Num(Num::Fin(-(1i128 << 96), 0))));
        let w = [1u64, 0, 0, 1, 1, 0, 0, 0, 0];
        assert_eq!(numeric_sum(&w, 0), Final::Value(Value::Num(Num::NaN)));
        assert_eq!(numeric_sum(&[0u64; 9], 0), Final::Null);
    }

    #[test]
    fn constants_show_as_written() {
        assert_eq!(Value::Num(num("-0.050")).text(), "-0.050");
        assert_eq!(Value::Num(num("300")).text(), "300");
        assert_eq!(Value::Int(-7).text(), "-7");
        assert_eq!(Value::Float(f64::NEG_INFINITY).text(), "'-Infinity'");
    }
}
