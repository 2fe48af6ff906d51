//! File columns widened into the device's layout on the host: what the
//! GPU does in device/kernels/arrow.cu as it reads a column buffer into
//! its column cache, done here for the CPU engine of the GPU service
//! (service/files.rs) and, for Arrow columns a backend hands over in
//! memory, by the extension's Arrow reader.  Arrow Decimal128 mantissas become the device's
//! numeric (mantissa and scale), Date32 days from 1970 the device's days
//! from 2000, FixedSizeBinary char(n) stays as it is once checked to be
//! ASCII without NUL bytes (with offsets made for it).  Each reports the first valid row whose value the device's
//! type cannot hold.

use crate::engine::FileForm;
use crate::numeric::{DevNumeric, NUM_BIG, WIDTH};

/// Days from 1970-01-01 to 2000-01-01.
const EPOCH_DAYS: i64 = 10_957;
/// PostgreSQL's dates, in days from 2000-01-01: 4714-11-24 BC up to (not
/// including) 5874898-01-01.
pub const MIN_DATE: i64 = -2_451_545;
/// (see [`MIN_DATE`])
pub const END_DATE: i64 = 2_145_031_949;

/// `raw` (the file's values) in `form`, appended to `out`; the first row
/// among those `valid` says are not NULL whose value the form could not
/// hold (a decimal of too many digits becomes NUM_BIG, a date out of
/// range 0).  `form` is not [`FileForm::AsIs`].
pub fn widen(form: FileForm, raw: &[u8], valid: impl Fn(usize) -> bool, out: &mut Vec<u8>) -> Option<usize> {
    match form {
        FileForm::AsIs => {
            out.extend_from_slice(raw);
            None
        }
        FileForm::Decimal128 { scale, digits, .. } => widen_decimal128(raw, scale as i32, digits as u32, valid, out),
        FileForm::Date32 => {
            let mut first = None;
            out.reserve(raw.len());
            for (i, d) in raw.chunks_exact(4).enumerate() {
                let days = i32::from_le_bytes(d.try_into().expect("4 bytes")) as i64 - EPOCH_DAYS;
                let ok = (MIN_DATE..END_DATE).contains(&days);
                if !ok && first.is_none() && valid(i) {
                    first = Some(i);
                }
                out.extend_from_slice(&(if ok { days as i32 } else { 0 }).to_le_bytes());
            }
            first
        }
        FileForm::FixedText { size } => {
            // ASCII without NUL: as many characters as bytes
            let first = raw
                .chunks_exact(size.max(1) as usize)
                .enumerate()
                .find(|&(i, v)| valid(i) && v.iter().any(|&c| c == 0 || c >= 0x80))
                .map(|(i, _)| i);
            out.extend_from_slice(raw);
            first
        }
    }
}

/// Offsets of `n` values of `size` bytes each, one after another: n + 1
/// of them, from 0 (a text column's offsets).
pub fn fixed_offsets(n: usize, size: u32) -> Vec<u32> {
    (0..=n as u32).map(|i| i * size).collect()
}

/// Arrow Decimal128 mantissas `raw` (16 bytes each, little-endian) at
/// `scale` as device numerics, appended to `out`: a value of more than
/// `digits` digits becomes NUM_BIG.  Returns the first row among those
/// `valid` says are not NULL that did (kern_widen_decimal128 does the
/// same on a GPU).
fn widen_decimal128(
    raw: &[u8],
    scale: i32,
    digits: u32,
    valid: impl Fn(usize) -> bool,
    out: &mut Vec<u8>,
) -> Option<usize> {
    let bound = 10u128.pow(digits.min(38));
    let mut first_big = None;
    out.reserve(raw.len() / 16 * WIDTH);
    for (i, m) in raw.chunks_exact(16).enumerate() {
        let mant = i128::from_le_bytes(m.try_into().expect("16 bytes"));
        let v = if mant.unsigned_abs() < bound {
            DevNumeric { mant, scale }
        } else {
            if first_big.is_none() && valid(i) {
                first_big = Some(i);
            }
            DevNumeric { mant: 0, scale: NUM_BIG }
        };
        out.extend_from_slice(&v.to_bytes());
    }
    first_big
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widen_decimal128_bounds() {
        let vals: [i128; 5] = [0, 12345, -99999, 100000, i128::MIN];
        let raw: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = Vec::new();
        // 5 digits: 100000 and i128::MIN are too long; row 3 is NULL
        let first = widen_decimal128(&raw, 2, 5, |i| i != 3, &mut out);
        assert_eq!(first, Some(4));
        let got: Vec<DevNumeric> = out.chunks_exact(WIDTH).map(|b| DevNumeric::from_bytes(b).unwrap()).collect();
        assert_eq!(got[1], DevNumeric { mant: 12345, scale: 2 });
        assert_eq!(got[1].to_text(), "123.45");
        assert_eq!(got[2].to_text(), "-999.99");
        assert_eq!(got[3].scale, NUM_BIG);
        assert_eq!(got[4].scale, NUM_BIG);
        assert_eq!(&out[20..24], &[0u8; 4], "the padding is zero");
        out.clear();
        assert_eq!(widen_decimal128(&raw[..48], 0, 38, |_| true, &mut out), None);
        assert_eq!(out.len(), 3 * WIDTH);
    }

    #[test]
    fn fixed_text_is_checked() {
        let raw = b"ab c\x00xyzw\xc3\xb1  ";
        let mut out = Vec::new();
        // the second value holds a NUL, the fourth a non-ASCII byte
        assert_eq!(widen(FileForm::FixedText { size: 3 }, raw, |_| true, &mut out), Some(1));
        assert_eq!(out, raw);
        out.clear();
        assert_eq!(widen(FileForm::FixedText { size: 3 }, raw, |i| i != 1, &mut out), Some(3));
        assert_eq!(widen(FileForm::FixedText { size: 3 }, &raw[..3], |_| true, &mut out), None);
        assert_eq!(fixed_offsets(3, 25), vec![0, 25, 50, 75]);
    }

    #[test]
    fn dates_shift_to_postgresql_epoch() {
        let days: [i32; 4] = [0, 10_957, -2_440_589, i32::MAX];
        let raw: Vec<u8> = days.iter().flat_map(|d| d.to_le_bytes()).collect();
        let mut out = Vec::new();
        // the third is the day before 4714-11-24 BC; the last past 5874897
        assert_eq!(widen(FileForm::Date32, &raw, |i| i != 2, &mut out), Some(3));
        let got: Vec<i32> = out.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, vec![-10_957, 0, 0, 0]);
        out.clear();
        assert_eq!(widen(FileForm::Date32, &raw[..8], |_| true, &mut out), None);
        assert_eq!(widen(FileForm::Date32, &(-2_440_588i32).to_le_bytes(), |_| true, &mut out), None);
        assert_eq!(out[8..], (-2_451_545i32).to_le_bytes());
    }
}
