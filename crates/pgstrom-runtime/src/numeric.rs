//! The device's numeric: PostgreSQL's on-disk numeric decoded into the
//! 24-byte form device columns, constants and parameters hold (a 128-bit
//! mantissa of at most 38 decimal digits and a display scale, see
//! device/include/device_types.def), and printed for EXPLAIN VERBOSE;
//! and int8_avg_serialize's state bytes, GpuPreAgg's sum/avg of integers.
//!
//! Pure byte logic, so both the backend (chunks, constants) and tests use
//! it without a server.  A value with more than 38 significant digits (or
//! trailing zeros beyond them) is kept as [`Kind::Big`]: the device sends
//! any row that computes with it to PostgreSQL.

/// Bytes of one numeric in a device column or constant.
pub const WIDTH: usize = 24;

/// Display scale or special kind of a device numeric (the datum's `len`).
pub const NUM_NAN: i32 = -1;
/// +Infinity.
pub const NUM_PINF: i32 = -2;
/// -Infinity.
pub const NUM_NINF: i32 = -3;
/// A value the device cannot hold.
pub const NUM_BIG: i32 = -4;

/// The largest mantissa the device holds: 10^38 - 1.
pub const LIMIT: u128 = 10u128.pow(38) - 1;

/// A numeric as the device holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevNumeric {
    /// Mantissa: the value is `mant / 10^scale` (0 for the special kinds).
    pub mant: i128,
    /// Display scale (>= 0), or one of NUM_NAN, NUM_PINF, NUM_NINF, NUM_BIG.
    pub scale: i32,
}

// numeric.c's header bits
const SIGN_MASK: u16 = 0xC000;
const NEG: u16 = 0x4000;
const SHORT: u16 = 0x8000;
const SPECIAL: u16 = 0xC000;
const EXT_SIGN_MASK: u16 = 0xF000;
const NAN: u16 = 0xC000;
const PINF: u16 = 0xD000;
const NINF: u16 = 0xF000;
const SHORT_SIGN_MASK: u16 = 0x2000;
const SHORT_DSCALE_MASK: u16 = 0x1F80;
const SHORT_DSCALE_SHIFT: u16 = 7;
const SHORT_WEIGHT_SIGN_MASK: u16 = 0x0040;
const SHORT_WEIGHT_MASK: u16 = 0x003F;
const DSCALE_MASK: u16 = 0x3FFF;

impl DevNumeric {
    const BIG: DevNumeric = DevNumeric { mant: 0, scale: NUM_BIG };

