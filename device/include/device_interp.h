/*
 * device_interp.h - the device program interpreter: a stack machine that
 * evaluates a validated program (device_program.h) at one row of each
 * source (the scanned row and, in a join, one inner row per depth), and
 * dev_call, which dispatches a function id of device_functions.def to
 * its IMPL_* implementation in the headers included below.  Three-valued
 * logic, strictness (a NULL argument gives NULL without a call), IS
 * [NOT] DISTINCT FROM, GREATEST / LEAST and = ANY over a sorted constant
 * set are done here.
 *
 * dev_eval_row() returns DEVERR_OK and the result, or an error code; it
 * never traps.  Every function follows PostgreSQL's exact semantics:
 * each header below names the PostgreSQL source file it mirrors.
 *
 * Mirrors: src/backend/executor/execExprInterp.c (the role, not the code).
 */
#ifndef PGSTROM_DEVICE_INTERP_H
#define PGSTROM_DEVICE_INTERP_H

#include "device_program.h"
#include "device_int.h"
#include "device_float.h"
#include "device_numeric.h"
#include "device_datetime.h"
#include "device_text.h"
#include "device_compare.h"
#include "device_wide.h"
#include "device_casts.h"
#include "device_strings.h"
#include "device_tz.h"

/* Number of arguments of each function, by id (index 0 unused). */
DEVICE_FUNC int
dev_func_nargs(int32_t fid)
{
    switch (fid)
    {
#define DEVFUNC(id, pgf, res, nargs, a1, a2, a3, impl, label) case FUNC_##id: return nargs;
#include "device_functions.def"
#undef DEVFUNC
        default:
            return -1;
    }
}

/*
 * Call a strict function on non-NULL arguments.  Every catalog function is
 * strict: the interpreter returns NULL for a NULL argument without calling.
 * `scratch` is the row's memory for text results that are not a part of
 * an argument (lower, upper, ||); NULL where none is needed.
 */
DEVICE_NOINLINE int32_t
dev_call(int32_t fid, const DevDatum *args, DevDatum *r, DevScratch *scratch)
{
    r->isnull = 0;
    r->len = 0;
    r->v.i = 0;
    r->hi = 0;
    switch (fid)
    {
#define DEVFUNC(id, pgf, res, nargs, a1, a2, a3, impl, label) \
        case FUNC_##id: return impl(DT_##res, DT_##a1, DT_##a2);
#include "device_functions.def"
#undef DEVFUNC
        default:
            return DEVERR_INVALID_PROGRAM;
    }
}


/* A numeric's 24 bytes (device_types.def) into a datum. */
DEVICE_FUNC void
dev_load_numeric(const uint8_t *p, DevDatum *d)
{
    d->v.i = dev_load_le(p, 8);
    d->hi = dev_load_le(p + 8, 8);
    d->len = (int32_t) dev_load_le(p + 16, 4);
}

/* A uuid, interval or timetz's bytes (device_types.def) into a datum. */
DEVICE_FUNC void
dev_load_wide(int type, const uint8_t *p, DevDatum *d)
{
    d->v.i = dev_load_le(p, 8);
    d->hi = dev_load_le(p + 8, type == DT_TIMETZ ? 4 : 8);
    if (type == DT_TIMETZ)
        d->hi = (int32_t) d->hi;            /* the zone, sign-extended */
    d->len = 0;
}

/* Bytes of a column value of a fixed-width type passed by reference
 * (uuid, interval, timetz), 0 for the others. */
DEVICE_FUNC int
dev_wide_width(int type)
{
    return type == DT_UUID || type == DT_INTERVAL ? 16 : (type == DT_TIMETZ ? 12 : 0);
}

