// Stencil streams (scheduler/stencil_stream.hpp): chains of sweeps become one kernel that
// streams over the rows, the intermediate grids kept as windows of rows. The results must equal
// the reference backend's bit for bit (the same arithmetic in the same order), on both C
// backends, at sizes where the windows wrap many times.
#include <random>

#include "backends/openmp/lower.hpp"
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;

namespace {

// One sweep over the interior rows [h, rows - h) and columns [1, cols - 1): the mean of the
// rows h above and below and the columns left and right; the border is kept.
Array sweep(const Array& u, std::int64_t rows, std::int64_t cols, std::int64_t h) {
    Shape interior{range(h, rows - h), range(1, cols - 1)};
    auto at = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    return overwrite({u, (at(-h, 0) + at(h, 0) + at(0, -1) + at(0, 1)) * 0.25f});
}

// `n` sweeps of reach 1 of u.
Array sweeps(const Array& u, std::int64_t rows, std::int64_t cols, int n) {
    Array v = u;
    for (int s = 0; s < n; ++s)
        v = sweep(v, rows, cols, 1);
    return v;
}

std::vector<HostArray> run_on(const std::string& backend, const std::vector<Array>& outputs,
                              const Array& u, const HostArray& value) {
    ComputeOptions o;
    o.backend = backend;
    o.num_threads = 2;
    return compile(outputs, {u}, o)({value});
}

void check_backends(const std::vector<Array>& outputs, const Array& u, const HostArray& value) {
    std::vector<HostArray> want = run_on("reference", outputs, u, value);
    for (const char* backend : {"openmp", "c"}) {
        CAPTURE(backend);
        std::vector<HostArray> got = run_on(backend, outputs, u, value);
        for (std::size_t k = 0; k < want.size(); ++k) {
            CAPTURE(k);
            check_close(got[k], want[k], 0.0);
        }
    }
}

HostArray grid(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
    std::vector<float> v = small_values(rows * cols, seed);
    return HostArray::from(v, std::vector<std::int64_t>{rows, cols});
}

} // namespace

TEST_CASE("stencil stream: ten Jacobi sweeps are one kernel with windows of four rows") {
    const std::int64_t rows = 37, cols = 41;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v = sweeps(u, rows, cols, 10);
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    REQUIRE(ir.kernels.size() == 1);
    CHECK(poly::is_stream(ir.kernels[0]));
    int windows = 0;
    for (const poly::Buffer& b : ir.buffers)
        if (b.role == BufferRole::Temporary) {
            CHECK(b.row_window == 4);
            CHECK(b.storage_bytes() == 4 * cols * sizeof(float));
            ++windows;
        }
    CHECK(windows == 9);
    check_backends({v}, u, grid(rows, cols, 3));
}

TEST_CASE("stencil stream: a stencil two rows high needs windows of eight") {
    const std::int64_t rows = 29, cols = 9;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v = sweep(sweep(sweep(u, rows, cols, 2), rows, cols, 2), rows, cols, 1);
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    REQUIRE(ir.kernels.size() == 1);
    for (const poly::Buffer& b : ir.buffers)
        if (b.role == BufferRole::Temporary) CHECK(b.row_window == 8);
    check_backends({v}, u, grid(rows, cols, 4));
}

TEST_CASE("stencil stream: a grid read elsewhere is kept whole, and the chain breaks there") {
    const std::int64_t rows = 21, cols = 13;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v1 = sweep(u, rows, cols, 1), v2 = sweep(v1, rows, cols, 1);
    Array v3 = sweep(v2, rows, cols, 1), v4 = sweep(v3, rows, cols, 1);
    // v2 is also an output; v3 is also read transposed (not a stencil along the rows).
    Array t = transpose(v3) * 2.0f;
    std::vector<Array> outputs = {v4, v2, t};
    poly::ProgramIR ir = sched::partition(nodes_of(outputs), {u.node()});
    CAPTURE(poly::to_string(ir));
    for (const poly::Buffer& b : ir.buffers)
        if (b.node == v2.node() || b.node == v3.node()) CHECK(b.row_window == 0);
    check_backends(outputs, u, grid(rows, cols, 5));
}

TEST_CASE("stencil stream: sweeps of a 3-D grid along its first axis") {
    const std::int64_t n0 = 11, n1 = 4, n2 = 5;
    Array u = placeholder(Shape::of({n0, n1, n2}), DType::F32, "u");
    Array v = u;
    for (int s = 0; s < 4; ++s) {
        Shape inner{range(1, n0 - 1), range(n1), range(n2)};
        auto at = [&](std::int64_t d) {
            return view(v, inner, AffineMap(3, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {d, 0, 0}));
        };
        v = overwrite({v, (at(-1) + at(1)) * 0.5f + at(0) * 0.125f});
    }
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    REQUIRE(ir.kernels.size() == 1);
    std::vector<float> values = small_values(n0 * n1 * n2, 6);
    check_backends({v}, u, HostArray::from(values, std::vector<std::int64_t>{n0, n1, n2}));
}

