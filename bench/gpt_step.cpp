// bench/gpt_step: the forward, the forward and backward, the whole training step (nn::Trainer:
// AdamW, clipping at 1.0, the learning rate an input) of a GPT as compiled programs, and greedy
// generation with the key-value cache (nn::GptGenerator): cold compile and time at 1 and 2
// threads, and the process's peak resident memory after each. --config
// w7 (default): nanoGPT's char-level "macbook" recipe, 4 layers, 4 heads, width 128, context 64,
// batch 12; w8: nanoGPT's shakespeare-char model, 6 layers, 6 heads, width 384, context 256,
// batch 8 (10.7M parameters); --vocab N replaces the 84 characters (50257: GPT-2's tokens);
// --copy-update writes each step's new parameters and state into new memory instead of over the
// old (TrainerOptions::update_in_place off), --recompute recomputes the forward's elementwise
// maps in the backward (TrainerOptions::recompute), to compare the step's memory. The
// PyTorch figures are bench/peers/gpt_torch.py's (--config w7|w8), run beside it
// (bench/README.md).
//   bench/gpt_step [--quick] [--threads 1,2] [--reps N] [--config w7|w8] [--vocab N]
//                  [--copy-update] [--recompute]
//                  [--only forward,forward_backward,train_step,generate]
#include <sys/resource.h>

#include <random>

#include "ad/grad.hpp"
#include "bench/bench_common.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"
#include "nn/gpt_generator.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

using namespace hedra;

namespace {

double peak_rss_mb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0; // KiB on Linux
}

} // namespace

