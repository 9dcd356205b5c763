// bench/matmul: C = A·B in f32 for N = 256, 512, 1024, 2048, hedra's compiled matmul (a view, a
// map and a sum: no hand-written kernel) against OpenBLAS cblas_sgemm, both at 1 and 2 threads,
// timed alternately in this process. Target (issue 3): speedup >= 0.5 at N = 1024 and 2048.
// Then the three contractions of a linear layer's training step at the W8 GPT's sizes (2048
// tokens, width 384, the MLP's 1536): the forward y = x·wᵀ, the input gradient dx = dy·w and the
// weight gradient dw = dyᵀ·x, whose sum runs over the tokens (linear_fwd, linear_dx, linear_dw),
// and the same for the MLP's second layer, 1536 -> 384 (linear2_fwd, linear2_dx, linear2_dw).
// OpenBLAS is a benchmark-only dependency; without it the lines say peer=missing(openblas).
//   bench/matmul [--quick] [--threads 1,2] [--reps N] [--only 1024,2048,linear_dw]
#include <random>

#include "bench/bench_common.hpp"
#include "hedra.hpp"

#ifdef HEDRA_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

using namespace hedra;

namespace {

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (float& x : v)
        x = dist(gen);
    return v;
}

std::vector<float> random_matrix(std::int64_t n, unsigned seed) {
    return random_matrix(n, n, seed);
}

// One contraction of a linear layer: C[m,n] = sum_k A·B with A stored [m,k] or [k,m] (a_t)
// and B stored [k,n] or [n,k] (b_t), as the layer's tensors are.
struct LinearCase {
    const char* name;
    std::int64_t m, n, k;
    bool a_t, b_t;
};

int default_reps(std::int64_t n) {
    return n <= 256 ? 41 : n <= 512 ? 15 : n <= 1024 ? 7 : 3;
}

// C[m,n] = sum_k A·B as cblas_sgemm sees it: A stored row-major [m,k] (or [k,m] with a_t) with
// leading dimension lda, B [k,n] (or [n,k] with b_t) with ldb.
struct Gemm {
    std::int64_t m, n, k;
    bool a_t, b_t;
    std::int64_t lda, ldb;
};

