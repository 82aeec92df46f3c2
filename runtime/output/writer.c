/*
 * writer.c - the profile file (docs/profile-format.md), full mode, written
 * by all ranks together at MPI_Finalize.
 *
 * Each rank turns its tables into records; one MPI_Allreduce gives the
 * section totals (and carries the file name rank 0 picked, never an existing
 * one), one MPI_Exscan each rank's first record in every section; the file
 * is opened collectively with MPI_MODE_EXCL and every rank writes its own
 * records with one MPI_File_write_at_all. No rank gathers another's records.
 *
 * RATIONALE: sections are laid out header, section table, RANKS, FUNCS,
 * HIST, PEERS, REGIONS, NODES, COMMS, ENV, MPIT, TIMELINE, CALLSITES, MODULES, META, so every
 * offset but MODULES' end and META's follows from the totals, and MODULES and META
 * (rank 0's, whose lengths only rank 0 knows after the unions) go last. A rank whose open failed still joins every collective after it
 * (Darshan's rule): the open's result is agreed on with an MPI_Allreduce, so
 * either all ranks write or none does, and nobody waits for a rank that gave
 * up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpiscope.h"
#include "output/callsites_out.h"
#include "tables/sampling.h"

/* Union keys of the environment's texts (environ.c). */
#define ENV_KEY_CPUS 2u
#define ENV_KEY_VARS 3u

enum { W_FUNCS, W_HIST, W_PEERS, W_REGIONS, W_NODES, W_NAMED, W_IOFILES, W_OVERFLOW, W_COMMS, W_MPIT, W_MPIT_ON,
       W_TL_ON, W_SITES, W_SITES_ON, W_SAMPLES, W_SAMPLES_ON, W_NCOUNTS };

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_peer(const void *a, const void *b)
{
    const mpiscope_peer_t *x = a, *y = b;
    return (x->peer > y->peer) - (x->peer < y->peer);
}

/* --- file name ------------------------------------------------------------------ */

static void program_name(char *out, size_t cap)
{
    static mpiscope_program_t p;
    mpiscope_program_info(&p);
    size_t k = 0;
    for (; p.name[k] && k + 1 < cap; k++) {
        char c = p.name[k];
        /* ':' too: ROMIO (MPICH) reads "name:rest" as a file-system prefix and
         * fails the open of a program named with a colon */
        unsigned char u = (unsigned char)c;
        out[k] = (c == '/' || c == ' ' || c == ':' || u < 0x20 || u >= 0x7f) ? '_' : c;
    }
    out[k] = 0;
    if (k == 0)
        snprintf(out, cap, "program");
}

static void job_id(char *out, size_t cap)
{
    static const char *vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "OMPI_MCA_ess_base_jobid",
                                 "PMI_JOBID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0]) {
            size_t k = 0;
            for (; v[k] && k + 1 < cap; k++)
                out[k] = (v[k] == '/' || v[k] == ' ' || v[k] == ':') ? '_' : v[k];
            out[k] = 0;
            return;
        }
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, cap, "%s-%d", ts, (int)getpid());
}

void mpiscope_program_and_job(char *prog, size_t pcap, char *job, size_t jcap)
{
    program_name(prog, pcap);
    job_id(job, jcap);
}

/* Rank 0 picks a name no file has yet (into path; job gets the job id). */
static void pick_name(char *path, size_t cap, char *job)
{
    char prog[256];
    mpiscope_program_and_job(prog, sizeof prog, job, 256);
    const char *dir = mpiscope_settings.DIR_value;
    snprintf(path, cap, "%s/%s.%s.mpiscope", dir, prog, job);
    for (int k = 1; access(path, F_OK) == 0 && k < 100000; k++)
        snprintf(path, cap, "%s/%s.%s.%d.mpiscope", dir, prog, job, k);
}

/* MPI_Allreduce(SUM) of n counts that also carries rank 0's file name to
 * every rank (the others add zeros), so naming costs no collective of its
 * own. */
void mpiscope_counts_and_name(mpiscope_final_t *f, const uint64_t *counts, uint64_t *totals, int n,
                              char *path, size_t cap, char *job)
{
    enum { WORDS = MPISCOPE_PATH_MAX / 8 };
    uint64_t *in = calloc((size_t)n + WORDS, 8), *out = calloc((size_t)n + WORDS, 8);
    memcpy(in, counts, sizeof(uint64_t) * (size_t)n);
    if (f->rank == 0) {
        pick_name(path, cap < MPISCOPE_PATH_MAX ? cap : MPISCOPE_PATH_MAX, job);
        memcpy(in + n, path, strnlen(path, MPISCOPE_PATH_MAX - 1));
    }
    PMPI_Allreduce(in, out, n + WORDS, MPI_UINT64_T, MPI_SUM, f->comm);
    memcpy(totals, out, sizeof(uint64_t) * (size_t)n);
    memcpy(path, out + n, MPISCOPE_PATH_MAX - 1 < cap ? MPISCOPE_PATH_MAX - 1 : cap - 1);
    path[cap - 1 < MPISCOPE_PATH_MAX - 1 ? cap - 1 : MPISCOPE_PATH_MAX - 1] = 0;
    free(in);
    free(out);
}

