/*
 * modules.c - which loaded object (executable, shared library) an address is
 * in, its path and GNU build ID, and its role for call sites; and the Python
 * source files of mpi4py programs' sites (docs/runtime.md "Call sites").
 *
 * RATIONALE: an address means nothing on another rank (ASLR, PIE, libraries
 * loaded at different addresses), so a site is stored as (module, offset),
 * the offset being the address the object was linked at; ranks merge modules
 * by build ID. Everything here runs in the call sites' slow path, once per
 * new site, with the sites lock held (callsites.c); nothing here is on the
 * path of a call whose site is known.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpiscope.h"
#include "tables/modules.h"

static mpiscope_modinfo_t *mods;     /* [MPISCOPE_MODULES_MAX], mmap: pages cost when touched */
static unsigned nmods;
static uint32_t mods_overflow;

uint64_t mpiscope_fnv1a64_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}
#define FNV_START 0xCBF29CE484222325ull

/* --- ELF objects ----------------------------------------------------------------- */

typedef struct {
    uintptr_t addr;
    int found;
    uintptr_t base, lo, hi;
    const char *name;
    uint8_t build_id[40];
    uint16_t build_id_len;
} find_t;

static void build_id_of(struct dl_phdr_info *info, find_t *f)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const char *desc = name + ((n->n_namesz + 3u) & ~3u);
            if (desc + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                f->build_id_len = (uint16_t)(n->n_descsz < sizeof f->build_id ? n->n_descsz : sizeof f->build_id);
                memcpy(f->build_id, desc, f->build_id_len);
                return;
            }
            p = desc + ((n->n_descsz + 3u) & ~3u);
        }
    }
}

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find_t *f = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int in = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        in |= f->addr >= a && f->addr < b;
    }
    if (!in)
        return 0;
    f->found = 1;
    f->base = info->dlpi_addr;
    f->lo = lo;
    f->hi = hi;
    f->name = info->dlpi_name;
    build_id_of(info, f);
    return 1;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The MPI library's own layers (C, Fortran bindings, their runtime) and the
 * transports and process managers it runs on, by name. RATIONALE: UCX runs
 * code on a rank's thread outside any MPI call (MPICH over UCX: a sample in
 * libuct on the main thread between calls); that is the MPI's time, not the
 * program's compute. */
