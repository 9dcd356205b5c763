// A program outside the hedra tree that trains data-parallel from the install tree alone: a
// two-layer regression model, 12 SGD steps over the MPI world (run under mpirun -np 2). Every
// rank starts from different parameters, so equal parameters at the end show rank 0's broadcast
// and the summed gradients at work. Then a small GPT split over both ranks (a tp 2 grid) takes
// 5 AdamW steps whose losses must equal one process's (1e-5), and a 4-layer one cut into a
// pipeline of two ranks with two interleaved stages each (pp 2, 2 chunks, 2 micro-batches) the
// same, its evaluation too. Exits non-zero on every rank if any rank's check fails.
#include <hedra/distributed/data_parallel.hpp>
#include <hedra/distributed/gpt_pipeline.hpp>
#include <hedra/distributed/init.hpp>
#include <hedra/distributed/pipeline_parallel.hpp>
#include <hedra/distributed/process_grid.hpp>
#include <hedra/hedra.hpp>
#include <hedra/nn/gpt.hpp>
#include <hedra/nn/layers.hpp>
#include <hedra/nn/trainer.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

using namespace hedra;

namespace {

constexpr int kIn = 4, kHidden = 8, kBatch = 16, kSteps = 12;

// Deterministic values in [-scale, scale] (xorshift), the same on every rank for the same seed.
HostArray values(std::vector<std::int64_t> sizes, unsigned seed, double scale) {
    HostArray a(std::move(sizes), DType::F32);
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (std::int64_t i = 0; i < a.size(); ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a.set_flat(i, scale * (static_cast<double>(x % 2001) / 1000.0 - 1.0));
    }
    return a;
}

// The global batch of a step: every rank passes the whole batch and trains on its rows.
std::vector<HostArray> batch(unsigned seed) {
    HostArray x = values({kBatch, kIn}, seed, 1.0);
    HostArray y({kBatch, 1}, DType::F32);
    for (int i = 0; i < kBatch; ++i)
        y.set_flat(i, x.flat(i * kIn) - 0.5 * x.flat(i * kIn + 1) + 0.25 * x.flat(i * kIn + 3));
    return {x, y};
}

nn::Trainer make_trainer(unsigned seed) {
    std::vector<HostArray> params{values({kHidden, kIn}, seed, 0.5),
                                  values({kHidden}, seed + 1, 0.1),
                                  values({1, kHidden}, seed + 2, 0.5), values({1}, seed + 3, 0.1)};
    nn::TrainerOptions o;
    o.compute.num_threads = 1; // two ranks share the machine's cores
    auto loss = [](const std::vector<Array>& p, const std::vector<Array>& in) {
        Array prediction = nn::linear(tanh(nn::linear(in[0], p[0], p[1])), p[2], p[3]);
        Array error = prediction - in[1];
        return mean(error * error);
    };
    return nn::Trainer(
        nn::LossFunction(loss),
        {{{nn::kAnyExtent, kIn}, DType::F32, "x"}, {{nn::kAnyExtent, 1}, DType::F32, "y"}},
        std::move(params), std::make_shared<nn::Sgd>(nn::SgdOptions{0.1}), o);
}

std::vector<float> flat(const std::vector<HostArray>& arrays) {
    std::vector<float> out;
    for (const HostArray& a : arrays)
        for (std::int64_t i = 0; i < a.size(); ++i)
            out.push_back(static_cast<float>(a.flat(i)));
    return out;
}

} // namespace

