// The MNIST MLP's training step compiled ahead of time (examples/aot/mlp_generator.cpp, built by
// hedra_add_aot_library) against the same graph compiled by the JIT and against nn::TrainStep:
// the same losses and parameters bit for bit over 100 steps, run side by side in this process,
// each step timed. Writes both loss lists (jit_losses.txt, aot_losses.txt) into the build's test
// folder, wherever it runs from, for the consumer's test.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "aot/generator.hpp"
#include "hedra.hpp"
#include "mlp_data.hpp"
#include "mlp_step.h"
#include "nn/io/mnist_dataset.hpp"
#include "nn/model.hpp"
#include "nn/train_step.hpp"

hedra::aot::Generated mlp_step(const hedra::aot::GeneratorParams& params);

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Written whole, then renamed into place: a reader never sees half a file.
void write_losses(const char* name, const std::vector<float>& losses) {
    const std::string path = std::string(HEDRA_TEST_OUTPUT_DIR) + "/" + name;
    const std::string partial = path + ".partial";
    std::FILE* out = std::fopen(partial.c_str(), "w");
    REQUIRE(out != nullptr);
    for (float l : losses)
        std::fprintf(out, "%a\n", static_cast<double>(l));
    REQUIRE(std::fclose(out) == 0);
    REQUIRE(std::rename(partial.c_str(), path.c_str()) == 0);
}

} // namespace

TEST_CASE("the AOT training step equals the JIT's bit for bit over 100 steps, as fast") {
    using namespace hedra;
    constexpr int kSteps = 100;
    constexpr std::int64_t kBatch = MLP_STEP_BATCH_MAX;
    const mlp_data::Examples data =
        mlp_data::load(kBatch * kSteps, nn::kDefaultMnistDirectory, false);
    MESSAGE("data: " << (data.synthetic ? "synthetic" : "fashion-mnist"));

    aot::Generated g = mlp_step(aot::GeneratorParams{});
    CompiledProgram jit = compile(g.outputs, g.inputs);
    std::vector<std::vector<float>> aot_params = mlp_data::initial_params(), next = aot_params;
    std::vector<HostArray> jit_params;
    for (std::size_t i = 0; i < aot_params.size(); ++i)
        jit_params.push_back(HostArray::from(aot_params[i], g.inputs[i].shape().sizes()));
    nn::Model model = nn::mlp(mlp_data::kLayers, 0);
    nn::TrainStep train_step(model, std::make_shared<nn::Sgd>(nn::SgdOptions{0.1}));
    train_step.set_params(jit_params);

    const float lr = 0.1f;
    void* workspace = std::aligned_alloc(64, (mlp_step_workspace_bytes() + 63) / 64 * 64);
    std::vector<float> jit_losses, aot_losses;
    std::vector<double> jit_ms, aot_ms;
    for (int s = 0; s < kSteps; ++s) {
        const float* images = data.images.data() + s * kBatch * mlp_data::kPixels;
        const int32_t* labels = data.labels.data() + s * kBatch;
        HostArray x =
            HostArray::from(std::vector<float>(images, images + kBatch * 784), {kBatch, 784});
        HostArray y = HostArray::from(std::vector<int32_t>(labels, labels + kBatch), {kBatch});
        std::vector<HostArray> inputs = jit_params;
        inputs.insert(inputs.end(), {HostArray::from(std::vector<float>{lr}, {}), x, y});

        Clock::time_point t0 = Clock::now();
        std::vector<HostArray> out = jit(inputs);
        Clock::time_point t1 = Clock::now();
        float loss = 0;
        std::int64_t correct = 0;
        auto& p = aot_params;
        auto& q = next;
        hedra_aot::mlp_step(kBatch, p[0].data(), p[1].data(), p[2].data(), p[3].data(), p[4].data(),
                            p[5].data(), &lr, images, labels, &loss, q[0].data(), q[1].data(),
                            q[2].data(), q[3].data(), q[4].data(), q[5].data(), &correct, workspace,
                            0);
        Clock::time_point t2 = Clock::now();
        if (s > 0) { // the first JIT call compiles
            jit_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            aot_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        }
        jit_losses.push_back(out[0].values<float>()[0]);
        aot_losses.push_back(loss);
        CHECK(out[7].values<std::int64_t>()[0] == correct);
        const double trained = train_step.step(x, y);
        CHECK(std::bit_cast<std::uint32_t>(static_cast<float>(trained)) ==
              std::bit_cast<std::uint32_t>(loss));
        jit_params.assign(out.begin() + 1, out.begin() + 7);
        std::swap(aot_params, next);
    }
    std::free(workspace);
    int differing = 0;
    for (int s = 0; s < kSteps; ++s)
        differing += std::bit_cast<std::uint32_t>(jit_losses[s]) !=
                     std::bit_cast<std::uint32_t>(aot_losses[s]);
    CHECK(differing == 0);
    for (std::size_t i = 0; i < jit_params.size(); ++i) {
        auto v = jit_params[i].values<float>();
        CHECK(std::equal(
            v.begin(), v.end(), aot_params[i].begin(), aot_params[i].end(), [](float a, float b) {
                return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
            }));
    }
    CHECK(aot_losses.back() < aot_losses.front());
    write_losses("jit_losses.txt", jit_losses);
    write_losses("aot_losses.txt", aot_losses);
    const double jit_median = median(jit_ms), aot_median = median(aot_ms);
    std::printf("mlp step (batch %lld, %d steps side by side): jit median %.3f ms, aot median "
                "%.3f ms, aot/jit %.3f; losses %.6f -> %.6f, %d of %d differ\n",
                static_cast<long long>(kBatch), kSteps, jit_median, aot_median,
                aot_median / jit_median, jit_losses.front(), jit_losses.back(), differing, kSteps);
    CHECK(aot_median < 1.5 * jit_median); // equal within noise; a loose bound for a shared machine
}
