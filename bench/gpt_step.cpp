// bench/gpt_step: the forward, and the forward and backward, of the W7 GPT (nanoGPT's char-level
// recipe: 4 layers, 4 heads, width 128, context 64, batch 12, vocabulary 84) as one compiled
// program: its cold compile, its kernels and its step time at 1 and 2 threads. The PyTorch figures
// are bench/peers/gpt_torch.py's, run beside it (bench/README.md).
//   bench/gpt_step [--quick] [--threads 1,2] [--reps N]
#include <random>

#include "ad/grad.hpp"
#include "bench/bench_common.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"

using namespace hedra;

int main(int argc, char** argv) {
    bench::Args args = bench::parse_args(argc, argv);
    nn::GptConfig config;
    std::int64_t batch = 12;
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
    // The forward alone (evaluation), then the forward and backward.
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        double c0 = bench::now_ms();
        CompiledProgram forward = compile({loss}, inputs, options);
        double compile_s = (bench::now_ms() - c0) / 1e3;
        double value = 0;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately([&] { value = forward(feed)[0].flat(0); },
                                                     [] {}, false, 1, reps);
        char extra[160];
        std::snprintf(extra, sizeof extra, "batch=%lld block=%lld loss=%.5f compile_s=%.2f",
                      (long long)batch, (long long)T, value, compile_s);
        bench::print_line("gpt_forward", threads, t, "none", extra);
    }
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        double c0 = bench::now_ms();
        CompiledProgram program = compile(outputs, inputs, options);
        double compile_s = (bench::now_ms() - c0) / 1e3;
        double first = 0;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately([&] { first = program(feed)[0].flat(0); },
                                                     [] {}, false, 1, reps);
        char extra[160];
        std::snprintf(extra, sizeof extra,
                      "batch=%lld block=%lld layers=%lld loss=%.5f compile_s=%.2f",
                      (long long)batch, (long long)T, (long long)config.layers, first, compile_s);
        bench::print_line("gpt_forward_backward", threads, t, "none", extra);
    }
    return 0;
}
