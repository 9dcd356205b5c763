// Data-parallel training: every rank holds the model, takes its share of each global batch
// (the rows of the inputs whose leading axis is the batch, InputSpec kAnyExtent), computes the
// gradient of its share with its Trainer's program, the gradients are summed across ranks, and
// every rank applies the same update. Each rank's loss is divided by the global batch over its
// share's size (Trainer::gradients' divisor), so the sum is the gradient of the global batch's
// mean loss, whatever the shares' sizes. The initial parameters are rank 0's.
//
// With overlap (the default) each bucket of gradients starts its collective, in place, as soon as
// the kernel that completes its last gradient has run (Trainer::gradients' hook) and is
// progressed after every later kernel, so communication runs under the rest of the backward
// pass. The buckets (gradient_flights.hpp) follow the order in which the program makes the
// gradients final, as rank 0 observed it on the first step, and are sized by a cost model of the
// group measured at construction. With shard_optimizer_state (ZeRO stage 1,
// sharded_optimizer.hpp) each gradient is reduced to the rank that owns its parameter, which
// updates it with the only copy of its optimizer state and broadcasts it.
//
// Over NCCL (a communicator that sums device memory) with the gradients computed on the cuda
// backend, each gradient is summed where the program left it, in place, on the program's stream
// (device_gradients.hpp): nothing is staged through the host, and the update's program reads the
// sums on the device. Its collectives start after the backward pass (one per gradient, in the
// plan's order); the sharded optimizer keeps to the host path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distributed/communicator.hpp"
#include "distributed/gradient_flights.hpp"
#include "distributed/sharded_optimizer.hpp"
#include "nn/trainer.hpp"

namespace hedra::distributed {

// Bucket sizes from measure_cost (DataParallelOptions::bucket_bytes).
inline constexpr std::int64_t kMeasuredBuckets = -1;

struct DataParallelOptions {
    bool overlap = true;                // collectives during the backward pass; off: after it
    bool shard_optimizer_state = false; // ZeRO stage 1
    // Gradients smaller than this share a collective; 0: one per gradient.
    std::int64_t bucket_bytes = kMeasuredBuckets;
};

class DataParallelTrainer {
public:
    DataParallelTrainer(std::shared_ptr<Communicator> comm, nn::Trainer trainer,
                        DataParallelOptions options = {});

    // One update on the global batch (every rank passes the same arrays, or at least the same
    // sizes with its own rows filled): the global batch's mean loss before the update.
    double step(const std::vector<HostArray>& global_inputs, double lr);
    // The global batch's mean loss at the current parameters, each rank evaluating its share.
    double evaluate_loss(const std::vector<HostArray>& global_inputs);
    // The loss and the extra outputs over the global batch: float outputs are taken as means over
    // the batch (each rank's weighted by its share, summed), integer ones as counts (summed).
    nn::StepResult evaluate(const std::vector<HostArray>& global_inputs);

    // Everything a run depends on, as one process's Trainer::checkpoint() gives it (the sharded
    // state gathered). Collective: every rank calls it.
    nn::TrainerCheckpoint checkpoint() const;
    // checkpoint() written by rank 0 as safetensors; the others wait for the file. Collective.
    void save_checkpoint(const std::string& path) const;
    // Every rank takes the same checkpoint (each keeps its part of a sharded state).
    void restore(const nn::TrainerCheckpoint& checkpoint);

    // The rows [first, last) of a global batch of `batch` rows that this rank takes.
    std::pair<std::int64_t, std::int64_t> shard(std::int64_t batch) const;
    // This rank's share of the inputs (the batch inputs' rows; the others whole).
    std::vector<HostArray> local_inputs(const std::vector<HostArray>& global_inputs) const;

    nn::Trainer& local() { return trainer_; }
    const nn::Trainer& local() const { return trainer_; }
    Communicator& communicator() { return *comm_; }
    // Seconds the steps so far waited for communication after their backward pass (with
    // overlap, what the computation did not hide; without, the whole all-reduce), and spent in
    // the sharded update's broadcasts.
    double communication_seconds() const { return comm_seconds_; }
    const FlightPlan& plan() const { return plan_; }
    const CollectiveCost& cost() const { return cost_; }
    // Bytes of optimizer state this rank holds.
    std::int64_t optimizer_state_bytes() const;
    // Gradients summed on the device so far (their spans in sum_on_device calls).
    std::int64_t device_sums() const { return device_sums_; }

private:
    std::int64_t batch_of(const std::vector<HostArray>& global_inputs) const;
    void replan(std::vector<std::size_t> order);
    // The global loss from this rank's; the update with the summed gradients.
    double finish_step(const nn::Trainer::Gradients& g, double share, double lr);

    std::shared_ptr<Communicator> comm_;
    nn::Trainer trainer_;
    DataParallelOptions options_;
    CollectiveCost cost_;
    std::unique_ptr<ShardedOptimizer> sharded_;
    std::vector<std::size_t> order_; // the gradients' start order
    FlightPlan plan_;
    bool order_learned_ = false;
    bool host_gradients_ = false; // the gradients were not on a device: host collectives
    std::int64_t device_sums_ = 0;
    double comm_seconds_ = 0.0;
};

} // namespace hedra::distributed