/* All ranks open path (MPI_MODE_EXCL: an existing file is never
 * overwritten) and agree on the result. Returns 1 if open everywhere.
 * RATIONALE: the runtime's file I/O must fail with our warning, never with
 * the application's file error handler (an application may well set
 * MPI_ERRORS_ARE_FATAL on MPI_FILE_NULL, which every open uses): the open
 * runs with MPI_ERRORS_RETURN on MPI_FILE_NULL, the application's handler is
 * put back right after, and our handle keeps MPI_ERRORS_RETURN for its view,
 * write and close. */
int mpiscope_open_output(mpiscope_final_t *f, MPI_File *fh, const char *path)
{
    MPI_Errhandler app = MPI_ERRHANDLER_NULL;
    int got = PMPI_File_get_errhandler(MPI_FILE_NULL, &app) == MPI_SUCCESS;
    PMPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int rc = PMPI_File_open(f->comm, path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                            MPI_INFO_NULL, fh);
    if (got) {
        PMPI_File_set_errhandler(MPI_FILE_NULL, app);
        if (app != MPI_ERRORS_ARE_FATAL && app != MPI_ERRORS_RETURN)
            PMPI_Errhandler_free(&app);   /* the reference MPI_File_get_errhandler gave us */
    }
    if (rc == MPI_SUCCESS)
        PMPI_File_set_errhandler(*fh, MPI_ERRORS_RETURN);
    int ok = rc == MPI_SUCCESS, all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, f->comm);
    if (all)
        return 1;
    if (f->rank == 0) {
        char msg[MPI_MAX_ERROR_STRING] = "another rank could not open it";
        int len = 0;
        int cls = rc;
        /* The class's string: MPICH's string for the code itself spans lines
         * (an error stack), and the warning is one line. */
        if (!ok && PMPI_Error_class(rc, &cls) == MPI_SUCCESS)
            PMPI_Error_string(cls, msg, &len);
        msg[strcspn(msg, "\r\n")] = 0;
        fprintf(stderr, "mpiscope: warning: cannot write the profile %s: %s; no profile written\n",
                path, msg);
    }
    if (ok)      /* opened here but not everywhere: leave it (closing is collective) */
        *fh = MPI_FILE_NULL;
    return 0;
}

/* Every rank calls this: its non-empty pieces (ascending, disjoint file
 * offsets) become one file view and one memory datatype, written by ONE
 * MPI_File_write_at_all. RATIONALE: each collective I/O call costs every rank
 * a round of synchronization; one call instead of one per section made
 * writing several times faster at 64 oversubscribed ranks. */
int mpiscope_write_pieces(mpiscope_final_t *f, MPI_File fh, const uint64_t *off, const uint64_t *len,
                          const void *const *ptr, int n)
{
    int k = 0, *bl = malloc(sizeof(int) * (size_t)(n ? n : 1));
    MPI_Aint *fd = malloc(sizeof(MPI_Aint) * (size_t)(n ? n : 1)), *md = malloc(sizeof(MPI_Aint) * (size_t)(n ? n : 1));
    MPI_Datatype ft = MPI_BYTE, mt = MPI_BYTE;
    (void)f;
    for (int i = 0; bl && fd && md && i < n; i++) {
        if (!len[i])
            continue;
        bl[k] = (int)len[i];
        fd[k] = (MPI_Aint)off[i];
        PMPI_Get_address(ptr[i], &md[k]);
        k++;
    }
    if (k) {
        PMPI_Type_create_hindexed(k, bl, fd, MPI_BYTE, &ft);
        PMPI_Type_commit(&ft);
        PMPI_Type_create_hindexed(k, bl, md, MPI_BYTE, &mt);
        PMPI_Type_commit(&mt);
    }
    MPI_Status st;
    int rc = PMPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    int rc2 = PMPI_File_write_at_all(fh, 0, k ? MPI_BOTTOM : NULL, k ? 1 : 0, mt, &st);
    if (k) {
        PMPI_Type_free(&ft);
        PMPI_Type_free(&mt);
    }
    free(bl);
    free(fd);
    free(md);
    return rc == MPI_SUCCESS && rc2 == MPI_SUCCESS;
}

