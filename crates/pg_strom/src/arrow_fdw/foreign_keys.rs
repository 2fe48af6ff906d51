//! Arrow_Fdw's declared foreign keys: the table option `foreign_keys`
//! tells the planner how the table's rows reference another table, as a
//! FOREIGN KEY constraint tells it of a heap table (a foreign table cannot
//! have one).
//!
//! PostgreSQL estimates a join along a foreign key as "each referencing
//! row meets one referenced row"; without one it multiplies the
//! selectivities of the key's columns as if they were independent, which
//! for a key of two columns (TPC-H's `lineitem` to `partsupp`) estimates
//! a few rows where millions come, and the plan above goes wrong.  The
//! planner's hook `get_relation_info_hook` adds the declared keys to the
//! planner's list exactly as PostgreSQL adds a heap table's, after which
//! PostgreSQL's own estimate uses them.  Nothing checks or enforces a
//! declaration: a wrong one gives wrong estimates, never wrong answers.
//!
//! Syntax: `(col, ...) REFERENCES [schema.]table [(col, ...)]`, several
//! separated by `;`; without the referenced columns, the referenced
//! table's primary key.  Names follow SQL's rules (unquoted names are
//! folded to lower case; double quotes keep them as written).  The
//! referenced table is looked up by `search_path` when a query is planned;
//! a declaration that does not resolve then (the table dropped or not yet
//! made, a column renamed) is left out of the estimate.  Setting the
//! option checks the syntax (an ERROR) and warns of what does not resolve.

use std::ffi::CString;

use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

use crate::errors::raise_plain;
use crate::pg::list::from_list;

/// One declared foreign key, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub columns: Vec<String>,
    pub schema: Option<String>,
    pub table: String,
    /// None: the referenced table's primary key.
    pub ref_columns: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String, bool), // name, quoted
    LParen,
    RParen,
    Comma,
    Dot,
    Semi,
}

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut it = text.chars().peekable();
    while let Some(&c) = it.peek() {
        match c {
            c if c.is_whitespace() => {
                it.next();
            }
            '(' | ')' | ',' | '.' | ';' => {
                it.next();
                out.push(match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    ',' => Tok::Comma,
                    '.' => Tok::Dot,
                    _ => Tok::Semi,
                });
            }
            '"' => {
                it.next();
                let mut s = String::new();
                loop {
                    match it.next() {
                        Some('"') if it.peek() == Some(&'"') => {
                            it.next();
                            s.push('"');
                        }
                        Some('"') => break,
                        Some(ch) => s.push(ch),
                        None => return Err("unterminated quoted identifier".into()),
                    }
                }
                if s.is_empty() {
                    return Err("zero-length delimited identifier".into());
                }
                out.push(Tok::Ident(s, true));
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut s = String::new();
                while let Some(&ch) = it.peek() {
                    if ch.is_alphanumeric() || ch == '_' || ch == '$' {
                        s.push(ch.to_ascii_lowercase());
                        it.next();
                    } else {
                        break;
                    }
                }
                out.push(Tok::Ident(s, false));
            }
            other => return Err(format!("unexpected character \"{other}\"")),
        }
    }
    Ok(out)
}

fn column_list(toks: &[Tok], i: &mut usize) -> Result<Vec<String>, String> {
    if toks.get(*i) != Some(&Tok::LParen) {
        return Err("a column list in parentheses expected".into());
    }
    *i += 1;
    let mut cols = Vec::new();
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(name, _)) => cols.push(name.clone()),
            _ => return Err("a column name expected".into()),
        }
        *i += 1;
        match toks.get(*i) {
            Some(Tok::Comma) => *i += 1,
            Some(Tok::RParen) => {
                *i += 1;
                return Ok(cols);
            }
            _ => return Err("\",\" or \")\" expected after a column name".into()),
        }
    }
}

/// Parse the option's value.
pub fn parse(text: &str) -> Result<Vec<Declared>, String> {
    let toks = tokens(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] == Tok::Semi {
            i += 1;
            continue;
        }
        let columns = column_list(&toks, &mut i)?;
        match toks.get(i) {
            Some(Tok::Ident(k, false)) if k == "references" => i += 1,
            _ => return Err("REFERENCES expected after the column list".into()),
        }
        let first = match toks.get(i) {
            Some(Tok::Ident(name, _)) => name.clone(),
            _ => return Err("a table name expected after REFERENCES".into()),
        };
        i += 1;
        let (schema, table) = if toks.get(i) == Some(&Tok::Dot) {
            i += 1;
            match toks.get(i) {
                Some(Tok::Ident(name, _)) => {
                    i += 1;
                    (Some(first), name.clone())
                }
                _ => return Err("a table name expected after the schema name".into()),
            }
        } else {
            (None, first)
        };
        let ref_columns = if toks.get(i) == Some(&Tok::LParen) { Some(column_list(&toks, &mut i)?) } else { None };
        match toks.get(i) {
            None | Some(Tok::Semi) => {}
            _ => return Err("\";\" expected between foreign keys".into()),
        }
        if columns.len() > pg_sys::INDEX_MAX_KEYS as usize {
            return Err(format!("a foreign key has at most {} columns", pg_sys::INDEX_MAX_KEYS));
        }
        if let Some(r) = &ref_columns
            && r.len() != columns.len()
        {
            return Err("the numbers of referencing and referenced columns differ".into());
        }
        out.push(Declared { columns, schema, table, ref_columns });
    }
    Ok(out)
}

