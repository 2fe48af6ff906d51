/*
 * device_text.h - text and bpchar: comparisons in byte order (the "C"
 * collation), length / char_length / octet_length, strpos, starts_with,
 * and LIKE / NOT LIKE (dev_like serves ILIKE and bytea's LIKE too).  Also
 * the row's scratch memory (DevScratch) for text results that are not a
 * part of an argument.  Functions whose result is a slice of an argument
 * (substring, trim, ...) live in device_strings.h.
 *
 * Mirrors: src/backend/utils/adt/varlena.c, varchar.c, like.c,
 * like_match.c.
 */
#ifndef PGSTROM_DEVICE_TEXT_H
#define PGSTROM_DEVICE_TEXT_H

#include "device_program.h"

/*
 * Memory for the text results of one row's evaluation that are not a part
 * of an argument (lower, upper, ||).  Such a value lives until the row's
 * evaluation ends, which is as long as any text value is used (text is
 * never a program's returned result, a grouping key read back or a stored
 * join key).  A result that does not fit goes to PostgreSQL
 * (DEVERR_NEEDS_CPU), so those functions are compiled only where rows can.
 */
#define PGSTROM_SCRATCH_BYTES   512

typedef struct
{
    uint32_t    used;
    uint8_t     buf[PGSTROM_SCRATCH_BYTES];
} DevScratch;

/* n bytes of the row's scratch memory, or NULL when they do not fit */
DEVICE_FUNC uint8_t *
dev_scratch_alloc(DevScratch *s, int64_t n)
{
    uint8_t *p;

    if (s == 0 || n < 0 || (int64_t) s->used + n > PGSTROM_SCRATCH_BYTES)
        return 0;
    p = s->buf + s->used;
    s->used += (uint32_t) n;
    return p;
}

/* ---- text and bpchar ---------------------------------------------------- */

/* Byte-order comparison (memcmp, then length), as varstr_cmp under C. */
DEVICE_FUNC int
dev_text_cmp(const DevDatum *a, const DevDatum *b)
{
    const uint8_t *x = (const uint8_t *) a->v.i;
    const uint8_t *y = (const uint8_t *) b->v.i;
    int32_t n = a->len < b->len ? a->len : b->len;

    for (int32_t i = 0; i < n; i++)
    {
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    }
    return a->len < b->len ? -1 : (a->len > b->len ? 1 : 0);
}

/* Length of a bpchar value without its trailing blanks (bcTruelen). */
DEVICE_FUNC int32_t
dev_bpchar_truelen(const DevDatum *a)
{
    const uint8_t *x = (const uint8_t *) a->v.i;
    int32_t n = a->len;

    while (n > 0 && x[n - 1] == ' ')
        n--;
    return n;
}

/* Characters in valid UTF-8: bytes that do not continue a sequence. */
DEVICE_FUNC int32_t
dev_utf8_chars(const uint8_t *x, int32_t n)
{
    int32_t count = 0;

    for (int32_t i = 0; i < n; i++)
        count += ((x[i] & 0xC0) != 0x80);
    return count;
}

DEVICE_FUNC int32_t
impl_text(int op, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    switch (op)
    {
        case 0: r->v.i = (a->len == b->len && dev_text_cmp(a, b) == 0); break;
        case 1: r->v.i = !(a->len == b->len && dev_text_cmp(a, b) == 0); break;
        case 2: r->v.i = dev_text_cmp(a, b) < 0; break;
        case 3: r->v.i = dev_text_cmp(a, b) <= 0; break;
        case 4: r->v.i = dev_text_cmp(a, b) > 0; break;
        case 5: r->v.i = dev_text_cmp(a, b) >= 0; break;
        case 6:
        case 7:
        {
            DevDatum x = *a, y = *b;
            bool eq;

            x.len = dev_bpchar_truelen(a);
            y.len = dev_bpchar_truelen(b);
            eq = (x.len == y.len && dev_text_cmp(&x, &y) == 0);
            r->v.i = (op == 6) ? eq : !eq;
            break;
        }
        case 8: r->v.i = dev_utf8_chars((const uint8_t *) a->v.i, a->len); break;
        case 9: r->v.i = a->len; break;
        default: r->v.i = dev_utf8_chars((const uint8_t *) a->v.i, dev_bpchar_truelen(a)); break;
    }
    return DEVERR_OK;
}

