// Data-parallel training over in-process ranks (threads): N ranks at global batch B take the
// steps one process takes at batch B (losses and parameters to 1e-5), every rank's parameters
// equal bit for bit; the collectives against sums computed here; errors.
#include <doctest/doctest.h>

#include <cstdio>
#include <thread>
#include <tuple>

#include "collective_checks.hpp"
#include "core/expect_error.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/in_process.hpp"
#include "distributed/init.hpp"
#include "distributed_testing.hpp"
#include "hedra.hpp"
#include "nn/io/safetensors.hpp"

using namespace hedra;
using namespace hedra::distributed;
using namespace hedra::distributed::test;

namespace {

// An optimizer with state it does not name (sharding needs names).
struct UnnamedState : nn::Optimizer {
    std::string name() const override { return "unnamed"; }
    std::vector<HostArray> initial_state(const std::vector<HostArray>& params) const override {
        return params;
    }
    nn::OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>&,
                               const std::vector<Array>& state) const override {
        return {params, state};
    }
};

struct Run {
    std::vector<double> losses;
    std::vector<std::vector<float>> params;
};

// `ranks` threads, each a DataParallelTrainer over one in-process communicator; every rank but
// 0 starts from other parameters (seed 99), so the broadcast of rank 0's is checked too.
std::vector<Run> run_ranks(int ranks, int global_batch, int steps, DataParallelOptions options,
                           double clip_norm = 0.0) {
    auto group = in_process_group(ranks);
    std::vector<Run> runs(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            DataParallelTrainer dp(group[static_cast<std::size_t>(r)],
                                   make_trainer(r == 0 ? 1 : 99, clip_norm), options);
            for (int s = 0; s < steps; ++s)
                runs[r].losses.push_back(dp.step(batch(global_batch, 100 + s), 0.05));
            runs[r].losses.push_back(dp.evaluate_loss(batch(global_batch, 7)));
            runs[r].params.push_back(flat(dp.local().params()));
        });
    for (std::thread& t : threads)
        t.join();
    return runs;
}

} // namespace

TEST_CASE("data parallel: N ranks at global batch B take one process's steps at batch B") {
    struct Case {
        int ranks, global;
        DataParallelOptions options;
        double clip = 0.0;
    };
    const DataParallelOptions sharded{.shard_optimizer_state = true};
    for (const Case& c :
         {Case{1, 24, {}}, Case{2, 24, {}}, Case{4, 24, {}}, Case{4, 10, {}},
          Case{2, 24, {.overlap = false}}, Case{2, 24, {.bucket_bytes = 0}},
          Case{3, 24, {.bucket_bytes = 1 << 20}}, Case{2, 24, sharded}, Case{4, 10, sharded},
          Case{3, 24, {.overlap = false, .shard_optimizer_state = true}}, Case{2, 24, {}, 0.5},
          Case{4, 24, sharded, 0.5}}) {
        INFO(c.ranks << " ranks, global batch " << c.global << ", overlap " << c.options.overlap
                     << ", sharded " << c.options.shard_optimizer_state << ", buckets "
                     << c.options.bucket_bytes << ", clip " << c.clip);
        nn::Trainer one = make_trainer(1, c.clip);
        std::vector<double> want;
        for (int s = 0; s < 20; ++s)
            want.push_back(one.step(batch(c.global, 100 + s), 0.05));
        want.push_back(one.evaluate(batch(c.global, 7)).loss.flat(0));
        const std::vector<float> want_params = flat(one.params());
        std::vector<Run> runs = run_ranks(c.ranks, c.global, 20, c.options, c.clip);
        for (int r = 0; r < c.ranks; ++r) {
            REQUIRE(runs[r].losses.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                CHECK(runs[r].losses[i] == doctest::Approx(want[i]).epsilon(1e-5));
            const std::vector<float>& got = runs[r].params[0];
            REQUIRE(got.size() == want_params.size());
            // 1e-5 of the parameters' scale (about 0.5): AdamW magnifies rounding differences of
            // the sums in parameters near zero.
            for (std::size_t i = 0; i < got.size(); ++i)
                CHECK(got[i] == doctest::Approx(want_params[i]).epsilon(1e-5).scale(1e-2));
            CHECK(got == runs[0].params[0]); // bit for bit on every rank
        }
    }
}

// Mixed precision: each rank's thread builds its graphs under its own Autocast scope. The ranks'
// weight gradients are rounded to bf16 before the all-reduce sums them, one process's after its
// sum, so the runs agree to bf16's precision (1e-2), not f32's.
TEST_CASE("data parallel: bf16 ranks follow one bf16 process; f16 loss scaling is refused") {
    nn::Trainer one = make_trainer(1, 0.0, {}, DType::BF16);
    std::vector<double> want;
    for (int s = 0; s < 10; ++s)
        want.push_back(one.step(batch(24, 100 + s), 0.05));
    auto group = in_process_group(2);
    std::vector<std::vector<double>> losses(2);
    std::vector<std::vector<DType>> dtypes(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
            DataParallelTrainer dp(group[static_cast<std::size_t>(r)],
                                   make_trainer(1, 0.0, {}, DType::BF16));
            for (int s = 0; s < 10; ++s)
                losses[r].push_back(dp.step(batch(24, 100 + s), 0.05));
            for (const HostArray& p : dp.local().params())
                dtypes[r].push_back(p.dtype());
        });
    for (std::thread& t : threads)
        t.join();
    for (int r = 0; r < 2; ++r) {
        REQUIRE(losses[r].size() == want.size());
        for (std::size_t i = 0; i < want.size(); ++i)
            CHECK(losses[r][i] == doctest::Approx(want[i]).epsilon(1e-2));
        CHECK(dtypes[r] == std::vector<DType>(4, DType::F32));
    }
    auto solo = in_process_group(1);
    DataParallelTrainer f16(solo[0], make_trainer(1, 0.0, {}, DType::F16));
    CHECK_THROWS_WITH_AS(f16.step(batch(24, 1), 0.05),
                         doctest::Contains("is applied by step() only"), Error);
}

