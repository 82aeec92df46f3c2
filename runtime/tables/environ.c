/*
 * environ.c - the environment each rank runs in (the ENV section and META
 * "environment", docs/runtime.md "Environment"): its CPU affinity mask, the
 * OpenMP and MPI tuning variables in effect, how its mask sits among those
 * of the other ranks of its node, and the time MPI_Init and MPI_Finalize
 * took.
 *
 * RATIONALE: everything is recorded at MPI_Init and MPI_Finalize, never on
 * the hot path. The comparison of masks needs the masks of the node's ranks
 * only: one MPI_Allgather on the node communicator MPI_Init already makes
 * (O(ranks per node), never O(P)), after which every rank knows whether it
 * is unbound, which bound ranks share its CPUs and how many threads compete
 * for them; those are plain per-rank numbers, so full mode writes them per
 * rank and summary mode reduces them like any rank metric. The mask itself
 * and the variable set are texts that most ranks share: each is stored once
 * in META under a 64-bit id (FNV-1a, as region ids), found by the same
 * binomial-tree union as region names (merge.c), and a rank's record holds
 * the two ids.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mpiscope.h"

extern char **environ;

#define ENV_MAX_CPUS 1024        /* CPUs of a mask the runtime compares (more: flag MASK_CUT) */
#define ENV_VARS_MAX 16384       /* bytes of one rank's variable set (more: flag VARS_CUT) */
#define ENV_WORDS (ENV_MAX_CPUS / 64)

typedef struct {                 /* what a rank tells the others of its node */
    uint64_t bits[ENV_WORDS];
    uint32_t threads;
    uint32_t pad;
} env_mask_t;

/* The variables a rank records: MPI libraries' tuning knobs and OpenMP's. */
static const char *const env_prefixes[] = {"MPICH_", "MPIR_CVAR_", "OMPI_MCA_", "UCX_", "I_MPI_",
                                           "FI_", "OMP_", "GOMP_", "KMP_"};
/* RATIONALE: launchers put per-process facts in the same namespaces (Open
 * MPI's job id, its rank as 'vpid', its daemon's URI); recorded, they would
 * make every rank's set distinct and the table O(P). They are not tuning:
 * left out by prefix (docs/runtime.md lists them). */
static const char *const env_launcher[] = {"OMPI_MCA_ess", "OMPI_MCA_orte_", "OMPI_MCA_pmix",
                                           "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
                                           "OMPI_MCA_opal_", "OMPI_MCA_plm", "OMPI_MCA_ras",
                                           "OMPI_MCA_rmaps_ppr", "OMPI_MCA_hwloc_base_cpu_list",
                                           "FI_PROVIDER_PATH", "I_MPI_HYDRA_", "I_MPI_PMI_",
                                           "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"};

static struct {
    uint64_t t_enter, t_mpi, t_exit;   /* MPI_Init wrapper: entry, PMPI return, exit (ticks) */
    uint64_t t_fin0, t_fin1;           /* MPI_Finalize entry, end of our barrier */
    double cpu0, cpu1;                 /* process CPU seconds at MPI_Init return, MPI_Finalize */
    double delay0, delay1;             /* run-queue seconds of its threads, same two points */
    double idle0, idle1;               /* idle seconds of the node's CPUs the job may use, same */
    uint64_t nodeset[ENV_WORDS];       /* those CPUs */
    uint32_t flags, ncpus, threads, overlap, overlap_rank, node_cpus;
    double load;
    uint64_t cpus_id, vars_id;
    mpiscope_buf_t cpus, vars;         /* the CPU list and the variable set, as text */
} env;

static double env_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* Seconds the process's threads spent runnable but waiting for a CPU (the
 * second field of /proc/self/task/TID/schedstat, in ns), summed over the
 * threads alive now; 0 where the kernel has no schedstat. Threads that ended
 * before the second reading lose their share: a lower bound. */
static double env_run_delay(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0.0;
    double total = 0.0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", de->d_name);
        FILE *fp = fopen(path, "r");
        unsigned long long oncpu = 0, waited = 0;
        if (fp) {
            if (fscanf(fp, "%llu %llu", &oncpu, &waited) == 2)
                total += 1e-9 * (double)waited;
            fclose(fp);
        }
    }
    closedir(d);
    return total;
}