/*
 * LIKE, as like_match.c's MatchText for UTF-8: byte comparison, '_' takes
 * one character, '%' any run, '\\' escapes, and the same lazily raised
 * error for a pattern ending in an escape.  PostgreSQL recurses at each
 * '%'; here the suspended '%' loops live in an explicit stack of
 * PGSTROM_LIKE_DEPTH frames.
 */
#define PGSTROM_LIKE_DEPTH  16
#define LIKE_TRUE   1
#define LIKE_FALSE  0
#define LIKE_ABORT  (-1)

DEVICE_FUNC void
dev_utf8_next(const uint8_t **p, int32_t *len)
{
    do
    {
        (*p)++;
        (*len)--;
    } while (*len > 0 && (**p & 0xC0) == 0x80);
}

DEVICE_FUNC void
dev_like_next(const uint8_t **p, int32_t *len, bool bytes)
{
    if (bytes)
    {
        (*p)++;
        (*len)--;
    }
    else
        dev_utf8_next(p, len);
}

/* a pattern or text byte as ILIKE compares it */
DEVICE_FUNC uint8_t
dev_like_fold(uint8_t c, bool fold)
{
    return (fold && c >= 'A' && c <= 'Z') ? (uint8_t) (c + 32) : c;
}

/* `bytes`: '_' takes one byte (bytea), not one UTF-8 character; `fold`:
 * ASCII letters compare case-insensitively (ILIKE over ASCII text, as
 * PostgreSQL's LIKE over both strings lowered) */
DEVICE_NOINLINE int32_t
dev_like(const uint8_t *t, int32_t tlen, const uint8_t *p, int32_t plen, bool bytes, bool fold, int *result)
{
    struct
    {
        const uint8_t *t;
        const uint8_t *p;
        int32_t     tlen;
        int32_t     plen;
        uint8_t     firstpat;
    } frames[PGSTROM_LIKE_DEPTH];
    int         depth = 0;
    int         res;

call:
    /* the body of MatchText(t, tlen, p, plen) */
    if (plen == 1 && *p == '%')
    {
        res = LIKE_TRUE;
        goto ret;
    }
    while (tlen > 0 && plen > 0)
    {
        if (*p == '\\')
        {
            p++;
            plen--;
            if (plen <= 0)
                return DEVERR_LIKE_ESCAPE;
            if (dev_like_fold(*p, fold) != dev_like_fold(*t, fold))
            {
                res = LIKE_FALSE;
                goto ret;
            }
        }
        else if (*p == '%')
        {
            uint8_t firstpat;

            p++;
            plen--;
            while (plen > 0)
            {
                if (*p == '%')
                {
                    p++;
                    plen--;
                }
                else if (*p == '_')
                {
                    if (tlen <= 0)
                    {
                        res = LIKE_ABORT;
                        goto ret;
                    }
                    dev_like_next(&t, &tlen, bytes);
                    p++;
                    plen--;
                }
                else
                    break;
            }
            if (plen <= 0)
            {
                res = LIKE_TRUE;
                goto ret;
            }
            if (*p == '\\')
            {
                if (plen < 2)
                    return DEVERR_LIKE_ESCAPE;
                firstpat = dev_like_fold(p[1], fold);
            }
            else
                firstpat = dev_like_fold(*p, fold);
            if (depth >= PGSTROM_LIKE_DEPTH)
                return DEVERR_LIKE_TOO_COMPLEX;
            frames[depth].t = t;
            frames[depth].tlen = tlen;
            frames[depth].p = p;
            frames[depth].plen = plen;
            frames[depth].firstpat = firstpat;
            depth++;
            goto scan;
        }
        else if (*p == '_')
        {
            dev_like_next(&t, &tlen, bytes);
            p++;
            plen--;
            continue;
        }
        else if (dev_like_fold(*p, fold) != dev_like_fold(*t, fold))
        {
            res = LIKE_FALSE;
            goto ret;
        }
        t++;
        tlen--;
        p++;
        plen--;
    }
    if (tlen > 0)
    {
        res = LIKE_FALSE;
        goto ret;
    }
    while (plen > 0 && *p == '%')
    {
        p++;
        plen--;
    }
    res = (plen <= 0) ? LIKE_TRUE : LIKE_ABORT;
    goto ret;

scan:
    /* the '%' loop of the top frame: try each position whose first byte
     * matches the pattern's next literal */
    while (frames[depth - 1].tlen > 0)
    {
        if (dev_like_fold(*frames[depth - 1].t, fold) == frames[depth - 1].firstpat)
        {
            t = frames[depth - 1].t;
            tlen = frames[depth - 1].tlen;
            p = frames[depth - 1].p;
            plen = frames[depth - 1].plen;
            goto call;
        }
        dev_like_next(&frames[depth - 1].t, &frames[depth - 1].tlen, bytes);
    }
    depth--;
    res = LIKE_ABORT;

ret:
    if (depth == 0)
    {
        *result = res;
        return DEVERR_OK;
    }
    if (res != LIKE_FALSE)
    {
        /* the frame returns what its recursive call returned */
        depth--;
        goto ret;
    }
    dev_like_next(&frames[depth - 1].t, &frames[depth - 1].tlen, bytes);
    goto scan;
}

