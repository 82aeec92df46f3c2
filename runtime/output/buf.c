/*
 * buf.c - a growable byte buffer and JSON string escaping, for building the
 * profile at MPI_Finalize (never used on the hot path).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

void mpiscope_buf_put(mpiscope_buf_t *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return;          /* out of memory: the text is cut, never overrun */
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void mpiscope_buf_str(mpiscope_buf_t *b, const char *s)
{
    mpiscope_buf_put(b, s, strlen(s));
}

void mpiscope_buf_printf(mpiscope_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        mpiscope_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence starting at p (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3
               : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || len > n || (len == 2 && p[0] < 0xc2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

size_t mpiscope_utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;           /* s[max] continues a character: cut before it */
    return max;
}

/* A JSON string; bytes that are not valid UTF-8 become U+FFFD, so META is
 * always valid UTF-8 JSON whatever names the program used. */
void mpiscope_buf_json_string(mpiscope_buf_t *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    mpiscope_buf_put(b, "\"", 1);
    while (n > 0) {
        size_t k = utf8_seq(p, n);
        if (k == 0) {
            mpiscope_buf_str(b, "\\ufffd");
            k = 1;
        } else if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            mpiscope_buf_put(b, e, 2);
        } else if (*p < 0x20) {
            mpiscope_buf_printf(b, "\\u%04x", *p);
        } else {
            mpiscope_buf_put(b, p, k);
        }
        p += k;
        n -= k;
    }
    mpiscope_buf_put(b, "\"", 1);
}

void mpiscope_buf_free(mpiscope_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
