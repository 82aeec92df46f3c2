/*
 * settings.c - MPISCOPE_* variables parsed from the table in settings.h.
 *
 * Each row expands into one parse call whose type picks the parser; a bad
 * value prints one warning (on rank 0) and leaves the default in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

static void warn_bad(int warn, const char *var, const char *val, const char *want, const char *def)
{
    if (warn)
        fprintf(stderr, "mpiscope: warning: %s=%s is not %s; using %s\n", var, val, want,
                def[0] ? def : "the default");
}

static long parse_choice(const char *var, const char *def, const char *range, int warn)
{
    const char *val = getenv(var);
    long idx = 0, def_idx = 0;
    const char *p = range;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strlen(def) == n && strncmp(def, p, n) == 0)
            def_idx = idx;
        if (val && strlen(val) == n && strncmp(val, p, n) == 0)
            return idx;
        idx++;
        p += n + (e ? 1 : 0);
    }
    if (val && val[0]) {
        char want[256];
        snprintf(want, sizeof want, "one of %s", range);
        warn_bad(warn, var, val, want, def);
    }
    return def_idx;
}

static long parse_int(const char *var, const char *def, const char *range, int warn)
{
    const char *val = getenv(var);
    long lo = 0, hi = 0, d = strtol(def, NULL, 10);
    sscanf(range, "%ld..%ld", &lo, &hi);
    if (!val || !val[0])
        return d;
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || *end || end == val || v < lo || v > hi) {
        char want[128];
        snprintf(want, sizeof want, "an integer in %s", range);
        warn_bad(warn, var, val, want, def);
        return d;
    }
    return v;
}

static long parse_bool(const char *var, const char *def, const char *range, int warn)
{
    (void)range;
    const char *val = getenv(var);
    if (!val || !val[0])
        return def[0] == '1';
    if (strcmp(val, "0") == 0 || strcmp(val, "1") == 0)
        return val[0] == '1';
    warn_bad(warn, var, val, "0 or 1", def);
    return def[0] == '1';
}

static long parse_string(const char *var, const char *def, const char *range, int warn)
{
    (void)def, (void)range, (void)warn;
    return getenv(var) && getenv(var)[0] ? 1 : 0;
}

static void setting_text(const char *var, const char *def, char *out, size_t size, long *set)
{
    const char *val = getenv(var);
    if (!val || !val[0])
        val = def;
    if (strlen(val) >= size)
        val = "";
    snprintf(out, size, "%s", val);
    *set = out[0] != 0;
}

void mpiscope_settings_read(mpiscope_settings_t *s, int warn)
{
    memset(s, 0, sizeof *s);
#define MPISCOPE_SETTING_PARSE(name, type, def, range, doc) \
    s->name = parse_##type("MPISCOPE_" #name, def, range, warn);
    MPISCOPE_SETTINGS(MPISCOPE_SETTING_PARSE)
#undef MPISCOPE_SETTING_PARSE
    /* string values; one longer than the buffer is not kept cut (a cut path or command
     * would mislead): DIR falls back to ".", LAUNCH to unknown */
#define MPISCOPE_SETTING_TEXT(name, type, def, range, doc) MPISCOPE_SETTING_READ_##type(name, def)
#define MPISCOPE_SETTING_READ_string(name, def) setting_text("MPISCOPE_" #name, def, s->name##_value, \
                                                             sizeof s->name##_value, &s->name);
#define MPISCOPE_SETTING_READ_int(name, def)
#define MPISCOPE_SETTING_READ_bool(name, def)
#define MPISCOPE_SETTING_READ_choice(name, def)
    MPISCOPE_SETTINGS(MPISCOPE_SETTING_TEXT)
#undef MPISCOPE_SETTING_TEXT
    if (!s->DIR)
        snprintf(s->DIR_value, sizeof s->DIR_value, ".");
}

static void json_choice(mpiscope_buf_t *b, const char *range, long idx)
{
    const char *p = range;
    for (long i = 0; *p; i++) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (i == idx) {
            char v[64];
            snprintf(v, sizeof v, "%.*s", (int)n, p);
            mpiscope_buf_json_string(b, v);
            return;
        }
        p += n + (e ? 1 : 0);
    }
    mpiscope_buf_str(b, "null");
}

void mpiscope_settings_json(const mpiscope_settings_t *s, mpiscope_buf_t *b)
{
    int first = 1;
#define MPISCOPE_SETTING_JSON(name, type, def, range, doc)                  \
    mpiscope_buf_str(b, first ? "\"MPISCOPE_" #name "\": " : ", \"MPISCOPE_" #name "\": "); \
    first = 0;                                                              \
    if (strcmp(#type, "choice") == 0)                                       \
        json_choice(b, range, s->name);                                     \
    else                                                                    \
        MPISCOPE_SETTING_JSON_##type(name)
#define MPISCOPE_SETTING_JSON_string(name) mpiscope_buf_json_string(b, s->name##_value);
#define MPISCOPE_SETTING_JSON_int(name) mpiscope_buf_printf(b, "%ld", s->name);
#define MPISCOPE_SETTING_JSON_bool(name) mpiscope_buf_printf(b, "%ld", s->name);
#define MPISCOPE_SETTING_JSON_choice(name) mpiscope_buf_printf(b, "%ld", s->name);
    MPISCOPE_SETTINGS(MPISCOPE_SETTING_JSON)
#undef MPISCOPE_SETTING_JSON
}
