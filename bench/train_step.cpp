// bench/train_step (issue 5): one steady-state SGD training step (forward, softmax
// cross-entropy, backward, update; lr 0.1) of the MNIST models, hedra's compiled step
// (nn::TrainStep: one program per step, each call's outputs the next call's inputs) against
// PyTorch's C++ API (libtorch, benchmark-only and optional), same shapes, same threads,
// timed alternately in one process:
//   mlp_small  784-300-100-10, batch 64
//   mlp_large  784-1024-1024-10, batch 256
//   cnn        conv(1→16, 5×5, pad 2) ReLU maxpool2 → conv(16→32, 5×5, pad 2) ReLU maxpool2
//              → linear(1568→10), batch 64
// Also printed: the kernels per step (the partition of the step's graph) and the compile time.
// Target (issue 5): speedup >= 1.0 on all three.
//   bench/train_step [--quick] [--threads 1,2] [--reps N] [--only mlp_small,cnn]
//                    [--blas-threads N]  (the peer's OpenBLAS pool; default: --threads)
#include <random>

#include "ad/grad.hpp"
#include "bench/bench_common.hpp"
#include "bench/train_step_peer.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

struct Workload {
    std::string name;
    std::int64_t batch;
    bench::PeerModel shape; // sizes for an MLP, else the CNN's channels
    nn::Model model() const {
        return shape.sizes.empty() ? nn::mnist_cnn(1, shape.c0, shape.c1) : nn::mlp(shape.sizes, 1);
    }
};

std::vector<Workload> workloads(bool quick) {
    if (quick) return {{"mlp_small", 8, {{784, 30, 10}}}, {"cnn", 2, {{}, 2, 4}}};
    return {{"mlp_small", 64, {{784, 300, 100, 10}}},
            {"mlp_large", 256, {{784, 1024, 1024, 10}}},
            {"cnn", 64, {{}, 16, 32}}};
}

// The number of kernels of the step's program: the partition of the graph TrainStep compiles
// (forward, loss, gradients, SGD update).
std::size_t kernels_per_step(const nn::Model& model, std::int64_t batch, double lr) {
    std::vector<Array> params;
    for (const HostArray& p : model.params)
        params.push_back(placeholder(Shape::of(p.sizes()), p.dtype()));
    std::vector<std::int64_t> x_sizes{batch};
    x_sizes.insert(x_sizes.end(), model.example_shape.begin(), model.example_shape.end());
    Array x = placeholder(Shape::of(x_sizes), DType::F32, "x");
    Array y = placeholder(Shape::of({batch}), DType::I64, "y");
    Array loss = nn::softmax_cross_entropy(model.forward(params, x), y);
    nn::OptimizerUpdate update = nn::Sgd({lr}).update(params, grad(loss, params), {});
    std::vector<NodePtr> outputs{loss.node()}, inputs;
    for (const Array& p : update.params)
        outputs.push_back(p.node());
    for (const Array& p : params)
        inputs.push_back(p.node());
    inputs.push_back(x.node());
    inputs.push_back(y.node());
    std::size_t kernels = 0;
    for (const poly::Kernel& k : sched::partition(outputs, inputs).kernels)
        kernels += !k.statements.empty();
    return kernels;
}

} // namespace

int main(int argc, char** argv) {
    bench::reexec_without_openblas_overrides(argv);
    // --blas-threads N: the peer's OpenBLAS pool size when it should differ from --threads.
    int blas_threads = 0;
    // --symbolic: the step with a symbolic batch against the static program of the same batch
    // (hedra against hedra, side by side), instead of against libtorch.
    bool symbolic = false;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--blas-threads" && i + 1 < argc)
            blas_threads = std::atoi(argv[++i]);
        else if (std::string(argv[i]) == "--symbolic")
            symbolic = true;
        else
            rest.push_back(argv[i]);
    }
    bench::Args args =
        bench::parse_args(int(rest.size()), rest.data(), " [--blas-threads N] [--symbolic]");
    const double lr = 0.1;
    const std::string torch = bench::torch_description();
    if (torch.empty())
        std::fprintf(stderr, "train_step: libtorch was not found at configure time (Debian: "
                             "apt-get install libtorch-dev); timing hedra only\n");
    for (const Workload& w : workloads(args.quick)) {
        if (!args.wants(w.name)) continue;
        nn::Model model = w.model();
        std::int64_t features = 1;
        for (std::int64_t s : model.example_shape)
            features *= s;
        std::mt19937 gen(7);
        std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
        std::vector<float> images(std::size_t(w.batch * features));
        for (float& p : images)
            p = pixel(gen);
        std::vector<std::int64_t> labels(std::size_t(w.batch));
        for (std::int64_t& l : labels)
            l = std::int64_t(gen() % 10);
        std::vector<std::int64_t> image_sizes{w.batch};
        image_sizes.insert(image_sizes.end(), model.example_shape.begin(),
                           model.example_shape.end());
        HostArray himages = HostArray::from(images, image_sizes);
        HostArray hlabels = HostArray::from(labels, {w.batch});
        std::size_t kernels = kernels_per_step(model, w.batch, lr);
        for (int threads : args.threads) {
            ComputeOptions options;
            options.num_threads = threads;
            nn::TrainStep step(model, std::make_shared<nn::Sgd>(nn::SgdOptions{lr}), options);
            step.step(himages, hlabels); // compiles
            if (symbolic) {
                nn::TrainStep fixed(model, std::make_shared<nn::Sgd>(nn::SgdOptions{lr}), options);
                fixed.trainer().set_symbolic_batch(false);
                fixed.step(himages, hlabels);
                int reps = args.reps > 0 ? args.reps : args.quick ? 3 : 21;
                bench::select_clock(args, threads);
                bench::PairTimes t =
                    bench::time_alternately([&] { step.step(himages, hlabels); },
                                            [&] { fixed.step(himages, hlabels); }, true, 2, reps);
                char extra[160];
                std::snprintf(extra, sizeof extra,
                              "batch=%lld symbolic_compile_s=%.2f "
                              "static_compile_s=%.2f",
                              (long long)w.batch, step.compile_seconds(), fixed.compile_seconds());
                bench::print_line("symbolic_batch_" + w.name, threads, t, "hedra-static", extra);
                continue;
            }
            std::unique_ptr<bench::PeerStep> peer =
                bench::make_torch_step(w.shape, w.batch, images.data(), labels.data(), threads,
                                       blas_threads > 0 ? blas_threads : threads);
            int reps = args.reps > 0 ? args.reps : args.quick ? 3 : w.name == "mlp_small" ? 41 : 11;
            double hedra_loss = 0, peer_loss = 0;
            bench::select_clock(args, threads);
            bench::PairTimes t = bench::time_alternately(
                [&] { hedra_loss = step.step(himages, hlabels); },
                [&] { peer_loss = peer->step(); }, peer != nullptr, 2, reps);
            if (!std::isfinite(hedra_loss) || (peer && !std::isfinite(peer_loss))) {
                std::fprintf(stderr, "train_step %s: a loss is not finite (hedra %g, peer %g)\n",
                             w.name.c_str(), hedra_loss, peer_loss);
                return 1;
            }
            char extra[160];
            std::snprintf(extra, sizeof extra, "batch=%lld kernels=%zu compile_s=%.2f",
                          (long long)w.batch, kernels, step.compile_seconds());
            bench::print_line("train_step_" + w.name, threads, t,
                              peer ? "libtorch" : "missing(libtorch)", extra);
        }
    }
    return 0;
}
