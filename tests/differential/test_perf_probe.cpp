// Performance probes of the openmp backend (skipped by default; run with
//   hedra_differential_tests -tc="perf*" --no-skip
// ): matmul GFLOP/s at 1 and 2 threads against a naive triple loop compiled by the same JIT,
// and cold/warm compile times. Prints one line per measurement.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <tuple>

#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/lower.hpp"
#include "differential/differential.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

// Process CPU time: on a loaded machine it measures single-threaded kernels far more stably
// than wall time (HEDRA_PERF_WALL=1 switches to wall time).
double now_ms() {
    if (std::getenv("HEDRA_PERF_WALL"))
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    return 1000.0 * double(std::clock()) / CLOCKS_PER_SEC;
}

template <class F>
double median_ms(F&& f, int reps) {
    f(); // warm-up
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        double s = now_ms();
        f();
        t.push_back(now_ms() - s);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

const char* kNaive = R"(
extern "C" void naive(const float* a, const float* b, float* c, long n) {
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            float s = 0;
            for (long k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}
)";

} // namespace

TEST_CASE("perf: matmul" * doctest::skip()) {
    auto omp = test::openmp_backend();
    auto naive_module = backend::JitCompiler::instance().compile(kNaive, {"-ffp-contract=off"});
    auto naive = naive_module->function<void(const float*, const float*, float*, long)>("naive");
    std::vector<std::int64_t> sizes = {256, 512, 1024};
    if (const char* env = std::getenv("HEDRA_PERF_SIZES")) sizes = {std::atol(env)};
    for (std::int64_t n : sizes) {
        Array a = placeholder(Shape::of({n, n})), b = placeholder(Shape::of({n, n}));
        ComputeOptions options;
        options.backend = "openmp";
        if (const char* t = std::getenv("HEDRA_PERF_TILES")) {
            std::string s = t;
            for (std::size_t p = 0; p < s.size();) {
                std::size_t q = s.find(',', p);
                options.tile_sizes.push_back(std::atol(s.substr(p, q - p).c_str()));
                p = q == std::string::npos ? s.size() : q + 1;
            }
        }
        double c0 = now_ms();
        CompiledProgram prog = compile({matmul(a, b)}, {a, b}, options);
        double compile_ms = now_ms() - c0;
        HostArray ha = HostArray::from(test::random_values(std::size_t(n * n), 1), {n, n});
        HostArray hb = HostArray::from(test::random_values(std::size_t(n * n), 2), {n, n});
        double flop = 2.0 * double(n) * double(n) * double(n);
        std::vector<float> c(std::size_t(n * n));
        double naive_ms = 0;
        if (n <= 512 || std::getenv("HEDRA_PERF_NAIVE"))
            naive_ms = median_ms(
                [&] { naive(ha.values<float>().data(), hb.values<float>().data(), c.data(), n); },
                3);
        for (int threads : {1, 2}) {
            setenv("HEDRA_NUM_THREADS", std::to_string(threads).c_str(), 1);
            double ms = median_ms([&] { prog({ha, hb}); }, n >= 1024 ? 5 : 9);
            std::printf("matmul n=%lld threads=%d hedra_ms=%.2f gflops=%.1f naive_ms=%.2f "
                        "naive_gflops=%.2f compile_ms=%.1f\n",
                        (long long)n, threads, ms, flop / ms / 1e6, naive_ms,
                        naive_ms > 0 ? flop / naive_ms / 1e6 : 0.0, compile_ms);
        }
        unsetenv("HEDRA_NUM_THREADS");
    }
}

