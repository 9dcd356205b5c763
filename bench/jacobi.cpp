// bench/jacobi: 10 sweeps of the 2D 5-point Jacobi stencil on 2048² f32, hedra (each sweep an
// overwrite of the interior with the mean of four shifted views; the 10 sweeps compile into
// one program) against a plain OpenMP loop compiled into this benchmark with -O3
// (jacobi_peer.cpp), both at 1 and 2 threads, timed alternately (line jacobi_2048). Line
// jacobi_2048_sweep: one sweep between two grids, as W4's peers run it (Inductor writes the
// interior of the other grid in place): hedra's program overwrites the interior of a donated
// grid v with the stencil of u, the peer's loop the interior of its v.
//   bench/jacobi [--quick] [--threads 1,2] [--reps N] [--only jacobi_2048,jacobi_2048_sweep]
#include <random>

#include "bench/bench_common.hpp"
#include "bench/jacobi_peer.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

Array stencil(const Array& u, std::int64_t n) {
    Shape interior{range(1, n - 1), range(1, n - 1)};
    auto shifted = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    return (shifted(-1, 0) + shifted(1, 0) + shifted(0, -1) + shifted(0, 1)) * 0.25f;
}

Array jacobi_sweeps(const Array& u0, std::int64_t n, int sweeps) {
    Array u = u0;
    for (int s = 0; s < sweeps; ++s)
        u = overwrite({u, stencil(u, n)});
    return u;
}

// One sweep u -> v, ping-pong: v's memory donated and overwritten in its interior.
bool one_sweep(const bench::Args& args, const HostArray& input, std::int64_t n, int reps) {
    Array u = placeholder(Shape::of({n, n}), DType::F32, "u");
    Array v = placeholder(Shape::of({n, n}), DType::F32, "v");
    Array next = overwrite({v, stencil(u, n)});
    std::span<const float> values = input.values<float>();
    std::vector<float> peer_u(values.begin(), values.end()), peer_v(peer_u);
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        options.donate = {1};
        double c0 = bench::now_ms();
        CompiledProgram program = compile({next}, {u, v}, options);
        double compile_ms = bench::now_ms() - c0;
        HostArray grid_v = HostArray::from(peer_u, {n, n});
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately(
            [&] {
                std::vector<HostArray> in{input, std::move(grid_v)};
                grid_v = program(std::move(in))[0];
            },
            [&] { bench::jacobi_peer_sweep(peer_u.data(), peer_v.data(), n, threads); }, true, 1,
            reps);
        double diff = bench::max_relative_difference(grid_v.values<float>().data(), peer_v.data(),
                                                     peer_v.size());
        if (!(diff < 1e-6)) {
            std::fprintf(stderr, "jacobi one sweep: hedra and the peer differ by %g\n", diff);
            return false;
        }
        char extra[128];
        std::snprintf(extra, sizeof extra, "n=%lld sweeps=1 compile_ms=%.1f", (long long)n,
                      compile_ms);
        bench::print_line("jacobi_" + std::to_string(n) + "_sweep", threads, t, "openmp_loop",
                          extra);
    }
    return true;
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
    if (args.wants("jacobi_" + std::to_string(n) + "_sweep") &&
        !one_sweep(args, input, n, args.quick ? 3 : 21))
        return 1;
    if (!args.wants("jacobi_" + std::to_string(n))) return 0;
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