    /// Decode a numeric's bytes after its varlena header (the union
    /// NumericChoice and the base-10000 digits, native byte order).
    pub fn from_pg_payload(p: &[u8]) -> DevNumeric {
        let u16_at = |o: usize| p.get(o..o + 2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
        let Some(header) = u16_at(0) else { return DevNumeric::BIG };
        let flags = header & SIGN_MASK;
        if flags == SPECIAL {
            let scale = match header & EXT_SIGN_MASK {
                NAN => NUM_NAN,
                PINF => NUM_PINF,
                NINF => NUM_NINF,
                _ => NUM_BIG,
            };
            return DevNumeric { mant: 0, scale };
        }
        let (neg, dscale, weight, digits_at) = if flags == SHORT {
            let w = (header & SHORT_WEIGHT_MASK) as i32;
            let weight = if header & SHORT_WEIGHT_SIGN_MASK != 0 { w - 64 } else { w };
            (header & SHORT_SIGN_MASK != 0, ((header & SHORT_DSCALE_MASK) >> SHORT_DSCALE_SHIFT) as i32, weight, 2)
        } else {
            let Some(w) = u16_at(2) else { return DevNumeric::BIG };
            (flags == NEG, (header & DSCALE_MASK) as i32, w as i16 as i32, 4)
        };
        let ndigits = (p.len() - digits_at) / 2;
        let mut mag: u128 = 0;
        for i in 0..ndigits {
            let d = u16_at(digits_at + 2 * i).unwrap_or(0) as u128;
            // digit i stands for d * 10000^(weight - i); as a mantissa of
            // scale dscale that is d * 10^(4 (weight - i) + dscale)
            let e = 4 * (weight - i as i32) + dscale;
            let term = if e >= 0 {
                match 10u128.checked_pow(e as u32).and_then(|p| p.checked_mul(d)) {
                    Some(t) => t,
                    None if d == 0 => 0,
                    None => return DevNumeric::BIG,
                }
            } else {
                // digits past the display scale are zero in a valid numeric
                let p = 10u128.checked_pow((-e) as u32).unwrap_or(u128::MAX);
                if !d.is_multiple_of(p) {
                    return DevNumeric::BIG;
                }
                d / p
            };
            mag = match mag.checked_add(term) {
                Some(m) => m,
                None => return DevNumeric::BIG,
            };
        }
        if mag > LIMIT {
            return DevNumeric::BIG;
        }
        DevNumeric { mant: if neg { -(mag as i128) } else { mag as i128 }, scale: dscale }
    }

    /// The 24 bytes of a column value or constant.
    pub fn to_bytes(self) -> [u8; WIDTH] {
        let mut b = [0u8; WIDTH];
        b[..16].copy_from_slice(&self.mant.to_le_bytes());
        b[16..20].copy_from_slice(&self.scale.to_le_bytes());
        b
    }

    /// Read the 24 bytes back.
    pub fn from_bytes(b: &[u8]) -> Option<DevNumeric> {
        let mant = i128::from_le_bytes(b.get(..16)?.try_into().ok()?);
        let scale = i32::from_le_bytes(b.get(16..20)?.try_into().ok()?);
        Some(DevNumeric { mant, scale })
    }

    /// The low and high 64 bits of the mantissa (a DevDatum's v.i and hi).
    pub fn words(self) -> (i64, i64) {
        (self.mant as i64, (self.mant >> 64) as i64)
    }

    /// Text as numeric_out prints it.
    pub fn to_text(self) -> String {
        match self.scale {
            NUM_NAN => return "NaN".into(),
            NUM_PINF => return "Infinity".into(),
            NUM_NINF => return "-Infinity".into(),
            s if s < 0 => return "(beyond the device)".into(),
            _ => {}
        }
        let digits = self.mant.unsigned_abs().to_string();
        let s = self.scale as usize;
        let (int, frac) = if digits.len() > s {
            (digits[..digits.len() - s].to_string(), digits[digits.len() - s..].to_string())
        } else {
            ("0".to_string(), format!("{}{digits}", "0".repeat(s - digits.len())))
        };
        let sign = if self.mant < 0 { "-" } else { "" };
        if s == 0 { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
    }
}

/// int8_avg_serialize's form of {N, sum}: N as int8, then the sum as a
/// NumericVar (ndigits, weight, sign, dscale as int32, base-10000 digits
/// as int16), all big-endian.
pub fn poly_num_bytes(n: i64, sum: i128) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 16 + 2 * 10);
    out.extend_from_slice(&n.to_be_bytes());
    let neg = sum < 0;
    let mut u = sum.unsigned_abs();
    let mut digits: Vec<i16> = Vec::new();
    while u > 0 {
        digits.push((u % 10000) as i16);
        u /= 10000;
    }
    digits.reverse();
    let ndigits = digits.len() as i32;
    out.extend_from_slice(&ndigits.to_be_bytes());
    let weight = if ndigits == 0 { 0 } else { ndigits - 1 };
    out.extend_from_slice(&weight.to_be_bytes());
    let sign: i32 = if neg { 0x4000 } else { 0 };
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long-format payload: sign/dscale word, weight, digits.
    fn long(neg: bool, dscale: u16, weight: i16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((if neg { NEG } else { 0 }) | dscale).to_ne_bytes());
        v.extend_from_slice(&weight.to_ne_bytes());
        for d in digits {
            v.extend_from_slice(&d.to_ne_bytes());
        }
        v
    }

    /// A short-format payload.
    fn short(neg: bool, dscale: u16, weight: i16, digits: &[u16]) -> Vec<u8> {
        let w = if weight < 0 { SHORT_WEIGHT_SIGN_MASK | ((weight + 64) as u16) } else { weight as u16 };
        let h = SHORT | if neg { SHORT_SIGN_MASK } else { 0 } | (dscale << SHORT_DSCALE_SHIFT) | w;
        let mut v = h.to_ne_bytes().to_vec();
        for d in digits {
            v.extend_from_slice(&d.to_ne_bytes());
        }
        v
    }

    fn text(p: &[u8]) -> String {
        DevNumeric::from_pg_payload(p).to_text()
    }

    #[test]
    fn decodes_both_formats() {
        // 1234.5678: weight 0, digits 1234 5678, dscale 4
        assert_eq!(text(&short(false, 4, 0, &[1234, 5678])), "1234.5678");
        assert_eq!(text(&long(false, 4, 0, &[1234, 5678])), "1234.5678");
        // -0.05 with dscale 3: weight -1, digit 500
        assert_eq!(text(&short(true, 3, -1, &[500])), "-0.050");
        // 12000000 (weight 1, digits 1200; trailing zero digit stripped)
        assert_eq!(text(&short(false, 0, 1, &[1200])), "12000000");
        // zero with a scale: no digits
        assert_eq!(text(&short(false, 2, 0, &[])), "0.00");
        // specials
        assert_eq!(text(&NAN.to_ne_bytes()), "NaN");
        assert_eq!(text(&PINF.to_ne_bytes()), "Infinity");
        assert_eq!(text(&NINF.to_ne_bytes()), "-Infinity");
    }

    #[test]
    fn limits() {
        // 38 nines fit; 39 digits do not
        let nines: Vec<u16> = std::iter::once(99).chain(std::iter::repeat_n(9999, 9)).collect();
        let n = DevNumeric::from_pg_payload(&long(false, 0, 9, &nines));
        assert_eq!(n.to_text(), "9".repeat(38));
        let big: Vec<u16> = std::iter::once(999).chain(std::iter::repeat_n(9999, 9)).collect();
        assert_eq!(DevNumeric::from_pg_payload(&long(false, 0, 9, &big)).scale, NUM_BIG);
        // 1e100: few digits, but 101 of them as a mantissa
        assert_eq!(DevNumeric::from_pg_payload(&long(false, 0, 25, &[1])).scale, NUM_BIG);
        // a tiny value with a large scale fits while its mantissa does; 1
        // with 40 decimals does not
        assert_eq!(text(&long(false, 40, -10, &[1000])), format!("0.{}1000", "0".repeat(36)));
        assert_eq!(DevNumeric::from_pg_payload(&long(false, 40, 0, &[1])).scale, NUM_BIG);
        // truncated input is not read past its end
        assert_eq!(DevNumeric::from_pg_payload(&[]).scale, NUM_BIG);
    }

    #[test]
    fn bytes_round_trip() {
        let n = DevNumeric { mant: -(LIMIT as i128), scale: 7 };
        assert_eq!(DevNumeric::from_bytes(&n.to_bytes()), Some(n));
        let (lo, hi) = n.words();
        assert_eq!(((hi as i128) << 64) | (lo as u64 as i128), n.mant);
    }

    #[test]
    fn poly_num_layout() {
        // 123456789 = 1|2345|6789 in base 10000
        let b = poly_num_bytes(3, -123456789);
        assert_eq!(&b[..8], &3i64.to_be_bytes());
        assert_eq!(&b[8..12], &3i32.to_be_bytes());
        assert_eq!(&b[12..16], &2i32.to_be_bytes());
        assert_eq!(&b[16..20], &0x4000i32.to_be_bytes());
        assert_eq!(&b[24..], &[0, 1, 0x09, 0x29, 0x1a, 0x85]);
        let z = poly_num_bytes(0, 0);
        assert_eq!(z.len(), 24);
    }
}