/* The CPUs of "0-3,8,10-11" (a cpuset list) into bits (those numbered below ENV_MAX_CPUS);
 * returns how many it names, 0 if the text is no list. */
static uint32_t env_parse_list(const char *s, uint64_t *bits)
{
    uint32_t n = 0;
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return 0;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s)
                return 0;
        }
        for (long c = a; c <= b; c++) {
            if (c >= 0 && c < ENV_MAX_CPUS)
                bits[c / 64] |= 1ull << (c % 64);
            n++;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* The CPUs of this node the job may use: its cgroup's cpuset (what a batch system such as
 * Slurm gives the job; v2 cpuset.cpus.effective, v1 cpuset.effective_cpus), else the CPUs
 * online. RATIONALE: a rank's own affinity mask may be narrowed by a launcher or a wrapper
 * (taskset); the node's count tells a pinning mistake (CPUs left idle) from a node that
 * simply has fewer CPUs than the job runs threads, and its idle time (env_idle_seconds)
 * whether the ranks that waited for a CPU could have had one. */
static uint32_t env_node_set(uint64_t *bits)
{
    char line[4096], path[4352], list[4096];
    uint64_t set[ENV_WORDS];
    uint32_t n = 0;
    FILE *fp = fopen("/proc/self/cgroup", "r");
    while (fp && !n && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        if (!strncmp(line, "0::", 3))
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.cpus.effective", b + 1);
        else if (b - a - 1 == 6 && !strncmp(a + 1, "cpuset", 6))
            snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", b + 1);
        else
            continue;
        FILE *cs = fopen(path, "r");
        memset(set, 0, sizeof set);
        if (cs && fgets(list, sizeof list, cs) && (n = env_parse_list(list, set)) != 0)
            memcpy(bits, set, sizeof set);
        if (cs)
            fclose(cs);
    }
    if (fp)
        fclose(fp);
    if (n)
        return n;
    FILE *on = fopen("/sys/devices/system/cpu/online", "r");
    memset(set, 0, sizeof set);
    if (on && fgets(list, sizeof list, on))
        n = env_parse_list(list, set);
    if (on)
        fclose(on);
    if (!n) {   /* no sysfs: CPUs 0..online-1 */
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < c && i < ENV_MAX_CPUS; i++)
            set[i / 64] |= 1ull << (i % 64);
        n = c > 0 ? (uint32_t)c : 0;
    }
    memcpy(bits, set, sizeof set);
    return n;
}

/* Seconds the given CPUs were idle so far (idle + iowait of /proc/stat, summed over them;
 * clock ticks of 1/sysconf(_SC_CLK_TCK) s). */
static double env_idle_seconds(const uint64_t *bits)
{
    FILE *fp = fopen("/proc/stat", "r");
    if (!fp)
        return 0.0;
    long hz = sysconf(_SC_CLK_TCK);
    char line[512];
    unsigned long long ticks = 0;
    while (fgets(line, sizeof line, fp)) {
        int c;
        unsigned long long v[5];
        if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9' ||
            sscanf(line + 3, "%d %llu %llu %llu %llu %llu", &c, &v[0], &v[1], &v[2], &v[3], &v[4]) != 6)
            continue;
        if (c >= 0 && c < ENV_MAX_CPUS && (bits[c / 64] >> (c % 64) & 1))
            ticks += v[3] + v[4];
    }
    fclose(fp);
    return hz > 0 ? (double)ticks / (double)hz : 0.0;
}

void mpiscope_env_init_enter(void)
{
    if (!env.t_enter)
        env.t_enter = mpiscope_now();
}

void mpiscope_env_init_mpi_done(void)
{
    if (!env.t_mpi)
        env.t_mpi = mpiscope_now();
}

void mpiscope_env_init_exit(void)
{
    if (!env.t_exit)
        env.t_exit = mpiscope_now();
}