/// A declaration resolved against the catalogs: per column, the
/// (referencing, referenced) column numbers with the equality operator
/// that joins them.
type Keys = Vec<(pg_sys::AttrNumber, pg_sys::AttrNumber, pg_sys::Oid)>;

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new("?").expect("no NUL"))
}

fn qualified_name(d: &Declared) -> String {
    match &d.schema {
        Some(s) => format!("{s}.{}", d.table),
        None => d.table.clone(),
    }
}

/// The referenced table's oid, by `search_path` (None: no such table).
fn lookup_table(d: &Declared) -> Option<pg_sys::Oid> {
    let schema = d.schema.as_deref().map(cstr);
    let table = cstr(&d.table);
    // SAFETY: a RangeVar in the current memory context; a lookup without
    // a lock that may miss.
    let relid = unsafe {
        let rv = pg_sys::makeRangeVar(
            schema.as_ref().map_or(std::ptr::null_mut(), |s| s.as_ptr() as *mut _),
            table.as_ptr() as *mut _,
            -1,
        );
        pg_sys::RangeVarGetRelidExtended(
            rv,
            pg_sys::NoLock as i32,
            pg_sys::RVROption::RVR_MISSING_OK,
            None,
            std::ptr::null_mut(),
        )
    };
    (relid != pg_sys::InvalidOid).then_some(relid)
}

/// The columns of `relid`'s primary key, or None.
fn primary_key(relid: pg_sys::Oid) -> Option<Vec<pg_sys::AttrNumber>> {
    // SAFETY: the relation and its primary key index opened and closed
    // here under AccessShareLock (a query naming it holds that already).
    unsafe {
        let rel = pg_sys::relation_open(relid, pg_sys::AccessShareLock as i32);
        let list = pg_sys::RelationGetIndexList(rel);
        let pk = (*rel).rd_pkindex;
        pg_sys::list_free(list);
        pg_sys::relation_close(rel, pg_sys::AccessShareLock as i32);
        if pk == pg_sys::InvalidOid {
            return None;
        }
        let idx = pg_sys::index_open(pk, pg_sys::AccessShareLock as i32);
        let form = (*idx).rd_index;
        let n = (*form).indnkeyatts as usize;
        let cols = (*form).indkey.values.as_slice(n).to_vec();
        pg_sys::index_close(idx, pg_sys::AccessShareLock as i32);
        Some(cols)
    }
}

/// The btree equality operator of `left = right` in the default btree
/// operator family of `right`'s type (as a foreign key takes it from the
/// referenced key's index), or InvalidOid.
fn equality(ref_type: pg_sys::Oid, con_type: pg_sys::Oid) -> pg_sys::Oid {
    // SAFETY: catalog lookups.
    unsafe {
        let opclass = pg_sys::GetDefaultOpClass(ref_type, pg_sys::BTREE_AM_OID);
        if opclass == pg_sys::InvalidOid {
            return pg_sys::InvalidOid;
        }
        let family = pg_sys::get_opclass_family(opclass);
        pg_sys::get_opfamily_member(family, ref_type, con_type, pg_sys::BTEqualStrategyNumber as i16)
    }
}

/// Resolve `d`, whose referenced table is `ref_relid`, for the
/// referencing table `con_relid` (None: no columns known yet, as when the
/// option is set).  Err: what does not resolve.
pub fn resolve(
    d: &Declared,
    ref_relid: pg_sys::Oid,
    con_relid: Option<pg_sys::Oid>,
) -> Result<Keys, (PgSqlErrorCode, String)> {
    let qualified = qualified_name(d);
    let ref_cols: Vec<pg_sys::AttrNumber> = match &d.ref_columns {
        Some(names) => {
            let mut v = Vec::new();
            for n in names {
                let c = cstr(n);
                // SAFETY: catalog lookup.
                let att = unsafe { pg_sys::get_attnum(ref_relid, c.as_ptr()) };
                if att <= 0 {
                    return Err((
                        PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                        format!("column \"{n}\" referenced in foreign key does not exist in \"{qualified}\""),
                    ));
                }
                v.push(att);
            }
            v
        }
        None => match primary_key(ref_relid) {
            Some(pk) if pk.len() == d.columns.len() => pk,
            Some(_) => {
                return Err((
                    PgSqlErrorCode::ERRCODE_INVALID_FOREIGN_KEY,
                    format!("the primary key of \"{qualified}\" has another number of columns"),
                ));
            }
            None => {
                return Err((
                    PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
                    format!("there is no primary key for referenced table \"{qualified}\""),
                ));
            }
        },
    };
    let Some(con_relid) = con_relid else {
        return Ok(Vec::new());
    };
    let mut keys = Vec::new();
    for (name, &ref_att) in d.columns.iter().zip(&ref_cols) {
        let c = cstr(name);
        // SAFETY: catalog lookups.
        let (att, con_type, ref_type) = unsafe {
            let att = pg_sys::get_attnum(con_relid, c.as_ptr());
            if att <= 0 {
                return Err((
                    PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                    format!("column \"{name}\" referenced in foreign key does not exist"),
                ));
            }
            (att, pg_sys::get_atttype(con_relid, att), pg_sys::get_atttype(ref_relid, ref_att))
        };
        let op = equality(ref_type, con_type);
        if op == pg_sys::InvalidOid {
            return Err((
                PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
                format!("foreign key column \"{name}\" has no btree equality with the referenced column"),
            ));
        }
        keys.push((att, ref_att, op));
    }
    Ok(keys)
}

