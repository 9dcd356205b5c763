// Optimizer-state sharding (ZeRO stage 1, in the form of PyTorch's ZeroRedundancyOptimizer):
// every parameter has one owner rank, chosen to balance the elements each rank owns; a step
// reduces each gradient to its owner only, the owner updates its parameters with its part of the
// optimizer state (the only copy of that state), and every parameter is broadcast from its
// owner. The traffic is a reduce-scatter and an all-gather, as an all-reduce's; the optimizer
// state per rank falls to about 1/N (Adam's two moments are twice the parameters). Global-norm
// clipping sums each owner's squared norms across ranks first. The optimizer must name its state
// (Optimizer::state_names): names are how the parts map to a checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/compute.hpp"
#include "distributed/communicator.hpp"
#include "nn/trainer.hpp"

namespace hedra::distributed {

// Owners for arrays of these element counts on `ranks` ranks: largest first, each to the rank
// owning the fewest elements so far (lowest rank on ties).
std::vector<int> balanced_owners(const std::vector<std::int64_t>& counts, int ranks);

class ShardedOptimizer {
public:
    // Takes `trainer`'s optimizer and this rank's part of its state (the trainer's own state is
    // then released).
    ShardedOptimizer(Communicator& comm, nn::Trainer& trainer);

    const std::vector<int>& owners() const { return owners_; } // per parameter
    // Updates this rank's parameters from their summed gradients (`grads` holds the sum for the
    // parameters this rank owns; the others are not read), broadcasts every parameter from its
    // owner and gives them to the trainer (a step counted). Collective.
    void update(nn::Trainer& trainer, const std::vector<HostArray>& grads, double lr);
    // Every rank's state in one checkpoint, as the trainer would give unsharded. Collective.
    nn::TrainerCheckpoint checkpoint(const nn::Trainer& trainer) const;
    // This rank's part of the state from a checkpoint's arrays (names as checkpoint() gives).
    void restore(const std::vector<std::string>& names, const std::vector<HostArray>& arrays);
    // Bytes of optimizer state this rank holds.
    std::int64_t state_bytes() const;

private:
    CompiledProgram build(const nn::Trainer& trainer) const;
    const nn::Optimizer& part() const { return part_ ? *part_ : *optimizer_; }
    double clip_scale(const std::vector<HostArray>& grads) const; // collective

    Communicator& comm_;
    const nn::Optimizer* optimizer_;            // the trainer's (it outlives this)
    std::shared_ptr<const nn::Optimizer> part_; // for the owned parameters, when it differs
    std::vector<int> owners_;
    std::vector<std::size_t> owned_; // this rank's parameters
    std::vector<std::string> state_names_;
    std::vector<HostArray> state_;
    double clip_norm_ = 0.0;
    nn::GradientShards shards_; // tensor-parallel shards and stages: the norm's other groups
    // Owned params, state, lr, [clip scale], grads -> params, state; none when none owned.
    std::optional<CompiledProgram> program_;
};

} // namespace hedra::distributed
