//! The expression compiler: a PostgreSQL expression tree to a device
//! program, one emit function per node type.  Whatever it cannot compile
//! is a [`NotSupported`] with the reason, never an error for the query.

use pgrx::pg_guard;
use pgrx::pg_sys;

use pgstrom_runtime::catalog::{self, func_info};
use pgstrom_runtime::program::{
    Builder, Op, Program, SetElement, in_set_type, is_returned, is_varlena, is_wide, type_id,
};

use super::aggregates::numeric_bound;
use super::catalog::{
    POSIX_COLLATION_OID, ascii_case_standard, device_function_of, device_type_of, device_unit, type_name,
    uses_time_zone,
};
use super::datum::{const_bits, push_const, varlena_bytes};
use super::{Inputs, NotSupported, unsupported};
use crate::pg::list::from_list as list_nodes;

/// Most elements of a constant IN / ANY list compiled inline when it
/// cannot be a sorted set (OP_IN_SORTED).
const MAX_ARRAY_ELEMENTS: i32 = 256;

/// Longest constant `= ANY` / `<> ALL` list compiled as a chain of tests;
/// a longer one becomes one binary search of the sorted constants.
const INLINE_ARRAY_ELEMENTS: i32 = 16;

pub(crate) struct Ctx<'r> {
    b: Builder,
    /// Where a Var is read: (source, column key), or None when the
    /// program cannot read it.
    resolve: &'r dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    /// Columns read, in program column order: (source, key, device type).
    columns: Vec<(u8, i16, u16)>,
    /// Local slots in use (allocated and freed like a stack).
    locals: i32,
    /// Slots holding the test value of each enclosing CASE x WHEN ...
    case_values: Vec<i32>,
    /// Hoisted sub-expressions (see [`Compiled::params`]).
    params: Vec<(*mut pg_sys::Node, u16)>,
    /// Whether the caller evaluates rows with PostgreSQL when the device
    /// reports it cannot compute them (DEVERR_NEEDS_CPU).  Without that
    /// (join keys and quals, aggregates), nothing that can report it on
    /// the CPU engine too is compiled: numerics (which may exceed 38
    /// digits) and date/time units the device does not know.
    pg_fallback: bool,
    /// Numerics are only tested for NULL, never computed with: any
    /// numeric compiles ([`Fallback::NullTestedNumeric`]).
    any_numeric: bool,
}

/// What may report DEVERR_NEEDS_CPU in a program (see `Ctx::pg_fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fallback {
    /// Nothing: no caller fallback (join keys and quals, aggregate
    /// arguments and grouping keys).  A numeric node compiles only where
    /// [`numeric_bound`] bounds it to 38 digits (a numeric(p,s) column, a
    /// constant, + - * of such), each node on its own: then the device
    /// never needs PostgreSQL for it.  (Join hash keys hash and compare
    /// numerics by value, 1.0 = 1.00, as grouping keys do.)
    None,
    /// As `None`, but the program only tests numerics for NULL (count()'s
    /// argument): any numeric compiles.
    NullTestedNumeric,
    /// Anything: PostgreSQL evaluates those rows (filters, device_eval).
    Pg,
}