TEST_CASE("perf: compile times and per-call overhead" * doctest::skip()) {
    auto omp = test::openmp_backend();
    // A 20-node elementwise + reduction graph over a placeholder.
    Array x = placeholder(Shape::of({64, 48}), DType::F32, "x");
    Array h = x;
    for (int i = 0; i < 6; ++i)
        h = tanh(h * 0.5f + float(i)) - sigmoid(h);
    Array y = sum(h, {1}) + max(h, {1}) + exp(mean(x, {1}));
    ComputeOptions options;
    options.backend = "openmp";
    auto lowered_ms = [&](const std::vector<Array>& outs, const std::vector<Array>& ins) {
        std::vector<NodePtr> o, p;
        for (const Array& a : outs)
            o.push_back(a.node());
        for (const Array& a : ins)
            p.push_back(a.node());
        double s = now_ms();
        poly::ProgramIR ir = sched::partition(o, p);
        double part = now_ms() - s;
        backend::LoweredProgram lp = backend::lower(ir);
        std::printf("  partition_ms=%.2f isl_ms=%.2f total_lower_ms=%.2f kernels=%zu\n", part,
                    lp.isl_ms, now_ms() - s, ir.kernels.size());
        return lp;
    };
    Array a = placeholder(Shape::of({512, 512})), b = placeholder(Shape::of({512, 512}));
    for (auto& [name, outs, ins] :
         std::vector<std::tuple<std::string, std::vector<Array>, std::vector<Array>>>{
             {"matmul512", {matmul(a, b)}, {a, b}}, {"graph20", {y}, {x}}}) {
        std::printf("%s:\n", name.c_str());
        backend::LoweredProgram lp = lowered_ms(outs, ins);
        double s = now_ms();
        auto module = backend::JitCompiler::instance().compile(
            lp.source + "// cold " + std::to_string(std::rand()) + "\n",
            {"-ffp-contract=off", "-fno-math-errno"});
        std::printf("  clang_cold_ms=%.1f\n", now_ms() - s);
        s = now_ms();
        CompiledProgram p1 = compile(outs, ins, options);
        double first = now_ms() - s;
        s = now_ms();
        CompiledProgram p2 = compile(outs, ins, options);
        std::printf("  compile() first_ms=%.1f (disk cache may hit) program_cache_hit_ms=%.3f\n",
                    first, now_ms() - s);
    }
    // Per-call overhead of a compiled program on a tiny input (the default parallel threshold,
    // not the differential tests' 0: a tiny kernel runs sequentially).
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
    Array t = placeholder(Shape::of({4}));
    CompiledProgram tiny = compile({t * 2.0f + 1.0f}, {t}, options);
    HostArray in = HostArray::from(std::vector<float>{1, 2, 3, 4}, {4});
    int reps = 20000;
    auto wall = [] { return 1000.0 * now_ms(); };
    tiny({in});
    double s = wall();
    for (int r = 0; r < reps; ++r)
        tiny({in});
    std::printf("per_call_us=%.2f (tiny compiled program)\n", (wall() - s) / reps);
    // compute() on a rebuilt graph of the same structure (program cache hit).
    s = wall();
    for (int r = 0; r < 200; ++r) {
        Array d = array(std::vector<float>{1, 2, 3, float(r)}, Shape::of({4}));
        compute(d * 2.0f + 1.0f, options);
    }
    std::printf("rebuilt_compute_us=%.2f (build graph + cache lookup + run)\n", (wall() - s) / 200);
}

namespace {

const char* kJacobiPeer = R"(
extern "C" void jacobi(const float* in, float* out, long n, int threads) {
    #pragma omp parallel for num_threads(threads)
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
            out[i * n + j] = (i == 0 || j == 0 || i == n - 1 || j == n - 1)
                                 ? in[i * n + j]
                                 : (in[(i - 1) * n + j] + in[(i + 1) * n + j] +
                                    in[i * n + j - 1] + in[i * n + j + 1]) * 0.25f;
}
)";

} // namespace

TEST_CASE("perf: jacobi" * doctest::skip()) {
    test::openmp_backend();
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
    std::int64_t n = 2048;
    int sweeps = 10;
    Array u0 = placeholder(Shape::of({n, n}));
    Array u = u0;
    Shape interior{range(1, n - 1), range(1, n - 1)};
    for (int s = 0; s < sweeps; ++s) {
        auto shifted = [&](std::int64_t di, std::int64_t dj) {
            return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
        };
        u = overwrite(
            {u, (shifted(-1, 0) + shifted(1, 0) + shifted(0, -1) + shifted(0, 1)) * 0.25f});
    }
    ComputeOptions options;
    options.backend = "openmp";
    CompiledProgram prog = compile({u}, {u0}, options);
    auto peer_module = backend::JitCompiler::instance().compile(kJacobiPeer, {"-ffp-contract=off"});
    auto peer = peer_module->function<void(const float*, float*, long, int)>("jacobi");
    HostArray in = HostArray::from(test::random_values(std::size_t(n * n), 5), {n, n});
    std::vector<float> a(in.values<float>().begin(), in.values<float>().end()), b(a.size());
    for (int threads : {1, 2}) {
        setenv("HEDRA_NUM_THREADS", std::to_string(threads).c_str(), 1);
        double ms = median_ms([&] { prog({in}); }, 5);
        double peer_ms = median_ms(
            [&] {
                for (int s = 0; s < sweeps; ++s) {
                    peer(s % 2 ? b.data() : a.data(), s % 2 ? a.data() : b.data(), n, threads);
                }
            },
            5);
        std::printf("jacobi n=%lld sweeps=%d threads=%d hedra_ms=%.2f peer_ms=%.2f speedup=%.2f\n",
                    (long long)n, sweeps, threads, ms, peer_ms, peer_ms / ms);
    }
    unsetenv("HEDRA_NUM_THREADS");
}
