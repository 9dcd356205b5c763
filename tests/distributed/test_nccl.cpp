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
#include "hedra.hpp"

using namespace hedra;
using namespace hedra::distributed;
using namespace hedra::distributed::test;

namespace {

// What the fake ranks share: NCCL's group (in-process ranks do the arithmetic), the id rank 0
// made, and the device memory still allocated.
struct FakeWorld {
    explicit FakeWorld(int ranks) : group(in_process_group(ranks)) {}
    std::vector<std::shared_ptr<Communicator>> group;
    std::mutex mutex;
    NcclUniqueId made;
    int ids_made = 0, destroyed = 0;
    std::set<DeviceAddress> live;
};

DType dtype_of(NcclType t) {
    switch (t) {
    case NcclType::Int32:
        return DType::I32;
    case NcclType::Int64:
        return DType::I64;
    case NcclType::Float32:
        return DType::F32;
    case NcclType::Float64:
        return DType::F64;
    }
    return DType::Bool;
}

class FakeNccl : public NcclApi {
public:
    explicit FakeNccl(std::shared_ptr<FakeWorld> world) : world_(std::move(world)) {}
    std::string version() override { return "fake"; }
    NcclUniqueId unique_id() override {
        std::lock_guard<std::mutex> lock(world_->mutex);
        ++world_->ids_made;
        for (std::size_t i = 0; i < world_->made.bytes.size(); ++i)
            world_->made.bytes[i] = static_cast<char>(std::rand());
        return world_->made;
    }
    void* init_rank(int ranks, const NcclUniqueId& id, int rank) override {
        std::lock_guard<std::mutex> lock(world_->mutex);
        if (id.bytes != world_->made.bytes) throw Error("fake nccl: not rank 0's unique id");
        if (ranks != static_cast<int>(world_->group.size())) throw Error("fake nccl: ranks");
        return world_->group.at(static_cast<std::size_t>(rank)).get();
    }
    void destroy(void*) override {
        std::lock_guard<std::mutex> lock(world_->mutex);
        ++world_->destroyed;
    }
    void all_reduce(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                    void* comm) override {
        HostArray sum = group(comm).all_reduce(array_at(send, count, dtype_of(type)));
        std::memcpy(at(recv), sum.raw(), sum.bytes());
    }
    void reduce(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type, int root,
                void* comm) override {
        HostArray sum = group(comm).all_reduce(array_at(send, count, dtype_of(type)));
        if (group(comm).rank() == root) std::memcpy(at(recv), sum.raw(), sum.bytes());
    }
    void broadcast(DeviceAddress send, DeviceAddress recv, std::size_t bytes, int root,
                   void* comm) override {
        HostArray b = group(comm).broadcast(array_at(send, bytes, DType::Bool), root);
        std::memcpy(at(recv), b.raw(), bytes);
    }
    void all_gather(DeviceAddress send, DeviceAddress recv, std::size_t bytes,
                    void* comm) override {
        HostArray all = group(comm).all_gather(array_at(send, bytes, DType::Bool));
        std::memcpy(at(recv), all.raw(), all.bytes());
    }
    void reduce_scatter(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                        void* comm) override {
        Communicator& c = group(comm);
        HostArray part = c.reduce_scatter(
            array_at(send, count * static_cast<std::size_t>(c.size()), dtype_of(type)));
        std::memcpy(at(recv), part.raw(), part.bytes());
    }
    DeviceAddress allocate(std::size_t bytes) override {
        auto p = reinterpret_cast<DeviceAddress>(std::malloc(bytes ? bytes : 1));
        std::lock_guard<std::mutex> lock(world_->mutex);
        world_->live.insert(p);
        return p;
    }
    void free(DeviceAddress p) override {
        {
            std::lock_guard<std::mutex> lock(world_->mutex);
            if (!world_->live.erase(p)) throw Error("fake nccl: freeing what is not allocated");
        }
        std::free(at(p));
    }
    void copy_to_device(DeviceAddress dst, const void* src, std::size_t bytes) override {
        std::memcpy(at(dst), src, bytes);
    }
    void copy_to_host(void* dst, DeviceAddress src, std::size_t bytes) override {
        std::memcpy(dst, at(src), bytes);
    }
    // Busy on every other query: the communicator must wait for the stream before copying out.
    bool stream_done() override { return ++queries_ % 2 == 0; }
    void synchronize() override {}

private:
    static void* at(DeviceAddress a) { return reinterpret_cast<void*>(a); }
    static Communicator& group(void* comm) { return *static_cast<Communicator*>(comm); }
    static HostArray array_at(DeviceAddress a, std::size_t count, DType t) {
        HostArray out({static_cast<std::int64_t>(count)}, t);
        std::memcpy(out.raw_mutable(), at(a), out.bytes());
        return out;
    }
    std::shared_ptr<FakeWorld> world_;
    int queries_ = 0;
};

// `ranks` threads, each running `body` with an NcclCommunicator over the fake.
template <class Body>
std::shared_ptr<FakeWorld> on_fake_nccl(int ranks, Body body) {
    auto world = std::make_shared<FakeWorld>(ranks);
    auto bootstrap = in_process_group(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            auto comm = std::make_shared<NcclCommunicator>(bootstrap[static_cast<std::size_t>(r)],
                                                           std::make_shared<FakeNccl>(world));
            body(r, comm);
        });
    for (std::thread& t : threads)
        t.join();
    return world;
}

} // namespace

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
        for (int r = 0; r < 2; ++r)
            for (int s = 0; s < 10; ++s)
                CHECK(losses[r][s] == doctest::Approx(want[s]).epsilon(1e-5));
        CHECK(params[0] == params[1]);
        const std::vector<float> want_params = flat(one.params());
        for (std::size_t i = 0; i < want_params.size(); ++i)
            CHECK(params[0][i] == doctest::Approx(want_params[i]).epsilon(1e-5).scale(1e-2));
    }
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