/* The 64-byte header of a profile (docs/profile-format.md). */
void mpiscope_header_fill(mpiscope_final_t *f, mpiscope_header_t *h, uint32_t mode, uint32_t nsections,
                          uint32_t any_overflow, uint64_t file_bytes)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MPISCOPE_MAGIC, 8);
    h->version = MPISCOPE_FORMAT_VERSION;
    h->header_bytes = 64;
    h->mode = mode;
    h->flags = (any_overflow ? MPISCOPE_FLAG_OVERFLOW : 0) | (mpiscope_settings.SYNC ? MPISCOPE_FLAG_SYNC : 0);
    h->nranks = (uint64_t)f->size;
    h->nsections = nsections;
    h->section_entry_bytes = 32;
    h->section_table_offset = 64;
    h->start_time = f->start_time;
    h->file_bytes = file_bytes;
}

/* Write every rank's pieces, close the file, agree on success, tell the user.
 *
 * RATIONALE: a write can fail or stop short without MPI-IO saying so (a full
 * tmpfs here: OMPIO reported success for a file cut at 4 KiB of 17 KiB), and
 * a rank killed mid-write leaves a file of any shape. So the header goes out
 * with its magic number zeroed; once every rank's write succeeded and the file
 * has its full size, rank 0 writes the 8 magic bytes in place (no new disk
 * space needed). A file without them is an unfinished profile and the reader
 * says "incomplete" (docs/profile-format.md). SIGXFSZ is ignored meanwhile, so
 * a file size limit (RLIMIT_FSIZE) makes the write fail instead of killing the
 * application after it has done its work. */
void mpiscope_finish_file(mpiscope_final_t *f, MPI_File *fh, const char *path, const uint64_t *off,
                          const uint64_t *len, const void *const *ptr, int n)
{
    const void *mine[16];
    char *head = NULL;
    uint64_t end = 0;
    for (int i = 0; i < n && i < 16; i++) {
        mine[i] = ptr[i];
        if (len[i] && off[i] + len[i] > end)
            end = off[i] + len[i];
        if (len[i] >= 64 && off[i] == 0 && !head && (head = malloc(len[i]))) {
            memcpy(head, ptr[i], len[i]);  /* rank 0's header, its magic zeroed */
            memset(head, 0, 8);
            mine[i] = head;
        }
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, NULL, &old);
    int restore = old.sa_handler == SIG_DFL && sigaction(SIGXFSZ, &ign, NULL) == 0;
    int ok = n <= 16 && mpiscope_write_pieces(f, *fh, off, len, mine, n);
    ok &= PMPI_File_close(fh) == MPI_SUCCESS;
    free(head);
    uint64_t mine_v[2] = {(uint64_t)!ok, end}, all[2] = {1, 0};
    PMPI_Allreduce(mine_v, all, 2, MPI_UINT64_T, MPI_MAX, f->comm);
    if (f->rank == 0) {
        const char *why = all[0] ? "a rank's write failed" : NULL;
        struct stat st;
        if (!why && (stat(path, &st) != 0 || (uint64_t)st.st_size < all[1]))
            why = "the file is shorter than what the ranks wrote (disk full? file size limit?)";
        int fd = why ? -1 : open(path, O_WRONLY);
        if (!why && (fd < 0 || pwrite(fd, MPISCOPE_MAGIC, 8, 0) != 8 || fsync(fd) != 0))
            why = strerror(errno);
        if (fd >= 0)
            close(fd);
        if (why)
            fprintf(stderr, "mpiscope: warning: writing %s failed: %s; the profile is "
                            "incomplete\n", path, why);
        else if (!mpiscope_settings.QUIET)
            fprintf(stderr, "mpiscope: wrote %s\n", path);
    }
    if (restore)
        sigaction(SIGXFSZ, &old, NULL);
}

/* --- META ----------------------------------------------------------------------- */

static void json_file_text(mpiscope_buf_t *b, const char *path, int as_list)
{
    char buf[65536];
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = 0;
    if (!as_list) {
        mpiscope_buf_json_string(b, buf);
        return;
    }
    mpiscope_buf_str(b, "[");
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        if (i)
            mpiscope_buf_str(b, ", ");
        mpiscope_buf_json_string(b, buf + i);
    }
    mpiscope_buf_str(b, "]");
}

