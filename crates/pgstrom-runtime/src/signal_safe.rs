//! Numbers written as text without allocating, for code that runs in a
//! signal handler (the extension's crash reports), where only
//! async-signal-safe work is allowed.

/// `v` in hexadecimal into `out` (no allocation); the digits written.
pub fn hex(v: usize, out: &mut [u8; 18]) -> &[u8] {
    out[0] = b'0';
    out[1] = b'x';
    let mut n = 2;
    let mut started = false;
    for i in (0..16).rev() {
        let d = (v >> (i * 4)) & 0xf;
        if d != 0 || started || i == 0 {
            started = true;
            out[n] = b"0123456789abcdef"[d];
            n += 1;
        }
    }
    &out[..n]
}

/// Decimal digits of `v` into `out`.
pub fn dec(mut v: usize, out: &mut [u8; 20]) -> &[u8] {
    let mut n = out.len();
    loop {
        n -= 1;
        out[n] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &out[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_without_allocation() {
        let mut h = [0u8; 18];
        assert_eq!(hex(0, &mut h), b"0x0");
        assert_eq!(hex(0x7f3a_0010, &mut h), b"0x7f3a0010");
        assert_eq!(hex(usize::MAX, &mut h), b"0xffffffffffffffff");
        let mut d = [0u8; 20];
        assert_eq!(dec(0, &mut d), b"0");
        assert_eq!(dec(11, &mut d), b"11");
        assert_eq!(dec(4_194_304, &mut d), b"4194304");
    }
}
