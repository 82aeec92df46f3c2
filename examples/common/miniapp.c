/* miniapp.c: see miniapp.h. */
#include "miniapp.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void miniapp_fail(const char *app, const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: error: ", app);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

void miniapp_help(const char *usage)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fputs(usage, stdout);
    MPI_Finalize();
    exit(0);
}

long miniapp_int(const char *app, const char *opt, const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        miniapp_fail(app, "%s must be an integer in [%ld, %ld], not '%s'", opt, lo, hi, text);
    return v;
}

double miniapp_double(const char *app, const char *opt, const char *text, double lo)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v) || v < lo)
        miniapp_fail(app, "%s must be a number >= %g, not '%s'", opt, lo, text);
    return v;
}

int miniapp_dims(const char *app, const char *opt, const char *text, int out[3])
{
    int n = 0;
    const char *p = text;
    while (n < 3) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 1 || v > (1L << 30))
            break;
        out[n++] = (int)v;
        if (*end == '\0') {
            if (n >= 2)
                return n;
            break;
        }
        if (*end != 'x')
            break;
        p = end + 1;
    }
    miniapp_fail(app, "%s must look like 64x64 or 32x32x32 (2 or 3 positive integers), not '%s'",
                 opt, text);
}

const char *miniapp_value(const char *app, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        miniapp_fail(app, "option %s needs a value", argv[*i]);
    *i += 1;
    return argv[*i];
}

int miniapp_block(int n, int p, int c, int *start)
{
    int base = n / p, extra = n % p;
    *start = c * base + (c < extra ? c : extra);
    return base + (c < extra ? 1 : 0);
}

void miniapp_rank_order(const char *app, const char *path, int nranks, int *order)
{
    FILE *f = fopen(path, "r");
    if (!f)
        miniapp_fail(app, "cannot read rank order file %s: %s", path, strerror(errno));
    char *seen = calloc((size_t)nranks, 1);
    int count = 0, c, bad = 0;
    long lo = -1;       /* start of an "a-b" range being read */
    long v = -1;        /* number being read */
    for (;;) {
        c = fgetc(f);
        if (c == '#') {
            while (c != '\n' && c != EOF)
                c = fgetc(f);
        }
        if (c != EOF && isdigit(c)) {
            v = (v < 0 ? 0 : v) * 10 + (c - '0');
            if (v > nranks) bad = 1;
            continue;
        }
        if (c == '-' && v >= 0 && lo < 0) {
            lo = v;
            v = -1;
            continue;
        }
        if (v >= 0) {
            long first = lo >= 0 ? lo : v;
            for (long r = first; r <= v && !bad; r++) {
                if (r >= nranks || seen[r] || count >= nranks)
                    bad = 1;
                else {
                    seen[r] = 1;
                    order[count++] = (int)r;
                }
            }
            if (lo >= 0 && first > v) bad = 1;
            v = lo = -1;
        } else if (lo >= 0 || (c != EOF && !isspace(c) && c != ',')) {
            bad = 1;
        }
        if (c == EOF || bad)
            break;
    }
    fclose(f);
    free(seen);
    if (bad || count != nranks)
        miniapp_fail(app, "rank order file %s is not a permutation of ranks 0..%d",
                     path, nranks - 1);
}

uint64_t miniapp_mix(double value, uint64_t global_index)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    /* splitmix64 finaliser over (bits, index): a change in any bit of any
     * value changes the sum. */
    uint64_t z = bits ^ (global_index * 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t miniapp_fixed(double x)
{
    return llround(ldexp(x, 32));
}
