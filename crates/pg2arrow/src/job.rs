//! One dump: the query prepared and its columns planned, the rows streamed
//! in binary (memory stays bounded: the client library's bounded channel,
//! or for joins a portal fetch of about 8 MB, and one record batch), the per-row sub-query of --inner-join /
//! --outer-join, record batches cut at the segment size, statistics, and
//! the progress display.

use std::error::Error;

use arrow_schema::Field;
use futures_util::{TryStreamExt, pin_mut};
use pg2arrow::batch::{self, Batcher};
use pg2arrow::cli::DEFAULT_SEGMENT;
use tokio_postgres::types::{FromSql, IsNull, Kind, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Statement, Transaction};

use crate::connect::error_text;
use crate::options::Options;
use crate::plan::{Plan, field, plan_of};

/// Bytes per fetch from the portal of a join dump (the row count adapts
/// to the width).
const FETCH_BYTES: usize = 8 << 20;

/// A value as the server sent it (binary format).
struct Raw<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(Some(raw)))
    }
    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(None))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A parameter passed on as the server sent it (same type, binary).
#[derive(Debug)]
struct Param(Option<Vec<u8>>);

impl ToSql for Param {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match &self.0 {
            Some(b) => {
                out.extend_from_slice(b);
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        }
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    to_sql_checked!();
}

fn db(e: tokio_postgres::Error) -> String {
    error_text(&e)
}

/// A prepared query with a plan per column; columns without an Arrow
/// counterpart are fetched as text through a wrapping query.
struct Query {
    stmt: Statement,
    names: Vec<String>,
    plans: Vec<Plan>,
    /// The columns fetched as text (for the notice).
    as_text: Vec<String>,
}

/// The attribute type modifiers of every composite type among `types`
/// (nested in arrays, domains and other composites), by type oid.
async fn composite_typmods(tx: &Transaction<'_>, types: &[Type]) -> std::collections::HashMap<u32, Vec<i32>> {
    let mut out = std::collections::HashMap::new();
    let mut todo: Vec<Type> = types.to_vec();
    while let Some(ty) = todo.pop() {
        match ty.kind() {
            Kind::Array(t) | Kind::Domain(t) => todo.push(t.clone()),
            Kind::Composite(fields) if !out.contains_key(&ty.oid()) => {
                let mods = tx
                    .query(
                        "SELECT a.atttypmod FROM pg_catalog.pg_attribute a \
                         JOIN pg_catalog.pg_type t ON a.attrelid = t.typrelid \
                         WHERE t.oid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                        &[&ty.oid()],
                    )
                    .await
                    .map(|rows| rows.iter().map(|r| r.get::<_, i32>(0)).collect())
                    .unwrap_or_default();
                out.insert(ty.oid(), mods);
                todo.extend(fields.iter().map(|f| f.type_().clone()));
            }
            _ => {}
        }
    }
    out
}

async fn prepare(tx: &Transaction<'_>, sql: &str, params: &[Type], what: &str) -> Result<Query, String> {
    let stmt = tx.prepare_typed(sql, params).await.map_err(|e| format!("{what}: {}", db(e)))?;
    if stmt.columns().is_empty() {
        return Err(format!("{what} returns no columns (it must be a query: SELECT, TABLE, VALUES, or RETURNING)"));
    }
    let names: Vec<String> = stmt.columns().iter().map(|c| c.name().to_string()).collect();
    let types: Vec<Type> = stmt.columns().iter().map(|c| c.type_().clone()).collect();
    let typmods = composite_typmods(tx, &types).await;
    let mut plans = Vec::new();
    let mut as_text = Vec::new();
    for c in stmt.columns() {
        let ty = c.type_().clone();
        let p = plan_of(&ty, c.type_modifier(), &mut |t| typmods.get(&t.oid()).cloned().unwrap_or_default());
        if p.is_none() {
            as_text.push(format!("{} ({})", c.name(), ty.name()));
        }
        plans.push(p);
    }
    if as_text.is_empty() {
        let plans = plans.into_iter().map(|p| p.expect("planned")).collect();
        return Ok(Query { stmt, names, plans, as_text });
    }
    // SELECT q."1", q."2"::text, ... FROM (sql) q("1", "2", ...)
    let cols: Vec<String> = (1..=plans.len())
        .zip(&plans)
        .map(|(i, p)| if p.is_some() { format!("q.\"{i}\"") } else { format!("q.\"{i}\"::pg_catalog.text") })
        .collect();
    let aliases: Vec<String> = (1..=plans.len()).map(|i| format!("\"{i}\"")).collect();
    let wrapped = format!("SELECT {} FROM ({sql}\n) AS q({})", cols.join(", "), aliases.join(", "));
    let stmt =
        tx.prepare_typed(&wrapped, params).await.map_err(|e| format!("{what} (columns cast to text): {}", db(e)))?;
    let plans = plans.into_iter().map(|p| p.unwrap_or(Plan::Text)).collect();
    Ok(Query { stmt, names, plans, as_text })
}

/// `$(name)` placeholders of a join command as `$1`, `$2`, ...: the
/// command text and, per parameter, the main query's column index.
pub fn placeholders(cmd: &str, names: &[String]) -> Result<(String, Vec<usize>), String> {
    let mut out = String::with_capacity(cmd.len());
    let mut cols: Vec<usize> = Vec::new();
    let mut rest = cmd;
    while let Some(at) = rest.find("$(") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find(')')
            .ok_or_else(|| format!("unterminated placeholder in the join command: \"${}\"", &rest[at + 1..]))?;
        let name = &after[..end];
        let col = names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| format!("the join command refers to $({name}), but the query has no column \"{name}\""))?;
        let k = match cols.iter().position(|&c| c == col) {
            Some(k) => k,
            None => {
                cols.push(col);
                cols.len() - 1
            }
        };
        out.push_str(&format!("${}", k + 1));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, cols))
}