/* Load row `row` of a column into a datum. */
DEVICE_FUNC void
dev_load_column(const DevColumn *col, uint32_t row, DevDatum *d)
{
    d->len = 0;
    d->hi = 0;
    if (!pgstrom_row_is_valid(col->validity, row))
    {
        d->isnull = 1;
        d->v.i = 0;
        return;
    }
    d->isnull = 0;
    switch (col->type)
    {
        case DT_TEXT:
        case DT_BPCHAR:
        case DT_BYTEA:
            d->v.i = (int64_t) ((const uint8_t *) col->values + col->offsets[row]);
            d->len = (int32_t) (col->offsets[row + 1] - col->offsets[row]);
            break;
        case DT_BOOL: d->v.i = ((const uint8_t *) col->values)[row] != 0; break;
        case DT_INT2: d->v.i = ((const int16_t *) col->values)[row]; break;
        case DT_INT4:
        case DT_DATE: d->v.i = ((const int32_t *) col->values)[row]; break;
        case DT_FLOAT4: d->v.i = 0; d->v.f4 = ((const float *) col->values)[row]; break;
        case DT_FLOAT2: d->v.i = 0; d->v.f4 = dev_half_to_float(((const uint16_t *) col->values)[row]); break;
        case DT_FLOAT8: d->v.f8 = ((const double *) col->values)[row]; break;
        case DT_NUMERIC: dev_load_numeric((const uint8_t *) col->values + (uint64_t) row * 24, d); break;
        case DT_UUID:
        case DT_INTERVAL:
        case DT_TIMETZ:
            dev_load_wide((int) col->type,
                          (const uint8_t *) col->values + (uint64_t) row * dev_wide_width((int) col->type), d);
            break;
        default: d->v.i = ((const int64_t *) col->values)[row]; break;
    }
}

/* The order of a sorted constant set: integers and date/time types by
 * value, floats as float8 with NaN last and -0 = 0, text by its bytes,
 * bpchar without trailing blanks (as equality sees them). */
DEVICE_FUNC int
dev_set_cmp(int type, const DevDatum *a, const DevDatum *b)
{
    switch (type)
    {
        case DT_FLOAT4:
        case DT_FLOAT8:
            return pgstrom_cmp3(dev_as_f8(type, a), dev_as_f8(type, b));
        case DT_TEXT:
            return dev_text_cmp(a, b);
        case DT_BPCHAR:
        {
            DevDatum x = *a, y = *b;

            x.len = dev_bpchar_truelen(a);
            y.len = dev_bpchar_truelen(b);
            return dev_text_cmp(&x, &y);
        }
        default:
            return pgstrom_cmp3(a->v.i, b->v.i);
    }
}

/*
 * OP_IN_SORTED on a non-NULL value x: TRUE / FALSE / NULL as PostgreSQL's
 * ScalarArrayOpExpr gives for = ANY / <> ALL over the set's elements.
 */