int main(int argc, char** argv) {
    std::string config_name = "w7";
    std::int64_t vocab = 84;
    bool in_place = true, recompute = false;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--config" && i + 1 < argc)
            config_name = argv[++i];
        else if (a == "--vocab" && i + 1 < argc)
            vocab = std::atoll(argv[++i]);
        else if (a == "--copy-update")
            in_place = false;
        else if (a == "--recompute")
            recompute = true;
        else
            rest.push_back(argv[i]);
    }
    bench::Args args =
        bench::parse_args(static_cast<int>(rest.size()), rest.data(),
                          " [--config w7|w8] [--vocab N] [--copy-update] [--recompute]");
    nn::GptConfig config;
    std::int64_t batch = 12;
    if (config_name == "w8") {
        config = {.vocab = 84, .block = 256, .layers = 6, .heads = 6, .embd = 384, .bias = true};
        batch = 8;
    } else if (config_name != "w7") {
        std::fprintf(stderr, "gpt_step: --config must be w7 or w8, not %s\n", config_name.c_str());
        return 2;
    }
    config.vocab = vocab;
    if (args.quick) {
        config = {.vocab = 11, .block = 8, .layers = 1, .heads = 2, .embd = 16, .bias = true};
        batch = 2;
    }
    const int reps = args.reps > 0 ? args.reps : args.quick ? 2 : 15;
    const std::int64_t T = config.block;
    std::vector<nn::GptParameter> spec = nn::gpt_parameters(config);
    std::vector<HostArray> values = nn::gpt_init(config, 1);
    std::vector<Array> params;
    for (const nn::GptParameter& p : spec)
        params.push_back(placeholder(Shape::of(p.shape), DType::F32, p.name));
    Array tokens = placeholder(Shape::of({batch, T}), DType::I64, "tokens");
    Array targets = placeholder(Shape::of({batch, T}), DType::I64, "targets");
    Array loss = nn::gpt_loss(config, params, tokens, targets);
    std::vector<Array> outputs = grad(loss, params);
    outputs.insert(outputs.begin(), loss);
    std::vector<Array> inputs = params;
    inputs.push_back(tokens);
    inputs.push_back(targets);

    std::mt19937 gen(3);
    std::uniform_int_distribution<std::int64_t> token(0, config.vocab - 1);
    std::vector<std::int64_t> tv(static_cast<std::size_t>(batch * T)),
        yv(static_cast<std::size_t>(batch * T));
    for (std::size_t i = 0; i < tv.size(); ++i) {
        tv[i] = token(gen);
        yv[i] = token(gen);
    }
    std::vector<HostArray> feed = values;
    feed.push_back(HostArray::from(tv, std::vector<std::int64_t>{batch, T}));
    feed.push_back(HostArray::from(yv, std::vector<std::int64_t>{batch, T}));
    std::int64_t n_params = 0;
    for (const HostArray& v : values)
        n_params += v.size();
    char shape[200];
    std::snprintf(shape, sizeof shape,
                  "config=%s vocab=%lld layers=%lld width=%lld params=%lld batch=%lld block=%lld",
                  config_name.c_str(), (long long)config.vocab, (long long)config.layers,
                  (long long)config.embd, (long long)n_params, (long long)batch, (long long)T);
    // The forward alone (evaluation), then the forward and backward, then the training step.
    for (int threads : args.threads) {
        if (!args.wants("forward")) break;
        ComputeOptions options;
        options.num_threads = threads;
        double c0 = bench::now_ms();
        CompiledProgram forward = compile({loss}, inputs, options);
        double compile_s = (bench::now_ms() - c0) / 1e3;
        double value = 0;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately([&] { value = forward(feed)[0].flat(0); },
                                                     [] {}, false, 1, reps);
        char extra[400];
        std::snprintf(extra, sizeof extra, "%s loss=%.5f compile_s=%.2f peak_rss_mb=%.0f", shape,
                      value, compile_s, peak_rss_mb());
        bench::print_line("gpt_forward", threads, t, "none", extra);
    }
    for (int threads : args.threads) {
        if (!args.wants("forward_backward")) break;
        ComputeOptions options;
        options.num_threads = threads;
        double c0 = bench::now_ms();
        CompiledProgram program = compile(outputs, inputs, options);
        double compile_s = (bench::now_ms() - c0) / 1e3;
        double first = 0;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately([&] { first = program(feed)[0].flat(0); },
                                                     [] {}, false, 1, reps);
        char extra[400];
        std::snprintf(extra, sizeof extra, "%s loss=%.5f compile_s=%.2f peak_rss_mb=%.0f", shape,
                      first, compile_s, peak_rss_mb());
        bench::print_line("gpt_forward_backward", threads, t, "none", extra);
    }
    // The step gpt_torch.py times: forward, backward, clipping, AdamW, the loss read back.
    for (int threads : args.threads) {
        if (!args.wants("train_step")) break;
        nn::TrainerOptions options;
        for (const nn::GptParameter& p : spec)
            options.param_names.push_back(p.name);
        options.clip_norm = 1.0;
        options.compute.num_threads = threads;
        options.update_in_place = in_place;
        options.recompute = recompute;
        nn::AdamWOptions adamw{1e-3, 0.9, 0.99, 1e-8, 0.1};
        for (const nn::GptParameter& p : spec)
            adamw.decay_mask.push_back(p.decay);
        nn::Trainer trainer(
            [config](const std::vector<Array>& ps, const std::vector<Array>& in) {
                return nn::gpt_loss(config, ps, in[0], in[1]);
            },
            {{{batch, T}, DType::I64, "tokens"}, {{batch, T}, DType::I64, "targets"}}, values,
            std::make_shared<nn::AdamW>(adamw), options);
        std::vector<HostArray> xy{feed[feed.size() - 2], feed.back()};
        double c0 = bench::now_ms();
        double first = trainer.step(xy, 1e-4);
        double compile_s = (bench::now_ms() - c0) / 1e3;
        bench::select_clock(args, threads);
        bench::PairTimes t =
            bench::time_alternately([&] { trainer.step(xy, 1e-4); }, [] {}, false, 1, reps);
        std::optional<ProgramMemory> memory = trainer.step_memory(xy);
        char extra[600];
        std::snprintf(extra, sizeof extra,
                      "%s loss=%.5f compile_s=%.2f arena_mb=%.1f unshared_mb=%.1f "
                      "results_mb=%.1f donated_mb=%.1f peak_rss_mb=%.0f",
                      shape, first, compile_s, memory ? memory->arena / 1e6 : -1.0,
                      memory ? memory->temporaries / 1e6 : -1.0,
                      memory ? memory->results / 1e6 : -1.0, memory ? memory->donated / 1e6 : -1.0,
                      peak_rss_mb());
        bench::print_line("gpt_train_step", threads, t, "none", extra);
    }
    // Greedy generation with the key-value cache: one token of prompt, then context - 1 new
    // ones (bench/peers/gpt_generate_torch.py is PyTorch's loop with a cache of its own).
    for (int threads : args.threads) {
        if (!args.wants("generate")) break;
        ComputeOptions options;
        options.num_threads = threads;
        nn::GptGenerator generator(config, values, 1, options);
        generator.generate({{0}}, T - 1); // compiles
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately([&] { generator.generate({{0}}, T - 1); },
                                                     [] {}, false, 1, reps);
        char extra[500];
        std::snprintf(extra, sizeof extra, "%s tokens=%lld tokens_per_s=%.1f compile_s=%.2f", shape,
                      (long long)(T - 1), double(T - 1) / (t.hedra_ms * 1e-3),
                      generator.compile_seconds());
        bench::print_line("gpt_generate", threads, t, "none", extra);
    }
    return 0;
}
