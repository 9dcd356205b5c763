// Data parallelism under mpirun (tests/CMakeLists.txt starts it with -np 2 and -np 4): every
// rank trains 20 steps at global batch 24 over MPI, with gradient clipping, all-reducing or with
// the optimizer state sharded (MPI_Ireduce, MPI_Ibcast); rank 0 also trains one process alone at
// batch 24 and checks the losses and parameters (1e-5) and that every rank's parameters are its
// own bit for bit (all-gathered); and a non-blocking mean. Exits non-zero on any difference.
#include <cmath>
#include <cstdio>

#include "distributed/data_parallel.hpp"
#include "distributed/init.hpp"
#include "distributed_testing.hpp"

using namespace hedra;
using namespace hedra::distributed;
using namespace hedra::distributed::test;

namespace {

// 20 steps on every rank; rank 0 compares them with one process's. Returns the failures.
int check_training(const std::shared_ptr<Communicator>& comm, DataParallelOptions options,
                   const char* what) {
    const int rank = comm->rank(), ranks = comm->size();
    DataParallelTrainer dp(comm, make_trainer(rank == 0 ? 1 : 99, 0.5), options);
    std::vector<double> losses;
    for (int s = 0; s < 20; ++s)
        losses.push_back(dp.step(batch(24, 100 + s), 0.05));
    const std::vector<float> mine = flat(dp.local().params());
    HostArray local = HostArray::from(mine, {static_cast<std::int64_t>(mine.size())});
    HostArray all = comm->all_gather(local);
    int failures = 0;
    if (rank == 0) {
        nn::Trainer one = make_trainer(1, 0.5);
        for (int s = 0; s < 20; ++s) {
            const double want = one.step(batch(24, 100 + s), 0.05);
            if (std::fabs(losses[s] - want) > 1e-5 * std::fabs(want)) {
                std::printf("step %d: loss %.9g on %d ranks, %.9g alone\n", s, losses[s], ranks,
                            want);
                ++failures;
            }
        }
        const std::vector<float> want = flat(one.params());
        for (std::size_t i = 0; i < want.size(); ++i)
            if (std::fabs(mine[i] - want[i]) > 1e-5 * (std::fabs(want[i]) + 1e-2)) {
                if (failures++ < 5)
                    std::printf("parameter %zu: %.9g on %d ranks, %.9g alone\n", i, mine[i], ranks,
                                want[i]);
            }
        const auto* gathered = static_cast<const float*>(all.raw());
        for (int r = 1; r < ranks; ++r)
            for (std::size_t i = 0; i < mine.size(); ++i)
                if (gathered[r * mine.size() + i] != mine[i]) {
                    if (failures++ < 5)
                        std::printf("rank %d's parameter %zu differs from rank 0's\n", r, i);
                }
        std::printf("mpi data parallel (%s): %d ranks (%s), 20 steps, final loss %.6f, %s\n", what,
                    ranks, comm->name().c_str(), losses.back(), failures ? "FAILED" : "ok");
    }
    return failures;
}

} // namespace

int main() {
    std::shared_ptr<Communicator> comm = init();
    const int rank = comm->rank(), ranks = comm->size();
    int failures = check_training(comm, {}, "all-reduce, overlap");
    failures += check_training(comm, {.shard_optimizer_state = true}, "sharded state, overlap");
    failures += check_training(comm, {.overlap = false, .shard_optimizer_state = true},
                               "sharded state, after the backward pass");
    // The non-blocking mean over MPI: every rank's value r + 1, so the mean is (ranks + 1) / 2.
    HostArray mine_value({2}, DType::F64);
    mine_value.set_flat(0, rank + 1);
    mine_value.set_flat(1, 2.0 * (rank + 1));
    HostArray mean = comm->start_all_reduce(mine_value, Reduction::Mean)->wait();
    if (mean.flat(0) != (ranks + 1) / 2.0 || mean.flat(1) != ranks + 1.0) {
        std::printf("rank %d: start_all_reduce mean %g, %g\n", rank, mean.flat(0), mean.flat(1));
        ++failures;
    }
    HostArray verdict({1}, DType::I32);
    verdict.set_flat(0, failures);
    return comm->all_reduce(verdict).flat(0) == 0 ? 0 : 1; // any rank's failure fails all
}
