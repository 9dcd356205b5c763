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

std::vector<HostArray> run_on(const std::string& backend, const std::vector<Array>& outputs,
                              const Array& x, const HostArray& input) {
    ComputeOptions options;
    options.backend = backend;
    options.num_threads = 2;
    return compile(outputs, {x}, options)({input});
}

// The outputs on `backend` (2 threads) against the reference backend, within `tolerance`
// relative to 1 + |value|.
void check_backend(const std::string& backend, const std::vector<Array>& outputs, const Array& x,
                   const HostArray& input, double tolerance) {
    std::vector<HostArray> want = run_on("reference", outputs, x, input);
    std::vector<HostArray> got = run_on(backend, outputs, x, input);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
        CAPTURE(k);
        std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
        REQUIRE(g.size() == w.size());
        for (std::size_t i = 0; i < g.size(); ++i)
            CHECK(std::abs(g[i] - w[i]) <= tolerance * (1.0 + std::abs(w[i])));
    }
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
    std::vector<Array> outputs = {nn::softmax(x, 1), nn::log_softmax(x, 1), layer_norm_rows(x),
                                  sum(exp(x - max(x, {1}, true)), {1})};
    for (const char* backend : {"openmp", "c"}) {
        CAPTURE(backend);
        check_backend(backend, outputs, x, random_matrix(rows, cols), 1e-5);
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
        check_backend("openmp", {nn::softmax(x, 1), layer_norm_rows(x)}, x,
                      random_matrix(rows, cols), 1e-5);
    }
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
}

TEST_CASE("row fusion: a kernel that reads another row of what the other writes is not joined") {
    // A row sum, a map of it, and the sums in reverse order: the reversed read crosses rows,
    // so the rows of a joined kernel would not be independent (fuzz seed 9680).
    setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
    Array x = placeholder(Shape::of({13, 3}), DType::F32, "x");
    Array s = sum(x, {1});
    check_backend("openmp", {tanh(s * 0.5f), view(s, Shape::of({13}), AffineMap(1, 1, {-1}, {12}))},
                  x, random_matrix(13, 3), 1e-6);
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
}
