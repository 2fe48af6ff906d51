//! Connecting as libpq tools do: options, then PGHOST / PGPORT / PGUSER /
//! PGDATABASE / PGPASSWORD, the password file (PGPASSFILE or ~/.pgpass),
//! and a prompt when the server asks for a password (-W: always, -w:
//! never).  No TLS: the connection is a Unix socket or plain TCP.

use std::path::{Path, PathBuf};

use tokio_postgres::{Client, Config, NoTls};

use pg2arrow::cli::{env, os_user};

use crate::options::{Options, Prompt};

/// Where and as whom to connect.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub dbname: String,
}

pub fn target(o: &Options) -> Target {
    let host = o.host.clone().or_else(|| env("PGHOST")).unwrap_or_else(|| {
        // libpq's default socket directory on Debian, else its built-in /tmp
        if Path::new("/var/run/postgresql").is_dir() { "/var/run/postgresql".into() } else { "/tmp".into() }
    });
    let port = o.port.or_else(|| env("PGPORT").and_then(|p| p.parse().ok())).unwrap_or(5432);
    let user = o.username.clone().or_else(|| env("PGUSER")).unwrap_or_else(|| os_user("postgres"));
    let dbname = o.dbname.clone().or_else(|| env("PGDATABASE")).unwrap_or_else(|| user.clone());
    Target { host, port, user, dbname }
}

/// The password file's entry for `t` (host `localhost` matches a socket).
fn pgpass(t: &Target) -> Option<String> {
    let path = env("PGPASSFILE").map(PathBuf::from).or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    pgpass_lookup(&std::fs::read_to_string(path).ok()?, t)
}

/// The first line of a password file matching `t`: `host:port:db:user:pw`,
/// `*` matching anything, `\:` and `\\` escaping.
fn pgpass_lookup(text: &str, t: &Target) -> Option<String> {
    let host = if t.host.starts_with('/') { "localhost" } else { t.host.as_str() };
    let port = t.port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = vec![String::new()];
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => fields.last_mut().expect("one").extend(chars.next()),
                ':' if fields.len() < 5 => fields.push(String::new()),
                c => fields.last_mut().expect("one").push(c),
            }
        }
        if fields.len() != 5 {
            continue;
        }
        let want = [host, port.as_str(), t.dbname.as_str(), t.user.as_str()];
        if fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            return Some(fields[4].clone());
        }
    }
    None
}

fn prompt(t: &Target) -> Result<String, String> {
    rpassword::prompt_password(format!("Password for user {}: ", t.user))
        .map_err(|e| format!("could not read the password: {e}"))
}

fn config(t: &Target, password: Option<&str>) -> Config {
    let mut c = Config::new();
    c.host(&t.host).port(t.port).user(&t.user).dbname(&t.dbname).application_name("pg2arrow");
    if let Some(p) = password {
        c.password(p);
    }
    c
}

/// Connect, prompting for a password when needed and allowed; the
/// connection's task is spawned on the current runtime.
pub async fn connect(o: &Options) -> Result<Client, String> {
    let t = target(o);
    let mut password = match o.prompt {
        Prompt::Always => Some(prompt(&t)?),
        _ => env("PGPASSWORD").or_else(|| pgpass(&t)),
    };
    loop {
        match config(&t, password.as_deref()).connect(NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(async move {
                    // its errors reach the client's next call
                    let _ = connection.await;
                });
                return Ok(client);
            }
            Err(e) => {
                let missing = e.to_string().contains("password missing");
                // SAFETY: isatty on stdin.
                let tty = unsafe { libc::isatty(0) } == 1;
                if missing && password.is_none() && o.prompt == Prompt::IfNeeded && tty {
                    password = Some(prompt(&t)?);
                    continue;
                }
                let what = if t.host.starts_with('/') {
                    format!("socket \"{}/.s.PGSQL.{}\"", t.host, t.port)
                } else {
                    format!("server at \"{}\", port {}", t.host, t.port)
                };
                let why = if missing { "no password supplied".to_string() } else { error_text(&e) };
                return Err(format!("connection to {what} failed: {why}"));
            }
        }
    }
}

/// A PostgreSQL error as psql prints it (message, DETAIL, HINT); other
/// errors as the client says them.
pub fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{}:  {}", db.severity(), db.message());
            if let Some(d) = db.detail() {
                s.push_str(&format!("\nDETAIL:  {d}"));
            }
            if let Some(h) = db.hint() {
                s.push_str(&format!("\nHINT:  {h}"));
            }
            s
        }
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(x) = src {
                s.push_str(&format!(": {x}"));
                src = x.source();
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_file() {
        let t = Target { host: "/tmp".into(), port: 5432, user: "me".into(), dbname: "db".into() };
        let text =
            "# comment\nother:5432:db:me:no\nlocalhost:5433:*:me:no\nlocalhost:*:db:me:p\\:w\\\\d\n*:*:*:*:last\n";
        assert_eq!(pgpass_lookup(text, &t).as_deref(), Some("p:w\\d"));
        let t2 = Target { host: "db.example".into(), ..t };
        assert_eq!(pgpass_lookup(text, &t2).as_deref(), Some("last"));
        assert_eq!(pgpass_lookup("bad line\n", &t2), None);
    }
}
