// Optimizer-state sharding (see sharded_optimizer.hpp).
#include "distributed/sharded_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/shape.hpp"

namespace hedra::distributed {

std::vector<int> balanced_owners(const std::vector<std::int64_t>& counts, int ranks) {
    std::vector<std::size_t> by_size(counts.size());
    std::iota(by_size.begin(), by_size.end(), 0);
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](std::size_t a, std::size_t b) { return counts[a] > counts[b]; });
    std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0);
    std::vector<int> owners(counts.size(), 0);
    for (std::size_t p : by_size) {
        const auto least = std::min_element(load.begin(), load.end());
        owners[p] = static_cast<int>(least - load.begin());
        *least += counts[p];
    }
    return owners;
}

namespace {

std::vector<std::string> owned_names(const std::vector<std::string>& names,
                                     const std::vector<std::size_t>& owned) {
    std::vector<std::string> out;
    for (std::size_t p : owned)
        out.push_back(names[p]);
    return out;
}

std::string describe(const HostArray& a) {
    return std::string(dtype_name(a.dtype())) + " " + Shape::of(a.sizes()).to_string();
}

HostArray scalar(DType dtype, double value) {
    HostArray a({}, dtype);
    a.set_flat(0, value);
    return a;
}

} // namespace

ShardedOptimizer::ShardedOptimizer(Communicator& comm, nn::Trainer& trainer)
    : comm_(comm), optimizer_(&trainer.optimizer()), clip_norm_(trainer.options().clip_norm),
      shards_(trainer.options().shards) {
    const std::vector<HostArray>& params = trainer.params();
    const std::vector<std::string> all_names = optimizer_->state_names(trainer.param_names());
    if (all_names.size() != trainer.optimizer_state().size())
        throw Error("ShardedOptimizer: optimizer '" + optimizer_->name() + "' names " +
                    std::to_string(all_names.size()) + " of its " +
                    std::to_string(trainer.optimizer_state().size()) +
                    " state arrays; sharding maps the parts by name, so the optimizer must "
                    "override Optimizer::state_names");
    std::vector<std::int64_t> counts;
    for (const HostArray& p : params)
        counts.push_back(p.size());
    owners_ = balanced_owners(counts, comm_.size());
    std::vector<HostArray> mine;
    for (std::size_t p = 0; p < params.size(); ++p)
        if (owners_[p] == comm_.rank()) {
            owned_.push_back(p);
            mine.push_back(params[p]);
        }
    if (!owned_.empty()) {
        part_ = optimizer_->subset(owned_);
        state_names_ = part().state_names(owned_names(trainer.param_names(), owned_));
        state_ = part().initial_state(mine);
        program_ = build(trainer);
    }
    trainer.release_optimizer_state();
}

CompiledProgram ShardedOptimizer::build(const nn::Trainer& trainer) const {
    std::vector<Array> params, grads, state;
    for (std::size_t p : owned_) {
        const HostArray& v = trainer.params()[p];
        params.push_back(placeholder(Shape::of(v.sizes()), v.dtype(), trainer.param_names()[p]));
        grads.push_back(
            placeholder(Shape::of(v.sizes()), v.dtype(), "grad." + trainer.param_names()[p]));
    }
    for (std::size_t i = 0; i < state_.size(); ++i)
        state.push_back(placeholder(Shape::of(state_[i].sizes()), state_[i].dtype(),
                                    "state" + std::to_string(i)));
    const DType lr_dtype = trainer.params()[0].dtype();
    Array lr = placeholder(Shape(), lr_dtype, "lr");
    std::vector<Array> ins = params;
    ins.insert(ins.end(), state.begin(), state.end());
    ins.push_back(lr);
    std::vector<Array> scaled = grads;
    if (clip_norm_ > 0.0) {
        Array scale = placeholder(Shape(), lr_dtype, "clip_scale");
        ins.push_back(scale);
        for (Array& g : scaled)
            g = g * cast(scale, g.dtype());
    }
    ins.insert(ins.end(), grads.begin(), grads.end());
    nn::OptimizerUpdate u = part().update(params, scaled, state, lr);
    std::vector<Array> outs = u.params;
    outs.insert(outs.end(), u.state.begin(), u.state.end());
    return compile(outs, ins, trainer.options().compute);
}

double ShardedOptimizer::clip_scale(const std::vector<HostArray>& grads) const {
    // PyTorch's clip_grad_norm_: the norm of the per-gradient norms, each owner's squares summed
    // across ranks (a rank contributes zero for what it does not own).
    HostArray squares({static_cast<std::int64_t>(grads.size())}, DType::F64);
    std::memset(squares.raw_mutable(), 0, squares.bytes());
    for (std::size_t p : owned_) {
        double s = 0.0;
        for (std::int64_t i = 0; i < grads[p].size(); ++i)
            s += grads[p].flat(i) * grads[p].flat(i);
        squares.set_flat(static_cast<std::int64_t>(p), s);
    }
    const HostArray all = comm_.all_reduce(squares);
    // With tensor parallelism a shard's squares are summed over its group as well, and with
    // pipeline stages every stage's total (a tied copy counted once), as clip_grad_norm does.
    HostArray total({}, DType::F64), shard_total({}, DType::F64);
    total.set_flat(0, 0.0);
    shard_total.set_flat(0, 0.0);
    for (std::int64_t i = 0; i < all.size(); ++i) {
        const auto p = static_cast<std::size_t>(i);
        if (!shards_.uncounted.empty() && shards_.uncounted[p]) continue;
        const bool sharded = shards_.group && !shards_.sharded.empty() && shards_.sharded[p];
        HostArray& into = sharded ? shard_total : total;
        into.set_flat(0, into.flat(0) + all.flat(i));
    }
    if (shards_.group) shards_.group->all_reduce_in_place(shard_total, CollectiveOp::Sum);
    total.set_flat(0, total.flat(0) + shard_total.flat(0));
    if (shards_.stages) shards_.stages->all_reduce_in_place(total, CollectiveOp::Sum);
    return std::min(1.0, clip_norm_ / (std::sqrt(total.flat(0)) + 1e-6));
}

