// The 3D-parallelism planner against hand computations of its model (parallel_plan.hpp): GPT-3's
// parameters and FLOPs, the ring all-reduce, the 1F1B bubble, memory with and without
// recomputation and ZeRO-1, grids that do not divide, and errors for bad input.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/expect_error.hpp"
#include "distributed/parallel_plan.hpp"

using namespace hedra::distributed;

namespace {

GptShape gpt3_175b() {
    return {96, 12288, 96, 51200, 2048, 1536, Precision::MixedBf16};
}

// 2 layers, width 64, 4 heads, vocabulary 100, sequence 32, batch 8: P = 108416 parameters.
GptShape small_model() {
    return {2, 64, 4, 100, 32, 8, Precision::MixedBf16};
}

ClusterShape small_cluster(int gpus_per_node, int nodes) {
    return {gpus_per_node, nodes, 1e12, 100e9, 1e-6, 10e9, 5e-6, 100e12, 0.5};
}

} // namespace

TEST_CASE("parameter count of GPT-3 175B") {
    // 12·96·12288² + 13·96·12288 + 51200·12288 + 2048·12288
    CHECK(gpt_parameters(gpt3_175b()) == doctest::Approx(174615822336.0).epsilon(1e-12));
    GptShape gpt2_vocabulary = gpt3_175b();
    gpt2_vocabulary.vocabulary = 50257;
    CHECK(gpt_parameters(gpt2_vocabulary) == doctest::Approx(174.6e9).epsilon(1e-3));
    CHECK(gpt_parameters(small_model()) == 108416.0);
}

TEST_CASE("step FLOPs follow Megatron's 72·B·S·L·h²·(1 + S/6h + V/12Lh)") {
    double flops = gpt_step_flops(gpt3_175b(), false);
    CHECK(flops == doctest::Approx(3.3861967463873244e18).epsilon(1e-12));
    CHECK(gpt_step_flops(gpt3_175b(), true) == doctest::Approx(flops * 4 / 3).epsilon(1e-12));
}

TEST_CASE("ring all-reduce time") {
    // 2·3/4 · 1e9 / 1e11 + 2·3 · 1e-5
    CHECK(ring_all_reduce_seconds(1e9, 4, 1e11, 1e-5) == doctest::Approx(0.01506));
    CHECK(ring_all_reduce_seconds(1e9, 1, 1e11, 1e-5) == 0.0);
}

TEST_CASE("1F1B bubble and point-to-point for pp 4 and 8 micro-batches") {
    GptShape model = small_model();
    model.layers = 4;
    ClusterShape cluster = small_cluster(4, 1);
    GridPlan plan = plan_grid(model, cluster, 1, 1, 4, 8);
    CHECK(plan.micro_batch_size == 1);
    // (p − 1)·(t_f + t_b) with t_f + t_b = compute / m: 3/8 of the compute.
    CHECK(plan.bubble_s == doctest::Approx(plan.compute_s * 3 / 8));
    double compute = gpt_step_flops(model, false) / 4 / (100e12 * 0.5);
    CHECK(plan.compute_s == doctest::Approx(compute));
    // 2·(m + p − 1) transfers of b·S·h·2 bytes on NVLink-like intra-node links.
    double transfer = 1.0 * 32 * 64 * 2 / 100e9 + 1e-6;
    CHECK(plan.pp_comm_s == doctest::Approx(2 * (8 + 3) * transfer));
    CHECK(plan.tp_comm_s == 0);
    CHECK(plan.dp_comm_exposed_s == 0);
    CHECK(plan.step_s == doctest::Approx(plan.compute_s + plan.bubble_s + plan.pp_comm_s));
}

TEST_CASE("interleaved stages: the bubble shrinks by the chunks, the transfers grow") {
    GptShape model = small_model();
    model.layers = 8;
    ClusterShape cluster = small_cluster(4, 1);
    PlanOptions two;
    two.chunks = 2;
    GridPlan plan = plan_grid(model, cluster, 1, 1, 4, 8, two);
    CHECK(plan.chunks == 2);
    // (p − 1)·(t_f + t_b)/v: 3/16 of the compute; 2·(m·v + p − 1) transfers.
    CHECK(plan.bubble_s == doctest::Approx(plan.compute_s * 3 / 16));
    double transfer = 1.0 * 32 * 64 * 2 / 100e9 + 1e-6;
    CHECK(plan.pp_comm_s == doctest::Approx(2 * (16 + 3) * transfer));
    // The first rank holds 2(p − 1) + (v − 1)p + 1 = 11 chunks' micro-batches of one layer:
    // S·b·h·(34 + 5·a·S/h) = 2048·44 bytes each (the one-chunk schedule: 4 of 2 layers).
    GridPlan plain = plan_grid(model, cluster, 1, 1, 4, 8);
    const double state = gpt_parameters(model) / 4 * 16;
    CHECK(plan.memory_bytes == doctest::Approx(state + 2048 * 44 * 11));
    CHECK(plain.memory_bytes == doctest::Approx(state + 2048 * 44 * 2 * 4));
    // pp 1 ignores the chunks; chunks must divide the layers, micro-batches come in multiples of
    // pp.
    CHECK(plan_grid(model, cluster, 4, 1, 1, 2, two).chunks == 1);
    PlanOptions three;
    three.chunks = 3;
    CHECK_ERROR(plan_grid(model, cluster, 1, 1, 4, 8, three), "plan_grid", "3 interleaved",
                "8 layers");
    CHECK_ERROR(plan_grid(model, cluster, 1, 1, 4, 2, two), "plan_grid", "multiples of pp");
    // plan_grids keeps to schedulable grids: with 2 chunks, pp 4 only with 4 or 8 micro-batches.
    for (const GridPlan& p : plan_grids(model, cluster, two))
        if (p.pp > 1) CHECK(p.micro_batches % p.pp == 0);
    PlanOptions none;
    none.chunks = 0;
    CHECK_ERROR(plan_grids(model, cluster, none), "plan_grids", "at least 1");
}

