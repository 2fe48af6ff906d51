//! PostgreSQL's `float2` (IEEE 754 half precision, the type pg_strom adds
//! for Arrow's Float16) as text and in order: its input syntax, its
//! shortest output, PostgreSQL's float order and a hash, shared by the
//! extension's type functions and their tests.  No PostgreSQL here.

pub use half::f16;

/// Why text is not a float2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Not a number (SQLSTATE 22P02).
    Syntax(String),
    /// A finite number that overflows, or a non-zero one that underflows
    /// to zero (SQLSTATE 22003).
    OutOfRange(String),
}

/// The most significant digits a float2 needs to read back the same.
const MAX_DIGITS: usize = 5;

/// Parse float2 text as float4in parses real: whitespace around, NaN,
/// [+-]Infinity / inf, decimal and exponent notation.
pub fn parse(text: &str) -> Result<f16, ParseError> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let syntax = || ParseError::Syntax(format!("invalid input syntax for type float2: \"{text}\""));
    if t.is_empty() || t.contains(|c: char| c == '_' || c.is_ascii_whitespace()) {
        return Err(syntax());
    }
    let v: f64 = t.parse().map_err(|_| syntax())?;
    narrow(v).map_err(|_| ParseError::OutOfRange(format!("\"{text}\" is out of range for type float2")))
}

/// `v` rounded to the nearest float2 (ties to even), or `"overflow"` /
/// `"underflow"` when a finite value overflows or a non-zero one rounds
/// to zero (what double precision to real refuses).
pub fn narrow(v: f64) -> Result<f16, &'static str> {
    let h = f16::from_f64(v);
    if h.is_infinite() && v.is_finite() {
        Err("overflow")
    } else if h.to_f64() == 0.0 && v != 0.0 {
        Err("underflow")
    } else {
        Ok(h)
    }
}

/// The shortest text that reads back as `v`, in float4out's style:
/// `NaN`, `Infinity`, `-0`, `0.1`, `65504`, `6e-08`, `1.5e-05`.
pub fn format(v: f16) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v.is_sign_negative() { "-Infinity".into() } else { "Infinity".into() };
    }
    let x = v.to_f64();
    if x == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // fewest significant digits that read back as the same float2
    let sci = (1..=MAX_DIGITS)
        .map(|d| format!("{:.*e}", d - 1, x))
        .find(|s| s.parse::<f64>().map(f16::from_f64) == Ok(v))
        .unwrap_or_else(|| format!("{:.*e}", MAX_DIGITS - 1, x));
    let (mantissa, exp) = sci.split_once('e').expect("exponent notation");
    let exp: i32 = exp.parse().expect("exponent");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if neg { "-" } else { "" };
    if (-4..6).contains(&exp) {
        // plain decimal notation
        let n = digits.len() as i32;
        let s = if exp < 0 {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        } else if exp + 1 >= n {
            format!("{}{}", digits, "0".repeat((exp + 1 - n) as usize))
        } else {
            format!("{}.{}", &digits[..(exp + 1) as usize], &digits[(exp + 1) as usize..])
        };
        format!("{sign}{s}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// PostgreSQL's float order: NaN above every number and equal to itself,
/// -0 equal to 0.
pub fn cmp(a: f16, b: f16) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        _ => a.to_f32().partial_cmp(&b.to_f32()).unwrap_or(Equal),
    }
}

/// A hash of `v` for which equal values (0 and -0, every NaN) hash
/// alike: the canonical bits, mixed as murmur3's finalizer does.
pub fn hash(v: f16) -> u32 {
    let canon: u16 = if v.is_nan() {
        0x7e00
    } else if v.to_f64() == 0.0 {
        0
    } else {
        v.to_bits()
    };
    let mut x = canon as u32 ^ 0x9e37_79b9;
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^ (x >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_shortest() {
        for (v, s) in [
            (0.1, "0.1"),
            (1.0, "1"),
            (65504.0, "65500"), // the shortest text, as numpy prints it
            (-2.5, "-2.5"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (6e-8, "6e-08"),
            (100.0, "100"),
            (1234.0, "1234"),
        ] {
            let h = f16::from_f64(v);
            assert_eq!(format(h), s, "{v}");
            assert_eq!(parse(s).unwrap(), h);
        }
        assert_eq!(format(f16::NEG_ZERO), "-0");
        assert_eq!(format(f16::NAN), "NaN");
        assert_eq!(format(f16::NEG_INFINITY), "-Infinity");
        assert!(parse("70000").is_err() && parse("1e-9").is_err() && parse("x").is_err() && parse("").is_err());
        assert!(parse(" -Infinity ").unwrap().is_infinite() && parse("nan").unwrap().is_nan());
        assert_eq!(hash(f16::ZERO), hash(f16::NEG_ZERO));
        assert_eq!(hash(f16::NAN), hash(f16::from_bits(0xfe01)));
        assert_ne!(hash(f16::ONE), hash(f16::ZERO));
        // every float2 reads back from its text
        for bits in 0..=u16::MAX {
            let h = f16::from_bits(bits);
            let back = parse(&format(h)).unwrap();
            assert!(back == h || (h.is_nan() && back.is_nan()) || (h.to_f64() == 0.0 && back.to_f64() == 0.0));
        }
    }
}
