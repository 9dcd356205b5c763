// Row-local buffers (kernel_ir.hpp, row_fusion.hpp): a temporary that one row-fused kernel
// writes and reads row by row is kept one row per thread inside the kernel, never in memory.
// Checked on the programs that have them (softmax, log-softmax, a layer norm's mean and
// variance) at sizes that run in parallel, on both C backends, against the reference backend.
#include <doctest/doctest.h>

#include <random>

#include "backends/common/buffer_plan.hpp"
#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

Array layer_norm_rows(const Array& x) {
    Array centered = x - mean(x, {1}, true);
    return centered * (1.0f / sqrt(mean(centered * centered, {1}, true) + 1e-5f));
}

HostArray random_matrix(std::int64_t rows, std::int64_t cols) {
    std::mt19937 gen(17);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (float& f : v)
        f = dist(gen);
    return HostArray::from(v, std::vector<std::int64_t>{rows, cols});
}

} // namespace

TEST_CASE("row-local: softmax, log-softmax and layer norm keep no temporary in memory") {
    Array x = placeholder(Shape::of({300, 173}), DType::F32, "x");
    for (Array y : {nn::softmax(x, 1), nn::log_softmax(x, 1), layer_norm_rows(x)}) {
        poly::ProgramIR ir = sched::partition({y.node()}, {x.node()});
        CAPTURE(poly::to_string(ir));
        CHECK(ir.kernels.size() == 1);
        int local = 0;
        for (const poly::Buffer& b : ir.buffers) {
            CHECK((b.role != poly::BufferRole::Temporary || b.row_local == 1));
            local += b.row_local;
        }
        CHECK(local >= 2);
        CHECK(backend::plan_temporaries(ir).slot_bytes.empty());
        // One row of each (a row of 173, or the row's max, sum or mean), declared in the
        // outlined body of the parallel row loop.
        std::string code = backend::lower(ir, {}).source;
        std::size_t outlined = code.find("static void k0_p0(");
        REQUIRE(outlined != std::string::npos);
        std::size_t decl = code.find("] __attribute__((aligned(64)));");
        CHECK(decl > outlined);
        CHECK(decl < code.find("static void k0("));
    }
}

TEST_CASE("row-local: results on openmp (2 threads) and c against the reference backend") {
    const std::int64_t rows = 300, cols = 173;
    Array x = placeholder(Shape::of({rows, cols}), DType::F32, "x");
    HostArray input = random_matrix(rows, cols);
    std::vector<Array> outputs = {nn::softmax(x, 1), nn::log_softmax(x, 1), layer_norm_rows(x),
                                  sum(exp(x - max(x, {1}, true)), {1})};
    ComputeOptions reference;
    reference.backend = "reference";
    std::vector<HostArray> want = compile(outputs, {x}, reference)({input});
    for (const char* name : {"openmp", "c"}) {
        CAPTURE(name);
        ComputeOptions options;
        options.backend = name;
        options.num_threads = 2;
        CompiledProgram program = compile(outputs, {x}, options);
        for (int run = 0; run < 2; ++run) { // the second run reuses the program's memory
            std::vector<HostArray> got = program({input});
            REQUIRE(got.size() == want.size());
            for (std::size_t k = 0; k < want.size(); ++k) {
                CAPTURE(k);
                std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
                REQUIRE(g.size() == w.size());
                double worst = 0;
                for (std::size_t i = 0; i < g.size(); ++i)
                    worst = std::max(worst, std::abs(g[i] - w[i]) / (1.0 + std::abs(w[i])));
                CHECK(worst < 1e-5);
            }
        }
    }
}

TEST_CASE("row-local: degenerate and tiny rows, every loop worth a parallel region") {
    // isl drops a loop of one iteration: then no row loop heads the kernel, and no other loop
    // may run in parallel (each iteration would get a row-local buffer of its own).
    setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
    for (auto [rows, cols] :
         {std::pair<std::int64_t, std::int64_t>{1, 173}, {2, 5}, {3, 1}, {1, 1}}) {
        CAPTURE(rows);
        CAPTURE(cols);
        Array x = placeholder(Shape::of({rows, cols}), DType::F32, "x");
        HostArray input = random_matrix(rows, cols);
        std::vector<Array> outputs = {nn::softmax(x, 1), layer_norm_rows(x)};
        ComputeOptions reference;
        reference.backend = "reference";
        std::vector<HostArray> want = compile(outputs, {x}, reference)({input});
        ComputeOptions options;
        options.backend = "openmp";
        options.num_threads = 2;
        std::vector<HostArray> got = compile(outputs, {x}, options)({input});
        for (std::size_t k = 0; k < want.size(); ++k) {
            std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
            for (std::size_t i = 0; i < g.size(); ++i)
                CHECK(std::abs(g[i] - w[i]) <= 1e-5 * (1.0 + std::abs(w[i])));
        }
    }
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
}

TEST_CASE("row fusion: a kernel that reads another row of what the other writes is not joined") {
    // A row sum, a map of it, and the sums in reverse order: the reversed read crosses rows,
    // so the rows of a joined kernel would not be independent (fuzz seed 9680).
    setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
    Array x = placeholder(Shape::of({13, 3}), DType::F32, "x");
    Array s = sum(x, {1});
    std::vector<Array> outputs = {tanh(s * 0.5f),
                                  view(s, Shape::of({13}), AffineMap(1, 1, {-1}, {12}))};
    HostArray input = random_matrix(13, 3);
    ComputeOptions reference;
    reference.backend = "reference";
    std::vector<HostArray> want = compile(outputs, {x}, reference)({input});
    ComputeOptions options;
    options.backend = "openmp";
    options.num_threads = 2;
    std::vector<HostArray> got = compile(outputs, {x}, options)({input});
    for (std::size_t k = 0; k < want.size(); ++k) {
        std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
        for (std::size_t i = 0; i < g.size(); ++i)
            CHECK(std::abs(g[i] - w[i]) <= 1e-6 * (1.0 + std::abs(w[i])));
    }
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
}