void mpiscope_meta_common(mpiscope_final_t *f, mpiscope_buf_t *b, const char *job,
                          const mpiscope_set_t *regions, const mpiscope_set_t *iofiles)
{
    static mpiscope_program_t prog;     /* 72 KiB: not on the stack */
    int interpreted = mpiscope_program_info(&prog);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, ver = 0, sub = 0;
    PMPI_Get_library_version(lib, &len);
    PMPI_Get_version(&ver, &sub);
    char host[256] = "";
    gethostname(host, sizeof host - 1);

    mpiscope_buf_str(b, "{\"program\": ");
    mpiscope_buf_json_string(b, prog.path);
    mpiscope_buf_str(b, ", \"argv\": [");
    for (size_t i = prog.argv_off; i < prog.len; i += strlen(prog.cmdline + i) + 1) {
        mpiscope_buf_str(b, i > prog.argv_off ? ", " : "");
        mpiscope_buf_json_string(b, prog.cmdline + i);
    }
    mpiscope_buf_str(b, "]");
    if (interpreted) {     /* the interpreter and its whole command line */
        mpiscope_buf_str(b, ", \"interpreter\": ");
        mpiscope_buf_json_string(b, prog.exe);
        mpiscope_buf_str(b, ", \"interpreter_argv\": ");
        json_file_text(b, "/proc/self/cmdline", 1);
    }
    mpiscope_buf_str(b, ", \"mpi_library\": ");
    mpiscope_buf_json_string(b, lib);
    mpiscope_buf_printf(b, ", \"mpi_version\": [%d, %d], \"job_id\": ", ver, sub);
    mpiscope_buf_json_string(b, job);
    mpiscope_buf_str(b, ", \"hostname\": ");
    mpiscope_buf_json_string(b, host);
    mpiscope_buf_str(b, ", \"functions\": [");
    for (int i = 0; i < MPISCOPE_NIDS; i++) {
        mpiscope_buf_str(b, i ? ", " : "");
        mpiscope_buf_json_string(b, mpiscope_func_names[i]);
    }
    mpiscope_buf_str(b, "], \"function_kinds\": [");
    for (int i = 0; i < MPISCOPE_NIDS; i++) {
        mpiscope_buf_str(b, i ? ", " : "");
        mpiscope_buf_json_string(b, mpiscope_func_kinds[i]);
    }
    mpiscope_buf_str(b, "], \"regions\": {");
    for (size_t i = 0; regions && i < regions->n; i++) {
        char name[300];
        snprintf(name, sizeof name, "%.*s", (int)regions->e[i].len, regions->e[i].text);
        mpiscope_buf_printf(b, "%s\"%016llx\": ", i ? ", " : "", (unsigned long long)regions->e[i].a);
        mpiscope_buf_json_string(b, name);
    }
    mpiscope_buf_str(b, "}, \"io_files\": [");
    for (size_t i = 0; iofiles && i < iofiles->n; i++) {
        mpiscope_buf_str(b, i ? ", " : "");
        mpiscope_buf_put(b, iofiles->e[i].text, iofiles->e[i].len);
    }
    mpiscope_buf_str(b, "], \"settings\": {");
    mpiscope_settings_json(&mpiscope_settings, b);
    mpiscope_buf_printf(b, "}, \"clock\": \"%s\", \"seconds_per_tick\": %.6e, \"runtime_version\": \"%s\"}",
                        MPISCOPE_CLOCK, f->sec_per_tick, MPISCOPE_VERSION);
}

/* Region names and MPI-IO files over all ranks (only if any rank has some). */
void mpiscope_named_sets(mpiscope_final_t *f, uint64_t named_total, uint64_t io_total,
                         mpiscope_set_t *regions, mpiscope_set_t *iofiles)
{
    memset(regions, 0, sizeof *regions);
    memset(iofiles, 0, sizeof *iofiles);
    if (named_total) {
        unsigned nr = mpiscope_regions_count();
        mpiscope_entry_t *e = calloc(nr ? nr : 1, sizeof *e);
        size_t k = 0;
        for (unsigned s = 1; e && s < nr; s++) {
            uint64_t id, parent, entries, ticks;
            uint32_t depth;
            const char *name;
            mpiscope_region_info(s, &id, &parent, &depth, &entries, &ticks, &name);
            e[k++] = (mpiscope_entry_t){id, 0, name, (uint32_t)strlen(name)};
        }
        mpiscope_set_union(f->comm, e, k, 0, regions);
        free(e);
    }
    if (io_total) {
        mpiscope_entry_t e[64];
        size_t k = mpiscope_io_files_entries(e, 64);
        mpiscope_set_union(f->comm, e, k, 0, iofiles);
    }
}


/* --- full mode ------------------------------------------------------------------- */

