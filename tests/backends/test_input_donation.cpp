// Input donation (CompileOptions::donate, scheduler/donate_inputs.hpp): an output computed
// element for element from a donated input is written into the input's memory when the caller
// gives it up and nothing else refers to it; a copy is made when something does; an output that
// reads the input elsewhere (a transpose, a shift) or after another kernel's read keeps its own
// buffer; the pieces of a fuse (a grid's interior overwritten) take it too. Results equal the
// undonated program's bit for bit on openmp, c and the reference.
#include <doctest/doctest.h>

#include <cstring>

#include "hedra.hpp"
#include "polyhedral/kernel_ir.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

constexpr std::int64_t kRows = 48, kCols = 40;

HostArray ramp(std::int64_t rows, std::int64_t cols, float scale) {
    HostArray a({rows, cols}, DType::F32);
    auto v = a.mutable_values<float>();
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = scale * static_cast<float>((i * 37) % 101) - 3.0f;
    return a;
}

bool same_bits(const HostArray& a, const HostArray& b) {
    return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
           std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

ComputeOptions on(const std::string& backend, std::vector<int> donate = {}) {
    ComputeOptions o;
    o.backend = backend;
    o.donate = std::move(donate);
    return o;
}

// An SGD-like update: w' = w - 0.1 * (w * g), and the loss-like sum of g.
struct Update {
    Array w = placeholder(Shape::of({kRows, kCols}), DType::F32, "w");
    Array g = placeholder(Shape::of({kRows, kCols}), DType::F32, "g");
    Array next = w - 0.1f * (w * g);
    Array total = sum(g * g);
};

} // namespace

TEST_CASE("donation: an elementwise update is written into the donated input's memory") {
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        Update u;
        CompiledProgram plain = compile({u.next, u.total}, {u.w, u.g}, on(backend));
        CompiledProgram donating = compile({u.next, u.total}, {u.w, u.g}, on(backend, {0}));
        std::optional<ProgramMemory> mem = donating.memory();
        REQUIRE(mem.has_value());
        const std::size_t bytes = kRows * kCols * 4;
        CHECK(mem->donated == bytes);
        CHECK(mem->results == plain.memory()->results - bytes);
        CHECK(mem->to_string().find("donated") != std::string::npos);
        const HostArray g = ramp(kRows, kCols, 0.01f);
        HostArray w = ramp(kRows, kCols, 0.05f);
        for (int step = 0; step < 3; ++step) {
            std::vector<HostArray> expect = plain({w, g});
            std::vector<HostArray> in{ramp(kRows, kCols, 0.0f), g}; // filled below
            std::memcpy(in[0].raw_mutable(), w.raw(), w.bytes());
            const void* where = in[0].address();
            std::vector<HostArray> got = donating(std::move(in));
            CHECK(got[0].address() == where);  // in place
            CHECK(in[0].address() == nullptr); // given up
            CHECK(in[1].address() == g.address());
            CHECK(same_bits(got[0], expect[0]));
            CHECK(same_bits(got[1], expect[1]));
            w = expect[0];
        }
    }
}

TEST_CASE("donation: an input the caller still holds is copied, never overwritten") {
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        Update u;
        CompiledProgram donating = compile({u.next}, {u.w, u.g}, on(backend, {0}));
        const HostArray g = ramp(kRows, kCols, 0.01f);
        const HostArray w = ramp(kRows, kCols, 0.05f);
        const HostArray w_before = ramp(kRows, kCols, 0.05f);
        // Held by `w` as well: copied.
        std::vector<HostArray> got = donating(std::vector<HostArray>{w, g});
        CHECK(got[0].address() != w.address());
        CHECK(same_bits(w, w_before));
        // Passed by reference: not given up, so copied too.
        std::vector<HostArray> in{ramp(kRows, kCols, 0.05f), g};
        std::vector<HostArray> again = donating(in);
        CHECK(again[0].address() != in[0].address());
        CHECK(same_bits(in[0], w_before));
        CHECK(same_bits(again[0], got[0]));
        // Borrowed memory (no owner hedra knows of) is never taken.
        std::vector<float> outside(static_cast<std::size_t>(kRows * kCols));
        std::memcpy(outside.data(), w.raw(), w.bytes());
        HostArray borrowed({kRows, kCols}, DType::F32, nullptr, outside.data());
        std::vector<HostArray> third = donating(std::vector<HostArray>{borrowed, g});
        CHECK(third[0].address() != outside.data());
        CHECK(std::memcmp(outside.data(), w.raw(), w.bytes()) == 0);
        CHECK(same_bits(third[0], got[0]));
    }
}