/// Run the dump described by `o` on `client`; returns the file written.
pub async fn run(o: &Options, client: &mut Client) -> Result<std::path::PathBuf, String> {
    let command = o.common.command.as_deref().expect("checked by the options").trim().trim_end_matches(';').to_string();
    for (name, value) in &o.common.set {
        client
            .execute("SELECT pg_catalog.set_config($1, $2, false)", &[name, value])
            .await
            .map_err(|e| format!("--set {name}:{value}: {}", db(e)))?;
    }
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .start()
        .await
        .map_err(db)?;
    let main = prepare(&tx, &command, &[], "the query").await?;
    let join = match &o.join {
        None => None,
        Some(j) => {
            let (sql, cols) = placeholders(&j.command, &main.names)?;
            let types: Vec<Type> = cols.iter().map(|&c| main.stmt.columns()[c].type_().clone()).collect();
            let opt = if j.outer { "--outer-join" } else { "--inner-join" };
            Some((
                prepare(&tx, sql.trim().trim_end_matches(';'), &types, &format!("the {opt} command")).await?,
                cols,
                j.outer,
            ))
        }
    };
    for q in std::iter::once(&main).chain(join.as_ref().map(|j| &j.0)) {
        if !q.as_text.is_empty() {
            eprintln!("pg2arrow: columns written as text (no Arrow type): {}", q.as_text.join(", "));
        }
    }
    let mut fields: Vec<Field> = main.names.iter().zip(&main.plans).map(|(n, p)| field(n, p)).collect();
    let mut plans = main.plans.clone();
    if let Some((q, ..)) = &join {
        fields.extend(q.names.iter().zip(&q.plans).map(|(n, p)| field(n, p)));
        plans.extend(q.plans.iter().cloned());
    }
    let stat_fields = batch::stat_fields(&o.common.stat, &fields, &plans)?;
    let schema = batch::schema(fields, &command);
    let path = batch::open_output(o.common.target.as_ref(), &schema, &stat_fields)?;
    let segment = o.common.segment_size.unwrap_or(DEFAULT_SEGMENT);
    let mut b = Batcher::new(schema, plans, segment, stat_fields, o.common.progress);
    let nmain = main.names.len();
    match &join {
        None => {
            // one Execute run to completion, its rows streamed (the client
            // library's bounded channel holds the server back while
            // batches are written): the server may run it in parallel,
            // which it never does for a portal fetched piece by piece
            let rows = tx
                .query_raw(&main.stmt, std::iter::empty::<&(dyn ToSql + Sync)>())
                .await
                .map_err(|e| format!("the query: {}", db(e)))?;
            pin_mut!(rows);
            while let Some(row) = rows.try_next().await.map_err(|e| format!("the query: {}", db(e)))? {
                for i in 0..nmain {
                    b.append(i, row.try_get::<_, Raw>(i).map(|r| r.0).map_err(db)?)?;
                }
                b.row_done()?;
            }
        }
        // the sub-query runs between fetches of a portal (one connection,
        // one snapshot)
        Some((q, cols, outer)) => {
            let portal = tx.bind(&main.stmt, &[]).await.map_err(|e| format!("the query: {}", db(e)))?;
            let mut fetch = 256;
            loop {
                let rows = tx.query_portal(&portal, fetch).await.map_err(|e| format!("the query: {}", db(e)))?;
                if rows.is_empty() {
                    break;
                }
                let before = b.appended;
                for row in &rows {
                    let raw = |i: usize| row.try_get::<_, Raw>(i).map(|r| r.0).map_err(db);
                    let params: Vec<Param> =
                        cols.iter().map(|&c| raw(c).map(|v| Param(v.map(<[u8]>::to_vec)))).collect::<Result<_, _>>()?;
                    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|x| x as &(dyn ToSql + Sync)).collect();
                    let subs = tx.query(&q.stmt, &refs).await.map_err(|e| format!("the join command: {}", db(e)))?;
                    if subs.is_empty() && *outer {
                        for i in 0..nmain {
                            b.append(i, raw(i)?)?;
                        }
                        for j in 0..q.names.len() {
                            b.append(nmain + j, None)?;
                        }
                        b.row_done()?;
                    }
                    for sub in &subs {
                        for i in 0..nmain {
                            b.append(i, raw(i)?)?;
                        }
                        for j in 0..q.names.len() {
                            let v = sub.try_get::<_, Raw>(j).map(|r| r.0).map_err(db)?;
                            b.append(nmain + j, v)?;
                        }
                        b.row_done()?;
                    }
                }
                // about FETCH_BYTES per fetch, whatever the row width
                let per_row = ((b.appended - before) / rows.len()).max(1);
                fetch = (FETCH_BYTES / per_row).clamp(16, 65_536) as i32;
            }
        }
    }
    tx.commit().await.map_err(db)?;
    b.finish()?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_placeholders() {
        let names: Vec<String> = ["id", "a1", "x y"].iter().map(|s| s.to_string()).collect();
        let (sql, cols) = placeholders("SELECT b1 FROM t_b WHERE $(id) = id AND $(x y) > $(id)", &names).unwrap();
        assert_eq!(sql, "SELECT b1 FROM t_b WHERE $1 = id AND $2 > $1");
        assert_eq!(cols, [0, 2]);
        assert!(placeholders("SELECT $(nope)", &names).unwrap_err().contains("no column \"nope\""));
        assert!(placeholders("SELECT $(id", &names).unwrap_err().contains("unterminated"));
    }
}
