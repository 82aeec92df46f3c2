/*
 * MPI_Pcontrol used wrongly or at the limits (docs/runtime.md "Regions"); the
 * runtime must neither crash nor lose a call. Every rank, in order:
 *   MPI_Pcontrol(1) and MPI_Pcontrol(-1) without a name, MPI_Pcontrol(0),
 *   MPI_Pcontrol(2, "two"), MPI_Pcontrol(-1, "ghost") (never opened): none opens
 *   or closes a region; MPI_Barrier x1 outside every region
 *   a region named by 300 x 'L': MPI_Allreduce x1 (1 int) (the runtime may shorten the name)
 *   a region with a UTF-8 name, "r\xc3\xa9gion" ("région"): MPI_Barrier x1
 *   "a", then "b" inside it: MPI_Barrier x1 in "b"; MPI_Pcontrol(-1, "a") closes
 *   both; MPI_Barrier x1 outside again
 *   "left_open", never closed, and inside it 70 regions "r00".."r69" one after
 *   the other, MPI_Barrier x1 in each: the runtime has slots for 63 regions
 *   (MPISCOPE_MAX_REGIONS = 64 with "outside"), 5 are taken, so "r58".."r69" do not get one
 *   and their barriers stay with "left_open"; MPI_Allreduce x1 in "left_open";
 *   MPI_Finalize with "left_open" still open.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, v, s1, s2;
    char name[32], longname[301];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Pcontrol(1);
    MPI_Pcontrol(-1);
    MPI_Pcontrol(0);
    MPI_Pcontrol(2, "two");
    MPI_Pcontrol(-1, "ghost");
    MPI_Barrier(MPI_COMM_WORLD);

    memset(longname, 'L', 300);
    longname[300] = 0;
    MPI_Pcontrol(1, longname);
    v = rank;
    MPI_Allreduce(&v, &s1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(-1, longname);
    MPI_Pcontrol(1, "r\xc3\xa9gion");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "r\xc3\xa9gion");

    MPI_Pcontrol(1, "a");
    MPI_Pcontrol(1, "b");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "a");
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Pcontrol(1, "left_open");
    for (int i = 0; i < 70; i++) {
        snprintf(name, sizeof name, "r%02d", i);
        MPI_Pcontrol(1, name);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(-1, name);
    }
    MPI_Allreduce(&v, &s2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    known_result("regions_misuse", rank, s1 + s2, s1 == size * (size - 1) / 2 && s2 == size - 1);
    MPI_Finalize();
    return 0;
}