TEST_CASE("donation: outputs that read the input at other elements keep their own buffer") {
    const std::int64_t n = 32;
    Array x = placeholder(Shape::of({n, n}), DType::F32, "x");
    // A transpose, a shift by one row (the last row kept) and a map read after a sum of x
    // that another kernel computes: none may overwrite x while x is still to be read.
    Array transposed = transpose(x) * 2.0f;
    Array below = reshape(x, Shape{range(1, n), range(n)});
    Array shifted = fuse({reshape(below, Transform::shift({-1, 0})) + 1.0f,
                          reshape(x, Shape{range(n - 1, n), range(n)})});
    HostArray value = ramp(n, n, 0.03f);
    for (const Array& y : {transposed, shifted}) {
        for (const std::string backend : {"openmp", "c"}) {
            INFO(backend);
            CompiledProgram plain = compile({y}, {x}, on(backend));
            CompiledProgram donating = compile({y}, {x}, on(backend, {0}));
            CHECK(donating.memory()->donated == 0);
            std::vector<HostArray> expect = plain({value});
            HostArray given = ramp(n, n, 0.03f);
            const void* where = given.address();
            std::vector<HostArray> got = donating(std::vector<HostArray>{std::move(given)});
            CHECK(got[0].address() != where);
            CHECK(same_bits(got[0], expect[0]));
        }
    }
    // The partition folds the elementwise output into the input, and not the transpose.
    Array doubled = x * 2.0f;
    poly::ProgramIR folded = sched::partition({doubled.node()}, {x.node()}, {}, {x.node()});
    CHECK(folded.buffers[static_cast<std::size_t>(folded.outputs[0])].donated);
    CHECK(folded.buffers.size() == 1);
    poly::ProgramIR kept = sched::partition({transposed.node()}, {x.node()}, {}, {x.node()});
    CHECK_FALSE(kept.buffers[static_cast<std::size_t>(kept.outputs[0])].donated);
    // Read by a later kernel: the row sums of transpose(x) * (x * 2) need x * 2 first, then
    // x again.
    Array later = sum(transpose(x) * doubled, {1});
    poly::ProgramIR read_after =
        sched::partition({doubled.node(), later.node()}, {x.node()}, {}, {x.node()});
    CHECK_FALSE(read_after.buffers[static_cast<std::size_t>(read_after.outputs[0])].donated);
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        CompiledProgram plain = compile({doubled, later}, {x}, on(backend));
        CompiledProgram donating = compile({doubled, later}, {x}, on(backend, {0}));
        CHECK(donating.memory()->donated == 0);
        std::vector<HostArray> expect = plain({value});
        std::vector<HostArray> got = donating(std::vector<HostArray>{ramp(n, n, 0.03f)});
        CHECK(same_bits(got[0], expect[0]));
        CHECK(same_bits(got[1], expect[1]));
    }
}