uint32_t mpiscope_funcs_fill(mpiscope_final_t *f, mpiscope_func_t *out)
{
    /* in (function, region slot) order */
    mpiscope_thread_t *t = f->t;
    const double spt = f->sec_per_tick;
    qsort(t->used, t->nused, sizeof *t->used, cmp_u32);
    for (uint32_t u = 0; u < t->nused; u++) {
        uint32_t i = t->used[u];
        mpiscope_stat_t *s = &t->stats[i];
        out[u] = (mpiscope_func_t){(uint32_t)f->rank, (uint16_t)(i / mpiscope_nslots), 0,
                                   mpiscope_region_id(i % mpiscope_nslots), s->calls, s->sent, s->recv,
                                   (double)s->ticks * spt, (double)s->min * spt, (double)s->max * spt};
    }
    return t->nused;
}

uint32_t mpiscope_hist_fill(mpiscope_final_t *f, mpiscope_hist_t *out)
{
    /* histogram slot -> function id */
    mpiscope_thread_t *t = f->t;
    short hist_func[MPISCOPE_NHIST > 0 ? MPISCOPE_NHIST : 1];
    for (int id = 0; id < MPISCOPE_NIDS; id++)
        if (mpiscope_func_hist[id] >= 0)
            hist_func[mpiscope_func_hist[id]] = (short)id;
    qsort(t->hused, t->nhused, sizeof *t->hused, cmp_u32);
    for (uint32_t u = 0; u < t->nhused; u++) {
        uint32_t i = t->hused[u];
        uint32_t bucket = i % MPISCOPE_NBUCKETS, rest = i / MPISCOPE_NBUCKETS;
        out[u] = (mpiscope_hist_t){(uint32_t)f->rank, (uint16_t)hist_func[rest / mpiscope_nslots],
                                   (uint8_t)bucket, 0, mpiscope_region_id(rest % mpiscope_nslots),
                                   t->hist[i].count, (double)t->hist[i].ticks * f->sec_per_tick};
    }
    return t->nhused;
}

/* By destination; adds the on/off-node totals to *me. */
uint32_t mpiscope_peers_fill(mpiscope_final_t *f, mpiscope_peer_t *out, mpiscope_rank_t *me)
{
    mpiscope_thread_t *t = f->t;
    uint32_t np = 0;
    for (uint32_t i = 0; i <= t->peer_mask; i++) {
        mpiscope_peer_slot_t *p = &t->peers[i];
        if (!p->key)
            continue;
        int w = (int)p->key - 1;
        out[np++] = (mpiscope_peer_t){(uint32_t)f->rank, (uint32_t)w, p->msgs, p->bytes};
        if (mpiscope_on_node(f, w)) {
            me->on_node_msgs += p->msgs;
            me->on_node_bytes += p->bytes;
        } else {
            me->off_node_msgs += p->msgs;
            me->off_node_bytes += p->bytes;
        }
    }
    qsort(out, np, sizeof *out, cmp_peer);
    return np;
}

/* The region slots entered on this rank (out holds mpiscope_regions_count()). */
uint32_t mpiscope_regions_fill(mpiscope_final_t *f, mpiscope_region_t *out)
{
    unsigned nslot_used = mpiscope_regions_count();
    uint32_t nr = 0;
    for (unsigned s = 1; s < nslot_used; s++) {
        uint64_t id, parent, entries, ticks;
        uint32_t depth;
        const char *name;
        mpiscope_region_info(s, &id, &parent, &depth, &entries, &ticks, &name);
        out[nr++] = (mpiscope_region_t){(uint32_t)f->rank, depth, id, parent, entries,
                                        (double)ticks * f->sec_per_tick};
    }
    return nr;
}

/* Per-communicator records, in (communicator slot, function) order. */
uint32_t mpiscope_comms_fill(mpiscope_final_t *f, mpiscope_comm_t *out)
{
    mpiscope_thread_t *t = f->t;
    qsort(t->cused, t->ncused, sizeof *t->cused, cmp_u32);
    for (uint32_t u = 0; u < t->ncused; u++) {
        uint32_t i = t->cused[u];
        mpiscope_cstat_t *c = &t->cstats[i];
        out[u] = (mpiscope_comm_t){(uint32_t)f->rank, (uint16_t)(i % MPISCOPE_NIDS), 0,
                                   mpiscope_commtab_id(i / MPISCOPE_NIDS), c->calls, c->sent, c->recv,
                                   (double)c->ticks * f->sec_per_tick};
    }
    return t->ncused;
}

