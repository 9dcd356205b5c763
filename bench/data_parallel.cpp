// Data-parallel training throughput. Run under mpirun: every rank
// trains MLP-large (784-1024-1024-10) on its share of a global batch of 512 with
// dist::DataParallelTrainer; rank 0 prints the step time, the examples per second and the time
// the step waited for the gradients' all-reduce after its backward pass (--no-overlap: one
// all-reduce after it, all of it exposed). Alone (or -np 1) it runs the plain step, the baseline.
// bench/data_parallel.sh runs -np 1 and -np 2 alternately and prints the ratio.
//   mpirun -np 2 bench/data_parallel [--quick] [--steps N] [--batch B]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "dist/data_parallel.hpp"
#include "dist/init.hpp"
#include "hedra.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

int main(int argc, char** argv) {
    bool quick = false, overlap = true;
    int steps = 12;
    std::int64_t batch = 512;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--steps" && i + 1 < argc)
            steps = std::atoi(argv[++i]);
        else if (a == "--no-overlap")
            overlap = false;
        else if (a == "--batch" && i + 1 < argc)
            batch = std::atoll(argv[++i]);
        else {
            std::fprintf(stderr, "usage: [mpirun -np N] data_parallel [--quick] [--steps N] "
                                 "[--batch B] [--no-overlap]\n");
            return 2;
        }
    }
    std::vector<std::int64_t> sizes{784, 1024, 1024, 10};
    if (quick) {
        sizes = {784, 32, 10};
        batch = 16;
        steps = 2;
    }
    std::shared_ptr<dist::Communicator> comm = dist::init();
    ComputeOptions options;
    options.num_threads = 1; // one thread per rank: ranks are the parallelism
    nn::TrainStep step(nn::mlp(sizes, 1), std::make_shared<nn::Sgd>(nn::SgdOptions{0.1}), options);
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
    std::unique_ptr<dist::DataParallelTrainer> parallel;
    if (comm->size() > 1)
        parallel = std::make_unique<dist::DataParallelTrainer>(comm, step.trainer(), overlap);
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
        std::printf("data_parallel_mlp_large ranks=%d threads=1 batch=%lld overlap=%d "
                    "step_ms=%.3f examples_per_s=%.0f exposed_allreduce_ms=%.3f loss=%.5f\n",
                    comm->size(), static_cast<long long>(batch), overlap ? 1 : 0,
                    seconds * 1e3 / steps, static_cast<double>(batch) * steps / seconds, comm_ms,
                    loss);
    return 0;
}