int main() {
    std::shared_ptr<distributed::Communicator> comm = distributed::init();
    const int rank = comm->rank(), ranks = comm->size();
    int failures = 0;
    if (ranks != 2 || comm->name() != "mpi") {
        std::printf("rank %d: %d ranks over %s; run under mpirun -np 2\n", rank, ranks,
                    comm->name().c_str());
        ++failures;
    }
    distributed::DataParallelTrainer trainer(comm, make_trainer(rank == 0 ? 1 : 77));
    std::vector<double> losses;
    for (int s = 0; s < kSteps; ++s) {
        losses.push_back(trainer.step(batch(100 + s), 0.1));
        if (rank == 0) std::printf("step %2d: loss %.6f\n", s, losses.back());
    }
    if (!(losses.back() < losses.front())) {
        std::printf("rank %d: the loss did not fall (%.6f to %.6f)\n", rank, losses.front(),
                    losses.back());
        ++failures;
    }
    // Every rank's parameters side by side on every rank: they must be equal bit for bit.
    const std::vector<float> mine = flat(trainer.local().params());
    HostArray all =
        comm->all_gather(HostArray::from(mine, {static_cast<std::int64_t>(mine.size())}));
    const auto* gathered = static_cast<const float*>(all.raw());
    for (int r = 1; r < ranks; ++r)
        for (std::size_t i = 0; i < mine.size(); ++i)
            if (gathered[r * mine.size() + i] != gathered[i]) {
                if (failures++ < 5)
                    std::printf("rank %d's parameter %zu (%.9g) differs from rank 0's (%.9g)\n", r,
                                i, gathered[r * mine.size() + i], gathered[i]);
            }
    // Tensor parallel: the GPT's heads and MLP features split over the two ranks.
    {
        const nn::GptConfig c{.vocab = 17, .block = 8, .layers = 2, .heads = 2, .embd = 16};
        distributed::ProcessGrid grid(comm, {.tp = 2});
        const std::vector<HostArray> whole = nn::gpt_init(c, 4);
        auto gpt_trainer = [&](std::vector<HostArray> params, std::shared_ptr<CollectiveGroup> tp) {
            nn::TrainerOptions o;
            o.compute.num_threads = 1;
            return nn::Trainer(
                [c, tp](const std::vector<Array>& p, const std::vector<Array>& in) {
                    return nn::gpt_loss(c, p, in[0], in[1], tp);
                },
                {{{2, 8}, DType::I64, "tokens"}, {{2, 8}, DType::I64, "targets"}},
                std::move(params), std::make_shared<nn::AdamW>(nn::AdamWOptions{.lr = 1e-3}), o);
        };
        nn::Trainer split =
            gpt_trainer(nn::gpt_shard(c, whole, 2, grid.tp_rank()), grid.tp_group());
        nn::Trainer one = gpt_trainer(whole, nullptr);
        HostArray tokens({2, 8}, DType::I64), targets({2, 8}, DType::I64);
        for (int i = 0; i < 16; ++i) {
            tokens.set_flat(i, (i * 5) % 17);
            targets.set_flat(i, (i * 3 + 1) % 17);
        }
        for (int s = 0; s < 5; ++s) {
            const double a = split.step({tokens, targets}, 1e-3);
            const double b = one.step({tokens, targets}, 1e-3);
            if (!(std::abs(a - b) <= 1e-5 * std::abs(b))) {
                std::printf("rank %d: tensor-parallel step %d loss %.9g, one process %.9g\n", rank,
                            s, a, b);
                ++failures;
            }
        }
        if (rank == 0) std::printf("tensor parallel from the install tree: tp 2, 5 steps\n");
    }
    // Pipeline parallel: stages 0 and 2 of 4 on rank 0, 1 and 3 on rank 1.
    {
        const nn::GptConfig c{.vocab = 17, .block = 8, .layers = 4, .heads = 2, .embd = 16};
        distributed::ProcessGrid grid(comm, {.pp = 2});
        const int s = grid.pp_rank();
        const std::vector<HostArray> whole = nn::gpt_init(c, 5);
        const distributed::GptPipelineRank cut = distributed::gpt_pipeline_rank(c, s, 2, 2);
        std::vector<HostArray> mine;
        for (std::size_t i : cut.params)
            mine.push_back(whole[i]);
        distributed::PipelineOptions po;
        po.micro_batches = 2;
        po.chunks = 2;
        po.chunk_params = cut.chunk_params;
        po.activation = {1, 8, c.embd};
        // The token embedding: stage 0's on rank 0, the head's (stage 3) on rank 1.
        po.tied = {cut.tied};
        po.tied_group = grid.pp();
        nn::TrainerOptions o;
        o.compute.num_threads = 1;
        auto adamw = std::make_shared<nn::AdamW>(nn::AdamWOptions{.lr = 1e-3});
        const std::vector<nn::InputSpec> specs{{{2, 8}, DType::I64, "tokens"},
                                               {{2, 8}, DType::I64, "targets"}};
        distributed::PipelineTrainer pipeline(grid.pp(), cut.stages, specs, mine, adamw, o, po);
        nn::Trainer one(
            [c](const std::vector<Array>& p, const std::vector<Array>& in) {
                return nn::gpt_loss(c, p, in[0], in[1]);
            },
            specs, whole, adamw, o);
        HostArray tokens({2, 8}, DType::I64), targets({2, 8}, DType::I64);
        for (int i = 0; i < 16; ++i) {
            tokens.set_flat(i, (i * 7) % 17);
            targets.set_flat(i, (i * 2 + 3) % 17);
        }
        for (int k = 0; k < 5; ++k) {
            const double a = pipeline.step({tokens, targets}, 1e-3);
            const double b = one.step({tokens, targets}, 1e-3);
            if (!(std::abs(a - b) <= 1e-5 * std::abs(b))) {
                std::printf("rank %d: pipeline step %d loss %.9g, one process %.9g\n", rank, k, a,
                            b);
                ++failures;
            }
        }
        const double a = pipeline.evaluate({tokens, targets});
        const double b = one.evaluate({tokens, targets}).loss.flat(0);
        if (!(std::abs(a - b) <= 1e-5 * std::abs(b))) {
            std::printf("rank %d: pipeline evaluation %.9g, one process %.9g\n", rank, a, b);
            ++failures;
        }
        if (rank == 0)
            std::printf("pipeline parallel from the install tree: pp 2, 2 chunks, 5 steps\n");
    }
    HostArray verdict({1}, DType::I32);
    verdict.set_flat(0, failures);
    const bool ok = comm->all_reduce(verdict).flat(0) == 0;
    if (rank == 0)
        std::printf(
            "data parallel from the install tree: %d ranks, %d steps, final loss %.6f: %s\n", ranks,
            kSteps, losses.back(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
