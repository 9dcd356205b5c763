// Data-parallel training: every rank holds the model, takes its share of each global batch
// (the rows of the inputs whose leading axis is the batch, InputSpec kAnyExtent), computes the
// gradient of its share with its Trainer's program, the gradients are summed across ranks, and
// every rank applies the same update. With overlap (the default) each gradient's all-reduce
// starts, in place, as soon as the kernel that completes it has run (Trainer::gradients' hook,
// in parameter order so that every rank starts them alike) and is progressed after every
// later kernel, so communication runs under the rest of the backward pass; without, the
// gradients are summed in one all-reduce of one contiguous buffer after it. Each rank's
// loss is divided by the global batch over its share's size (Trainer::gradients' divisor), so
// the sum is the gradient of the global batch's mean loss, whatever the shares' sizes. The
// initial parameters are rank 0's.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "nn/trainer.hpp"

namespace hedra::dist {

class DataParallelTrainer {
public:
    DataParallelTrainer(std::shared_ptr<Communicator> comm, nn::Trainer trainer,
                        bool overlap = true);

    // One update on the global batch (every rank passes the same arrays, or at least the same
    // sizes with its own rows filled): the global batch's mean loss before the update.
    double step(const std::vector<HostArray>& global_inputs, double lr);
    // The global batch's mean loss at the current parameters, each rank evaluating its share.
    double evaluate_loss(const std::vector<HostArray>& global_inputs);

    // The rows [first, last) of a global batch of `batch` rows that this rank takes.
    std::pair<std::int64_t, std::int64_t> shard(std::int64_t batch) const;
    // This rank's share of the inputs (the batch inputs' rows; the others whole).
    std::vector<HostArray> local_inputs(const std::vector<HostArray>& global_inputs) const;

    nn::Trainer& local() { return trainer_; }
    const nn::Trainer& local() const { return trainer_; }
    Communicator& communicator() { return *comm_; }
    // Seconds the steps so far waited for communication after their backward pass (with
    // overlap, what the computation did not hide; without, the whole all-reduce).
    double communication_seconds() const { return comm_seconds_; }

private:
    std::int64_t batch_of(const std::vector<HostArray>& global_inputs) const;
    std::vector<HostArray> summed_after(nn::Trainer::Gradients& g);
    std::vector<HostArray> summed_during(const std::vector<HostArray>& inputs, double divisor,
                                         HostArray& loss);

    std::shared_ptr<Communicator> comm_;
    nn::Trainer trainer_;
    bool overlap_;
    double comm_seconds_ = 0.0;
};

} // namespace hedra::dist
