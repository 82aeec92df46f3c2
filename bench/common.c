/* common.c: options, node table, buffers, statistics and JSON lines shared by
 * every benchmark kernel. Nothing here runs inside a timed loop. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <float.h>
#include <sys/time.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bench_common bench_opts;
bench_nodes bench_node;
int bench_rank, bench_size;
double bench_entry_time, bench_init_seconds;
long bench_rss_at_init;

/* The JSON line under construction (rank 0 only). */
static char *common_line;
static size_t common_len, common_cap;
static int common_fields;

static void common_put(const char *text, size_t n)
{
    if (common_len + n + 1 > common_cap) {
        common_cap = (common_len + n + 1) * 2 + 4096;
        common_line = realloc(common_line, common_cap);
        if (!common_line) { perror("mpiscope bench"); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    memcpy(common_line + common_len, text, n);
    common_len += n;
    common_line[common_len] = '\0';
}

static void common_putf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void common_putf(const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof small) { common_put(small, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    common_put(big, (size_t)n);
    free(big);
}

/* JSON string with the escapes the format requires (library version strings
 * carry newlines and tabs). */
static void common_put_string(const char *s)
{
    common_put("\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; common_put(e, 2); }
        else if (c == '\n') common_put("\\n", 2);
        else if (c == '\t') common_put("\\t", 2);
        else if (c < 0x20) common_putf("\\u%04x", c);
        else common_put((const char *)&c, 1);
    }
    common_put("\"", 1);
}

static void common_key(const char *name)
{
    if (common_fields++) common_put(",", 1);
    common_put_string(name);
    common_put(":", 1);
}

static void common_line_begin(const char *type)
{
    common_len = 0;
    common_fields = 0;
    common_put("{", 1);
    common_key("type");
    common_put_string(type);
}

static void common_line_end(void)
{
    common_put("}\n", 2);
    /* RATIONALE: one write per line, flushed, so a killed run keeps every
     * finished row and lines never interleave with other output. */
    fwrite(common_line, 1, common_len, stdout);
    fflush(stdout);
}

void bench_row_begin(const char *table)
{
    if (bench_rank) return;
    common_line_begin("row");
    common_key("table");
    common_put_string(table);
}

void bench_field_int(const char *name, long value)
{
    if (bench_rank) return;
    common_key(name);
    common_putf("%ld", value);
}

void bench_field_num(const char *name, double value)
{
    if (bench_rank) return;
    common_key(name);
    common_putf("%.9g", value);
}

void bench_field_str(const char *name, const char *value)
{
    if (bench_rank) return;
    common_key(name);
    common_put_string(value);
}

void bench_field_stats(const char *name, bench_stats s)
{
    char key[128];
    snprintf(key, sizeof key, "%s_min", name); bench_field_num(key, s.min);
    snprintf(key, sizeof key, "%s_avg", name); bench_field_num(key, s.avg);
    snprintf(key, sizeof key, "%s_max", name); bench_field_num(key, s.max);
}

void bench_field_nums(const char *name, const double *v, int n)
{
    if (bench_rank) return;
    common_key(name);
    common_put("[", 1);
    for (int i = 0; i < n; i++) common_putf(i ? ",%.9g" : "%.9g", v[i]);
    common_put("]", 1);
}

void bench_row_end(void)
{
    if (bench_rank) return;
    common_line_end();
}

void bench_note(const char *fmt, ...)
{
    if (bench_rank) return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    common_line_begin("note");
    common_key("text");
    common_put_string(text);
    common_line_end();
}

void bench_die(const char *fmt, ...)
{
    if (bench_rank == 0) {
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        common_line_begin("error");
        common_key("message");
        common_put_string(text);
        common_line_end();
    }
    MPI_Finalize();
    exit(2);
}

/* "4096", "4K", "4KiB", "1M": bytes; -1 if it does not parse. */
static long common_parse_size(const char *text)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || v < 0) return -1;
    long unit = 1;
    if (*end == 'K' || *end == 'k') unit = 1L << 10;
    else if (*end == 'M' || *end == 'm') unit = 1L << 20;
    else if (*end == 'G' || *end == 'g') unit = 1L << 30;
    if (unit > 1) {
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
    } else if (strcmp(end, "B") == 0) {
        end++;
    }
    return *end ? -1 : v * unit;
}

static int common_parse_int(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > 1000000000L) return -1;
    *out = (int)v;
    return 0;
}

int bench_parse_ints(const char *text, int *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char item[32];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item || n == max) return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (common_parse_int(item, &out[n++])) return -1;
        p += len + (p[len] == ',');
    }
    return n ? n : -1;
}

int bench_has_word(const char *list, const char *word)
{
    size_t w = strlen(word);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == w && strncmp(p, word, w) == 0) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

