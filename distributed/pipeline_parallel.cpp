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

// Point-to-point tags: into chunk j, activations kTagBase + 2j, gradients kTagBase + 2j + 1.
constexpr int kTagBase = 17;

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

// A chunk's programs for one micro-batch's shapes.
struct PipelineTrainer::Programs {
    // The last stage: forward and backward in one (inputs params, [received], inputs,
    // accumulated; outputs loss, [received's gradient], accumulated + gradients).
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
    : PipelineTrainer(std::move(pp), std::vector<StageFunction>{std::move(stage)},
                      std::move(inputs), std::move(params), std::move(optimizer),
                      std::move(options), std::move(pipeline)) {}

PipelineTrainer::PipelineTrainer(std::shared_ptr<Communicator> pp,
                                 std::vector<StageFunction> chunks,
                                 std::vector<nn::InputSpec> inputs, std::vector<HostArray> params,
                                 std::shared_ptr<const nn::Optimizer> optimizer,
                                 nn::TrainerOptions options, PipelineOptions pipeline)
    : pp_(std::move(pp)), chunk_fns_(std::move(chunks)), inputs_(std::move(inputs)),
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
                      if (t >= 0 && t < static_cast<int>(params.size()))
                          o.shards.uncounted[static_cast<std::size_t>(t)] = true;
              }
              return o;
          }()) {
    stage_ = pp_->rank();
    stages_ = pp_->size();
    const int v = static_cast<int>(chunk_fns_.size());
    if (v < 1 || pipeline_.chunks != v)
        throw Error("PipelineTrainer: " + std::to_string(v) +
                    " stage functions given for PipelineOptions::chunks = " +
                    std::to_string(pipeline_.chunks) + "; give one function per chunk");
    for (const StageFunction& f : chunk_fns_)
        if (!f) throw Error("PipelineTrainer: no stage function given");
    if (pipeline_.micro_batches < 1)
        throw Error("PipelineTrainer: micro_batches " + std::to_string(pipeline_.micro_batches) +
                    " must be at least 1");
    if (v > 1 && stages_ < 2)
        throw Error("PipelineTrainer: " + std::to_string(v) +
                    " chunks per rank interleave the stages of at least 2 ranks; with one rank "
                    "use chunks = 1");
    if (v > 1 && pipeline_.micro_batches % stages_ != 0)
        throw Error("PipelineTrainer: the interleaved schedule (" + std::to_string(v) +
                    " chunks) takes a multiple of the " + std::to_string(stages_) +
                    " ranks as micro_batches, got " + std::to_string(pipeline_.micro_batches));
    std::vector<std::size_t> counts = pipeline_.chunk_params;
    if (counts.empty() && v == 1) counts = {params.size()};
    std::size_t sum = 0;
    for (std::size_t n : counts)
        sum += n;
    if (counts.size() != static_cast<std::size_t>(v) || sum != params.size())
        throw Error("PipelineTrainer: PipelineOptions::chunk_params must give each of the " +
                    std::to_string(v) + " chunks its number of parameters, " +
                    std::to_string(params.size()) + " in all; got " +
                    std::to_string(counts.size()) + " counts summing to " + std::to_string(sum));
    chunk_begin_ = {0};
    for (std::size_t n : counts)
        chunk_begin_.push_back(chunk_begin_.back() + n);
    if ((stages_ > 1 || v > 1) && pipeline_.activation.empty())
        throw Error("PipelineTrainer: " + std::to_string(stages_ * v) +
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
PipelineTrainer::micro_batches(const std::vector<HostArray>& global, const char* op) const {
    if (global.size() != inputs_.size())
        throw Error(std::string(op) + ": expected " + std::to_string(inputs_.size()) +
                    " inputs, got " + std::to_string(global.size()));
    // The programs are compiled for the specs' sizes: the whole global batch.
    for (std::size_t i = 0; i < global.size(); ++i) {
        const nn::InputSpec& spec = inputs_[i];
        bool fits = global[i].rank() == static_cast<int>(spec.sizes.size()) &&
                    (global[i].dtype() == spec.dtype ||
                     (spec.any_integer && is_integer(global[i].dtype())));
        for (std::size_t d = 0; fits && d < spec.sizes.size(); ++d)
            fits = spec.sizes[d] == nn::kAnyExtent || spec.sizes[d] == global[i].sizes()[d];
        if (!fits)
            throw Error(std::string(op) + ": input " + std::to_string(i) + " (" +
                        (spec.name.empty() ? "input" + std::to_string(i) : spec.name) + ") is " +
                        std::string(dtype_name(global[i].dtype())) + " " +
                        Shape::of(global[i].sizes()).to_string() + ", but the trainer takes " +
                        std::string(dtype_name(spec.dtype)) + " " +
                        Shape::of(spec.sizes).to_string() +
                        " (its InputSpec); pass batches of that shape");
    }
    const int replicas = pipeline_.dp ? pipeline_.dp->size() : 1;
    const int replica = pipeline_.dp ? pipeline_.dp->rank() : 0;
    const int m = pipeline_.micro_batches;
    const std::int64_t batch = global.empty() || global[0].rank() == 0 ? 0 : global[0].sizes()[0];
    if (batch % (replicas * m) != 0 || batch == 0)
        throw Error(std::string(op) + ": a global batch of " + std::to_string(batch) +
                    " rows does not split into " + std::to_string(replicas) + " replicas x " +
                    std::to_string(m) + " micro-batches of equal size");
    const std::int64_t share = batch / replicas, micro = share / m;
    std::vector<std::vector<HostArray>> out(static_cast<std::size_t>(m));
    for (std::size_t i = 0; i < global.size(); ++i) {
        if (global[i].rank() == 0 || global[i].sizes()[0] != batch)
            throw Error(std::string(op) + ": input " + std::to_string(i) + " of shape " +
                        Shape::of(global[i].sizes()).to_string() + " must lead with the " +
                        std::to_string(batch) + " rows of the batch");
        for (int k = 0; k < m; ++k) {
            const std::int64_t begin = replica * share + k * micro;
            out[static_cast<std::size_t>(k)].push_back(batch_rows(global[i], begin, begin + micro));
        }
    }
    return out;
}

std::shared_ptr<PipelineTrainer::Programs>
PipelineTrainer::build(int chunk, const std::vector<HostArray>& micro) {
    auto p = std::make_shared<Programs>();
    const int stage = chunk * stages_ + stage_, last_stage = stages_ * chunks() - 1;
    const bool first = stage == 0, last = stage == last_stage;
    const std::vector<HostArray> values = chunk_part(trainer_.params(), chunk);
    std::vector<Array> params = placeholders_for(values, "param");
    std::vector<Array> ins = placeholders_for(micro, "input");
    std::vector<Array> received;
    if (!first)
        received.push_back(placeholder(Shape::of(pipeline_.activation), DType::F32, "received"));
    std::vector<Array> acc = placeholders_for(values, "accumulated");
    for (const HostArray& v : values)
        p->zeros.emplace_back(v.sizes(), v.dtype());
    Array y = chunk_fns_[std::size_t(chunk)](params, first ? Array() : received[0], ins);
    std::vector<Array> wrt = join({&params, &received});
    // Kernels call back as they finish, so that a step moves its messages on meanwhile (MPI
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
        return p;
    }
    if (y.shape().sizes() != pipeline_.activation || y.dtype() != DType::F32)
        throw Error("PipelineTrainer: stage " + std::to_string(stage) + " returns " + y.describe() +
                    ", but PipelineOptions::activation says f32 " +
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
    return p;
}

double PipelineTrainer::step(const std::vector<HostArray>& global_inputs, double lr) {
    const std::vector<std::vector<HostArray>> micro =
        micro_batches(global_inputs, "PipelineTrainer::step");
    const int v = chunks(), p = stages_, r = stage_, m = pipeline_.micro_batches;
    if (programs_.empty()) {
        const auto t = Clock::now();
        for (int j = 0; j < v; ++j)
            programs_.push_back(build(j, micro[0]));
        compile_seconds_ += seconds_since(t);
    }
    timing_ = {};
    const int last_stage = p * v - 1;
    const int previous = (r + p - 1) % p, next = (r + 1) % p;
    // Messages into chunk j: activations with tag forward_tag(j), gradients backward_tag(j).
    auto forward_tag = [](int j) { return kTagBase + 2 * j; };
    auto backward_tag = [](int j) { return kTagBase + 2 * j + 1; };
    const std::vector<HostArray>& params = trainer_.params();
    std::vector<HostArray> acc;
    for (const auto& chunk : programs_)
        acc.insert(acc.end(), chunk->zeros.begin(), chunk->zeros.end());
    // Messages in flight, with the arrays they read or fill; kernels progress them as they
    // finish (OutputHook::tick).
    struct Messages {
        std::vector<std::pair<HostArray, std::unique_ptr<InFlight>>> sends, receives;
    } messages;
    OutputHook progress;
    progress.ready = [](void*, int, void*) {};
    progress.context = &messages;
    progress.tick = [](void* context) {
        auto* m = static_cast<Messages*>(context);
        for (auto& [array, flight] : m->sends)
            flight->done();
        for (auto& [array, flight] : m->receives)
            flight->done();
    };
    auto send = [&](HostArray a, int dest, int tag) {
        auto flight = pp_->start_send(a.raw(), a.bytes(), dest, tag);
        messages.sends.emplace_back(std::move(a), std::move(flight));
    };
    // Every receive of the step is posted before it starts, in the order the step takes them
    // (per source and tag, the order their senders send), so that activations and gradients
    // move while this rank computes; receive() takes the next one.
    std::size_t next_receive = 0;
    auto post = [&](int source, int tag) {
        HostArray a(pipeline_.activation, DType::F32);
        auto flight = pp_->start_receive(a.raw_mutable(), a.bytes(), source, tag);
        messages.receives.emplace_back(std::move(a), std::move(flight));
    };
    auto receive = [&]() {
        auto& [array, flight] = messages.receives.at(next_receive++);
        const auto t = Clock::now();
        flight->wait();
        timing_.waiting += seconds_since(t);
        return array;
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
    auto slice = [&](const std::vector<HostArray>& all, int j) { return chunk_part(all, j); };
    auto take_gradients = [&](std::vector<HostArray>& out, std::size_t from, int j) {
        for (std::size_t i = chunk_begin_[std::size_t(j)]; i < chunk_begin_[std::size_t(j) + 1];
             ++i)
            acc[i] = std::move(out[from++]);
    };
    // The k-th forward (or backward) runs chunk chunk_at(k) on micro-batch micro_at(k):
    // groups of p micro-batches go through chunk 0, then chunk 1, ... (backwards from the last
    // chunk). With one chunk, micro-batch k.
    auto chunk_at = [&](int k, bool forward) {
        const int c = (k % (p * v)) / p;
        return forward ? c : v - 1 - c;
    };
    auto micro_at = [&](int k) { return (k / (p * v)) * p + k % p; };
    double loss_sum = 0.0;
    // Per chunk, the micro-batches in flight: their number, what they received, their stash.
    std::vector<std::deque<std::pair<int, std::vector<HostArray>>>> stashes(
        static_cast<std::size_t>(v));
    auto forward = [&](int k) {
        const int j = chunk_at(k, true), mb = micro_at(k), stage = j * p + r;
        const Programs& prog = *programs_[std::size_t(j)];
        std::vector<HostArray> received;
        if (stage > 0) received.push_back(receive());
        std::vector<HostArray> args =
            with(with(slice(params, j), received), micro[std::size_t(mb)]);
        if (stage == last_stage) {
            std::vector<HostArray> out = run(*prog.fused, with(args, slice(acc, j)));
            loss_sum += out[0].flat(0);
            if (stage > 0) send(out[1], previous, backward_tag((stage - 1) / p));
            take_gradients(out, stage > 0 ? 2 : 1, j);
            return;
        }
        std::vector<HostArray> out = run(*prog.forward, args);
        send(out[0], next, forward_tag((stage + 1) / p));
        std::vector<HostArray> kept = with(received, micro[std::size_t(mb)]);
        kept.insert(kept.end(), out.begin() + 1, out.end());
        stashes[std::size_t(j)].emplace_back(mb, std::move(kept));
    };
    auto backward = [&](int k) {
        const int j = chunk_at(k, false), stage = j * p + r;
        if (stage == last_stage) return; // its forward ran the backward too
        auto& queue = stashes[std::size_t(j)];
        if (queue.empty() || queue.front().first != micro_at(k))
            throw Error("PipelineTrainer: the schedule ran backward " + std::to_string(k) +
                        " of chunk " + std::to_string(j) + " before its forward");
        std::vector<HostArray> kept = std::move(queue.front().second);
        queue.pop_front();
        // kept: [received], inputs, stash: the backward's arguments after the parameters.
        std::vector<HostArray> args = with(slice(params, j), kept);
        args.push_back(receive());
        std::vector<HostArray> out =
            run(*programs_[std::size_t(j)]->backward, with(args, slice(acc, j)));
        if (stage > 0) send(out[0], previous, backward_tag((stage - 1) / p));
        take_gradients(out, stage > 0 ? 1 : 0, j);
    };
    // 1F1B: warm-up forwards, then one forward and one backward each, then the backwards
    // left. Interleaved, rank r runs 2(p − r − 1) + (v − 1)p forwards first (Megatron-LM).
    const int total = m * v;
    const int warmup = v == 1 ? (r == p - 1 ? 0 : std::min(p - r - 1, m))
                              : std::min(2 * (p - r - 1) + (v - 1) * p, total);
    std::vector<std::pair<bool, int>> order; // (forward, k)
    for (int k = 0; k < warmup; ++k)
        order.emplace_back(true, k);
    for (int k = 0; k < total - warmup; ++k) {
        order.emplace_back(true, warmup + k);
        order.emplace_back(false, k);
    }
    for (int k = total - warmup; k < total; ++k)
        order.emplace_back(false, k);
    for (auto [is_forward, k] : order) {
        const int j = chunk_at(k, is_forward), stage = j * p + r;
        if (is_forward && stage > 0) post(previous, forward_tag(j));
        if (!is_forward && stage != last_stage) post(next, backward_tag(j));
    }
    for (auto [is_forward, k] : order)
        is_forward ? forward(k) : backward(k);
    for (auto& [array, flight] : messages.sends)
        flight->wait();
    const auto reduce_start = Clock::now();
    // The loss from the last stage, the tied gradients summed, the replicas averaged.
    HostArray loss({}, DType::F64);
    loss.set_flat(0, r == p - 1 ? loss_sum / m : 0.0);
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

std::vector<HostArray> PipelineTrainer::chunk_part(const std::vector<HostArray>& all,
                                                   int chunk) const {
    return std::vector<HostArray>(all.begin() + std::ptrdiff_t(chunk_begin_[std::size_t(chunk)]),
                                  all.begin() +
                                      std::ptrdiff_t(chunk_begin_[std::size_t(chunk) + 1]));
}

CompiledProgram PipelineTrainer::build_evaluation(int chunk, const std::vector<HostArray>& micro) {
    const int stage = chunk * stages_ + stage_;
    const std::vector<HostArray> values = chunk_part(trainer_.params(), chunk);
    std::vector<Array> params = placeholders_for(values, "param");
    std::vector<Array> ins = placeholders_for(micro, "input");
    std::vector<Array> received;
    if (stage > 0)
        received.push_back(placeholder(Shape::of(pipeline_.activation), DType::F32, "received"));
    Array y = chunk_fns_[std::size_t(chunk)](params, stage > 0 ? received[0] : Array(), ins);
    ComputeOptions options = trainer_.options().compute;
    options.output_hooks = true;
    return compile({y}, join({&params, &received, &ins}), options);
}

double PipelineTrainer::evaluate(const std::vector<HostArray>& global_inputs) {
    const std::vector<std::vector<HostArray>> micro =
        micro_batches(global_inputs, "PipelineTrainer::evaluate");
    const int v = chunks(), p = stages_, r = stage_, m = pipeline_.micro_batches;
    if (evaluation_.empty()) {
        const auto t = Clock::now();
        for (int j = 0; j < v; ++j)
            evaluation_.push_back(build_evaluation(j, micro[0]));
        compile_seconds_ += seconds_since(t);
    }
    const int last_stage = p * v - 1;
    const int previous = (r + p - 1) % p, next = (r + 1) % p;
    auto tag = [](int j) { return kTagBase + 2 * j; };
    using Sends = std::vector<std::pair<HostArray, std::unique_ptr<InFlight>>>;
    Sends sends;
    OutputHook progress; // the sends move on as kernels finish, as in step()
    progress.ready = [](void*, int, void*) {};
    progress.context = &sends;
    progress.tick = [](void* context) {
        for (auto& [array, flight] : *static_cast<Sends*>(context))
            flight->done();
    };
    double loss_sum = 0.0;
    // The step's order of forwards: groups of p micro-batches through chunk 0, then chunk 1, ...
    // (one micro-batch at a time with one chunk); a stage receives an activation when it needs
    // it.
    const int group = v == 1 ? 1 : p;
    for (int g = 0; g < m / group; ++g)
        for (int j = 0; j < v; ++j)
            for (int i = 0; i < group; ++i) {
                const int mb = g * group + i, stage = j * p + r;
                std::vector<HostArray> args = chunk_part(trainer_.params(), j);
                if (stage > 0) {
                    HostArray a(pipeline_.activation, DType::F32);
                    pp_->receive(a.raw_mutable(), a.bytes(), previous, tag(j));
                    args.push_back(std::move(a));
                }
                args.insert(args.end(), micro[std::size_t(mb)].begin(),
                            micro[std::size_t(mb)].end());
                std::vector<HostArray> out = evaluation_[std::size_t(j)](args, progress);
                if (stage == last_stage) {
                    loss_sum += out[0].flat(0);
                    continue;
                }
                auto flight =
                    pp_->start_send(out[0].raw(), out[0].bytes(), next, tag((stage + 1) / p));
                sends.emplace_back(std::move(out[0]), std::move(flight));
            }
    for (auto& [array, flight] : sends)
        flight->wait();
    HostArray loss({}, DType::F64);
    loss.set_flat(0, r == p - 1 ? loss_sum / m : 0.0);
    if (stages_ > 1) loss = pp_->broadcast(loss, stages_ - 1);
    if (pipeline_.dp && pipeline_.dp->size() > 1)
        loss = pipeline_.dp->all_reduce(loss, Reduction::Mean);
    return loss.flat(0);
}

} // namespace hedra::distributed
