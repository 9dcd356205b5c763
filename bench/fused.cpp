// bench/fused: the memory-bound and transcendental workloads W5 and W6 (W5a row softmax
// and W5b the column sum of tanh(0.5 x + 0.1), 4096 x 1024 f32; W6 the per-call cost of a
// compiled chain of 10 elementwise ops on 1000 elements) and the GPT workload's (W7) layer
// norm (768 x 128), GELU (768 x 512) and attention softmax (3072 x 64), hedra against plain C
// loops compiled into this benchmark with -O3 -march=native -ffast-math (fused_peer.cpp),
// timed alternately at 1 and 2 threads; results checked against each other.
//   bench/fused [--quick] [--threads 1,2] [--reps N] [--cpu-clock]
//   [--only softmax,tanh_colsum,layer_norm,gelu,attention_softmax,chain10]
#include <functional>
#include <random>

#include "bench/bench_common.hpp"
#include "bench/fused_peer.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"

using namespace hedra;

namespace {

struct Workload {
    std::string name;
    std::int64_t rows, cols;
    std::function<Array(const Array&)> program;
    std::function<void(const float*, float*, std::int64_t, std::int64_t, int)> peer;
    bool column_sums = false; // the output is one value per column
};

Array layer_norm_rows(const Array& x) {
    Array centered = x - mean(x, {1}, true);
    return centered * (1.0f / sqrt(mean(centered * centered, {1}, true) + 1e-5f));
}

Array gelu_tanh(const Array& x) {
    return 0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// W6: x + y, * x, - y, * 0.5, + 1, relu, tanh, * y, + x, neg on 1000 elements; the time of one
// call of the compiled program (its output preallocated by the program's result pool).
void time_chain10(const bench::Args& args) {
    const std::int64_t n = 1000;
    Array x = placeholder(Shape::of({n}), DType::F32, "x");
    Array y = placeholder(Shape::of({n}), DType::F32, "y");
    Array t = ((x + y) * x - y) * 0.5f + 1.0f;
    Array out = -(tanh(relu(t)) * y + x);
    std::vector<float> xv(n), yv(n), peer_out(n);
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (std::int64_t i = 0; i < n; ++i) {
        xv[i] = dist(gen);
        yv[i] = dist(gen);
    }
    HostArray xa = HostArray::from(xv, std::vector<std::int64_t>{n});
    HostArray ya = HostArray::from(yv, std::vector<std::int64_t>{n});
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        CompiledProgram program = compile({out}, {x, y}, options);
        const int reps = args.quick ? 50 : 2001;
        HostArray result;
        bench::select_clock(args, threads);
        bench::PairTimes t1 = bench::time_alternately(
            [&] {
                result = program({xa, ya})[0];
            },
            [&] { bench::chain10_peer(xv.data(), yv.data(), peer_out.data(), n); }, true, 20, reps);
        double diff = bench::max_relative_difference(result.values<float>().data(), peer_out.data(),
                                                     peer_out.size());
        if (!(diff < 1e-5)) {
            std::fprintf(stderr, "fused chain10: hedra and the peer differ by %g\n", diff);
            std::exit(1);
        }
        char extra[64];
        std::snprintf(extra, sizeof extra, "size=1000 hedra_us=%.2f", 1e3 * t1.hedra_ms);
        bench::print_line("chain10", threads, t1, "c_loop_1thread", extra);
    }
}

} // namespace

int main(int argc, char** argv) {
    bench::Args args = bench::parse_args(argc, argv);
    const bool q = args.quick;
    const int reps = args.reps > 0 ? args.reps : q ? 3 : 15;
    std::vector<Workload> workloads = {
        {"softmax", q ? 256 : 4096, q ? 128 : 1024,
         [](const Array& x) { return nn::softmax(x, 1); }, bench::softmax_peer},
        {"tanh_colsum", q ? 256 : 4096, q ? 128 : 1024,
         [](const Array& x) { return sum(tanh(x * 0.5f + 0.1f), {0}); },
         [](const float* in, float* out, std::int64_t r, std::int64_t c, int t) {
             bench::tanh_colsum_peer(in, out, r, c, 0.5f, 0.1f, t);
         },
         true},
        {"layer_norm", 768, 128, layer_norm_rows, bench::layer_norm_peer},
        {"gelu", 768, 512, gelu_tanh,
         [](const float* in, float* out, std::int64_t r, std::int64_t c, int t) {
             bench::gelu_peer(in, out, r * c, t);
         }},
        {"attention_softmax", 3072, 64, [](const Array& x) { return nn::softmax(x, 1); },
         bench::softmax_peer},
    };
    for (const Workload& w : workloads) {
        if (!args.wants(w.name)) continue;
        Array x = placeholder(Shape::of({w.rows, w.cols}), DType::F32, "x");
        Array y = w.program(x);
        std::mt19937 gen(11);
        std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
        std::vector<float> values(static_cast<std::size_t>(w.rows * w.cols));
        for (float& v : values)
            v = dist(gen);
        HostArray input = HostArray::from(values, std::vector<std::int64_t>{w.rows, w.cols});
        std::vector<float> peer_out(
            static_cast<std::size_t>(w.column_sums ? w.cols : w.rows * w.cols));
        // Small workloads repeat more, so that each line takes about as long.
        const int n = static_cast<int>(
            std::max<std::int64_t>(reps, reps * (4096 * 1024) / (4 * w.rows * w.cols)));
        for (int threads : args.threads) {
            ComputeOptions options;
            options.num_threads = threads;
            double c0 = bench::now_ms();
            CompiledProgram program = compile({y}, {x}, options);
            double compile_ms = bench::now_ms() - c0;
            HostArray out;
            bench::select_clock(args, threads);
            bench::PairTimes t = bench::time_alternately(
                [&] { out = program({input})[0]; },
                [&] {
                    w.peer(input.values<float>().data(), peer_out.data(), w.rows, w.cols, threads);
                },
                true, 1, n);
            double diff = bench::max_relative_difference(out.values<float>().data(),
                                                         peer_out.data(), peer_out.size());
            if (!(diff < 1e-3)) {
                std::fprintf(stderr, "fused %s: hedra and the peer differ by %g\n", w.name.c_str(),
                             diff);
                return 1;
            }
            char extra[96];
            std::snprintf(extra, sizeof extra, "shape=%lldx%lld compile_ms=%.1f", (long long)w.rows,
                          (long long)w.cols, compile_ms);
            bench::print_line(w.name, threads, t, "c_loop", extra);
        }
    }
    if (args.wants("chain10")) time_chain10(args);
    return 0;
}
