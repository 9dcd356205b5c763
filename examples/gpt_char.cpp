// gpt_char: a character-level GPT (nanoGPT's Shakespeare recipe, the W7 workload of
// bench/peers/gpt_torch.py: 4 layers, 4 heads, width 128, context 64, batch 12; --config w8 is
// nanoGPT's shakespeare-char model, 6 layers, 6 heads, width 384, context 256, batch 8, 10.7M
// parameters, its schedule decaying over 5000 steps; --layers --heads --width --context --batch
// change either) trained with
// nn::Trainer: AdamW (lr 1e-3, betas 0.9/0.99, weight decay 0.1 on the matrices and
// embeddings), global-norm clipping at 1.0 and nanoGPT's warm-up + cosine schedule, the learning
// rate a run-time input of the compiled step. It prints a progress line every 10 steps, the
// validation and training loss every --eval-every steps, writes a loss-curve PNG and a
// safetensors checkpoint, and can print a sample of the trained model (generated with a
// key-value cache: greedy, or with --temperature and --top-k).
//
// With --replay DIR (a folder written by `gpt_torch.py --export DIR`) it starts from PyTorch's
// initial weights, takes PyTorch's batch offsets, learning rates and evaluation offsets, and
// prints each step's loss beside PyTorch's; the first 10 must agree to 1e-4 relative (the exit
// status is 1 when they do not). Without it, offsets come from std::mt19937_64 (numpy's
// generator is not reproduced) and the weights from nn::gpt_init. An export of a synthetic
// stream (`gpt_torch.py --vocab 50257`: tokens.npy in place of vocab.txt) is replayed on its
// token ids, with the vocabulary its config.json names (a sample prints ids).
//
// --precision bf16 (or f16) trains in mixed precision (TrainerOptions::precision: f32 master
// weights and AdamW state, half matmul operands, f32 softmax, layer norm and loss; f16 with
// dynamic loss scaling); the greedy sample runs in f32. A replay checks its losses when
// PyTorch's precision (config.json's "autocast", gpt_torch.py --autocast bf16) is the same: to
// 1e-3 in bf16; otherwise it prints them beside PyTorch's without a check.
//
// Under mpirun, --grid splits the ranks: dp shares out the batch, tp splits every layer, pp cuts
// the layers into stages run 1F1B over --micro-batches (--chunks interleaves several stages per
// rank); rank 0 gathers the whole model for the checkpoint and the sample.
//
//   bash scripts/get_shakespeare.sh
//   gpt_char --steps 2000 --threads 1 --sample 300
//   $PEERS_VENV/bin/python bench/peers/gpt_torch.py --threads 1 --impl eager --steps 20
//       --eval-every 0 --export /tmp/w7_export   (one command)
//   gpt_char --replay /tmp/w7_export --steps 20
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "distributed/data_parallel.hpp"
#include "distributed/gpt_checkpoint.hpp"
#include "distributed/gpt_pipeline.hpp"
#include "distributed/init.hpp"
#include "distributed/pipeline_parallel.hpp"
#include "distributed/process_grid.hpp"
#include "gpt_char_data.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"
#include "nn/gpt_generator.hpp"
#include "nn/io/safetensors.hpp"
#include "nn/io/training_report.hpp"
#include "nn/lr_schedule.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace {

using namespace hedra;
using namespace hedra::examples::gpt_char;
using clock_type = std::chrono::steady_clock;

constexpr std::int64_t kReplayChecked = 10; // losses that must match PyTorch's
constexpr double kReplayTolerance = 1e-4;   // relative
// Against PyTorch's bf16 autocast (measured: 1.9e-5 over 10 steps). PyTorch's CPU attention keeps
// the scores and probabilities in f32, hedra rounds them to bf16 for the products.
constexpr double kReplayToleranceBf16 = 1e-3;
constexpr std::int64_t kProgressEvery = 10;

