//! The command line: options as pg_dump and the original pg2arrow spell
//! them (`-o FILE`, `-oFILE`, `--output=FILE`, `--output FILE`), the
//! positional `[DBNAME [USERNAME]]`, and `--help`.

use std::path::PathBuf;

pub const USAGE: &str = "\
pg2arrow dumps the result of a PostgreSQL query into an Apache Arrow file.

Usage:
  pg2arrow [OPTION]... [DBNAME [USERNAME]]

General options:
  -d, --dbname=DBNAME       database name to connect to
  -c, --command=COMMAND     SQL command to run
  -t, --table=TABLENAME     table to dump (SELECT * FROM TABLENAME)
  -f, --file=FILENAME       SQL command from a file
      (-c, -t and -f are exclusive; one of them must be given)
  -o, --output=FILENAME     result file in Apache Arrow format
      --append=FILENAME     Apache Arrow file to append the result to
      (--output and --append are exclusive; with neither, a new file
       is created under $TMPDIR and its name printed)

Arrow format options:
  -s, --segment-size=SIZE   size of each record batch (default 256MB;
                            units kB, MB, GB)
      --stat=COLUMNS        write per record batch min/max statistics of
                            these columns (comma-separated) for Arrow_Fdw

Connection options:
  -h, --host=HOSTNAME       database server host or socket directory
  -p, --port=PORT           database server port
  -U, --username=USERNAME   database user name
  -w, --no-password         never prompt for password
  -W, --password            force password prompt

Other options:
      --set=NAME:VALUE      config option to set before the query
      --inner-join=COMMAND  a query run for each row, with $(FIELD) as the
                            row's value of FIELD; its rows are appended to
                            the row (no row: the row is left out)
      --outer-join=COMMAND  as --inner-join, but a row without a match is
                            kept with NULLs
      --progress            show the progress of the job
      --dump=FILENAME       print the schema, custom metadata and record
                            batch layout of an Arrow file
      --recover=FILENAME    put back an Arrow file whose --append was killed
      --help                show this message
      --version             show the version

Environment: PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE.
";

/// Where the result goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A new file (replaced atomically when it exists).
    Output(PathBuf),
    /// Record batches added to an existing file.
    Append(PathBuf),
}

/// A sub-query run per row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    pub command: String,
    pub outer: bool,
}

/// Password prompting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prompt {
    /// When the server asks and stdin is a terminal.
    #[default]
    IfNeeded,
    Never,
    Always,
}

#[derive(Debug, Default)]
pub struct Options {
    pub dbname: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub username: Option<String>,
    pub prompt: Prompt,
    pub command: Option<String>,
    /// None: a new file under $TMPDIR.
    pub target: Option<Target>,
    pub segment_size: Option<usize>,
    pub stat: Vec<String>,
    pub set: Vec<(String, String)>,
    pub join: Option<Join>,
    pub progress: bool,
    pub dump: Option<PathBuf>,
    pub recover: Option<PathBuf>,
    pub help: bool,
    pub version: bool,
}

/// Default record batch size.
pub const DEFAULT_SEGMENT: usize = 256 << 20;

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

const LONG: [&str; 22] = [
    "dbname",
    "command",
    "table",
    "file",
    "output",
    "append",
    "segment-size",
    "host",
    "port",
    "username",
    "user",
    "no-password",
    "password",
    "set",
    "stat",
    "inner-join",
    "outer-join",
    "progress",
    "dump",
    "recover",
    "help",
    "version",
];

fn takes_value(name: &str) -> bool {
    !matches!(name, "no-password" | "password" | "progress" | "help" | "version")
}

fn long_of(short: char) -> Option<&'static str> {
    Some(match short {
        'd' => "dbname",
        'c' => "command",
        't' => "table",
        'f' => "file",
        'o' => "output",
        's' => "segment-size",
        'h' => "host",
        'p' => "port",
        'U' => "username",
        'w' => "no-password",
        'W' => "password",
        '?' => "help",
        _ => return None,
    })
}