TEST_CASE("stencil stream: a chain without a row shift still runs its steps in order") {
    // Each row reads only its own row (h = 0, windows of one row): isl finds the step loop
    // parallel, but the window is shared by the steps (fuzz seeds 12004, 12123). Only the
    // band loop may run in parallel.
    setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
    const std::int64_t rows = 64, cols = 70;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array piece = full(Shape{range(2, 5), range(3, 9)}, 7.0, DType::F32);
    Array v1 = overwrite({u * 0.5f, piece});
    Array v2 =
        overwrite({tanh(v1) + v1, full(Shape{range(40, 43), range(cols)}, -1.0, DType::F32)});
    Array v3 = overwrite({v2 * v2, piece});
    poly::ProgramIR ir = sched::partition({v3.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    CHECK(poly::is_stream(ir.kernels.back()));
    backend::LowerOptions lower;
    lower.min_parallel_work = 0;
    const std::string source = backend::lower(ir, lower).source;
    const std::size_t at = source.find("omp parallel");
    REQUIRE(at != std::string::npos);
    CHECK(source.find("omp parallel", at + 1) == std::string::npos);
    CHECK(source.find("for (long c0 = 0L; (c0 <= 1L)", at) == source.find('\n', at) + 5);
    check_backends({v3}, u, grid(rows, cols, 8));
    unsetenv("HEDRA_MIN_PARALLEL_WORK");
}

TEST_CASE("stencil stream: a long stream runs in bands of rows, each with windows of its own") {
    // Ten sweeps over 1200 rows: bands of 300 rows overlap by 9 rows per stage and side, within
    // 1/32 of the rows for 4 bands (8 would overlap by 63 of 1200).
    const std::int64_t rows = 1200, cols = 9;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v = sweeps(u, rows, cols, 10);
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    REQUIRE(ir.kernels.size() == 1);
    REQUIRE(poly::is_stream(ir.kernels[0]));
    for (const poly::Statement& st : ir.kernels[0].statements) {
        CHECK(st.stream_bands == 4);
        CHECK(st.guards.size() == 2);
    }
    for (const poly::Buffer& b : ir.buffers)
        if (b.role == BufferRole::Temporary) {
            CHECK(b.window_bands == 4);
            CHECK(b.storage_bytes() == 4 * 4 * cols * sizeof(float));
        }
    backend::LowerOptions lower;
    lower.min_parallel_work = 0;
    CHECK(backend::lower(ir, lower).source.find("omp parallel") != std::string::npos);
    check_backends({v}, u, grid(rows, cols, 9));
    // One thread runs the bands in turn.
    ComputeOptions one;
    one.num_threads = 1;
    check_close(compile({v}, {u}, one)({grid(rows, cols, 9)})[0],
                run_on("reference", {v}, u, grid(rows, cols, 9))[0], 0.0);
}

TEST_CASE("stencil stream: bands of a stencil two rows high over rows they do not divide") {
    // h = 2 over three stages: each band's first stage reaches 4 rows past it; 401 rows make
    // bands of 101 rows and a last one of 98.
    const std::int64_t rows = 401, cols = 7;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v = sweep(sweep(sweep(u, rows, cols, 2), rows, cols, 2), rows, cols, 2);
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    CAPTURE(poly::to_string(ir));
    REQUIRE(ir.kernels.size() == 1);
    CHECK(ir.kernels[0].statements[0].stream_bands == 4);
    for (const poly::Buffer& b : ir.buffers)
        if (b.role == BufferRole::Temporary) CHECK(b.row_window == 8);
    check_backends({v}, u, grid(rows, cols, 10));
}

TEST_CASE("stencil stream: a short stream keeps one band") {
    // 37 rows cannot make two bands of 32.
    const std::int64_t rows = 37, cols = 5;
    Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
    Array v = sweeps(u, rows, cols, 2);
    poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
    REQUIRE(poly::is_stream(ir.kernels[0]));
    CHECK(ir.kernels[0].statements[0].stream_bands == 0);
    CHECK(ir.kernels[0].statements[0].guards.empty());
}

TEST_CASE("stencil stream: random chains, banded or not, equal the reference bit for bit") {
    // Chains of 2-7 sweeps of reach 0-2 over 40-700 rows: bands of every count, ragged last
    // bands, halos that reach past the grid.
    std::mt19937 gen(12);
    int banded = 0;
    for (int trial = 0; trial < 14; ++trial) {
        const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(40, 700)(gen);
        const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(3, 12)(gen);
        const int stages = std::uniform_int_distribution<int>(2, 7)(gen);
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(stages);
        Array u = placeholder(Shape::of({rows, cols}), DType::F32, "u");
        Array v = u;
        for (int s = 0; s < stages; ++s)
            v = sweep(v, rows, cols, std::uniform_int_distribution<std::int64_t>(0, 2)(gen));
        poly::ProgramIR ir = sched::partition({v.node()}, {u.node()});
        for (const poly::Kernel& k : ir.kernels)
            banded += poly::is_stream(k) && k.statements[0].stream_bands > 0;
        check_backends({v}, u, grid(rows, cols, static_cast<std::uint32_t>(20 + trial)));
    }
    CHECK(banded >= 7);
}
