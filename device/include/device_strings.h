/*
 * device_strings.h - text and bytea functions whose result is a part of an
 * argument (no memory to allocate): substring / substr, left, right,
 * btrim / ltrim / rtrim and split_part, as varlena.c and oracle_compat.c
 * compute them: by UTF-8 characters for text (codegen offloads them in
 * UTF-8 databases only), by bytes for bytea.  A result points into its
 * argument's bytes, which live as long as the row's evaluation.  Also
 * lower / upper and || (in the row's scratch memory) and ILIKE over ASCII
 * text.
 *
 * Mirrors: src/backend/utils/adt/varlena.c, oracle_compat.c, like.c
 * (ILIKE).
 */
#ifndef PGSTROM_DEVICE_STRINGS_H
#define PGSTROM_DEVICE_STRINGS_H

#include "device_text.h"

/* Bytes of the UTF-8 character starting at s[0] (pg_utf_mblen), at most
 * `len`; one byte a character when `bytes`. */
DEVICE_FUNC int32_t
dev_char_len(const uint8_t *s, int32_t len, bool bytes)
{
    int32_t l;

    if (bytes)
        l = 1;
    else if ((*s & 0x80) == 0)
        l = 1;
    else if ((*s & 0xe0) == 0xc0)
        l = 2;
    else if ((*s & 0xf0) == 0xe0)
        l = 3;
    else if ((*s & 0xf8) == 0xf0)
        l = 4;
    else
        l = 1;
    return l < len ? l : len;
}

/* Bytes taken by the first `n` characters of s (all of s when it has
 * fewer; none for n <= 0). */
DEVICE_FUNC int32_t
dev_char_bytes(const uint8_t *s, int32_t len, int64_t n, bool bytes)
{
    int32_t off = 0;

    if (bytes)
        return n <= 0 ? 0 : (n < len ? (int32_t) n : len);
    while (n > 0 && off < len)
    {
        off += dev_char_len(s + off, len - off, false);
        n--;
    }
    return off;
}

/* The result: bytes [from, to) of the argument a. */
DEVICE_FUNC int32_t
dev_slice(const DevDatum *a, int32_t from, int32_t to, DevDatum *r)
{
    r->v.i = a->v.i + from;
    r->len = to - from;
    return DEVERR_OK;
}

/*
 * substring(s FROM start [FOR count]) (text_substring, bytea_substring):
 * characters from `start` (1-based; earlier positions count but yield
 * nothing), `count` of them or to the end.
 */
DEVICE_FUNC int32_t
impl_substr(bool bytes, int nargs, const DevDatum *args, DevDatum *r)
{
    const uint8_t *s = (const uint8_t *) args[0].v.i;
    int32_t len = args[0].len;
    int64_t start = args[1].v.i;
    int64_t s1 = start < 1 ? 1 : start;
    int64_t count = -1;             /* to the end */
    int32_t from, to;

    if (nargs == 3)
    {
        int64_t l = args[2].v.i, e = start + args[2].v.i;

        if (l < 0)
            return DEVERR_SUBSTRING_NEGATIVE;
        if (e <= 2147483647LL)
        {
            if (e < 1)
                return dev_slice(&args[0], 0, 0, r);
            count = e - s1;
        }
    }
    from = dev_char_bytes(s, len, s1 - 1, bytes);
    to = count < 0 ? len : from + dev_char_bytes(s + from, len - from, count, bytes);
    return dev_slice(&args[0], from, to, r);
}

/* text_left (`right` false) and text_right */
DEVICE_FUNC int32_t
impl_left_right(bool right, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    const uint8_t *s = (const uint8_t *) a->v.i;
    int64_t n = b->v.i;
    int64_t chars = dev_utf8_chars(s, a->len);
    int32_t off;

    if (!right)
        return dev_slice(a, 0, dev_char_bytes(s, a->len, n < 0 ? chars + n : n, false), r);
    /* -n of INT_MIN wraps in PostgreSQL's int: the whole string */
    n = n < 0 ? (n == -2147483647LL - 1 ? n : -n) : chars - n;
    off = dev_char_bytes(s, a->len, n, false);
    return dev_slice(a, off, a->len, r);
}

