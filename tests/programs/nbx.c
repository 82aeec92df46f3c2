/*
 * The NBX sparse exchange (Hoefler et al.): synchronous sends, then probe for
 * incoming messages until an MPI_Ibarrier, entered once the own sends are
 * matched, completes. Rank r > 0 sends 2 ints to rank r-1; rank 0 sends
 * nothing and so enters MPI_Ibarrier at once, then must keep receiving.
 * Anything that turns MPI_Ibarrier into a blocking barrier (e.g. a sync
 * barrier before it) deadlocks this program: rank 1's send is never received.
 * Per rank: MPI_Issend x1 (r > 0), MPI_Recv x1 (r < P-1), MPI_Ibarrier x1;
 * MPI_Iprobe and MPI_Test are polled (counts on stderr).
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1, flag, sent = 0, done = 0, in_barrier = 0, got = 0, iprobes = 0,
        tests = 0, out[2], in[2];
    long long check = 0;
    MPI_Request sreq = MPI_REQUEST_NULL, breq = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank > 0) {
        out[0] = known_val(rank, 1, 0), out[1] = known_val(rank, 1, 1);
        MPI_Issend(out, 2, MPI_INT, rank - 1, 1, MPI_COMM_WORLD, &sreq);
    } else {
        sent = 1;
    }
    while (!done) {
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st), iprobes++;
        if (flag) {
            MPI_Recv(in, 2, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ok &= st.MPI_SOURCE == rank + 1 && in[1] == known_val(rank + 1, 1, 1);
            check += in[0] + in[1], got++;
        }
        if (in_barrier) {
            MPI_Test(&breq, &done, MPI_STATUS_IGNORE), tests++;
        } else {
            if (!sent)
                MPI_Test(&sreq, &sent, MPI_STATUS_IGNORE), tests++;
            if (sent) {
                MPI_Ibarrier(MPI_COMM_WORLD, &breq);
                in_barrier = 1;
            }
        }
    }
    ok &= got == (rank + 1 < size);
    known_polls(rank, "MPI_Iprobe", iprobes);
    known_polls(rank, "MPI_Test", tests);
    known_result("nbx", rank, check, ok);
    MPI_Finalize();
    return 0;
}