/* META "communicators": the union over ranks of the communicators with calls. */
static void comm_names(mpiscope_final_t *f, mpiscope_set_t *out)
{
    mpiscope_thread_t *t = f->t;
    unsigned nslots = mpiscope_commtab_count();
    mpiscope_entry_t *e = calloc(nslots ? nslots : 1, sizeof *e);
    mpiscope_buf_t *texts = calloc(nslots ? nslots : 1, sizeof *texts);
    char *seen = calloc(nslots ? nslots : 1, 1);
    size_t k = 0;
    for (uint32_t u = 0; e && texts && seen && u < t->ncused; u++) {
        unsigned slot = t->cused[u] / MPISCOPE_NIDS;
        uint64_t id;
        if (slot >= nslots || seen[slot] || !mpiscope_commtab_entry(slot, &id, &texts[k]))
            continue;
        seen[slot] = 1;
        e[k] = (mpiscope_entry_t){id, 0, texts[k].data, (uint32_t)texts[k].len};
        k++;
    }
    mpiscope_set_union(f->comm, e, k, 0, out);
    for (size_t i = 0; texts && i < k; i++)
        mpiscope_buf_free(&texts[i]);
    free(e);
    free(texts);
    free(seen);
}

void mpiscope_node_fill(mpiscope_final_t *f, mpiscope_node_t *node)
{
    memset(node, 0, sizeof *node);
    node->node = (uint32_t)f->node;
    node->nranks = (uint32_t)f->node_size;
    gethostname(node->hostname, sizeof node->hostname - 1);
}