const char *bench_unknown_word(const char *list, const char *const *known, int n)
{
    static char word[64];
    for (const char *p = list; *p || p == list;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = strlen(known[i]) == len && strncmp(p, known[i], len) == 0;
        if (!found) {
            snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), p);
            return word;
        }
        p += len;
        if (!*p) break;
        p++;
    }
    return NULL;
}

/* The common options as a table, so parsing and the meta line share one list. */
static bench_opt common_table[] = {
    {"min-size", BENCH_SIZE, &bench_opts.min_size, "smallest message size"},
    {"max-size", BENCH_SIZE, &bench_opts.max_size, "largest message size"},
    {"large-size", BENCH_SIZE, &bench_opts.large_size, "sizes above use iters-large"},
    {"iters", BENCH_INT, &bench_opts.iters, "timed iterations per size"},
    {"skip", BENCH_INT, &bench_opts.skip, "warm-up iterations per size"},
    {"iters-large", BENCH_INT, &bench_opts.iters_large, "timed iterations, large sizes"},
    {"skip-large", BENCH_INT, &bench_opts.skip_large, "warm-up iterations, large sizes"},
    {"batches", BENCH_INT, &bench_opts.batches, "timed iterations split into batches"},
    {0},
};

static bench_opt *common_find(bench_opt *table, const char *name)
{
    for (bench_opt *o = table; o && o->name; o++)
        if (strcmp(o->name, name) == 0) return o;
    return NULL;
}

/* Returns NULL on success, else a message (static storage). */
static const char *common_parse(int argc, char **argv, bench_opt *opts)
{
    static char msg[512];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(msg, sizeof msg, "unexpected argument '%s'", arg);
            return msg;
        }
        bench_opt *o = common_find(common_table, arg + 2);
        if (!o) o = common_find(opts, arg + 2);
        if (!o) {
            snprintf(msg, sizeof msg, "unknown option '%s'", arg);
            return msg;
        }
        if (o->kind == BENCH_FLAG) { *(int *)o->dest = 1; continue; }
        if (i + 1 >= argc) {
            snprintf(msg, sizeof msg, "option '%s' needs a value", arg);
            return msg;
        }
        const char *val = argv[++i];
        int bad = 0;
        char *end;
        switch (o->kind) {
        case BENCH_INT: bad = common_parse_int(val, (int *)o->dest); break;
        case BENCH_SIZE: bad = (*(long *)o->dest = common_parse_size(val)) < 0; break;
        case BENCH_DOUBLE:
            *(double *)o->dest = strtod(val, &end);
            bad = end == val || *end || *(double *)o->dest < 0;
            break;
        case BENCH_STRING: *(const char **)o->dest = val; break;
        case BENCH_FLAG: break;
        }
        if (bad) {
            snprintf(msg, sizeof msg, "option '%s': cannot parse '%s'", arg, val);
            return msg;
        }
    }
    if (bench_opts.min_size > bench_opts.max_size) return "min-size is larger than max-size";
    if (bench_opts.iters < 1 || bench_opts.iters_large < 1) return "iters must be at least 1";
    return NULL;
}

static void common_put_options(bench_opt *table)
{
    for (bench_opt *o = table; o && o->name; o++) {
        common_key(o->name);
        switch (o->kind) {
        case BENCH_INT: case BENCH_FLAG: common_putf("%d", *(int *)o->dest); break;
        case BENCH_SIZE: common_putf("%ld", *(long *)o->dest); break;
        case BENCH_DOUBLE: common_putf("%.9g", *(double *)o->dest); break;
        case BENCH_STRING:
            if (*(const char **)o->dest) common_put_string(*(const char **)o->dest);
            else common_put("null", 4);
            break;
        }
    }
}

static void common_build_nodes(void)
{
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, bench_rank, MPI_INFO_NULL,
                        &bench_node.local);
    MPI_Comm_rank(bench_node.local, &bench_node.local_rank);
    MPI_Comm_size(bench_node.local, &bench_node.local_size);
    /* A node is named by its lowest world rank; then renumbered 0..count-1. */
    int leader = bench_rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, bench_node.local);
    int *leaders = malloc(sizeof(int) * (size_t)bench_size);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    bench_node.node_of = malloc(sizeof(int) * (size_t)bench_size);
    bench_node.count = 0;
    for (int r = 0; r < bench_size; r++) {
        if (leaders[r] == r) leaders[r] = -(bench_node.count++) - 1; /* mark leader with its index */
    }
    for (int r = 0; r < bench_size; r++) {
        int l = leaders[r] < 0 ? r : leaders[r];
        bench_node.node_of[r] = -leaders[l] - 1;
    }
    bench_node.node = bench_node.node_of[bench_rank];
    free(leaders);
}

