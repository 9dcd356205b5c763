// A planner for training a GPT on a cluster with data × tensor × pipeline parallelism: for every
// grid dp·tp·pp = devices that divides the model and the batch, it predicts the memory per device
// and the time of one step from a closed-form model, so that a user can see which grids fit and
// which are fastest before launching anything (Narayanan et al. 2021, "Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", sections 2-3, makes the same
// trade-offs by hand).
//
// The model, with L layers, h width, a heads, V vocabulary, S sequence, B global batch (sequences),
// b micro-batch size, m micro-batches per replica per step, t = tp, p = pp, d = dp:
//   parameters   P = 12·L·h² + 13·L·h + V·h + S·h   (blocks, their biases and norms, embeddings)
//   model FLOPs  F = 72·B·S·L·h²·(1 + S/(6h) + V/(12·L·h))   per step, forward and backward
//                (Megatron's formula); with recompute the devices execute 4/3·F (its 96·… formula)
//                but utilization is still counted against F.
//   compute      executed FLOPs / (d·t·p) / (peak·utilization) · contention per device and step
//                (contention: how much slower a device computes while every device computes at
//                once, 1 where devices share nothing, measured for CPU ranks sharing a host's
//                caches and memory bandwidth); a micro-batch
//                on one stage takes t_f + t_b = compute / m, with t_f = 1/3 and t_b = 2/3 of it
//                (with recompute t_f = 1/4 and t_b = 3/4: the backward repeats the forward).
//                Embedding and logits work is assumed to be spread evenly over the stages.
//   ring         all-reduce of n bytes over k ranks: 2(k−1)/k·n/bw + 2(k−1)·latency.
//   tensor       per layer and micro-batch, 2 all-reduces in the forward and 2 in the backward
//                (2 more with recompute) of b·S·h·bytes over the t ranks of a layer; not
//                overlapped.
//   pipeline     1F1B; bubble = (p−1)·(t_f + t_b). Every boundary carries an activation forward
//                and a gradient backward of b·S·h·bytes per micro-batch, each n/bw + latency; the
//                critical path has m + p − 1 forward and as many backward slots, so the time
//                charged is 2·(m + p − 1) transfers when p > 1 (no scatter/gather across the t
//                ranks of a stage, no overlap). Interleaved with v stages per rank (Megatron's
//                virtual pipeline): bubble (p−1)·(t_f + t_b)/v, 2·(m·v + p − 1) transfers.
//   data         all-reduce (ring) of the stage's gradients, P/(t·p) values of the gradients'
//                width, over the d replicas; it overlaps the backward of the last micro-batch
//                only: exposed = max(0, all-reduce − t_b). ZeRO-1's reduce-scatter + all-gather
//                moves the same bytes, so it costs the same.
//   step         compute + tensor + pipeline + exposed data + bubble; tokens/s = B·S / step;
//                model FLOPs utilization = F / step / (devices·peak).
//   memory       per device: P/(t·p) parameters at 16 bytes each (bf16 mixed precision: 2 weight,
//                2 gradient, 12 fp32 Adam master/m/v; f32: 4 + 4 + 8), the optimizer's part divided
//                by d with ZeRO-1; plus activations: per layer and micro-batch
//                S·b·h·(34 + 5·a·S/h)/t bytes (Korthikanti et al. 2022, 16-bit activations; twice
//                that in f32), times L/p layers, times min(p, m) micro-batches in flight on the
//                first stage (interleaved: L/(p·v) layers times min(m·v, 2(p−1) + (v−1)p + 1)
//                chunks' micro-batches, the schedule's warm-up). With recompute each layer keeps
//                only its input (S·b·h·2 bytes, 4 in f32) and one layer's full activations are live
//                while it is recomputed. A grid fits when this is at most 90% of the device's
//                memory: the rest goes to the CUDA context, communication buffers, matmul
//                workspaces and allocator fragmentation.
// Ranks are numbered tp fastest, then dp, then pp (Megatron's order): a group whose ranks fall in
// more than one node of gpus_per_node devices uses the inter-node link, otherwise the intra-node
// one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hedra::distributed {

enum class Precision {
    MixedBf16, // bf16 weights, activations and gradients; fp32 master weights and Adam moments
    F32,
};

struct GptShape {
    std::int64_t layers = 0;
    std::int64_t width = 0; // hidden size h
    std::int64_t heads = 0;
    std::int64_t vocabulary = 0;
    std::int64_t sequence = 0;
    std::int64_t global_batch = 0; // sequences per optimizer step
    Precision precision = Precision::MixedBf16;
};

// Bandwidths in bytes/s per device in one direction, latencies in seconds, memory in bytes,
// peak in FLOP/s per device; utilization is the fraction of peak that matmuls reach.
struct ClusterShape {
    int gpus_per_node = 8;
    int nodes = 1;
    double memory_bytes = 0;
    double intra_node_bandwidth = 0;
    double intra_node_latency = 0;
    double inter_node_bandwidth = 0;
    double inter_node_latency = 0;
    double peak_flops = 0;
    double utilization = 0.5;
    double contention = 1.0; // compute slowdown with every device busy (>= 1)
};

struct PlanOptions {
    int micro_batches = 0;  // 0: the best divisor of each replica's batch
    int chunks = 1;         // interleaved stages per pipeline rank (with pp > 1)
    bool recompute = false; // full activation recomputation, as Megatron ran GPT-3
    bool zero1 = false;     // optimizer state sharded over the data-parallel replicas
    bool tensor_parallel_across_nodes = false;
};

struct GridPlan {
    int dp = 1, tp = 1, pp = 1;
    int micro_batches = 1;
    std::int64_t micro_batch_size = 1;
    int chunks = 1;          // interleaved stages per pipeline rank
    double memory_bytes = 0; // per device, peak
    bool fits = false;
    double compute_s = 0, tp_comm_s = 0, pp_comm_s = 0, dp_comm_exposed_s = 0, bubble_s = 0;
    double step_s = 0;
    double tokens_per_s = 0;
    double model_flops_utilization = 0;
};

int bytes_per_value(Precision precision);
double gpt_parameters(const GptShape& model);
// Model FLOPs of one step (72·…); with recompute, what the devices execute (96·…).
double gpt_step_flops(const GptShape& model, bool recompute);
double ring_all_reduce_seconds(double bytes, int ranks, double bandwidth, double latency);

// One grid with a given number of micro-batches; throws hedra::Error when it does not divide.
GridPlan plan_grid(const GptShape& model, const ClusterShape& cluster, int dp, int tp, int pp,
                   int micro_batches, const PlanOptions& options = {});

// Every grid that divides, fitting ones first, then by step time.
std::vector<GridPlan> plan_grids(const GptShape& model, const ClusterShape& cluster,
                                 const PlanOptions& options = {});

// The plans as a Markdown table, one row per plan.
std::string plans_markdown(const std::vector<GridPlan>& plans);

} // namespace hedra::distributed
