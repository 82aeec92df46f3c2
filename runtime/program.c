/*
 * program.c - which program a process runs, for the profile's name and META:
 * the executable, or, when the executable is a Python interpreter (an mpi4py
 * program), the script (or -m module) it runs, with the script's arguments.
 *
 * RATIONALE: /proc/self/cmdline is all there is before and after MPI; the
 * interpreter's own options are skipped as CPython parses them (an option
 * letter that takes a value consumes the next argument unless joined).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpiscope.h"

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* "python", "python3", "python3.11", "python3.11d"... */
static int is_python(const char *exe)
{
    const char *b = base_of(exe);
    if (strncmp(b, "python", 6) != 0)
        return 0;
    for (b += 6; *b; b++)
        if (!(*b == '.' || (*b >= '0' && *b <= '9') || *b == 'd' || *b == 'm' || *b == 'u'))
            return 0;
    return 1;
}

int mpiscope_program_info(mpiscope_program_t *p)
{
    memset(p, 0, sizeof *p);
    FILE *fp = fopen("/proc/self/cmdline", "rb");
    p->len = fp ? fread(p->cmdline, 1, sizeof p->cmdline - 1, fp) : 0;
    if (fp)
        fclose(fp);
    p->cmdline[p->len] = 0;
    ssize_t n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
    p->exe[n > 0 ? n : 0] = 0;
    snprintf(p->path, sizeof p->path, "%s", p->exe);
    snprintf(p->name, sizeof p->name, "%s", base_of(p->len ? p->cmdline : p->exe));
    p->argv_off = 0;
    if (!is_python(p->exe) && !(p->len && is_python(p->cmdline)))
        return 0;

    /* Python: skip the interpreter and its options; the first other
     * argument is the script (or -m module / -c command ends the options). */
    size_t i = strlen(p->cmdline) + 1;
    while (i < p->len) {
        const char *a = p->cmdline + i;
        size_t next = i + strlen(a) + 1;
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            char real[PATH_MAX];
            snprintf(p->path, sizeof p->path, "%s", realpath(a, real) ? real : a);
            snprintf(p->name, sizeof p->name, "%s", base_of(a));
            size_t k = strlen(p->name);
            if (k > 3 && strcmp(p->name + k - 3, ".py") == 0)
                p->name[k - 3] = 0;
            p->argv_off = i;
            return 1;
        }
        if (strcmp(a, "--") == 0) {
            i = next;
            continue;
        }
        if (a[1] == 'm' || a[1] == 'c') {      /* -m mod, -mmod, -c cmd */
            const char *v = a[2] ? a + 2 : next < p->len ? p->cmdline + next : "";
            snprintf(p->name, sizeof p->name, "%s", a[1] == 'm' ? v : "python-c");
            snprintf(p->path, sizeof p->path, "%s", a[1] == 'm' ? v : "-c");
            p->argv_off = i;
            return 1;
        }
        /* options with a value: -W arg, -X opt, --check-hash-based-pycs mode */
        if ((!a[2] && (a[1] == 'W' || a[1] == 'X')) || strcmp(a, "--check-hash-based-pycs") == 0)
            next += strlen(p->cmdline + next) + 1;
        i = next;
    }
    return 1;      /* the interactive interpreter: its own name */
}
