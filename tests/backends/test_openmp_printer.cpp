// Tests of the openmp code generator on hand-built kernel IR (backends/openmp/lower.hpp,
// c_renderer.hpp, c_expr.hpp): the printed program compiles in process and computes what naive
// loops compute, at 1 and 2 threads and several tile sizes; scalar semantics follow
// core/scalar_eval (wrapping integers, x/0 == 0, NaN-propagating min/max).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/lower.hpp"
#include "scheduler/target.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;

namespace {

using Entry = void (*)(void**, int);

std::shared_ptr<backend::CompiledModule> build(const poly::ProgramIR& p,
                                               std::vector<std::int64_t> tiles = {}) {
    backend::LowerOptions lo;
    lo.tile_sizes = std::move(tiles);
    lo.min_parallel_work = 0; // parallel regions even for these small kernels
    backend::LoweredProgram lowered = backend::lower(p, lo);
    return backend::JitCompiler::instance().compile(lowered.source,
                                                    {"-ffp-contract=off", "-fno-math-errno"});
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(gen);
    return v;
}

} // namespace

TEST_CASE("openmp printer: matmul matches naive loops at 1 and 2 threads, several tiles") {
    for (auto [m, n, k] : {std::array<std::int64_t, 3>{1, 1, 1},
                           {7, 33, 5},
                           {64, 48, 80},
                           {33, 1, 7},
                           {100, 130, 70}}) {
        for (std::vector<std::int64_t> tiles :
             {std::vector<std::int64_t>{}, {4}, {16, 8, 32}, {1, 1, 1}}) {
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            CAPTURE(tiles.size());
            auto module = build(test::matmul_ir(m, n, k), tiles);
            auto entry = module->function<void(void**, int)>("hedra_program");
            std::vector<float> a = random_floats(std::size_t(m * k), 1);
            std::vector<float> b = random_floats(std::size_t(k * n), 2);
            std::vector<double> want(std::size_t(m * n), 0.0);
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    for (std::int64_t l = 0; l < k; ++l)
                        want[i * n + j] += double(a[i * k + l]) * double(b[l * n + j]);
            for (int threads : {1, 2}) {
                std::vector<float> c(std::size_t(m * n), 123.0f);
                void* buffers[] = {a.data(), b.data(), c.data()};
                entry(buffers, threads);
                for (std::size_t e = 0; e < c.size(); ++e)
                    REQUIRE(c[e] == doctest::Approx(want[e]).epsilon(1e-4));
            }
        }
    }
}

TEST_CASE("openmp printer: transpose with an index read is exact") {
    auto module = build(test::transpose_ir(37, 70));
    auto entry = module->function<void(void**, int)>("hedra_program");
    std::vector<float> in = random_floats(70 * 37, 3);
    std::vector<float> out(37 * 70);
    void* buffers[] = {in.data(), out.data()};
    entry(buffers, 2);
    for (int i = 0; i < 37; ++i)
        for (int j = 0; j < 70; ++j)
            REQUIRE(out[i * 70 + j] == in[j * 37 + i] * 2.0f + float(i));
}

TEST_CASE("openmp printer: scalar semantics agree with the reference evaluator") {
    // out[o, i] = op_o(a[i], b[i]) for i32 and f32 operands, against hedra::evaluate.
    const std::vector<ScalarOp> ops = {ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul, ScalarOp::Div,
                                       ScalarOp::Pow, ScalarOp::Min, ScalarOp::Max};
    const std::vector<std::int32_t> ia = {0, 7, -7, 2147483647, -2147483647 - 1, 3, -1, 5};
    const std::vector<std::int32_t> ib = {0, 0, 2, 1, -1, -2, 31, 3};
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> fa = {0.5f, -3.0f, nan, 1e30f, 2.0f, -0.0f, 7.25f, 1.0f};
    const std::vector<float> fb = {2.0f, 0.0f, 1.0f, 1e30f, nan, 0.0f, -2.5f, 3.0f};
    for (DType t : {DType::I32, DType::F32}) {
        std::int64_t n = 8, nops = std::int64_t(ops.size());
        poly::ProgramIR p;
        p.buffers = {test::ir_buffer("b0", {n}, poly::BufferRole::Input, t),
                     test::ir_buffer("b1", {n}, poly::BufferRole::Input, t),
                     test::ir_buffer("b2", {nops, n}, poly::BufferRole::Output, t)};
        poly::Kernel kernel{"k0", {}};
        for (std::int64_t o = 0; o < nops; ++o) {
            poly::Statement s;
            s.name = "S" + std::to_string(o);
            s.extents = {n};
            s.write_buffer = 2;
            s.write_access = AffineMap(1, 2, {0, 1}, {o, 0});
            s.reads = {{0, AffineMap::identity(1)}, {1, AffineMap::identity(1)}};
            s.value = scalar_binary(ops[o], scalar_input(0, t), scalar_input(1, t));
            kernel.statements.push_back(s);
        }
        p.kernels.push_back(kernel);
        auto module = build(p);
        auto entry = module->function<void(void**, int)>("hedra_program");
        std::vector<std::int32_t> iout(std::size_t(nops * n));
        std::vector<float> fout(std::size_t(nops * n));
        std::vector<std::int32_t> ia2 = ia, ib2 = ib;
        std::vector<float> fa2 = fa, fb2 = fb;
        void* ibuf[] = {ia2.data(), ib2.data(), iout.data()};
        void* fbuf[] = {fa2.data(), fb2.data(), fout.data()};
        entry(t == DType::I32 ? ibuf : fbuf, 2);
        for (std::int64_t o = 0; o < nops; ++o)
            for (std::int64_t i = 0; i < n; ++i) {
                CAPTURE(scalar_op_name(ops[o]));
                CAPTURE(i);
                ScalarValue x =
                    t == DType::I32 ? ScalarValue::of(ia[i], t) : ScalarValue::of(fa[i], t);
                ScalarValue y =
                    t == DType::I32 ? ScalarValue::of(ib[i], t) : ScalarValue::of(fb[i], t);
                ScalarValue want = evaluate(p.kernels[0].statements[o].value, {x, y});
                if (t == DType::I32) {
                    CHECK(iout[o * n + i] == want.i);
                } else {
                    float got = fout[o * n + i];
                    float w = static_cast<float>(want.f);
                    CHECK((std::memcmp(&got, &w, 4) == 0 || (std::isnan(got) && std::isnan(w))));
                }
            }
    }
}

TEST_CASE("openmp printer: deterministic output; matmul becomes a register-tiled micro-kernel") {
    poly::ProgramIR p = test::matmul_ir(200, 300, 100);
    std::string first = backend::lower(p).source;
    CHECK(first == backend::lower(p).source);
    const int width = 2 * sched::cpu_target().vector_bytes / 4; // 2 vectors of f32
    CHECK(first.find("register tile: 6 x " + std::to_string(width)) != std::string::npos);
    CHECK(first.find("hd_pk0") != std::string::npos); // the B panel is packed
    CHECK(first.find("#pragma omp parallel for") != std::string::npos);
    // The parallel loop's body is a function of its own that clang may not inline into the
    // loop (there it would unroll and scalarize the lane reductions' accumulators).
    CHECK(first.find("__attribute__((noinline)) static void k0_p0(") != std::string::npos);
    // A transpose has no contraction: no micro-kernel.
    CHECK(backend::lower(test::transpose_ir(300, 300)).source.find("register tile") ==
          std::string::npos);
}
