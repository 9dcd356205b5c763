// partition on small programs: softmax, Jacobi sweeps with overwrite, interleaved fuses,
// stack, multi-output maps, index components, non-zero-start and strided shapes.
#include "partition_testing.hpp"
#include "scheduler/lower.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;
using poly::StatementKind;

TEST_CASE("softmax: max, the sum of exp, exp divided by the sum") {
    const int rows = 3, cols = 5;
    std::vector<float> xv = small_values(rows * cols, 11);
    Array x = array(xv, Shape::of({rows, cols}));
    Array m = max(x, {1}, true);
    Array e = exp(x - m);
    Array y = e / sum(e, {1}, true);
    // Rows not fused: max; sum of exp; exp / sum. f32 exp is vector math, recomputed rather
    // than stored (one pass over memory less).
    sched::PartitionOptions unfused;
    unfused.fuse_rows = false;
    Partitioned q = check_against_reference({y}, {}, {}, 1e-6, unfused);
    CHECK(q.ir.kernels.size() == 3);
    CHECK(count_buffers(q.ir, BufferRole::Temporary) == 2);
    // Fused (the default): one kernel; exp(x - max) is computed once into a row-local buffer,
    // and the max and the sum are row-local too: no temporary in memory.
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(p.ir.kernels.size() == 1);
    for (const poly::Buffer& b : p.ir.buffers)
        CHECK((b.role != BufferRole::Temporary || b.row_local == 1));
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 3);
    std::vector<double> want;
    for (int i = 0; i < rows; ++i) {
        double mx = -1e30, total = 0;
        for (int j = 0; j < cols; ++j)
            mx = std::max<double>(mx, xv[i * cols + j]);
        for (int j = 0; j < cols; ++j)
            total += std::exp(xv[i * cols + j] - mx);
        for (int j = 0; j < cols; ++j)
            want.push_back(std::exp(xv[i * cols + j] - mx) / total);
    }
    check_close(p.results[0], want, 1e-6);
}

namespace {
// One Jacobi sweep on the interior [1, n-1)^2, boundary kept: overwrite(u, average).
Array jacobi_sweep(const Array& u, std::int64_t n) {
    Shape interior{range(1, n - 1), range(1, n - 1)};
    auto neighbour = [&](std::int64_t di, std::int64_t dj) {
        // result[i, j] = u[i - di, j - dj], restricted to the interior
        return reshape(reshape(u, Transform::shift({di, dj})), interior);
    };
    Array avg = 0.25f * (neighbour(1, 0) + neighbour(-1, 0) + neighbour(0, 1) + neighbour(0, -1));
    return overwrite({u, avg});
}
} // namespace

TEST_CASE("Jacobi sweeps with overwrite: one kernel per sweep, copy then interior") {
    const std::int64_t n = 6;
    std::vector<float> uv = small_values(n * n, 12);
    Array u = array(uv, Shape::of({n, n}));
    Array u2 = jacobi_sweep(jacobi_sweep(u, n), n);
    sched::PartitionOptions sweeps; // (streamed, the two become one: test_stencil_stream.cpp)
    sweeps.stream_stencils = false;
    Partitioned p = check_against_reference({u2}, {}, {}, 0.0, sweeps);
    REQUIRE(p.ir.kernels.size() == 2);
    for (const auto& k : p.ir.kernels) {
        REQUIRE(k.statements.size() == 2);
        CHECK(k.statements[0].extents == std::vector<std::int64_t>{n, n});
        CHECK(k.statements[1].extents == std::vector<std::int64_t>{n - 2, n - 2});
        CHECK(k.statements[1].write_access == AffineMap(2, 2, {1, 0, 0, 1}, {1, 1}));
        CHECK(k.statements[1].reads.size() == 4);
    }
    std::vector<double> cur(uv.begin(), uv.end());
    for (int sweep = 0; sweep < 2; ++sweep) {
        std::vector<double> next = cur;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < n - 1; ++j)
                next[i * n + j] = 0.25 * (cur[(i - 1) * n + j] + cur[(i + 1) * n + j] +
                                          cur[i * n + j - 1] + cur[i * n + j + 1]);
        cur = next;
    }
    check_close(p.results[0], cur); // small integers: exact in f32
}

