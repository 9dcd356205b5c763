// bench/matmul: C = A·B in f32 for N = 256, 512, 1024, 2048, hedra's compiled matmul (a view, a
// map and a sum: no hand-written kernel) against OpenBLAS cblas_sgemm, both at 1 and 2 threads,
// timed alternately in this process. Target (issue 3): speedup >= 0.5 at N = 1024 and 2048.
// OpenBLAS is a benchmark-only dependency; without it the lines say peer=missing(openblas).
//   bench/matmul [--quick] [--threads 1,2] [--reps N] [--only 1024,2048]
#include <random>

#include "bench/bench_common.hpp"
#include "hedra.hpp"

#ifdef HEDRA_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

using namespace hedra;

namespace {

std::vector<float> random_matrix(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(n * n));
    for (float& x : v)
        x = dist(gen);
    return v;
}

int default_reps(std::int64_t n) {
    return n <= 256 ? 41 : n <= 512 ? 15 : n <= 1024 ? 7 : 3;
}

} // namespace

int main(int argc, char** argv) {
    bench::reexec_without_openblas_overrides(argv);
    bench::Args args = bench::parse_args(argc, argv);
    std::vector<std::int64_t> sizes = {256, 512, 1024, 2048};
    if (args.quick) sizes = {64, 96};
#ifdef HEDRA_BENCH_HAVE_OPENBLAS
    const bool have_peer = true;
    const std::string peer = "openblas";
#else
    const bool have_peer = false;
    const std::string peer = "missing(openblas)";
    std::fprintf(stderr, "matmul: OpenBLAS was not found at configure time (Debian: apt-get "
                         "install libopenblas-dev); timing hedra only\n");
#endif
    for (std::int64_t n : sizes) {
        if (!args.wants(std::to_string(n))) continue;
        Array a = placeholder(Shape::of({n, n}), DType::F32, "a");
        Array b = placeholder(Shape::of({n, n}), DType::F32, "b");
        HostArray ha = HostArray::from(random_matrix(n, 1), {n, n});
        HostArray hb = HostArray::from(random_matrix(n, 2), {n, n});
        std::vector<float> c(static_cast<std::size_t>(n * n));
        for (int threads : args.threads) {
            ComputeOptions options;
            options.num_threads = threads;
            options.tile_sizes = args.tiles;
            double c0 = bench::now_ms();
            CompiledProgram program = compile({matmul(a, b)}, {a, b}, options);
            double compile_ms = bench::now_ms() - c0;
            HostArray result;
            auto run_hedra = [&] { result = program({ha, hb})[0]; };
            auto run_peer = [&] {
#ifdef HEDRA_BENCH_HAVE_OPENBLAS
                openblas_set_num_threads(threads);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f,
                            ha.values<float>().data(), int(n), hb.values<float>().data(), int(n),
                            0.0f, c.data(), int(n));
#endif
            };
            int reps = args.reps > 0 ? args.reps : args.quick ? 3 : default_reps(n);
            bench::select_clock(args, threads);
            bench::PairTimes t = bench::time_alternately(run_hedra, run_peer, have_peer, 1, reps);
            double flop = 2.0 * double(n) * double(n) * double(n);
            std::string extra = "hedra_gflops=" + std::to_string(int(flop / t.hedra_ms / 1e6));
            if (have_peer) {
                extra += " peer_gflops=" + std::to_string(int(flop / t.peer_ms / 1e6));
                double diff = bench::max_relative_difference(result.values<float>().data(),
                                                             c.data(), c.size());
                if (!(diff < 1e-3)) {
                    std::fprintf(stderr, "matmul %lld: hedra and openblas differ by %g\n",
                                 (long long)n, diff);
                    return 1;
                }
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, " compile_ms=%.1f", compile_ms);
            bench::print_line("matmul_" + std::to_string(n), threads, t, peer, extra + buf);
        }
    }
    return 0;
}
