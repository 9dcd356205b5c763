// Data-parallel training (see data_parallel.hpp).
#include "distributed/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "distributed/batch_rows.hpp"
#include "distributed/device_gradients.hpp"
#include "nn/io/safetensors.hpp"

namespace hedra::distributed {
DataParallelTrainer::DataParallelTrainer(std::shared_ptr<Communicator> comm, nn::Trainer trainer,
                                         DataParallelOptions options)
    : comm_(std::move(comm)), trainer_(std::move(trainer)), options_(options) {
    if (!comm_) throw Error("DataParallelTrainer: no communicator; use distributed::init()");
    std::vector<HostArray> params;
    for (const HostArray& p : trainer_.params())
        params.push_back(comm_->broadcast(p, 0));
    trainer_.set_params(std::move(params));
    if (options_.shard_optimizer_state)
        sharded_ = std::make_unique<ShardedOptimizer>(*comm_, trainer_);
    if (options_.bucket_bytes == kMeasuredBuckets) cost_ = measure_cost(*comm_);
    // Until the program shows its order: the backward pass's usual one, last layer first.
    std::vector<std::size_t> order;
    for (std::size_t p = trainer_.params().size(); p-- > 0;)
        order.push_back(p);
    replan(std::move(order));
}

void DataParallelTrainer::replan(std::vector<std::size_t> order) {
    order_ = std::move(order);
    const std::size_t bytes =
        options_.bucket_bytes == kMeasuredBuckets
            ? cost_.bucket_bytes()
            : static_cast<std::size_t>(std::max<std::int64_t>(options_.bucket_bytes, 0));
    plan_ = plan_flights(trainer_.params(), order_,
                         sharded_ ? sharded_->owners() : std::vector<int>{}, bytes);
}

std::int64_t DataParallelTrainer::batch_of(const std::vector<HostArray>& global_inputs) const {
    const std::vector<nn::InputSpec>& specs = trainer_.input_specs();
    std::int64_t batch = -1;
    for (std::size_t i = 0; i < specs.size() && i < global_inputs.size(); ++i) {
        if (specs[i].sizes.empty() || specs[i].sizes[0] != nn::kAnyExtent) continue;
        const std::int64_t b = global_inputs[i].rank() > 0 ? global_inputs[i].sizes()[0] : -1;
        if (batch >= 0 && b != batch)
            throw Error("DataParallelTrainer: the batch inputs have " + std::to_string(batch) +
                        " and " + std::to_string(b) + " rows (input " + std::to_string(i) +
                        "); give every batch input the same number of rows");
        batch = b;
    }
    if (batch < 0)
        throw Error("DataParallelTrainer: no input has a batch axis (an InputSpec whose leading "
                    "extent is kAnyExtent); there is nothing to share among ranks");
    if (batch < comm_->size())
        throw Error("DataParallelTrainer: a global batch of " + std::to_string(batch) +
                    " rows for " + std::to_string(comm_->size()) +
                    " ranks; give each rank at least one row");
    return batch;
}

std::pair<std::int64_t, std::int64_t> DataParallelTrainer::shard(std::int64_t batch) const {
    const std::int64_t n = comm_->size(), r = comm_->rank();
    return {batch * r / n, batch * (r + 1) / n};
}

std::vector<HostArray>
DataParallelTrainer::local_inputs(const std::vector<HostArray>& global_inputs) const {
    const auto [first, last] = shard(batch_of(global_inputs));
    const std::vector<nn::InputSpec>& specs = trainer_.input_specs();
    std::vector<HostArray> out;
    for (std::size_t i = 0; i < global_inputs.size(); ++i) {
        const bool batched =
            i < specs.size() && !specs[i].sizes.empty() && specs[i].sizes[0] == nn::kAnyExtent;
        out.push_back(batched && comm_->size() > 1 ? batch_rows(global_inputs[i], first, last)
                                                   : global_inputs[i]);
    }
    return out;
}

double DataParallelTrainer::step(const std::vector<HostArray>& global_inputs, double lr) {
    const std::int64_t batch = batch_of(global_inputs);
    const auto [first, last] = shard(batch);
    const double share = static_cast<double>(last - first) / static_cast<double>(batch);
    // Gradients of (local loss) * share: their sum over ranks is the global batch's gradient.
    if (comm_->sums_device_memory() && !sharded_ && !host_gradients_) {
        // Computed on a device (the cuda backend), they are summed there, in place, on the
        // stream of the program that made them: the update's program, on the same stream, reads
        // the sums where they are. Computed elsewhere, the host collectives below from now on.
        nn::Trainer::Gradients g = trainer_.gradients(local_inputs(global_inputs), 1.0 / share);
        if (std::optional<DeviceGradients> d = device_gradients(g.grads)) {
            std::vector<Communicator::DeviceSpan> spans;
            for (std::size_t p : order_)
                spans.push_back({d->address[p], g.grads[p].size(), g.grads[p].dtype()});
            comm_->sum_on_device(spans, d->stream);
            device_sums_ += static_cast<std::int64_t>(spans.size());
            return finish_step(g, share, lr);
        }
        host_gradients_ = true;
        GradientFlights flights(*comm_, plan_, trainer_.params().size());
        for (std::size_t p : order_)
            flights.ready(p, g.grads[p].raw_mutable());
        flights.finish();
        return finish_step(g, share, lr);
    }
    GradientFlights flights(*comm_, plan_, trainer_.params().size());
    nn::Trainer::Gradients g;
    if (options_.overlap) {
        const OutputHook hook = flights.hook();
        g = trainer_.gradients(local_inputs(global_inputs), 1.0 / share, {}, &hook);
    } else {
        g = trainer_.gradients(local_inputs(global_inputs), 1.0 / share);
    }
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t p : order_) // without overlap, and any the program reported at its end
        flights.ready(p, g.grads[p].raw_mutable());
    flights.finish();
    comm_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double global_loss = finish_step(g, share, lr);
    if (!order_learned_ && options_.overlap) {
        // Rank 0's order, so that every rank starts the same collectives in the same order.
        std::vector<std::int64_t> seen(flights.arrival().begin(), flights.arrival().end());
        HostArray order =
            comm_->broadcast(HostArray::from(seen, {static_cast<std::int64_t>(seen.size())}), 0);
        std::vector<std::size_t> learned;
        for (std::int64_t i = 0; i < order.size(); ++i)
            learned.push_back(static_cast<std::size_t>(order.flat(i)));
        replan(std::move(learned));
        order_learned_ = true;
    }
    return global_loss;
}