void mpiscope_env_started(void)
{
    env.cpu0 = env_cpu_seconds();
    env.delay0 = env_run_delay();
    env.node_cpus = env_node_set(env.nodeset);
    env.idle0 = env_idle_seconds(env.nodeset);
}

static int env_has_openmp(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    const char *n = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    n = n ? n + 1 : info->dlpi_name;
    if (n && (!strncmp(n, "libgomp.so", 10) || !strncmp(n, "libomp.so", 9) ||
              !strncmp(n, "libiomp5.so", 11)))
        *(int *)found = 1;
    return 0;
}

/* "0-3,8,10-11" of a mask into b. */
static void env_cpulist(const uint64_t *bits, mpiscope_buf_t *b)
{
    int first = 1;
    for (int c = 0; c < ENV_MAX_CPUS;) {
        if (!(bits[c / 64] >> (c % 64) & 1)) {
            c++;
            continue;
        }
        int end = c;
        while (end + 1 < ENV_MAX_CPUS && (bits[(end + 1) / 64] >> ((end + 1) % 64) & 1))
            end++;
        if (end == c)
            mpiscope_buf_printf(b, "%s%d", first ? "" : ",", c);
        else
            mpiscope_buf_printf(b, "%s%d-%d", first ? "" : ",", c, end);
        first = 0;
        c = end + 1;
    }
    if (first)
        mpiscope_buf_str(b, "");   /* no mask known: the empty list */
}

static int env_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int env_wanted(const char *kv)
{
    int want = 0;
    for (size_t i = 0; i < sizeof env_prefixes / sizeof *env_prefixes; i++)
        want |= !strncmp(kv, env_prefixes[i], strlen(env_prefixes[i]));
    for (size_t i = 0; want && i < sizeof env_launcher / sizeof *env_launcher; i++)
        if (!strncmp(kv, env_launcher[i], strlen(env_launcher[i])))
            want = 0;
    return want && strchr(kv, '=');
}

/* The recorded variables, sorted, as "NAME=value\n" lines (a newline in a
 * value becomes a space, so one line is one variable). */
static void env_variables(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n += env_wanted(*e);
    const char **kv = malloc((n ? n : 1) * sizeof *kv);
    size_t k = 0;
    for (char **e = environ; kv && e && *e && k < n; e++)
        if (env_wanted(*e))
            kv[k++] = *e;
    if (kv)
        qsort(kv, k, sizeof *kv, env_cmp_str);
    for (size_t i = 0; kv && i < k; i++) {
        size_t len = strlen(kv[i]);
        if (env.vars.len + len + 1 > ENV_VARS_MAX) {
            env.flags |= MPISCOPE_ENV_VARS_CUT;
            continue;
        }
        size_t at = env.vars.len;
        mpiscope_buf_put(&env.vars, kv[i], len);
        for (size_t j = at; j < env.vars.len; j++)
            if (env.vars.data[j] == '\n' || env.vars.data[j] == '\r')
                env.vars.data[j] = ' ';
        mpiscope_buf_put(&env.vars, "\n", 1);
    }
    free(kv);
}

/* OpenMP's threads per rank: the first level of OMP_NUM_THREADS, else (unset)
 * one per CPU of the mask, as OpenMP runtimes do; 1 without an OpenMP runtime. */
static uint32_t env_threads(int openmp, uint32_t ncpus)
{
    if (!openmp)
        return 1;
    const char *v = getenv("OMP_NUM_THREADS");
    long t = v ? strtol(v, NULL, 10) : 0;
    if (t > 0)
        return (uint32_t)t;
    return ncpus ? ncpus : 1;
}

static int env_popcount(const uint64_t *a, const uint64_t *b)
{
    int n = 0;
    for (int w = 0; w < ENV_WORDS; w++)
        n += __builtin_popcountll(b ? a[w] & b[w] : a[w]);
    return n;
}

