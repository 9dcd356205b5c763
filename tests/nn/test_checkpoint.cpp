// Checkpoints (Trainer::checkpoint and restore through nn/io's safetensors files): a run of 5
// AdamW steps with clipping and a warm-up schedule, saved, loaded into a fresh trainer and run 5
// more steps, ends bit for bit where 10 uninterrupted steps end, on the reference and openmp
// backends; restoring a checkpoint of another model or optimizer throws.
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "core/error.hpp"
#include "nn/io/safetensors.hpp"
#include "nn/layers.hpp"
#include "nn/lr_schedule.hpp"
#include "nn/trainer.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr int kIn = 5, kClasses = 4, kBatch = 8;

HostArray f32(const std::vector<double>& v, std::vector<std::int64_t> sizes) {
    HostArray a(std::move(sizes), DType::F32);
    for (std::size_t i = 0; i < v.size(); ++i)
        a.set_flat(static_cast<std::int64_t>(i), v[i]);
    return a;
}

std::vector<HostArray> batch(std::int64_t step) {
    const auto seed = static_cast<std::uint64_t>(100 + step);
    std::vector<std::int64_t> y;
    for (double v : random_values(kBatch, seed + 1000, 0, kClasses))
        y.push_back(static_cast<std::int64_t>(v));
    return {f32(random_values(kBatch * kIn, seed), {kBatch, kIn}), HostArray::from(y, {kBatch})};
}

Trainer make_trainer(const std::string& backend, std::shared_ptr<const Optimizer> opt = nullptr) {
    auto loss = [](const std::vector<Array>& p, const std::vector<Array>& in) {
        return cross_entropy(linear(in[0], p[0], p[1]), in[1]);
    };
    TrainerOptions o;
    o.param_names = {"fc.weight", "fc.bias"};
    o.clip_norm = 0.5;
    o.compute.backend = backend;
    if (!opt) opt = std::make_shared<AdamW>(AdamWOptions{1e-2, 0.9, 0.99, 1e-8, 0.1});
    return Trainer(loss, {{{kBatch, kIn}, DType::F32, "x"}, {{kBatch}, DType::I64, "y"}},
                   {f32(random_values(kClasses * kIn, 7, -0.4, 0.4), {kClasses, kIn}),
                    f32(random_values(kClasses, 8, -0.4, 0.4), {kClasses})},
                   std::move(opt), o);
}

const WarmupCosine kSchedule{1e-2, 1e-3, 3, 10};

std::vector<double> run_steps(Trainer& t, int n) {
    std::vector<double> losses;
    for (int i = 0; i < n; ++i)
        losses.push_back(t.step(batch(t.step_count()), kSchedule.at(t.step_count())));
    return losses;
}

bool same_bits(const std::vector<HostArray>& a, const std::vector<HostArray>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].sizes() != b[i].sizes() || a[i].dtype() != b[i].dtype() ||
            std::memcmp(a[i].raw(), b[i].raw(), a[i].bytes()) != 0)
            return false;
    return true;
}

std::string scratch_file(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("hedra_checkpoint_" + name + "_" + std::to_string(::getpid()) + ".safetensors"))
        .string();
}

} // namespace

TEST_CASE("nn checkpoint: a resumed run is bitwise equal to an uninterrupted one") {
    for (const std::string backend : {"reference", "openmp"}) {
        INFO(backend);
        Trainer straight = make_trainer(backend);
        const std::vector<double> all = run_steps(straight, 10);

        Trainer first = make_trainer(backend);
        run_steps(first, 5);
        const std::string path = scratch_file(backend);
        TrainerCheckpoint c = first.checkpoint();
        save_safetensors(path, c.names, c.arrays, c.metadata);

        Trainer resumed = make_trainer(backend);
        SafetensorsFile f = load_safetensors(path);
        std::filesystem::remove(path);
        resumed.restore(f.names, f.arrays, f.metadata);
        CHECK(resumed.step_count() == 5);
        const std::vector<double> rest = run_steps(resumed, 5);
        for (int i = 0; i < 5; ++i)
            CHECK(rest[static_cast<std::size_t>(i)] == all[static_cast<std::size_t>(5 + i)]);
        CHECK(same_bits(resumed.params(), straight.params()));
        CHECK(same_bits(resumed.optimizer_state(), straight.optimizer_state()));
        CHECK(resumed.step_count() == 10);
    }
}

TEST_CASE("nn checkpoint: names, metadata and restore errors") {
    Trainer t = make_trainer("reference");
    TrainerCheckpoint c = t.checkpoint();
    CHECK(c.names == std::vector<std::string>{
                         "fc.weight", "fc.bias", "optimizer.beta1_power", "optimizer.beta2_power",
                         "optimizer.fc.weight.exp_avg", "optimizer.fc.weight.exp_avg_sq",
                         "optimizer.fc.bias.exp_avg", "optimizer.fc.bias.exp_avg_sq"});
    CHECK(c.metadata == std::map<std::string, std::string>{{"optimizer", "adamw"}, {"step", "0"}});

    Trainer sgd = make_trainer("reference", std::make_shared<Sgd>(SgdOptions{0.1}));
    CHECK_THROWS_WITH_AS(sgd.restore(c.names, c.arrays, c.metadata),
                         doctest::Contains("optimizer 'adamw', this trainer's is 'sgd'"), Error);
    CHECK_THROWS_WITH_AS(t.restore(c.names, c.arrays, {}), doctest::Contains("no valid \"step\""),
                         Error);
    std::vector<std::string> renamed = c.names;
    renamed[1] = "head.bias";
    CHECK_THROWS_WITH_AS(t.restore(renamed, c.arrays, c.metadata),
                         doctest::Contains("no array named 'fc.bias' (f32 (4,))"), Error);
    std::vector<HostArray> reshaped = c.arrays;
    reshaped[1] = HostArray({5}, DType::F32);
    CHECK_THROWS_WITH_AS(t.restore(c.names, reshaped, c.metadata),
                         doctest::Contains("'fc.bias' is f32 (5,), the trainer's is f32 (4,)"),
                         Error);
}