struct Flags {
    std::string data;
    std::int64_t steps = 0; // 0: 2000, 20 with --quick, the offsets' rows with --replay
    bool quick = false;
    std::int64_t eval_every = 250;
    std::int64_t eval_iters = 20;
    std::string replay;
    std::string backend;
    int threads = 0;
    std::int64_t sample = 0;
    double temperature = 0; // 0: greedy
    std::int64_t top_k = 0; // 0: every token
    std::string checkpoint = "gpt_char.safetensors";
    std::string plot = "gpt_char_loss.png";
    std::uint64_t seed = 0;
    bool shard_optimizer_state = false;
    std::string grid;      // "tp2", "dp2,pp2": the ranks' process grid (empty: data parallel only)
    int micro_batches = 4; // per pipeline step (with pp)
    int chunks = 1;        // interleaved stages per pipeline rank
    std::string precision = "f32";
    std::string config = "w7";
    std::int64_t layers = 0, heads = 0, width = 0, context = 0, batch = 0; // 0: the config's
};

// The model's sizes, the batch and the schedule's length: a named config (gpt_torch.py's
// CONFIGS), then the flags that change it.
struct Workload {
    nn::GptConfig model;
    std::int64_t batch = 12;
    std::int64_t decay_steps = 2000;
};

Workload workload_of(const Flags& f) {
    Workload w;
    if (f.config == "w8") {
        w.model.layers = 6;
        w.model.heads = 6;
        w.model.embd = 384;
        w.model.block = 256;
        w.batch = 8;
        w.decay_steps = 5000;
    }
    if (f.layers > 0) w.model.layers = f.layers;
    if (f.heads > 0) w.model.heads = f.heads;
    if (f.width > 0) w.model.embd = f.width;
    if (f.context > 0) w.model.block = f.context;
    if (f.batch > 0) w.batch = f.batch;
    if (w.model.embd % w.model.heads != 0)
        throw Error("--width " + std::to_string(w.model.embd) + " is not a multiple of --heads " +
                    std::to_string(w.model.heads) + "; each head takes width / heads channels");
    return w;
}