/// Parse the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    // `pg2arrow -h` alone (no host given) shows the usage, as in PG-Strom's pg2arrow
    if args.len() == 1 && args[0] == "-h" {
        o.help = true;
        return Ok(o);
    }
    let mut positional = Vec::new();
    let mut sources = 0;
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
            let long = long_of(c).ok_or_else(|| format!("invalid option -- '{c}'"))?;
            let tail = &rest[c.len_utf8()..];
            (long.to_string(), (!tail.is_empty()).then(|| tail.to_string()))
        } else {
            positional.push(a.clone());
            continue;
        };
        if !LONG.contains(&name.as_str()) {
            return Err(format!("unrecognized option '--{name}'"));
        }
        let value = if takes_value(&name) {
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
        match name.as_str() {
            "dbname" => o.dbname = Some(value),
            "command" => {
                sources += 1;
                o.command = Some(value);
            }
            "table" => {
                sources += 1;
                o.command = Some(format!("SELECT * FROM {value}"));
            }
            "file" => {
                sources += 1;
                let sql = std::fs::read_to_string(&value).map_err(|e| format!("could not read \"{value}\": {e}"))?;
                o.command = Some(sql);
            }
            "output" | "append" => {
                if o.target.is_some() {
                    return Err("--output and --append are exclusive".into());
                }
                let p = PathBuf::from(value);
                o.target = Some(if name == "output" { Target::Output(p) } else { Target::Append(p) });
            }
            "segment-size" => o.segment_size = Some(parse_size(&value)?),
            "host" => o.host = Some(value),
            "port" => o.port = Some(value.parse().map_err(|_| format!("invalid port number \"{value}\""))?),
            "username" | "user" => o.username = Some(value),
            "no-password" => o.prompt = Prompt::Never,
            "password" => o.prompt = Prompt::Always,
            "set" => {
                let (n, v) = value.split_once(':').ok_or_else(|| format!("--set needs NAME:VALUE, not \"{value}\""))?;
                if n.trim().is_empty() {
                    return Err(format!("--set needs NAME:VALUE, not \"{value}\""));
                }
                o.set.push((n.trim().to_string(), v.to_string()));
            }
            "stat" => {
                for c in value.split(',').map(str::trim) {
                    if c.is_empty() {
                        return Err(format!("--stat: empty column name in \"{value}\""));
                    }
                    o.stat.push(c.to_string());
                }
            }
            "inner-join" | "outer-join" => {
                if o.join.is_some() {
                    return Err("only one of --inner-join and --outer-join may be given, once".into());
                }
                o.join = Some(Join { command: value, outer: name == "outer-join" });
            }
            "progress" => o.progress = true,
            "dump" => o.dump = Some(PathBuf::from(value)),
            "recover" => o.recover = Some(PathBuf::from(value)),
            "help" => o.help = true,
            "version" => o.version = true,
            other => return Err(format!("unrecognized option '--{other}'")),
        }
    }
    if sources > 1 {
        return Err("-c, -t and -f are exclusive".into());
    }
    let mut pos = positional.into_iter();
    if let Some(db) = pos.next() {
        o.dbname.get_or_insert(db);
    }
    if let Some(user) = pos.next() {
        o.username.get_or_insert(user);
    }
    if let Some(extra) = pos.next() {
        return Err(format!("too many command-line arguments (first is \"{extra}\")"));
    }
    if !o.help && !o.version && o.dump.is_none() && o.recover.is_none() && o.command.is_none() {
        return Err("no query: give -c COMMAND, -t TABLE or -f FILE".into());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Options, String> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn spellings() {
        let o = p(&["-d", "postgres", "-oout.arrow", "--table=t", "--stat", "a, b", "-s", "64MB"]).unwrap();
        assert_eq!(o.dbname.as_deref(), Some("postgres"));
        assert_eq!(o.target, Some(Target::Output("out.arrow".into())));
        assert_eq!(o.command.as_deref(), Some("SELECT * FROM t"));
        assert_eq!(o.stat, ["a", "b"]);
        assert_eq!(o.segment_size, Some(64 << 20));
        let o = p(&["-c", "SELECT 1", "db", "me", "--set", "work_mem:64MB", "-w"]).unwrap();
        assert_eq!((o.dbname.as_deref(), o.username.as_deref()), (Some("db"), Some("me")));
        assert_eq!(o.set, [("work_mem".to_string(), "64MB".to_string())]);
        assert_eq!(o.prompt, Prompt::Never);
        assert!(p(&["-h"]).unwrap().help);
        assert_eq!(p(&["-h", "/tmp", "-t", "x"]).unwrap().host.as_deref(), Some("/tmp"));
    }

    #[test]
    fn errors() {
        assert!(p(&["-c", "x", "-t", "y"]).unwrap_err().contains("exclusive"));
        assert!(p(&["-c", "x", "-o", "a", "--append", "b"]).unwrap_err().contains("exclusive"));
        assert!(p(&["-o", "a"]).unwrap_err().contains("no query"));
        assert!(p(&["-c", "x", "-s", "12XB"]).unwrap_err().contains("units"));
        assert!(p(&["-c", "x", "-s", "12"]).unwrap_err().contains("too small"));
        assert!(p(&["-c", "x", "--bogus"]).unwrap_err().contains("unrecognized"));
        assert!(p(&["-c", "x", "-Z"]).unwrap_err().contains("invalid option"));
        assert!(p(&["-c"]).unwrap_err().contains("requires an argument"));
        assert!(p(&["-c", "x", "--set", "novalue"]).unwrap_err().contains("NAME:VALUE"));
        assert!(p(&["-c", "x", "a", "b", "c"]).unwrap_err().contains("too many"));
    }
}
