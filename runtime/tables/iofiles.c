/*
 * iofiles.c - the MPI-IO hints of each file the application opens, as rank 0
 * of the opening communicator sees them right after MPI_File_open (META
 * io_files: name, cb_nodes, cb_config_list, romio_cb_write). Placement uses
 * them to find the MPI-IO aggregators (seed 000: WRF's all landed on one node).
 *
 * Kept as small JSON objects; merged over ranks at MPI_Finalize with the
 * binomial-tree union (a file opened on a sub-communicator is seen by that
 * communicator's rank 0, which need not be world rank 0).
 */
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

#define IOFILES_MAX 64

static mpiscope_buf_t iofiles[IOFILES_MAX];
static uint64_t iofiles_key[IOFILES_MAX];
static unsigned iofiles_n;

static uint64_t name_key(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h ? h : 1;
}

static void hint(mpiscope_buf_t *b, MPI_Info info, const char *key)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    mpiscope_buf_str(b, ", ");
    mpiscope_buf_json_string(b, key);
    mpiscope_buf_str(b, ": ");
    if (info != MPI_INFO_NULL && PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) == MPI_SUCCESS && flag)
        mpiscope_buf_json_string(b, val);
    else
        mpiscope_buf_str(b, "null");
}

void mpiscope_io_file_opened(MPI_Comm comm, const char *filename, MPI_File fh)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank != 0 || !filename)
        return;
    uint64_t key = name_key(filename);
    for (unsigned i = 0; i < iofiles_n; i++)
        if (iofiles_key[i] == key)
            return;      /* first open of a name wins */
    if (iofiles_n >= IOFILES_MAX)
        return;
    MPI_Info info = MPI_INFO_NULL;
    PMPI_File_get_info(fh, &info);
    mpiscope_buf_t *b = &iofiles[iofiles_n];
    mpiscope_buf_str(b, "{\"name\": ");
    mpiscope_buf_json_string(b, filename);
    hint(b, info, "cb_nodes");
    hint(b, info, "cb_config_list");
    hint(b, info, "romio_cb_write");
    mpiscope_buf_str(b, "}");
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    iofiles_key[iofiles_n++] = key;
}

/* This rank's entries for the union (a = name key). */
size_t mpiscope_io_files_entries(mpiscope_entry_t *out, size_t cap)
{
    size_t n = 0;
    for (unsigned i = 0; i < iofiles_n && n < cap; i++)
        out[n++] = (mpiscope_entry_t){iofiles_key[i], 0, iofiles[i].data, (uint32_t)iofiles[i].len};
    return n;
}
