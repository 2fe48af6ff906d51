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
 * Keep this file and program.rs in step.
 *
 * Mirrors: no PostgreSQL file; the counterpart of src/include/executor/
 * execExpr.h (ExprEvalStep) for pg_strom's own byte code.
 */
#ifndef PGSTROM_DEVICE_PROGRAM_H
#define PGSTROM_DEVICE_PROGRAM_H

#include "pgstrom_device.h"

#define PGSTROM_PROGRAM_MAGIC    0x47505350U    /* "PSPG" little-endian */
#define PGSTROM_PROGRAM_VERSION  3
#define PGSTROM_MAX_STACK        32
#define PGSTROM_MAX_LOCALS       16

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

/* Instructions (stack effect in brackets). */
enum DevOp
{
    OP_VAR = 1,                 /* [+1] push column `arg` of this row */
    OP_CONST = 2,               /* [+1] push `imm` as a value of `type`; for
                                 * text/bpchar/numeric: data + imm, `arg`
                                 * bytes */
    OP_NULL = 3,                /* [+1] push NULL */
    OP_PARAM = 4,               /* [+1] push parameter `arg` */
    OP_FUNC = 5,                /* [-nargs+1] call function `arg` */
    OP_JUMP = 6,                /* [0] go to `arg` */
    OP_JUMP_IF_FALSE_KEEP = 7,  /* [0] top is FALSE: go to `arg` */
    OP_JUMP_IF_TRUE_KEEP = 8,   /* [0] top is TRUE: go to `arg` */
    OP_JUMP_IF_NOT_TRUE = 9,    /* [-1] pop; not TRUE (false/NULL): go to `arg` */
    OP_JUMP_IF_NOT_NULL_KEEP = 10, /* [0] top is not NULL: go to `arg` */
    OP_POP = 11,                /* [-1] */
    OP_AND2 = 12,               /* [-1] three-valued AND of the top two */
    OP_OR2 = 13,                /* [-1] three-valued OR */
    OP_NOT = 14,                /* [0] */
    OP_IS_NULL = 15,            /* [0] */
    OP_IS_NOT_NULL = 16,        /* [0] */
    OP_IS_TRUE = 17,            /* [0] BooleanTest family, never NULL */
    OP_IS_NOT_TRUE = 18,
    OP_IS_FALSE = 19,
    OP_IS_NOT_FALSE = 20,
    OP_IS_UNKNOWN = 21,
    OP_IS_NOT_UNKNOWN = 22,
    OP_DISTINCT = 23,           /* [-1] IS DISTINCT FROM; `arg` = equality function */
    OP_STORE_LOCAL = 24,        /* [-1] pop into local slot `arg` */
    OP_LOAD_LOCAL = 25,         /* [+1] push local slot `arg` (NULL if never stored) */
    OP_MINMAX2 = 26,            /* [-1] GREATEST/LEAST step: of a, b keep b when
                                 * b is not NULL and (a is NULL or `arg`(b, a)) */
    OP_IN_SORTED = 27,          /* [0] x = ANY / x <> ALL (a constant array):
                                 * binary search of the sorted set at data +
                                 * imm (DevInSet) for the top value, of
                                 * element type `type`, confirmed by
                                 * comparison `arg` (= for ANY, <> for ALL) */
    OP__COUNT
};

/*
 * Errors a program can raise.  Those >= DEVERR_SQL_FIRST are PostgreSQL's
 * own errors (same SQLSTATE and message, see runtime::program::SqlError);
 * the others mean the program itself is broken.
 */
#define DEVERR_OK                0
#define DEVERR_INVALID_PROGRAM   3
#define DEVERR_SQL_FIRST         16
#define DEVERR_SMALLINT_RANGE    16     /* 22003 smallint out of range */
#define DEVERR_INTEGER_RANGE     17     /* 22003 integer out of range */
#define DEVERR_BIGINT_RANGE      18     /* 22003 bigint out of range */
#define DEVERR_DIVISION_BY_ZERO  19     /* 22012 division by zero */
#define DEVERR_FLOAT_OVERFLOW    20     /* 22003 value out of range: overflow */
#define DEVERR_FLOAT_UNDERFLOW   21     /* 22003 value out of range: underflow */
#define DEVERR_DATE_RANGE        22     /* 22008 date out of range */
#define DEVERR_INFINITE_DATES    23     /* 22008 cannot subtract infinite dates */
#define DEVERR_SQRT_NEGATIVE     24     /* 2201F cannot take square root of a negative number */
#define DEVERR_LIKE_ESCAPE       25     /* 22025 LIKE pattern must not end with escape character */
#define DEVERR_LIKE_TOO_COMPLEX  4      /* a pattern nests more '%' than the device tracks */
#define DEVERR_NEEDS_CPU         5      /* this engine cannot compute the value exactly as
                                         * PostgreSQL does: the row takes the CPU path */
#define DEVERR_POWER_ZERO_NEG    26     /* 2201F zero raised to a negative power is undefined */
#define DEVERR_POWER_COMPLEX     27     /* 2201F a negative number raised to a non-integer power ... */
#define DEVERR_NUMERIC_NAN_INT2  28     /* 0A000 cannot convert NaN to smallint */
#define DEVERR_NUMERIC_NAN_INT4  29     /* 0A000 cannot convert NaN to integer */
#define DEVERR_NUMERIC_NAN_INT8  30     /* 0A000 cannot convert NaN to bigint */
#define DEVERR_NUMERIC_INF_INT2  31     /* 0A000 cannot convert infinity to smallint */
#define DEVERR_NUMERIC_INF_INT4  32     /* 0A000 cannot convert infinity to integer */
#define DEVERR_NUMERIC_INF_INT8  33     /* 0A000 cannot convert infinity to bigint */
#define DEVERR_DATE_TS_RANGE     34     /* 22008 date out of range for timestamp */
#define DEVERR_TIMESTAMP_RANGE   35     /* 22008 timestamp out of range */
#define DEVERR_INTERVAL_RANGE    36     /* 22008 interval out of range */
#define DEVERR_TIME_INFINITE_ADD 37     /* 22008 cannot add infinite interval to time */
#define DEVERR_TIME_INFINITE_SUB 38     /* 22008 cannot subtract infinite interval from time */
#define DEVERR_SUBSTRING_NEGATIVE 39    /* 22011 negative substring length not allowed */
#define DEVERR_SPLIT_PART_ZERO   40     /* 22023 field position must not be zero */
#define DEVERR_LOG_ZERO          41     /* 2201E cannot take logarithm of zero */
#define DEVERR_LOG_NEGATIVE      42     /* 2201E cannot take logarithm of a negative number */
#define DEVERR_INPUT_RANGE       43     /* 22003 input is out of range */

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