/// The validator's check of the option: the syntax (an ERROR), and
/// whether each referenced table and column exists now (a WARNING: a
/// restore may create the foreign table before the table it references).
pub fn validate(text: &str) {
    let declared = match parse(text) {
        Ok(d) => d,
        Err(e) => raise_plain(
            PgSqlErrorCode::ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE,
            format!("invalid foreign_keys option: {e}"),
            Some(format!("The option reads: \"{text}\".")),
            Some("Write foreign keys as \"(col, ...) REFERENCES table [(col, ...)]\", separated by \";\"."),
        ),
    };
    for d in &declared {
        let problem = match lookup_table(d) {
            None => Some((
                PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
                format!("relation \"{}\" does not exist", qualified_name(d)),
            )),
            Some(ref_relid) => resolve(d, ref_relid, None).err(),
        };
        if let Some((code, msg)) = problem {
            ErrorReport::new(code, format!("foreign key not resolved: {msg}"), "pg_strom")
                .set_detail("The planner leaves a foreign key out of its estimates while it does not resolve.")
                .report(PgLogLevel::WARNING);
        }
    }
}

static mut PREV_HOOK: pg_sys::get_relation_info_hook_type = None;

/// Install the planner hook (from `_PG_init`).
pub fn install_hook() {
    // SAFETY: _PG_init runs once, single-threaded, before any planning.
    unsafe {
        PREV_HOOK = pg_sys::get_relation_info_hook;
        pg_sys::get_relation_info_hook = Some(relation_info);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_info(
    root: *mut pg_sys::PlannerInfo,
    relid: pg_sys::Oid,
    inhparent: bool,
    rel: *mut pg_sys::RelOptInfo,
) {
    // SAFETY: planner hook arguments are valid; we chain first.
    unsafe {
        if let Some(prev) = PREV_HOOK {
            prev(root, relid, inhparent, rel);
        }
        // as PostgreSQL's own foreign keys: a base relation, not an
        // inheritance parent, in a query of more than one relation
        let rtable = from_list((*(*root).parse).rtable);
        if (*rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
            || inhparent
            || rtable.len() < 2
            || pg_sys::get_rel_relkind(relid) != pg_sys::RELKIND_FOREIGN_TABLE as std::ffi::c_char
            || !super::is_arrow_table(relid)
        {
            return;
        }
        let options = super::options::defelems((*pg_sys::GetForeignTable(relid)).options);
        let Some((_, text)) = options.iter().find(|(n, _)| n == "foreign_keys") else {
            return;
        };
        let Ok(declared) = parse(text) else {
            return;
        };
        for d in &declared {
            // the referenced table's entries in the query (looked up
            // without a lock: only a table the query names, and so has
            // locked, is opened below)
            let Some(ref_relid) = lookup_table(d) else {
                continue;
            };
            let mut resolved = None;
            for (i, rte) in rtable.iter().enumerate() {
                let rte = *rte as *mut pg_sys::RangeTblEntry;
                let rti = (i + 1) as pg_sys::Index;
                if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
                    || (*rte).relid != ref_relid
                    || (*rte).inh
                    || rti == (*rel).relid
                {
                    continue;
                }
                if resolved.is_none() {
                    resolved = Some(resolve(d, ref_relid, Some(relid)));
                }
                let Some(Ok(keys)) = &resolved else {
                    break;
                };
                let info =
                    pg_sys::palloc0(std::mem::size_of::<pg_sys::ForeignKeyOptInfo>()) as *mut pg_sys::ForeignKeyOptInfo;
                (*info).type_ = pg_sys::NodeTag::T_ForeignKeyOptInfo;
                (*info).con_relid = (*rel).relid;
                (*info).ref_relid = rti;
                (*info).nkeys = keys.len() as i32;
                for (k, &(con, refd, op)) in keys.iter().enumerate() {
                    (*info).conkey[k] = con;
                    (*info).confkey[k] = refd;
                    (*info).conpfeqop[k] = op;
                }
                (*root).fkey_list = pg_sys::lappend((*root).fkey_list, info as *mut std::ffi::c_void);
            }
        }
    }
}
