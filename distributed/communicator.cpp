// The collectives' checks and HostArray plumbing (see communicator.hpp).
#include "distributed/communicator.hpp"

#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/shape.hpp"

namespace hedra::distributed {
namespace {

void check_reducible(const HostArray& a, Reduction op, const char* what) {
    const DType t = a.dtype();
    if (t != DType::F32 && t != DType::F64 && t != DType::I32 && t != DType::I64)
        throw Error(std::string(what) + ": an array of dtype " + std::string(dtype_name(t)) +
                    "; reduce f32, f64, i32 or i64 arrays");
    if (op == Reduction::Mean && !is_float(t))
        throw Error(std::string(what) + ": the mean of an " + std::string(dtype_name(t)) +
                    " array; cast to a float dtype first");
}

class Landed : public InFlight {
public:
    bool done() override { return true; }
    void wait() override {}
};

// A copy of the array summed in place; wait() finishes the sum and divides for a mean.
class CopyInFlight : public PendingReduce {
public:
    CopyInFlight(const Communicator& comm, HostArray out, std::unique_ptr<InFlight> flight,
                 Reduction op)
        : comm_(comm), out_(std::move(out)), flight_(std::move(flight)), op_(op) {}
    HostArray wait() override {
        flight_->wait();
        comm_.finish_mean(out_, op_);
        return std::move(out_);
    }

private:
    const Communicator& comm_;
    HostArray out_;
    std::unique_ptr<InFlight> flight_;
    Reduction op_;
};

} // namespace

void Communicator::finish_mean(HostArray& sum, Reduction op) const {
    if (op != Reduction::Mean || size() == 1) return;
    const double n = static_cast<double>(size());
    if (sum.dtype() == DType::F32) {
        auto* p = static_cast<float*>(sum.raw_mutable());
        for (std::int64_t i = 0; i < sum.size(); ++i)
            p[i] = static_cast<float>(p[i] / n);
    } else {
        auto* p = static_cast<double*>(sum.raw_mutable());
        for (std::int64_t i = 0; i < sum.size(); ++i)
            p[i] /= n;
    }
}

HostArray Communicator::all_reduce(const HostArray& a, Reduction op) {
    check_reducible(a, op, "all_reduce");
    HostArray out(a.sizes(), a.dtype());
    sum_raw(a.raw(), out.raw_mutable(), a.size(), a.dtype());
    finish_mean(out, op);
    return out;
}

std::unique_ptr<PendingReduce> Communicator::start_all_reduce(const HostArray& a, Reduction op) {
    check_reducible(a, op, "start_all_reduce");
    HostArray out(a.sizes(), a.dtype());
    if (a.bytes() > 0) std::memcpy(out.raw_mutable(), a.raw(), a.bytes());
    std::unique_ptr<InFlight> flight = start_sum_in_place(out.raw_mutable(), out.size(), a.dtype());
    return std::make_unique<CopyInFlight>(*this, std::move(out), std::move(flight), op);
}

std::unique_ptr<InFlight> Communicator::start_sum_in_place(void* data, std::int64_t count,
                                                           DType dtype) {
    HostArray in({count}, dtype);
    check_reducible(in, Reduction::Sum, "start_sum_in_place");
    std::memcpy(in.raw_mutable(), data, in.bytes());
    sum_raw(in.raw(), data, count, dtype);
    return std::make_unique<Landed>();
}

std::unique_ptr<InFlight> Communicator::start_reduce_in_place(void* data, std::int64_t count,
                                                              DType dtype, int root) {
    check_root(root, "start_reduce_in_place");
    return start_sum_in_place(data, count, dtype);
}

std::unique_ptr<InFlight> Communicator::start_broadcast_in_place(void* data, std::size_t bytes,
                                                                 int root) {
    check_root(root, "start_broadcast_in_place");
    broadcast_raw(data, bytes, root);
    return std::make_unique<Landed>();
}

void Communicator::sum_on_device(const std::vector<DeviceSpan>&, void*) {
    throw Error("sum_on_device: the '" + name() +
                "' communicator sums host memory only; use start_sum_in_place, or NCCL "
                "(HEDRA_DIST=nccl) for device memory");
}

void Communicator::check_root(int root, const char* what) const {
    if (root < 0 || root >= size())
        throw Error(std::string(what) + ": root " + std::to_string(root) +
                    " is not a rank of a group of " + std::to_string(size()));
}

HostArray Communicator::broadcast(const HostArray& a, int root) {
    check_root(root, "broadcast");
    HostArray out(a.sizes(), a.dtype());
    if (a.bytes() > 0) std::memcpy(out.raw_mutable(), a.raw(), a.bytes());
    broadcast_raw(out.raw_mutable(), out.bytes(), root);
    return out;
}

HostArray Communicator::all_gather(const HostArray& a) {
    std::vector<std::int64_t> sizes{size()};
    for (std::int64_t s : a.sizes())
        sizes.push_back(s);
    HostArray out(sizes, a.dtype());
    all_gather_raw(a.raw(), out.raw_mutable(), a.bytes());
    return out;
}

HostArray Communicator::reduce_scatter(const HostArray& a, Reduction op) {
    check_reducible(a, op, "reduce_scatter");
    if (a.rank() == 0 || a.sizes()[0] % size() != 0)
        throw Error("reduce_scatter: the leading axis of an array of shape " +
                    Shape::of(a.sizes()).to_string() + " does not split into " +
                    std::to_string(size()) + " equal parts, one per rank");
    std::vector<std::int64_t> sizes = a.sizes();
    sizes[0] /= size();
    HostArray out(sizes, a.dtype());
    reduce_scatter_raw(a.raw(), out.raw_mutable(), out.size(), a.dtype());
    finish_mean(out, op);
    return out;
}

std::unique_ptr<InFlight> Communicator::start_send(const void*, std::size_t, int, int) {
    throw Error("start_send: the '" + name() +
                "' communicator has no point-to-point messages; use MPI or in-process ranks");
}

void Communicator::receive(void*, std::size_t, int, int) {
    throw Error("receive: the '" + name() +
                "' communicator has no point-to-point messages; use MPI or in-process ranks");
}

namespace {

// A receive that happens when it is waited for.
class DeferredReceive : public InFlight {
public:
    DeferredReceive(Communicator& c, void* data, std::size_t bytes, int source, int tag)
        : c_(c), data_(data), bytes_(bytes), source_(source), tag_(tag) {}
    bool done() override { return finished_; }
    void wait() override {
        if (finished_) return;
        c_.receive(data_, bytes_, source_, tag_);
        finished_ = true;
    }

private:
    Communicator& c_;
    void* data_;
    std::size_t bytes_;
    int source_, tag_;
    bool finished_ = false;
};

} // namespace

std::unique_ptr<InFlight> Communicator::start_receive(void* data, std::size_t bytes, int source,
                                                      int tag) {
    return std::make_unique<DeferredReceive>(*this, data, bytes, source, tag);
}

std::shared_ptr<Communicator> Communicator::split(int, int) {
    throw Error("split: the '" + name() +
                "' communicator cannot be split; split the MPI or in-process group it was made "
                "from");
}

std::shared_ptr<Communicator> SelfCommunicator::split(int, int) {
    return std::make_shared<SelfCommunicator>();
}

void SelfCommunicator::sum_raw(const void* in, void* out, std::int64_t count, DType dtype) {
    std::memcpy(out, in, static_cast<std::size_t>(count) * dtype_size(dtype));
}

void SelfCommunicator::all_gather_raw(const void* in, void* out, std::size_t bytes) {
    std::memcpy(out, in, bytes);
}

void SelfCommunicator::reduce_scatter_raw(const void* in, void* out, std::int64_t count,
                                          DType dtype) {
    std::memcpy(out, in, static_cast<std::size_t>(count) * dtype_size(dtype));
}

} // namespace hedra::distributed
