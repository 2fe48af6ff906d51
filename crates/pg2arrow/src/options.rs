//! pg2arrow's command line (scanned by `pg2arrow::cli`): its options,
//! the positional `[DBNAME [USERNAME]]`, and `--help`.

use pg2arrow::cli::{Common, Spec, scan};

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
    pub join: Option<Join>,
    /// The query, the output and the rest both tools share.
    pub common: Common,
}

/// pg2arrow's own options (`pg2arrow::cli::COMMON_LONG` are the shared ones).
const LONG: [&str; 9] =
    ["dbname", "host", "port", "username", "user", "no-password", "password", "inner-join", "outer-join"];

const FLAGS: [&str; 2] = ["no-password", "password"];

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
        o.common.help = true;
        return Ok(o);
    }
    let spec = Spec { long: &LONG, flags: &FLAGS, short: long_of };
    let (opts, positional) = scan(args, &spec)?;
    for (name, value) in opts {
        let Some(value) = o.common.take(&name, value)? else { continue };
        match name.as_str() {
            "dbname" => o.dbname = Some(value),
            "host" => o.host = Some(value),
            "port" => o.port = Some(value.parse().map_err(|_| format!("invalid port number \"{value}\""))?),
            "username" | "user" => o.username = Some(value),
            "no-password" => o.prompt = Prompt::Never,
            "password" => o.prompt = Prompt::Always,
            "inner-join" | "outer-join" => {
                if o.join.is_some() {
                    return Err("only one of --inner-join and --outer-join may be given, once".into());
                }
                o.join = Some(Join { command: value, outer: name == "outer-join" });
            }
            other => return Err(format!("unrecognized option '--{other}'")),
        }
    }
    o.common.finish(positional, &mut o.dbname, &mut o.username)?;
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
        assert_eq!(o.common.target, Some(pg2arrow::cli::Target::Output("out.arrow".into())));
        assert_eq!(o.common.command.as_deref(), Some("SELECT * FROM t"));
        assert_eq!(o.common.stat, ["a", "b"]);
        assert_eq!(o.common.segment_size, Some(64 << 20));
        let o = p(&["-c", "SELECT 1", "db", "me", "--set", "work_mem:64MB", "-w"]).unwrap();
        assert_eq!((o.dbname.as_deref(), o.username.as_deref()), (Some("db"), Some("me")));
        assert_eq!(o.common.set, [("work_mem".to_string(), "64MB".to_string())]);
        assert_eq!(o.prompt, Prompt::Never);
        assert!(p(&["-h"]).unwrap().common.help);
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
