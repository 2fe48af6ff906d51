//! SQL entry points to device programs, outside any query plan (the
//! nodes run them inside queries):
//!
//! - `pgstrom.device_eval(rel, expr, engine)`: compile `expr` over the
//!   columns of `rel`, evaluate it on an engine for every row, and return
//!   (ctid, value as text): the differential tests compare this with
//!   PostgreSQL's own evaluation, row by row, and errors with errors.
//! - `pgstrom.device_program(rel, expr)`: the program listing (what EXPLAIN
//!   VERBOSE prints as `GPU Program`), or why the expression is left to
//!   PostgreSQL.
//! - `pgstrom.device_functions()`: the device function catalog.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::catalog::{self, FUNCTIONS};
use pgstrom_runtime::engine::{ColumnData, EvalOutput, ParamValue};

use crate::chunk::ColumnChunk;
use crate::codegen::{self, Compiled};
use crate::errors;

/// Most rows `device_eval` reads (it holds them all in memory).
const DEVICE_EVAL_MAX_ROWS: u64 = 10_000_000;

fn relation_name(rel: pg_sys::Oid) -> String {
    // SAFETY: valid OID of a relation (regclass input checked it).
    unsafe {
        let nsp = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(rel));
        let name = pg_sys::get_rel_name(rel);
        if nsp.is_null() || name.is_null() {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
                format!("relation with OID {} does not exist", rel.to_u32()),
                None,
                None,
            );
        }
        CStr::from_ptr(pg_sys::quote_qualified_identifier(nsp, name)).to_string_lossy().into_owned()
    }
}

fn column_name(rel: pg_sys::Oid, attnum: i16) -> String {
    // SAFETY: attnum came from a Var of this relation.
    unsafe {
        let n = pg_sys::get_attname(rel, attnum, false);
        CStr::from_ptr(pg_sys::quote_identifier(n)).to_string_lossy().into_owned()
    }
}

/// Parse and analyze `SELECT (expr) FROM ONLY rel`, fold constants as the
/// planner does, and compile the expression.
fn compile_over(rel: pg_sys::Oid, expr: &str) -> Result<Compiled, codegen::NotSupported> {
    let sql = format!("SELECT ({expr}) FROM ONLY {}", relation_name(rel));
    let csql = CString::new(sql).unwrap_or_else(|_| {
        errors::raise_plain(PgSqlErrorCode::ERRCODE_SYNTAX_ERROR, "expression contains a NUL byte".into(), None, None)
    });
    // SAFETY: parser entry points with a valid query string; results are
    // palloc'd in the current memory context.
    unsafe {
        let raw = pg_sys::pg_parse_query(csql.as_ptr());
        if pg_sys::list_length(raw) != 1 {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
                "expression must be a single scalar expression".into(),
                None,
                None,
            );
        }
        let rs = pg_sys::list_nth(raw, 0) as *mut pg_sys::RawStmt;
        let q = pg_sys::parse_analyze_fixedparams(rs, csql.as_ptr(), std::ptr::null_mut(), 0, std::ptr::null_mut());
        if (*q).commandType != pg_sys::CmdType::CMD_SELECT
            || pg_sys::list_length((*q).targetList) != 1
            || pg_sys::list_length((*q).rtable) != 1
            || (*q).hasAggs
            || (*q).hasWindowFuncs
            || (*q).hasSubLinks
            || (*q).hasTargetSRFs
        {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
                "expression must be a single scalar expression over the relation's columns".into(),
                None,
                None,
            );
        }
        let tle = pg_sys::list_nth((*q).targetList, 0) as *mut pg_sys::TargetEntry;
        let mut e = (*tle).expr as *mut pg_sys::Node;
        pg_sys::fix_opfuncids(e);
        e = pg_sys::eval_const_expressions(std::ptr::null_mut(), e);
        codegen::compile_any_result(e, 1)
    }
}

fn require(rel: pg_sys::Oid, expr: &str) -> Compiled {
    match compile_over(rel, expr) {
        Ok(c) => c,
        Err(why) => errors::raise_plain(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            "expression cannot run on the device".into(),
            Some(why.0),
            None,
        ),
    }
}

/// Rows read through SPI: their ctids and the columns in device layout.
struct Chunk {
    ctids: Vec<String>,
    columns: ColumnChunk,
}

