// GPT training steps on a process grid. Run under mpirun: every rank takes its part of
// `--grid` (dp x tp x pp; pp stages run 1F1B over --micro-batches) of W7's or W8's GPT on
// synthetic tokens, AdamW with clipping; rank 0 prints the median step, the tokens per second
// and, with pp, where a stage's step went (its programs, waiting on its neighbours, the
// reductions and the update). Alone (or -np 1 without --grid) it runs the plain fused step of
// nn::Trainer, the baseline. bench/model_parallel.sh runs them side by side.
// --chunks V interleaves V stages per pipeline rank (PipelineOptions::chunks).
//   mpirun -np 2 bench/parallel_gpt --grid tp2 [--config w7|w8] [--steps N] [--micro-batches M]
//                                   [--chunks V]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "distributed/data_parallel.hpp"
#include "distributed/gpt_pipeline.hpp"
#include "distributed/gradient_flights.hpp"
#include "distributed/init.hpp"
#include "distributed/pipeline_parallel.hpp"
#include "distributed/process_grid.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"

using namespace hedra;
using namespace hedra::distributed;

namespace {

std::vector<HostArray> synthetic_batch(std::int64_t batch, std::int64_t t, std::int64_t vocab,
                                       unsigned seed) {
    HostArray x({batch, t}, DType::I64), y({batch, t}, DType::I64);
    std::uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 3;
    for (std::int64_t i = 0; i < x.size(); ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x.set_flat(i, double(s % std::uint64_t(vocab)));
        y.set_flat(i, double((s >> 17) % std::uint64_t(vocab)));
    }
    return {x, y};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    std::string config = "w7", grid_text;
    int steps = 20, micro = 4, chunks = 1;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--config" && i + 1 < argc)
            config = argv[++i];
        else if (a == "--grid" && i + 1 < argc)
            grid_text = argv[++i];
        else if (a == "--steps" && i + 1 < argc)
            steps = std::atoi(argv[++i]);
        else if (a == "--micro-batches" && i + 1 < argc)
            micro = std::atoi(argv[++i]);
        else if (a == "--chunks" && i + 1 < argc)
            chunks = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "parallel_gpt: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    try {
        nn::GptConfig c{.vocab = 65, .block = 64, .layers = 4, .heads = 4, .embd = 128};
        std::int64_t batch = 12;
        if (config == "w8")
            c = {.vocab = 65, .block = 256, .layers = 6, .heads = 6, .embd = 384}, batch = 8;
        if (quick) c.layers = 2, c.block = 16, steps = 4;
        std::shared_ptr<Communicator> world = init();
        const GridShape shape =
            grid_text.empty() ? GridShape{.dp = world->size()} : parse_grid(grid_text);
        ProcessGrid grid(world, shape);
        if (shape.pp == 1) micro = 1, chunks = 1;
        nn::TrainerOptions o;
        o.compute.num_threads = 1;
        o.clip_norm = 1.0;
        auto adamw = std::make_shared<nn::AdamW>(nn::AdamWOptions{.lr = 1e-3});
        const std::vector<HostArray> whole = nn::gpt_init(c, 1);
        const std::vector<HostArray> shards = nn::gpt_shard(c, whole, shape.tp, grid.tp_rank());
        const auto spec = nn::gpt_parameters(c, shape.tp);
        std::shared_ptr<CollectiveGroup> tp = shape.tp > 1 ? grid.tp_group() : nullptr;
        std::unique_ptr<nn::Trainer> plain;
        std::unique_ptr<DataParallelTrainer> data;
        std::unique_ptr<PipelineTrainer> pipe;
        if (shape.pp == 1) {
            if (tp) {
                o.shards.group = tp;
                for (const auto& p : spec)
                    o.shards.sharded.push_back(p.split_axis >= 0);
            }
            const std::int64_t b = shape.dp > 1 ? nn::kAnyExtent : batch;
            plain = std::make_unique<nn::Trainer>(
                [c, tp](const std::vector<Array>& p, const std::vector<Array>& in) {
                    return nn::gpt_loss(c, p, in[0], in[1], tp);
                },
                std::vector<nn::InputSpec>{{{b, c.block}, DType::I64, "tokens"},
                                           {{b, c.block}, DType::I64, "targets"}},
                shards, adamw, o);
            if (shape.dp > 1)
                data = std::make_unique<DataParallelTrainer>(grid.dp(), std::move(*plain));
        } else {
            const int s = grid.pp_rank(), p = shape.pp;
            PipelineOptions po;
            po.micro_batches = micro;
            po.chunks = chunks;
            po.activation = {batch / shape.dp / micro, c.block, c.embd};
            const GptPipelineRank cut = gpt_pipeline_rank(c, s, p, chunks, tp);
            po.chunk_params = cut.chunk_params;
            std::vector<HostArray> mine;
            for (std::size_t i : cut.params) {
                mine.push_back(shards[i]);
                po.tp_sharded.push_back(spec[i].split_axis >= 0);
            }
            // The token embedding: the first chunk's on rank 0, the last chunk's on p - 1.
            const bool ends = s == 0 || s == p - 1;
            auto ends_group = grid.pp()->split(ends ? 0 : 1, s);
            if (ends) po.tied = {cut.tied}, po.tied_group = ends_group;
            if (shape.dp > 1) po.dp = grid.dp();
            po.tp = tp;
            if (!tp) po.tp_sharded.clear();
            pipe = std::make_unique<PipelineTrainer>(
                grid.pp(), cut.stages,
                std::vector<nn::InputSpec>{{{batch, c.block}, DType::I64, "tokens"},
                                           {{batch, c.block}, DType::I64, "targets"}},
                mine, adamw, o, po);
        }
        // The group's all-reduce latency and bandwidth, for hedra-plan's --intra-latency-us and
        // --intra-gbps.
        const CollectiveCost cost = measure_cost(*world);
        std::vector<double> ms, compute, waiting, reduction;
        double loss = 0;
        for (int k = 0; k < steps + 2; ++k) { // the first two compile and warm up
            const std::vector<HostArray> b = synthetic_batch(batch, c.block, c.vocab, 5 + k);
            world->barrier();
            const auto t = std::chrono::steady_clock::now();
            loss = pipe ? pipe->step(b, 1e-3) : data ? data->step(b, 1e-3) : plain->step(b, 1e-3);
            const double took =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t)
                    .count();
            if (k < 2) continue;
            ms.push_back(took);
            if (pipe) {
                compute.push_back(1e3 * pipe->last_timing().compute);
                waiting.push_back(1e3 * pipe->last_timing().waiting);
                reduction.push_back(1e3 * pipe->last_timing().reduction);
            }
        }
        if (world->rank() == 0) {
            std::printf("parallel_gpt: config=%s grid=%s micro_batches=%d chunks=%d steps=%d "
                        "loss=%.6f step_ms median=%.2f tokens_per_s=%.0f",
                        config.c_str(), shape.to_string().c_str(), micro, chunks, steps, loss,
                        median(ms), double(batch * c.block) / (median(ms) * 1e-3));
            std::printf("\n");
            if (world->size() > 1)
                std::printf("  all-reduce over %d ranks: latency %.1f us, %.2f GB/s "
                            "(distributed::measure_cost)\n",
                            world->size(), 1e6 * cost.latency_seconds, cost.bytes_per_second / 1e9);
        }
        if (pipe) { // every stage's time, in stage order
            for (int s = 0; s < shape.pp; ++s) {
                world->barrier();
                if (grid.pp_rank() == s && grid.dp_rank() == 0 && grid.tp_rank() == 0)
                    std::printf("  stage %d: programs %.2f ms, waiting %.2f ms, reductions and "
                                "update %.2f ms (medians)\n",
                                s, median(compute), median(waiting), median(reduction));
                std::fflush(stdout);
            }
        }
        return 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "parallel_gpt: %s\n", e.what());
        return 1;
    }
}
