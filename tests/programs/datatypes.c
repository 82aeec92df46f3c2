/*
 * Derived datatypes on a ring: bytes = count x MPI_Type_size, not the extent.
 * Each MPI_Sendrecv sends to right and receives from left (P = size):
 *   contiguous(3 ints) x4 = 48 B; vector(5 blocks of 2 doubles, stride 4) x2 = 160 B;
 *   struct {int; double[2]; char} x3 = 63 B; indexed(blocks 1 and 3 ints) x1 = 16 B;
 * then MPI_Bcast of 1 vector (80 B) from root 0 and MPI_Allgather of 1
 * contiguous(3 ints) (12 B) per rank; then for k = 1..4 a contiguous(k ints)
 * type is created, used once in an MPI_Sendrecv (4k B) and freed, so the next
 * one likely reuses its handle: the bytes must follow the live type.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include "known.h"

struct rec {
    int a;
    double b[2];
    char c;
};

int main(int argc, char **argv)
{
    int rank, size, ok = 1, tsize;
    long long check = 0;
    MPI_Datatype contig, vec, rec_t, rec_raw, idx;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;

    MPI_Type_contiguous(3, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    MPI_Type_vector(5, 2, 4, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, bl, disp, types, &rec_raw);
    MPI_Type_create_resized(rec_raw, 0, sizeof(struct rec), &rec_t);
    MPI_Type_commit(&rec_t);
    int ibl[2] = {1, 3}, idp[2] = {0, 5};
    MPI_Type_indexed(2, ibl, idp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Type_size(rec_t, &tsize);
    ok &= tsize == 21;

    int ci[12], co[12];
    for (int i = 0; i < 12; i++)
        co[i] = known_val(rank, 1, i), ci[i] = -1;
    MPI_Sendrecv(co, 4, contig, right, 1, ci, 4, contig, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 12; i++)
        ok &= ci[i] == known_val(left, 1, i), check += ci[i];

    double vo[40], vi[40];
    for (int i = 0; i < 40; i++)
        vo[i] = rank * 100 + i, vi[i] = -1;
    /* Two vectors: the second starts one extent (18 doubles) after the first. */
    MPI_Sendrecv(vo, 2, vec, right, 2, vi, 2, vec, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 36; i++) {
        int in_type = (i % 18) % 4 < 2;
        ok &= vi[i] == (in_type ? left * 100 + i : -1);
        check += (long long)vi[i];
    }

    struct rec ro[3], ri[3];
    for (int k = 0; k < 3; k++) {
        ro[k].a = known_val(rank, 3, k), ro[k].b[0] = rank + k, ro[k].b[1] = -rank, ro[k].c = 'a' + k;
        ri[k].a = -1, ri[k].c = 0;
    }
    MPI_Sendrecv(ro, 3, rec_t, right, 3, ri, 3, rec_t, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++) {
        ok &= ri[k].a == known_val(left, 3, k) && ri[k].b[0] == left + k && ri[k].c == 'a' + k;
        check += ri[k].a + ri[k].c;
    }

    int xo[8], xi[8];
    for (int i = 0; i < 8; i++)
        xo[i] = known_val(rank, 4, i), xi[i] = -1;
    MPI_Sendrecv(xo, 1, idx, right, 4, xi, 1, idx, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok &= xi[0] == known_val(left, 4, 0) && xi[1] == -1 && xi[5] == known_val(left, 4, 5) &&
          xi[7] == known_val(left, 4, 7) && xi[4] == -1;
    check += xi[0] + xi[5] + xi[6] + xi[7];

    for (int i = 0; i < 18; i++)
        vo[i] = rank == 0 ? 7 + i : -1;
    MPI_Bcast(vo, 1, vec, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 18; i++)
        ok &= i % 4 < 2 ? vo[i] == 7 + i : vo[i] == (rank == 0 ? 7 + i : -1);
    check += (long long)vo[17];

    int so[3] = {rank, 1, 2 * rank}, *sr = malloc(3 * size * sizeof(int));
    MPI_Allgather(so, 1, contig, sr, 1, contig, MPI_COMM_WORLD);
    for (int s = 0; s < size; s++)
        ok &= sr[3 * s] == s && sr[3 * s + 2] == 2 * s, check += sr[3 * s + 2];
    free(sr);

    for (int k = 1; k <= 4; k++) {
        MPI_Datatype t;
        MPI_Type_contiguous(k, MPI_INT, &t);
        MPI_Type_commit(&t);
        for (int i = 0; i < k; i++)
            xo[i] = known_val(rank, 10 + k, i), xi[i] = -1;
        MPI_Sendrecv(xo, 1, t, right, 10 + k, xi, 1, t, left, 10 + k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < k; i++)
            ok &= xi[i] == known_val(left, 10 + k, i), check += xi[i];
        MPI_Type_free(&t);
    }

    MPI_Type_free(&contig), MPI_Type_free(&vec), MPI_Type_free(&rec_t);
    MPI_Type_free(&rec_raw), MPI_Type_free(&idx);
    known_result("datatypes", rank, check, ok);
    MPI_Finalize();
    return 0;
}
