//! One dump: `--set` as session variables, the query prepared (the
//! binary protocol: typed values, no text parsing) and its columns
//! planned, the rows streamed (the client reads them from the socket as
//! they are consumed: memory stays bounded by one record batch) into
//! record batches.

use arrow_schema::Field;
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use pg2arrow::batch::{self, Batcher};
use pg2arrow::cli::DEFAULT_SEGMENT;
use pgstrom_arrow::pgtype::field;

use crate::connect::error_text;
use crate::options::Options;
use crate::types::{self, ColPlan};

/// Session variables mysql2arrow sets itself (connect.rs): changing them
/// would mislabel the values.
const OURS: [&str; 6] = [
    "time_zone",
    "names",
    "character_set_results",
    "character_set_client",
    "character_set_connection",
    "collation_connection",
];

/// `SET SESSION name = value` for `--set name:value`: a number or a
/// keyword (ON, OFF, DEFAULT, TRUE, FALSE) as it is, anything else as a
/// quoted string.
pub fn set_statement(name: &str, value: &str) -> Result<String, String> {
    let n = name.trim();
    let ok = n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !ok {
        return Err(format!("--set {name}: not a variable name"));
    }
    if OURS.contains(&n.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "--set {n}: mysql2arrow sets it itself (values are read in utf8mb4, TIMESTAMP values in UTC)"
        ));
    }
    let v = value.trim();
    let bare = v.parse::<f64>().is_ok() && !v.is_empty() && !v.contains(|c: char| c.is_ascii_alphabetic())
        || ["on", "off", "default", "true", "false"].contains(&v.to_ascii_lowercase().as_str());
    let v = if bare { v.to_string() } else { format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''")) };
    Ok(format!("SET SESSION {n} = {v}"))
}

/// Run the dump described by `o` on `conn`; returns the file written.
pub fn run(o: &Options, conn: &mut Conn) -> Result<std::path::PathBuf, String> {
    let command = o.common.command.as_deref().expect("checked by the options").trim().trim_end_matches(';').to_string();
    for (name, value) in &o.common.set {
        let sql = set_statement(name, value)?;
        conn.query_drop(&sql).map_err(|e| format!("--set {name}:{value}: {}", error_text(&e)))?;
    }
    let stmt = conn.prep(&command).map_err(|e| {
        let hint = match &e {
            mysql::Error::MySqlError(m) if m.code == 1295 => {
                " (mysql2arrow runs its command as a prepared statement: give a query)"
            }
            _ => "",
        };
        format!("the query: {}{hint}", error_text(&e))
    })?;
    if stmt.num_columns() == 0 {
        return Err("the query returns no columns (it must be a query: SELECT, TABLE, VALUES, ...)".into());
    }
    let mut result = conn.exec_iter(&stmt, ()).map_err(|e| format!("the query: {}", error_text(&e)))?;
    let cols = result.columns();
    let cols = cols.as_ref();
    let names: Vec<String> = cols.iter().map(|c| c.name_str().into_owned()).collect();
    let plans: Vec<ColPlan> = cols.iter().map(|c| types::plan(c, o.time_as_interval)).collect();
    for (n, p) in names.iter().zip(&plans) {
        if let Some(note) = &p.note {
            eprintln!("mysql2arrow: column \"{n}\": {note}");
        }
    }
    let fields: Vec<Field> = names.iter().zip(&plans).map(|(n, p)| field(n, &p.plan)).collect();
    let arrow_plans: Vec<_> = plans.iter().map(|p| p.plan.clone()).collect();
    let stat_fields = batch::stat_fields(&o.common.stat, &fields, &arrow_plans)?;
    let schema = batch::schema(fields, &command);
    let path = batch::open_output(o.common.target.as_ref(), &schema, &stat_fields)?;
    let segment = o.common.segment_size.unwrap_or(DEFAULT_SEGMENT);
    let mut b = Batcher::new(schema, arrow_plans, segment, stat_fields, o.common.progress);
    let convs: Vec<types::Conv> = plans.iter().map(|p| p.conv).collect();
    for row in result.by_ref() {
        let row = row.map_err(|e| format!("the query: {}", error_text(&e)))?;
        for (i, &conv) in convs.iter().enumerate() {
            let v = row.as_ref(i).unwrap_or(&Value::NULL);
            let n = types::value(conv, v, o.zero_date_null)
                .map_err(|e| format!("column \"{}\" of row {}: {e}", names[i], b.progress.rows + 1))?;
            b.append_native(i, n)?;
        }
        b.row_done()?;
    }
    drop(result);
    b.finish()?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings() {
        assert_eq!(
            set_statement("sql_mode", "ANSI,NO_ZERO_DATE").unwrap(),
            "SET SESSION sql_mode = 'ANSI,NO_ZERO_DATE'"
        );
        assert_eq!(set_statement("max_statement_time", "2.5").unwrap(), "SET SESSION max_statement_time = 2.5");
        assert_eq!(set_statement("autocommit", "OFF").unwrap(), "SET SESSION autocommit = OFF");
        assert_eq!(set_statement("x", "it's").unwrap(), "SET SESSION x = 'it''s'");
        assert_eq!(set_statement("x", "1e3").unwrap(), "SET SESSION x = '1e3'");
        assert!(set_statement("time_zone", "+09:00").unwrap_err().contains("UTC"));
        assert!(set_statement("a; DROP", "1").unwrap_err().contains("not a variable"));
    }
}