double DataParallelTrainer::finish_step(const nn::Trainer::Gradients& g, double share, double lr) {
    HostArray weighted({1}, DType::F64);
    weighted.set_flat(0, g.loss.flat(0) * share);
    const double global_loss = comm_->all_reduce(weighted).flat(0);
    if (sharded_)
        sharded_->update(trainer_, g.grads, lr);
    else
        trainer_.apply_gradients(g.grads, lr);
    return global_loss;
}

double DataParallelTrainer::evaluate_loss(const std::vector<HostArray>& global_inputs) {
    return evaluate(global_inputs).loss.flat(0);
}

namespace {

// A float array times `share`, summed over ranks, in its dtype; an integer one summed.
HostArray combined(Communicator& comm, const HostArray& a, double share) {
    if (!is_float(a.dtype())) {
        HostArray wide(a.sizes(), DType::I64);
        for (std::int64_t i = 0; i < a.size(); ++i)
            wide.set_flat(i, a.flat(i));
        wide = comm.all_reduce(wide);
        HostArray out(a.sizes(), a.dtype());
        for (std::int64_t i = 0; i < a.size(); ++i)
            out.set_flat(i, static_cast<double>(static_cast<const std::int64_t*>(wide.raw())[i]));
        return out;
    }
    HostArray wide(a.sizes(), DType::F64);
    for (std::int64_t i = 0; i < a.size(); ++i)
        wide.set_flat(i, a.flat(i) * share);
    wide = comm.all_reduce(wide);
    HostArray out(a.sizes(), a.dtype());
    for (std::int64_t i = 0; i < a.size(); ++i)
        out.set_flat(i, wide.flat(i));
    return out;
}

} // namespace

nn::StepResult DataParallelTrainer::evaluate(const std::vector<HostArray>& global_inputs) {
    const std::int64_t batch = batch_of(global_inputs);
    const auto [first, last] = shard(batch);
    const double share = static_cast<double>(last - first) / static_cast<double>(batch);
    nn::StepResult r = trainer_.evaluate(local_inputs(global_inputs));
    r.loss = combined(*comm_, r.loss, share);
    for (HostArray& out : r.outputs)
        out = combined(*comm_, out, share);
    return r;
}

nn::TrainerCheckpoint DataParallelTrainer::checkpoint() const {
    return sharded_ ? sharded_->checkpoint(trainer_) : trainer_.checkpoint();
}

void DataParallelTrainer::save_checkpoint(const std::string& path) const {
    const nn::TrainerCheckpoint c = checkpoint();
    std::string failure;
    if (comm_->rank() == 0) {
        try {
            nn::save_safetensors(path, c.names, c.arrays, c.metadata);
        } catch (const Error& e) {
            failure = e.what();
        }
    }
    HostArray failed({1}, DType::I32);
    failed.set_flat(0, failure.empty() ? 0 : 1);
    if (comm_->all_reduce(failed).flat(0) != 0)
        throw Error("DataParallelTrainer::save_checkpoint: rank 0 could not write '" + path + "'" +
                    (failure.empty() ? std::string() : ": " + failure));
}

void DataParallelTrainer::restore(const nn::TrainerCheckpoint& c) {
    trainer_.restore(c.names, c.arrays, c.metadata);
    if (sharded_) sharded_->restore(c.names, c.arrays);
}

std::int64_t DataParallelTrainer::optimizer_state_bytes() const {
    if (sharded_) return sharded_->state_bytes();
    std::int64_t total = 0;
    for (const HostArray& a : trainer_.optimizer_state())
        total += static_cast<std::int64_t>(a.bytes());
    return total;
}

} // namespace hedra::distributed
