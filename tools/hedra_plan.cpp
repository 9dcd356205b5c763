// hedra-plan: which data × tensor × pipeline grid to train a GPT with on a cluster. It prints, for
// every grid that divides the model, the batch and the devices, the predicted memory per device
// and the parts of one step's time, from the closed-form model of distributed/parallel_plan.hpp.
// Presets give the models and the cluster of the docs; any flag overrides its preset's value.
// Exit status: 0 ok, 1 bad input, 2 usage.
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "distributed/parallel_plan.hpp"

namespace hedra::tools {
namespace {

using distributed::ClusterShape;
using distributed::GptShape;
using distributed::PlanOptions;
using distributed::Precision;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// GPT-3 175B as Megatron-LM's paper trained it (batch 1536 of 2048 tokens), and the W7 and W8
// workloads of the benches (bench/w7_gpt.py's --config w7 and w8, in f32).
const std::map<std::string, GptShape>& model_presets() {
    static const std::map<std::string, GptShape> presets{
        {"gpt3-175b", {96, 12288, 96, 51200, 2048, 1536, Precision::MixedBf16}},
        {"w7", {4, 128, 4, 65, 64, 12, Precision::F32}},
        {"w8", {6, 384, 6, 65, 256, 8, Precision::F32}},
    };
    return presets;
}

// 8 nodes of 8 H200 SXM: 141 GB HBM3e, 989 dense bf16 TFLOP/s, NVLink 4 at 450 GB/s per direction
// per GPU, 8 × 400 Gb/s InfiniBand per node (50 GB/s per GPU). Matmuls are assumed to reach half
// of peak, about what Megatron-LM reports end to end on A100 and H100.
const std::map<std::string, ClusterShape>& cluster_presets() {
    static const std::map<std::string, ClusterShape> presets{
        {"h200x64", {8, 8, 141e9, 450e9, 3e-6, 50e9, 6e-6, 989e12, 0.5}},
    };
    return presets;
}

std::string preset_names(const auto& presets) {
    std::string s;
    for (const auto& [name, value] : presets)
        s += (s.empty() ? "" : ", ") + name;
    return s;
}

std::string help_text() {
    return "usage: hedra-plan [options]\n"
           "\n"
           "Predicts memory and step time of every data x tensor x pipeline grid for training a "
           "GPT.\n"
           "\n"
           "model (a preset, or all six sizes; flags override the preset):\n"
           "  --model NAME          " +
           preset_names(model_presets()) +
           "\n"
           "  --layers N --width N --heads N --vocab N --sequence N --global-batch N\n"
           "  --precision P         bf16 (mixed precision, the default) or f32\n"
           "  --recompute           full activation recomputation\n"
           "  --zero1               optimizer state sharded over the data-parallel replicas\n"
           "  --micro-batches N     a fixed count (default: the best divisor for each grid)\n"
           "  --chunks V            interleaved stages per pipeline rank (default 1)\n"
           "cluster (default h200x64; flags override it):\n"
           "  --cluster NAME        " +
           preset_names(cluster_presets()) +
           "\n"
           "  --gpus-per-node N --nodes N\n"
           "  --memory-gb X         device memory, GB (1e9 bytes)\n"
           "  --intra-gbps X        intra-node bandwidth per device, one direction, GB/s\n"
           "  --intra-latency-us X  intra-node latency, microseconds\n"
           "  --inter-gbps X        inter-node bandwidth per device, one direction, GB/s\n"
           "  --inter-latency-us X  inter-node latency, microseconds\n"
           "  --tflops X            peak dense TFLOP/s per device in the model's precision\n"
           "  --utilization X       fraction of peak that matmuls reach (0 to 1)\n"
           "  --contention X        compute slowdown with every device busy (>= 1; CPU ranks\n"
           "                        sharing a host: bench/model_parallel.sh measures it)\n"
           "output:\n"
           "  --top N               print the N best grids only\n";
}

struct Request {
    GptShape model;
    ClusterShape cluster;
    PlanOptions options;
    int top = 0;
    bool help = false;
};

Request parse_arguments(int argc, char** argv) {
    Request r;
    r.cluster = cluster_presets().at("h200x64");
    std::string model_name, cluster_name, precision;
    std::int64_t layers = 0, width = 0, heads = 0, vocab = 0, sequence = 0, global_batch = 0;
    int gpus_per_node = 0, nodes = 0;
    double memory_gb = 0, intra_gbps = 0, intra_latency_us = 0, inter_gbps = 0;
    double inter_latency_us = 0, tflops = 0, utilization = 0, contention = 0;
    CLI::App app{"hedra-plan", "hedra-plan"};
    app.set_help_flag(); // --help prints help_text(), not CLI11's listing
    app.add_flag("-h,--help", r.help);
    app.add_option("--model", model_name);
    app.add_option("--layers", layers);
    app.add_option("--width", width);
    app.add_option("--heads", heads);
    app.add_option("--vocab", vocab);
    app.add_option("--sequence", sequence);
    app.add_option("--global-batch", global_batch);
    app.add_option("--precision", precision);
    app.add_flag("--recompute", r.options.recompute);
    app.add_flag("--zero1", r.options.zero1);
    app.add_option("--micro-batches", r.options.micro_batches);
    app.add_option("--chunks", r.options.chunks);
    app.add_option("--cluster", cluster_name);
    app.add_option("--gpus-per-node", gpus_per_node);
    app.add_option("--nodes", nodes);
    app.add_option("--memory-gb", memory_gb);
    app.add_option("--intra-gbps", intra_gbps);
    app.add_option("--intra-latency-us", intra_latency_us);
    app.add_option("--inter-gbps", inter_gbps);
    app.add_option("--inter-latency-us", inter_latency_us);
    app.add_option("--tflops", tflops);
    app.add_option("--utilization", utilization);
    app.add_option("--contention", contention);
    app.add_option("--top", r.top);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    if (r.help) return r;

    if (!model_name.empty()) {
        auto found = model_presets().find(model_name);
        if (found == model_presets().end())
            throw UsageError("unknown model '" + model_name + "'; presets are " +
                             preset_names(model_presets()));
        r.model = found->second;
    }
    if (!cluster_name.empty()) {
        auto found = cluster_presets().find(cluster_name);
        if (found == cluster_presets().end())
            throw UsageError("unknown cluster '" + cluster_name + "'; presets are " +
                             preset_names(cluster_presets()));
        r.cluster = found->second;
    }
    std::string missing;
    for (const auto& [flag, value, field] :
         {std::tuple{"--layers", layers, &r.model.layers},
          {"--width", width, &r.model.width},
          {"--heads", heads, &r.model.heads},
          {"--vocab", vocab, &r.model.vocabulary},
          {"--sequence", sequence, &r.model.sequence},
          {"--global-batch", global_batch, &r.model.global_batch}}) {
        if (app.count(flag))
            *field = value;
        else if (model_name.empty())
            missing += (missing.empty() ? "" : ", ") + std::string(flag);
    }
    if (!missing.empty())
        throw UsageError("no model: give --model (" + preset_names(model_presets()) +
                         ") or every size (missing " + missing + ")");
    if (!precision.empty()) {
        if (precision == "bf16")
            r.model.precision = Precision::MixedBf16;
        else if (precision == "f32")
            r.model.precision = Precision::F32;
        else
            throw UsageError("--precision is bf16 or f32, not '" + precision + "'");
    }
    if (app.count("--gpus-per-node")) r.cluster.gpus_per_node = gpus_per_node;
    if (app.count("--nodes")) r.cluster.nodes = nodes;
    for (const auto& [flag, value, scale, field] :
         {std::tuple{"--memory-gb", memory_gb, 1e9, &r.cluster.memory_bytes},
          {"--intra-gbps", intra_gbps, 1e9, &r.cluster.intra_node_bandwidth},
          {"--intra-latency-us", intra_latency_us, 1e-6, &r.cluster.intra_node_latency},
          {"--inter-gbps", inter_gbps, 1e9, &r.cluster.inter_node_bandwidth},
          {"--inter-latency-us", inter_latency_us, 1e-6, &r.cluster.inter_node_latency},
          {"--tflops", tflops, 1e12, &r.cluster.peak_flops},
          {"--utilization", utilization, 1.0, &r.cluster.utilization},
          {"--contention", contention, 1.0, &r.cluster.contention}})
        if (app.count(flag)) *field = value * scale;
    if (app.count("--micro-batches") && r.options.micro_batches <= 0)
        throw UsageError("--micro-batches must be positive, not " +
                         std::to_string(r.options.micro_batches));
    if (r.options.chunks <= 0)
        throw UsageError("--chunks must be positive, not " + std::to_string(r.options.chunks));
    if (app.count("--top") && r.top <= 0)
        throw UsageError("--top must be positive, not " + std::to_string(r.top));
    return r;
}

std::string summary(const Request& r) {
    const GptShape& m = r.model;
    const ClusterShape& c = r.cluster;
    char text[640];
    std::snprintf(
        text, sizeof text,
        "model: %lld layers, width %lld, %lld heads, vocabulary %lld, sequence %lld, global batch "
        "%lld, %s%s%s; %.4g parameters, %.4g model FLOPs per step\n"
        "cluster: %d × %d devices, %.0f GB, %.4g TFLOP/s at %.0f%% utilization, "
        "intra-node %.0f GB/s + %.3g us, inter-node %.0f GB/s + %.3g us\n\n",
        (long long)m.layers, (long long)m.width, (long long)m.heads, (long long)m.vocabulary,
        (long long)m.sequence, (long long)m.global_batch,
        m.precision == Precision::MixedBf16 ? "bf16 mixed precision" : "f32",
        r.options.recompute ? ", recompute" : "", r.options.zero1 ? ", ZeRO-1" : "",
        distributed::gpt_parameters(m), distributed::gpt_step_flops(m, false), c.nodes,
        c.gpus_per_node, c.memory_bytes / 1e9, c.peak_flops / 1e12, 100 * c.utilization,
        c.intra_node_bandwidth / 1e9, c.intra_node_latency * 1e6, c.inter_node_bandwidth / 1e9,
        c.inter_node_latency * 1e6);
    return text;
}

int run(int argc, char** argv) {
    Request r = parse_arguments(argc, argv);
    if (r.help) {
        std::cout << help_text();
        return 0;
    }
    std::vector<distributed::GridPlan> plans =
        distributed::plan_grids(r.model, r.cluster, r.options);
    std::size_t shown = plans.size();
    if (r.top > 0 && std::size_t(r.top) < shown) plans.resize(std::size_t(r.top));
    std::cout << summary(r) << distributed::plans_markdown(plans);
    if (plans.size() < shown) std::cout << "\n(" << plans.size() << " of " << shown << " grids)\n";
    return 0;
}

} // namespace
} // namespace hedra::tools

int main(int argc, char** argv) {
    try {
        return hedra::tools::run(argc, argv);
    } catch (const hedra::tools::UsageError& e) {
        std::cerr << "hedra-plan: " << e.what() << " (see hedra-plan --help)\n";
        return 2;
    } catch (const hedra::Error& e) {
        std::cerr << "hedra-plan: " << e.what() << "\n";
        return 1;
    }
}
