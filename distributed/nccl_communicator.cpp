// The NCCL communicator (see nccl_communicator.hpp).
#include "distributed/nccl_communicator.hpp"

#include <cstring>

#include "core/error.hpp"

namespace hedra::distributed {
namespace {

NcclType nccl_type(DType t) {
    switch (t) {
    case DType::F32:
        return NcclType::Float32;
    case DType::F64:
        return NcclType::Float64;
    case DType::I32:
        return NcclType::Int32;
    case DType::I64:
        return NcclType::Int64;
    case DType::Bool:
    case DType::BF16:
    case DType::F16:
        break;
    }
    throw Error("nccl: a collective of dtype " + std::string(dtype_name(t)) +
                "; reduce f32, f64, i32 or i64 arrays");
}

// Device memory of one collective in flight, freed once it has finished.
class DeviceBuffer {
public:
    DeviceBuffer(NcclApi& api, std::size_t bytes) : api_(api), address_(api.allocate(bytes)) {}
    ~DeviceBuffer() { api_.free(address_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceAddress get() const { return address_; }

private:
    NcclApi& api_;
    DeviceAddress address_;
};

// A collective queued with its copy in; the copy out waits until the stream has drained (a copy
// to pageable host memory would block the host until then), in done() or wait().
class NcclInFlight : public InFlight {
public:
    NcclInFlight(NcclApi& api, std::size_t bytes, void* out)
        : api_(api), buffer_(api, bytes), bytes_(bytes), out_(out) {}
    ~NcclInFlight() override {
        if (!landed_) api_.synchronize();
    }
    DeviceAddress device() const { return buffer_.get(); }
    bool done() override {
        if (!landed_ && api_.stream_done()) land();
        return landed_;
    }
    void wait() override {
        if (!landed_) {
            api_.synchronize();
            land();
        }
    }

private:
    void land() {
        if (out_) {
            api_.copy_to_host(out_, buffer_.get(), bytes_);
            api_.synchronize();
        }
        landed_ = true;
    }

    NcclApi& api_;
    DeviceBuffer buffer_;
    std::size_t bytes_;
    void* out_; // null: nothing to copy back (a reduce's non-root)
    bool landed_ = false;
};

} // namespace

NcclCommunicator::NcclCommunicator(std::shared_ptr<Communicator> bootstrap,
                                   std::shared_ptr<NcclApi> api)
    : bootstrap_(std::move(bootstrap)), api_(std::move(api)) {
    if (!bootstrap_ || !api_)
        throw Error("NcclCommunicator: no bootstrap communicator or NCCL; use nccl_world()");
    rank_ = bootstrap_->rank();
    size_ = bootstrap_->size();
    // Rank 0's id to every rank, through the bootstrap group.
    HostArray id({32}, DType::I32);
    if (rank_ == 0) {
        const NcclUniqueId made = api_->unique_id();
        std::memcpy(id.raw_mutable(), made.bytes.data(), made.bytes.size());
    } else {
        std::memset(id.raw_mutable(), 0, id.bytes());
    }
    id = bootstrap_->broadcast(id, 0);
    NcclUniqueId shared;
    std::memcpy(shared.bytes.data(), id.raw(), shared.bytes.size());
    comm_ = api_->init_rank(size_, shared, rank_);
}

NcclCommunicator::~NcclCommunicator() {
    if (staging_) api_->free(staging_);
    if (comm_) api_->destroy(comm_);
}

DeviceAddress NcclCommunicator::staging(std::size_t bytes) {
    if (bytes > staging_bytes_) {
        if (staging_) api_->free(staging_);
        staging_ = 0;
        staging_ = api_->allocate(bytes);
        staging_bytes_ = bytes;
    }
    return staging_;
}

void NcclCommunicator::barrier() {
    std::int32_t one = 1, all = 0;
    sum_raw(&one, &all, 1, DType::I32);
}

void NcclCommunicator::sum_raw(const void* in, void* out, std::int64_t count, DType dtype) {
    const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype);
    const DeviceAddress d = staging(bytes);
    api_->copy_to_device(d, in, bytes);
    api_->all_reduce(d, d, static_cast<std::size_t>(count), nccl_type(dtype), comm_);
    api_->copy_to_host(out, d, bytes);
    api_->synchronize();
}

void NcclCommunicator::broadcast_raw(void* data, std::size_t bytes, int root) {
    const DeviceAddress d = staging(bytes);
    if (rank_ == root) api_->copy_to_device(d, data, bytes);
    api_->broadcast(d, d, bytes, root, comm_);
    api_->copy_to_host(data, d, bytes);
    api_->synchronize();
}

void NcclCommunicator::all_gather_raw(const void* in, void* out, std::size_t bytes) {
    const std::size_t all = bytes * static_cast<std::size_t>(size_);
    const DeviceAddress d = staging(all);
    // Each rank's part at its place in the result: NCCL's in-place all-gather.
    const DeviceAddress mine = d + bytes * static_cast<std::size_t>(rank_);
    api_->copy_to_device(mine, in, bytes);
    api_->all_gather(mine, d, bytes, comm_);
    api_->copy_to_host(out, d, all);
    api_->synchronize();
}

void NcclCommunicator::reduce_scatter_raw(const void* in, void* out, std::int64_t count,
                                          DType dtype) {
    const std::size_t part = static_cast<std::size_t>(count) * dtype_size(dtype);
    const std::size_t all = part * static_cast<std::size_t>(size_);
    const DeviceAddress d = staging(all);
    const DeviceAddress mine = d + part * static_cast<std::size_t>(rank_);
    api_->copy_to_device(d, in, all);
    api_->reduce_scatter(d, mine, static_cast<std::size_t>(count), nccl_type(dtype), comm_);
    api_->copy_to_host(out, mine, part);
    api_->synchronize();
}

std::unique_ptr<InFlight> NcclCommunicator::start_sum_in_place(void* data, std::int64_t count,
                                                               DType dtype) {
    const NcclType type = nccl_type(dtype);
    const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype);
    auto flight = std::make_unique<NcclInFlight>(*api_, bytes, data);
    api_->copy_to_device(flight->device(), data, bytes);
    api_->all_reduce(flight->device(), flight->device(), static_cast<std::size_t>(count), type,
                     comm_);
    return flight;
}

std::unique_ptr<InFlight> NcclCommunicator::start_reduce_in_place(void* data, std::int64_t count,
                                                                  DType dtype, int root) {
    check_root(root, "start_reduce_in_place");
    const NcclType type = nccl_type(dtype);
    const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype);
    auto flight = std::make_unique<NcclInFlight>(*api_, bytes, rank_ == root ? data : nullptr);
    api_->copy_to_device(flight->device(), data, bytes);
    api_->reduce(flight->device(), flight->device(), static_cast<std::size_t>(count), type, root,
                 comm_);
    return flight;
}

std::unique_ptr<InFlight> NcclCommunicator::start_broadcast_in_place(void* data, std::size_t bytes,
                                                                     int root) {
    check_root(root, "start_broadcast_in_place");
    auto flight = std::make_unique<NcclInFlight>(*api_, bytes, data);
    if (rank_ == root) api_->copy_to_device(flight->device(), data, bytes);
    api_->broadcast(flight->device(), flight->device(), bytes, root, comm_);
    return flight;
}

void NcclCommunicator::sum_on_device(const std::vector<DeviceSpan>& spans, void* stream) {
    for (const DeviceSpan& s : spans)
        nccl_type(s.dtype); // every dtype checked before any is queued
    api_->group_start();
    try {
        for (const DeviceSpan& s : spans)
            api_->all_reduce_on(s.data, s.data, static_cast<std::size_t>(s.count),
                                nccl_type(s.dtype), comm_, stream);
    } catch (...) {
        api_->group_end();
        throw;
    }
    api_->group_end();
}

std::shared_ptr<Communicator> nccl_world(std::shared_ptr<Communicator> bootstrap) {
    return std::make_shared<NcclCommunicator>(std::move(bootstrap), nccl_library());
}

} // namespace hedra::distributed
