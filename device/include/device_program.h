/*
 * device_program.h - the device program format: what codegen produces from
 * a PostgreSQL expression, what plans carry, what both engines interpret.
 *
 * A program is a header followed by fixed-size instructions for a stack
 * machine that evaluates one row at a time:
 *
 *   DevProgramHeader | DevInstr[ninstrs] | data[data_len]
 *
 * `data` holds the bytes of variable-length constants (text, bpchar) and
 * of numeric constants (24 bytes each, see device_types.def); an OP_CONST
 * of such a type points into it (imm = offset, arg = length).
 *
 * The host (pgstrom-runtime, program.rs) validates a program before it is
 * run: magic, version, jump targets, operand indexes and the stack depth
 * of every path.  The interpreter checks bounds again as it runs and
 * reports DEVERR_INVALID_PROGRAM rather than touching memory it should not.
 * The constants, op codes and error codes come from device_program.def,
 * device_ops.def and device_errors.def, which build.rs turns into
 * program.rs's too; the struct layouts here and program.rs's serializer
 * are kept in step by hand.
 *
 * Mirrors: no PostgreSQL file; the counterpart of src/include/executor/
 * execExpr.h (ExprEvalStep) for pg_strom's own byte code.
 */
#ifndef PGSTROM_DEVICE_PROGRAM_H
#define PGSTROM_DEVICE_PROGRAM_H

#include "pgstrom_device.h"

/* PGSTROM_PROGRAM_MAGIC, PGSTROM_PROGRAM_VERSION, PGSTROM_MAX_STACK and
 * PGSTROM_MAX_LOCALS (device_program.def, shared with program.rs) */
enum DevProgramConst
{
#define DEVPROG(name, rust_name, rust_type, value, doc) PGSTROM_##name = value,
#include "device_program.def"
#undef DEVPROG
};

typedef struct
{
    uint32_t    magic;
    uint16_t    version;
    uint16_t    flags;          /* reserved, 0 */
    uint32_t    ninstrs;
    uint32_t    max_stack;      /* deepest stack any path reaches */
    uint32_t    nparams;
    uint32_t    result_type;    /* DEVTYPE id */
    uint32_t    data_len;       /* bytes of constant data after the code */
    uint32_t    reserved;       /* 0 */
} DevProgramHeader;

typedef struct
{
    uint16_t    op;             /* DevOp */
    uint16_t    type;           /* DEVTYPE id, where the op needs one */
    int32_t     arg;            /* column, param, jump target, function id */
    int64_t     imm;            /* constant bits */
} DevInstr;

/* Device types: DT_<name>, numbered from 1 in device_types.def order. */
enum DevType
{
    DT_NONE = 0,
#define DEVTYPE(name, oid, width) DT_##name,
#include "device_types.def"
#undef DEVTYPE
    DT__COUNT
};

/* Device functions: FUNC_<id>, numbered from 1 in catalog order. */
enum DevFunc
{
    FUNC_NONE = 0,
#define DEVFUNC(id, pgf, res, nargs, a1, a2, a3, impl, label) FUNC_##id,
#include "device_functions.def"
#undef DEVFUNC
    FUNC__COUNT
};

/* Instructions: OP_<name> (device_ops.def, shared with program.rs, has
 * each one's stack effect and meaning). */
enum DevOp
{
#define DEVOP(name, rust_name, code, mnemonic, doc) OP_##name = code,
#include "device_ops.def"
#undef DEVOP
    OP__COUNT
};

/*
 * Errors a program can raise: DEVERR_<name> (device_errors.def, shared with
 * program.rs).  Those with a SQLSTATE are PostgreSQL's own errors (same
 * SQLSTATE and message, see runtime::program::sql_error); the others mean
 * the row must go to PostgreSQL (DEVERR_NEEDS_CPU) or the program itself
 * is broken.
 */
enum DevErr
{
#define DEVERR(name, code, sqlstate, message) DEVERR_##name = code,
#include "device_errors.def"
#undef DEVERR
};

/*
 * A program is evaluated at one row of each source (see DevColumn.source):
 * rows[0] is the scanned row, rows[d] the inner row of join depth d.
 * PGSTROM_NULL_ROW stands for the NULL-extended row of an outer join: every
 * column read at it is NULL.
 */
#define PGSTROM_MAX_SOURCES      9
#define PGSTROM_NULL_ROW         0xffffffffU

/*
 * The sorted constant set of OP_IN_SORTED, 8-byte aligned in the data
 * section: the header, then nelems elements of 8 bytes in ascending order
 * (dev_set_cmp): a value's bits as OP_CONST's imm holds them, or for text
 * and bpchar the offset of its bytes in the data section and their length
 * (bpchar without trailing blanks), as two uint32.
 */
typedef struct
{
    uint32_t    nelems;
    uint32_t    flags;          /* DEV_INSET_* */
} DevInSet;

#define DEV_INSET_HAS_NULL  1   /* the array holds a NULL element */
#define DEV_INSET_ANY       2   /* = ANY (else <> ALL) */

/* One value on the stack or in a parameter. */
typedef struct
{
    union
    {
        int64_t i;
        double  f8;
        float   f4;
    } v;
    int32_t     isnull;         /* 1: NULL; in a parameter, 2: its
                                 * evaluation failed (ParamValue::failed) */
    int32_t     len;            /* bytes, for text and bpchar; the scale
                                 * or kind of a numeric */
    int64_t     hi;             /* high 64 bits of a numeric's mantissa */
} DevDatum;

/* One input column of a chunk. */
typedef struct
{
    uint32_t        type;       /* DEVTYPE id */
    uint32_t        source;     /* which row index of the evaluation this
                                 * column is read at: 0 = the scanned
                                 * (outer) rows, d = inner rows of join
                                 * depth d */
    const void     *values;     /* nrows values of the type's width, or
                                 * the bytes of a variable-length type */
    const uint8_t  *validity;   /* Arrow validity bitmap, or NULL */
    const uint32_t *offsets;    /* variable-length types: nrows+1 offsets
                                 * into values; NULL otherwise */
} DevColumn;

/* A little-endian integer of `n` bytes at any alignment (columns,
 * constants and tables in the data section are little-endian). */
DEVICE_FUNC int64_t
dev_load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return (int64_t) v;
}

#endif  /* PGSTROM_DEVICE_PROGRAM_H */
