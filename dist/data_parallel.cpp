// Data-parallel training (see data_parallel.hpp).
#include "dist/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.hpp"

namespace hedra::dist {
namespace {

// Rows [first, last) of `a` (dense row-major), copied.
HostArray rows(const HostArray& a, std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> sizes = a.sizes();
    const std::size_t row = a.bytes() / static_cast<std::size_t>(sizes[0]);
    sizes[0] = last - first;
    HostArray out(sizes, a.dtype());
    std::memcpy(out.raw_mutable(), static_cast<const unsigned char*>(a.raw()) + row * first,
                out.bytes());
    return out;
}

} // namespace

DataParallelTrainer::DataParallelTrainer(std::shared_ptr<Communicator> comm, nn::Trainer trainer,
                                         bool overlap)
    : comm_(std::move(comm)), trainer_(std::move(trainer)), overlap_(overlap) {
    if (!comm_) throw Error("DataParallelTrainer: no communicator; use dist::init()");
    std::vector<HostArray> params;
    for (const HostArray& p : trainer_.params())
        params.push_back(comm_->broadcast(p, 0));
    trainer_.set_params(std::move(params));
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
        out.push_back(batched && comm_->size() > 1 ? rows(global_inputs[i], first, last)
                                                   : global_inputs[i]);
    }
    return out;
}

namespace {

// Each gradient's in-place all-reduce, started in parameter order as the outputs become final
// and progressed after every kernel.
struct GradientFlights {
    Communicator* comm;
    const std::vector<HostArray>* params;
    std::vector<void*> ready; // per parameter: its gradient's memory, once final
    std::size_t next = 0;     // the next gradient to start
    std::vector<std::unique_ptr<InFlight>> flights;
    std::vector<void*> started; // memory already summed (two outputs may share it)

    void start_ready() {
        for (; next < ready.size() && ready[next]; ++next) {
            void* data = ready[next];
            if (std::find(started.begin(), started.end(), data) != started.end()) continue;
            started.push_back(data);
            const HostArray& p = (*params)[next];
            flights.push_back(comm->start_sum_in_place(data, p.size(), p.dtype()));
        }
    }
    static void on_ready(void* context, int output, void* data) {
        auto* f = static_cast<GradientFlights*>(context);
        if (output < 1 || output > static_cast<int>(f->ready.size())) return; // the loss, extras
        f->ready[static_cast<std::size_t>(output - 1)] = data;
        f->start_ready();
    }
    static void on_tick(void* context) {
        for (auto& flight : static_cast<GradientFlights*>(context)->flights)
            flight->done();
    }
};

} // namespace

std::vector<HostArray> DataParallelTrainer::summed_during(const std::vector<HostArray>& inputs,
                                                          double divisor, HostArray& loss) {
    GradientFlights flights{comm_.get(), &trainer_.params(),
                            std::vector<void*>(trainer_.params().size(), nullptr)};
    OutputHook hook{GradientFlights::on_ready, &flights, GradientFlights::on_tick};
    nn::Trainer::Gradients g = trainer_.gradients(inputs, divisor, {}, &hook);
    const auto start = std::chrono::steady_clock::now();
    flights.start_ready(); // every output has been told by now
    for (auto& flight : flights.flights)
        flight->wait();
    comm_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    loss = g.loss;
    return std::move(g.grads);
}

std::vector<HostArray> DataParallelTrainer::summed_after(nn::Trainer::Gradients& g) {
    std::int64_t total = 0;
    for (const HostArray& x : g.grads) {
        if (x.dtype() != DType::F32)
            throw Error("DataParallelTrainer: a gradient of dtype " +
                        std::string(dtype_name(x.dtype())) + "; without overlap, f32 only");
        total += x.size();
    }
    HostArray flat({total}, DType::F32);
    auto* f = static_cast<float*>(flat.raw_mutable());
    for (const HostArray& x : g.grads) {
        std::memcpy(f, x.raw(), x.bytes());
        f += x.size();
    }
    const auto start = std::chrono::steady_clock::now();
    HostArray sum = comm_->all_reduce(flat);
    comm_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<HostArray> grads;
    const auto* s = static_cast<const float*>(sum.raw());
    for (const HostArray& x : g.grads) {
        HostArray y(x.sizes(), DType::F32);
        std::memcpy(y.raw_mutable(), s, y.bytes());
        s += x.size();
        grads.push_back(std::move(y));
    }
    return grads;
}

double DataParallelTrainer::step(const std::vector<HostArray>& global_inputs, double lr) {
    const std::int64_t batch = batch_of(global_inputs);
    const auto [first, last] = shard(batch);
    const double share = static_cast<double>(last - first) / static_cast<double>(batch);
    // Gradients of (local loss) * share: their sum over ranks is the global batch's gradient.
    std::vector<HostArray> grads;
    HostArray loss;
    if (overlap_) {
        grads = summed_during(local_inputs(global_inputs), 1.0 / share, loss);
    } else {
        nn::Trainer::Gradients g = trainer_.gradients(local_inputs(global_inputs), 1.0 / share);
        grads = summed_after(g);
        loss = g.loss;
    }
    HostArray weighted({1}, DType::F64);
    static_cast<double*>(weighted.raw_mutable())[0] = loss.flat(0) * share;
    const double global_loss = comm_->all_reduce(weighted).flat(0);
    trainer_.apply_gradients(grads, lr);
    return global_loss;
}

double DataParallelTrainer::evaluate_loss(const std::vector<HostArray>& global_inputs) {
    const std::int64_t batch = batch_of(global_inputs);
    const auto [first, last] = shard(batch);
    const double loss = trainer_.evaluate(local_inputs(global_inputs)).loss.flat(0);
    HostArray part({1}, DType::F64);
    static_cast<double*>(part.raw_mutable())[0] =
        loss * static_cast<double>(last - first) / static_cast<double>(batch);
    return comm_->all_reduce(part).flat(0);
}

} // namespace hedra::dist
