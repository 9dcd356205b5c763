// The part of NCCL hedra's NCCL communicator uses, with the device memory and the stream its
// collectives run on, behind an interface: nccl_library() is NCCL itself (libnccl.so.2 opened
// with dlopen, as libcuda is, so hedra runs where it is absent) over the cuda backend's device;
// tests give a fake that runs the same calls on host memory, so the communicator's host logic
// (the unique id's exchange, staging, ordering, errors) is checked without a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hedra::distributed {

using DeviceAddress = std::uint64_t;

// ncclUniqueId: made by rank 0, sent to every rank by the bootstrap communicator.
struct NcclUniqueId {
    std::array<char, 128> bytes{};
};

// ncclDataType_t's values for the dtypes hedra reduces.
enum class NcclType : int { Int32 = 2, Int64 = 4, Float32 = 7, Float64 = 8 };

class NcclApi {
public:
    virtual ~NcclApi() = default;
    virtual std::string version() = 0; // "2.27.7"
    virtual NcclUniqueId unique_id() = 0;
    // This rank's handle in a group of `ranks` (ncclCommInitRank).
    virtual void* init_rank(int ranks, const NcclUniqueId& id, int rank) = 0;
    virtual void destroy(void* comm) = 0;
    // Collectives (sums) on device memory, queued on the stream; counts in elements of `type`,
    // broadcast and all-gather in bytes.
    virtual void all_reduce(DeviceAddress send, DeviceAddress recv, std::size_t count,
                            NcclType type, void* comm) = 0;
    // The same, queued on `stream` (a CUstream: the cuda backend's) instead of the API's own.
    virtual void all_reduce_on(DeviceAddress send, DeviceAddress recv, std::size_t count,
                               NcclType type, void* comm, void* stream) = 0;
    // ncclGroupStart/End: the collectives between them are queued as one.
    virtual void group_start() = 0;
    virtual void group_end() = 0;
    virtual void reduce(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                        int root, void* comm) = 0;
    virtual void broadcast(DeviceAddress send, DeviceAddress recv, std::size_t bytes, int root,
                           void* comm) = 0;
    virtual void all_gather(DeviceAddress send, DeviceAddress recv, std::size_t bytes,
                            void* comm) = 0;
    virtual void reduce_scatter(DeviceAddress send, DeviceAddress recv, std::size_t count,
                                NcclType type, void* comm) = 0;
    // Device memory and copies queued on the same stream.
    virtual DeviceAddress allocate(std::size_t bytes) = 0;
    virtual void free(DeviceAddress p) = 0;
    virtual void copy_to_device(DeviceAddress dst, const void* src, std::size_t bytes) = 0;
    virtual void copy_to_host(void* dst, DeviceAddress src, std::size_t bytes) = 0;
    virtual bool stream_done() = 0; // everything queued so far has finished
    virtual void synchronize() = 0;
};

// NCCL on this process's CUDA device ($HEDRA_CUDA_DEVICE). Throws hedra::Error saying why not:
// hedra built without the CUDA toolkit, no libnccl.so.2 ($HEDRA_NCCL_LIBRARY names one), or no
// CUDA device.
std::shared_ptr<NcclApi> nccl_library();
// Opens libnccl and reads its version without touching a device; "" and `why` when it fails.
std::string nccl_library_version(std::string* why = nullptr);

} // namespace hedra::distributed
