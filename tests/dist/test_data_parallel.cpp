// Data-parallel training over in-process ranks (threads): N ranks at global batch B take the
// steps one process takes at batch B (losses and parameters to 1e-5), every rank's parameters
// equal bit for bit; the collectives against sums computed here; errors.
#include <doctest/doctest.h>

#include <thread>
#include <tuple>

#include "core/expect_error.hpp"
#include "dist/data_parallel.hpp"
#include "dist/in_process.hpp"
#include "dist/init.hpp"
#include "dist_testing.hpp"
#include "hedra.hpp"

using namespace hedra;
using namespace hedra::dist;
using namespace hedra::dist::test;

namespace {

struct Run {
    std::vector<double> losses;
    std::vector<std::vector<float>> params;
};

// `ranks` threads, each a DataParallelTrainer over one in-process communicator; every rank but
// 0 starts from other parameters (seed 99), so the broadcast of rank 0's is checked too.
std::vector<Run> run_ranks(int ranks, int global_batch, int steps, bool overlap) {
    auto group = in_process_group(ranks);
    std::vector<Run> runs(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            DataParallelTrainer dp(group[static_cast<std::size_t>(r)],
                                   make_trainer(r == 0 ? 1 : 99), overlap);
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
    for (auto [ranks, global, overlap] :
         {std::tuple{1, 24, true}, {2, 24, true}, {4, 24, true}, {4, 10, true}, {2, 24, false}}) {
        INFO(ranks << " ranks, global batch " << global << (overlap ? "" : ", no overlap"));
        nn::Trainer one = make_trainer(1);
        std::vector<double> want;
        for (int s = 0; s < 20; ++s)
            want.push_back(one.step(batch(global, 100 + s), 0.05));
        want.push_back(one.evaluate(batch(global, 7)).loss.flat(0));
        const std::vector<float> want_params = flat(one.params());
        std::vector<Run> runs = run_ranks(ranks, global, 20, overlap);
        for (int r = 0; r < ranks; ++r) {
            REQUIRE(runs[r].losses.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                CHECK(runs[r].losses[i] == doctest::Approx(want[i]).epsilon(1e-5));
            const std::vector<float>& got = runs[r].params[0];
            REQUIRE(got.size() == want_params.size());
            for (std::size_t i = 0; i < got.size(); ++i)
                CHECK(got[i] == doctest::Approx(want_params[i]).epsilon(1e-5).scale(1e-3));
            CHECK(got == runs[0].params[0]); // bit for bit on every rank
        }
    }
}

TEST_CASE("communicators: collectives over in-process ranks against sums formed here") {
    const int n = 3;
    auto group = in_process_group(n);
    std::vector<std::vector<HostArray>> out(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            Communicator& c = *group[static_cast<std::size_t>(r)];
            HostArray a = values({6}, unsigned(r + 1));
            out[r] = {c.all_reduce(a),     c.all_reduce(a, Reduction::Mean),
                      c.broadcast(a, 2),   c.all_gather(a),
                      c.reduce_scatter(a), c.start_all_reduce(a)->wait()};
            c.barrier();
        });
    for (std::thread& t : threads)
        t.join();
    for (int r = 0; r < n; ++r) {
        for (int i = 0; i < 6; ++i) {
            double sum = 0;
            for (int q = 0; q < n; ++q)
                sum += values({6}, unsigned(q + 1)).flat(i);
            CHECK(out[r][0].flat(i) == doctest::Approx(sum).epsilon(1e-6));
            CHECK(out[r][1].flat(i) == doctest::Approx(sum / n).epsilon(1e-6));
            CHECK(out[r][2].flat(i) == values({6}, 3).flat(i));
            CHECK(out[r][5].flat(i) == out[r][0].flat(i));
        }
        CHECK(out[r][3].sizes() == std::vector<std::int64_t>{n, 6});
        CHECK(out[r][3].flat(6 * 1 + 4) == values({6}, 2).flat(4));
        REQUIRE(out[r][4].sizes() == std::vector<std::int64_t>{2});
        CHECK(out[r][4].flat(1) == out[r][0].flat(2 * r + 1));
    }
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
}