TEST_CASE("fuse of interleaved strided pieces writes each through an exact affine map") {
    Array a = array(std::vector<float>{0, 1, 2, 3}, Shape::of({4}));
    Array b = array(std::vector<float>{10, 11, 12, 13}, Shape::of({4}));
    Array even = reshape(a, Transform::scaling({2}));               // [0,8):2
    Array odd = reshape(b, Transform(1, {TransformAxis{0, 2, 1}})); // [1,9):2
    Array f = fuse({even, odd});
    Partitioned p = run_partitioned({f});
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& st = p.ir.kernels[0].statements;
    REQUIRE(st.size() == 2);
    CHECK(st[0].write_access == AffineMap(1, 1, {2}, {0}));
    CHECK(st[1].write_access == AffineMap(1, 1, {2}, {1}));
    check_close(p.results[0], {0, 10, 1, 11, 2, 12, 3, 13});

    // Pieces on a coarser lattice than a strided fused range: [0,16):4 and [2,18):4 -> [0,16):2.
    Array e4 = reshape(a, Transform::scaling({4}));
    Array o4 = reshape(b, Transform(1, {TransformAxis{0, 4, 2}}));
    Array g = fuse({e4, o4});
    CHECK(g.shape() == Shape{range(0, 16, 2)});
    Partitioned q = run_partitioned({g});
    const auto& sq = q.ir.kernels.at(0).statements;
    REQUIRE(sq.size() == 2);
    CHECK(sq[0].write_access == AffineMap(1, 1, {2}, {0}));
    CHECK(sq[1].write_access == AffineMap(1, 1, {2}, {1}));
    check_close(q.results[0], {0, 10, 1, 11, 2, 12, 3, 13});
}

TEST_CASE("stack along each axis") {
    Array a = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    Array b = array(std::vector<float>{4, 5, 6}, Shape::of({3}));
    Partitioned p = run_partitioned({stack(0, {a, b}), stack(1, {a, b})});
    REQUIRE(p.ir.kernels.size() == 2);
    CHECK(p.ir.kernels[0].statements.size() == 2);
    check_close(p.results[0], {1, 2, 3, 4, 5, 6});
    check_close(p.results[1], {1, 4, 2, 5, 3, 6});
    check_against_reference({stack(0, {a, b}), stack(1, {a * 2.0f, b})});
}

TEST_CASE("a multi-output map gives one kernel per output") {
    Array a = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    Array b = array(std::vector<float>{4, 5, 6}, Shape::of({3}));
    auto outs =
        lazy_multiple_value([](Sym x, Sym y) { return std::make_tuple(x + y, x * y); }, a, b);
    REQUIRE(outs.size() == 2);
    sched::PartitionOptions unfused; // (fused rows put both statements in one kernel)
    unfused.fuse_rows = false;
    Partitioned p = run_partitioned(outs, {}, {}, unfused);
    CHECK(p.ir.kernels.size() == 2);
    CHECK(count_buffers(p.ir, BufferRole::Output) == 2);
    check_close(p.results[0], {5, 7, 9});
    check_close(p.results[1], {4, 10, 18});
}

TEST_CASE("index components are affine reads, not buffers") {
    Shape s{range(2, 11, 3), range(1, 4)}; // rows 2, 5, 8; columns 1, 2, 3
    Array rows = index_components(s, 0);
    Array cols = index_components(s, 1);
    Array v = rows * 10 + cols;
    Partitioned p = run_partitioned({v});
    REQUIRE(p.ir.kernels.size() == 1);
    CHECK(p.ir.buffers.size() == 1); // only the output
    const auto& reads = p.ir.kernels[0].statements.at(0).reads;
    REQUIRE(reads.size() == 2);
    CHECK(reads[0].buffer == -1);
    CHECK(reads[0].access == AffineMap(2, 1, {3, 0}, {2}));
    CHECK(reads[1].access == AffineMap(2, 1, {0, 1}, {1}));
    check_close(p.results[0], {21, 22, 23, 51, 52, 53, 81, 82, 83});

    // Through a transposing view and a reduction.
    Array t = sum(transpose(rows) * 1, {0});
    check_against_reference({t});
}