static int is_mpi_layer(const char *path)
{
    static const char *const prefixes[] = {"libmpi.", "libmpi_", "libmpich", "libmpifort", "libpmpi",
                                           "libfmpich", "libmpicxx", "libopen-pal", "libopen-rte",
                                           "libmpl.", "libmpiscope", "libucp.", "libuct.", "libucs.",
                                           "libucm.", "libpmix.", "libfabric.", "libhcoll."};
    const char *b = base_name(path);
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(b, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* mpi4py's extension module: .../mpi4py/MPI.cpython-311-x86_64-linux-gnu.so (or MPI.so). */
static int is_mpi4py(const char *path)
{
    const char *b = base_name(path);
    if (strncmp(b, "MPI.", 4) != 0 || !strstr(b, ".so") || b - path < 8)
        return 0;
    return strncmp(b - 8, "/mpi4py/", 8) == 0;
}

static void stat_into(mpiscope_module_t *r)
{
    struct stat st;
    if (stat(r->path, &st) == 0) {
        r->file_size = (uint64_t)st.st_size;
        r->mtime = (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
    }
}

static mpiscope_modinfo_t *new_module(void)
{
    if (!mods) {
        void *p = mmap(NULL, sizeof *mods * MPISCOPE_MODULES_MAX, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        mods = p;
    }
    if (nmods >= MPISCOPE_MODULES_MAX) {
        mods_overflow = MPISCOPE_OVF_MODULES;
        return NULL;
    }
    mpiscope_modinfo_t *m = &mods[nmods];
    memset(m, 0, sizeof *m);
    return m;
}

static void publish(void)
{
    __atomic_store_n(&nmods, nmods + 1, __ATOMIC_RELEASE);   /* snapshots read without the lock */
}

int mpiscope_module_of(uintptr_t addr)
{
    find_t f;
    memset(&f, 0, sizeof f);
    f.addr = addr;
    if (!dl_iterate_phdr(find_cb, &f) || !f.found)
        return -1;
    char exe[MPISCOPE_MODULE_PATH] = "";
    const char *path = f.name;
    if (!path || !path[0]) {          /* the main program */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    /* RATIONALE: looked up by (load address, path) every time, not by an
     * address range kept from before: a library unloaded with dlclose and
     * another loaded at its address is then a new module. */
    for (unsigned i = 0; i < nmods; i++)
        if (mods[i].kind == MPISCOPE_MODULE_ELF && mods[i].base == f.base && mods[i].lo == f.lo &&
            strcmp(mods[i].rec.path, path) == 0)
            return (int)i;
    mpiscope_modinfo_t *m = new_module();
    if (!m)
        return -1;
    m->kind = MPISCOPE_MODULE_ELF;
    m->base = f.base;
    m->lo = f.lo;
    m->hi = f.hi;
    mpiscope_module_t *r = &m->rec;
    r->kind = MPISCOPE_MODULE_ELF;
    r->path_len = (uint32_t)strnlen(path, MPISCOPE_MODULE_PATH - 1);
    memcpy(r->path, path, r->path_len);
    r->build_id_len = f.build_id_len;
    memcpy(r->build_id, f.build_id, f.build_id_len);
    stat_into(r);
    uint64_t h = mpiscope_fnv1a64_bytes(FNV_START, "elf", 3);
    r->key = f.build_id_len ? mpiscope_fnv1a64_bytes(h, f.build_id, f.build_id_len)
                            : mpiscope_fnv1a64_bytes(h, r->path, r->path_len);
    r->key = r->key ? r->key : 1;
    /* Our own library and the MPI's layers are never a call site: the site is
     * whoever called into them. The MPI is the object defining PMPI_Init,
     * unless that is the program itself (linked statically). */
    uintptr_t self = (uintptr_t)(void *)&mpiscope_module_of, pmpi = (uintptr_t)(void *)&PMPI_Init;
    int ours = self >= f.lo && self < f.hi && f.name && f.name[0];
    int mpi = pmpi >= f.lo && pmpi < f.hi && f.name && f.name[0];
    if (ours || mpi || is_mpi_layer(path))
        m->role = MPISCOPE_ROLE_SKIP;
    else if (is_mpi4py(path))
        m->role = MPISCOPE_ROLE_MPI4PY;
    else
        m->role = MPISCOPE_ROLE_USER;
    publish();
    return (int)(nmods - 1);
}

/* --- Python source files --------------------------------------------------------- */

int mpiscope_module_python(const char *filename)
{
    char path[PATH_MAX];
    if (!filename || !filename[0])
        return -1;
    if (!realpath(filename, path))      /* "<string>", "<stdin>": kept as they are */
        snprintf(path, sizeof path, "%s", filename);
    for (unsigned i = 0; i < nmods; i++)
        if (mods[i].kind == MPISCOPE_MODULE_PYTHON && strcmp(mods[i].rec.path, path) == 0)
            return (int)i;
    mpiscope_modinfo_t *m = new_module();
    if (!m)
        return -1;
    m->kind = MPISCOPE_MODULE_PYTHON;
    m->role = MPISCOPE_ROLE_USER;
    mpiscope_module_t *r = &m->rec;
    r->kind = MPISCOPE_MODULE_PYTHON;
    r->path_len = (uint32_t)strnlen(path, MPISCOPE_MODULE_PATH - 1);
    memcpy(r->path, path, r->path_len);
    stat_into(r);
    /* The source's own hash stands for a build ID: the reader says so when
     * the file changed after the run. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        uint64_t h = FNV_START;
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            h = mpiscope_fnv1a64_bytes(h, buf, (size_t)n);
        close(fd);
        if (n == 0) {
            memcpy(r->build_id, &h, 8);
            r->build_id_len = 8;
        }
    }
    uint64_t h = mpiscope_fnv1a64_bytes(FNV_START, "py", 2);
    r->key = mpiscope_fnv1a64_bytes(h, r->path, r->path_len);
    r->key = r->key ? r->key : 1;
    publish();
    return (int)(nmods - 1);
}

const mpiscope_modinfo_t *mpiscope_module(int i)
{
    return i >= 0 && (unsigned)i < __atomic_load_n(&nmods, __ATOMIC_ACQUIRE) ? &mods[i] : NULL;
}

unsigned mpiscope_modules_count(void)
{
    return __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
}

uint32_t mpiscope_modules_overflow(void)
{
    return mods_overflow;
}
