// The closed-form model of parallel_plan.hpp, evaluated for one grid or for every grid that
// divides the model, the batch and the devices.
#include "distributed/parallel_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/error.hpp"

namespace hedra::distributed {
namespace {

// Left free for the CUDA context, communication buffers, matmul workspaces and fragmentation.
constexpr double kUsableMemoryFraction = 0.9;

struct Link {
    double bandwidth, latency;
};

struct Grid {
    int dp, tp, pp;
};

enum class Axis { Tensor, Data, Pipeline };

std::string number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

void require(bool ok, const char* function, const std::string& what) {
    if (!ok) throw Error(std::string(function) + ": " + what);
}

void check_model(const GptShape& m, const char* function) {
    for (const auto& [name, value] : {std::pair{"layers", m.layers},
                                      {"width", m.width},
                                      {"heads", m.heads},
                                      {"vocabulary", m.vocabulary},
                                      {"sequence", m.sequence},
                                      {"global batch", m.global_batch}})
        require(value > 0, function,
                std::string("the model's ") + name + " must be positive, not " +
                    std::to_string(value));
    require(m.width % m.heads == 0, function,
            "the width " + std::to_string(m.width) + " is not a multiple of the heads " +
                std::to_string(m.heads) + "; choose a width that each head gets an equal share of");
}

void check_cluster(const ClusterShape& c, const char* function) {
    require(c.gpus_per_node > 0 && c.nodes > 0, function,
            "the cluster needs at least one node of one device, not " + std::to_string(c.nodes) +
                " nodes of " + std::to_string(c.gpus_per_node));
    for (const auto& [name, value] : {std::pair{"memory per device", c.memory_bytes},
                                      {"intra-node bandwidth", c.intra_node_bandwidth},
                                      {"inter-node bandwidth", c.inter_node_bandwidth},
                                      {"peak FLOP/s", c.peak_flops}})
        require(value > 0, function,
                std::string("the cluster's ") + name + " must be positive, not " +
                    number_text(value));
    require(c.intra_node_latency >= 0 && c.inter_node_latency >= 0, function,
            "latencies must not be negative (intra-node " + number_text(c.intra_node_latency) +
                " s, inter-node " + number_text(c.inter_node_latency) + " s)");
    require(c.utilization > 0 && c.utilization <= 1, function,
            "the utilization is a fraction of peak in (0, 1], not " + number_text(c.utilization));
    require(c.contention >= 1, function,
            "the contention is a slowdown factor >= 1, not " + number_text(c.contention));
}

int coordinate(int rank, Grid g, Axis axis) {
    switch (axis) {
    case Axis::Tensor:
        return rank % g.tp;
    case Axis::Data:
        return rank / g.tp % g.dp;
    case Axis::Pipeline:
        return rank / (g.tp * g.dp);
    }
    return 0;
}

int stride(Grid g, Axis axis) {
    return axis == Axis::Tensor ? 1 : axis == Axis::Data ? g.tp : g.tp * g.dp;
}

// Ranks are numbered tp fastest, then dp, then pp: a group spans nodes when any of its ranks sits
// on another node than the group's first rank.
Link link_of(Grid g, Axis axis, const ClusterShape& c) {
    for (int rank = 0; rank < g.dp * g.tp * g.pp; ++rank) {
        int first = rank - coordinate(rank, g, axis) * stride(g, axis);
        if (rank / c.gpus_per_node != first / c.gpus_per_node)
            return {c.inter_node_bandwidth, c.inter_node_latency};
    }
    return {c.intra_node_bandwidth, c.intra_node_latency};
}

struct StateBytes {
    double weight, gradient, optimizer;
};

StateBytes state_bytes(Precision p) {
    if (p == Precision::MixedBf16) return {2, 2, 12}; // fp32 master weights, Adam m and v
    return {4, 4, 8};
}

double memory_bytes(const GptShape& m, Grid g, std::int64_t micro_batch_size, int micro_batches,
                    const PlanOptions& o) {
    double params = gpt_parameters(m) / (g.tp * g.pp);
    StateBytes s = state_bytes(m.precision);
    double state = params * (s.weight + s.gradient + s.optimizer / (o.zero1 ? g.dp : 1));
    double sbh = double(m.sequence) * double(micro_batch_size) * double(m.width);
    double width_scale = bytes_per_value(m.precision) / 2.0; // the formula counts 16-bit values
    double full_layer = sbh * (34 + 5.0 * double(m.heads) * double(m.sequence) / double(m.width)) /
                        g.tp * width_scale;
    const int v = g.pp > 1 ? o.chunks : 1;
    double layers_per_stage = double(m.layers / (g.pp * v));
    double in_flight = v == 1 ? std::min(g.pp, micro_batches)
                              : std::min(micro_batches * v, 2 * (g.pp - 1) + (v - 1) * g.pp + 1);
    if (!o.recompute) return state + full_layer * layers_per_stage * in_flight;
    double kept_layer = sbh * bytes_per_value(m.precision);
    return state + kept_layer * layers_per_stage * in_flight + full_layer;
}

std::string grid_text(Grid g) {
    return "dp " + std::to_string(g.dp) + " × tp " + std::to_string(g.tp) + " × pp " +
           std::to_string(g.pp);
}

std::vector<int> divisors(std::int64_t n) {
    std::vector<int> low, high;
    for (std::int64_t k = 1; k * k <= n; ++k) {
        if (n % k != 0) continue;
        low.push_back(int(k));
        if (k * k != n) high.push_back(int(n / k));
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

bool plan_less(const GridPlan& a, const GridPlan& b) {
    return std::tuple(!a.fits, a.step_s, a.pp, a.tp, a.dp, a.micro_batches) <
           std::tuple(!b.fits, b.step_s, b.pp, b.tp, b.dp, b.micro_batches);
}

std::string duration_text(double s) {
    char text[32];
    if (s == 0) return "0";
    if (s >= 1)
        std::snprintf(text, sizeof text, "%.2f s", s);
    else if (s >= 1e-3)
        std::snprintf(text, sizeof text, "%.2f ms", s * 1e3);
    else
        std::snprintf(text, sizeof text, "%.1f us", s * 1e6);
    return text;
}

} // namespace

int bytes_per_value(Precision precision) {
    return precision == Precision::MixedBf16 ? 2 : 4;
}

double gpt_parameters(const GptShape& m) {
    check_model(m, "gpt_parameters");
    double L = double(m.layers), h = double(m.width);
    return 12 * L * h * h + 13 * L * h + double(m.vocabulary) * h + double(m.sequence) * h;
}

double gpt_step_flops(const GptShape& m, bool recompute) {
    check_model(m, "gpt_step_flops");
    double B = double(m.global_batch), S = double(m.sequence), L = double(m.layers);
    double h = double(m.width), V = double(m.vocabulary);
    double forward_backward = 72 * B * S * L * h * h * (1 + S / (6 * h) + V / (12 * L * h));
    return recompute ? forward_backward * 4 / 3 : forward_backward;
}

double ring_all_reduce_seconds(double bytes, int ranks, double bandwidth, double latency) {
    require(ranks > 0 && bytes >= 0 && bandwidth > 0 && latency >= 0, "ring_all_reduce_seconds",
            "needs ranks > 0, bytes >= 0, bandwidth > 0 and latency >= 0, not ranks " +
                std::to_string(ranks) + ", bytes " + number_text(bytes) + ", bandwidth " +
                number_text(bandwidth) + ", latency " + number_text(latency));
    double k = ranks;
    return 2 * (k - 1) / k * bytes / bandwidth + 2 * (k - 1) * latency;
}

GridPlan plan_grid(const GptShape& m, const ClusterShape& c, int dp, int tp, int pp,
                   int micro_batches, const PlanOptions& o) {
    const char* fn = "plan_grid";
    check_model(m, fn);
    check_cluster(c, fn);
    Grid g{dp, tp, pp};
    int devices = c.gpus_per_node * c.nodes;
    require(dp > 0 && tp > 0 && pp > 0 && std::int64_t(dp) * tp * pp == devices, fn,
            grid_text(g) + " does not use the cluster's " + std::to_string(devices) +
                " devices; choose sizes whose product is " + std::to_string(devices));
    require(m.heads % tp == 0, fn,
            "tp " + std::to_string(tp) + " does not divide the " + std::to_string(m.heads) +
                " heads; choose a tensor-parallel size that does");
    require(m.layers % pp == 0, fn,
            "pp " + std::to_string(pp) + " does not divide the " + std::to_string(m.layers) +
                " layers; choose a pipeline size that does");
    const int v = pp > 1 ? o.chunks : 1;
    require(o.chunks >= 1 && m.layers % (pp * v) == 0 && (v == 1 || micro_batches % pp == 0), fn,
            std::to_string(o.chunks) + " interleaved stages per pipeline rank need pp " +
                std::to_string(pp) + " × chunks to divide the " + std::to_string(m.layers) +
                " layers and, with more than one chunk, micro-batches (" +
                std::to_string(micro_batches) + ") in multiples of pp; choose other sizes");
    require(m.global_batch % dp == 0, fn,
            "dp " + std::to_string(dp) + " does not divide the global batch of " +
                std::to_string(m.global_batch) +
                " sequences; choose a data-parallel size that does");
    std::int64_t replica_batch = m.global_batch / dp;
    require(micro_batches > 0 && replica_batch % micro_batches == 0, fn,
            std::to_string(micro_batches) + " micro-batches do not divide the " +
                std::to_string(replica_batch) + " sequences of each replica (global batch " +
                std::to_string(m.global_batch) + " / dp " + std::to_string(dp) +
                "); choose a divisor");

    GridPlan plan;
    plan.dp = dp, plan.tp = tp, plan.pp = pp;
    plan.micro_batches = micro_batches;
    plan.micro_batch_size = replica_batch / micro_batches;
    plan.chunks = v;
    double model_flops = gpt_step_flops(m, false);
    plan.compute_s =
        gpt_step_flops(m, o.recompute) / devices / (c.peak_flops * c.utilization) * c.contention;
    double per_micro_batch = plan.compute_s / micro_batches;
    double forward = per_micro_batch * (o.recompute ? 0.25 : 1.0 / 3.0);
    double backward = per_micro_batch - forward;

    double activation = double(plan.micro_batch_size) * double(m.sequence) * double(m.width) *
                        bytes_per_value(m.precision);
    double layers_per_stage = double(m.layers / pp);
    if (tp > 1) {
        Link link = link_of(g, Axis::Tensor, c);
        int all_reduces = o.recompute ? 6 : 4;
        plan.tp_comm_s = all_reduces * layers_per_stage * micro_batches *
                         ring_all_reduce_seconds(activation, tp, link.bandwidth, link.latency);
    }
    if (pp > 1) {
        Link link = link_of(g, Axis::Pipeline, c);
        plan.pp_comm_s =
            2.0 * (micro_batches * v + pp - 1) * (activation / link.bandwidth + link.latency);
        plan.bubble_s = (pp - 1) * (forward + backward) / v;
    }
    if (dp > 1) {
        Link link = link_of(g, Axis::Data, c);
        double gradients = gpt_parameters(m) / (tp * pp) * bytes_per_value(m.precision);
        double all_reduce = ring_all_reduce_seconds(gradients, dp, link.bandwidth, link.latency);
        plan.dp_comm_exposed_s = std::max(0.0, all_reduce - backward);
    }
    plan.step_s =
        plan.compute_s + plan.tp_comm_s + plan.pp_comm_s + plan.dp_comm_exposed_s + plan.bubble_s;
    plan.memory_bytes = memory_bytes(m, g, plan.micro_batch_size, micro_batches, o);
    plan.fits = plan.memory_bytes <= kUsableMemoryFraction * c.memory_bytes;
    plan.tokens_per_s = double(m.global_batch) * double(m.sequence) / plan.step_s;
    plan.model_flops_utilization = model_flops / plan.step_s / (devices * c.peak_flops);
    return plan;
}

std::vector<GridPlan> plan_grids(const GptShape& m, const ClusterShape& c, const PlanOptions& o) {
    const char* fn = "plan_grids";
    check_model(m, fn);
    check_cluster(c, fn);
    require(o.micro_batches >= 0, fn,
            "the micro-batch count must be positive (or 0 to choose), not " +
                std::to_string(o.micro_batches));
    require(o.chunks >= 1, fn,
            "the interleaved stages per pipeline rank must be at least 1, not " +
                std::to_string(o.chunks));
    int devices = c.gpus_per_node * c.nodes;
    std::vector<GridPlan> plans;
    for (int tp : divisors(devices)) {
        if (m.heads % tp != 0) continue;
        if (tp > c.gpus_per_node && !o.tensor_parallel_across_nodes) continue;
        for (int pp : divisors(devices / tp)) {
            int dp = devices / tp / pp;
            const int v = pp > 1 ? o.chunks : 1;
            if (m.layers % (pp * v) != 0 || m.global_batch % dp != 0) continue;
            std::int64_t replica_batch = m.global_batch / dp;
            auto schedulable = [&](int count) {
                return replica_batch % count == 0 && (v == 1 || count % pp == 0);
            };
            if (o.micro_batches > 0) {
                if (schedulable(o.micro_batches))
                    plans.push_back(plan_grid(m, c, dp, tp, pp, o.micro_batches, o));
                continue;
            }
            // The fitting count with the shortest step; if none fits, the smallest memory.
            std::vector<GridPlan> candidates;
            for (int count : divisors(replica_batch))
                if (schedulable(count)) candidates.push_back(plan_grid(m, c, dp, tp, pp, count, o));
            if (candidates.empty()) continue;
            bool any_fits = std::any_of(candidates.begin(), candidates.end(),
                                        [](const GridPlan& p) { return p.fits; });
            plans.push_back(*std::min_element(
                candidates.begin(), candidates.end(), [&](const GridPlan& a, const GridPlan& b) {
                    return any_fits ? plan_less(a, b) : a.memory_bytes < b.memory_bytes;
                }));
        }
    }
    require(!plans.empty(), fn,
            "no grid dp × tp × pp = " + std::to_string(devices) +
                " devices divides the model: tp must divide the " + std::to_string(m.heads) +
                " heads" +
                (o.tensor_parallel_across_nodes
                     ? std::string()
                     : " and be at most the " + std::to_string(c.gpus_per_node) +
                           " devices of a node") +
                ", pp the " + std::to_string(m.layers) + " layers, dp the global batch of " +
                std::to_string(m.global_batch) +
                (o.micro_batches > 0 ? " with " + std::to_string(o.micro_batches) +
                                           " micro-batches dividing each replica's share"
                                     : std::string()) +
                "; change the device count or the batch");
    std::sort(plans.begin(), plans.end(), plan_less);
    return plans;
}

std::string plans_markdown(const std::vector<GridPlan>& plans) {
    std::string s = "| dp | tp | pp | micro-batches × size | memory GB | fits | compute | tp comm "
                    "| pp comm | dp exposed | bubble | step | tokens/s | MFU |\n"
                    "|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const GridPlan& p : plans) {
        char memory[32], tokens[32], mfu[32];
        double gb = p.memory_bytes / 1e9;
        std::snprintf(memory, sizeof memory, gb >= 10 ? "%.1f" : "%.3g", gb);
        std::snprintf(tokens, sizeof tokens, "%.0f", p.tokens_per_s);
        std::snprintf(mfu, sizeof mfu, "%.1f%%", 100 * p.model_flops_utilization);
        s += "| " + std::to_string(p.dp) + " | " + std::to_string(p.tp) + " | " +
             std::to_string(p.pp) + " | " + std::to_string(p.micro_batches) + " × " +
             std::to_string(p.micro_batch_size) +
             (p.chunks > 1 ? " (" + std::to_string(p.chunks) + " chunks)" : std::string()) + " | " +
             memory + " | " + (p.fits ? "yes" : "no") + " | " + duration_text(p.compute_s) + " | " +
             duration_text(p.tp_comm_s) + " | " + duration_text(p.pp_comm_s) + " | " +
             duration_text(p.dp_comm_exposed_s) + " | " + duration_text(p.bubble_s) + " | " +
             duration_text(p.step_s) + " | " + tokens + " | " + mfu + " |\n";
    }
    return s;
}

} // namespace hedra::distributed
