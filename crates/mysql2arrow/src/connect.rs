//! Connecting as the mysql client does: the command line first, then the
//! option files' groups [client], [client-server], [client-mariadb] and
//! [mysql2arrow] (/etc/my.cnf, /etc/mysql/my.cnf with its `!include` and
//! `!includedir`, ~/.my.cnf; or `--defaults-file`), then MYSQL_HOST,
//! MYSQL_TCP_PORT, MYSQL_UNIX_PORT and MYSQL_PWD.  A host that is absent
//! or `localhost` with a socket known means the Unix socket; a host that
//! is a path is a socket.  Without a password, a refused login asks for
//! one when stdin is a terminal (`-w`: never).  No TLS.
//!
//! Every session reads values in utf8mb4 and TIMESTAMP values in UTC
//! (`SET NAMES utf8mb4`, `time_zone = '+00:00'`): the Arrow file says so
//! (timestamps with time zone UTC).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use mysql::{Conn, OptsBuilder};

use pg2arrow::cli::{env, os_user};

use crate::options::{Defaults, Options, Prompt};

/// The session settings every connection starts with.
pub const SESSION_INIT: [&str; 2] = ["SET NAMES utf8mb4", "SET time_zone = '+00:00'"];

/// The option file groups read.
const GROUPS: [&str; 4] = ["client", "client-server", "client-mariadb", "mysql2arrow"];

/// A MySQL error as the mysql client prints it.
pub fn error_text(e: &mysql::Error) -> String {
    match e {
        mysql::Error::MySqlError(m) => format!("ERROR {} ({}): {}", m.code, m.state, m.message),
        mysql::Error::IoError(io) => format!("lost the connection to the server: {io}"),
        mysql::Error::CodecError(c) => format!("lost the connection to the server: {c}"),
        mysql::Error::DriverError(d) => d.to_string(),
        other => other.to_string(),
    }
}

/// `key = value` pairs of the groups we read, later files and lines
/// overriding earlier ones; keys with `_` as `-`.
#[derive(Debug, Default)]
pub struct OptionFiles(HashMap<String, String>);

impl OptionFiles {
    pub fn read(d: &Defaults) -> Result<OptionFiles, String> {
        let mut o = OptionFiles::default();
        match d {
            Defaults::None => {}
            Defaults::File(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("could not read \"{}\": {e}", p.display()))?;
                o.parse(&text, p.parent().unwrap_or(Path::new(".")), 0);
            }
            Defaults::Standard => {
                let mut files = vec![PathBuf::from("/etc/my.cnf"), PathBuf::from("/etc/mysql/my.cnf")];
                if let Some(h) = env("HOME") {
                    files.push(Path::new(&h).join(".my.cnf"));
                }
                for f in files {
                    o.file(&f, 0);
                }
            }
        }
        Ok(o)
    }

    fn file(&mut self, p: &Path, depth: usize) {
        if let Ok(text) = std::fs::read_to_string(p) {
            self.parse(&text, p.parent().unwrap_or(Path::new(".")), depth);
        }
    }

    /// One file's text: `[group]`, `key = value` (quotes stripped),
    /// `key` alone, `#` and `;` comments, `!include FILE` and
    /// `!includedir DIR` (its `*.cnf` files in name order).
    pub fn parse(&mut self, text: &str, dir: &Path, depth: usize) {
        let mut ours = false;
        for line in text.lines() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                continue;
            }
            if depth < 8 {
                if let Some(f) = l.strip_prefix("!includedir") {
                    let d = dir.join(f.trim());
                    let mut names: Vec<PathBuf> = std::fs::read_dir(&d)
                        .map(|it| it.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "cnf")))
                        .map(|it| it.collect())
                        .unwrap_or_default();
                    names.sort();
                    for n in names {
                        self.file(&n, depth + 1);
                    }
                    continue;
                }
                if let Some(f) = l.strip_prefix("!include") {
                    self.file(&dir.join(f.trim()), depth + 1);
                    continue;
                }
            }
            if let Some(g) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                ours = GROUPS.contains(&g.trim().to_ascii_lowercase().as_str());
                continue;
            }
            if !ours {
                continue;
            }
            let (k, v) = l.split_once('=').unwrap_or((l, ""));
            let mut v = v.trim();
            if v.len() >= 2 && (v.starts_with('"') && v.ends_with('"') || v.starts_with('\'') && v.ends_with('\'')) {
                v = &v[1..v.len() - 1];
            } else if let Some(at) = v.find(" #") {
                v = v[..at].trim_end();
            }
            self.0.insert(k.trim().replace('_', "-").to_ascii_lowercase(), v.to_string());
        }
    }

    pub fn get(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// TCP host, or None for the socket.
    pub host: Option<String>,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub password: Option<String>,
    pub dbname: Option<String>,
}

