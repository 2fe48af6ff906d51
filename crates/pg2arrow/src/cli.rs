//! The command line both tools share: the scanner (options as pg_dump and
//! the original tools spell them: `-o FILE`, `-oFILE`, `--output=FILE`,
//! `--output FILE`, `--` ending the options), where the result goes, and
//! the values of `--segment-size`, `--set` and `--stat`.

use std::path::PathBuf;

/// Default record batch size.
pub const DEFAULT_SEGMENT: usize = 256 << 20;

/// Where the result goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A new file (replaced atomically when it exists).
    Output(PathBuf),
    /// Record batches added to an existing file.
    Append(PathBuf),
}

/// A tool's options: long names, those that take no value, and the
/// short letters' long names.
pub struct Spec {
    pub long: &'static [&'static str],
    pub flags: &'static [&'static str],
    pub short: fn(char) -> Option<&'static str>,
}

/// The options given, `(long name, value)` in order (a flag's value is
/// empty), and the positional arguments.
pub type Scanned = (Vec<(String, String)>, Vec<String>);

/// The arguments (without the program name), scanned.
pub fn scan(args: &[String], spec: &Spec) -> Result<Scanned, String> {
    let mut out = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let (name, inline): (String, Option<String>) = if let Some(rest) = a.strip_prefix("--") {
            if rest.is_empty() {
                positional.extend(args[i..].iter().cloned());
                break;
            }
            match rest.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (rest.to_string(), None),
            }
        } else if let Some(rest) = a.strip_prefix('-').filter(|r| !r.is_empty()) {
            let c = rest.chars().next().expect("not empty");
            let long = (spec.short)(c).ok_or_else(|| format!("invalid option -- '{c}'"))?;
            let tail = &rest[c.len_utf8()..];
            (long.to_string(), (!tail.is_empty()).then(|| tail.to_string()))
        } else {
            positional.push(a.clone());
            continue;
        };
        if !spec.long.contains(&name.as_str()) {
            return Err(format!("unrecognized option '--{name}'"));
        }
        let value = if !spec.flags.contains(&name.as_str()) {
            match inline {
                Some(v) => v,
                None if i < args.len() => {
                    i += 1;
                    args[i - 1].clone()
                }
                None => return Err(format!("option --{name} requires an argument")),
            }
        } else {
            if inline.is_some() {
                return Err(format!("option --{name} does not take an argument"));
            }
            String::new()
        };
        out.push((name, value));
    }
    Ok((out, positional))
}

/// `--output` or `--append` (`name`), given once.
pub fn target(cur: &mut Option<Target>, name: &str, value: String) -> Result<(), String> {
    if cur.is_some() {
        return Err("--output and --append are exclusive".into());
    }
    let p = PathBuf::from(value);
    *cur = Some(if name == "output" { Target::Output(p) } else { Target::Append(p) });
    Ok(())
}

/// `--set NAME:VALUE`.
pub fn setting(value: &str) -> Result<(String, String), String> {
    let (n, v) = value.split_once(':').ok_or_else(|| format!("--set needs NAME:VALUE, not \"{value}\""))?;
    if n.trim().is_empty() {
        return Err(format!("--set needs NAME:VALUE, not \"{value}\""));
    }
    Ok((n.trim().to_string(), v.to_string()))
}

/// `--stat a,b`: the column names added to `out`.
pub fn stat_columns(out: &mut Vec<String>, value: &str) -> Result<(), String> {
    for c in value.split(',').map(str::trim) {
        if c.is_empty() {
            return Err(format!("--stat: empty column name in \"{value}\""));
        }
        out.push(c.to_string());
    }
    Ok(())
}

/// `256MB`, `64kB`, `1GB`, `1048576` (bytes).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: usize = num.parse().map_err(|_| format!("invalid size \"{s}\""))?;
    let mult: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        _ => return Err(format!("invalid size \"{s}\": units are kB, MB and GB")),
    };
    let v = n.checked_mul(mult).ok_or_else(|| format!("size \"{s}\" is too large"))?;
    if v < 1 << 10 {
        return Err(format!("segment size \"{s}\" is too small (at least 1kB)"));
    }
    if v > 1 << 30 {
        return Err(format!("segment size \"{s}\" is too large (at most 1GB)"));
    }
    Ok(v)
}
