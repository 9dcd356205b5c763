// Communicator: the collectives data-parallel training needs, over a group of ranks (processes
// under mpirun, or threads of one process in tests). Every rank calls each collective in the same
// order with arrays of the same sizes and dtype; results are new arrays, equal on every rank bit
// for bit (sums are formed in one order for all ranks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/host_array.hpp"

namespace hedra::distributed {

enum class Reduction : std::uint8_t { Sum, Mean };

// A collective started and not yet finished (start_all_reduce); wait() gives its result.
class PendingReduce {
public:
    virtual ~PendingReduce() = default;
    virtual HostArray wait() = 0;
};

// A sum in place (start_sum_in_place) in flight: done() progresses it and tells whether it
// finished; wait() finishes it.
class InFlight {
public:
    virtual ~InFlight() = default;
    virtual bool done() = 0;
    virtual void wait() = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string name() const = 0; // "mpi", "in-process", "self"

    // Element-wise over all ranks' `a` (f32, f64, i32 or i64; Mean: floats only).
    HostArray all_reduce(const HostArray& a, Reduction op = Reduction::Sum);
    // The same, started now and finished by wait(): the caller computes meanwhile.
    std::unique_ptr<PendingReduce> start_all_reduce(const HostArray& a,
                                                    Reduction op = Reduction::Sum);
    // Rank `root`'s `a` on every rank (the others' `a` give only sizes and dtype).
    HostArray broadcast(const HostArray& a, int root = 0);
    // Every rank's `a` stacked along a new leading axis of size size().
    HostArray all_gather(const HostArray& a);
    // `a`'s leading axis cut into size() equal parts; part rank() of the reduction.
    HostArray reduce_scatter(const HostArray& a, Reduction op = Reduction::Sum);
    virtual void barrier() = 0;
    // MPI_Comm_split: every rank calls it; the ranks passing the same `color` form a new group,
    // ranked by `key` (ties by rank here). Used for the axes of a process grid.
    virtual std::shared_ptr<Communicator> split(int color, int key);
    // Divides a sum by size() for Mean (floats), in place in an array the caller made.
    void finish_mean(HostArray& sum, Reduction op) const;
    // Sums `count` elements of `dtype` (f32, f64, i32, i64) at `data` over all ranks, in place,
    // started now; the memory must stay valid and untouched until done() or wait(). The
    // default finishes before it returns (no overlap).
    virtual std::unique_ptr<InFlight> start_sum_in_place(void* data, std::int64_t count,
                                                         DType dtype);
    // The sum over all ranks into rank `root`'s `data`, started now (the others' `data` is
    // unspecified afterwards). The default is start_sum_in_place: a sum on every rank.
    virtual std::unique_ptr<InFlight> start_reduce_in_place(void* data, std::int64_t count,
                                                            DType dtype, int root);
    // Rank `root`'s `bytes` at `data` into every rank's `data`, started now. The default
    // finishes before it returns.
    virtual std::unique_ptr<InFlight> start_broadcast_in_place(void* data, std::size_t bytes,
                                                               int root);
    // Point to point (pipeline stages): `bytes` at `data` to rank `dest`, started now; the
    // memory must stay untouched until done() or wait(). Messages between two ranks with the
    // same tag arrive in the order they were sent.
    virtual std::unique_ptr<InFlight> start_send(const void* data, std::size_t bytes, int dest,
                                                 int tag);
    // `bytes` from rank `source` with `tag` into `data`, waiting for them.
    virtual void receive(void* data, std::size_t bytes, int source, int tag);
    // The same, posted now and finished by wait() (done() progresses it); `data` must stay
    // valid until then. Receives posted for one (source, tag) take its messages in the order
    // they were posted. Posting early lets a large message move while this rank computes (MPI
    // moves it only inside MPI calls of both ranks). The default receives at wait().
    virtual std::unique_ptr<InFlight> start_receive(void* data, std::size_t bytes, int source,
                                                    int tag);
    // Whether sum_on_device sums device memory where it is (NCCL's communicator does).
    virtual bool sums_device_memory() const { return false; }
    // `count` elements of `dtype` at a device address.
    struct DeviceSpan {
        std::uint64_t data = 0;
        std::int64_t count = 0;
        DType dtype = DType::F32;
    };
    // Sums each span over all ranks, in place, queued on `stream` (a CUstream) after the work
    // already there, as one group (NCCL's ncclGroupStart/End: small ones share a launch); later
    // work on that stream sees the sums, so the host waits for nothing. Every rank passes its
    // spans in the same order. Only where sums_device_memory(); the default throws.
    virtual void sum_on_device(const std::vector<DeviceSpan>& spans, void* stream);

protected:
    void check_root(int root, const char* what) const; // throws unless 0 <= root < size()
    // The transport: byte-level collectives over `count` elements of `dtype` (checked above).
    virtual void sum_raw(const void* in, void* out, std::int64_t count, DType dtype) = 0;
    virtual void broadcast_raw(void* data, std::size_t bytes, int root) = 0;
    virtual void all_gather_raw(const void* in, void* out, std::size_t bytes) = 0;
    // `in` holds size() parts of `count` elements each; `out` receives this rank's part summed.
    virtual void reduce_scatter_raw(const void* in, void* out, std::int64_t count, DType dtype) = 0;
};

// One process alone: every collective returns its input.
class SelfCommunicator : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string name() const override { return "self"; }
    void barrier() override {}
    std::shared_ptr<Communicator> split(int color, int key) override;

protected:
    void sum_raw(const void* in, void* out, std::int64_t count, DType dtype) override;
    void broadcast_raw(void*, std::size_t, int) override {}
    void all_gather_raw(const void* in, void* out, std::size_t bytes) override;
    void reduce_scatter_raw(const void* in, void* out, std::int64_t count, DType dtype) override;
};

} // namespace hedra::distributed