fn read_columns(rel: pg_sys::Oid, columns: &[(i16, u16)]) -> Chunk {
    let mut sql = String::from("SELECT ctid::text");
    for (attnum, _) in columns {
        sql.push_str(", ");
        sql.push_str(&column_name(rel, *attnum));
    }
    sql.push_str(&format!(" FROM ONLY {}", relation_name(rel)));
    Spi::connect(|client| {
        let table = match client.select(sql.as_str(), None, &[]) {
            Ok(t) => t,
            Err(e) => {
                errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("cannot read: {e}"), None, None)
            }
        };
        let n = table.len();
        if n as u64 > DEVICE_EVAL_MAX_ROWS {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                format!("device_eval reads at most {DEVICE_EVAL_MAX_ROWS} rows, the relation has {n}"),
                None,
                None,
            );
        }
        let mut chunk = Chunk { ctids: Vec::with_capacity(n), columns: ColumnChunk::new(columns) };
        // SAFETY: SPI_tuptable holds the n rows just selected; column i of
        // `columns` is result column i + 2.
        unsafe {
            let tt = pg_sys::SPI_tuptable;
            let tupdesc = (*tt).tupdesc;
            for r in 0..n {
                let tup = *(*tt).vals.add(r);
                let ctid = pg_sys::SPI_getvalue(tup, tupdesc, 1);
                chunk.ctids.push(CStr::from_ptr(ctid).to_string_lossy().into_owned());
                chunk.columns.append_row(|attnum| {
                    let c = columns.iter().position(|(a, _)| *a == attnum).expect("a column of the chunk");
                    let mut isnull = false;
                    let d = pg_sys::SPI_getbinval(tup, tupdesc, (c + 2) as i32, &mut isnull);
                    (isnull, d)
                });
            }
        }
        chunk
    })
}

/// Evaluate a Var-free expression once and return it as a parameter.
fn evaluate_once(expr: *mut pg_sys::Node, t: u16) -> ParamValue {
    // SAFETY: expr is a valid, Var-free expression; evaluate_expr returns a
    // Const (or raises the expression's own error).
    unsafe {
        let c = pg_sys::evaluate_expr(
            expr as *mut pg_sys::Expr,
            pg_sys::exprType(expr),
            pg_sys::exprTypmod(expr),
            pg_sys::exprCollation(expr),
        ) as *mut pg_sys::Const;
        if (*c).constisnull { ParamValue::null() } else { codegen::param_value(t, (*c).constvalue) }
    }
}

