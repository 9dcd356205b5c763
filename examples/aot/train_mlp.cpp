// train_mlp: trains the MNIST MLP with the training step compiled ahead of time (mlp_step.h,
// from mlp_generator.cpp by hedra_add_aot_library). The binary links that library, libomp and
// the C++ runtime only: no LLVM, clang, isl or hedra, and nothing compiles when it runs.
//
//   train_mlp [--steps 100] [--data DIR] [--synthetic] [--threads N] [--losses FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mlp_data.hpp"
#include "mlp_step.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Flags {
    int steps = 100, threads = 0;
    std::string data = "/usr/share/datasets/fashion-mnist", losses;
    bool synthetic = false;
};

Flags parse(int argc, char** argv) {
    Flags f;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "train_mlp: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--steps")
            f.steps = std::atoi(value().c_str());
        else if (a == "--threads")
            f.threads = std::atoi(value().c_str());
        else if (a == "--data")
            f.data = value();
        else if (a == "--losses")
            f.losses = value();
        else if (a == "--synthetic")
            f.synthetic = true;
        else {
            std::fprintf(stderr, "usage: train_mlp [--steps N] [--data DIR] [--synthetic] "
                                 "[--threads N] [--losses FILE]\n");
            std::exit(2);
        }
    }
    return f;
}

} // namespace

int main(int argc, char** argv) {
    const Clock::time_point start = Clock::now();
    const Flags f = parse(argc, argv);
    constexpr std::int64_t batch = MLP_STEP_BATCH_MAX;
    const Clock::time_point load = Clock::now();
    const mlp_data::Examples data = mlp_data::load(batch * f.steps, f.data, f.synthetic);
    const double load_ms = ms_since(load);

    std::vector<std::vector<float>> params = mlp_data::initial_params(), next = params;
    const float lr = 0.1f;
    float loss = 0;
    std::int64_t correct = 0;
    void* workspace = std::aligned_alloc(64, (mlp_step_workspace_bytes() + 63) / 64 * 64);
    std::vector<float> losses;
    std::vector<double> step_ms;
    double first_ms = 0;
    for (int s = 0; s < f.steps; ++s) {
        const Clock::time_point t = Clock::now();
        hedra_aot::mlp_step(batch, params[0].data(), params[1].data(), params[2].data(),
                            params[3].data(), params[4].data(), params[5].data(), &lr,
                            data.images.data() + s * batch * mlp_data::kPixels,
                            data.labels.data() + s * batch, &loss, next[0].data(), next[1].data(),
                            next[2].data(), next[3].data(), next[4].data(), next[5].data(),
                            &correct, workspace, f.threads);
        step_ms.push_back(ms_since(t));
        if (s == 0) first_ms = ms_since(start) - load_ms;
        std::swap(params, next);
        losses.push_back(loss);
    }
    std::free(workspace);
    if (!f.losses.empty()) {
        std::FILE* out = std::fopen(f.losses.c_str(), "w");
        if (!out) {
            std::fprintf(stderr, "train_mlp: cannot write %s\n", f.losses.c_str());
            return 1;
        }
        for (float l : losses)
            std::fprintf(out, "%a\n", static_cast<double>(l));
        std::fclose(out);
    }
    std::sort(step_ms.begin(), step_ms.end());
    std::printf("data=%s steps=%d first_loss=%.6f last_loss=%.6f last_batch_correct=%lld\n",
                data.synthetic ? "synthetic" : "fashion-mnist", f.steps, losses.front(),
                losses.back(), static_cast<long long>(correct));
    std::printf("start_to_first_step_ms=%.3f (data loading %.1f ms excluded) "
                "median_step_ms=%.3f\n",
                first_ms, load_ms, step_ms[step_ms.size() / 2]);
    return 0;
}