/* At MPI_Init (node: the node's communicator, its rank i = node_ranks[i]). */
void mpiscope_env_node(MPI_Comm node, const int *node_ranks, int node_size)
{
    env_mask_t mine;
    memset(&mine, 0, sizeof mine);
    cpu_set_t *set = CPU_ALLOC(ENV_MAX_CPUS * 4);
    size_t setsize = CPU_ALLOC_SIZE(ENV_MAX_CPUS * 4);
    if (set && sched_getaffinity(0, setsize, set) == 0) {
        for (int c = 0; c < ENV_MAX_CPUS * 4; c++) {
            if (!CPU_ISSET_S(c, setsize, set))
                continue;
            if (c < ENV_MAX_CPUS)
                mine.bits[c / 64] |= 1ull << (c % 64);
            else
                env.flags |= MPISCOPE_ENV_MASK_CUT;
        }
    }
    if (set)
        CPU_FREE(set);
    int openmp = 0;
    dl_iterate_phdr(env_has_openmp, &openmp);
    if (openmp)
        env.flags |= MPISCOPE_ENV_OPENMP;
    env.ncpus = (uint32_t)env_popcount(mine.bits, NULL);
    env.threads = mine.threads = env_threads(openmp, env.ncpus);
    env_cpulist(mine.bits, &env.cpus);
    env_variables();
    env.cpus_id = mpiscope_fnv1a64(env.cpus.data ? env.cpus.data : "", env.cpus.len);
    env.vars_id = mpiscope_fnv1a64(env.vars.data ? env.vars.data : "", env.vars.len);

    int me = 0;
    PMPI_Comm_rank(node, &me);
    env_mask_t *all = malloc(sizeof *all * (size_t)node_size);
    env.overlap_rank = MPISCOPE_ENV_NO_RANK;
    /* every rank of the node joins the gather or none does (never a rank left waiting) */
    int ok = all != NULL, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    if (!all_ok) {
        free(all);
        return;
    }
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node);
    uint64_t all_cpus[ENV_WORDS] = {0};
    for (int q = 0; q < node_size; q++)
        for (int w = 0; w < ENV_WORDS; w++)
            all_cpus[w] |= all[q].bits[w];
    int nall = env_popcount(all_cpus, NULL);
    /* Unbound: free to run on every CPU the node's ranks use, beside other ranks. */
#define ENV_UNBOUND(q) (node_size > 1 && nall > 1 && !memcmp(all[q].bits, all_cpus, sizeof all_cpus))
    if (ENV_UNBOUND(me))
        env.flags |= MPISCOPE_ENV_UNBOUND;
    double demand = 0.0;
    for (int q = 0; q < node_size; q++) {
        int shared = env_popcount(all[q].bits, mine.bits);
        int nq = env_popcount(all[q].bits, NULL);
        if (!shared || !nq)
            continue;
        /* q's threads spread evenly over its mask: this many sit on my CPUs */
        demand += (double)all[q].threads * shared / nq;
        if (q != me && !ENV_UNBOUND(me) && !ENV_UNBOUND(q)) {
            env.overlap++;
            if ((uint32_t)node_ranks[q] < env.overlap_rank)
                env.overlap_rank = (uint32_t)node_ranks[q];
        }
    }
#undef ENV_UNBOUND
    env.load = env.ncpus ? demand / env.ncpus : 0.0;
    free(all);
}

/* At MPI_Finalize entry, before anything is written: the CPU time so far,
 * then the wait for the last rank to reach MPI_Finalize (one barrier: the
 * part of MPI_Finalize that can be timed before the profile is written;
 * PMPI_Finalize's own teardown comes after it). */
void mpiscope_env_finalize(MPI_Comm comm)
{
    env.cpu1 = env_cpu_seconds();
    env.delay1 = env_run_delay();
    env.idle1 = env_idle_seconds(env.nodeset);
    env.t_fin0 = mpiscope_now();
    PMPI_Barrier(comm);
    env.t_fin1 = mpiscope_now();
}

static double env_seconds(uint64_t a, uint64_t b, double spt)
{
    return b > a && a ? (double)(b - a) * spt : 0.0;
}