TEST_CASE("data parallel: a sharded state keeps per-parameter options (AdamW's decay mask)") {
    const std::vector<bool> mask{false, true, true, false};
    nn::Trainer one = make_trainer(1, 0.0, mask);
    std::vector<double> want;
    for (int s = 0; s < 6; ++s)
        want.push_back(one.step(batch(16, 100 + s), 0.05));
    std::vector<std::vector<double>> got(2);
    std::vector<std::vector<float>> params(2);
    auto group = in_process_group(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
            DataParallelTrainer dp(group[static_cast<std::size_t>(r)], make_trainer(1, 0.0, mask),
                                   {.shard_optimizer_state = true});
            for (int s = 0; s < 6; ++s)
                got[r].push_back(dp.step(batch(16, 100 + s), 0.05));
            params[r] = flat(dp.local().params());
        });
    for (std::thread& t : threads)
        t.join();
    const std::vector<float> want_params = flat(one.params());
    for (int r = 0; r < 2; ++r) {
        for (int s = 0; s < 6; ++s)
            CHECK(got[r][s] == doctest::Approx(want[s]).epsilon(1e-5));
        for (std::size_t i = 0; i < want_params.size(); ++i)
            CHECK(params[r][i] == doctest::Approx(want_params[i]).epsilon(1e-5).scale(1e-2));
    }
}

TEST_CASE("data parallel: buckets follow the start order, one root and dtype each") {
    std::vector<HostArray> params{HostArray({100}, DType::F32), HostArray({10}, DType::F32),
                                  HostArray({10}, DType::F32),  HostArray({10}, DType::F64),
                                  HostArray({10}, DType::F32),  HostArray({2}, DType::F32)};
    const std::vector<std::size_t> order{5, 4, 3, 2, 1, 0};
    FlightPlan alone = plan_flights(params, order, {}, 0);
    CHECK(alone.buckets.size() == 6);
    FlightPlan packed = plan_flights(params, order, {}, 200);
    // 5 and 4 share (48 bytes), 3 is f64 alone, 2 and 1 share, 0 (400 bytes) alone.
    REQUIRE(packed.buckets.size() == 4);
    CHECK(packed.buckets[0].params == std::vector<std::size_t>{5, 4});
    CHECK(packed.buckets[0].count == 12);
    CHECK(packed.buckets[1].dtype == DType::F64);
    CHECK(packed.buckets[2].params == std::vector<std::size_t>{2, 1});
    CHECK(packed.buckets[3].params == std::vector<std::size_t>{0});
    CHECK(packed.bucket_of[4] == 0);
    FlightPlan rooted = plan_flights(params, order, {0, 0, 1, 1, 0, 1}, 1 << 20);
    REQUIRE(rooted.buckets.size() == 5); // 5 | 4 | 3 (f64) | 2 | 1 0: roots 1, 0, 1, 1, 0
    CHECK(rooted.buckets[0].root == 1);
    CHECK(rooted.buckets[4].root == 0);
    CHECK(rooted.buckets[4].params == std::vector<std::size_t>{1, 0});
    CHECK(balanced_owners({100, 10, 10, 60, 50}, 2) == std::vector<int>{0, 0, 0, 1, 1});
    CHECK(balanced_owners({5, 5}, 3) == std::vector<int>{0, 1});
    CollectiveCost cost{10e-6, 1e9};
    CHECK(cost.bucket_bytes() == 30000);
}

