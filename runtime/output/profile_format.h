/*
 * profile_format.h - the on-disk layout of an mpiscope profile, version 1.
 *
 * This header is the C half of the contract; src/mpiscope/format.py is the
 * Python half and docs/profile-format.md the prose. Change all three together
 * and bump MPISCOPE_FORMAT_VERSION (or the section's version) when a layout
 * changes.
 *
 * RATIONALE: every section is an array of fixed-size little-endian records,
 * 8-byte aligned, so the reader maps it straight into a numpy structured
 * array (no per-record parsing) and every rank can compute where its records
 * go with one MPI_Exscan, then write them with one MPI_File_write_at_all.
 */
#ifndef MPISCOPE_PROFILE_FORMAT_H
#define MPISCOPE_PROFILE_FORMAT_H

#include <stdint.h>

#define MPISCOPE_MAGIC "MPISCOPE"         /* 8 bytes, no NUL in the file */
#define MPISCOPE_FORMAT_VERSION 1u

enum mpiscope_mode { MPISCOPE_MODE_FULL = 0, MPISCOPE_MODE_SUMMARY = 1 };

enum mpiscope_flags {
    MPISCOPE_FLAG_PARTIAL = 1u << 0,       /* snapshot, not written at MPI_Finalize */
    MPISCOPE_FLAG_OVERFLOW = 1u << 1,      /* some rank dropped data (see rank.overflow) */
    MPISCOPE_FLAG_SYNC = 1u << 2           /* MPISCOPE_SYNC=1 was in effect */
};

/* Bits of mpiscope_rank_t.overflow: which fixed table filled up on that rank. */
enum mpiscope_overflow {
    MPISCOPE_OVF_PEERS = 1u << 0,
    MPISCOPE_OVF_REGIONS = 1u << 1,
    MPISCOPE_OVF_REQUESTS = 1u << 2,
    MPISCOPE_OVF_COMMS = 1u << 3,
    MPISCOPE_OVF_COMM_TABLES = 1u << 4,   /* more communicators than MPISCOPE_MAX_COMM_TABLES */
    MPISCOPE_OVF_THREADS = 1u << 5,       /* more threads in MPI at once than MPISCOPE_MAX_THREADS:
                                             the extra ones shared one table (counts exact) */
    MPISCOPE_OVF_CANCELS = 1u << 6,       /* a cancelled receive could not be followed: its bytes
                                             stay counted */
    MPISCOPE_OVF_OTHER_JOB = 1u << 7,     /* point-to-point messages to processes of another job
                                             (spawned, connected): counted, with no peer record */
    MPISCOPE_OVF_CALLSITES = 1u << 8,     /* more call sites than MPISCOPE_MAX_CALLSITES: the rest in site 0 */
    MPISCOPE_OVF_MODULES = 1u << 9,       /* call sites in more loaded objects than MPISCOPE_MODULES_MAX */
    MPISCOPE_OVF_SAMPLES = 1u << 10       /* a thread's sample table was full: those samples are in
                                             its "other" row (MPISCOPE_SAMPLE) */
};

enum mpiscope_section_kind {
    MPISCOPE_SEC_META = 1,     /* UTF-8 JSON object, written by rank 0 */
    MPISCOPE_SEC_RANKS = 2,    /* nranks x mpiscope_rank_t, in rank order (full mode) */
    MPISCOPE_SEC_FUNCS = 3,    /* mpiscope_func_t, grouped by rank in rank order */
    MPISCOPE_SEC_HIST = 4,     /* mpiscope_hist_t, grouped by rank */
    MPISCOPE_SEC_PEERS = 5,    /* mpiscope_peer_t, grouped by rank (full mode) */
    MPISCOPE_SEC_REGIONS = 6,  /* mpiscope_region_t, grouped by rank */
    MPISCOPE_SEC_NODES = 7,    /* mpiscope_node_t, one per node (full mode) */
    MPISCOPE_SEC_SUMMARY = 8,  /* mpiscope_summary_t (summary mode) */
    MPISCOPE_SEC_INFLIGHT = 9, /* mpiscope_inflight_t: snapshots only (partial profiles) */
    MPISCOPE_SEC_COMMS = 10,   /* mpiscope_comm_t, grouped by rank (full mode) */
    MPISCOPE_SEC_ENV = 11,     /* mpiscope_env_t, nranks records in rank order (full mode) */
    MPISCOPE_SEC_MPIT = 12,    /* MPI_T variables: mpiscope_mpit_t (full), mpiscope_summary_t (summary) */
    MPISCOPE_SEC_MODULES = 13, /* mpiscope_module_t: the objects call sites are in, rank 0 (union) */
    MPISCOPE_SEC_CALLSITES = 14, /* mpiscope_callsite_t (full), mpiscope_summary_t (summary) */
    MPISCOPE_SEC_TIMELINE = 15, /* time bins: doubles, rank x row x bin (full); mpiscope_summary_t (summary) */
    MPISCOPE_SEC_SAMPLES = 16,  /* mpiscope_sample_t, grouped by rank (full mode, MPISCOPE_SAMPLE > 0);
                                   mpiscope_sample_summary_t (summary mode) */
    MPISCOPE_SEC_MEMBERS = 17  /* mpiscope_member_t: partial profiles only (written by mpiscope merge) */
};