Flags parse_flags(int argc, char** argv) {
    Flags f;
    const char* env = std::getenv("HEDRA_DATA");
    f.data = std::string(env && *env ? env : "/var/cache/hedra-data") + "/shakespeare.txt";
    CLI::App app{"Trains a character-level GPT (nanoGPT's Shakespeare recipe) with hedra",
                 "gpt_char"};
    app.add_option("--data", f.data, "text file (scripts/get_shakespeare.sh makes it)")
        ->capture_default_str();
    app.add_option("--steps", f.steps,
                   "optimizer updates (0: 2000, 20 with --quick, all of --replay's offsets)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_flag("--quick", f.quick, "20 steps (a smoke test)");
    app.add_option("--eval-every", f.eval_every,
                   "evaluate every N updates (0: only before the first and after the last)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--eval-iters", f.eval_iters, "batches per evaluation (--replay: the files')")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--replay", f.replay, "a folder written by gpt_torch.py --export");
    app.add_option("--backend", f.backend, "hedra backend (default: $HEDRA_BACKEND or built-in)");
    app.add_option("--threads", f.threads, "threads (0: $HEDRA_NUM_THREADS or all cores)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--temperature", f.temperature,
                   "sampling temperature of --sample (0: greedy, the most likely character)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--top-k", f.top_k, "--sample draws among the k most likely (0: all)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--sample", f.sample,
                   "characters to generate after training (a key-value cache, --temperature, "
                   "--top-k, --seed)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--checkpoint", f.checkpoint,
                   "safetensors file written at the end ('' for none)")
        ->capture_default_str();
    app.add_option("--plot", f.plot,
                   "loss-curve PNG ('' for none; the CSV goes beside it; needs gnuplot)")
        ->capture_default_str();
    app.add_flag("--shard-optimizer-state", f.shard_optimizer_state,
                 "under mpirun: each rank keeps 1/N of the AdamW state (ZeRO stage 1)");
    app.add_option("--grid", f.grid,
                   "process grid of the mpirun ranks, e.g. tp2, dp2,tp2 or pp2 (dp x tp x pp; "
                   "default: every rank data parallel)");
    app.add_option("--micro-batches", f.micro_batches,
                   "with pp: micro-batches per step, run 1F1B through the stages")
        ->capture_default_str();
    app.add_option("--chunks", f.chunks,
                   "with pp: interleaved stages per pipeline rank (the layers cut into pp x "
                   "chunks stages)")
        ->capture_default_str();
    app.add_option("--seed", f.seed, "seed of the initial weights and the batch offsets")
        ->capture_default_str();
    app.add_option("--config", f.config,
                   "w7: 4 layers, 4 heads, width 128, context 64, batch 12; w8: 6 layers, 6 heads, "
                   "width 384, context 256, batch 8 (with --replay: the export's)")
        ->check(CLI::IsMember({"w7", "w8"}))
        ->capture_default_str();
    app.add_option("--layers", f.layers, "transformer blocks (0: the config's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--heads", f.heads, "attention heads (0: the config's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--width", f.width, "embedding width (0: the config's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--context", f.context, "context length (0: the config's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--batch", f.batch, "sequences per step (0: the config's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--precision", f.precision,
                   "f32, or mixed precision: bf16, f16 (with dynamic loss scaling)")
        ->check(CLI::IsMember({"f32", "bf16", "f16"}))
        ->capture_default_str();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    return f;
}

// The export's sizes (config.json's "model", nanoGPT's names); a size flag given as well must
// agree with them.
Workload replay_workload(const std::string& dir, const Flags& f) {
    std::ifstream in(dir_file(dir, "config.json"));
    if (!in) throw Error("--replay " + dir + ": no config.json");
    const nlohmann::json config = nlohmann::json::parse(in);
    if (!config.contains("model"))
        throw Error("--replay " + dir + ": config.json has no \"model\" (its sizes)");
    const nlohmann::json& m = config["model"];
    Workload w;
    w.model.layers = m.value("n_layer", w.model.layers);
    w.model.heads = m.value("n_head", w.model.heads);
    w.model.embd = m.value("n_embd", w.model.embd);
    w.model.block = m.value("block_size", w.model.block);
    w.batch = m.value("batch_size", w.batch);
    w.decay_steps = m.value("lr_decay_iters", w.decay_steps);
    auto agree = [&](const char* flag, std::int64_t given, std::int64_t exported) {
        if (given > 0 && given != exported)
            throw Error("--replay " + dir + " was exported with " + std::string(flag + 2) + " " +
                        std::to_string(exported) + ", not " + flag + " " + std::to_string(given) +
                        "; leave " + flag + " out");
    };
    agree("--layers", f.layers, w.model.layers);
    agree("--heads", f.heads, w.model.heads);
    agree("--width", f.width, w.model.embd);
    agree("--context", f.context, w.model.block);
    agree("--batch", f.batch, w.batch);
    return w;
}

double seconds_since(clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
}

struct Evaluation {
    double train = 0, val = 0;
};

// The mean loss (in double, as gpt_torch.py) of the batches at fixed offsets of each split; under
// mpirun each rank evaluates its share of every batch.
Evaluation evaluate(nn::Trainer& trainer, distributed::DataParallelTrainer* parallel,
                    distributed::PipelineTrainer* pipeline, const Corpus& c, const Plan& p,
                    std::int64_t T) {
    auto mean = [&](const std::vector<std::int64_t>& split, const Offsets& rows) {
        double sum = 0;
        for (const auto& row : rows)
            sum += pipeline   ? pipeline->evaluate(batch_of(split, row, T))
                   : parallel ? parallel->evaluate_loss(batch_of(split, row, T))
                              : trainer.evaluate(batch_of(split, row, T)).loss.flat(0);
        return sum / double(rows.size());
    };
    return {mean(c.train, p.eval_train), mean(c.val, p.eval_val)};
}

void print_evaluation(std::int64_t step, const Evaluation& e, double seconds, const Plan& p) {
    std::printf("eval step %lld: train loss %.6f, val loss %.6f (%zu batches each, %.2f s)",
                (long long)step, e.train, e.val, p.eval_val.size(), seconds);
    for (const auto& r : p.ref_evals)
        if (r.value("step", -1) == step)
            std::printf("; pytorch: train %.6f, val %.6f (val diff %+.2e)", r.value("train", 0.0),
                        r.value("val", 0.0), e.val - r.value("val", 0.0));
    std::printf("\n");
    std::fflush(stdout);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Generation with a key-value cache (nn::GptGenerator): a '\n' start token, then `count`
// characters, each one cached decoding step. When the context is full, its last half is fed
// again as the next prompt (the window slides by half a context at a time).
struct Sample {
    std::string text;
    double seconds = 0, compile_seconds = 0;
};

Sample sample_text(const nn::GptConfig& cfg, const std::vector<HostArray>& params, const Corpus& c,
                   std::int64_t count, const nn::SamplingOptions& sampling,
                   const ComputeOptions& options) {
    const std::int64_t T = cfg.block, keep = std::max<std::int64_t>(1, T / 2);
    nn::GptGenerator generator(cfg, params, 1, options);
    auto newline = std::find(c.vocab.begin(), c.vocab.end(), '\n');
    std::vector<std::int64_t> ids{newline == c.vocab.end() ? 0 : newline - c.vocab.begin()};
    if (c.synthetic()) ids = {c.train.front()};
    const auto start = clock_type::now();
    nn::SamplingOptions s = sampling;
    while (std::int64_t(ids.size()) - 1 < count) {
        const std::int64_t n = std::min<std::int64_t>(std::int64_t(ids.size()), keep);
        const std::int64_t chunk = std::min(count + 1 - std::int64_t(ids.size()), T - n);
        std::vector<std::int64_t> prompt(ids.end() - n, ids.end());
        std::vector<std::int64_t> next = generator.generate({prompt}, chunk, s)[0];
        ids.insert(ids.end(), next.begin(), next.end());
        ++s.seed; // each chunk its own draws, the run still a function of the seed
    }
    Sample out;
    out.seconds = seconds_since(start);
    out.compile_seconds = generator.compile_seconds();
    for (std::size_t i = 1; i < ids.size(); ++i)
        out.text += c.synthetic() ? " " + std::to_string(ids[i])
                                  : std::string(1, static_cast<char>(c.vocab[std::size_t(ids[i])]));
    return out;
}

std::string csv_path_for(const std::string& png) {
    const std::string ext = ".png";
    if (png.size() > ext.size() && png.compare(png.size() - ext.size(), ext.size(), ext) == 0)
        return png.substr(0, png.size() - ext.size()) + ".csv";
    return png + ".csv";
}

int train(const Flags& f) {
    // Under mpirun every rank reads the same batches and trains on its share of each
    // (distributed::DataParallelTrainer); rank 0 alone prints and writes files.
    std::shared_ptr<distributed::Communicator> comm = distributed::init();
    const bool lead = comm->rank() == 0;
    if (!lead && !std::freopen("/dev/null", "w", stdout))
        throw Error("cannot silence rank " + std::to_string(comm->rank()) + "'s output");
    const auto run_start = clock_type::now();
    const bool token_stream =
        !f.replay.empty() && std::filesystem::exists(dir_file(f.replay, "tokens.npy"));
    const Corpus corpus = token_stream ? load_token_corpus(f.replay) : load_corpus(f.data);
    const Workload work = f.replay.empty() ? workload_of(f) : replay_workload(f.replay, f);
    nn::GptConfig cfg = work.model;
    cfg.vocab = corpus.vocab_size;
    const std::int64_t T = cfg.block;
    const std::int64_t batch = work.batch;
    // The ranks' grid: tensor-parallel groups split each layer, the rest share out the batch.
    const distributed::GridShape shape = f.grid.empty() ? distributed::GridShape{.dp = comm->size()}
                                                        : distributed::parse_grid(f.grid);
    const distributed::ProcessGrid grid(comm, shape);
    const int tp = shape.tp, pp = shape.pp;
    if ((tp > 1 || pp > 1) && f.shard_optimizer_state)
        throw Error("--grid " + f.grid +
                    ": --shard-optimizer-state shards the whole model's "
                    "state over data-parallel ranks; drop it or the tp and pp axes");
    if (pp == 1 && f.chunks != 1)
        throw Error("--chunks " + std::to_string(f.chunks) +
                    " interleaves pipeline stages; give a grid with pp (e.g. --grid pp2)");
    if (pp > 1 && (cfg.layers % (pp * f.chunks) != 0 || f.micro_batches < 1 ||
                   batch % (shape.dp * f.micro_batches) != 0))
        throw Error("--grid " + f.grid + " --chunks " + std::to_string(f.chunks) +
                    " --micro-batches " + std::to_string(f.micro_batches) +
                    ": pp x chunks = " + std::to_string(pp * f.chunks) +
                    " stages must divide the " + std::to_string(cfg.layers) +
                    " layers, and dp x micro-batches the batch of " + std::to_string(batch));
    const std::vector<nn::GptParameter> specs = nn::gpt_parameters(cfg, tp);
    const nn::WarmupCosine schedule{1e-3, 1e-4, 100, work.decay_steps};

    Plan plan;
    std::int64_t steps = f.steps > 0 ? f.steps : f.quick ? 20 : 2000;
    if (!f.replay.empty()) {
        plan = replay_plan(f.replay, cfg, batch, corpus);
        if (f.steps == 0 && !f.quick) steps = std::int64_t(plan.train.size());
        if (steps > std::int64_t(plan.train.size()) || steps > std::int64_t(plan.lrs.size()))
            throw Error("--replay " + f.replay + " has offsets for " +
                        std::to_string(plan.train.size()) + " steps, asked for " +
                        std::to_string(steps));
        double lr_diff = 0;
        for (std::int64_t i = 0; i < steps; ++i)
            lr_diff = std::max(lr_diff, std::abs(plan.lrs[std::size_t(i)] - schedule.at(i)));
        std::printf("replay from %s: %lld steps, %zu evaluation batches per split, PyTorch's "
                    "losses %s; lr.npy vs WarmupCosine: max |diff| %.1e\n",
                    f.replay.c_str(), (long long)steps, plan.eval_val.size(),
                    plan.ref_losses.empty() ? "absent" : "present", lr_diff);
    } else {
        plan.init = nn::gpt_init(cfg, f.seed);
        std::mt19937_64 engine(f.seed);
        plan.train = random_offsets(engine, steps, batch, std::int64_t(corpus.train.size()) - T);
        std::mt19937_64 eval_engine(f.seed + 1);
        plan.eval_val =
            random_offsets(eval_engine, f.eval_iters, batch, std::int64_t(corpus.val.size()) - T);
        plan.eval_train =
            random_offsets(eval_engine, f.eval_iters, batch, std::int64_t(corpus.train.size()) - T);
        for (std::int64_t i = 0; i < steps; ++i)
            plan.lrs.push_back(schedule.at(i));
    }

    // With pp, this rank's stages' parameters (interleaved: its chunks', concatenated).
    std::vector<std::size_t> held(specs.size());
    for (std::size_t i = 0; i < held.size(); ++i)
        held[i] = i;
    if (pp > 1) held = nn::gpt_pipeline_parameters(cfg, grid.pp_rank(), pp, f.chunks);
    nn::TrainerOptions options;
    for (std::size_t i : held)
        options.param_names.push_back(specs[i].name);
    options.clip_norm = 1.0;
    if (tp > 1) { // clipping takes the norm of the whole model: the shards' summed over tp
        options.shards.group = grid.tp_group();
        for (std::size_t i : held)
            options.shards.sharded.push_back(specs[i].split_axis >= 0);
    }
    options.compute.backend = f.backend;
    options.compute.num_threads = f.threads;
    options.precision = parse_dtype(f.precision);
    nn::AdamWOptions adamw{1e-3, 0.9, 0.99, 1e-8, 0.1};
    for (std::size_t i : held)
        adamw.decay_mask.push_back(specs[i].decay);
    std::shared_ptr<CollectiveGroup> tp_group = tp > 1 ? grid.tp_group() : nullptr;
    const bool data_parallel = shape.dp > 1;
    const std::vector<HostArray> shards =
        tp > 1 ? nn::gpt_shard(cfg, plan.init, tp, grid.tp_rank()) : plan.init;
    std::optional<nn::Trainer> trainer;
    std::unique_ptr<distributed::PipelineTrainer> pipeline;
    if (pp == 1) {
        trainer.emplace(
            [cfg, tp_group](const std::vector<Array>& params, const std::vector<Array>& in) {
                return nn::gpt_loss(cfg, params, in[0], in[1], tp_group);
            },
            // Data parallel: the batch axis is shared out (kAnyExtent), each rank's share
            // symbolic.
            std::vector<nn::InputSpec>{
                {{data_parallel ? nn::kAnyExtent : batch, T}, DType::I64, "tokens"},
                {{data_parallel ? nn::kAnyExtent : batch, T}, DType::I64, "targets"}},
            shards, std::make_shared<nn::AdamW>(adamw), options);
    } else {
        const int s = grid.pp_rank(), v = f.chunks;
        distributed::PipelineOptions po;
        po.micro_batches = f.micro_batches;
        po.chunks = v;
        po.activation = {batch / shape.dp / f.micro_batches, T, cfg.embd};
        const distributed::GptPipelineRank cut =
            distributed::gpt_pipeline_rank(cfg, s, pp, v, tp_group);
        po.chunk_params = cut.chunk_params;
        // The token embedding: the first stage's on pp rank 0, the head's on the last.
        const bool ends = s == 0 || s == pp - 1;
        auto ends_group = grid.pp()->split(ends ? 0 : 1, s);
        if (ends) {
            po.tied = {cut.tied};
            po.tied_group = ends_group;
        }
        if (data_parallel) po.dp = grid.dp();
        if (tp_group) {
            po.tp = tp_group;
            po.tp_sharded = options.shards.sharded;
        }
        std::vector<HostArray> mine;
        for (std::size_t i : held)
            mine.push_back(shards[i]);
        pipeline = std::make_unique<distributed::PipelineTrainer>(
            grid.pp(), cut.stages,
            std::vector<nn::InputSpec>{{{batch, T}, DType::I64, "tokens"},
                                       {{batch, T}, DType::I64, "targets"}},
            mine, std::make_shared<nn::AdamW>(adamw), options, po);
        std::printf("pipeline parallel: %d ranks (%s), %d stage(s) of %lld layers each per rank, "
                    "%d micro-batches of %lld sequences, 1F1B%s\n",
                    pp, comm->name().c_str(), v, (long long)(cfg.layers / (pp * v)),
                    f.micro_batches, (long long)(batch / shape.dp / f.micro_batches),
                    v > 1 ? " interleaved" : "");
    }
    if (tp > 1)
        std::printf("tensor parallel: %d ranks per layer (%s), this rank holds %d of %lld "
                    "heads\n",
                    tp, comm->name().c_str(), int(cfg.heads / tp), (long long)cfg.heads);
    std::unique_ptr<distributed::DataParallelTrainer> parallel;
    if (data_parallel && !pipeline) {
        parallel = std::make_unique<distributed::DataParallelTrainer>(
            grid.dp(), std::move(*trainer),
            distributed::DataParallelOptions{.shard_optimizer_state = f.shard_optimizer_state});
        std::printf("data parallel: %d ranks (%s), %lld of every %lld sequences each\n", shape.dp,
                    comm->name().c_str(),
                    (long long)(parallel->shard(batch).second - parallel->shard(batch).first),
                    (long long)batch);
    } else if (data_parallel) {
        std::printf("data parallel: %d pipelines (%s), %lld of every %lld sequences each\n",
                    shape.dp, comm->name().c_str(), (long long)(batch / shape.dp),
                    (long long)batch);
    }
    nn::Trainer& active = pipeline ? pipeline->local() : parallel ? parallel->local() : *trainer;
    // Compile time so far: the trainer's, or the pipeline's programs'.
    auto compile_seconds = [&] {
        return pipeline ? pipeline->compile_seconds() : active.compile_seconds();
    };

    std::int64_t n_params = 0;
    for (const HostArray& p : plan.init)
        n_params += p.size();
    const std::string backend = f.backend.empty() ? default_backend_name() : f.backend;
    std::printf(
        "gpt_char: %s, %zu %s (train %zu, val %zu), vocabulary %lld; %lld layers, "
        "%lld heads, width %lld, context %lld, batch %lld, %lld parameters; %lld steps, "
        "backend %s, threads %d, precision %s\n",
        token_stream ? dir_file(f.replay, "tokens.npy").c_str() : f.data.c_str(),
        corpus.train.size() + corpus.val.size(), token_stream ? "synthetic tokens" : "characters",
        corpus.train.size(), corpus.val.size(), (long long)cfg.vocab, (long long)cfg.layers,
        (long long)cfg.heads, (long long)cfg.embd, (long long)T, (long long)batch,
        (long long)n_params, (long long)steps, backend.c_str(), f.threads, f.precision.c_str());
    std::fflush(stdout);

    double eval_seconds = 0;
    auto run_evaluation = [&](std::int64_t step) {
        const double compiled = compile_seconds();
        const auto start = clock_type::now();
        Evaluation e = evaluate(active, parallel.get(), pipeline.get(), corpus, plan, T);
        const double compile = compile_seconds() - compiled;
        if (compile > 0) std::printf("compiled the evaluation program in %.2f s\n", compile);
        const double s = seconds_since(start) - compile;
        eval_seconds += s;
        print_evaluation(step, e, s, plan);
        return e;
    };
    Evaluation last_eval = run_evaluation(0);

    std::vector<double> losses, step_ms, comm_ms;
    double window_ms = 0, step_compile = 0, max_rel = 0;
    std::int64_t window_steps = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
        const double lr = plan.lrs[std::size_t(i)];
        const double compiled = compile_seconds();
        const auto start = clock_type::now();
        const std::vector<HostArray> b = batch_of(corpus.train, plan.train[std::size_t(i)], T);
        const double waited = parallel ? parallel->communication_seconds() : 0.0;
        const double loss = pipeline   ? pipeline->step(b, lr)
                            : parallel ? parallel->step(b, lr)
                                       : active.step(b, lr);
        if (parallel) comm_ms.push_back(1e3 * (parallel->communication_seconds() - waited));
        const double compile = compile_seconds() - compiled;
        const double ms = 1e3 * (seconds_since(start) - compile);
        if (compile > 0) {
            step_compile += compile;
            std::printf("compiled the training step (forward, backward, clipping, AdamW) in "
                        "%.2f s\n",
                        compile);
        }
        if (!std::isfinite(loss))
            throw Error("training diverged: the loss is " + std::to_string(loss) + " at step " +
                        std::to_string(i));
        losses.push_back(loss);
        step_ms.push_back(ms);
        window_ms += ms;
        ++window_steps;
        if (i < std::int64_t(plan.ref_losses.size())) {
            const double ref = plan.ref_losses[std::size_t(i)];
            const double rel = std::abs(loss - ref) / std::abs(ref);
            if (i < kReplayChecked) max_rel = std::max(max_rel, rel);
            std::printf("replay step %lld: hedra %.7f pytorch %.7f rel_diff %.2e\n", (long long)i,
                        loss, ref, rel);
        }
        const std::int64_t done = i + 1;
        if (done % kProgressEvery == 0 || done == steps) {
            const double mean_ms = window_ms / double(window_steps);
            std::printf("step %lld/%lld: loss %.4f, lr %.3e, %.0f tokens/s, %.1f ms/step\n",
                        (long long)done, (long long)steps, loss, lr,
                        double(batch * T) / (mean_ms * 1e-3), mean_ms);
            window_ms = 0;
            window_steps = 0;
        }
        std::fflush(stdout);
        if (done == steps || (f.eval_every > 0 && done % f.eval_every == 0))
            last_eval = run_evaluation(done);
    }

    // As gpt_torch.py's step_ms: the median of the steps after the first three.
    const std::vector<double> steady(step_ms.begin() + std::min<long>(3, long(step_ms.size())),
                                     step_ms.end());
    const double med = median(steady.empty() ? step_ms : steady);
    double train_seconds = 0;
    for (double ms : step_ms)
        train_seconds += ms * 1e-3;
    std::printf("gpt_char: steps=%lld val_loss=%.6f train_loss=%.6f loss_last=%.6f step_ms "
                "median=%.2f tokens_per_s=%.0f compile_s=%.2f train_s=%.2f eval_s=%.2f "
                "wall_s=%.2f\n",
                (long long)steps, last_eval.val, last_eval.train, losses.back(), med,
                double(batch * T) / (med * 1e-3), step_compile, train_seconds, eval_seconds,
                seconds_since(run_start));
    if (active.loss_scaling())
        std::printf("loss scaling: scale %g after the last step\n", active.loss_scale());
    // The step program's memory plan and the whole process's peak (libraries, the corpus and
    // the compiled programs included).
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const std::vector<HostArray> first = batch_of(corpus.train, plan.train.front(), T);
    if (std::optional<ProgramMemory> m =
            parallel || pipeline ? std::nullopt : active.step_memory(first))
        std::printf("memory: step %s; peak resident %.0f MB\n", m->to_string().c_str(),
                    double(usage.ru_maxrss) / 1024.0);
    if (parallel)
        std::printf("data parallel: a step waited %.2f ms (median) for the gradients' all-reduce "
                    "after its backward pass\n",
                    median(comm_ms));

    int status = 0;
    if (!plan.ref_losses.empty()) {
        const std::int64_t n =
            std::min<std::int64_t>({kReplayChecked, steps, std::int64_t(plan.ref_losses.size())});
        if (plan.ref_precision != f.precision) {
            std::printf("replay: max relative difference of the first %lld losses %.3e (%s "
                        "against PyTorch's %s: not checked)\n",
                        (long long)n, max_rel, f.precision.c_str(), plan.ref_precision.c_str());
        } else {
            const double limit = f.precision == "f32" ? kReplayTolerance : kReplayToleranceBf16;
            const bool ok = max_rel <= limit;
            std::printf("replay: max relative difference of the first %lld losses %.3e (limit "
                        "%.0e): %s\n",
                        (long long)n, max_rel, limit, ok ? "ok" : "FAILED");
            if (!ok) status = 1;
        }
    }
    if (!f.plot.empty() && lead) {
        const std::string csv = csv_path_for(f.plot);
        nn::write_loss_csv(csv, losses, steps);
        const bool plotted = nn::plot_loss_png(csv, f.plot, "gpt_char training loss");
        std::printf("wrote %s%s\n", csv.c_str(), plotted ? (" and " + f.plot).c_str() : "");
    }
    // Tensor or pipeline parallel: the whole model's parameters and AdamW state joined from the
    // shards and stages on rank 0 (every rank takes part), for the checkpoint and the sample.
    const bool split_model = tp > 1 || pp > 1;
    const nn::TrainerCheckpoint whole =
        split_model ? distributed::gather_gpt_checkpoint(cfg, grid, active.checkpoint())
                    : nn::TrainerCheckpoint{};
    if (!f.checkpoint.empty() && split_model) {
        if (lead) {
            nn::save_safetensors(f.checkpoint, whole.names, whole.arrays, whole.metadata);
            std::printf("wrote the checkpoint %s (parameters and AdamW state gathered from %d "
                        "ranks of %s, step %lld)\n",
                        f.checkpoint.c_str(), shape.size(), shape.to_string().c_str(),
                        (long long)active.step_count());
        }
    } else if (!f.checkpoint.empty()) {
        if (parallel) { // every rank takes part: a sharded state is gathered first
            parallel->save_checkpoint(f.checkpoint);
        } else {
            const nn::TrainerCheckpoint c = active.checkpoint();
            nn::save_safetensors(f.checkpoint, c.names, c.arrays, c.metadata);
        }
        if (lead)
            std::printf("wrote the checkpoint %s (parameters, AdamW state, step %lld)\n",
                        f.checkpoint.c_str(), (long long)active.step_count());
    }
    if (f.sample > 0 && (!split_model || lead)) { // split: rank 0 holds the whole model
        const nn::SamplingOptions sampling{f.temperature, f.top_k, f.seed};
        std::vector<HostArray> params = active.params();
        if (split_model) { // the gathered parameters, by name
            params.clear();
            for (const nn::GptParameter& p : nn::gpt_parameters(cfg)) {
                const auto at = std::find(whole.names.begin(), whole.names.end(), p.name);
                if (at == whole.names.end())
                    throw Error("the gathered checkpoint has no " + p.name);
                params.push_back(whole.arrays[std::size_t(at - whole.names.begin())]);
            }
        }
        const Sample sample = sample_text(cfg, params, corpus, f.sample, sampling, options.compute);
        std::printf("sample (%s, %lld characters after a '\\n' start token; %.0f characters/s "
                    "with a key-value cache, %.2f s of it compiling):\n%s\n",
                    f.temperature > 0 ? "sampled" : "greedy", (long long)f.sample,
                    double(f.sample) / std::max(1e-9, sample.seconds - sample.compile_seconds),
                    sample.compile_seconds, sample.text.c_str());
    }
    std::fflush(stdout);
    return status;
}

} // namespace

int main(int argc, char** argv) {
    const Flags f = parse_flags(argc, argv);
    try {
        return train(f);
    } catch (const Error& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "gpt_char: error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) { // a malformed evals.json
        std::fflush(stdout);
        std::fprintf(stderr, "gpt_char: error: %s\n", e.what());
        return 1;
    }
}
