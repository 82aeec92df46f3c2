/*
 * mpit_user.c - a program with its own MPI_T session (tests/runtime/lifecycle/test_runtime_mpit.py):
 * MPI_T_init_thread before MPI_Init, a session reading every numeric
 * performance variable it can (bound to nothing or to MPI_COMM_WORLD), and
 * MPI_T_finalize before MPI_Finalize. The runtime's own session
 * (MPISCOPE_MPIT=1) must change nothing it sees.
 */
#include <mpi.h>
#include <stdio.h>

#define MAXCOUNT 4096

int main(int argc, char **argv)
{
    int provided = 0;
    int trc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int num = 0, tried = 0, ok = 0;
    static double buf[MAXCOUNT];
    MPI_T_pvar_session session;
    if (trc == MPI_SUCCESS && MPI_T_pvar_get_num(&num) == MPI_SUCCESS &&
        MPI_T_pvar_session_create(&session) == MPI_SUCCESS) {
        for (int i = 0; i < num; i++) {
            char name[256], desc[256];
            int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic, count = 0;
            MPI_Datatype type;
            MPI_T_enum et;
            if (MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &type, &et, desc, &dl, &bind, &ro, &cont,
                                    &atomic) != MPI_SUCCESS)
                continue;
            if (type == MPI_CHAR || (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM))
                continue;
            MPI_Comm world = MPI_COMM_WORLD;
            MPI_T_pvar_handle h;
            if (MPI_T_pvar_handle_alloc(session, i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h,
                                        &count) != MPI_SUCCESS)
                continue;
            if (count > 0 && count <= MAXCOUNT) {
                int started = !cont && MPI_T_pvar_start(session, h) == MPI_SUCCESS;
                tried++;
                ok += MPI_T_pvar_read(session, h, buf) == MPI_SUCCESS;
                if (started)
                    MPI_T_pvar_stop(session, h);
            }
            MPI_T_pvar_handle_free(session, &h);
        }
        MPI_T_pvar_session_free(&session);
    }
    int mine = rank + 1, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpit_user: init %s, %d performance variables, %d of %d reads ok, sum %d on %d ranks\n",
               trc == MPI_SUCCESS ? "ok" : "failed", num, ok, tried, all, size);
    int frc = trc == MPI_SUCCESS ? MPI_T_finalize() : MPI_SUCCESS;
    MPI_Finalize();
    return frc == MPI_SUCCESS ? 0 : 3;
}
