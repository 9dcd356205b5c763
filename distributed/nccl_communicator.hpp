// The NCCL communicator: the ranks' GPUs, one per process, with NCCL's collectives on a stream
// of their own. The group is set up through a bootstrap communicator (MPI under mpirun: rank 0
// makes NCCL's unique id and broadcasts it). hedra's collectives take host arrays, so each is
// staged through device memory (copy in, collective, copy out, all on one stream);
// start_sum_in_place queues the three and returns, so a step's gradients are summed while its
// backward pass goes on. sum_on_device sums device memory in place on the caller's stream (the
// cuda backend's): a step's gradients computed there are summed where they are, with no copy.
#pragma once

#include <memory>

#include "distributed/communicator.hpp"
#include "distributed/nccl_api.hpp"

namespace hedra::distributed {

class NcclCommunicator : public Communicator {
public:
    NcclCommunicator(std::shared_ptr<Communicator> bootstrap, std::shared_ptr<NcclApi> api);
    ~NcclCommunicator() override;
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "nccl"; }
    void barrier() override;
    std::unique_ptr<InFlight> start_sum_in_place(void* data, std::int64_t count,
                                                 DType dtype) override;
    std::unique_ptr<InFlight> start_reduce_in_place(void* data, std::int64_t count, DType dtype,
                                                    int root) override;
    std::unique_ptr<InFlight> start_broadcast_in_place(void* data, std::size_t bytes,
                                                       int root) override;
    bool sums_device_memory() const override { return true; }
    void sum_on_device(const std::vector<DeviceSpan>& spans, void* stream) override;

protected:
    void sum_raw(const void* in, void* out, std::int64_t count, DType dtype) override;
    void broadcast_raw(void* data, std::size_t bytes, int root) override;
    void all_gather_raw(const void* in, void* out, std::size_t bytes) override;
    void reduce_scatter_raw(const void* in, void* out, std::int64_t count, DType dtype) override;

private:
    DeviceAddress staging(std::size_t bytes); // one buffer for the blocking collectives

    std::shared_ptr<Communicator> bootstrap_;
    std::shared_ptr<NcclApi> api_;
    void* comm_ = nullptr;
    int rank_ = 0, size_ = 1;
    DeviceAddress staging_ = 0;
    std::size_t staging_bytes_ = 0;
};

// NCCL over the processes of `bootstrap` (distributed::init() gives it under mpirun with
// HEDRA_DIST=nccl).
std::shared_ptr<Communicator> nccl_world(std::shared_ptr<Communicator> bootstrap);

} // namespace hedra::distributed