TEST_CASE("non-zero-start and strided shapes") {
    std::vector<float> uv{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    Array u = array(uv, Shape::of({10}));
    Array v = reshape(u, Shape{range(2, 10, 3)}); // indices 2, 5, 8
    Array w = v + cast(index_components(v.shape(), 0), DType::F32);
    Partitioned p = run_partitioned({w, sum(w)});
    check_close(p.results[0], {4, 10, 16});
    check_close(p.results[1], {30});
    const auto& read = p.ir.kernels[0].statements.at(0).reads.at(0);
    CHECK(read.access == AffineMap(1, 1, {3}, {2}));

    Array interior =
        reshape(array(small_values(49, 13), Shape::of({7, 7})), Shape{range(1, 6), range(1, 6, 2)});
    Array shifted = reshape(interior, Transform::shift({10, -1}));
    check_against_reference({shifted * shifted, max(shifted, {1}), transpose(shifted)});
}

TEST_CASE("row fusion: softmax as one kernel, the rows in parallel and the passes in sequence") {
    const int rows = 6, cols = 37;
    Array x = array(small_values(rows * cols, 5), Shape::of({rows, cols}));
    Array m = max(x, {1}, true);
    Array e = exp(x - m);
    Array y = e / sum(e, {1}, true);
    sched::PartitionOptions fused;
    fused.fuse_rows = true;
    Partitioned p = run_partitioned({y}, {}, {}, fused);
    REQUIRE(p.ir.kernels.size() == 1);
    // two inits, max, exp into its row-local buffer, sum, the map
    CHECK(p.ir.kernels[0].statements.size() == 6);
    check_close(p.results[0], run_reference({y})[0], 1e-6);
    sched::LoopProgram loops = sched::lower_kernels(p.ir);
    std::string ast = sched::to_string(loops.asts[0]);
    CAPTURE(ast);
    CHECK(ast.find("// mark: direct") != std::string::npos);
    // The inits of row-local accumulators stay inside the row loop: one loop at the top.
    int top_loops = ast.rfind("for (", 0) == 0 ? 1 : 0;
    for (std::size_t at = ast.find("\nfor ("); at != std::string::npos;
         at = ast.find("\nfor (", at + 1))
        ++top_loops;
    CHECK(top_loops == 1);
    // A contraction keeps a kernel of its own: its operand w is shared across rows.
    Array w = array(small_values(cols * 3, 6), Shape::of({cols, 3}));
    Array z = matmul(x, w);
    Array s = z / sum(z, {1}, true);
    Partitioned q = run_partitioned({s}, {}, {}, fused);
    CHECK(q.ir.kernels.size() >= 2);
    check_close(q.results[0], run_reference({s})[0], 1e-5);
}

TEST_CASE("split reductions: long column sums, maxima and minima run in blocks of rows") {
    const int rows = 4096, cols = 24;
    std::vector<float> xv = small_values(rows * cols, 8);
    Array x = array(xv, Shape::of({rows, cols}));
    for (Array y : {sum(tanh(x * 0.5f), {0}), max(x, {0}), min(x * 2.0f, {0})}) {
        Partitioned p = run_partitioned({y});
        CAPTURE(poly::to_string(p.ir));
        REQUIRE(p.ir.kernels.size() == 2); // the blocks' partials, then their reduction
        CHECK(p.ir.kernels[0].statements[1].extents == std::vector<std::int64_t>{16, 256, cols});
        CHECK(count_buffers(p.ir, BufferRole::Temporary) == 1);
        check_close(p.results[0], run_reference({y})[0], 1e-5);
        // The fold reads the partials as the result's dtype (taken before the partials' buffer
        // was added: under ASan a reference kept across that push_back is a use after free).
        const poly::Statement& fold = p.ir.kernels[1].statements[1];
        CHECK(fold.value->dtype == p.ir.buffers.at(std::size_t(fold.write_buffer)).dtype);
    }
    std::vector<double> xd(xv.begin(), xv.end());
    Partitioned d = run_partitioned({sum(array(xd, Shape::of({rows, cols})), {0})});
    REQUIRE(d.ir.kernels.size() == 2);
    CHECK(d.ir.kernels[1].statements[1].value->dtype == DType::F64);
    // Rows that no block count divides, or too few rows, keep one kernel.
    Array odd = array(small_values(4099 * 3, 9), Shape::of({4099, 3}));
    CHECK(run_partitioned({sum(odd, {0})}).ir.kernels.size() == 1);
    Array few = array(small_values(1000 * 3, 10), Shape::of({1000, 3}));
    CHECK(run_partitioned({sum(few, {0})}).ir.kernels.size() == 1);
}