void mpiscope_write_profile(mpiscope_final_t *f)
{
    mpiscope_thread_t *t = f->t;
    mpiscope_func_t *funcs = calloc(t->nused ? t->nused : 1, sizeof *funcs);
    mpiscope_funcs_fill(f, funcs);
    mpiscope_hist_t *hist = calloc(t->nhused ? t->nhused : 1, sizeof *hist);
    mpiscope_hist_fill(f, hist);
    mpiscope_rank_t me;
    memset(&me, 0, sizeof me);
    mpiscope_peer_t *peers = calloc(t->npeers ? t->npeers : 1, sizeof *peers);
    uint32_t np = mpiscope_peers_fill(f, peers, &me);
    unsigned nslot_used = mpiscope_regions_count();
    mpiscope_region_t *regs = calloc(nslot_used ? nslot_used : 1, sizeof *regs);
    uint32_t nr = mpiscope_regions_fill(f, regs);
    mpiscope_comm_t *comms = calloc(t->ncused ? t->ncused : 1, sizeof *comms);
    uint32_t nc = mpiscope_comms_fill(f, comms);
    mpiscope_sites_out_t sites;
    uint32_t ns = mpiscope_sites_prepare(f, &sites);
    mpiscope_samples_out_t samples;
    uint32_t nsamp = mpiscope_samples_prepare(f, &samples);   /* before counts: may set overflow */
    sites.extra_modules = samples.module;
    sites.nextra = nsamp;

    /* NODES: the node's lowest rank writes it. */
    mpiscope_node_t node;
    int leader = f->node == f->rank;
    mpiscope_node_fill(f, &node);

    uint64_t counts[W_NCOUNTS] = {t->nused, t->nhused, np, nr, (uint64_t)leader, mpiscope_regions_count() - 1, 0,
                                  f->overflow != 0, nc, mpiscope_mpit_count(),
                                  (uint64_t)mpiscope_mpit_enabled(), (uint64_t)mpiscope_timeline_enabled(), ns,
                                  (uint64_t)mpiscope_sites_on, nsamp, (uint64_t)mpiscope_samples_enabled()};
    mpiscope_entry_t io_probe[64];
    counts[W_IOFILES] = mpiscope_io_files_entries(io_probe, 64);
    uint64_t totals[W_NCOUNTS], first[W_NCOUNTS];
    char path[MPISCOPE_PATH_MAX] = "", job[256] = "";
    mpiscope_counts_and_name(f, counts, totals, W_NCOUNTS, path, sizeof path, job);
    PMPI_Exscan(counts, first, W_NCOUNTS, MPI_UINT64_T, MPI_SUM, f->comm);
    if (f->rank == 0)
        memset(first, 0, sizeof first);

    me.rank = (uint32_t)f->rank;
    me.node = (uint32_t)f->node;
    me.wall = f->wall;
    mpiscope_rank_totals(f, &me.mpi, &me.wait, &me.sync);
    me.func_first = first[W_FUNCS];
    me.hist_first = first[W_HIST];
    me.peer_first = first[W_PEERS];
    me.region_first = first[W_REGIONS];
    me.func_count = t->nused;
    me.hist_count = t->nhused;
    me.peer_count = np;
    me.region_count = nr;
    me.overflow = f->overflow;
    me.threads = f->threads;

    mpiscope_set_t regions, iofiles;
    mpiscope_named_sets(f, totals[W_NAMED], totals[W_IOFILES], &regions, &iofiles);
    mpiscope_set_t commset;
    memset(&commset, 0, sizeof commset);
    if (totals[W_COMMS])
        comm_names(f, &commset);
    mpiscope_mpit_out_t mpit = {0};
    if (totals[W_MPIT_ON])     /* collective: every rank, once any rank has MPISCOPE_MPIT=1 */
        mpiscope_mpit_gather(f, 0, &mpit);
    mpiscope_tl_out_t tl = {0};
    if (totals[W_TL_ON])       /* collective: every rank, once any rank has a timeline */
        mpiscope_timeline_gather(f, 0, &tl);
    const uint64_t tl_per_rank = totals[W_TL_ON] ? (uint64_t)tl.nrows * tl.nb : 0;   /* doubles */
    /* collective: every rank, once any rank records call sites or samples (their MODULES) */
    const int mods_on = totals[W_SITES_ON] || totals[W_SAMPLES_ON];
    if (mods_on)
        mpiscope_sites_gather(f, 0, &sites);
    /* ENV: this rank's record; its CPU list and variable set, once each over all ranks */
    mpiscope_env_t envrec;
    mpiscope_env_fill(f, &envrec);
    mpiscope_entry_t envmine[2];
    mpiscope_set_t envset;
    mpiscope_set_union(f->comm, envmine, mpiscope_env_entries(envmine, ENV_KEY_CPUS, ENV_KEY_VARS), 0,
                       &envset);

    MPI_File fh = MPI_FILE_NULL;
    if (mpiscope_open_output(f, &fh, path)) {
        enum { NSEC_MAX = 14 };
        /* MPIT, TIMELINE, CALLSITES, MODULES and SAMPLES only when recorded: the section table lists the first NSEC */
        mpiscope_section_t sec[NSEC_MAX];
        const uint32_t NSEC = 9 + (totals[W_MPIT_ON] != 0) + (totals[W_TL_ON] != 0) + (totals[W_SITES_ON] != 0) +
                              (mods_on != 0) + (totals[W_SAMPLES_ON] != 0);
        const uint64_t P = (uint64_t)f->size;
        uint64_t off_ranks = 64 + 32 * (uint64_t)NSEC;
        uint64_t off_funcs = off_ranks + 128 * P;
        uint64_t off_hist = off_funcs + 64 * totals[W_FUNCS];
        uint64_t off_peers = off_hist + 32 * totals[W_HIST];
        uint64_t off_regions = off_peers + 24 * totals[W_PEERS];
        uint64_t off_nodes = off_regions + 40 * totals[W_REGIONS];
        uint64_t off_comms = off_nodes + 72 * totals[W_NODES];
        uint64_t off_env = off_comms + 48 * totals[W_COMMS];
        uint64_t off_mpit = off_env + sizeof(mpiscope_env_t) * P;
        uint64_t off_tl = off_mpit + 32 * totals[W_MPIT];
        uint64_t off_sites = off_tl + 8 * tl_per_rank * P;
        uint64_t off_samp = off_sites + 64 * totals[W_SITES];
        uint64_t off_mods = off_samp + 32 * totals[W_SAMPLES];
        uint64_t off_meta = off_mods + (uint64_t)sizeof(mpiscope_module_t) * sites.nmods;   /* rank 0's */

        mpiscope_buf_t head = {0}, meta = {0};
        if (f->rank == 0) {
            mpiscope_meta_common(f, &meta, job, &regions, &iofiles);
            if (meta.len && meta.data[meta.len - 1] == '}') {    /* + "communicators" */
                meta.len--;
                mpiscope_buf_str(&meta, ", \"communicators\": {");
                for (size_t i = 0; i < commset.n; i++) {
                    mpiscope_buf_printf(&meta, "%s\"%016llx\": ", i ? ", " : "",
                                        (unsigned long long)commset.e[i].a);
                    mpiscope_buf_put(&meta, commset.e[i].text, commset.e[i].len);
                }
                mpiscope_buf_str(&meta, "}}");
            }
            if (totals[W_MPIT_ON])
                mpiscope_mpit_meta(&mpit, &meta);
            if (totals[W_TL_ON])
                mpiscope_timeline_meta(&tl, &meta);
            if (totals[W_SITES_ON])
                mpiscope_sites_meta(&sites, &meta);
            if (totals[W_SAMPLES_ON])
                mpiscope_samples_meta(&meta);
            mpiscope_env_meta(&meta, envset.e, envset.n, ENV_KEY_CPUS, ENV_KEY_VARS);
            const mpiscope_section_t all[NSEC_MAX] = {
                {MPISCOPE_SEC_RANKS, 1, off_ranks, 128 * P, P},
                {MPISCOPE_SEC_FUNCS, 1, off_funcs, 64 * totals[W_FUNCS], totals[W_FUNCS]},
                {MPISCOPE_SEC_HIST, 1, off_hist, 32 * totals[W_HIST], totals[W_HIST]},
                {MPISCOPE_SEC_PEERS, 1, off_peers, 24 * totals[W_PEERS], totals[W_PEERS]},
                {MPISCOPE_SEC_REGIONS, 1, off_regions, 40 * totals[W_REGIONS], totals[W_REGIONS]},
                {MPISCOPE_SEC_NODES, 1, off_nodes, 72 * totals[W_NODES], totals[W_NODES]},
                {MPISCOPE_SEC_COMMS, 1, off_comms, 48 * totals[W_COMMS], totals[W_COMMS]},
                {MPISCOPE_SEC_ENV, MPISCOPE_ENV_VERSION, off_env, sizeof(mpiscope_env_t) * P, P},
                {MPISCOPE_SEC_META, 1, off_meta, meta.len, meta.len},
            };
            memcpy(sec, all, sizeof all);
            uint32_t k = 9;
            if (totals[W_MPIT_ON])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_MPIT, 1, off_mpit, 32 * totals[W_MPIT],
                                                totals[W_MPIT]};
            if (totals[W_TL_ON])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_TIMELINE, 1, off_tl, 8 * tl_per_rank * P,
                                                tl_per_rank * P};
            if (totals[W_SITES_ON])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_CALLSITES, 1, off_sites, 64 * totals[W_SITES],
                                                totals[W_SITES]};
            if (mods_on)
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_MODULES, 1, off_mods,
                                                sizeof(mpiscope_module_t) * (uint64_t)sites.nmods, sites.nmods};
            if (totals[W_SAMPLES_ON])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_SAMPLES, 1, off_samp, 32 * totals[W_SAMPLES],
                                                totals[W_SAMPLES]};
            mpiscope_header_t h;
            mpiscope_header_fill(f, &h, MPISCOPE_MODE_FULL, NSEC, totals[W_OVERFLOW] != 0, off_meta + meta.len);
            mpiscope_buf_put(&head, &h, sizeof h);
            mpiscope_buf_put(&head, sec, sizeof sec[0] * NSEC);
        }
        uint64_t off[15] = {0, off_ranks + 128 * (uint64_t)f->rank, off_funcs + 64 * first[W_FUNCS],
                            off_hist + 32 * first[W_HIST], off_peers + 24 * first[W_PEERS],
                            off_regions + 40 * first[W_REGIONS], off_nodes + 72 * first[W_NODES],
                            off_comms + 48 * first[W_COMMS], off_env + sizeof(mpiscope_env_t) * (uint64_t)f->rank,
                            off_mpit + 32 * first[W_MPIT], off_tl + 8 * tl_per_rank * (uint64_t)f->rank,
                            off_sites + 64 * first[W_SITES], off_samp + 32 * first[W_SAMPLES], off_mods,
                            off_meta};
        uint64_t len[15] = {head.len, 128, 64ull * t->nused, 32ull * t->nhused, 24ull * np, 40ull * nr,
                            leader ? 72u : 0u, 48ull * nc, sizeof envrec, 32ull * mpit.nrecs, tl.mine ? 8 * tl_per_rank : 0,
                            64ull * sites.nrecs, 32ull * nsamp,
                            f->rank == 0 ? (uint64_t)sizeof(mpiscope_module_t) * sites.nmods : 0, meta.len};
        const void *ptr[15] = {head.data, &me, funcs, hist, peers, regs, &node, comms, &envrec, mpit.recs,
                               tl.mine, sites.recs, samples.recs, sites.mods, meta.data};
        mpiscope_finish_file(f, &fh, path, off, len, ptr, 15);
        mpiscope_buf_free(&head);
        mpiscope_buf_free(&meta);
    }
    mpiscope_set_free(&regions);
    mpiscope_set_free(&iofiles);
    mpiscope_set_free(&commset);
    mpiscope_mpit_out_free(&mpit);
    mpiscope_timeline_out_free(&tl);
    mpiscope_sites_out_free(&sites);
    mpiscope_samples_out_free(&samples);
    mpiscope_set_free(&envset);
    free(comms);
    free(funcs);
    free(hist);
    free(peers);
    free(regs);
}
