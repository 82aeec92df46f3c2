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

void mpiscope_buf_json_string(mpiscope_buf_t *b, const char *s)
{
    mpiscope_buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            mpiscope_buf_put(b, e, 2);
        } else if (*p < 0x20) {
            mpiscope_buf_printf(b, "\\u%04x", *p);
        } else {
            mpiscope_buf_put(b, p, 1);
        }
    }
    mpiscope_buf_put(b, "\"", 1);
}

void mpiscope_buf_free(mpiscope_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
