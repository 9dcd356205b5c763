// Data-parallel training throughput. Run under mpirun: every rank
// trains MLP-large (784-1024-1024-10) on its share of a global batch of 512 with
// distributed::DataParallelTrainer; rank 0 prints the step time, the examples per second and the
// time the step waited for the gradients' collectives after its backward pass (--no-overlap: all of
// them after it, all exposed), the buckets and the optimizer state each rank holds (--shard:
// ZeRO stage 1, with Adam so that there is state to shard). Alone (or -np 1) it runs the plain
// step, the baseline. bench/data_parallel.sh runs -np 1 and -np 2 alternately and prints ratios.
//   mpirun -np 2 bench/data_parallel [--quick] [--steps N] [--batch B] [--no-overlap] [--shard]
//                                    [--buckets BYTES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "distributed/data_parallel.hpp"
#include "distributed/init.hpp"
#include "hedra.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

int main(int argc, char** argv) {
    bool quick = false;
    distributed::DataParallelOptions dp;
    int steps = 12;
    std::int64_t batch = 512;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--steps" && i + 1 < argc)
            steps = std::atoi(argv[++i]);
        else if (a == "--no-overlap")
            dp.overlap = false;
        else if (a == "--shard")
            dp.shard_optimizer_state = true;
        else if (a == "--buckets" && i + 1 < argc)
            dp.bucket_bytes = std::atoll(argv[++i]);
        else if (a == "--batch" && i + 1 < argc)
            batch = std::atoll(argv[++i]);
        else {
            std::fprintf(stderr, "usage: [mpirun -np N] data_parallel [--quick] [--steps N] "
                                 "[--batch B] [--no-overlap] [--shard] [--buckets BYTES]\n");
            return 2;
        }
    }
    std::vector<std::int64_t> sizes{784, 1024, 1024, 10};
    if (quick) {
        sizes = {784, 32, 10};
        batch = 16;
        steps = 2;
    }
    std::shared_ptr<distributed::Communicator> comm = distributed::init();
    ComputeOptions options;
    options.num_threads = 1; // one thread per rank: ranks are the parallelism
    std::shared_ptr<const nn::Optimizer> optimizer =
        dp.shard_optimizer_state ? std::shared_ptr<const nn::Optimizer>(
                                       std::make_shared<nn::Adam>(nn::AdamOptions{1e-3}))
                                 : std::make_shared<nn::Sgd>(nn::SgdOptions{0.1});
    nn::TrainStep step(nn::mlp(sizes, 1), optimizer, options);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::vector<float> images(static_cast<std::size_t>(batch * 784));
    for (float& p : images)
        p = pixel(gen);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(batch));
    for (std::int64_t& l : labels)
        l = static_cast<std::int64_t>(gen() % 10);
    HostArray x = HostArray::from(images, {batch, 784});
    HostArray y = HostArray::from(labels, {batch});
    std::unique_ptr<distributed::DataParallelTrainer> parallel;
    if (comm->size() > 1)
        parallel = std::make_unique<distributed::DataParallelTrainer>(comm, step.trainer(), dp);
    auto one_step = [&] { return parallel ? parallel->step({x, y}, 0.1) : step.step(x, y); };
    one_step(); // compiles
    one_step();
    const double comm_before = parallel ? parallel->communication_seconds() : 0.0;
    comm->barrier();
    const auto start = std::chrono::steady_clock::now();
    double loss = 0.0;
    for (int s = 0; s < steps; ++s)
        loss = one_step();
    comm->barrier();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double comm_ms =
        parallel ? (parallel->communication_seconds() - comm_before) * 1e3 / steps : 0.0;
    if (comm->rank() == 0)
        std::printf("data_parallel_mlp_large ranks=%d threads=1 batch=%lld overlap=%d shard=%d "
                    "step_ms=%.3f examples_per_s=%.0f exposed_allreduce_ms=%.3f loss=%.5f "
                    "buckets=%zu latency_us=%.1f gb_per_s=%.2f state_mb=%.2f\n",
                    comm->size(), static_cast<long long>(batch), dp.overlap ? 1 : 0,
                    dp.shard_optimizer_state ? 1 : 0, seconds * 1e3 / steps,
                    static_cast<double>(batch) * steps / seconds, comm_ms, loss,
                    parallel ? parallel->plan().buckets.size() : 0,
                    parallel ? parallel->cost().latency_seconds * 1e6 : 0.0,
                    parallel ? parallel->cost().bytes_per_second / 1e9 : 0.0,
                    parallel ? static_cast<double>(parallel->optimizer_state_bytes()) / 1e6 : 0.0);
    return 0;
}
