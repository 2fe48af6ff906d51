//! Message text shared by the extension and `pg2arrow`.

/// `text` without the " (os error N)" that Rust's I/O errors end with, so
/// that messages read as PostgreSQL's (`could not open file "x": No such
/// file or directory`).
pub fn os_plain(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at]);
        if digits > 0 && after.as_bytes().get(digits) == Some(&b')') {
            rest = &after[digits + 1..];
        } else {
            out.push_str(MARK);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::os_plain;

    #[test]
    fn drops_os_error_suffixes() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(os_plain(&format!("could not open \"x\": {e}")), "could not open \"x\": No such file or directory");
        assert_eq!(os_plain("a (os error 13); b (os error 2)"), "a; b");
        // not a suffix of Rust's: kept
        assert_eq!(os_plain("see (os error x)"), "see (os error x)");
        assert_eq!(os_plain("(os error 5"), "(os error 5");
        assert_eq!(os_plain(""), "");
    }
}