/* Is the character c (clen bytes) one of the characters of set? */
DEVICE_FUNC bool
dev_in_charset(const uint8_t *c, int32_t clen, const uint8_t *set, int32_t setlen, bool bytes)
{
    for (int32_t i = 0; i < setlen;)
    {
        int32_t l = dev_char_len(set + i, setlen - i, bytes);
        bool    same = (l == clen);

        for (int32_t k = 0; same && k < l; k++)
            same = (set[i + k] == c[k]);
        if (same)
            return true;
        i += l;
    }
    return false;
}

/* btrim / ltrim / rtrim (dotrim): the characters of the set (a space
 * without one) stripped from the chosen ends */
DEVICE_FUNC int32_t
impl_trim(bool left, bool right, int nargs, const DevDatum *args, DevDatum *r)
{
    const uint8_t *s = (const uint8_t *) args[0].v.i;
    const uint8_t *set = nargs > 1 ? (const uint8_t *) args[1].v.i : (const uint8_t *) " ";
    int32_t setlen = nargs > 1 ? args[1].len : 1;
    int32_t from = 0, to = args[0].len;

    while (left && from < to)
    {
        int32_t l = dev_char_len(s + from, to - from, false);

        if (!dev_in_charset(s + from, l, set, setlen, false))
            break;
        from += l;
    }
    while (right && to > from)
    {
        int32_t p = to - 1;

        while (p > from && (s[p] & 0xc0) == 0x80)
            p--;
        if (!dev_in_charset(s + p, to - p, set, setlen, false))
            break;
        to = p;
    }
    return dev_slice(&args[0], from, to, r);
}

/* The next match of the separator in s[from, len), or -1 (left to right,
 * matches do not overlap). */
DEVICE_FUNC int32_t
dev_find(const uint8_t *s, int32_t from, int32_t len, const uint8_t *sep, int32_t seplen)
{
    for (int32_t i = from; i + seplen <= len; i++)
    {
        int32_t k = 0;

        while (k < seplen && s[i + k] == sep[k])
            k++;
        if (k == seplen)
            return i;
    }
    return -1;
}

/* split_part(s, separator, n): field n (from the end when negative) */
DEVICE_FUNC int32_t
impl_split_part(const DevDatum *args, DevDatum *r)
{
    const uint8_t *s = (const uint8_t *) args[0].v.i;
    const uint8_t *sep = (const uint8_t *) args[1].v.i;
    int32_t len = args[0].len, seplen = args[1].len;
    int64_t n = args[2].v.i, nfields = 1;
    int32_t from = 0, at;

    if (n == 0)
        return DEVERR_SPLIT_PART_ZERO;
    if (len < 1)
        return dev_slice(&args[0], 0, 0, r);
    if (seplen < 1 || dev_find(s, 0, len, sep, seplen) < 0)
        return (n == 1 || n == -1) ? dev_slice(&args[0], 0, len, r) : dev_slice(&args[0], 0, 0, r);
    if (n < 0)
    {
        for (at = dev_find(s, 0, len, sep, seplen); at >= 0; at = dev_find(s, at + seplen, len, sep, seplen))
            nfields++;
        n += nfields + 1;
        if (n <= 0)
            return dev_slice(&args[0], 0, 0, r);
    }
    /* field k runs from `from` to the k-th match (or the end) */
    for (int64_t k = 1;; k++)
    {
        at = dev_find(s, from, len, sep, seplen);
        if (k == n)
            return dev_slice(&args[0], from, at < 0 ? len : at, r);
        if (at < 0)
            return dev_slice(&args[0], 0, 0, r);
        from = at + seplen;
    }
}

/* Is any byte of the value outside ASCII? */
DEVICE_FUNC bool
dev_has_non_ascii(const DevDatum *a)
{
    const uint8_t *s = (const uint8_t *) a->v.i;

    for (int32_t i = 0; i < a->len; i++)
        if (s[i] & 0x80)
            return true;
    return false;
}