/* A reader skips section kinds it does not know, so new kinds (per-communicator
 * tables, MPI-4 partitioned traffic...) can be added without a format bump. */

typedef struct {                 /* 64 bytes at offset 0 */
    char magic[8];               /* "MPISCOPE" */
    uint32_t version;            /* MPISCOPE_FORMAT_VERSION */
    uint32_t header_bytes;       /* 64 */
    uint32_t mode;               /* enum mpiscope_mode */
    uint32_t flags;              /* enum mpiscope_flags */
    uint64_t nranks;             /* size of MPI_COMM_WORLD */
    uint32_t nsections;
    uint32_t section_entry_bytes; /* 32 */
    uint64_t section_table_offset; /* 64 */
    double start_time;           /* MPI_Init on rank 0, seconds since the Unix epoch */
    uint64_t file_bytes;         /* total length of the file; detects truncation */
} mpiscope_header_t;

typedef struct {                 /* 32 bytes */
    uint32_t kind;               /* enum mpiscope_section_kind */
    uint32_t version;            /* layout version of this section's records, 1 */
    uint64_t offset;             /* from the start of the file, multiple of 8 */
    uint64_t length;             /* bytes */
    uint64_t count;              /* records (for META: bytes of JSON) */
} mpiscope_section_t;

typedef struct {                 /* 128 bytes, record r is rank r */
    uint32_t rank;
    uint32_t node;               /* world rank of the lowest rank on this node */
    double wall;                 /* MPI_Init return .. MPI_Finalize entry, s */
    double mpi;                  /* time inside wrapped MPI calls (incl. sync), s */
    double wait;                 /* time in Wait/Test/Probe/Recv-family ("Wait and Probe") */
    double sync;                 /* MPISCOPE_SYNC barrier time before collectives */
    uint64_t func_first;         /* index of this rank's first record in FUNCS */
    uint64_t hist_first;
    uint64_t peer_first;
    uint64_t region_first;
    uint32_t func_count;
    uint32_t hist_count;
    uint32_t peer_count;
    uint32_t region_count;
    uint64_t on_node_msgs;       /* point-to-point sent to ranks on this node */
    uint64_t on_node_bytes;
    uint64_t off_node_msgs;
    uint64_t off_node_bytes;
    uint32_t overflow;           /* enum mpiscope_overflow bits */
    uint32_t threads;            /* threads that called MPI */
} mpiscope_rank_t;

typedef struct {                 /* 64 bytes: one (function, region) on one rank */
    uint32_t rank;
    uint16_t func;               /* index into META "functions" */
    uint16_t reserved;           /* 0; room for a communicator class */
    uint64_t region;             /* FNV-1a 64 of the region name, 0 = no region */
    uint64_t calls;
    uint64_t bytes_sent;
    uint64_t bytes_recv;
    double time;                 /* s, summed over calls */
    double time_min;             /* s, fastest single call */
    double time_max;             /* s, slowest single call */
} mpiscope_func_t;

typedef struct {                 /* 32 bytes: one log2 size bucket */
    uint32_t rank;
    uint16_t func;
    uint8_t bucket;              /* 0: 0 bytes; b>0: [2^(b-1), 2^b) bytes */
    uint8_t reserved;
    uint64_t region;
    uint64_t count;
    double time;
} mpiscope_hist_t;

typedef struct {                 /* 24 bytes: point-to-point sent rank -> peer */
    uint32_t rank;
    uint32_t peer;               /* world rank */
    uint64_t msgs;
    uint64_t bytes;
} mpiscope_peer_t;