void mpiscope_env_fill(const mpiscope_final_t *f, mpiscope_env_t *r)
{
    memset(r, 0, sizeof *r);
    r->rank = (uint32_t)f->rank;
    r->flags = env.flags;
    r->cpus = env.cpus_id;
    r->vars = env.vars_id;
    r->init = env_seconds(env.t_enter, env.t_exit, f->sec_per_tick);
    r->init_own = env_seconds(env.t_mpi, env.t_exit, f->sec_per_tick);
    r->finalize = env_seconds(env.t_fin0, env.t_fin1, f->sec_per_tick);
    r->cpu_time = env.cpu1 > env.cpu0 ? env.cpu1 - env.cpu0 : 0.0;
    r->ncpus = env.ncpus;
    r->threads = env.threads;
    r->overlap = env.overlap;
    r->overlap_rank = env.overlap_rank;
    r->load = env.load;
    r->node_cpus = env.node_cpus;
    r->run_delay = env.delay1 > env.delay0 ? env.delay1 - env.delay0 : 0.0;
    r->node_idle = env.idle1 > env.idle0 ? env.idle1 - env.idle0 : 0.0;
}

/* The rank metrics MPISCOPE_RM_INIT.. (summary mode), in enum order. */
void mpiscope_env_metrics(const mpiscope_final_t *f, double *out)
{
    mpiscope_env_t r;
    mpiscope_env_fill(f, &r);
    double v[MPISCOPE_RM_ENV_COUNT] = {
        r.init, r.init_own, r.finalize, r.cpu_time, r.ncpus, r.threads, r.overlap,
        (r.flags & MPISCOPE_ENV_UNBOUND) ? 1.0 : 0.0,
        r.threads > r.ncpus && r.ncpus ? (double)(r.threads - r.ncpus) : 0.0, r.load,
        r.node_cpus, r.run_delay, r.node_idle};
    memcpy(out, v, sizeof v);
}

/* This rank's two texts as union entries: (a_cpus, id, CPU list), (a_vars, id, variables). */
size_t mpiscope_env_entries(mpiscope_entry_t *out, uint64_t a_cpus, uint64_t a_vars)
{
    out[0] = (mpiscope_entry_t){a_cpus, env.cpus_id, env.cpus.data ? env.cpus.data : "",
                                (uint32_t)env.cpus.len};
    out[1] = (mpiscope_entry_t){a_vars, env.vars_id, env.vars.data ? env.vars.data : "",
                                (uint32_t)env.vars.len};
    return 2;
}

/* META "environment": {"cpus": {id: "0-3"}, "variables": {id: {NAME: value}}}
 * from the union's entries, appended to rank 0's META object. */
void mpiscope_env_meta(mpiscope_buf_t *meta, const mpiscope_entry_t *e, size_t n, uint64_t a_cpus,
                       uint64_t a_vars)
{
    if (!meta->len || meta->data[meta->len - 1] != '}')
        return;
    meta->len--;
    mpiscope_buf_str(meta, ", \"environment\": {\"cpus\": {");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (e[i].a != a_cpus)
            continue;
        char *text = strndup(e[i].text, e[i].len);
        mpiscope_buf_printf(meta, "%s\"%016llx\": ", first ? "" : ", ", (unsigned long long)e[i].b);
        mpiscope_buf_json_string(meta, text ? text : "");
        free(text);
        first = 0;
    }
    mpiscope_buf_str(meta, "}, \"variables\": {");
    first = 1;
    for (size_t i = 0; i < n; i++) {
        if (e[i].a != a_vars)
            continue;
        mpiscope_buf_printf(meta, "%s\"%016llx\": {", first ? "" : ", ", (unsigned long long)e[i].b);
        char *text = strndup(e[i].text, e[i].len);
        int firstvar = 1;
        for (char *line = text, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = 0;
            char *eq = strchr(line, '=');
            if (!eq)
                continue;
            *eq = 0;
            mpiscope_buf_str(meta, firstvar ? "" : ", ");
            mpiscope_buf_json_string(meta, line);
            mpiscope_buf_str(meta, ": ");
            mpiscope_buf_json_string(meta, eq + 1);
            firstvar = 0;
            if (!next)
                break;
        }
        free(text);
        mpiscope_buf_str(meta, "}");
        first = 0;
    }
    mpiscope_buf_str(meta, "}}}");
}