TEST_CASE("donation: the pieces of a fuse write into the donated input, which keeps the rest") {
    // A Jacobi sweep between two grids: v's interior becomes the stencil of u. Donated, v's
    // memory takes the result and only its interior is written (the piece that keeps v's
    // elements is dropped); with v's border scaled, that piece stays.
    const std::int64_t n = 40;
    Array u = placeholder(Shape::of({n, n}), DType::F32, "u");
    Array v = placeholder(Shape::of({n, n}), DType::F32, "v");
    Shape interior{range(1, n - 1), range(1, n - 1)};
    auto at = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    Array stencil = (at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1)) * 0.25f;
    Array sweep = overwrite({v, stencil});
    Array scaled = overwrite({v * 0.5f, stencil});
    poly::ProgramIR ir = sched::partition({sweep.node()}, {u.node(), v.node()}, {}, {v.node()});
    CAPTURE(poly::to_string(ir));
    CHECK(ir.buffers.size() == 2);
    CHECK(ir.buffers[static_cast<std::size_t>(ir.outputs[0])].donated);
    REQUIRE(ir.kernels.size() == 1);
    CHECK(ir.kernels[0].statements.size() == 1);
    poly::ProgramIR kept = sched::partition({scaled.node()}, {u.node(), v.node()}, {}, {v.node()});
    CHECK(kept.buffers[static_cast<std::size_t>(kept.outputs[0])].donated);
    CHECK(kept.kernels[0].statements.size() == 2);
    const HostArray grid_u = ramp(n, n, 0.02f);
    for (const Array& y : {sweep, scaled})
        for (const std::string backend : {"openmp", "c"}) {
            INFO(backend);
            CompiledProgram plain = compile({y}, {u, v}, on("reference"));
            CompiledProgram donating = compile({y}, {u, v}, on(backend, {1}));
            CHECK(donating.memory()->donated == n * n * 4);
            std::vector<HostArray> expect = plain({grid_u, ramp(n, n, 0.07f)});
            HostArray grid_v = ramp(n, n, 0.07f);
            const void* where = grid_v.address();
            std::vector<HostArray> in{grid_u, std::move(grid_v)}; // the list's copy dies here
            std::vector<HostArray> got = donating(std::move(in));
            CHECK(got[0].address() == where);
            CHECK(same_bits(got[0], expect[0]));
        }
    // A later piece that reads v elsewhere keeps its own buffer.
    Array v_shifted = view(v, interior, AffineMap(2, 2, {1, 0, 0, 1}, {-1, 0}));
    Array reads_later = overwrite({v, v_shifted});
    poly::ProgramIR own =
        sched::partition({reads_later.node()}, {u.node(), v.node()}, {}, {v.node()});
    CHECK_FALSE(own.buffers[static_cast<std::size_t>(own.outputs[0])].donated);
    CompiledProgram donating = compile({reads_later}, {u, v}, on("openmp", {1}));
    CompiledProgram plain = compile({reads_later}, {u, v}, on("reference"));
    CHECK(same_bits(donating(std::vector<HostArray>{grid_u, ramp(n, n, 0.07f)})[0],
                    plain({grid_u, ramp(n, n, 0.07f)})[0]));
}

TEST_CASE("donation: a kernel that reads the input after the write moves before it") {
    const std::int64_t n = 32;
    Array x = placeholder(Shape::of({n, n}), DType::F32, "x");
    Array doubled = x * 2.0f;
    Array sums = sum(transpose(x), {1}); // reads x, not x * 2: free to run first
    poly::ProgramIR plain = sched::partition({doubled.node(), sums.node()}, {x.node()});
    poly::ProgramIR moved =
        sched::partition({doubled.node(), sums.node()}, {x.node()}, {}, {x.node()});
    // Kernels in topological order: x * 2 first, then the sums.
    auto writer = [](const poly::ProgramIR& p, int output) {
        for (std::size_t k = 0; k < p.kernels.size(); ++k)
            for (const poly::Statement& st : p.kernels[k].statements)
                if (st.write_buffer == p.outputs[static_cast<std::size_t>(output)])
                    return static_cast<int>(k);
        return -1;
    };
    CHECK(writer(plain, 0) < writer(plain, 1));
    CHECK(moved.buffers[static_cast<std::size_t>(moved.outputs[0])].donated);
    CHECK(writer(moved, 0) > writer(moved, 1));
    CHECK(moved.kernels.size() == plain.kernels.size());
    HostArray value = ramp(n, n, 0.03f);
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        CompiledProgram copying = compile({doubled, sums}, {x}, on(backend));
        CompiledProgram donating = compile({doubled, sums}, {x}, on(backend, {0}));
        CHECK(donating.memory()->donated == n * n * 4);
        std::vector<HostArray> expect = copying({value});
        std::vector<HostArray> got = donating(std::vector<HostArray>{ramp(n, n, 0.03f)});
        CHECK(same_bits(got[0], expect[0]));
        CHECK(same_bits(got[1], expect[1]));
    }
}

TEST_CASE("donation: the reference backend ignores it; bad positions are errors") {
    Update u;
    CompiledProgram reference = compile({u.next}, {u.w, u.g}, on("reference", {0}));
    CompiledProgram openmp = compile({u.next}, {u.w, u.g}, on("openmp", {0}));
    const HostArray g = ramp(kRows, kCols, 0.01f);
    std::vector<HostArray> a = reference(std::vector<HostArray>{ramp(kRows, kCols, 0.05f), g});
    std::vector<HostArray> b = openmp(std::vector<HostArray>{ramp(kRows, kCols, 0.05f), g});
    CHECK(same_bits(a[0], b[0]));
    CHECK_THROWS_WITH_AS(compile({u.next}, {u.w, u.g}, on("openmp", {2})),
                         doctest::Contains("donate lists position 2, but there are 2"), Error);
    CHECK_THROWS_WITH_AS(compile({u.next}, {u.w, u.g}, on("openmp", {0, 0})),
                         doctest::Contains("donate lists position 0 twice"), Error);
}