typedef struct {                 /* 40 bytes: one region on one rank */
    uint32_t rank;
    uint32_t depth;              /* 1 = outermost */
    uint64_t region;
    uint64_t parent;             /* 0 = top level */
    uint64_t entries;            /* times entered */
    double wall;                 /* s, inclusive, summed over entries */
} mpiscope_region_t;

typedef struct {                 /* 72 bytes, one hostname per node */
    uint32_t node;               /* world rank of the node's lowest rank */
    uint32_t nranks;             /* ranks on this node */
    char hostname[64];           /* NUL-padded */
} mpiscope_node_t;

/* The timeline (docs/profile-format.md "TIMELINE"): META "timeline" names the
 * rows and gives the bin width. Full mode: nranks x rows x bins doubles (s,
 * bytes for the "bytes" row), rank-major. Summary mode: one mpiscope_summary_t
 * per (row, bin): func = row, metric = bin, region 0. */

/* Summary mode: one record per (func, region, metric); func 0xFFFF marks a
 * rank-level metric (region 0). Ranks holding the minimum / maximum come from
 * MPI_MINLOC / MPI_MAXLOC; ties go to the lowest rank. */
#define MPISCOPE_SUMMARY_RANK_LEVEL 0xFFFFu
enum mpiscope_rank_metric {
    MPISCOPE_RM_WALL = 0, MPISCOPE_RM_MPI, MPISCOPE_RM_WAIT, MPISCOPE_RM_SYNC,
    MPISCOPE_RM_COMPUTE, MPISCOPE_RM_ON_MSGS, MPISCOPE_RM_ON_BYTES,
    MPISCOPE_RM_OFF_MSGS, MPISCOPE_RM_OFF_BYTES,
    /* the environment (ENV) values of each rank, reduced like the others */
    MPISCOPE_RM_INIT, MPISCOPE_RM_INIT_OWN, MPISCOPE_RM_FINALIZE, MPISCOPE_RM_CPU_TIME,
    MPISCOPE_RM_NCPUS, MPISCOPE_RM_THREADS, MPISCOPE_RM_OVERLAP, MPISCOPE_RM_UNBOUND,
    MPISCOPE_RM_OVERSUB, MPISCOPE_RM_LOAD, MPISCOPE_RM_NODE_CPUS, MPISCOPE_RM_RUN_DELAY,
    MPISCOPE_RM_NODE_IDLE, MPISCOPE_RM_COUNT
};
#define MPISCOPE_RM_ENV_COUNT (MPISCOPE_RM_COUNT - MPISCOPE_RM_INIT)
enum mpiscope_func_metric {
    MPISCOPE_FM_CALLS = 0, MPISCOPE_FM_BYTES_SENT, MPISCOPE_FM_BYTES_RECV,
    MPISCOPE_FM_TIME, MPISCOPE_FM_COUNT
};

typedef struct {                 /* 56 bytes */
    uint16_t func;
    uint16_t metric;
    uint32_t reserved;
    uint64_t region;
    double min;                  /* over all ranks (0 for ranks without the key) */
    double max;
    double sum;
    uint32_t min_rank;
    uint32_t max_rank;
    uint64_t nonzero;            /* ranks with a non-zero value */
} mpiscope_summary_t;

/* In summary mode the HIST section holds sums over ranks with rank = 0xFFFFFFFF. */
#define MPISCOPE_ALL_RANKS 0xFFFFFFFFu

typedef struct {                 /* 48 bytes: one (communicator, function) on one rank */
    uint32_t rank;
    uint16_t func;               /* index into META "functions" */
    uint16_t reserved;
    uint64_t comm;               /* communicator id: META "communicators" (1 world, 2 self, 0 other) */
    uint64_t calls;
    uint64_t bytes_sent;
    uint64_t bytes_recv;
    double time;                 /* s, summed over calls */
} mpiscope_comm_t;

/* MPI_T performance variables (MPISCOPE_MPIT=1; docs/runtime.md "MPI_T
 * performance variables"): META "mpit" "variables" describes each variable
 * once; records index that list. In summary mode the MPIT section holds
 * mpiscope_summary_t records instead: func = variable, metric = one of these,
 * region 0. */