// Compiles `c_lazy` over placeholders {a, b}, times it on {ha, hb} against OpenBLAS's `gemm` of
// the same data at each thread count, checks that the two agree and prints the line; false
// when they differ.
bool time_contraction(const std::string& name, const bench::Args& args, int default_reps,
                      const Array& c_lazy, const Array& a, const Array& b, const HostArray& ha,
                      const HostArray& hb, const Gemm& gemm) {
#ifdef HEDRA_BENCH_HAVE_OPENBLAS
    const bool have_peer = true;
    const std::string peer = "openblas";
#else
    const bool have_peer = false;
    const std::string peer = "missing(openblas)";
#endif
    std::vector<float> c(static_cast<std::size_t>(gemm.m * gemm.n));
    for (int threads : args.threads) {
        ComputeOptions options;
        options.num_threads = threads;
        options.tile_sizes = args.tiles;
        double c0 = bench::now_ms();
        CompiledProgram program = compile({c_lazy}, {a, b}, options);
        double compile_ms = bench::now_ms() - c0;
        HostArray result;
        auto run_hedra = [&] { result = program({ha, hb})[0]; };
        auto run_peer = [&] {
#ifdef HEDRA_BENCH_HAVE_OPENBLAS
            openblas_set_num_threads(threads);
            cblas_sgemm(CblasRowMajor, gemm.a_t ? CblasTrans : CblasNoTrans,
                        gemm.b_t ? CblasTrans : CblasNoTrans, int(gemm.m), int(gemm.n), int(gemm.k),
                        1.0f, ha.values<float>().data(), int(gemm.lda), hb.values<float>().data(),
                        int(gemm.ldb), 0.0f, c.data(), int(gemm.n));
#endif
        };
        int reps = args.reps > 0 ? args.reps : args.quick ? 3 : default_reps;
        bench::select_clock(args, threads);
        bench::PairTimes t = bench::time_alternately(run_hedra, run_peer, have_peer, 1, reps);
        double flop = 2.0 * double(gemm.m) * double(gemm.n) * double(gemm.k);
        std::string extra = "hedra_gflops=" + std::to_string(int(flop / t.hedra_ms / 1e6));
        if (have_peer) {
            extra += " peer_gflops=" + std::to_string(int(flop / t.peer_ms / 1e6));
            double diff =
                bench::max_relative_difference(result.values<float>().data(), c.data(), c.size());
            if (!(diff < 1e-3)) {
                std::fprintf(stderr, "%s: hedra and openblas differ by %g\n", name.c_str(), diff);
                return false;
            }
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, " compile_ms=%.1f", compile_ms);
        bench::print_line(name, threads, t, peer, extra + buf);
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    bench::reexec_without_openblas_overrides(argv);
    bench::Args args = bench::parse_args(argc, argv);
#ifndef HEDRA_BENCH_HAVE_OPENBLAS
    std::fprintf(stderr, "matmul: OpenBLAS was not found at configure time (Debian: apt-get "
                         "install libopenblas-dev); timing hedra only\n");
#endif
    std::vector<std::int64_t> sizes = {256, 512, 1024, 2048};
    if (args.quick) sizes = {64, 96};
    for (std::int64_t n : sizes) {
        if (!args.wants(std::to_string(n))) continue;
        Array a = placeholder(Shape::of({n, n}), DType::F32, "a");
        Array b = placeholder(Shape::of({n, n}), DType::F32, "b");
        HostArray ha = HostArray::from(random_matrix(n, 1), {n, n});
        HostArray hb = HostArray::from(random_matrix(n, 2), {n, n});
        if (!time_contraction("matmul_" + std::to_string(n), args, default_reps(n), matmul(a, b), a,
                              b, ha, hb, Gemm{n, n, n, false, false, n, n}))
            return 1;
    }
    const std::int64_t tokens = args.quick ? 64 : 2048, width = args.quick ? 32 : 384,
                       hidden = 4 * width;
    const LinearCase linear[] = {
        {"linear_fwd", tokens, hidden, width, false, true}, // x[t,c] · w[h,c]ᵀ
        {"linear_dx", tokens, width, hidden, false, false}, // dy[t,h] · w[h,c]
        {"linear_dw", hidden, width, tokens, true, false},  // dy[t,h]ᵀ · x[t,c]
        // The MLP's second layer, hidden -> width: its forward sums over the hidden units.
        {"linear2_fwd", tokens, width, hidden, false, true}, // h[t,h] · w[c,h]ᵀ
        {"linear2_dx", tokens, hidden, width, false, false}, // dy[t,c] · w[c,h]
        {"linear2_dw", width, hidden, tokens, true, false},  // dy[t,c]ᵀ · h[t,h]
    };
    // The tokens as the GPT holds them, (batch, position): a contraction over both (the weight
    // gradient) or beside both (the forward and input gradient), as the step's kernels are.
    const std::int64_t batch = args.quick ? 2 : 8, positions = tokens / batch;
    for (const LinearCase& lc : linear) {
        if (!args.wants(lc.name)) continue;
        const Shape a_shape = lc.a_t ? Shape::of({lc.k, lc.m}) : Shape::of({lc.m, lc.k});
        const Shape b_shape = lc.b_t ? Shape::of({lc.n, lc.k}) : Shape::of({lc.k, lc.n});
        const bool dw = lc.a_t;
        const std::int64_t a_cols = a_shape[1].size, b_cols = b_shape[1].size;
        Array a = placeholder(Shape::of({batch, positions, a_cols}), DType::F32, "a");
        Array b = dw ? placeholder(Shape::of({batch, positions, b_cols}), DType::F32, "b")
                     : placeholder(b_shape, DType::F32, "b");
        Array c_lazy;
        if (dw) // dy[b,t,m]ᵀ · x[b,t,n]
            c_lazy = sum(unflatten(a, 2, {lc.m, 1}) * unflatten(b, 2, {1, lc.n}), {0, 1});
        else if (lc.b_t) // x[b,t,k] · w[n,k]ᵀ
            c_lazy = sum(unflatten(a, 2, {1, lc.k}) * unflatten(b, 0, {1, 1, lc.n}), {3});
        else // dy[b,t,k] · w[k,n]
            c_lazy = sum(unflatten(a, 2, {lc.k, 1}) * unflatten(b, 0, {1, 1, lc.k}), {2});
        HostArray ha =
            HostArray::from(random_matrix(a_shape[0].size, a_cols, 1), {batch, positions, a_cols});
        HostArray hb = dw ? HostArray::from(random_matrix(b_shape[0].size, b_cols, 2),
                                            {batch, positions, b_cols})
                          : HostArray::from(random_matrix(b_shape[0].size, b_cols, 2),
                                            {b_shape[0].size, b_cols});
        if (!time_contraction(lc.name, args, 9, c_lazy, a, b, ha, hb,
                              Gemm{lc.m, lc.n, lc.k, lc.a_t, lc.b_t, a_cols, b_cols}))
            return 1;
    }
    return 0;
}