/*
 * lower / upper: ASCII letters mapped as every locale codegen accepts maps
 * them; a value with other characters (which map by the collation's
 * rules) goes to PostgreSQL.
 */
DEVICE_FUNC int32_t
impl_case(bool upper, const DevDatum *a, DevDatum *r, DevScratch *scratch)
{
    const uint8_t *s = (const uint8_t *) a->v.i;
    uint8_t *out;

    if (dev_has_non_ascii(a) || (out = dev_scratch_alloc(scratch, a->len)) == 0)
        return DEVERR_NEEDS_CPU;
    for (int32_t i = 0; i < a->len; i++)
    {
        uint8_t c = s[i];

        out[i] = upper ? ((c >= 'a' && c <= 'z') ? (uint8_t) (c - 32) : c)
                       : ((c >= 'A' && c <= 'Z') ? (uint8_t) (c + 32) : c);
    }
    r->v.i = (int64_t) out;
    r->len = a->len;
    return DEVERR_OK;
}

/* text || text */
DEVICE_FUNC int32_t
impl_textcat(const DevDatum *a, const DevDatum *b, DevDatum *r, DevScratch *scratch)
{
    uint8_t *out = dev_scratch_alloc(scratch, (int64_t) a->len + b->len);

    if (out == 0)
        return DEVERR_NEEDS_CPU;
    for (int32_t i = 0; i < a->len; i++)
        out[i] = ((const uint8_t *) a->v.i)[i];
    for (int32_t i = 0; i < b->len; i++)
        out[a->len + i] = ((const uint8_t *) b->v.i)[i];
    r->v.i = (int64_t) out;
    r->len = a->len + b->len;
    return DEVERR_OK;
}

/* ILIKE / NOT ILIKE (UTF-8: LIKE over both values lowered): ASCII values
 * on the device, others by PostgreSQL */
DEVICE_FUNC int32_t
impl_ilike(bool negate, const DevDatum *a, const DevDatum *b, DevDatum *r)
{
    int res = LIKE_FALSE;
    int32_t rc;

    if (dev_has_non_ascii(a) || dev_has_non_ascii(b))
        return DEVERR_NEEDS_CPU;
    rc = dev_like((const uint8_t *) a->v.i, a->len, (const uint8_t *) b->v.i, b->len, false, true, &res);
    if (rc != DEVERR_OK)
        return rc;
    r->v.i = negate ? (res != LIKE_TRUE) : (res == LIKE_TRUE);
    return DEVERR_OK;
}

#define IMPL_LOWER(res, ta, tb)         impl_case(false, &args[0], r, scratch)
#define IMPL_UPPER(res, ta, tb)         impl_case(true, &args[0], r, scratch)
#define IMPL_TEXTCAT(res, ta, tb)       impl_textcat(&args[0], &args[1], r, scratch)
#define IMPL_ILIKE(res, ta, tb)         impl_ilike(false, &args[0], &args[1], r)
#define IMPL_NOT_ILIKE(res, ta, tb)     impl_ilike(true, &args[0], &args[1], r)
#define IMPL_SUBSTR(res, ta, tb)        impl_substr(false, dev_func_nargs(fid), args, r)
#define IMPL_BYTEA_SUBSTR(res, ta, tb)  impl_substr(true, dev_func_nargs(fid), args, r)
#define IMPL_LEFT(res, ta, tb)          impl_left_right(false, &args[0], &args[1], r)
#define IMPL_RIGHT(res, ta, tb)         impl_left_right(true, &args[0], &args[1], r)
#define IMPL_BTRIM(res, ta, tb)         impl_trim(true, true, dev_func_nargs(fid), args, r)
#define IMPL_LTRIM(res, ta, tb)         impl_trim(true, false, dev_func_nargs(fid), args, r)
#define IMPL_RTRIM(res, ta, tb)         impl_trim(false, true, dev_func_nargs(fid), args, r)
#define IMPL_SPLIT_PART(res, ta, tb)    impl_split_part(args, r)

#endif  /* PGSTROM_DEVICE_STRINGS_H */
