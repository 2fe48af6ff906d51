//! mysql2arrow's command line (scanned by `pg2arrow::cli`): the original
//! mysql2arrow's options (`-p` is the port and `-P` the password there,
//! unlike the mysql client), pg2arrow's where they apply, the positional
//! `[database [username]]`, and `--help`.

use std::path::PathBuf;

use pg2arrow::cli::{Common, Spec, scan};

pub const USAGE: &str = "\
mysql2arrow dumps the result of a MySQL or MariaDB query into an Apache
Arrow file.

Usage:
  mysql2arrow [OPTION]... [database] [username]

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

Value options:
      --zero-date=error|null  a zero date or datetime ('0000-00-00', or a
                            zero month or day) is an error (default) or
                            written as NULL
      --time-as-interval    write TIME columns as intervals (TIME values
                            below 00:00:00 or from 24:00:00 are an error
                            for Arrow's time of day)

Connection options:
  -h, --host=HOSTNAME       database server host (a path: its socket)
  -p, --port=PORT           database server port
  -S, --socket=PATH         database server's Unix socket
  -u, --user=USERNAME       database user name
  -P, --password=PASS       password to use when connecting to server
  -w, --no-password         never prompt for a password
      --defaults-file=FILE  read only this option file (default:
                            /etc/mysql/my.cnf, /etc/my.cnf, ~/.my.cnf;
                            groups [client] and [mysql2arrow])
      --no-defaults         read no option file

Other options:
      --set=NAME:VALUE      session variable to set before the query
      --progress            show the progress of the job
      --dump=FILENAME       print the schema, custom metadata and record
                            batch layout of an Arrow file
      --recover=FILENAME    put back an Arrow file whose --append was killed
      --help                show this message
      --version             show the version

Environment: MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_UNIX_PORT, MYSQL_PWD, USER.
";

/// Password prompting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prompt {
    /// When the server refuses the login without a password and stdin
    /// is a terminal.
    #[default]
    IfNeeded,
    Never,
}

/// Which option files are read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Defaults {
    #[default]
    Standard,
    File(PathBuf),
    None,
}

#[derive(Debug, Default)]
pub struct Options {
    pub dbname: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub socket: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub prompt: Prompt,
    pub defaults: Defaults,
    /// Zero dates as NULL rather than an error.
    pub zero_date_null: bool,
    pub time_as_interval: bool,
    /// The query, the output and the rest both tools share.
    pub common: Common,
}

/// mysql2arrow's own options (`pg2arrow::cli::COMMON_LONG` are the shared ones).
const LONG: [&str; 13] = [
    "dbname",
    "database",
    "zero-date",
    "time-as-interval",
    "host",
    "port",
    "socket",
    "user",
    "username",
    "password",
    "no-password",
    "defaults-file",
    "no-defaults",
];

const FLAGS: [&str; 3] = ["time-as-interval", "no-password", "no-defaults"];

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
        'S' => "socket",
        'u' => "user",
        'P' => "password",
        'w' => "no-password",
        '?' => "help",
        _ => return None,
    })
}

/// Parse the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    // `mysql2arrow -h` alone (no host given) shows the usage, as pg2arrow's
    if args.len() == 1 && args[0] == "-h" {
        o.common.help = true;
        return Ok(o);
    }
    let spec = Spec { long: &LONG, flags: &FLAGS, short: long_of };
    let (opts, positional) = scan(args, &spec)?;
    for (name, value) in opts {
        let Some(value) = o.common.take(&name, value)? else { continue };
        match name.as_str() {
            "dbname" | "database" => o.dbname = Some(value),
            "zero-date" => {
                o.zero_date_null = match value.to_ascii_lowercase().as_str() {
                    "error" => false,
                    "null" => true,
                    _ => return Err(format!("--zero-date is \"error\" or \"null\", not \"{value}\"")),
                }
            }
            "time-as-interval" => o.time_as_interval = true,
            "host" => o.host = Some(value),
            "port" => o.port = Some(value.parse().map_err(|_| format!("invalid port number \"{value}\""))?),
            "socket" => o.socket = Some(value),
            "user" | "username" => o.user = Some(value),
            "password" => o.password = Some(value),
            "no-password" => o.prompt = Prompt::Never,
            "defaults-file" => o.defaults = Defaults::File(PathBuf::from(value)),
            "no-defaults" => o.defaults = Defaults::None,
            other => return Err(format!("unrecognized option '--{other}'")),
        }
    }
    o.common.finish(positional, &mut o.dbname, &mut o.user)?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Options, String> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_original_spellings() {
        let o = p(&["-d", "mysql", "-u", "root", "-t", "t1", "-o", "/dev/shm/hoge.arrow"]).unwrap();
        assert_eq!((o.dbname.as_deref(), o.user.as_deref()), (Some("mysql"), Some("root")));
        assert_eq!(o.common.command.as_deref(), Some("SELECT * FROM t1"));
        assert_eq!(o.common.target, Some(pg2arrow::cli::Target::Output("/dev/shm/hoge.arrow".into())));
        let o = p(&["-c", "SELECT 1", "-h", "db1", "-p", "3307", "-Psecret", "--set", "sql_mode:ANSI", "shop", "me"])
            .unwrap();
        assert_eq!((o.host.as_deref(), o.port, o.password.as_deref()), (Some("db1"), Some(3307), Some("secret")));
        assert_eq!((o.dbname.as_deref(), o.user.as_deref()), (Some("shop"), Some("me")));
        assert_eq!(o.common.set, [("sql_mode".to_string(), "ANSI".to_string())]);
        let o = p(&["-t", "x", "--zero-date=NULL", "--time-as-interval", "-w", "--no-defaults"]).unwrap();
        assert!(o.zero_date_null && o.time_as_interval && o.prompt == Prompt::Never && o.defaults == Defaults::None);
        assert!(p(&["-h"]).unwrap().common.help);
        assert!(p(&["--dump", "f.arrow"]).unwrap().common.dump.is_some());
    }

    #[test]
    fn errors() {
        assert!(p(&["-c", "x", "-t", "y"]).unwrap_err().contains("exclusive"));
        assert!(p(&["-t", "x", "--zero-date=maybe"]).unwrap_err().contains("\"error\" or \"null\""));
        assert!(p(&["-t", "x", "-p", "port"]).unwrap_err().contains("invalid port"));
        assert!(p(&["-o", "a"]).unwrap_err().contains("no query"));
        assert!(p(&["-t", "x", "-U", "me"]).unwrap_err().contains("invalid option"));
        assert!(p(&["-t", "x", "a", "b", "c"]).unwrap_err().contains("too many"));
    }
}
