// Pipeline parallelism (see pipeline_parallel.hpp).
#include "distributed/pipeline_parallel.hpp"

#include <chrono>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ad/grad.hpp"
#include "core/error.hpp"
#include "core/library.hpp"
#include "core/node_builders.hpp"
#include "core/shape.hpp"
#include "distributed/batch_rows.hpp"
#include "distributed/collective_group.hpp"

namespace hedra::distributed {
namespace {

constexpr int kForwardTag = 17, kBackwardTag = 18;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<Array> placeholders_for(const std::vector<HostArray>& values, const char* name) {
    std::vector<Array> out;
    for (const HostArray& v : values)
        out.push_back(placeholder(Shape::of(v.sizes()), v.dtype(), name));
    return out;
}

bool is_leaf(const Node& n) {
    return n.memo() || n.kind == NodeKind::Constant || n.kind == NodeKind::Data ||
           n.kind == NodeKind::Placeholder || n.kind == NodeKind::Iota;
}

std::vector<Array> join(std::initializer_list<const std::vector<Array>*> parts) {
    std::vector<Array> out;
    for (const auto* p : parts)
        out.insert(out.end(), p->begin(), p->end());
    return out;
}

} // namespace

// The stage's programs for one micro-batch's shapes.
struct PipelineTrainer::Programs {
    // Last stage: forward and backward in one (inputs params, [received], inputs, accumulated;
    // outputs loss, [received's gradient], accumulated + gradients).
    std::optional<CompiledProgram> fused;
    // Other stages: forward (inputs params, [received], inputs; outputs sent, stash...) and
    // backward (inputs params, [received], inputs, stash..., sent's gradient, accumulated;
    // outputs [received's gradient], accumulated + gradients).
    std::optional<CompiledProgram> forward, backward;
    std::vector<HostArray> zeros; // the accumulated gradients before the first micro-batch
};

PipelineTrainer::PipelineTrainer(std::shared_ptr<Communicator> pp, StageFunction stage,
                                 std::vector<nn::InputSpec> inputs, std::vector<HostArray> params,
                                 std::shared_ptr<const nn::Optimizer> optimizer,
                                 nn::TrainerOptions options, PipelineOptions pipeline)
    : pp_(std::move(pp)), stage_fn_(std::move(stage)), inputs_(std::move(inputs)),
      pipeline_(std::move(pipeline)),
      trainer_(
          [](const std::vector<Array>&, const std::vector<Array>&) -> Array {
              throw Error("PipelineTrainer: a stage's trainer only applies gradients; call "
                          "PipelineTrainer::step");
          },
          {}, params, optimizer,
          [&] {
              // Clipping by the whole model's norm: shards over tp, stages over pp, a tied
              // copy counted by the tied group's rank 0 only.
              nn::TrainerOptions o = options;
              if (!pp_) throw Error("PipelineTrainer: no pipeline communicator given");
              o.shards.group = pipeline_.tp;
              o.shards.sharded = pipeline_.tp_sharded;
              if (pp_->size() > 1) o.shards.stages = collective_group(pp_, "pp");
              if (pipeline_.tied_group && pipeline_.tied_group->rank() != 0) {
                  o.shards.uncounted.assign(params.size(), false);
                  for (int t : pipeline_.tied)
                      o.shards.uncounted.at(static_cast<std::size_t>(t)) = true;
              }
              return o;
          }()) {
    stage_ = pp_->rank();
    stages_ = pp_->size();
    if (!stage_fn_) throw Error("PipelineTrainer: no stage function given");
    if (pipeline_.micro_batches < 1)
        throw Error("PipelineTrainer: micro_batches " + std::to_string(pipeline_.micro_batches) +
                    " must be at least 1");
    if (stages_ > 1 && pipeline_.activation.empty())
        throw Error("PipelineTrainer: " + std::to_string(stages_) +
                    " stages pass activations; give PipelineOptions::activation (the sizes of "
                    "one micro-batch's activation, e.g. (rows, T, C))");
    for (int t : pipeline_.tied)
        if (t < 0 || t >= static_cast<int>(params.size()) || !pipeline_.tied_group)
            throw Error("PipelineTrainer: tied parameter " + std::to_string(t) + " of " +
                        std::to_string(params.size()) +
                        " needs an index of this stage's "
                        "parameters and PipelineOptions::tied_group");
}

std::vector<std::vector<HostArray>>
PipelineTrainer::micro_batches(const std::vector<HostArray>& global) const {
    if (global.size() != inputs_.size())
        throw Error("PipelineTrainer::step: expected " + std::to_string(inputs_.size()) +
                    " inputs, got " + std::to_string(global.size()));
    const int replicas = pipeline_.dp ? pipeline_.dp->size() : 1;
    const int replica = pipeline_.dp ? pipeline_.dp->rank() : 0;
    const int m = pipeline_.micro_batches;
    const std::int64_t batch = global.empty() || global[0].rank() == 0 ? 0 : global[0].sizes()[0];
    if (batch % (replicas * m) != 0 || batch == 0)
        throw Error("PipelineTrainer::step: a global batch of " + std::to_string(batch) +
                    " rows does not split into " + std::to_string(replicas) + " replicas x " +
                    std::to_string(m) + " micro-batches of equal size");
    const std::int64_t share = batch / replicas, micro = share / m;
    std::vector<std::vector<HostArray>> out(static_cast<std::size_t>(m));
    for (std::size_t i = 0; i < global.size(); ++i) {
        if (global[i].rank() == 0 || global[i].sizes()[0] != batch)
            throw Error("PipelineTrainer::step: input " + std::to_string(i) + " of shape " +
                        Shape::of(global[i].sizes()).to_string() + " must lead with the " +
                        std::to_string(batch) + " rows of the batch");
        for (int k = 0; k < m; ++k) {
            const std::int64_t begin = replica * share + k * micro;
            out[static_cast<std::size_t>(k)].push_back(batch_rows(global[i], begin, begin + micro));
        }
    }
    return out;
}

void PipelineTrainer::build(const std::vector<HostArray>& micro) {
    auto p = std::make_shared<Programs>();
    const bool first = stage_ == 0, last = stage_ == stages_ - 1;
    std::vector<Array> params = placeholders_for(trainer_.params(), "param");
    std::vector<Array> ins = placeholders_for(micro, "input");
    std::vector<Array> received;
    if (!first)
        received.push_back(placeholder(Shape::of(pipeline_.activation), DType::F32, "received"));
    std::vector<Array> acc = placeholders_for(trainer_.params(), "accumulated");
    for (const HostArray& v : trainer_.params())
        p->zeros.emplace_back(v.sizes(), v.dtype());
    Array y = stage_fn_(params, first ? Array() : received[0], ins);
    std::vector<Array> wrt = join({&params, &received});
    // Kernels call back as they finish, so that a step moves its sends on meanwhile (MPI
    // moves a large message only inside MPI calls; without this a send waits for the next
    // receive, and the stages take turns instead of overlapping).
    ComputeOptions options = trainer_.options().compute;
    options.output_hooks = true;
    const double scale = 1.0 / pipeline_.micro_batches;
    if (last) {
        if (y.rank() != 0 || !is_float(y.dtype()))
            throw Error("PipelineTrainer: the last stage must return the loss (a float scalar), "
                        "got " +
                        y.describe());
        std::vector<Array> g = grad(y * scale, wrt);
        std::vector<Array> outs{y};
        if (!first) outs.push_back(g[params.size()]);
        for (std::size_t i = 0; i < params.size(); ++i)
            outs.push_back(acc[i] + g[i]);
        p->fused.emplace(compile(outs, join({&params, &received, &ins, &acc}), options));
        programs_ = p;
        return;
    }
    if (y.shape().sizes() != pipeline_.activation || y.dtype() != DType::F32)
        throw Error("PipelineTrainer: stage " + std::to_string(stage_) + " returns " +
                    y.describe() + ", but PipelineOptions::activation says f32 " +
                    Shape::of(pipeline_.activation).to_string());
    Array dy = placeholder(y.shape(), DType::F32, "sent_gradient");
    std::vector<Array> g = vjp({y}, {dy}, wrt);
    // The stash: values of the forward graph that the gradient's graph reads.
    std::unordered_set<const Node*> forward;
    for (const NodePtr& n : topological_order({y.node()}))
        forward.insert(n.get());
    std::unordered_map<const Node*, NodePtr> origin; // stash placeholder -> forward value
    std::vector<NodePtr> grads;
    for (const Array& a : g)
        grads.push_back(a.node());
    std::vector<NodePtr> rebuilt = detail::rebuild_graph(
        grads, [&](const NodePtr& n, const std::unordered_map<const Node*, NodePtr>&) {
            if (!forward.count(n.get()) || is_leaf(*n) || n->kind == NodeKind::View)
                return NodePtr(); // a view is computed again from its source
            NodePtr ph = placeholder(n->shape, n->dtype, "stash").node();
            origin.emplace(ph.get(), n);
            return ph;
        });
    std::vector<Array> stash_in, stash_out;
    for (const NodePtr& n : topological_order(rebuilt))
        if (auto it = origin.find(n.get()); it != origin.end()) {
            stash_in.push_back(Array(n));
            stash_out.push_back(Array(it->second));
        }
    std::vector<Array> fwd_outs{y};
    fwd_outs.insert(fwd_outs.end(), stash_out.begin(), stash_out.end());
    p->forward.emplace(compile(fwd_outs, join({&params, &received, &ins}), options));
    std::vector<Array> bwd_outs;
    if (!first) bwd_outs.push_back(Array(rebuilt[params.size()]));
    for (std::size_t i = 0; i < params.size(); ++i)
        bwd_outs.push_back(acc[i] + Array(rebuilt[i])); // dy carries the 1/m already
    std::vector<Array> dys{dy};
    p->backward.emplace(
        compile(bwd_outs, join({&params, &received, &ins, &stash_in, &dys, &acc}), options));
    programs_ = p;
}

double PipelineTrainer::step(const std::vector<HostArray>& global_inputs, double lr) {
    const std::vector<std::vector<HostArray>> micro = micro_batches(global_inputs);
    if (!programs_) build(micro[0]);
    const Programs& p = *programs_;
    timing_ = {};
    const bool first = stage_ == 0, last = stage_ == stages_ - 1;
    const int m = pipeline_.micro_batches;
    const std::vector<HostArray>& params = trainer_.params();
    std::vector<HostArray> acc = p.zeros;
    using Sends = std::vector<std::pair<HostArray, std::unique_ptr<InFlight>>>;
    Sends sends;
    OutputHook progress;
    progress.ready = [](void*, int, void*) {};
    progress.context = &sends;
    progress.tick = [](void* context) {
        for (auto& [array, flight] : *static_cast<Sends*>(context))
            flight->done();
    };
    auto send = [&](HostArray a, int dest, int tag) {
        auto flight = pp_->start_send(a.raw(), a.bytes(), dest, tag);
        sends.emplace_back(std::move(a), std::move(flight));
    };
    auto receive = [&](int source, int tag) {
        HostArray a(pipeline_.activation, DType::F32);
        const auto t = Clock::now();
        pp_->receive(a.raw_mutable(), a.bytes(), source, tag);
        timing_.waiting += seconds_since(t);
        return a;
    };
    auto run = [&](const CompiledProgram& program, std::vector<HostArray> args) {
        const auto t = Clock::now();
        std::vector<HostArray> out = program(args, progress);
        timing_.compute += seconds_since(t);
        return out;
    };
    auto with = [](std::vector<HostArray> a, const std::vector<HostArray>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    auto take_gradients = [&](std::vector<HostArray>& out, std::size_t from) {
        for (std::size_t i = 0; i < acc.size(); ++i)
            acc[i] = std::move(out[from + i]);
    };
    double loss_sum = 0.0;
    // Per micro-batch in flight: what it received and its stash.
    std::deque<std::vector<HostArray>> stashes;
    auto forward = [&](int k) {
        std::vector<HostArray> received;
        if (!first) received.push_back(receive(stage_ - 1, kForwardTag));
        std::vector<HostArray> args = with(with(params, received), micro[std::size_t(k)]);
        if (last) {
            std::vector<HostArray> out = run(*p.fused, with(args, acc));
            loss_sum += out[0].flat(0);
            if (!first) send(out[1], stage_ - 1, kBackwardTag);
            take_gradients(out, first ? 1 : 2);
            return;
        }
        std::vector<HostArray> out = run(*p.forward, args);
        send(out[0], stage_ + 1, kForwardTag);
        std::vector<HostArray> kept = with(received, micro[std::size_t(k)]);
        kept.insert(kept.end(), out.begin() + 1, out.end());
        stashes.push_back(std::move(kept));
    };
    auto backward = [&]() {
        std::vector<HostArray> kept = std::move(stashes.front());
        stashes.pop_front();
        // kept: [received], inputs, stash: the backward's arguments after the parameters.
        std::vector<HostArray> args = with(params, kept);
        args.push_back(receive(stage_ + 1, kBackwardTag));
        std::vector<HostArray> out = run(*p.backward, with(args, acc));
        if (!first) send(out[0], stage_ - 1, kBackwardTag);
        take_gradients(out, first ? 0 : 1);
    };
    // 1F1B: warm-up forwards, then one forward and one backward each, then the backwards left.
    const int warmup = last ? 0 : std::min(stages_ - stage_ - 1, m);
    for (int k = 0; k < warmup; ++k)
        forward(k);
    for (int k = warmup; k < m; ++k) {
        forward(k);
        if (!last) backward();
    }
    while (!stashes.empty())
        backward();
    for (auto& [array, flight] : sends)
        flight->wait();
    const auto reduce_start = Clock::now();
    // The loss from the last stage, the tied gradients summed, the replicas averaged.
    HostArray loss({}, DType::F64);
    loss.set_flat(0, last ? loss_sum / m : 0.0);
    if (stages_ > 1) loss = pp_->broadcast(loss, stages_ - 1);
    for (int t : pipeline_.tied)
        acc[std::size_t(t)] = pipeline_.tied_group->all_reduce(acc[std::size_t(t)]);
    if (pipeline_.dp && pipeline_.dp->size() > 1) {
        for (HostArray& g : acc)
            g = pipeline_.dp->all_reduce(g, Reduction::Mean);
        loss = pipeline_.dp->all_reduce(loss, Reduction::Mean);
    }
    trainer_.apply_gradients(acc, lr);
    timing_.reduction = seconds_since(reduce_start);
    return loss.flat(0);
}

} // namespace hedra::distributed
