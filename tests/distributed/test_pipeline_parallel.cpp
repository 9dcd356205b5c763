// Pipeline parallelism over in-process ranks (threads): the GPT cut into stages (pp 2, pp 4, and
// composed as dp 2 x pp 2 and tp 2 x pp 2) takes one process's 20 AdamW steps with clipping,
// 4 micro-batches: losses within 1e-5, every parameter within 1e-5 of its scale, the tied token
// embedding equal bit for bit on the first and last stage, replicas equal bit for bit. The
// point-to-point messages and the stage split's errors.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "core/expect_error.hpp"
#include "distributed/gpt_checkpoint.hpp"
#include "distributed/gpt_pipeline.hpp"
#include "distributed/in_process.hpp"
#include "distributed/pipeline_parallel.hpp"
#include "distributed/process_grid.hpp"
#include "gpt_testing.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"

using namespace hedra;
using namespace hedra::distributed;
using namespace hedra::distributed::test;

namespace {

constexpr int kBatch = 8, kSteps = 20;

nn::TrainerOptions options() {
    nn::TrainerOptions o;
    o.compute.backend = "openmp";
    o.compute.num_threads = 1;
    o.clip_norm = 0.5;
    return o;
}

std::shared_ptr<nn::AdamW> adamw() {
    return std::make_shared<nn::AdamW>(nn::AdamWOptions{.lr = 3e-3});
}

struct Rank {
    std::vector<double> losses;
    std::vector<HostArray> params;    // this stage's (shards)
    std::vector<std::size_t> indices; // into gpt_parameters(c, tp)
    int dp = 0, tp = 0, pp = 0;
};

// Rank `grid`'s stage of the tiny GPT (`chunks` interleaved stages per rank), its parameters
// from `whole`; `indices` receives their places in gpt_parameters(c, tp).
std::unique_ptr<PipelineTrainer> pipeline_rank(const ProcessGrid& grid, const nn::GptConfig& c,
                                               const std::vector<HostArray>& whole,
                                               int micro_batches, int chunks,
                                               std::vector<std::size_t>& indices) {
    const GridShape shape = grid.shape();
    const int s = grid.pp_rank(), p = shape.pp;
    std::vector<HostArray> shards = nn::gpt_shard(c, whole, shape.tp, grid.tp_rank());
    std::shared_ptr<CollectiveGroup> tp = shape.tp > 1 ? grid.tp_group() : nullptr;
    const GptPipelineRank cut = gpt_pipeline_rank(c, s, p, chunks, tp);
    indices = cut.params;
    std::vector<HostArray> mine;
    for (std::size_t i : indices)
        mine.push_back(shards[i]);
    PipelineOptions po;
    po.micro_batches = micro_batches;
    po.chunks = chunks;
    po.chunk_params = cut.chunk_params;
    po.activation = {kBatch / shape.dp / micro_batches, 8, c.embd};
    const bool ends = s == 0 || s == p - 1;
    std::shared_ptr<Communicator> ends_group = grid.pp()->split(ends ? 0 : 1, s);
    if (p > 1 && ends) { // the first chunk's wte on rank 0, the last chunk's on p - 1
        po.tied = {cut.tied};
        po.tied_group = ends_group;
    }
    if (shape.dp > 1) po.dp = grid.dp();
    if (tp) {
        po.tp = tp;
        const auto spec = nn::gpt_parameters(c, shape.tp);
        for (std::size_t i : indices)
            po.tp_sharded.push_back(spec[i].split_axis >= 0);
    }
    return std::make_unique<PipelineTrainer>(
        grid.pp(), cut.stages,
        std::vector<nn::InputSpec>{{{kBatch, 8}, DType::I64, "tokens"},
                                   {{kBatch, 8}, DType::I64, "targets"}},
        mine, adamw(), options(), po);
}

std::vector<Rank> run_grid(const nn::GptConfig& c, GridShape shape, int micro_batches, int chunks) {
    const std::vector<HostArray> whole = nn::gpt_init(c, 3);
    std::vector<Rank> ranks(static_cast<std::size_t>(shape.size()));
    on_grid(shape, [&](const ProcessGrid& grid, int r) {
        Rank& out = ranks[static_cast<std::size_t>(r)];
        std::unique_ptr<PipelineTrainer> trainer =
            pipeline_rank(grid, c, whole, micro_batches, chunks, out.indices);
        for (int k = 0; k < kSteps; ++k)
            out.losses.push_back(trainer->step(tiny_batch(kBatch, 60 + k), 3e-3));
        out.params = trainer->local().params();
        out.dp = grid.dp_rank(), out.tp = grid.tp_rank(), out.pp = grid.pp_rank();
    });
    return ranks;
}

// `same_order`: the parameters are compared with one process that sums the same micro-batches'
// gradients (a pipeline of one stage) instead of the whole batch's: deeper models drift from
// the fused step by more than 1e-5 of scale in 20 AdamW steps from that reordering alone.
void check_against_one_process(const nn::GptConfig& c, GridShape shape, int micro_batches,
                               int chunks = 1, bool same_order = false) {
    INFO(shape.to_string() << ", " << c.layers << " layers, " << micro_batches << " micro-batches, "
                           << chunks << " chunks per rank");
    nn::TrainerOptions o = options();
    nn::Trainer one([c](const std::vector<Array>& p,
                        const std::vector<Array>& in) { return nn::gpt_loss(c, p, in[0], in[1]); },
                    {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
                    nn::gpt_init(c, 3), adamw(), o);
    std::vector<double> want;
    for (int k = 0; k < kSteps; ++k)
        want.push_back(one.step(tiny_batch(kBatch, 60 + k), 3e-3));
    std::vector<Rank> ranks = run_grid(c, shape, micro_batches, chunks);
    const std::vector<nn::GptParameter> names = nn::gpt_parameters(c);
    // Every rank's losses; the whole parameters gathered from dp replica 0.
    std::vector<std::vector<HostArray>> shards(static_cast<std::size_t>(shape.tp),
                                               std::vector<HostArray>(names.size()));
    for (const Rank& r : ranks) {
        for (int k = 0; k < kSteps; ++k)
            CHECK(r.losses[std::size_t(k)] == doctest::Approx(want[std::size_t(k)]).epsilon(1e-5));
        for (std::size_t j = 0; j < r.indices.size(); ++j) {
            HostArray& slot = shards[std::size_t(r.tp)][r.indices[j]];
            if (r.dp == 0 && !slot.address())
                slot = r.params[j];
            else // the tied copy, a replica's: equal bit for bit
                CHECK_MESSAGE(slot.to_doubles() == r.params[j].to_doubles(),
                              names[r.indices[j]].name);
        }
    }
    const std::vector<HostArray> gathered = nn::gpt_unshard(c, shards);
    const std::vector<HostArray> reference =
        same_order ? run_grid(c, {}, micro_batches, 1)[0].params : one.params();
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::vector<double> got = gathered[i].to_doubles();
        const std::vector<double> ref = reference[i].to_doubles();
        const bool key_bias = names[i].name.ends_with("attn.c_attn.bias");
        double scale = 0.0, worst = 0.0;
        for (std::size_t k = 0; k < got.size(); ++k) {
            scale = std::max(scale, std::fabs(ref[k]));
            if (!(key_bias && k >= std::size_t(c.embd) && k < 2 * std::size_t(c.embd)))
                worst = std::max(worst, std::fabs(got[k] - ref[k]));
        }
        CHECK_MESSAGE(worst <= 1e-5 * scale,
                      names[i].name << ": off by " << worst << " at scale " << scale);
    }
}

} // namespace