/// Datum text of raw result bits of device type `t`, via the type's
/// output function.
fn output_text(type_oid: pg_sys::Oid, t: u16, bits: i64) -> String {
    let raw: u64 = match catalog::type_info(t).map(|ti| ti.name) {
        Some("FLOAT4") => bits as u64 & 0xffff_ffff,
        // a float2 result is held as the float4 of its value (exact)
        Some("FLOAT2") => pgstrom_arrow::float2::f16::from_f32(f32::from_bits(bits as u32)).to_bits() as u64,
        _ => bits as u64,
    };
    let mut func = pg_sys::InvalidOid;
    let mut varlena = false;
    // SAFETY: by-value datum of the type; output functions palloc a cstring.
    unsafe {
        pg_sys::getTypeOutputInfo(type_oid, &mut func, &mut varlena);
        let s = pg_sys::OidOutputFunctionCall(func, pg_sys::Datum::from(raw as usize));
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// Datum text of a uuid, interval or timetz result (its stored bytes),
/// via the type's output function.
fn output_wide_text(type_oid: pg_sys::Oid, bytes: &[u8]) -> String {
    let mut func = pg_sys::InvalidOid;
    let mut varlena = false;
    // the value as PostgreSQL holds it: 8-byte aligned bytes
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    // SAFETY: words has room for the bytes; output functions read the
    // by-reference value and palloc a cstring.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().cast::<u8>(), bytes.len());
        pg_sys::getTypeOutputInfo(type_oid, &mut func, &mut varlena);
        let s = pg_sys::OidOutputFunctionCall(func, pg_sys::Datum::from(words.as_ptr()));
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// Datum text of a text, bpchar or bytea value's bytes, via the type's
/// output function.
fn output_varlena_text(type_oid: pg_sys::Oid, bytes: &[u8]) -> String {
    let mut func = pg_sys::InvalidOid;
    let mut varlena = false;
    let v = crate::codegen::aggregates::varlena_datum(bytes);
    // SAFETY: output functions palloc a cstring.
    unsafe {
        pg_sys::getTypeOutputInfo(type_oid, &mut func, &mut varlena);
        let s = pg_sys::OidOutputFunctionCall(func, v);
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// Row `i` of `cols` as columns of one row (validity bits copied into
/// their own bytes, since a bitmap cannot start mid-byte).
fn row_of<'a>(cols: &[ColumnData<'a>], i: usize) -> Vec<ColumnData<'a>> {
    const VALID: [u8; 1] = [1];
    const NULL: [u8; 1] = [0];
    cols.iter()
        .map(|c| {
            let width = catalog::type_info(c.type_id).map_or(0, |t| t.width);
            let valid = c.validity.is_none_or(|b| b[i / 8] & (1 << (i % 8)) != 0);
            ColumnData {
                type_id: c.type_id,
                values: if width == 0 { c.values } else { &c.values[i * width..(i + 1) * width] },
                validity: Some(if valid { &VALID } else { &NULL }),
                offsets: c.offsets.map(|o| &o[i..i + 2]),
                file: None,
                resident: None,
                store: None,
            }
        })
        .collect()
}

/// PostgreSQL's own value of `expr` at the row `ctid` of `rel`, as text.
fn postgres_value(rel: pg_sys::Oid, expr: &str, ctid: &str) -> Option<String> {
    // the type's output function, as for the device's values
    let sql = format!(
        "SELECT CASE WHEN v IS NULL THEN NULL ELSE format('%s', v) END FROM (SELECT ({expr}) AS v FROM ONLY {} WHERE ctid = '{ctid}') s",
        relation_name(rel)
    );
    Spi::get_one::<String>(&sql).unwrap_or_else(|e| {
        errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("cannot evaluate: {e}"), None, None)
    })
}

#[pg_schema]
mod pgstrom {
    use super::*;
    use crate::engine;

    /// Evaluate `expr` over every row of `rel` on a device engine (called
    /// through `pgstrom.device_eval(regclass, text, text)`).
    #[pg_extern(volatile, parallel_restricted)]
    fn device_eval_oid(
        rel: pg_sys::Oid,
        expr: &str,
        engine: default!(Option<&str>, "NULL"),
    ) -> TableIterator<'static, (name!(ctid, String), name!(value, Option<String>))> {
        let compiled = require(rel, expr);
        let eng = engine::by_name(engine);
        let chunk = read_columns(rel, &compiled.columns);
        let nrows = chunk.ctids.len() as u32;
        let cols = chunk.columns.column_data();
        // Hoisted sub-expressions: evaluated once, here on the CPU, and
        // only when there is a row to evaluate them for.
        let params: Vec<ParamValue> = if nrows == 0 {
            compiled.params.iter().map(|_| ParamValue::null()).collect()
        } else {
            compiled.params.iter().map(|(e, t)| evaluate_once(*e, *t)).collect()
        };
        let result = eng.eval_program(&compiled.program, &cols, &params, nrows);
        let rtype = compiled.program.result_type;
        let width = catalog::type_info(rtype).map_or(0, |t| t.width);
        let text = |out: &EvalOutput, i: usize| {
            (out.nulls[i] == 0).then(|| {
                if rtype == pgstrom_runtime::program::type_id("NUMERIC") {
                    out.numeric(i).map_or_else(String::new, |n| n.to_text())
                } else if width > 8 {
                    output_wide_text(compiled.result_type, &out.wide_bytes(i, width).unwrap_or_default())
                } else if width == 0 {
                    let bytes = out.varlena_bytes(i, &compiled.program.data, &cols).unwrap_or_else(|| {
                        errors::raise_plain(
                            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                            "a variable-length device result lies outside its inputs".into(),
                            None,
                            None,
                        )
                    });
                    output_varlena_text(compiled.result_type, bytes)
                } else {
                    output_text(compiled.result_type, rtype, out.values[i])
                }
            })
        };
        let values: Vec<Option<String>> = match result {
            Ok(out) => {
                let mut values: Vec<Option<String>> = (0..nrows as usize).map(|i| text(&out, i)).collect();
                // Rows the engine did not compute exactly (a GPU's
                // transcendental value, a numeric beyond 38 digits): the
                // CPU engine's value (the same libm as PostgreSQL), or,
                // where no engine computes it, PostgreSQL's own, as the
                // executors do
                for &i in &out.cpu_rows {
                    let i = i as usize;
                    values[i] = match engine::cpu().eval_program(&compiled.program, &row_of(&cols, i), &params, 1) {
                        Ok(one) if one.cpu_rows.is_empty() => text(&one, 0),
                        Ok(_) => postgres_value(rel, expr, &chunk.ctids[i]),
                        Err(e) => errors::raise("device program failed", &e),
                    };
                }
                values
            }
            // An error the engine raised at some row: rows before it that
            // PostgreSQL evaluates may raise theirs first.  Row by row, as
            // PostgreSQL goes.
            Err(pgstrom_runtime::DeviceError::Sql { .. }) => (0..nrows as usize)
                .map(|i| match engine::cpu().eval_program(&compiled.program, &row_of(&cols, i), &params, 1) {
                    Ok(one) if one.cpu_rows.is_empty() => text(&one, 0),
                    Ok(_) => postgres_value(rel, expr, &chunk.ctids[i]),
                    Err(e) => errors::raise("device program failed", &e),
                })
                .collect(),
            Err(e) => errors::raise("device program failed", &e),
        };
        TableIterator::new(chunk.ctids.into_iter().zip(values).collect::<Vec<_>>())
    }

    /// The device program for `expr` over `rel`, one instruction per line
    /// (called through `pgstrom.device_program(regclass, text)`).
    #[pg_extern(volatile, parallel_safe)]
    fn device_program_oid(rel: pg_sys::Oid, expr: &str) -> String {
        let c = require(rel, expr);
        let names: Vec<String> = c.columns.iter().map(|(a, _)| column_name(rel, *a)).collect();
        let mut text = c.program.disassemble(&|i| names.get(i as usize).cloned().unwrap_or_else(|| format!("${i}")));
        for (i, (e, _)) in c.params.iter().enumerate() {
            // SAFETY: deparse a valid expression with no relation context.
            let s = unsafe {
                CStr::from_ptr(pg_sys::deparse_expression(*e, std::ptr::null_mut(), false, false))
                    .to_string_lossy()
                    .into_owned()
            };
            text.push_str(&format!("  ${} = {s}  (evaluated once on the CPU)\n", i + 1));
        }
        text
    }

    /// The device function catalog: what expressions can run on the device.
    #[pg_extern(immutable, parallel_safe)]
    fn device_functions() -> TableIterator<
        'static,
        (
            name!(func_id, i32),
            name!(name, String),
            name!(pg_function, pg_sys::Oid),
            name!(nargs, i32),
            name!(result_type, String),
            name!(label, String),
        ),
    > {
        let oid_of = |id: u16| {
            codegen::DEVICE_FUNCTION_OIDS.iter().find(|(_, i)| *i == id).map(|(o, _)| *o).unwrap_or_else(|| {
                catalog::func_info(id).map_or(pg_sys::InvalidOid, |f| codegen::extension_function_oid(f.pg_function))
            })
        };
        TableIterator::new(FUNCTIONS.iter().map(move |f| {
            (
                f.id as i32,
                f.name.to_ascii_lowercase(),
                oid_of(f.id),
                f.nargs as i32,
                catalog::type_info(f.result).map_or("?", |t| t.name).to_ascii_lowercase(),
                f.label.to_string(),
            )
        }))
    }
}

extension_sql!(
    r#"
CREATE VIEW pgstrom.device_functions AS
  SELECT func_id, name, pg_function::regprocedure AS pg_function, nargs, result_type, label
    FROM pgstrom.device_functions();
COMMENT ON VIEW pgstrom.device_functions IS 'functions pg_strom can evaluate on the device';
"#,
    name = "device_functions_view",
    requires = [pgstrom::device_functions]
);

extension_sql!(
    r#"
CREATE FUNCTION pgstrom.device_eval(rel regclass, expr text, engine text DEFAULT NULL)
RETURNS TABLE (ctid text, value text)
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $$ SELECT * FROM pgstrom.device_eval_oid(rel, expr, engine) $$;
COMMENT ON FUNCTION pgstrom.device_eval(regclass, text, text) IS
  'evaluate a scalar expression over every row of a relation on a device engine';

CREATE FUNCTION pgstrom.device_program(rel regclass, expr text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$ SELECT pgstrom.device_program_oid(rel, expr) $$;
COMMENT ON FUNCTION pgstrom.device_program(regclass, text) IS
  'the device program compiled from a scalar expression over a relation';
"#,
    name = "device_eval_wrappers",
    requires = [pgstrom::device_eval_oid, pgstrom::device_program_oid]
);