TEST_CASE("contention slows every device's compute") {
    GptShape model = small_model();
    ClusterShape cluster = small_cluster(2, 1);
    const GridPlan plain = plan_grid(model, cluster, 2, 1, 1, 1);
    cluster.contention = 1.25;
    const GridPlan shared = plan_grid(model, cluster, 2, 1, 1, 1);
    CHECK(shared.compute_s == doctest::Approx(plain.compute_s * 1.25));
    cluster.contention = 0.5;
    CHECK_ERROR(plan_grid(model, cluster, 2, 1, 1, 1), "plan_grid", "contention", "0.5");
}

TEST_CASE("tensor and data parallel communication") {
    GptShape model = small_model();
    ClusterShape cluster = small_cluster(2, 2);
    // Ranks tp fastest: the tp pair shares a node, the dp pair spans the two nodes.
    GridPlan plan = plan_grid(model, cluster, 2, 2, 1, 2);
    CHECK(plan.micro_batch_size == 2);
    double activation = 2.0 * 32 * 64 * 2;
    double tp_ring = ring_all_reduce_seconds(activation, 2, 100e9, 1e-6);
    CHECK(plan.tp_comm_s == doctest::Approx(4 * 2 * 2 * tp_ring));
    double backward = plan.compute_s / 2 * 2 / 3;
    double dp_ring = ring_all_reduce_seconds(108416.0 / 2 * 2, 2, 10e9, 5e-6);
    CHECK(plan.dp_comm_exposed_s == doctest::Approx(std::max(0.0, dp_ring - backward)));
    CHECK(plan.dp_comm_exposed_s > 0);
}

TEST_CASE("memory of a small case") {
    GptShape model = small_model();
    ClusterShape cluster = small_cluster(2, 1);
    // pp 2, 4 micro-batches of 2: 108416/2 parameters × 16 bytes, and per layer and micro-batch
    // S·b·h·(34 + 5·a·S/h) = 4096·44 bytes, 1 layer per stage, min(2, 4) in flight.
    GridPlan plan = plan_grid(model, cluster, 1, 1, 2, 4);
    CHECK(plan.memory_bytes == doctest::Approx(867328.0 + 4096 * 44 * 2));
    CHECK(plan.fits);
    // Recomputation keeps S·b·h·2 bytes per layer, plus one layer's activations while it reruns.
    PlanOptions recompute;
    recompute.recompute = true;
    plan = plan_grid(model, cluster, 1, 1, 2, 4, recompute);
    CHECK(plan.memory_bytes == doctest::Approx(867328.0 + 4096 * 2 * 2 + 4096 * 44));
    // ZeRO-1 over dp 2 halves the 12 optimizer bytes; one micro-batch of 4, both layers.
    PlanOptions zero1;
    zero1.zero1 = true;
    plan = plan_grid(model, cluster, 2, 1, 1, 1, zero1);
    CHECK(plan.memory_bytes == doctest::Approx(108416.0 * (2 + 2 + 6) + 8192 * 44 * 2));
    // f32: 4 + 4 + 8 bytes per parameter, activations twice as wide.
    model.precision = Precision::F32;
    plan = plan_grid(model, cluster, 1, 1, 2, 4);
    CHECK(plan.memory_bytes == doctest::Approx(867328.0 + 4096 * 44 * 2 * 2));
}

