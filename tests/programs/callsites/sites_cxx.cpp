// sites_cxx.cpp - call sites in C++ code: a member function of a class
// template in a namespace, and a lambda. Every call line carries a
// "site:NAME" marker the test finds.
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace sites {
template <class T> struct Reducer {
    std::vector<T> x, y;
    explicit Reducer(int n) : x(n, T(1)), y(n) {}
    void run(int times)
    {
        for (int i = 0; i < times; i++)
            MPI_Allreduce(x.data(), y.data(), (int)x.size(), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); // site:member
    }
};
}  // namespace sites

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sites::Reducer<double> r(4);
    r.run(3);
    auto sync = [](int times) {
        for (int i = 0; i < times; i++)
            MPI_Barrier(MPI_COMM_WORLD); // site:lambda
    };
    sync(5);
    if (rank == 0)
        std::printf("sites_cxx: y = %g\n", r.y[0]);
    MPI_Finalize();
    return 0;
}
