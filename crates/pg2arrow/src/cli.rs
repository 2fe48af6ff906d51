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

/// A tool's own options (besides [`Common`]'s): long names, those that
/// take no value, and the short letters' long names (all of them).
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
        let n = name.as_str();
        if !spec.long.contains(&n) && !COMMON_LONG.contains(&n) {
            return Err(format!("unrecognized option '--{name}'"));
        }
        let value = if !spec.flags.contains(&n) && !COMMON_FLAGS.contains(&n) {
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

/// The options both tools have, and what their values mean: the query
/// (`-c`, `-t`, `-f`), the output, record batches, statistics, session
/// settings, `--progress`, `--dump`, `--recover`, `--help`, `--version`.
#[derive(Debug, Default)]
pub struct Common {
    pub command: Option<String>,
    /// None: a new file under $TMPDIR.
    pub target: Option<Target>,
    pub segment_size: Option<usize>,
    pub stat: Vec<String>,
    pub set: Vec<(String, String)>,
    pub progress: bool,
    pub dump: Option<PathBuf>,
    pub recover: Option<PathBuf>,
    pub help: bool,
    pub version: bool,
    /// How many of -c, -t and -f were given.
    sources: usize,
}

/// The long names of [`Common`]'s options, and those of them that take
/// no value.
pub const COMMON_LONG: [&str; 13] = [
    "command",
    "table",
    "file",
    "output",
    "append",
    "segment-size",
    "stat",
    "set",
    "progress",
    "dump",
    "recover",
    "help",
    "version",
];
pub const COMMON_FLAGS: [&str; 3] = ["progress", "help", "version"];

impl Common {
    /// Take option `name` when it is one of these (None), else give its
    /// value back for the tool.
    pub fn take(&mut self, name: &str, value: String) -> Result<Option<String>, String> {
        match name {
            "command" => {
                self.sources += 1;
                self.command = Some(value);
            }
            "table" => {
                self.sources += 1;
                self.command = Some(format!("SELECT * FROM {value}"));
            }
            "file" => {
                self.sources += 1;
                let sql = std::fs::read_to_string(&value).map_err(|e| format!("could not read \"{value}\": {e}"))?;
                self.command = Some(sql);
            }
            "output" | "append" => target(&mut self.target, name, value)?,
            "segment-size" => self.segment_size = Some(parse_size(&value)?),
            "stat" => stat_columns(&mut self.stat, &value)?,
            "set" => self.set.push(setting(&value)?),
            "progress" => self.progress = true,
            "dump" => self.dump = Some(PathBuf::from(value)),
            "recover" => self.recover = Some(PathBuf::from(value)),
            "help" => self.help = true,
            "version" => self.version = true,
            _ => return Ok(Some(value)),
        }
        Ok(None)
    }

    /// After every option: the query sources exclusive, the positional
    /// `[DBNAME [USERNAME]]` into `dbname` and `user` where the options
    /// left them unset, and a query unless nothing is to be run.
    pub fn finish(
        &self,
        positional: Vec<String>,
        dbname: &mut Option<String>,
        user: &mut Option<String>,
    ) -> Result<(), String> {
        if self.sources > 1 {
            return Err("-c, -t and -f are exclusive".into());
        }
        let mut pos = positional.into_iter();
        if let Some(db) = pos.next() {
            dbname.get_or_insert(db);
        }
        if let Some(u) = pos.next() {
            user.get_or_insert(u);
        }
        if let Some(extra) = pos.next() {
            return Err(format!("too many command-line arguments (first is \"{extra}\")"));
        }
        if !self.help && !self.version && self.dump.is_none() && self.recover.is_none() && self.command.is_none() {
            return Err("no query: give -c COMMAND, -t TABLE or -f FILE".into());
        }
        Ok(())
    }
}

/// The value of environment variable `name`, unless unset or empty.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The OS user's name (`USER`, else the password database), else
/// `fallback`.
pub fn os_user(fallback: &str) -> String {
    if let Some(u) = env("USER") {
        return u;
    }
    // SAFETY: getpwuid of our own uid; the result is copied at once.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if !pw.is_null() {
            return std::ffi::CStr::from_ptr((*pw).pw_name).to_string_lossy().into_owned();
        }
    }
    fallback.into()
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