impl Ctx<'_> {
    fn alloc_local(&mut self) -> Result<i32, NotSupported> {
        if self.locals >= pgstrom_runtime::program::MAX_LOCALS {
            return unsupported("expression nests too deeply for the device".into());
        }
        self.locals += 1;
        Ok(self.locals - 1)
    }

    fn free_local(&mut self, slot: i32) {
        debug_assert_eq!(slot, self.locals - 1);
        self.locals -= 1;
    }

    /// The catalog's comparison `family` (IMPL_CMP_GT, ...) on two values
    /// of device type `t`.
    fn comparison(&self, family: &str, t: u16) -> Result<u16, NotSupported> {
        catalog::FUNCTIONS
            .iter()
            .find(|f| f.family == family && f.nargs == 2 && f.args[..2] == [t, t])
            .map(|f| f.id)
            .ok_or_else(|| NotSupported(format!("no device comparison for device type {t}")))
    }

    /// Emit `<slot value> op element` for each element, combined by OR
    /// (ANY) or AND (ALL) with short-circuit; `elements` pushes element i.
    fn emit_array_test(
        &mut self,
        slot: i32,
        fid: u16,
        use_or: bool,
        n: usize,
        mut element: impl FnMut(&mut Ctx, usize) -> Result<(), NotSupported>,
    ) -> Result<(), NotSupported> {
        if n == 0 {
            // PostgreSQL: an empty array gives FALSE for ANY, TRUE for ALL,
            // whatever the scalar is.
            self.b.constant(type_id("BOOL"), (!use_or) as i64);
            return Ok(());
        }
        let (decide, combine) = if use_or { (Op::JumpIfTrueKeep, Op::Or2) } else { (Op::JumpIfFalseKeep, Op::And2) };
        let mut pending = None;
        for i in 0..n {
            if i > 0 {
                let j = self.b.jump(decide);
                pending = Some(match pending {
                    None => j,
                    Some(p) => self.b.merge(p, j),
                });
            }
            self.b.load_local(slot);
            element(self, i)?;
            self.b.func(fid);
            if i > 0 {
                self.b.op(combine);
            }
        }
        if let Some(p) = pending {
            self.b.place(p);
        }
        Ok(())
    }

    fn expr_type(&self, node: *mut pg_sys::Node) -> Result<u16, NotSupported> {
        // SAFETY: node is a valid expression node.
        let oid = unsafe { pg_sys::exprType(node) };
        device_type_of(oid)
            .ok_or_else(|| NotSupported(format!("type {} is not supported on the device", type_name(oid))))
    }

    /// Text comparisons follow the collation: equality and LIKE need a
    /// deterministic one (then they work on bytes), ordering needs C or
    /// POSIX (then it is byte order).  Character counting and LIKE's '_'
    /// assume UTF-8: in databases of other encodings they stay on the CPU.
    fn check_collation(&self, fid: u16, collid: pg_sys::Oid) -> Result<(), NotSupported> {
        let family = func_info(fid).map_or("", |f| f.family);
        if matches!(
            family,
            "IMPL_LIKE"
                | "IMPL_NOT_LIKE"
                | "IMPL_TEXT_LENGTH"
                | "IMPL_BPCHAR_LENGTH"
                | "IMPL_STRPOS"
                | "IMPL_SUBSTR"
                | "IMPL_LEFT"
                | "IMPL_RIGHT"
                | "IMPL_BTRIM"
                | "IMPL_LTRIM"
                | "IMPL_RTRIM"
                | "IMPL_SPLIT_PART"
                | "IMPL_LOWER"
                | "IMPL_UPPER"
                | "IMPL_ILIKE"
                | "IMPL_NOT_ILIKE"
        )
            // SAFETY: reads the database encoding.
            && unsafe { pg_sys::GetDatabaseEncoding() } != pg_sys::pg_enc::PG_UTF8 as i32
        {
            return unsupported("character-based text functions in a database that is not UTF-8".into());
        }
        if matches!(family, "IMPL_LOWER" | "IMPL_UPPER" | "IMPL_ILIKE" | "IMPL_NOT_ILIKE")
            && !ascii_case_standard(collid)
        {
            return unsupported(
                "lower / upper / ILIKE under a collation whose case mapping of ASCII letters may differ".into(),
            );
        }
        if matches!(family, "IMPL_TEXT_LT" | "IMPL_TEXT_LE" | "IMPL_TEXT_GT" | "IMPL_TEXT_GE") {
            if collid != pg_sys::C_COLLATION_OID && collid != POSIX_COLLATION_OID {
                return unsupported("text ordering under a collation other than \"C\" or \"POSIX\"".into());
            }
        } else if matches!(
            family,
            "IMPL_TEXT_EQ"
                | "IMPL_TEXT_NE"
                | "IMPL_BPCHAR_EQ"
                | "IMPL_BPCHAR_NE"
                | "IMPL_LIKE"
                | "IMPL_NOT_LIKE"
                | "IMPL_STRPOS"
                | "IMPL_STARTS_WITH"
                | "IMPL_SPLIT_PART"
        )
            && collid != pg_sys::InvalidOid
            // SAFETY: syscache lookup of a collation OID from the expression.
            && !unsafe { pg_sys::get_collation_isdeterministic(collid) }
        {
            return unsupported("text equality under a nondeterministic collation".into());
        }
        Ok(())
    }

    fn call(
        &mut self,
        funcid: pg_sys::Oid,
        args: *mut pg_sys::List,
        collid: pg_sys::Oid,
        what: &str,
    ) -> Result<(), NotSupported> {
        let to_local = funcid == pg_sys::Oid::from(pg_sys::F_TIMEZONE_TEXT_TIMESTAMPTZ);
        if to_local || funcid == pg_sys::Oid::from(pg_sys::F_TIMEZONE_TEXT_TIMESTAMP) {
            return self.at_time_zone(to_local, args);
        }
        if !self.pg_fallback
            && let Some(fid) = device_function_of(funcid)
            && func_info(fid).is_some_and(|f| {
                matches!(
                    f.family,
                    "IMPL_MAKE_DATE"
                        | "IMPL_LOWER"
                        | "IMPL_UPPER"
                        | "IMPL_TEXTCAT"
                        | "IMPL_ILIKE"
                        | "IMPL_NOT_ILIKE"
                        | "IMPL_TO_TEXT"
                )
            })
        {
            return unsupported(
                "make_date, lower, upper, ||, ILIKE or a cast to text in a join or an aggregate (values the device leaves to PostgreSQL)"
                    .into(),
            );
        }
        if !self.pg_fallback
            && let Some(fid) = device_function_of(funcid)
            && let Some(f) = func_info(fid)
            && matches!(
                f.family,
                "IMPL_EXTRACT" | "IMPL_DATE_TRUNC" | "IMPL_TZ_EXTRACT" | "IMPL_TZ_DATE_TRUNC" | "IMPL_EXTRACT_INTERVAL"
            )
        {
            // SAFETY: the arguments of an OpExpr/FuncExpr.
            let first = unsafe { list_nodes(args) }.first().copied().unwrap_or(std::ptr::null_mut());
            // SAFETY: a valid node; a text Const's datum is a text
            // (detoasted before reading; not UTF-8: no device unit).
            let unit = unsafe {
                (!first.is_null()
                    && (*first).type_ == pg_sys::NodeTag::T_Const
                    && !(*(first as *mut pg_sys::Const)).constisnull)
                    .then(|| {
                        let v =
                            pg_sys::pg_detoast_datum_packed((*(first as *mut pg_sys::Const)).constvalue.cast_mut_ptr());
                        pgrx::varlena::text_to_rust_str(v).map(str::to_string).ok()
                    })
                    .flatten()
            };
            let trunc = matches!(f.family, "IMPL_DATE_TRUNC" | "IMPL_TZ_DATE_TRUNC");
            let (time_only, interval) = (f.args[1] == type_id("TIME"), f.args[1] == type_id("INTERVAL"));
            if !unit.is_some_and(|u| device_unit(&u, time_only, trunc, interval)) {
                return unsupported(format!(
                    "{} with a unit the device does not compute, here",
                    f.name.to_ascii_lowercase()
                ));
            }
        }
        let fid = self.push_args(funcid, args, what)?;
        self.check_collation(fid, collid)?;
        self.b.func(fid);
        Ok(())
    }

    /// `x AT TIME ZONE 'name'` (timezone(text, timestamptz) when
    /// `to_local`, else timezone(text, timestamp)): with a constant zone
    /// name or fixed-offset abbreviation, the casts between timestamptz
    /// and timestamp computed in that zone, whose table the program
    /// carries.
    fn at_time_zone(&mut self, to_local: bool, args: *mut pg_sys::List) -> Result<(), NotSupported> {
        // SAFETY: the arguments of a FuncExpr; a text Const's datum is a
        // text (detoasted before reading).
        let (zone, value) = unsafe {
            let args = list_nodes(args);
            let zone = args.first().copied().filter(|z| (**z).type_ == pg_sys::NodeTag::T_Const).and_then(|z| {
                let c = z as *mut pg_sys::Const;
                (!(*c).constisnull).then(|| {
                    let v = pg_sys::pg_detoast_datum_packed((*c).constvalue.cast_mut_ptr());
                    pgrx::varlena::text_to_rust_str(v).map(str::to_string).ok()
                })?
            });
            (zone, args.get(1).copied())
        };
        let (Some(zone), Some(value)) = (zone, value) else {
            return unsupported("AT TIME ZONE with a zone that is not a constant".into());
        };
        let Some(table) = crate::timezone::named_table(&zone) else {
            return unsupported(format!(
                "AT TIME ZONE '{zone}' (zone names and fixed-offset abbreviations run on the device, not this)"
            ));
        };
        let (from, name) =
            if to_local { ("TIMESTAMPTZ", "TIMESTAMP_TIMESTAMPTZ") } else { ("TIMESTAMP", "TIMESTAMPTZ_TIMESTAMP") };
        if self.expr_type(value)? != type_id(from) {
            return unsupported("AT TIME ZONE of another device type".into());
        }
        let fid = catalog::FUNCTIONS.iter().find(|f| f.name == name).expect("catalog").id;
        self.emit(value)?;
        self.b.zone_table(&table);
        self.b.func(fid);
        Ok(())
    }

    /// Check `funcid` against the catalog and emit its arguments; returns
    /// the device function id.
    fn push_args(&mut self, funcid: pg_sys::Oid, args: *mut pg_sys::List, what: &str) -> Result<u16, NotSupported> {
        let Some(fid) = device_function_of(funcid) else {
            // SAFETY: prints any OID.
            let name =
                unsafe { std::ffi::CStr::from_ptr(pg_sys::format_procedure(funcid)) }.to_string_lossy().into_owned();
            return unsupported(format!("{what} {name} is not in the device catalog"));
        };
        let f = func_info(fid).expect("generated map and catalog agree");
        // SAFETY: args of an OpExpr/FuncExpr are a valid List.
        let args = unsafe { list_nodes(args) };
        // the functions of the session time zone take its table last
        let zoned = uses_time_zone(fid);
        if args.len() + zoned as usize != f.nargs as usize {
            return unsupported(format!("{} takes {} arguments, not {}", f.name, f.nargs, args.len()));
        }
        if zoned && !crate::timezone::session_usable() {
            return unsupported("the session time zone could not be tabulated for the device".into());
        }
        for (i, a) in args.iter().enumerate() {
            let t = self.expr_type(*a)?;
            if t != f.args[i] {
                return unsupported(format!("argument {} of {} has device type {t}, not {}", i + 1, f.name, f.args[i]));
            }
            self.emit(*a)?;
        }
        if zoned {
            self.b.tz_table(&crate::timezone::session_table());
        }
        Ok(fid)
    }

    /// A sub-expression that is the same for every row (no Vars, nothing
    /// volatile) but not a plain constant: evaluated once on the CPU.
    ///
    /// # Safety
    /// `node` is a valid expression node.
    unsafe fn hoistable(&self, node: *mut pg_sys::Node) -> bool {
        // SAFETY: valid node (caller).
        unsafe {
            !matches!((*node).type_, pg_sys::NodeTag::T_Const | pg_sys::NodeTag::T_CaseTestExpr)
                && !pg_sys::contain_var_clause(node)
                && !pg_sys::contain_volatile_functions(node)
                && !contains_case_test(node)
                // an InitPlan's output only as the bare Param: a function
                // over it is evaluated where the device reaches it (its
                // error caught on the CPU would abandon a subquery's run)
                && ((*node).type_ == pg_sys::NodeTag::T_Param || !contains_exec_param(node))
        }
    }

    fn emit(&mut self, node: *mut pg_sys::Node) -> Result<(), NotSupported> {
        if node.is_null() {
            return unsupported("empty expression".into());
        }
        if !self.pg_fallback && !self.any_numeric && self.expr_type(node) == Ok(type_id("NUMERIC")) {
            // every numeric node, not only the expression's result: a
            // bounded result can hide a wider argument (round(x, 0) of a
            // numeric(40,10) x)
            // SAFETY: node is a valid expression node.
            let bounded = unsafe { numeric_bound(node) }.is_some_and(|(p, _)| p <= 38);
            if !bounded {
                return unsupported(
                    "numeric in a join or an aggregate (values beyond 38 digits need PostgreSQL)".into(),
                );
            }
        }
        // SAFETY: node is a valid expression node.
        if unsafe { self.hoistable(node) } && !self.expr_type(node).is_ok_and(is_varlena) {
            let t = self.expr_type(node)?;
            let idx = self.params.len() as u32;
            self.params.push((node, t));
            self.b.param(idx);
            return Ok(());
        }
        use pg_sys::NodeTag::*;
        // SAFETY: node is a valid Node of the expression tree; each arm
        // reads it as the struct its tag names (DistinctExpr and
        // NullIfExpr have OpExpr's layout).
        unsafe {
            match (*node).type_ {
                T_Var => self.emit_var(node, &*node.cast()),
                T_Const => self.emit_const(node, &*node.cast()),
                T_OpExpr => self.emit_op(&*node.cast()),
                T_DistinctExpr => self.emit_distinct(&*node.cast()),
                T_FuncExpr => self.emit_func(&*node.cast()),
                T_BoolExpr => self.emit_bool(&*node.cast()),
                T_NullTest => self.emit_null_test(&*node.cast()),
                T_BooleanTest => self.emit_boolean_test(&*node.cast()),
                T_CoerceViaIO => self.emit_coerce_via_io(&*node.cast()),
                T_RelabelType => self.emit_relabel(node, &*node.cast()),
                T_CaseExpr => self.emit_case(node, &*node.cast()),
                T_CaseTestExpr => self.emit_case_test(),
                T_CoalesceExpr => self.emit_coalesce(&*node.cast()),
                T_NullIfExpr => self.emit_nullif(&*node.cast()),
                T_MinMaxExpr => self.emit_minmax(node, &*node.cast()),
                T_ScalarArrayOpExpr => self.emit_scalar_array_op(&*node.cast()),
                other => unsupported(format!("expression node {other:?} is not supported on the device")),
            }
        }
    }

    /// The function behind an operator (its opfuncid, looked up when the
    /// planner has not set it yet).
    fn opfunc(opno: pg_sys::Oid, opfuncid: pg_sys::Oid) -> pg_sys::Oid {
        if opfuncid != pg_sys::InvalidOid {
            return opfuncid;
        }
        // SAFETY: a syscache lookup of an operator OID from the expression.
        unsafe { pg_sys::get_opcode(opno) }
    }

    /// A column: its position among the program's columns.
    fn emit_var(&mut self, node: *mut pg_sys::Node, v: &pg_sys::Var) -> Result<(), NotSupported> {
        if v.varlevelsup != 0 {
            return unsupported("a column of an outer query".into());
        }
        if v.varattno <= 0 {
            return unsupported("system or whole-row columns".into());
        }
        let Some((source, key)) = (self.resolve)(node.cast()) else {
            return unsupported("a column of another relation".into());
        };
        let t = self.expr_type(node)?;
        let idx = match self.columns.iter().position(|(s, k, _)| (*s, *k) == (source, key)) {
            Some(i) => i,
            None => {
                self.columns.push((source, key, t));
                self.columns.len() - 1
            }
        };
        self.b.var(idx as i32);
        Ok(())
    }

    fn emit_const(&mut self, node: *mut pg_sys::Node, c: &pg_sys::Const) -> Result<(), NotSupported> {
        let t = self.expr_type(node)?;
        if c.constisnull {
            self.b.null();
            Ok(())
        } else {
            // SAFETY: a non-NULL constant of the type exprType gave.
            unsafe { push_const(&mut self.b, t, c.constvalue) }
        }
    }

    fn emit_op(&mut self, o: &pg_sys::OpExpr) -> Result<(), NotSupported> {
        let funcid = Self::opfunc(o.opno, o.opfuncid);
        self.call(funcid, o.args, o.inputcollid, "operator function")
    }

    fn emit_distinct(&mut self, o: &pg_sys::OpExpr) -> Result<(), NotSupported> {
        let funcid = Self::opfunc(o.opno, o.opfuncid);
        if device_function_of(funcid).is_some_and(uses_time_zone) {
            return unsupported("IS DISTINCT FROM across date / timestamp and timestamptz".into());
        }
        let fid = self.push_args(funcid, o.args, "equality function")?;
        self.check_collation(fid, o.inputcollid)?;
        if func_info(fid).map(|f| f.result) != Some(type_id("BOOL")) {
            return unsupported("IS DISTINCT FROM with a non-boolean equality".into());
        }
        self.b.distinct(fid);
        Ok(())
    }

    fn emit_func(&mut self, f: &pg_sys::FuncExpr) -> Result<(), NotSupported> {
        if f.funcretset {
            return unsupported("set-returning functions".into());
        }
        self.call(f.funcid, f.args, f.inputcollid, "function")
    }

    /// AND / OR with PostgreSQL's short-circuit, NOT.
    fn emit_bool(&mut self, e: &pg_sys::BoolExpr) -> Result<(), NotSupported> {
        // SAFETY: the expression's argument list.
        let args = unsafe { list_nodes(e.args) };
        for a in &args {
            if self.expr_type(*a)? != type_id("BOOL") {
                return unsupported("a non-boolean argument of AND/OR/NOT".into());
            }
        }
        if e.boolop == pg_sys::BoolExprType::NOT_EXPR {
            self.emit(args[0])?;
            self.b.op(Op::Not);
            return Ok(());
        }
        // a1 [jump if decided] a2 and/or [jump] a3 ...: later arguments
        // are skipped once the result is known, as PostgreSQL skips them.
        let (decide, combine) = if e.boolop == pg_sys::BoolExprType::AND_EXPR {
            (Op::JumpIfFalseKeep, Op::And2)
        } else {
            (Op::JumpIfTrueKeep, Op::Or2)
        };
        self.emit(args[0])?;
        let mut pending = None;
        for a in &args[1..] {
            let j = self.b.jump(decide);
            pending = Some(match pending {
                None => j,
                Some(p) => self.b.merge(p, j),
            });
            self.emit(*a)?;
            self.b.op(combine);
        }
        if let Some(p) = pending {
            self.b.place(p);
        }
        Ok(())
    }

    fn emit_null_test(&mut self, n: &pg_sys::NullTest) -> Result<(), NotSupported> {
        if n.argisrow {
            return unsupported("IS NULL on a row value".into());
        }
        self.expr_type(n.arg.cast())?;
        self.emit(n.arg.cast())?;
        self.b.op(if n.nulltesttype == pg_sys::NullTestType::IS_NULL { Op::IsNull } else { Op::IsNotNull });
        Ok(())
    }

    fn emit_boolean_test(&mut self, t: &pg_sys::BooleanTest) -> Result<(), NotSupported> {
        self.emit(t.arg.cast())?;
        use pg_sys::BoolTestType::*;
        self.b.op(match t.booltesttype {
            IS_TRUE => Op::IsTrue,
            IS_NOT_TRUE => Op::IsNotTrue,
            IS_FALSE => Op::IsFalse,
            IS_NOT_FALSE => Op::IsNotFalse,
            IS_UNKNOWN => Op::IsUnknown,
            _ => Op::IsNotUnknown,
        });
        Ok(())
    }

    /// A cast to text or varchar through the source type's output
    /// function, where the catalog has it.
    fn emit_coerce_via_io(&mut self, c: &pg_sys::CoerceViaIO) -> Result<(), NotSupported> {
        if c.resulttype != pg_sys::TEXTOID && c.resulttype != pg_sys::VARCHAROID {
            return unsupported("a cast through text input and output functions".into());
        }
        let arg: *mut pg_sys::Node = c.arg.cast();
        let mut out_fn = pg_sys::InvalidOid;
        let mut varlena = false;
        // SAFETY: the argument of a valid expression; a one-item List of it
        // in the planner's memory context.
        let args = unsafe {
            pg_sys::getTypeOutputInfo(pg_sys::exprType(arg), &mut out_fn, &mut varlena);
            pg_sys::lappend(std::ptr::null_mut(), arg.cast())
        };
        self.call(out_fn, args, pg_sys::InvalidOid, "output function")
    }

    fn emit_relabel(&mut self, node: *mut pg_sys::Node, r: &pg_sys::RelabelType) -> Result<(), NotSupported> {
        let from = self.expr_type(r.arg.cast())?;
        if from != self.expr_type(node)? {
            return unsupported("a relabeling between different device types".into());
        }
        self.emit(r.arg.cast())
    }

    /// CASE [x] WHEN ... THEN ... [ELSE ...] END; the test value of the
    /// simple form is kept in a local slot its CaseTestExprs read.
    fn emit_case(&mut self, node: *mut pg_sys::Node, c: &pg_sys::CaseExpr) -> Result<(), NotSupported> {
        self.expr_type(node)?;
        let slot = if c.arg.is_null() {
            None
        } else {
            self.expr_type(c.arg.cast())?;
            self.emit(c.arg.cast())?;
            let s = self.alloc_local()?;
            self.b.store_local(s);
            self.case_values.push(s);
            Some(s)
        };
        let mut done = None;
        // SAFETY: the CASE's list of CaseWhen nodes.
        for w in unsafe { list_nodes(c.args) } {
            // SAFETY: an element of a CASE's args is a CaseWhen.
            let w = unsafe { &*(w as *const pg_sys::CaseWhen) };
            let cond: *mut pg_sys::Node = w.expr.cast();
            if self.expr_type(cond)? != type_id("BOOL") {
                return unsupported("a non-boolean WHEN condition".into());
            }
            self.emit(cond)?;
            let next = self.b.jump(Op::JumpIfNotTrue);
            self.emit(w.result.cast())?;
            let j = self.b.jump(Op::Jump);
            done = Some(match done {
                None => j,
                Some(p) => self.b.merge(p, j),
            });
            self.b.place(next);
        }
        if c.defresult.is_null() {
            self.b.null();
        } else {
            self.emit(c.defresult.cast())?;
        }
        if let Some(d) = done {
            self.b.place(d);
        }
        if let Some(s) = slot {
            self.case_values.pop();
            self.free_local(s);
        }
        Ok(())
    }

    fn emit_case_test(&mut self) -> Result<(), NotSupported> {
        let Some(s) = self.case_values.last().copied() else {
            return unsupported("a CaseTestExpr outside CASE".into());
        };
        self.b.load_local(s);
        Ok(())
    }

    fn emit_coalesce(&mut self, c: &pg_sys::CoalesceExpr) -> Result<(), NotSupported> {
        // SAFETY: the expression's argument list.
        let args = unsafe { list_nodes(c.args) };
        let mut done = None;
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.b.op(Op::Pop);
            }
            self.emit(*a)?;
            if i + 1 < args.len() {
                let j = self.b.jump(Op::JumpIfNotNullKeep);
                done = Some(match done {
                    None => j,
                    Some(p) => self.b.merge(p, j),
                });
            }
        }
        if let Some(d) = done {
            self.b.place(d);
        }
        Ok(())
    }

    /// NULLIF(a, b): NULL when a = b, else a; a is evaluated once.
    fn emit_nullif(&mut self, o: &pg_sys::OpExpr) -> Result<(), NotSupported> {
        let funcid = Self::opfunc(o.opno, o.opfuncid);
        // SAFETY: the expression's argument list.
        let args = unsafe { list_nodes(o.args) };
        let fid = device_function_of(funcid)
            .ok_or_else(|| NotSupported("NULLIF with an equality not in the device catalog".into()))?;
        let f = func_info(fid).expect("catalog");
        if args.len() != 2 || f.nargs != 2 || f.result != type_id("BOOL") {
            return unsupported("NULLIF with an unusual equality".into());
        }
        self.check_collation(fid, o.inputcollid)?;
        for (i, a) in args.iter().enumerate() {
            if self.expr_type(*a)? != f.args[i] {
                return unsupported("NULLIF arguments of other device types".into());
            }
        }
        self.emit(args[0])?;
        let s = self.alloc_local()?;
        self.b.store_local(s);
        self.b.load_local(s);
        self.emit(args[1])?;
        self.b.func(fid);
        let not_equal = self.b.jump(Op::JumpIfNotTrue);
        self.b.null();
        let done = self.b.jump(Op::Jump);
        self.b.place(not_equal);
        self.b.load_local(s);
        self.b.place(done);
        self.free_local(s);
        Ok(())
    }

    /// GREATEST / LEAST.
    fn emit_minmax(&mut self, node: *mut pg_sys::Node, m: &pg_sys::MinMaxExpr) -> Result<(), NotSupported> {
        let t = self.expr_type(node)?;
        let family = if m.op == pg_sys::MinMaxOp::IS_GREATEST { "IMPL_CMP_GT" } else { "IMPL_CMP_LT" };
        let cmp = self.comparison(family, t)?;
        // SAFETY: the expression's argument list.
        for (i, a) in unsafe { list_nodes(m.args) }.iter().enumerate() {
            if self.expr_type(*a)? != t {
                return unsupported("GREATEST/LEAST arguments of other device types".into());
            }
            self.emit(*a)?;
            if i > 0 {
                self.b.minmax(cmp);
            }
        }
        Ok(())
    }

    /// `x op ANY / ALL (array)`: over an array constant (a chain of tests,
    /// or one binary search of the sorted constants for a long list of
    /// equality tests) or an ARRAY[...] of expressions.
    fn emit_scalar_array_op(&mut self, sa: &pg_sys::ScalarArrayOpExpr) -> Result<(), NotSupported> {
        // SAFETY: the expression's argument list (the scalar, the array).
        let args = unsafe { list_nodes(sa.args) };
        let funcid = Self::opfunc(sa.opno, sa.opfuncid);
        let fid = device_function_of(funcid)
            .ok_or_else(|| NotSupported("IN / ANY with an operator not in the device catalog".into()))?;
        let f = func_info(fid).expect("catalog");
        // SAFETY: the array argument of a valid expression.
        let elem_oid = unsafe { pg_sys::get_element_type(pg_sys::exprType(args[1])) };
        let elem_t = device_type_of(elem_oid)
            .ok_or_else(|| NotSupported(format!("arrays of {} on the device", type_name(elem_oid))))?;
        if f.nargs != 2 || f.result != type_id("BOOL") || f.args[..2] != [self.expr_type(args[0])?, elem_t] {
            return unsupported("IN / ANY with mismatched operand types".into());
        }
        // SAFETY: the array argument is a valid node; each arm reads it as
        // the struct its tag names.
        unsafe {
            match (*args[1]).type_ {
                pg_sys::NodeTag::T_Const => {
                    self.emit_any_of_const(sa, args[0], &*args[1].cast(), fid, f.family, elem_oid, elem_t)
                }
                pg_sys::NodeTag::T_ArrayExpr => self.emit_any_of_array(sa, args[0], &*args[1].cast(), fid, elem_t),
                _ => unsupported("IN / ANY over a non-constant array".into()),
            }
        }
    }

    /// `scalar op ANY / ALL (array constant c)`.
    #[allow(clippy::too_many_arguments)]
    fn emit_any_of_const(
        &mut self,
        sa: &pg_sys::ScalarArrayOpExpr,
        scalar: *mut pg_sys::Node,
        c: &pg_sys::Const,
        fid: u16,
        family: &str,
        elem_oid: pg_sys::Oid,
        elem_t: u16,
    ) -> Result<(), NotSupported> {
        let use_or = sa.useOr;
        if c.constisnull {
            // a NULL array gives NULL; the scalar is still evaluated
            // first, for its errors
            self.emit(scalar)?;
            self.b.op(Op::Pop);
            self.b.null();
            return Ok(());
        }
        // the array's elements (NULL: None), as datums of the element type
        // SAFETY: a non-NULL array constant of element type elem_oid;
        // deconstruct_array returns n elements and n null flags.
        let values: Vec<Option<pg_sys::Datum>> = unsafe {
            let arr = pg_sys::pg_detoast_datum(c.constvalue.cast_mut_ptr()) as *mut pg_sys::ArrayType;
            let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
            pg_sys::get_typlenbyvalalign(elem_oid, &mut len, &mut byval, &mut align);
            let mut elems: *mut pg_sys::Datum = std::ptr::null_mut();
            let mut nulls: *mut bool = std::ptr::null_mut();
            let mut n = 0;
            pg_sys::deconstruct_array(arr, elem_oid, len as i32, byval, align, &mut elems, &mut nulls, &mut n);
            (0..n as usize).map(|i| (!*nulls.add(i)).then(|| *elems.add(i))).collect()
        };
        let n = values.len() as i32;
        // a longer list of equality tests: one binary search of the sorted
        // constants
        let scalar_t = self.expr_type(scalar)?;
        let int = |t: u16| t == type_id("INT2") || t == type_id("INT4") || t == type_id("INT8");
        let test = if use_or {
            matches!(family, "IMPL_CMP_EQ" | "IMPL_TEXT_EQ" | "IMPL_BPCHAR_EQ")
        } else {
            matches!(family, "IMPL_CMP_NE" | "IMPL_TEXT_NE" | "IMPL_BPCHAR_NE")
        };
        if n > INLINE_ARRAY_ELEMENTS
            && test
            && in_set_type(elem_t)
            && (scalar_t == elem_t || (int(scalar_t) && int(elem_t)))
        {
            self.check_collation(fid, sa.inputcollid)?;
            self.emit(scalar)?;
            let elements = values
                .iter()
                .flatten()
                .map(|&v| {
                    if is_varlena(elem_t) {
                        // SAFETY: a non-NULL element of a varlena type.
                        SetElement::Bytes(unsafe { varlena_bytes(v) })
                    } else {
                        SetElement::Bits(const_bits(elem_t, v))
                    }
                })
                .collect();
            self.b.in_sorted(elem_t, fid, use_or, values.contains(&None), elements);
            return Ok(());
        }
        if n > MAX_ARRAY_ELEMENTS {
            return unsupported(format!(
                "IN / ANY lists longer than {MAX_ARRAY_ELEMENTS} elements of this type or operator"
            ));
        }
        self.check_collation(fid, sa.inputcollid)?;
        self.emit(scalar)?;
        let s = self.alloc_local()?;
        self.b.store_local(s);
        self.emit_array_test(s, fid, use_or, values.len(), |ctx, i| {
            match values[i] {
                // SAFETY: an element of the array constant, of elem_t.
                Some(v) => unsafe { push_const(&mut ctx.b, elem_t, v)? },
                None => ctx.b.null(),
            }
            Ok(())
        })?;
        self.free_local(s);
        Ok(())
    }

    /// `scalar op ANY / ALL (ARRAY[...])`: PostgreSQL builds the whole
    /// array before comparing, so every element is evaluated (and may
    /// raise) first.
    fn emit_any_of_array(
        &mut self,
        sa: &pg_sys::ScalarArrayOpExpr,
        scalar: *mut pg_sys::Node,
        ae: &pg_sys::ArrayExpr,
        fid: u16,
        elem_t: u16,
    ) -> Result<(), NotSupported> {
        if ae.multidims {
            return unsupported("multi-dimensional ARRAY[] in IN / ANY".into());
        }
        // SAFETY: the ARRAY[]'s element list.
        let elems = unsafe { list_nodes(ae.elements) };
        self.check_collation(fid, sa.inputcollid)?;
        self.emit(scalar)?;
        let s = self.alloc_local()?;
        self.b.store_local(s);
        let mut slots = Vec::with_capacity(elems.len());
        for e in &elems {
            if self.expr_type(*e)? != elem_t {
                return unsupported("ARRAY[] elements of other device types".into());
            }
            self.emit(*e)?;
            let es = self.alloc_local()?;
            self.b.store_local(es);
            slots.push(es);
        }
        self.emit_array_test(s, fid, sa.useOr, slots.len(), |ctx, i| {
            ctx.b.load_local(slots[i]);
            Ok(())
        })?;
        for es in slots.into_iter().rev() {
            self.free_local(es);
        }
        self.free_local(s);
        Ok(())
    }
}

