/*
 * One-sided on a window of 4 * P + 8 ints per rank (disp_unit 4), P = size, r = rank,
 * right = r+1, left = r-1:
 *   (MPI_Win_allocate; the window is filled under MPI_Win_lock/unlock of the own rank)
 *   fence; MPI_Put 1 int to right at disp r; fence;
 *   MPI_Get 2 ints from left at disp 0; fence;
 *   MPI_Accumulate 3 ints (MPI_SUM) to right at disp P; fence  (4 MPI_Win_fence)
 *   MPI_Win_lock(EXCLUSIVE, right) + MPI_Put 4 ints at disp 2P + MPI_Win_unlock;
 *   MPI_Barrier; MPI_Win_lock(SHARED, left) + MPI_Get 5 ints at disp 2P + MPI_Win_unlock
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1, *win_buf, one, got[8], acc[3], put4[4];
    long long check = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank, left = (r - 1 + P) % P, right = (r + 1) % P;
    /* MPI_Win_allocate: Open MPI 4.1's default one-sided components refuse
     * MPI_Win_create on shared memory without RDMA hardware. */
    MPI_Win_allocate((4 * P + 8) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &win_buf, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win);
    for (int i = 0; i < 4 * P + 8; i++)
        win_buf[i] = known_val(r, 0, i);
    MPI_Win_unlock(r, win);

    MPI_Win_fence(0, win);
    one = known_val(r, 1, 0);
    MPI_Put(&one, 1, MPI_INT, right, r, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    ok &= win_buf[left] == known_val(left, 1, 0);
    MPI_Get(got, 2, MPI_INT, left, 0, 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 2; i++) {
        int expect = (i == (left - 1 + P) % P) ? known_val((left - 1 + P) % P, 1, 0)
                                               : known_val(left, 0, i);
        ok &= got[i] == expect;
        check += got[i];
    }
    for (int i = 0; i < 3; i++)
        acc[i] = r + i;
    MPI_Accumulate(acc, 3, MPI_INT, right, P, 3, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 3; i++)
        ok &= win_buf[P + i] == known_val(r, 0, P + i) + left + i, check += win_buf[P + i];

    for (int i = 0; i < 4; i++)
        put4[i] = known_val(r, 2, i);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(put4, 4, MPI_INT, right, 2 * P, 4, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(got, 5, MPI_INT, left, 2 * P, 5, MPI_INT, win);
    MPI_Win_unlock(left, win);
    /* left's window holds what left's left put there, then left's own fifth int. */
    int ll = (left - 1 + P) % P;
    for (int i = 0; i < 4; i++)
        ok &= got[i] == known_val(ll, 2, i), check += got[i];
    ok &= got[4] == known_val(left, 0, 2 * P + 4);

    MPI_Win_free(&win);
    known_result("rma", rank, check, ok);
    MPI_Finalize();
    return 0;
}