TEST_CASE("pipeline parallel: pp 2, pp 4, dp 2 x pp 2 and tp 2 x pp 2 take one process's steps") {
    check_against_one_process(tiny_gpt(2), {.pp = 2}, 4);
    check_against_one_process(tiny_gpt(4), {.pp = 4}, 4);
    check_against_one_process(tiny_gpt(2), {.dp = 2, .pp = 2}, 2);
    check_against_one_process(tiny_gpt(2), {.tp = 2, .pp = 2}, 4);
}

// Interleaved stages: each rank runs `chunks` stages of p · chunks in Megatron-LM's order.
TEST_CASE("pipeline parallel: interleaved stages take one process's steps") {
    check_against_one_process(tiny_gpt(4), {.pp = 2}, 4, 2);
    check_against_one_process(tiny_gpt(6), {.pp = 2}, 4, 3, true);
    check_against_one_process(tiny_gpt(4), {.pp = 2}, 2, 2); // as many micro-batches as ranks
    check_against_one_process(tiny_gpt(4), {.pp = 2}, 8, 2);
    check_against_one_process(tiny_gpt(8), {.pp = 4}, 4, 2, true);
    check_against_one_process(tiny_gpt(4), {.dp = 2, .pp = 2}, 2, 2);
    check_against_one_process(tiny_gpt(4), {.tp = 2, .pp = 2}, 4, 2);
}