/// Whether `node` contains a CaseTestExpr (whose value comes from the
/// enclosing CASE, so it cannot be hoisted out of it).
///
/// # Safety
/// `node` is a valid expression tree.
unsafe fn contains_case_test(node: *mut pg_sys::Node) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, _ctx: *mut std::ffi::c_void) -> bool {
        if node.is_null() {
            return false;
        }
        // SAFETY: expression_tree_walker hands us valid nodes.
        unsafe {
            if (*node).type_ == pg_sys::NodeTag::T_CaseTestExpr {
                return true;
            }
            crate::pg::compat::walk(node, walker, std::ptr::null_mut())
        }
    }
    // SAFETY: valid tree (caller).
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// Whether `node` holds a subquery or an executor Param (an InitPlan's
/// output).
///
/// # Safety
/// `node` is a valid expression.
pub unsafe fn contains_exec_param(node: *mut pg_sys::Node) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, _ctx: *mut std::ffi::c_void) -> bool {
        if node.is_null() {
            return false;
        }
        // SAFETY: expression_tree_walker hands us valid nodes.
        unsafe {
            match (*node).type_ {
                pg_sys::NodeTag::T_SubPlan | pg_sys::NodeTag::T_AlternativeSubPlan | pg_sys::NodeTag::T_SubLink => {
                    return true;
                }
                pg_sys::NodeTag::T_Param
                    if (*(node as *mut pg_sys::Param)).paramkind == pg_sys::ParamKind::PARAM_EXEC =>
                {
                    return true;
                }
                _ => {}
            }
            crate::pg::compat::walk(node, walker, std::ptr::null_mut())
        }
    }
    // SAFETY: valid tree (caller).
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// Compile `expr` into a program over `inputs` (see the callers in
/// `codegen` and `codegen::aggregates`).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub(crate) unsafe fn compile_inner(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
    text_result: bool,
    wide_result: bool,
    fallback: Fallback,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    let mut ctx = Ctx {
        b: Builder::new(),
        resolve,
        columns: inputs.columns.clone(),
        locals: 0,
        case_values: Vec::new(),
        params: inputs.params.clone(),
        pg_fallback: fallback == Fallback::Pg,
        any_numeric: fallback == Fallback::NullTestedNumeric,
    };
    let rtype = ctx.expr_type(expr)?;
    // (a text_result, a join's hash key, is hashed and compared on the
    // device, which works for the wide types too)
    if is_wide(rtype) && !wide_result && !text_result {
        let name = catalog::type_info(rtype).map_or("?", |t| t.name).to_ascii_lowercase();
        return unsupported(format!(
            "{name} results are not returned by the device yet ({name} works inside expressions)"
        ));
    }
    // (device_eval reads wide and variable-length results back)
    let kept_on_device =
        text_result || (wide_result && (is_wide(rtype) || is_varlena(rtype) || rtype == type_id("FLOAT2")));
    if !is_returned(rtype) && !kept_on_device {
        return unsupported("text results are not returned by the device yet (text works inside expressions)".into());
    }
    ctx.emit(expr)?;
    // SAFETY: valid expression.
    let result_type = unsafe { pg_sys::exprType(expr) };
    let program = ctx.b.finish(rtype).map_err(|e| NotSupported(format!("{e}")))?;
    inputs.columns = ctx.columns;
    inputs.params = ctx.params;
    Ok((program, result_type))
}