enum mpiscope_mpit_metric { MPISCOPE_MPIT_VALUE = 0, MPISCOPE_MPIT_PEAK = 1, MPISCOPE_MPIT_NMETRICS = 2 };
typedef struct {                 /* 32 bytes: one variable on one rank (full mode) */
    uint32_t rank;
    uint16_t var;                /* index into META "mpit" "variables" */
    uint16_t reserved;
    double value;                /* at MPI_Finalize: a level's last value, a counter's or timer's
                                    growth since MPI_Init, a mark's value (0: unreadable) */
    double peak;                 /* a level's highest sample (sampled high-water mark); else value */
    uint64_t samples;            /* reads behind peak */
} mpiscope_mpit_t;
/* --- call sites (docs/runtime.md "Call sites") -----------------------------------
 * A site is (function, frames); a frame is (module, offset): the loaded
 * object it is in (MODULES, merged over ranks by build ID) and the return
 * address's offset in it (the address the object was linked at, so ranks
 * loaded at different addresses agree; a Python frame: its line). META
 * "callsites" "sites" gives each site id its function and frames. */
#define MPISCOPE_MODULES_MAX 256       /* loaded objects holding call sites, per process */
#define MPISCOPE_MODULE_PATH 4096
enum mpiscope_module_kind { MPISCOPE_MODULE_ELF = 1, MPISCOPE_MODULE_PYTHON = 2 };
typedef struct {                 /* 4168 bytes: one object (or Python source file) with call sites */
    uint64_t key;                /* the id frames name: FNV-1a 64 of kind and build ID (else path) */
    uint16_t kind;               /* enum mpiscope_module_kind */
    uint16_t build_id_len;       /* bytes of build_id (0: no GNU build ID) */
    uint32_t path_len;
    uint64_t file_size;          /* stat() of path when its first site was found (0: unknown) */
    double mtime;                /* s since the epoch, idem */
    uint8_t build_id[40];        /* NT_GNU_BUILD_ID; a Python source: FNV-1a 64 of its bytes (8) */
    char path[MPISCOPE_MODULE_PATH];   /* NUL-padded */
} mpiscope_module_t;

#define MPISCOPE_SITE_TOTAL 0xFFu      /* bucket of a site's totals record */
typedef struct {                 /* 64 bytes: one (function, call site) on one rank, or one size bucket of it */
    uint32_t rank;
    uint16_t func;               /* index into META "functions" */
    uint8_t bucket;              /* MPISCOPE_SITE_TOTAL: the site's totals; b < 64: its calls of size bucket b */
    uint8_t reserved;
    uint64_t site;               /* key of META "callsites" "sites"; 0: calls no room was left for */
    uint64_t calls;
    uint64_t bytes_sent;         /* totals record only (0 in a bucket record) */
    uint64_t bytes_recv;
    double time;                 /* s, summed over calls */
    double time_min;             /* s, fastest single call (totals record) */
    double time_max;             /* s, slowest single call (totals record) */
} mpiscope_callsite_t;
/* Summary mode: mpiscope_summary_t records, func = function, region = site,
 * metric = one of these (min/max over ranks with MINLOC/MAXLOC as for functions). */
enum mpiscope_site_metric {
    MPISCOPE_SM_CALLS = 0, MPISCOPE_SM_BYTES_SENT, MPISCOPE_SM_BYTES_RECV, MPISCOPE_SM_TIME,
    MPISCOPE_SM_CALL_MIN = 4,        /* min: the fastest call on any rank, min_rank its rank */
    MPISCOPE_SM_CALL_MAX = 5,        /* max: the slowest call on any rank, max_rank its rank */
    MPISCOPE_SM_BUCKET_CALLS = 64,   /* + bucket: sum = calls of that size bucket over all ranks */
    MPISCOPE_SM_BUCKET_TIME = 128    /* + bucket: sum = their time */
};

/* --- sampled compute (docs/sampling.md) -------------------------------------------
 * Per-thread CPU-time timers (MPISCOPE_SAMPLE Hz); each sample is one period
 * of that thread's CPU time. Outside MPI a sample is the interrupted program
 * counter as (module, offset), symbolized offline like a call site's frame;
 * inside a wrapped MPI call it counts for that function. META "samples"
 * gives the rate. */
#define MPISCOPE_SAMPLE_COMPUTE 0xFFFFu   /* func: outside MPI, at (module, offset) */
#define MPISCOPE_SAMPLE_OTHER 0xFFFEu     /* func: samples not kept (table full, or past the top
                                             MPISCOPE_SAMPLE_MAX rows of the rank) */
