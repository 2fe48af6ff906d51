//! File-name patterns of Arrow_Fdw's `pattern` option: `*` matches any run
//! of bytes, `?` exactly one, anything else itself.

/// Whether `name` matches `pattern` as a whole.  Greedy with one
/// backtracking point (the last `*`), so time is O(len(pattern) *
/// len(name)) whatever the pattern: a user's pattern cannot stall a scan.
pub fn matches(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // after the last `*`: where the pattern resumes, and the name position
    // that `*` has swallowed up to
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns() {
        assert!(matches(b"*.arrow", b"t.arrow"));
        assert!(matches(b"lo_??.arrow", b"lo_01.arrow"));
        assert!(!matches(b"lo_??.arrow", b"lo_1.arrow"));
        assert!(!matches(b"*.arrow", b"t.arrow.tmp"));
        assert!(matches(b"*", b""));
        assert!(matches(b"", b""));
        assert!(!matches(b"", b"a"));
        assert!(!matches(b"?", b""));
        assert!(matches(b"a*b*c", b"axxbyyc"));
        assert!(!matches(b"a*b*c", b"axxbyy"));
        assert!(matches(b"**x", b"abx"));
        // multibyte names are bytes: `?` is one byte of the UTF-8
        assert!(matches("??.arrow".as_bytes(), "é.arrow".as_bytes()));
    }

    #[test]
    fn many_stars_stay_fast() {
        // exponential for a naive recursive matcher
        let pattern = b"*a*a*a*a*a*a*a*a*a*a*a*a*b".to_vec();
        let name = vec![b'a'; 4000];
        assert!(!matches(&pattern, &name));
    }
}
