// Communicators as collective groups (see collective_group.hpp).
#include "distributed/collective_group.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace hedra::distributed {
namespace {

template <class T>
void max_over_ranks(const HostArray& gathered, HostArray& data) {
    auto out = data.mutable_values<T>();
    auto all = gathered.values<T>();
    const std::size_t n = out.size();
    for (std::size_t r = 1; r * n < all.size(); ++r)
        for (std::size_t i = 0; i < n; ++i)
            out[i] = std::max(out[i], all[r * n + i]);
}

class CommunicatorGroup final : public CollectiveGroup {
public:
    CommunicatorGroup(std::shared_ptr<Communicator> comm, std::string label)
        : comm_(std::move(comm)), label_(std::move(label)) {}
    int rank() const override { return comm_->rank(); }
    int size() const override { return comm_->size(); }
    std::string describe() const override {
        return label_ + " (" + comm_->name() + ", rank " + std::to_string(comm_->rank()) + " of " +
               std::to_string(comm_->size()) + ")";
    }
    void all_reduce_in_place(HostArray& data, CollectiveOp op) override {
        if (op == CollectiveOp::Sum) {
            comm_->start_sum_in_place(data.raw_mutable(), data.size(), data.dtype())->wait();
            return;
        }
        if (op != CollectiveOp::Max)
            throw Error("collective group " + describe() + ": " + collective_op_name(op) +
                        " is not an all-reduce");
        // A max is rare (a softmax's shift over a split vocabulary) and small: gathered,
        // then taken in rank order on every rank.
        HostArray gathered = comm_->all_gather(data);
        HostArray first(data.sizes(), data.dtype());
        std::memcpy(first.raw_mutable(), gathered.raw(), data.bytes());
        data = first;
        switch (data.dtype()) {
        case DType::F32:
            return max_over_ranks<float>(gathered, data);
        case DType::F64:
            return max_over_ranks<double>(gathered, data);
        case DType::I32:
            return max_over_ranks<std::int32_t>(gathered, data);
        case DType::I64:
            return max_over_ranks<std::int64_t>(gathered, data);
        default:
            throw Error("collective group " + describe() + ": a max of " +
                        std::string(dtype_name(data.dtype())) + " values");
        }
    }

private:
    std::shared_ptr<Communicator> comm_;
    std::string label_;
};

} // namespace

std::shared_ptr<CollectiveGroup> collective_group(std::shared_ptr<Communicator> comm,
                                                  std::string label) {
    if (!comm) throw Error("collective_group: no communicator given for '" + label + "'");
    return std::make_shared<CommunicatorGroup>(std::move(comm), std::move(label));
}

} // namespace hedra::distributed