void bench_init(int *argc, char ***argv, const char *kernel, const bench_common *defaults,
                bench_opt *opts)
{
    bench_entry_time = bench_epoch();
    double t0 = bench_epoch();
    MPI_Init(argc, argv);
    bench_init_seconds = bench_epoch() - t0;
    bench_rss_at_init = bench_rss_kib("VmRSS");
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bench_size);
    bench_opts = *defaults;
    common_build_nodes();
    const char *err = common_parse(*argc, *argv, opts);
    if (err) bench_die("%s", err);
    if (bench_rank) return;

    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor;
    MPI_Get_library_version(version, &len);
    MPI_Get_version(&major, &minor);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    common_line_begin("meta");
    common_key("kernel"); common_put_string(kernel);
    common_key("mpi_library"); common_put_string(version);
    common_key("mpi_version"); common_putf("\"%d.%d\"", major, minor);
    common_key("hostname"); common_put_string(host);
    common_key("nranks"); common_putf("%d", bench_size);
    common_key("nnodes"); common_putf("%d", bench_node.count);
    common_key("node_of_rank");
    common_put("[", 1);
    for (int r = 0; r < bench_size; r++) common_putf(r ? ",%d" : "%d", bench_node.node_of[r]);
    common_put("]", 1);
    common_key("options");
    int saved = common_fields;
    common_put("{", 1);
    common_fields = 0;
    common_put_options(common_table);
    common_put_options(opts);
    common_put("}", 1);
    common_fields = saved;
    common_line_end();
}

void bench_finish(void)
{
    if (bench_rank == 0) {
        common_line_begin("end");
        common_line_end();
    }
    MPI_Comm_free(&bench_node.local);
    free(bench_node.node_of);
    MPI_Finalize();
}

int bench_sizes(long **out)
{
    int n = 0;
    long *v = malloc(sizeof(long) * 66);
    long s = bench_opts.min_size;
    if (s == 0) { v[n++] = 0; s = 1; }
    for (; s <= bench_opts.max_size && n < 66; s *= 2) v[n++] = s;
    *out = v;
    return n;
}

int bench_iters(long size)
{
    return size > bench_opts.large_size ? bench_opts.iters_large : bench_opts.iters;
}

int bench_batches(int iters)
{
    int b = bench_opts.batches > 0 ? bench_opts.batches : 1;
    return b < iters ? b : iters;
}

int bench_skip(long size)
{
    return size > bench_opts.large_size ? bench_opts.skip_large : bench_opts.skip;
}

void *bench_buffer(size_t n)
{
    void *p = NULL;
    if (n == 0) n = 1;
    if (posix_memalign(&p, 4096, n)) {
        fprintf(stderr, "mpiscope bench: cannot allocate %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* RATIONALE: not zeros. On this VM a ping-pong between zero-filled buffers
     * was 5-15 % slower at 4-32 KiB than between buffers filled with any other
     * byte, in alternating runs of otherwise identical programs (docs/bench.md);
     * OSU fills its buffers with 'a' and 'b'. 0x3f also reads as a small float
     * and double (0.75, 4.8e-4), harmless for the reducing kernels. */
    memset(p, 0x3f, n);
    return p;
}

void bench_touch(void *buf, size_t n, int c)
{
    memset(buf, c, n);
}

bench_stats bench_stats_active(double value, int active, MPI_Comm comm)
{
    /* Inactive ranks send neutral elements so every rank can join one reduce. */
    double in[3] = {active ? value : DBL_MAX, active ? -value : DBL_MAX, active ? value : 0.0};
    double n[2] = {active ? 1.0 : 0.0}, out[3], cnt;
    bench_stats s;
    MPI_Reduce(in, out, 2, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&in[2], &out[2], 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(n, &cnt, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    s.min = out[0];
    s.max = -out[1];
    s.avg = cnt > 0 ? out[2] / cnt : 0.0;
    return s;
}

bench_stats bench_stats_of(double value, MPI_Comm comm)
{
    bench_stats s;
    int n;
    double sum;
    MPI_Comm_size(comm, &n);
    MPI_Reduce(&value, &s.min, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&value, &s.max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    s.avg = sum / n;
    return s;
}

static int common_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_percentile(double *v, int n, double p)
{
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, common_cmp);
    int k = (int)((p / 100.0) * n + 0.999999) - 1; /* nearest rank */
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

double bench_epoch(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

long bench_rss_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') { kib = strtol(line + n + 1, NULL, 10); break; }
    fclose(f);
    return kib;
}

void bench_gentle_barrier(MPI_Comm comm, int active)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    if (active) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    /* RATIONALE: an idle rank that spun in MPI_Barrier would take a core
     * from the ranks being measured whenever ranks outnumber cores. */
    const struct timespec nap = {0, 50000};
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&nap, NULL);
    }
}