// Evaluation through the pipeline: the forward programs alone give one process's loss, before
// training and after 3 steps, on every rank; a step after it is unchanged.
TEST_CASE("pipeline parallel: evaluate") {
    const nn::GptConfig c = tiny_gpt(4);
    nn::Trainer one([c](const std::vector<Array>& p,
                        const std::vector<Array>& in) { return nn::gpt_loss(c, p, in[0], in[1]); },
                    {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
                    nn::gpt_init(c, 3), adamw(), options());
    const std::vector<HostArray> held_out = tiny_batch(kBatch, 7);
    std::vector<double> want{one.evaluate(held_out).loss.flat(0)};
    for (int k = 0; k < 3; ++k)
        one.step(tiny_batch(kBatch, 60 + k), 3e-3);
    want.push_back(one.evaluate(held_out).loss.flat(0));
    want.push_back(one.step(tiny_batch(kBatch, 63), 3e-3));
    for (auto [shape, chunks] : {std::pair{GridShape{.pp = 2}, 1}, std::pair{GridShape{.pp = 2}, 2},
                                 std::pair{GridShape{.dp = 2, .pp = 2}, 2}}) {
        INFO(shape.to_string() << ", " << chunks << " chunks");
        std::vector<std::vector<double>> got(static_cast<std::size_t>(shape.size()));
        on_grid(shape, [&, shape, chunks](const ProcessGrid& grid, int r) {
            std::vector<std::size_t> indices;
            auto t =
                pipeline_rank(grid, c, nn::gpt_init(c, 3), shape.dp == 2 ? 2 : 4, chunks, indices);
            auto& out = got[static_cast<std::size_t>(r)];
            out.push_back(t->evaluate(held_out));
            for (int k = 0; k < 3; ++k)
                t->step(tiny_batch(kBatch, 60 + k), 3e-3);
            out.push_back(t->evaluate(held_out));
            out.push_back(t->step(tiny_batch(kBatch, 63), 3e-3));
        });
        for (const auto& losses : got)
            for (std::size_t k = 0; k < want.size(); ++k)
                CHECK(losses[k] == doctest::Approx(want[k]).epsilon(1e-5));
    }
}

TEST_CASE("pipeline parallel: interleaved stages' parameters and refusals") {
    const nn::GptConfig c = tiny_gpt(4);
    // Rank 0 of 2 with 2 chunks: stages 0 and 2 of 4 (wte, wpe, block 0; block 2).
    const std::vector<std::size_t> first = nn::gpt_pipeline_parameters(c, 0, 2, 2);
    CHECK(first.size() == 2 + 2 * 12);
    CHECK(first[2] == nn::gpt_stage_parameters(c, 0, 4)[2]);
    CHECK(first[2 + 12] == nn::gpt_stage_parameters(c, 2, 4)[0]);
    // Rank 1: stages 1 and 3 (block 1; wte's copy, block 3, ln_f).
    const std::vector<std::size_t> second = nn::gpt_pipeline_parameters(c, 1, 2, 2);
    CHECK(second.size() == 12 + 1 + 12 + 2);
    CHECK(second[12] == 0);
    CHECK(nn::gpt_pipeline_parameters(c, 1, 2) == nn::gpt_stage_parameters(c, 1, 2));
    CHECK_ERROR(nn::gpt_pipeline_parameters(c, 2, 2, 2), "gpt_pipeline_parameters", "rank 2");
    CHECK_ERROR(nn::gpt_pipeline_parameters(c, 0, 2, 3), "gpt_stage_parameters", "divide");
    // A whole checkpoint cut for an interleaved rank holds its stages' parameters and state.
    const std::vector<nn::GptParameter> names = nn::gpt_parameters(c);
    nn::TrainerCheckpoint whole;
    for (std::size_t i = 0; i < names.size(); ++i) {
        whole.names.push_back(names[i].name);
        whole.arrays.push_back(nn::gpt_init(c, 1)[i]);
        whole.names.push_back("optimizer." + names[i].name + ".exp_avg");
        whole.arrays.push_back(nn::gpt_init(c, 1)[i]);
    }
    const nn::TrainerCheckpoint part = shard_gpt_checkpoint(c, whole, 1, 0, 2, 1, 2);
    CHECK(part.names.size() == 2 * second.size());

    auto group = in_process_group(2);
    const StageFunction stage = [](auto&, auto&, auto&) { return Array(); };
    using Functions = std::vector<StageFunction>;
    const std::vector<HostArray> params = nn::gpt_init(c, 1);
    PipelineOptions po{.micro_batches = 4, .chunks = 2, .activation = {2, 8, c.embd}};
    CHECK_ERROR(PipelineTrainer(group[0], Functions{stage}, {}, params, adamw(), options(), po),
                "PipelineTrainer", "1 stage functions", "chunks = 2");
    CHECK_ERROR(
        PipelineTrainer(group[0], Functions{stage, stage}, {}, params, adamw(), options(), po),
        "PipelineTrainer", "chunk_params", "2 chunks");
    po.chunk_params = {3, params.size() - 3};
    po.micro_batches = 3;
    CHECK_ERROR(
        PipelineTrainer(group[0], Functions{stage, stage}, {}, params, adamw(), options(), po),
        "PipelineTrainer", "multiple of the 2 ranks", "got 3");
    auto alone = in_process_group(1);
    po.micro_batches = 4;
    CHECK_ERROR(
        PipelineTrainer(alone[0], Functions{stage, stage}, {}, params, adamw(), options(), po),
        "PipelineTrainer", "at least 2 ranks");
}

TEST_CASE("pipeline parallel: messages between ranks, stage parameters and errors") {
    auto group = in_process_group(2);
    std::thread other([&] {
        HostArray a = HostArray::from(std::vector<float>{1, 2, 3}, {3});
        group[1]->start_send(a.raw(), a.bytes(), 0, 5)->wait();
        HostArray b = HostArray::from(std::vector<float>{4, 5, 6}, {3});
        group[1]->start_send(b.raw(), b.bytes(), 0, 5)->wait();
    });
    HostArray got({3}, DType::F32);
    group[0]->receive(got.raw_mutable(), got.bytes(), 1, 5);
    CHECK(got.flat(2) == 3.0);
    group[0]->receive(got.raw_mutable(), got.bytes(), 1, 5); // in the order sent
    CHECK(got.flat(0) == 4.0);
    other.join();
    const nn::GptConfig c = tiny_gpt(4);
    CHECK(nn::gpt_stage_parameters(c, 0, 2).size() == 2 + 2 * 12);
    CHECK(nn::gpt_stage_parameters(c, 1, 2).front() == 0); // the head's copy of wte
    CHECK(nn::gpt_stage_parameters(c, 1, 2).size() == 1 + 2 * 12 + 2);
    CHECK(nn::gpt_stage_parameters(c, 0, 1).size() == nn::gpt_parameters(c).size());
    CHECK_ERROR(nn::gpt_stage_parameters(c, 0, 3), "gpt_stage_parameters", "3", "divide");
    CHECK_ERROR(PipelineTrainer(group[0], nullptr, {}, nn::gpt_init(c, 1), adamw(), options(), {}),
                "PipelineTrainer", "stage function");
    CHECK_ERROR(PipelineTrainer(group[0], [](auto&, auto&, auto&) { return Array(); }, {},
                                nn::gpt_init(c, 1), adamw(), options(), {}),
                "PipelineTrainer", "2 stages", "PipelineOptions::activation");
    // One stage alone: a batch that does not cut into the micro-batches is refused.
    auto alone = in_process_group(1);
    PipelineTrainer one_stage(
        alone[0],
        [c](const std::vector<Array>& p, const Array& received, const std::vector<Array>& in) {
            return nn::gpt_stage(c, 0, 1, p, received, in[0], in[1]);
        },
        {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
        nn::gpt_init(c, 1), adamw(), options(), {.micro_batches = 3});
    CHECK_ERROR(one_stage.step(tiny_batch(kBatch, 1), 1e-3), "PipelineTrainer::step", "8 rows",
                "3 micro-batches");
    // Batches must have the specs' shapes and dtypes: the programs are compiled for them.
    CHECK_ERROR(one_stage.evaluate(tiny_batch(4, 1)), "PipelineTrainer::evaluate", "tokens",
                "InputSpec");
    std::vector<HostArray> as_f32 = tiny_batch(kBatch, 1);
    as_f32[1] = HostArray(as_f32[1].sizes(), DType::F32);
    CHECK_ERROR(one_stage.step(as_f32, 1e-3), "PipelineTrainer::step", "targets", "f32", "i64");
    CHECK(std::isfinite(
        PipelineTrainer(
            alone[0],
            [c](const std::vector<Array>& p, const Array& r, const std::vector<Array>& in) {
                return nn::gpt_stage(c, 0, 1, p, r, in[0], in[1]);
            },
            {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
            nn::gpt_init(c, 1), adamw(), options(), {.micro_batches = 2})
            .step(tiny_batch(kBatch, 1), 1e-3)));
}

// A checkpoint gathered from one grid and restored on another: 10 steps on tp 2, gathered,
// resumed on pp 2 for 10 more, gathered again and resumed alone: the losses are one process's 20
// steps (1e-5) and the parameters and AdamW state its (1e-5 of their scale).
TEST_CASE("checkpoints: a tp 2 run resumes on pp 2, and that one alone") {
    const nn::GptConfig c = tiny_gpt(2);
    const std::vector<nn::GptParameter> names = nn::gpt_parameters(c);
    auto named = [&](const std::vector<std::size_t>& indices) {
        nn::TrainerOptions o = options();
        for (std::size_t i : indices)
            o.param_names.push_back(names[i].name);
        return o;
    };
    std::vector<std::size_t> all(names.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        all[i] = i;
    auto whole_trainer = [&] {
        return nn::Trainer(
            [c](const std::vector<Array>& p, const std::vector<Array>& in) {
                return nn::gpt_loss(c, p, in[0], in[1]);
            },
            {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
            nn::gpt_init(c, 3), adamw(), named(all));
    };
    nn::Trainer one = whole_trainer();
    std::vector<double> want;
    for (int k = 0; k < 20; ++k)
        want.push_back(one.step(tiny_batch(kBatch, 60 + k), 3e-3));

    // 10 steps on tp 2.
    nn::TrainerCheckpoint first;
    {
        on_grid({.tp = 2}, [&](const ProcessGrid& grid, int r) {
            nn::TrainerOptions o = named(all);
            o.shards.group = grid.tp_group();
            for (const auto& p : nn::gpt_parameters(c, 2))
                o.shards.sharded.push_back(p.split_axis >= 0);
            auto tp = grid.tp_group();
            nn::Trainer t(
                [c, tp](const std::vector<Array>& p, const std::vector<Array>& in) {
                    return nn::gpt_loss(c, p, in[0], in[1], tp);
                },
                {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}},
                nn::gpt_shard(c, nn::gpt_init(c, 3), 2, grid.tp_rank()), adamw(), o);
            for (int k = 0; k < 10; ++k)
                CHECK(t.step(tiny_batch(kBatch, 60 + k), 3e-3) ==
                      doctest::Approx(want[std::size_t(k)]).epsilon(1e-5));
            nn::TrainerCheckpoint g = gather_gpt_checkpoint(c, grid, t.checkpoint());
            if (r == 0) first = g;
        });
    }
    // Parameters, exp_avg, exp_avg_sq and the two bias corrections (beta1_power, beta2_power).
    REQUIRE(first.names.size() == 3 * names.size() + 2);
    // 10 more on pp 2, from the gathered checkpoint.
    nn::TrainerCheckpoint second;
    {
        on_grid({.pp = 2}, [&](const ProcessGrid& grid, int r) {
            const int s = grid.pp_rank();
            const std::vector<std::size_t> mine = nn::gpt_stage_parameters(c, s, 2);
            const std::vector<HostArray> init = nn::gpt_init(c, 99); // overwritten below
            std::vector<HostArray> params;
            for (std::size_t i : mine)
                params.push_back(init[i]);
            PipelineOptions po;
            po.micro_batches = 4;
            po.activation = {kBatch / 4, 8, c.embd};
            po.tied = {0};
            po.tied_group = grid.pp();
            PipelineTrainer t(
                grid.pp(),
                [c, s](const std::vector<Array>& p, const Array& received,
                       const std::vector<Array>& in) {
                    return nn::gpt_stage(c, s, 2, p, received, in[0], in[1]);
                },
                {{{kBatch, 8}, DType::I64, "tokens"}, {{kBatch, 8}, DType::I64, "targets"}}, params,
                adamw(), named(mine), po);
            const nn::TrainerCheckpoint part = shard_gpt_checkpoint(c, first, 1, 0, 2, s);
            t.local().restore(part.names, part.arrays, part.metadata);
            for (int k = 10; k < 20; ++k)
                CHECK(t.step(tiny_batch(kBatch, 60 + k), 3e-3) ==
                      doctest::Approx(want[std::size_t(k)]).epsilon(1e-5));
            nn::TrainerCheckpoint g = gather_gpt_checkpoint(c, grid, t.local().checkpoint());
            if (r == 0) second = g;
        });
    }
    // Alone again: the gathered parameters and state are one process's after 20 steps.
    nn::Trainer resumed = whole_trainer();
    resumed.restore(second.names, second.arrays, second.metadata);
    CHECK(resumed.step_count() == 20);
    const nn::TrainerCheckpoint ref = one.checkpoint();
    REQUIRE(ref.names.size() == second.names.size());
    const nn::TrainerCheckpoint got = resumed.checkpoint();
    for (std::size_t i = 0; i < ref.names.size(); ++i) {
        CHECK(got.names[i] == ref.names[i]);
        const std::vector<double> a = got.arrays[i].to_doubles(), b = ref.arrays[i].to_doubles();
        double scale = 0, worst = 0;
        const bool key_bias = ref.names[i].find("attn.c_attn.bias") != std::string::npos;
        for (std::size_t k = 0; k < a.size(); ++k) {
            scale = std::max(scale, std::fabs(b[k]));
            if (!(key_bias && k >= std::size_t(c.embd) && k < 2 * std::size_t(c.embd)))
                worst = std::max(worst, std::fabs(a[k] - b[k]));
        }
        CHECK_MESSAGE(worst <= 1e-5 * scale + 1e-12,
                      ref.names[i] << ": off by " << worst << " at scale " << scale);
    }
}