impl Target {
    fn describe(&self) -> String {
        match (&self.host, &self.socket) {
            (Some(h), _) => format!("server at \"{h}\", port {}", self.port),
            (None, Some(s)) => format!("server on socket \"{s}\""),
            (None, None) => "server".into(),
        }
    }
}

/// Where to connect for `o`, with the option files `f`.
pub fn target(o: &Options, f: &OptionFiles) -> Result<Target, String> {
    let host = o.host.clone().or_else(|| f.get("host")).or_else(|| env("MYSQL_HOST"));
    let port_text = o.port.map(|p| p.to_string()).or_else(|| f.get("port")).or_else(|| env("MYSQL_TCP_PORT"));
    let port = match port_text {
        Some(p) => p.trim().parse().map_err(|_| format!("invalid port number \"{p}\""))?,
        None => 3306,
    };
    let mut socket = o.socket.clone().or_else(|| f.get("socket")).or_else(|| env("MYSQL_UNIX_PORT"));
    let host = match host {
        Some(h) if h.starts_with('/') => {
            socket = Some(h);
            None
        }
        Some(h) if h == "localhost" && socket.is_some() => None,
        Some(h) => Some(h),
        None if socket.is_some() => None,
        None if Path::new("/run/mysqld/mysqld.sock").exists() => {
            socket = Some("/run/mysqld/mysqld.sock".into());
            None
        }
        None => Some("localhost".into()),
    };
    Ok(Target {
        socket: if host.is_none() { socket } else { None },
        host,
        port,
        user: o.user.clone().or_else(|| f.get("user")).unwrap_or_else(|| os_user("root")),
        password: o.password.clone().or_else(|| f.get("password")).or_else(|| env("MYSQL_PWD")),
        dbname: o.dbname.clone().or_else(|| f.get("database")),
    })
}

fn open(t: &Target) -> Result<Conn, mysql::Error> {
    let b = OptsBuilder::new()
        .ip_or_hostname(t.host.clone())
        .tcp_port(t.port)
        .socket(t.socket.clone())
        .prefer_socket(false)
        .user(Some(t.user.clone()))
        .pass(t.password.clone())
        .db_name(t.dbname.clone())
        .init(SESSION_INIT.to_vec())
        .stmt_cache_size(0);
    Conn::new(b)
}

/// Connect for `o`.
pub fn connect(o: &Options) -> Result<Conn, String> {
    let files = OptionFiles::read(&o.defaults)?;
    let mut t = target(o, &files)?;
    match open(&t) {
        Ok(c) => Ok(c),
        // access denied without a password: ask for one, as pg2arrow does
        Err(mysql::Error::MySqlError(e))
            if e.code == 1045
                && t.password.is_none()
                && o.prompt == Prompt::IfNeeded
                && std::io::stdin().is_terminal() =>
        {
            let pw = rpassword::prompt_password("Enter password: ")
                .map_err(|e| format!("could not read the password: {e}"))?;
            t.password = Some(pw);
            open(&t).map_err(|e| format!("could not connect to the {}: {}", t.describe(), error_text(&e)))
        }
        Err(e) => Err(format!("could not connect to the {}: {}", t.describe(), error_text(&e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_files() {
        let mut f = OptionFiles::default();
        f.parse(
            "# comment\n[mysqld]\nport = 1\n[client]\nport=3307\nuser = 'me'\npassword=\"p w\"\n\
             [client-server]\nsocket = /run/x.sock # trailing\n[mysql2arrow]\nno_auto_rehash\n",
            Path::new("/nonexistent"),
            0,
        );
        assert_eq!(f.get("port").as_deref(), Some("3307"));
        assert_eq!(f.get("user").as_deref(), Some("me"));
        assert_eq!(f.get("password").as_deref(), Some("p w"));
        assert_eq!(f.get("socket").as_deref(), Some("/run/x.sock"));
        assert_eq!(f.get("no-auto-rehash").as_deref(), Some(""));
        let o = Options { host: Some("/tmp/m.sock".into()), user: Some("u".into()), ..Default::default() };
        let t = target(&o, &f).unwrap();
        assert_eq!((t.host, t.socket.as_deref(), t.port), (None, Some("/tmp/m.sock"), 3307));
        let o = Options { host: Some("db1".into()), ..Default::default() };
        let t = target(&o, &f).unwrap();
        assert_eq!((t.host.as_deref(), t.socket), (Some("db1"), None));
        let o = Options { host: Some("localhost".into()), ..Default::default() };
        assert_eq!(target(&o, &f).unwrap().socket.as_deref(), Some("/run/x.sock"));
    }
}
