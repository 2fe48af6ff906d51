//! Validity bitmaps (one bit a row, least significant bit first, as
//! Arrow and the device read them): appending one at any bit offset of
//! another, a byte at a time.

/// Append the first `n` bits of `src` to `dst`, which holds `base` bits
/// (`base.div_ceil(8)` bytes; any bits of its last byte beyond `base` are
/// ignored).  Afterwards `dst` holds `(base + n).div_ceil(8)` bytes and
/// every bit beyond `base + n` is 0.  `src` holds at least `n.div_ceil(8)`
/// bytes.
pub fn append_bits(dst: &mut Vec<u8>, base: usize, src: &[u8], n: usize) {
    let src = &src[..n.div_ceil(8)];
    dst.truncate(base.div_ceil(8));
    dst.resize(base.div_ceil(8), 0);
    let shift = base % 8;
    if shift == 0 {
        dst.extend_from_slice(src);
    } else {
        let last = dst.len() - 1;
        dst[last] &= (1u8 << shift) - 1;
        dst.reserve(src.len());
        for &b in src {
            let last = dst.len() - 1;
            dst[last] |= b << shift;
            dst.push(b >> (8 - shift));
        }
    }
    let end = base + n;
    dst.truncate(end.div_ceil(8));
    if !end.is_multiple_of(8) {
        let last = dst.len() - 1;
        dst[last] &= (1u8 << (end % 8)) - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[u8], n: usize) -> Vec<bool> {
        (0..n).map(|i| v[i / 8] & (1 << (i % 8)) != 0).collect()
    }

    #[test]
    fn appends_at_every_offset_as_bit_by_bit() {
        // a pattern with NULLs (0 bits) in every position, and garbage
        // (1 bits) beyond the lengths of both sides
        let mut seed = 0x9e37_79b9_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for base in 0..20usize {
            for n in 0..30usize {
                let a: Vec<u8> = (0..base.div_ceil(8)).map(|_| next() as u8).collect();
                let mut b: Vec<u8> = (0..n.div_ceil(8)).map(|_| next() as u8).collect();
                b.push(0xff);
                let mut dst = a.clone();
                dst.push(0xff); // more bytes than base needs: ignored
                append_bits(&mut dst, base, &b, n);
                let mut want = bits(&a, base);
                want.extend(bits(&b, n));
                assert_eq!(dst.len(), (base + n).div_ceil(8), "base {base} n {n}");
                assert_eq!(bits(&dst, base + n), want, "base {base} n {n}");
                let tail = (base + n) % 8;
                if tail != 0 {
                    assert_eq!(dst[dst.len() - 1] >> tail, 0, "bits beyond the end are 0");
                }
            }
        }
    }
}
