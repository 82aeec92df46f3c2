/*
 * settings.h - every MPISCOPE_* environment variable, in one table.
 *
 * X(NAME, TYPE, DEFAULT, RANGE, DOC): the variable is MPISCOPE_<NAME>; TYPE is
 * bool (0/1), int (RANGE "min..max"), choice (RANGE "a|b|...", stored as the
 * index of the value) or string. settings.c generates the parsing from this
 * table; docs/settings.md lists the same rows (tests/runtime/lifecycle/test_runtime_settings.py
 * checks that they agree). A bad value prints one warning (rank 0) and the
 * default is used: a setting never stops the application.
 */
#ifndef MPISCOPE_SETTINGS_H
#define MPISCOPE_SETTINGS_H

#define MPISCOPE_SETTINGS(X)                                                                      \
    X(MODE, choice, "full", "full|summary",                                                       \
      "full: per-rank records; summary: the runtime reduces across ranks and the file size "      \
      "does not grow with the number of ranks")                                                   \
    X(DIR, string, "", "",                                                                        \
      "directory the profile is written to (default: the current directory)")                     \
    X(SYNC, bool, "0", "0|1",                                                                     \
      "1: time a PMPI_Barrier before each blocking collective and record it as "                  \
      "<collective>:sync (collective sync time)")                                                 \
    X(QUIET, bool, "0", "0|1", "1: print nothing on stderr except warnings")                      \
    X(MAX_PEERS, int, "4096", "16..16777216",                                                     \
      "distinct point-to-point destinations kept per thread; more are counted in rank.overflow")  \
    X(MAX_REGIONS, int, "64", "2..4096",                                                          \
      "distinct Pcontrol regions per process, plus one for outside every region")                 \
    X(MAX_REQUESTS, int, "4096", "16..16777216",                                                  \
      "persistent requests alive at the same time; also receive requests followed for MPI_Cancel") \
    X(MAX_COMMS, int, "1024", "16..1048576",                                                      \
      "communicators whose rank translation is cached at the same time")                          \
    X(MAX_COMM_TABLES, int, "64", "2..65536",                                                     \
      "communicators with their own per-communicator table; calls on more share one "             \
      "'(other communicators)' row (overflow bit 4)")                                             \
    X(SNAPSHOT, int, "0", "0..31536000",                                                          \
      "seconds between snapshots every rank writes to the spool without any collective call "     \
      "(0: none)")                                                                                \
    X(SNAPSHOT_SIGNAL, choice, "USR1", "USR1|USR2|URG|none",                                      \
      "the signal that makes every rank that receives it write a snapshot")                       \
    X(SNAPSHOT_TERM, bool, "1", "0|1",                                                            \
      "1: on SIGTERM write a last snapshot, then run the program's own SIGTERM action")           \
    X(SPOOL, choice, "node", "node|rank",                                                         \
      "node: one spool file per node (one slot per rank); rank: one spool file per rank")         \
    X(SNAPSHOT_BYTES, int, "1048576", "4096..1073741824",                                         \
      "size of one rank's slot in the spool; a larger snapshot drops its histogram, then "        \
      "peers, then function records, and is flagged truncated")                                  \
    X(MPIT, bool, "0", "0|1",                                                                     \
      "1: record the MPI library's MPI_T performance variables (message queues, matching, "       \
      "protocols) per rank")                                                                      \
    X(MPIT_INTERVAL, int, "1000", "10..60000000",                                                 \
      "microseconds between samples of MPI_T levels (queue lengths) at wrapper exits; at least "  \
      "100 times what one sample costs")                                                          \
    X(LAUNCH, string, "", "",                                                                     \
      "the launch command, as mpiscope run was given it (mpiscope run sets it); recorded in the " \
      "profile so that mpiscope diagnose suggests the same launch, changed only where a fix says")  \
    X(TIMELINE_BINS, int, "256", "0..4096",                                                       \
      "time bins per rank over the run (MPI time by kind, bytes); their width doubles when the "  \
      "run outlasts them; 0: no timeline; 1 to 15 mean 16")                                      \
    X(CALLSITES, bool, "1", "0|1",                                                                \
      "1: record every wrapped call's call site (the user's code calling MPI: calls, time, "      \
      "bytes and message sizes per function and site); 0: none")                                 \
    X(CALLSITE_DEPTH, int, "1", "1..16",                                                          \
      "frames that make a call site (as mpiP's -k): 1, the line calling MPI; more tell apart "    \
      "the callers of a function that calls MPI, at a cost per call (docs/performance.md)")      \
    X(MAX_CALLSITES, int, "1024", "16..65536",                                                    \
      "distinct call sites per process; calls at more are counted in one '(no room)' site per "   \
      "function (overflow bit 8)")                                                                \
    X(SAMPLE, int, "0", "0..10000",                                                               \
      "Hz of CPU time at which every thread of the program is sampled (those that call MPI and "  \
      "those they start outside MPI calls; the program counter, or the MPI call it is in; "       \
      "docs/sampling.md); 0: no sampling; mpiscope run --sample sets 100")                        \
    X(SAMPLE_MAX, int, "1024", "16..1048576",                                                     \
      "sampled addresses kept per rank (the most sampled); the rest are counted in one 'other' "  \
      "row per thread; summary mode: the functions kept per rank and over all ranks")

#pragma GCC visibility push(hidden)

/* A string setting's text is kept in NAME_value (its long field says whether it is set). */
#define MPISCOPE_SETTING_TEXT_string(name) char name##_value[4096];
#define MPISCOPE_SETTING_TEXT_int(name)
#define MPISCOPE_SETTING_TEXT_bool(name)
#define MPISCOPE_SETTING_TEXT_choice(name)
typedef struct {
#define MPISCOPE_SETTING_FIELD(name, type, def, range, doc) long name; MPISCOPE_SETTING_TEXT_##type(name)
    MPISCOPE_SETTINGS(MPISCOPE_SETTING_FIELD)
#undef MPISCOPE_SETTING_FIELD
} mpiscope_settings_t;

enum { MPISCOPE_MODE_VALUE_FULL = 0, MPISCOPE_MODE_VALUE_SUMMARY = 1 };

/* Read the environment into s; warnings go to stderr when warn is non-zero. */
void mpiscope_settings_read(mpiscope_settings_t *s, int warn);

/* Append the settings in effect to a JSON object being built (no braces). */
struct mpiscope_buf;
void mpiscope_settings_json(const mpiscope_settings_t *s, struct mpiscope_buf *b);

#pragma GCC visibility pop

#endif