#define MPISCOPE_SAMPLE_MPI_LAYER 0xFFFDu /* func: at (module, offset) in the MPI library or in
                                             mpiscope's wrappers, outside a wrapped call's
                                             MPI part (a wrapper's own code): MPI, not compute */
typedef struct {                 /* 32 bytes: one address (or MPI function) of one thread of one rank */
    uint32_t rank;
    uint16_t func;               /* MPISCOPE_SAMPLE_COMPUTE / _OTHER / _MPI_LAYER, else the wrapped MPI function
                                    (index into META "functions") the thread was in */
    uint16_t thread;             /* index of the thread's tables (0 = the first to call MPI) */
    uint64_t module;             /* MODULES key; 0: in no loaded object known (and in MPI / other) */
    uint64_t offset;             /* the program counter - the object's load bias (0 in MPI / other) */
    uint64_t samples;
} mpiscope_sample_t;

/* Summary mode: one record per function over all ranks (output/samples_out.c).
 * A compute function is (module, offset of its start) as the unwind tables
 * (.eh_frame) give it, else the sampled address's own offset; min/max/sum are
 * of the per-rank sample counts (every thread of the rank), 0 for a rank
 * without the function. func as mpiscope_sample_t's (one MPI_LAYER row, module
 * and offset 0), and two totals per rank: */
#define MPISCOPE_SAMPLE_ALL 0xFFFCu       /* func: every sample of the rank */
#define MPISCOPE_SAMPLE_COMPUTE_ALL 0xFFFBu /* func: the rank's samples outside MPI (compute + other) */
typedef struct {                 /* 56 bytes */
    uint16_t func;
    uint16_t reserved;
    uint32_t nonzero;            /* ranks with a sample here */
    uint64_t module;             /* MODULES key; 0: in no known object (and for MPI / other / totals) */
    uint64_t offset;             /* the function's start - the object's load bias */
    double min;                  /* samples, over all ranks */
    double max;
    double sum;
    uint32_t min_rank;           /* MPI_MINLOC / MPI_MAXLOC: ties go to the lowest rank */
    uint32_t max_rank;
} mpiscope_sample_summary_t;

/* --- the environment (docs/runtime.md "Environment") ----------------------------
 * One record per rank, recorded at MPI_Init; the variable sets and CPU lists
 * themselves are in META "environment", each once, under a 64-bit id
 * (FNV-1a of its text, as region ids). */
enum mpiscope_env_flags {
    MPISCOPE_ENV_UNBOUND = 1u << 0,      /* mask = every CPU the node's ranks use, node shared */
    MPISCOPE_ENV_OPENMP = 1u << 1,       /* an OpenMP runtime is loaded in the process */
    MPISCOPE_ENV_MASK_CUT = 1u << 2,     /* CPUs numbered 1024 or more are not in the mask */
    MPISCOPE_ENV_VARS_CUT = 1u << 3      /* the variable set was cut to 16 KiB */
};
#define MPISCOPE_ENV_NO_RANK 0xFFFFFFFFu
/* section layout: 2 added node_cpus and run_delay (v1: 80 bytes), 3 node_idle (v2: 96) */
#define MPISCOPE_ENV_VERSION 3
typedef struct {                 /* 104 bytes, record r is rank r */
    uint32_t rank;
    uint32_t flags;              /* enum mpiscope_env_flags */
    uint64_t cpus;               /* id of its affinity mask as a CPU list (META environment.cpus) */
    uint64_t vars;               /* id of its variable set (META environment.variables) */
    double init;                 /* s, MPI_Init / MPI_Init_thread: wrapper entry to exit */
    double init_own;             /* s of init spent in the runtime's own setup */
    double finalize;             /* s, MPI_Finalize entry to the end of the runtime's barrier */
    double cpu_time;             /* s of CPU (user + system, all threads), MPI_Init return to MPI_Finalize */
    uint32_t ncpus;              /* CPUs in the affinity mask */
    uint32_t threads;            /* threads it runs: OpenMP's (OMP_NUM_THREADS, else ncpus), else 1 */
    uint32_t overlap;            /* other bound ranks of its node whose masks share a CPU with its */
    uint32_t overlap_rank;       /* the lowest of them (world rank), MPISCOPE_ENV_NO_RANK if none */
    double load;                 /* threads per CPU on its CPUs, every rank of the node counted */
    uint32_t node_cpus;          /* CPUs of its node the job may use: its cgroup's cpuset, else online */
    uint32_t reserved;
    double run_delay;            /* s its threads were runnable but waited for a CPU (schedstat),
                                    MPI_Init return to MPI_Finalize; 0 where the kernel has no schedstat */
    double node_idle;            /* CPU-seconds the node's CPUs the job may use (node_cpus) sat idle,
                                    same window (/proc/stat idle + iowait) */
} mpiscope_env_t;

/* --- snapshots (docs/runtime.md "Snapshots") -------------------------------------
 * What one thread of a rank was doing when a snapshot was taken. */
#define MPISCOPE_NOT_IN_MPI 0xFFFFu
#define MPISCOPE_PEER_NONE (-1)
#define MPISCOPE_PEER_ANY (-2)         /* MPI_ANY_SOURCE */
typedef struct {                 /* 32 bytes */
    uint32_t rank;
    uint16_t func;               /* the wrapped call it sits in, or MPISCOPE_NOT_IN_MPI */
    uint16_t thread;             /* index of the thread's tables (0 = first to call MPI) */
    int32_t to;                  /* world rank the call sends to, or MPISCOPE_PEER_NONE */
    int32_t from;                /* world rank it waits for, MPISCOPE_PEER_NONE / _ANY */
    double seconds;              /* time in this call so far; outside MPI: since the thread's
                                    last MPI call returned (0 if it made none) */
    uint64_t comm;               /* id of the call's communicator (as COMMS); 0 none or unknown */
} mpiscope_inflight_t;

/* Snapshots only: a communicator a rank is a member of when the snapshot is
 * taken (world and self left out), so a partial profile knows who belongs to
 * the communicator a rank waits in (the hang finding's wait-for graph). */
typedef struct {                 /* 16 bytes */
    uint32_t rank;
    uint32_t size;               /* the communicator's size (local group of an intercomm) */
    uint64_t comm;               /* its id, as COMMS and META "communicators" */
} mpiscope_member_t;

/* The spool: every rank writes its chunk (header, then RANK, NODE, FUNCS,
 * HIST, PEERS, REGIONS, INFLIGHT records, then region names, then the call
 * sites block, then MEMBERS records and their names, then the timeline
 * block) with one
 * pwrite into its own slot: slot k of <spool>/node<N>.snap (k = its index
 * among the node's ranks) or <spool>/rank<R>.snap. */
#define MPISCOPE_SPOOL_MAGIC "MPSCSNAP"
enum mpiscope_snap_reason { MPISCOPE_SNAP_TIMER = 1, MPISCOPE_SNAP_SIGNAL = 2, MPISCOPE_SNAP_TERM = 3 };
enum mpiscope_snap_flags { MPISCOPE_SNAPF_TRUNCATED = 1u << 0 };
typedef struct {                 /* 128 bytes */
    char magic[8];               /* "MPSCSNAP" */
    uint32_t version;            /* 1 */
    uint32_t header_bytes;       /* 128 */
    uint64_t chunk_bytes;        /* header + records + names */
    uint64_t checksum;           /* sum of the chunk's u64 words w[i] x (2i+1), this field 0 */
    uint32_t rank, nranks;
    uint32_t seq;                /* this rank's snapshot number, from 1 */
    uint32_t reason;             /* enum mpiscope_snap_reason */
    double time;                 /* epoch seconds when taken */
    double start_time;           /* epoch seconds at MPI_Init on this rank */
    uint32_t nfuncs, nhist, npeers, nregions;
    uint32_t ninflight, names_bytes;   /* names: per region record, u32 length + bytes; padded to 8 */
    uint32_t flags;              /* enum mpiscope_snap_flags */
    uint32_t signal;             /* the signal number that asked for it (0: timer) */
    uint32_t tl_bins;            /* timeline bins after the members' names (0: none), MPISCOPE_TL rows each */
    uint32_t tl_rows;            /* rows of the timeline block: the function kinds, then bytes */
    double tl_width;             /* s, this rank's bin width */
    uint32_t ncallsites;         /* CALLSITE records after the region names, then their sites (below) */
    uint32_t callsite_bytes;     /* all of it: records, u32 length, JSON {"callsites", "modules"}, padded to 8 */
    uint32_t nmembers;           /* mpiscope_member_t records after the call sites */
    uint32_t member_names_bytes; /* then per member record, u32 length + its name; padded to 8 */
} mpiscope_snap_header_t;

#endif