DEVICE_NOINLINE int32_t
dev_in_sorted(const DevInstr *in, const uint8_t *data, DevDatum *x)
{
    const uint8_t *set = data + in->imm;
    uint32_t    n = (uint32_t) dev_load_le(set, 4);
    uint32_t    flags = (uint32_t) dev_load_le(set + 4, 4);
    bool        any = (flags & DEV_INSET_ANY) != 0;
    bool        found = false;
    int64_t     lo = 0, hi = (int64_t) n - 1;

    while (lo <= hi)
    {
        int64_t     mid = (lo + hi) / 2;
        const uint8_t *p = set + 8 + mid * 8;
        DevDatum    e;
        int         c;

        e.isnull = 0;
        e.hi = 0;
        e.len = 0;
        if (in->type == DT_TEXT || in->type == DT_BPCHAR)
        {
            e.v.i = (int64_t) (data + dev_load_le(p, 4));
            e.len = (int32_t) dev_load_le(p + 4, 4);
        }
        else
            e.v.i = dev_load_le(p, 8);
        c = dev_set_cmp(in->type, x, &e);
        if (c == 0)
        {
            DevDatum args[2], out;
            int32_t rc;

            args[0] = *x;
            args[1] = e;
            rc = dev_call(in->arg, args, &out, 0);
            if (rc != DEVERR_OK)
                return rc;
            /* = true (ANY) or <> false (ALL): the element matches */
            found = (out.v.i != 0) == any;
            break;
        }
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    x->hi = 0;
    x->len = 0;
    if (found)
        x->v.i = any;
    else if (flags & DEV_INSET_HAS_NULL)
    {
        x->isnull = 1;
        x->v.i = 0;
    }
    else
        x->v.i = !any;
    return DEVERR_OK;
}

/*
 * Where a text / bpchar / bytea result's bytes lie, for a caller that
 * reads them back (pgstrom.device_eval): *source 0 is the program's data
 * section, k + 1 the variable-length column k (rows of source 0, nrows of
 * them); *offset counts from its start.
 */
DEVICE_FUNC void
dev_varlena_ref(const DevDatum *r, const uint8_t *data, const DevColumn *cols, uint32_t ncols,
                uint32_t nrows, int64_t *source, int64_t *offset)
{
    const uint8_t *p = (const uint8_t *) r->v.i;

    for (uint32_t k = 0; k < ncols; k++)
    {
        const uint8_t *base = (const uint8_t *) cols[k].values;

        if (cols[k].offsets && cols[k].source == 0 && p >= base && p + r->len <= base + cols[k].offsets[nrows])
        {
            *source = k + 1;
            *offset = p - base;
            return;
        }
    }
    *source = 0;
    *offset = p - data;
}

DEVICE_FUNC bool
dev_is_varlena_type(uint32_t t)
{
    return t == DT_TEXT || t == DT_BPCHAR || t == DT_BYTEA;
}

DEVICE_FUNC bool
dev_is_true(const DevDatum *d)
{
    return !d->isnull && d->v.i != 0;
}

/*
 * Evaluate `code` (ninstrs instructions, already validated on the host)
 * for one row.  On success *result holds the value (or NULL).  Text that
 * lower, upper or || make lies in *scratch (the caller's), so a caller
 * that returns text results can copy it out before the next row.
 */
DEVICE_FUNC int32_t
dev_eval_row_in(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
                const DevColumn *cols, uint32_t ncols,
                const DevDatum *params, uint32_t nparams,
                const uint32_t *rows, DevDatum *result, DevScratch *scratch)
{
    DevDatum    stack[PGSTROM_MAX_STACK];
    DevDatum    locals[PGSTROM_MAX_LOCALS];
    int         sp = 0;             /* number of values on the stack */
    uint32_t    nlocals = 0;        /* slots below this have been cleared */
    uint32_t    pc = 0;
    uint32_t    steps = 0;

    scratch->used = 0;
    while (pc < ninstrs)
    {
        const DevInstr *in = &code[pc++];

        /* programs only jump forward, so this bounds any loop a broken
         * program could make */
        if (++steps > ninstrs)
            return DEVERR_INVALID_PROGRAM;
        switch (in->op)
        {
            case OP_VAR:
            {
                const DevColumn *col;
                uint32_t    row;

                if (sp >= PGSTROM_MAX_STACK || in->arg < 0 || (uint32_t) in->arg >= ncols)
                    return DEVERR_INVALID_PROGRAM;
                col = &cols[in->arg];
                if (col->source >= PGSTROM_MAX_SOURCES)
                    return DEVERR_INVALID_PROGRAM;
                row = rows[col->source];
                if (row == PGSTROM_NULL_ROW)
                {
                    stack[sp].isnull = 1;
                    stack[sp].len = 0;
                    stack[sp++].v.i = 0;
                }
                else
                    dev_load_column(col, row, &stack[sp++]);
                break;
            }
            case OP_CONST:
                if (sp >= PGSTROM_MAX_STACK)
                    return DEVERR_INVALID_PROGRAM;
                stack[sp].hi = 0;
                if (in->type == DT_TEXT || in->type == DT_BPCHAR || in->type == DT_BYTEA || in->type == DT_TZTAB)
                {
                    /* the host checked imm + arg against data_len (and
                     * a time zone table's layout) */
                    stack[sp].v.i = (int64_t) (data + in->imm);
                    stack[sp].len = in->arg;
                }
                else if (in->type == DT_NUMERIC)
                {
                    /* the host checked that 24 bytes lie there */
                    if (in->arg != 24)
                        return DEVERR_INVALID_PROGRAM;
                    dev_load_numeric(data + in->imm, &stack[sp]);
                }
                else if (dev_wide_width(in->type) != 0)
                {
                    /* the host checked the width and the bounds */
                    if (in->arg != dev_wide_width(in->type))
                        return DEVERR_INVALID_PROGRAM;
                    dev_load_wide(in->type, data + in->imm, &stack[sp]);
                }
                else
                {
                    stack[sp].v.i = in->imm;
                    stack[sp].len = 0;
                }
                stack[sp].isnull = 0;
                sp++;
                break;
            case OP_NULL:
                if (sp >= PGSTROM_MAX_STACK)
                    return DEVERR_INVALID_PROGRAM;
                stack[sp].v.i = 0;
                stack[sp].isnull = 1;
                sp++;
                break;
            case OP_PARAM:
                if (sp >= PGSTROM_MAX_STACK || in->arg < 0 || (uint32_t) in->arg >= nparams)
                    return DEVERR_INVALID_PROGRAM;
                /* its evaluation on the CPU raised an error: PostgreSQL
                 * decides whether this row reaches it */
                if (params[in->arg].isnull == 2)
                    return DEVERR_NEEDS_CPU;
                stack[sp++] = params[in->arg];
                break;
            case OP_FUNC:
            {
                int nargs = dev_func_nargs(in->arg);
                bool anynull = false;

                if (nargs < 1 || nargs > sp)
                    return DEVERR_INVALID_PROGRAM;
                for (int i = sp - nargs; i < sp; i++)
                    anynull |= (stack[i].isnull != 0);
                sp -= nargs;
                if (anynull)
                {
                    stack[sp].isnull = 1;
                    stack[sp].v.i = 0;
                }
                else
                {
                    DevDatum args[3];
                    DevDatum out;
                    int32_t rc;

                    for (int i = 0; i < nargs && i < 3; i++)
                        args[i] = stack[sp + i];
                    rc = dev_call(in->arg, args, &out, scratch);
                    if (rc != DEVERR_OK)
                        return rc;
                    stack[sp] = out;
                }
                sp++;
                break;
            }
            case OP_JUMP:
            case OP_JUMP_IF_FALSE_KEEP:
            case OP_JUMP_IF_TRUE_KEEP:
            case OP_JUMP_IF_NOT_TRUE:
            case OP_JUMP_IF_NOT_NULL_KEEP:
            {
                bool jump;

                if ((uint32_t) in->arg <= pc - 1 || (uint32_t) in->arg > ninstrs)
                    return DEVERR_INVALID_PROGRAM;
                if (in->op != OP_JUMP && sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                switch (in->op)
                {
                    case OP_JUMP: jump = true; break;
                    case OP_JUMP_IF_FALSE_KEEP:
                        jump = !stack[sp - 1].isnull && stack[sp - 1].v.i == 0;
                        break;
                    case OP_JUMP_IF_TRUE_KEEP:
                        jump = dev_is_true(&stack[sp - 1]);
                        break;
                    case OP_JUMP_IF_NOT_TRUE:
                        jump = !dev_is_true(&stack[sp - 1]);
                        sp--;
                        break;
                    default:
                        jump = !stack[sp - 1].isnull;
                        break;
                }
                if (jump)
                    pc = (uint32_t) in->arg;
                break;
            }
            case OP_DISTINCT:
            {
                DevDatum *a, *b;
                bool distinct;

                if (sp < 2 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                if (a->isnull || b->isnull)
                    distinct = (a->isnull != b->isnull);
                else
                {
                    DevDatum args[2];
                    DevDatum out;
                    int32_t rc;

                    args[0] = *a;
                    args[1] = *b;
                    rc = dev_call(in->arg, args, &out, 0);
                    if (rc != DEVERR_OK)
                        return rc;
                    distinct = (out.v.i == 0);
                }
                a->isnull = 0;
                a->v.i = distinct;
                sp--;
                break;
            }
            case OP_STORE_LOCAL:
            case OP_LOAD_LOCAL:
                if (in->arg < 0 || in->arg >= PGSTROM_MAX_LOCALS)
                    return DEVERR_INVALID_PROGRAM;
                /* clear slots on first touch: a load never reads garbage */
                while (nlocals <= (uint32_t) in->arg)
                {
                    locals[nlocals].v.i = 0;
                    locals[nlocals].isnull = 1;
                    locals[nlocals].len = 0;
                    nlocals++;
                }
                if (in->op == OP_STORE_LOCAL)
                {
                    if (sp < 1)
                        return DEVERR_INVALID_PROGRAM;
                    locals[in->arg] = stack[--sp];
                }
                else
                {
                    if (sp >= PGSTROM_MAX_STACK)
                        return DEVERR_INVALID_PROGRAM;
                    stack[sp++] = locals[in->arg];
                }
                break;
            case OP_MINMAX2:
            {
                DevDatum *a, *b;
                bool take_b;

                if (sp < 2 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                if (b->isnull)
                    take_b = false;
                else if (a->isnull)
                    take_b = true;
                else
                {
                    DevDatum args[2];
                    DevDatum out;
                    int32_t rc;

                    args[0] = *b;
                    args[1] = *a;
                    rc = dev_call(in->arg, args, &out, 0);
                    if (rc != DEVERR_OK)
                        return rc;
                    take_b = (out.v.i != 0);
                }
                if (take_b)
                    *a = *b;
                sp--;
                break;
            }
            case OP_IN_SORTED:
            {
                int32_t rc;

                if (sp < 1 || dev_func_nargs(in->arg) != 2)
                    return DEVERR_INVALID_PROGRAM;
                /* NULL = ANY (a non-empty array) is NULL */
                if (stack[sp - 1].isnull)
                    break;
                rc = dev_in_sorted(in, data, &stack[sp - 1]);
                if (rc != DEVERR_OK)
                    return rc;
                break;
            }
            case OP_POP:
                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                sp--;
                break;
            case OP_AND2:
            case OP_OR2:
            {
                DevDatum *a, *b;
                bool is_and = (in->op == OP_AND2);

                if (sp < 2)
                    return DEVERR_INVALID_PROGRAM;
                a = &stack[sp - 2];
                b = &stack[sp - 1];
                /* AND: FALSE wins, then NULL; OR: TRUE wins, then NULL */
                if ((!a->isnull && (a->v.i != 0) != is_and) ||
                    (!b->isnull && (b->v.i != 0) != is_and))
                {
                    a->isnull = 0;
                    a->v.i = is_and ? 0 : 1;
                }
                else if (a->isnull || b->isnull)
                {
                    a->isnull = 1;
                    a->v.i = 0;
                }
                else
                    a->v.i = is_and ? 1 : 0;
                sp--;
                break;
            }
            case OP_NOT:
                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                if (!stack[sp - 1].isnull)
                    stack[sp - 1].v.i = (stack[sp - 1].v.i == 0);
                break;
            case OP_IS_NULL:
            case OP_IS_NOT_NULL:
            case OP_IS_TRUE:
            case OP_IS_NOT_TRUE:
            case OP_IS_FALSE:
            case OP_IS_NOT_FALSE:
            case OP_IS_UNKNOWN:
            case OP_IS_NOT_UNKNOWN:
            {
                DevDatum *d;
                bool n, t, v;

                if (sp < 1)
                    return DEVERR_INVALID_PROGRAM;
                d = &stack[sp - 1];
                n = d->isnull != 0;
                t = !n && d->v.i != 0;
                switch (in->op)
                {
                    case OP_IS_NULL: case OP_IS_UNKNOWN: v = n; break;
                    case OP_IS_NOT_NULL: case OP_IS_NOT_UNKNOWN: v = !n; break;
                    case OP_IS_TRUE: v = t; break;
                    case OP_IS_NOT_TRUE: v = !t; break;
                    case OP_IS_FALSE: v = !n && !t; break;
                    default: v = n || t; break;     /* IS NOT FALSE */
                }
                d->isnull = 0;
                d->v.i = v;
                break;
            }
            default:
                return DEVERR_INVALID_PROGRAM;
        }
    }
    if (sp != 1)
        return DEVERR_INVALID_PROGRAM;
    /* a numeric the device could not hold passed through (CASE, COALESCE):
     * PostgreSQL gives the value */
    if (!stack[0].isnull && stack[0].len == NUM_BIG)
        return DEVERR_NEEDS_CPU;
    *result = stack[0];
    return DEVERR_OK;
}

/* dev_eval_row_in with the row's own scratch memory: a text result that
 * lower, upper or || made is valid only inside the callee (callers that
 * keep results compile no such text) */
DEVICE_FUNC int32_t
dev_eval_row(const DevInstr *code, uint32_t ninstrs, const uint8_t *data,
             const DevColumn *cols, uint32_t ncols,
             const DevDatum *params, uint32_t nparams,
             const uint32_t *rows, DevDatum *result)
{
    DevScratch  scratch;            /* text results made during this row */

    return dev_eval_row_in(code, ninstrs, data, cols, ncols, params, nparams, rows, result, &scratch);
}

#endif  /* PGSTROM_DEVICE_INTERP_H */
