// The NCCL communicator's host logic over a fake NCCL (the same calls on host memory, summed by
// in-process ranks): rank 0's unique id reaches every rank, every collective stages through
// device memory and gives the sums formed here, the copies out wait for the stream, data-parallel
// training over it takes one process's steps, and no device memory is left. And the real
// library: it opens and tells its version where the toolkit has it, and without a GPU says so.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "collective_checks.hpp"
#include "core/expect_error.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/in_process.hpp"
#include "distributed/nccl_communicator.hpp"
#include "distributed_testing.hpp"
#include "fake_nccl.hpp"
#include "hedra.hpp"

using namespace hedra;
using namespace hedra::distributed;
using namespace hedra::distributed::test;

TEST_CASE("nccl: collectives over a fake NCCL against sums formed here") {
    const int n = 3;
    std::vector<std::vector<HostArray>> out(n);
    auto world = on_fake_nccl(n, [&](int r, std::shared_ptr<NcclCommunicator> c) {
        CHECK(c->name() == "nccl");
        CHECK(c->rank() == r);
        // Arrays of their own: HostArray copies share a buffer, and these are summed in place.
        HostArray reduced = values({6}, unsigned(r + 1)), bcast = values({6}, unsigned(r + 1));
        auto f1 = c->start_reduce_in_place(reduced.raw_mutable(), 6, DType::F32, 1);
        auto f2 = c->start_broadcast_in_place(bcast.raw_mutable(), bcast.bytes(), 2);
        f1->wait();
        while (!f2->done()) {
        }
        out[r] = run_collectives(*c);
        out[r].push_back(reduced);
        out[r].push_back(bcast);
    });
    CHECK(world->ids_made == 1); // rank 0 alone made it, the others got it through the bootstrap
    CHECK(world->destroyed == n);
    CHECK(world->live.empty());
    for (int r = 0; r < n; ++r) {
        check_collectives(out[r], r, n);
        for (int i = 0; i < 6; ++i) {
            if (r == 1) CHECK(out[r][6].flat(i) == out[r][0].flat(i)); // the root's sum
            CHECK(out[r][7].flat(i) == values({6}, 3).flat(i));
        }
    }
}

TEST_CASE("nccl: data-parallel training over a fake NCCL takes one process's steps") {
    for (bool sharded : {false, true}) {
        INFO("sharded " << sharded);
        nn::Trainer one = make_trainer(1, 0.5);
        std::vector<double> want;
        for (int s = 0; s < 10; ++s)
            want.push_back(one.step(batch(24, 100 + s), 0.05));
        std::vector<std::vector<double>> losses(2);
        std::vector<std::vector<float>> params(2);
        auto world = on_fake_nccl(2, [&](int r, std::shared_ptr<NcclCommunicator> c) {
            DataParallelTrainer dp(c, make_trainer(r == 0 ? 1 : 99, 0.5),
                                   {.shard_optimizer_state = sharded});
            for (int s = 0; s < 10; ++s)
                losses[r].push_back(dp.step(batch(24, 100 + s), 0.05));
            params[r] = flat(dp.local().params());
        });
        CHECK(world->live.empty());
        CHECK(world->sums_on_streams == 0); // host gradients (openmp): staged collectives
        for (int r = 0; r < 2; ++r)
            for (int s = 0; s < 10; ++s)
                CHECK(losses[r][s] == doctest::Approx(want[s]).epsilon(1e-5));
        CHECK(params[0] == params[1]);
        const std::vector<float> want_params = flat(one.params());
        for (std::size_t i = 0; i < want_params.size(); ++i)
            CHECK(params[0][i] == doctest::Approx(want_params[i]).epsilon(1e-5).scale(1e-2));
    }
}

// Device memory summed where it is: the fake's "device" memory is host memory, two spans in one
// group, queued on the stream the caller names, nothing staged.
TEST_CASE("nccl: sum_on_device sums device memory in place, as one group") {
    const int n = 2;
    int stream = 0; // any address stands for the caller's stream
    std::vector<std::vector<double>> got(n);
    auto world = on_fake_nccl(n, [&](int r, std::shared_ptr<NcclCommunicator> c) {
        CHECK(c->sums_device_memory());
        std::vector<float> a{1.0f * float(r + 1), 2.0f}, b{10.0f * float(r + 1)};
        c->sum_on_device({{reinterpret_cast<std::uint64_t>(a.data()), 2, DType::F32},
                          {reinterpret_cast<std::uint64_t>(b.data()), 1, DType::F32}},
                         &stream);
        got[r] = {a[0], a[1], b[0]};
        CHECK_ERROR(c->sum_on_device({{reinterpret_cast<std::uint64_t>(a.data()), 2, DType::BF16}},
                                     &stream),
                    "nccl", "bf16");
    });
    for (int r = 0; r < n; ++r)
        CHECK(got[r] == std::vector<double>{3.0, 4.0, 30.0});
    CHECK(world->sums_on_streams == 2 * n);
    CHECK(world->groups == n);
    CHECK(world->sums_outside_groups == 0);
    CHECK(world->streams == std::set<void*>{&stream});
    CHECK(world->staged_bytes == 0);
    SelfCommunicator self;
    CHECK_FALSE(self.sums_device_memory());
    CHECK_ERROR(self.sum_on_device({}, nullptr), "sum_on_device", "host memory only");
}

TEST_CASE("nccl: the real library opens where the toolkit has it; without a GPU it says so") {
    std::string why;
    const std::string version = nccl_library_version(&why);
    if (version.empty()) {
        MESSAGE("no NCCL library here: " << why);
        CHECK(!why.empty());
    } else {
        CHECK(version.find('.') != std::string::npos);
    }
    try {
        std::shared_ptr<NcclApi> api = nccl_library();
        MESSAGE("NCCL " << api->version() << " on a CUDA device");
    } catch (const Error& e) {
        const std::string m = e.what();
        MESSAGE("NCCL " << version << " unavailable: " << m);
        CHECK(m.rfind("nccl: ", 0) == 0);
        CHECK((m.find("no CUDA device") != std::string::npos ||
               m.find("libnccl") != std::string::npos || m.find("toolkit") != std::string::npos));
    }
    SelfCommunicator self;
    CHECK_ERROR(self.start_broadcast_in_place(nullptr, 0, 3), "start_broadcast_in_place", "root 3");
}
