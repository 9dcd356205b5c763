// bench/jacobi: 10 sweeps of the 2D 5-point Jacobi stencil on 2048² f32, hedra (each sweep an
// overwrite of the interior with the mean of four shifted views; the 10 sweeps compile into
// one program) against a plain OpenMP loop compiled into this benchmark with -O3
// (jacobi_peer.cpp), both at 1 and 2 threads, timed alternately. Target (issue 3): speedup >= 0.9.
//   bench/jacobi [--quick] [--threads 1,2] [--reps N]
#include <random>

#include "bench/bench_common.hpp"
#include "bench/jacobi_peer.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

Array jacobi_sweeps(const Array& u0, std::int64_t n, int sweeps) {
    Array u = u0;
    Shape interior{range(1, n - 1), range(1, n - 1)};
    for (int s = 0; s < sweeps; ++s) {
        auto shifted = [&](std::int64_t di, std::int64_t dj) {
            return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
        };
        u = overwrite(
            {u, (shifted(-1, 0) + shifted(1, 0) + shifted(0, -1) + shifted(0, 1)) * 0.25f});
    }
    return u;
}

} // namespace

int main(int argc, char** argv) {
    bench::Args args = bench::parse_args(argc, argv);
    const std::int64_t n = args.quick ? 130 : 2048;
    const int sweeps = args.quick ? 3 : 10;
    const int reps = args.reps > 0 ? args.reps : args.quick ? 3 : 11;
    Array u0 = placeholder(Shape::of({n, n}), DType::F32, "u0");
    Array u = jacobi_sweeps(u0, n, sweeps);
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(std::size_t(n * n));
    for (float& v : values)
        v = dist(gen);
    HostArray input = HostArray::from(values, {n, n});
    std::vector<float> result(values.size()), scratch(values.size());
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        options.tile_sizes = args.tiles;
        double c0 = bench::now_ms();
        CompiledProgram program = compile({u}, {u0}, options);
        double compile_ms = bench::now_ms() - c0;
        HostArray out;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately(
            [&] { out = program({input})[0]; },
            [&] {
                bench::jacobi_peer(input.values<float>().data(), result.data(), scratch.data(), n,
                                   sweeps, threads);
            },
            true, 1, reps);
        double diff = bench::max_relative_difference(out.values<float>().data(), result.data(),
                                                     result.size());
        if (!(diff < 1e-5)) {
            std::fprintf(stderr, "jacobi: hedra and the peer differ by %g\n", diff);
            return 1;
        }
        char extra[128];
        std::snprintf(extra, sizeof extra, "n=%lld sweeps=%d ms_per_sweep=%.3g compile_ms=%.1f",
                      (long long)n, sweeps, t.hedra_ms / sweeps, compile_ms);
        bench::print_line("jacobi_" + std::to_string(n), threads, t, "openmp_loop", extra);
    }
    return 0;
}