void ShardedOptimizer::update(nn::Trainer& trainer, const std::vector<HostArray>& grads,
                              double lr) {
    if (!(lr >= 0.0) || !std::isfinite(lr))
        throw Error("ShardedOptimizer::update: learning rate " + std::to_string(lr) +
                    " must be finite and >= 0");
    std::vector<HostArray> params = trainer.params();
    const double scale = clip_norm_ > 0.0 ? clip_scale(grads) : 1.0;
    if (program_) {
        const DType lr_dtype = params[0].dtype();
        std::vector<HostArray> in;
        for (std::size_t p : owned_)
            in.push_back(params[p]);
        in.insert(in.end(), state_.begin(), state_.end());
        in.push_back(scalar(lr_dtype, lr));
        if (clip_norm_ > 0.0) in.push_back(scalar(lr_dtype, scale));
        for (std::size_t p : owned_)
            in.push_back(grads[p]);
        std::vector<HostArray> out = (*program_)(in);
        for (std::size_t i = 0; i < owned_.size(); ++i)
            params[owned_[i]] = std::move(out[i]);
        for (std::size_t i = 0; i < state_.size(); ++i)
            state_[i] = std::move(out[owned_.size() + i]);
    }
    // Every parameter from its owner: the others' copies are fresh arrays the broadcast fills.
    std::vector<std::unique_ptr<InFlight>> flights;
    for (std::size_t p = 0; p < params.size(); ++p) {
        if (owners_[p] != comm_.rank()) params[p] = HostArray(params[p].sizes(), params[p].dtype());
        flights.push_back(
            comm_.start_broadcast_in_place(params[p].raw_mutable(), params[p].bytes(), owners_[p]));
    }
    for (auto& f : flights)
        f->wait();
    trainer.take_updated_params(std::move(params));
}

nn::TrainerCheckpoint ShardedOptimizer::checkpoint(const nn::Trainer& trainer) const {
    nn::TrainerCheckpoint c = trainer.checkpoint(); // parameters, step count
    const std::vector<std::string> all_names = optimizer_->state_names(trainer.param_names());
    const std::vector<HostArray> shapes = optimizer_->initial_state(trainer.params());
    // Each state array from the lowest rank whose part names it (a rank-0 state such as Adam's
    // β^t is the same on every owner).
    std::vector<std::vector<std::string>> rank_names(static_cast<std::size_t>(comm_.size()));
    for (int r = 0; r < comm_.size(); ++r) {
        std::vector<std::size_t> theirs;
        for (std::size_t p = 0; p < owners_.size(); ++p)
            if (owners_[p] == r) theirs.push_back(p);
        if (!theirs.empty())
            rank_names[r] = optimizer_->state_names(owned_names(trainer.param_names(), theirs));
    }
    for (std::size_t i = 0; i < all_names.size(); ++i) {
        int from = -1;
        for (int r = 0; r < comm_.size() && from < 0; ++r)
            if (std::find(rank_names[r].begin(), rank_names[r].end(), all_names[i]) !=
                rank_names[r].end())
                from = r;
        if (from < 0) internal_error("ShardedOptimizer: a state array no rank holds");
        HostArray a(shapes[i].sizes(), shapes[i].dtype());
        if (from == comm_.rank()) {
            const auto at = std::find(state_names_.begin(), state_names_.end(), all_names[i]);
            a = state_[static_cast<std::size_t>(at - state_names_.begin())];
        }
        c.names.push_back("optimizer." + all_names[i]);
        c.arrays.push_back(comm_.broadcast(a, from));
    }
    return c;
}

void ShardedOptimizer::restore(const std::vector<std::string>& names,
                               const std::vector<HostArray>& arrays) {
    for (std::size_t i = 0; i < state_names_.size(); ++i) {
        const std::string want = "optimizer." + state_names_[i];
        const auto at = std::find(names.begin(), names.end(), want);
        if (at == names.end())
            throw Error("ShardedOptimizer::restore: no array named '" + want +
                        "'; the checkpoint is not of this model and optimizer");
        const HostArray& a = arrays.at(static_cast<std::size_t>(at - names.begin()));
        if (a.sizes() != state_[i].sizes() || a.dtype() != state_[i].dtype())
            throw Error("ShardedOptimizer::restore: '" + want + "' is " + describe(a) +
                        ", the optimizer's is " + describe(state_[i]));
        state_[i] = a;
    }
}

std::int64_t ShardedOptimizer::state_bytes() const {
    std::int64_t total = 0;
    for (const HostArray& a : state_)
        total += static_cast<std::int64_t>(a.bytes());
    return total;
}

} // namespace hedra::distributed
