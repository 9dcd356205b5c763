// bench/fused: the memory-bound and transcendental workloads of ../shared/bench (W5a row softmax
// and W5b the column sum of tanh(0.5 x + 0.1), 4096 x 1024 f32; W6 the per-call cost of a
// compiled chain of 10 elementwise ops on 1000 elements), hedra against plain C loops
// compiled into this benchmark with -O3 -march=native -ffast-math (fused_peer.cpp), timed
// alternately at 1 and 2 threads; results checked against each other.
//   bench/fused [--quick] [--threads 1,2] [--reps N] [--only softmax,tanh_colsum,chain10]
//   [--cpu-clock]
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
    Array output;
    std::function<void(const float*, float*, int)> peer;
    std::int64_t out_size;
};

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
    const std::int64_t rows = args.quick ? 256 : 4096, cols = args.quick ? 128 : 1024;
    const int reps = args.reps > 0 ? args.reps : args.quick ? 3 : 15;
    Array x = placeholder(Shape::of({rows, cols}), DType::F32, "x");
    std::vector<Workload> workloads = {
        {"softmax", nn::softmax(x, 1),
         [&](const float* in, float* out, int t) { bench::softmax_peer(in, out, rows, cols, t); },
         rows * cols},
        {"tanh_colsum", sum(tanh(x * 0.5f + 0.1f), {0}),
         [&](const float* in, float* out, int t) {
             bench::tanh_colsum_peer(in, out, rows, cols, 0.5f, 0.1f, t);
         },
         cols},
    };
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    std::vector<float> values(static_cast<std::size_t>(rows * cols));
    for (float& v : values)
        v = dist(gen);
    HostArray input = HostArray::from(values, std::vector<std::int64_t>{rows, cols});
    for (const Workload& w : workloads) {
        if (!args.wants(w.name)) continue;
        std::vector<float> peer_out(static_cast<std::size_t>(w.out_size));
        for (int threads : args.threads) {
            ComputeOptions options;
            options.num_threads = threads;
            double c0 = bench::now_ms();
            CompiledProgram program = compile({w.output}, {x}, options);
            double compile_ms = bench::now_ms() - c0;
            HostArray out;
            bench::select_clock(args, threads);
            bench::PairTimes t = bench::time_alternately(
                [&] { out = program({input})[0]; },
                [&] { w.peer(input.values<float>().data(), peer_out.data(), threads); }, true, 1,
                reps);
            double diff = bench::max_relative_difference(out.values<float>().data(),
                                                         peer_out.data(), peer_out.size());
            if (!(diff < 1e-3)) {
                std::fprintf(stderr, "fused %s: hedra and the peer differ by %g\n", w.name.c_str(),
                             diff);
                return 1;
            }
            char extra[96];
            std::snprintf(extra, sizeof extra, "shape=%lldx%lld compile_ms=%.1f", (long long)rows,
                          (long long)cols, compile_ms);
            bench::print_line(w.name, threads, t, "c_loop", extra);
        }
    }
    if (args.wants("chain10")) time_chain10(args);
    return 0;
}