/* LIKE / NOT LIKE of text (UTF-8 characters) or, `bytes`, bytea */
DEVICE_FUNC int32_t
impl_like(bool negate, bool bytes, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int res = LIKE_FALSE;
    int32_t rc = dev_like((const uint8_t *) a->v.i, a->len, (const uint8_t *) b->v.i, b->len, bytes, false, &res);

    if (rc != DEVERR_OK)
        return rc;
    r->v.i = negate ? (res != LIKE_TRUE) : (res == LIKE_TRUE);
    return DEVERR_OK;
}

/* strpos / position: 1-based character position of the first match, 0
 * if none, 1 for an empty needle (varlena.c text_position) */
DEVICE_FUNC int32_t
impl_strpos(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    const uint8_t *h = (const uint8_t *) a->v.i;
    const uint8_t *n = (const uint8_t *) b->v.i;

    r->v.i = 0;
    if (b->len < 1)
    {
        r->v.i = 1;
        return DEVERR_OK;
    }
    for (int32_t i = 0; i + b->len <= a->len; i++)
    {
        int32_t k = 0;

        while (k < b->len && h[i + k] == n[k])
            k++;
        if (k == b->len)
        {
            r->v.i = dev_utf8_chars(h, i) + 1;
            break;
        }
    }
    return DEVERR_OK;
}

DEVICE_FUNC int32_t
impl_starts_with(const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    DevDatum prefix = *a;

    if (a->len < b->len)
    {
        r->v.i = 0;
        return DEVERR_OK;
    }
    prefix.len = b->len;
    r->v.i = (dev_text_cmp(&prefix, b) == 0);
    return DEVERR_OK;
}

#define IMPL_STRPOS(res, ta, tb)        impl_strpos(&args[0], &args[1], r)
#define IMPL_STARTS_WITH(res, ta, tb)   impl_starts_with(&args[0], &args[1], r)
#define IMPL_LIKE(res, ta, tb)          impl_like(false, false, &args[0], &args[1], r)
#define IMPL_NOT_LIKE(res, ta, tb)      impl_like(true, false, &args[0], &args[1], r)

#define IMPL_TEXT_EQ(res, ta, tb)       impl_text(0, &args[0], &args[1], r)
#define IMPL_TEXT_NE(res, ta, tb)       impl_text(1, &args[0], &args[1], r)
#define IMPL_TEXT_LT(res, ta, tb)       impl_text(2, &args[0], &args[1], r)
#define IMPL_TEXT_LE(res, ta, tb)       impl_text(3, &args[0], &args[1], r)
#define IMPL_TEXT_GT(res, ta, tb)       impl_text(4, &args[0], &args[1], r)
#define IMPL_TEXT_GE(res, ta, tb)       impl_text(5, &args[0], &args[1], r)
#define IMPL_BPCHAR_EQ(res, ta, tb)     impl_text(6, &args[0], &args[1], r)
#define IMPL_BPCHAR_NE(res, ta, tb)     impl_text(7, &args[0], &args[1], r)
#define IMPL_TEXT_LENGTH(res, ta, tb)   impl_text(8, &args[0], &args[0], r)
#define IMPL_OCTET_LENGTH(res, ta, tb)  impl_text(9, &args[0], &args[0], r)
#define IMPL_BPCHAR_LENGTH(res, ta, tb) impl_text(10, &args[0], &args[0], r)

#endif  /* PGSTROM_DEVICE_TEXT_H */