TEST_CASE("data parallel: a sharded optimizer state, its checkpoint and the evaluation") {
    const int ranks = 3, global = 24;
    nn::Trainer one = make_trainer(1);
    for (int s = 0; s < 4; ++s)
        one.step(batch(global, 100 + s), 0.05);
    const nn::TrainerCheckpoint want = one.checkpoint();
    const nn::StepResult want_eval = one.evaluate(batch(global, 7));
    std::vector<double> after;
    for (int s = 4; s < 8; ++s)
        after.push_back(one.step(batch(global, 100 + s), 0.05));
    const std::string path = "test_dist_checkpoint.safetensors";
    auto group = in_process_group(ranks);
    std::vector<nn::TrainerCheckpoint> got(ranks);
    std::vector<std::vector<double>> resumed(ranks);
    std::vector<nn::StepResult> evals(ranks);
    std::vector<std::int64_t> state_bytes(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            DataParallelTrainer dp(group[static_cast<std::size_t>(r)], make_trainer(1),
                                   {.shard_optimizer_state = true});
            state_bytes[r] = dp.optimizer_state_bytes();
            for (int s = 0; s < 4; ++s)
                dp.step(batch(global, 100 + s), 0.05);
            got[r] = dp.checkpoint();
            evals[r] = dp.evaluate(batch(global, 7));
            dp.save_checkpoint(path);
            // A fresh sharded trainer from the file takes the same next steps.
            DataParallelTrainer again(group[static_cast<std::size_t>(r)], make_trainer(5),
                                      {.shard_optimizer_state = true});
            const nn::SafetensorsFile file = nn::load_safetensors(path);
            again.restore({file.names, file.arrays, file.metadata});
            for (int s = 4; s < 8; ++s)
                resumed[r].push_back(again.step(batch(global, 100 + s), 0.05));
        });
    for (std::thread& t : threads)
        t.join();
    std::int64_t full = 0;
    for (const HostArray& a : one.optimizer_state())
        full += static_cast<std::int64_t>(a.bytes());
    for (int r = 0; r < ranks; ++r) {
        INFO("rank " << r);
        CHECK(state_bytes[r] < full * 2 / 3);
        REQUIRE(got[r].names == want.names);
        CHECK(got[r].metadata == want.metadata);
        for (std::size_t i = 0; i < want.arrays.size(); ++i) {
            REQUIRE(got[r].arrays[i].sizes() == want.arrays[i].sizes());
            for (std::int64_t k = 0; k < want.arrays[i].size(); ++k)
                CHECK(got[r].arrays[i].flat(k) ==
                      doctest::Approx(want.arrays[i].flat(k)).epsilon(1e-5).scale(1e-6));
        }
        CHECK(evals[r].loss.flat(0) == doctest::Approx(want_eval.loss.flat(0)).epsilon(1e-5));
        REQUIRE(evals[r].outputs.size() == 2);
        CHECK(evals[r].outputs[0].flat(0) == want_eval.outputs[0].flat(0)); // a count
        CHECK(evals[r].outputs[1].flat(0) ==
              doctest::Approx(want_eval.outputs[1].flat(0)).epsilon(1e-5)); // a mean
        for (std::size_t i = 0; i < after.size(); ++i)
            CHECK(resumed[r][i] == doctest::Approx(after[i]).epsilon(1e-5));
    }
    std::remove(path.c_str());
}

TEST_CASE("communicators: collectives over in-process ranks against sums formed here") {
    const int n = 3;
    auto group = in_process_group(n);
    std::vector<std::vector<HostArray>> out(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            Communicator& c = *group[static_cast<std::size_t>(r)];
            out[r] = run_collectives(c);
        });
    for (std::thread& t : threads)
        t.join();
    for (int r = 0; r < n; ++r)
        check_collectives(out[r], r, n);
}

TEST_CASE("communicators: errors say what to do") {
    SelfCommunicator self;
    CHECK_ERROR(self.all_reduce(HostArray({2}, DType::Bool)), "all_reduce", "bool", "f32");
    CHECK_ERROR(self.all_reduce(HostArray({2}, DType::I32), Reduction::Mean), "mean", "float");
    CHECK_ERROR(self.broadcast(HostArray({2}, DType::F32), 1), "broadcast", "root 1");
    CHECK_ERROR(in_process_group(0), "in_process_group", "at least 1");
    auto group = in_process_group(2);
    CHECK_ERROR(group[0]->reduce_scatter(HostArray({3}, DType::F32)), "reduce_scatter", "(3)",
                "2 equal parts");
    DataParallelTrainer dp(std::make_shared<SelfCommunicator>(), make_trainer(1));
    CHECK_ERROR(dp.step({HostArray({4, kIn}, DType::F32), HostArray({3}, DType::I64)}, 0.1),
                "DataParallelTrainer", "4", "3");
    CHECK(init()->size() >= 1);
    DataParallelTrainer sharded(std::make_shared<SelfCommunicator>(), make_trainer(1),
                                {.shard_optimizer_state = true});
    CHECK(sharded.local().optimizer_state_released());
    CHECK_ERROR(sharded.local().step(batch(4, 1), 0.1), "Trainer::step", "sharded optimizer");
    CHECK_ERROR(DataParallelTrainer(std::make_shared<SelfCommunicator>(),
                                    nn::Trainer([](const std::vector<Array>& p,
                                                   const std::vector<Array>&) { return sum(p[0]); },
                                                {}, {HostArray({2}, DType::F32)},
                                                std::make_shared<UnnamedState>()),
                                    {.shard_optimizer_state = true}),
                "ShardedOptimizer", "state_names");
}