TEST_CASE("grids that do not divide are skipped") {
    GptShape model{6, 384, 6, 65, 256, 8, Precision::F32};
    ClusterShape cluster = small_cluster(8, 1);
    std::vector<GridPlan> plans = plan_grids(model, cluster);
    // tp divides 6 heads (1, 2), pp divides 6 layers (1, 2): dp 8, 4 for tp 1; 4, 2 for tp 2.
    REQUIRE(plans.size() == 4);
    for (const GridPlan& p : plans) {
        CHECK(p.dp * p.tp * p.pp == 8);
        CHECK((p.tp == 1 || p.tp == 2));
        CHECK((p.pp == 1 || p.pp == 2));
        CHECK(8 % (p.dp * p.micro_batches) == 0);
    }
    CHECK(std::is_sorted(plans.begin(), plans.end(),
                         [](const GridPlan& a, const GridPlan& b) { return a.step_s < b.step_s; }));
    PlanOptions fixed;
    fixed.micro_batches = 4; // divides the replica batch only when dp ≤ 2
    plans = plan_grids(model, cluster, fixed);
    REQUIRE(plans.size() == 1);
    CHECK(plans[0].dp == 2);
    CHECK(plans[0].micro_batch_size == 1);
}

TEST_CASE("GPT-3 on 64 H200: Megatron's t 8, p 8 fits with recomputation") {
    ClusterShape h200{8, 8, 141e9, 450e9, 3e-6, 50e9, 6e-6, 989e12, 0.5};
    PlanOptions recompute;
    recompute.recompute = true;
    std::vector<GridPlan> plans = plan_grids(gpt3_175b(), h200, recompute);
    auto megatron = std::find_if(plans.begin(), plans.end(),
                                 [](const GridPlan& p) { return p.tp == 8 && p.pp == 8; });
    REQUIRE(megatron != plans.end());
    CHECK(megatron->fits);
    // Utilization is counted against the 72·… FLOPs: at most 0.5 · 3/4.
    for (const GridPlan& p : plans)
        CHECK(p.model_flops_utilization < 0.375);
    CHECK(
        std::is_partitioned(plans.begin(), plans.end(), [](const GridPlan& p) { return p.fits; }));
}

TEST_CASE("too little memory: nothing fits") {
    ClusterShape cluster = small_cluster(2, 1);
    cluster.memory_bytes = 1e3;
    std::vector<GridPlan> plans = plan_grids(small_model(), cluster);
    REQUIRE(!plans.empty());
    for (const GridPlan& p : plans)
        CHECK_FALSE(p.fits);
    // Without a fitting count, each grid shows its smallest memory: the most micro-batches.
    for (const GridPlan& p : plans)
        CHECK(p.micro_batch_size == 1);
}

TEST_CASE("markdown table") {
    std::string table = plans_markdown(plan_grids(small_model(), small_cluster(2, 1)));
    CHECK(table.find("| dp | tp | pp | micro-batches × size | memory GB | fits |") == 0);
    // Header, rule, and 3 grids: tp 1 × pp 1, tp 1 × pp 2, tp 2 × pp 1.
    CHECK(std::count(table.begin(), table.end(), '\n') == 2 + 3);
}

TEST_CASE("errors name the function and the values") {
    ClusterShape cluster = small_cluster(2, 1);
    GptShape model = small_model();
    model.layers = 0;
    CHECK_ERROR(plan_grids(model, cluster), "plan_grids", "layers", "positive", "0");
    CHECK_ERROR(gpt_parameters(model), "gpt_parameters", "layers");
    model = small_model();
    model.heads = 3;
    CHECK_ERROR(plan_grids(model, cluster), "plan_grids", "width 64", "heads 3");
    CHECK_ERROR(plan_grid(small_model(), cluster, 1, 2, 2, 1), "plan_grid", "dp 1 × tp 2 × pp 2",
                "2 devices");
    CHECK_ERROR(plan_grid(small_model(), small_cluster(3, 1), 1, 3, 1, 1), "plan_grid", "tp 3",
                "4 heads");
    CHECK_ERROR(plan_grid(small_model(), small_cluster(3, 1), 3, 1, 1, 1), "plan_grid", "dp 3",
                "global batch of 8");
    CHECK_ERROR(plan_grid(small_model(), cluster, 2, 1, 1, 3), "plan_grid", "3 micro-batches",
                "4 sequences");
    ClusterShape bad = cluster;
    bad.utilization = 0;
    CHECK_ERROR(plan_grids(small_model(), bad), "plan_grids", "utilization", "0");
    bad = cluster;
    bad.inter_node_bandwidth = -1;
    CHECK_ERROR(plan_grids(small_model(), bad), "plan_grids", "inter-node bandwidth", "-1");
    // One layer on 2 nodes of 2: pp is 1 and tp at most 2, so dp is 4 or 2, neither dividing 3.
    model = small_model();
    model.layers = 1;
    model.global_batch = 3;
    CHECK_ERROR(plan_grids(model, small_cluster(2, 2)), "plan_grids", "no grid", "4 devices",
                "global batch of 3");
    CHECK_ERROR(ring_all_reduce_seconds(1, 0, 1, 0), "ring_all_reduce_seconds", "ranks 0");
}
