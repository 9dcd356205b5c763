// A fake NCCL (the same calls on host memory, summed by in-process ranks) for the NCCL
// communicator's tests: tests/distributed/test_nccl.cpp, and tests/cuda (over the fake CUDA
// driver, whose device memory is host memory, so that it sums the cuda backend's results where
// they are).
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "distributed/in_process.hpp"
#include "distributed/nccl_communicator.hpp"

namespace hedra::distributed::test {

// What the fake ranks share: NCCL's group (in-process ranks do the arithmetic), the id rank 0
// made, and the device memory still allocated.
struct FakeWorld {
    explicit FakeWorld(int ranks) : group(in_process_group(ranks)) {}
    std::vector<std::shared_ptr<Communicator>> group;
    std::mutex mutex;
    NcclUniqueId made;
    int ids_made = 0, destroyed = 0;
    std::set<DeviceAddress> live;
    std::size_t staged_bytes = 0; // copied between host and device memory, both ways
    int sums_on_streams = 0;      // all_reduce_on calls (device memory summed in place)
    std::set<void*> streams;      // the streams they were queued on
    int groups = 0;               // ncclGroupEnd calls
    int open_groups = 0;          // ncclGroupStart calls not yet ended, over all ranks
    int sums_outside_groups = 0;  // all_reduce_on calls outside a group
};

inline DType dtype_of(NcclType t) {
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
    void all_reduce_on(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                       void* comm, void* stream) override {
        {
            std::lock_guard<std::mutex> lock(world_->mutex);
            ++world_->sums_on_streams;
            world_->streams.insert(stream);
            if (!in_group_) ++world_->sums_outside_groups;
        }
        all_reduce(send, recv, count, type, comm);
    }
    // A fake group runs its collectives as they come (the in-process ranks pair them in order).
    void group_start() override {
        in_group_ = true;
        std::lock_guard<std::mutex> lock(world_->mutex);
        ++world_->open_groups;
    }
    void group_end() override {
        in_group_ = false;
        std::lock_guard<std::mutex> lock(world_->mutex);
        --world_->open_groups;
        ++world_->groups;
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
        std::lock_guard<std::mutex> lock(world_->mutex);
        world_->staged_bytes += bytes;
    }
    void copy_to_host(void* dst, DeviceAddress src, std::size_t bytes) override {
        std::memcpy(dst, at(src), bytes);
        std::lock_guard<std::mutex> lock(world_->mutex);
        world_->staged_bytes += bytes;
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
    bool in_group_ = false;
};

// `ranks` threads, each running `body` with an NcclCommunicator over the fake.
template <class Body>
inline std::shared_ptr<FakeWorld> on_fake_nccl(int ranks, Body body) {
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

} // namespace hedra::distributed::test
