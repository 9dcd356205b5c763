// partition on elementwise maps, view chains and contractions (matmul, batched matmul, conv):
// the structure of the kernels and their values, checked against naive loops written here.
#include "partition_testing.hpp"
#include "scheduler/lower.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;
using poly::StatementKind;

TEST_CASE("a broadcasting map is one statement reading both operands through views") {
    Array a = array(std::vector<float>{1, 2, 3}, Shape::of({3, 1}));
    Array b = array(std::vector<float>{10, 20, 30, 40}, Shape::of({4}));
    Array c = a + b;
    Partitioned p = run_partitioned({c});
    REQUIRE(p.ir.kernels.size() == 1);
    REQUIRE(p.ir.kernels[0].statements.size() == 1);
    const poly::Statement& s = p.ir.kernels[0].statements[0];
    CHECK(s.kind == StatementKind::Assign);
    CHECK(s.extents == std::vector<std::int64_t>{3, 4});
    REQUIRE(s.reads.size() == 2);
    CHECK(s.reads[0].access == AffineMap(2, 2, {1, 0, 0, 0}, {0, 0})); // a[i, 0]
    CHECK(s.reads[1].access == AffineMap(2, 1, {0, 1}, {0}));          // b[j]
    CHECK(count_buffers(p.ir, BufferRole::Input) == 2);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    std::vector<double> want;
    for (int i = 1; i <= 3; ++i)
        for (int j = 1; j <= 4; ++j)
            want.push_back(i + 10.0 * j);
    check_close(p.results[0], want);
}

TEST_CASE("a chain of views is one composed access") {
    std::vector<float> xs(24);
    for (int i = 0; i < 24; ++i)
        xs[i] = static_cast<float>(i);
    Array x = array(xs, Shape::of({4, 6}));
    Array y = reshape(x, Shape{range(1, 3), range(0, 6, 2)}); // rows 1..2, even columns
    Array z = transpose(y);
    Array w = z * 2.0f;
    Partitioned p = run_partitioned({w});
    REQUIRE(p.ir.kernels.size() == 1);
    const poly::Statement& s = p.ir.kernels[0].statements.at(0);
    REQUIRE(s.reads.size() == 1);
    CHECK(s.reads[0].access == AffineMap(2, 2, {0, 1, 2, 0}, {1, 0})); // x[1 + i, 2 * j]
    std::vector<double> want;
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 2; ++i)
            want.push_back(2.0 * xs[(1 + i) * 6 + 2 * j]);
    check_close(p.results[0], want);
}

TEST_CASE("matmul is one kernel of two statements and no temporary") {
    const int m = 3, k = 4, n = 5;
    auto av = small_values(m * k, 1), bv = small_values(k * n, 2);
    Array a = array(av, Shape::of({m, k}));
    Array b = array(bv, Shape::of({k, n}));
    Array c = matmul(a, b);
    Partitioned p = run_partitioned({c});
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& st = p.ir.kernels[0].statements;
    REQUIRE(st.size() == 2);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    CHECK(count_buffers(p.ir, BufferRole::Input) == 2);
    CHECK(count_buffers(p.ir, BufferRole::Output) == 1);
    CHECK(st[0].kind == StatementKind::Assign);
    CHECK(st[0].extents == std::vector<std::int64_t>{m, n});
    CHECK(st[0].reads.empty());
    CHECK(st[1].kind == StatementKind::Update);
    CHECK(st[1].reduce_op == ReduceOp::Sum);
    CHECK(st[1].extents == std::vector<std::int64_t>{m, n, k});
    CHECK(st[1].reduction_dims == std::vector<int>{2});
    CHECK(st[1].write_access == AffineMap(3, 2, {1, 0, 0, 0, 1, 0}, {0, 0}));
    REQUIRE(st[1].reads.size() == 2);
    CHECK(st[1].reads[0].access == AffineMap(3, 2, {1, 0, 0, 0, 0, 1}, {0, 0})); // a[i, l]
    CHECK(st[1].reads[1].access == AffineMap(3, 2, {0, 0, 1, 0, 1, 0}, {0, 0})); // b[l, j]
    std::vector<double> want(m * n, 0.0);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
            for (int l = 0; l < k; ++l)
                want[i * n + j] += av[i * k + l] * bv[l * n + j];
    check_close(p.results[0], want);
}

TEST_CASE("batched matmul is one kernel") {
    const int bs = 2, m = 3, k = 4, n = 5;
    auto av = small_values(bs * m * k, 3), bv = small_values(bs * k * n, 4);
    Array a = array(av, Shape::of({bs, m, k}));
    Array b = array(bv, Shape::of({bs, k, n}));
    Partitioned p = run_partitioned({matmul(a, b)});
    REQUIRE(p.ir.kernels.size() == 1);
    REQUIRE(p.ir.kernels[0].statements.size() == 2);
    CHECK(p.ir.kernels[0].statements[1].extents == std::vector<std::int64_t>{bs, m, n, k});
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    std::vector<double> want(bs * m * n, 0.0);
    for (int q = 0; q < bs; ++q)
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j)
                for (int l = 0; l < k; ++l)
                    want[(q * m + i) * n + j] += av[(q * m + i) * k + l] * bv[(q * k + l) * n + j];
    check_close(p.results[0], want);
}

TEST_CASE("matmul with a bias and an activation is one kernel: the sum, then its epilogue") {
    // (K = 6: a sum of at most 4 terms would be unrolled into the map instead.)
    auto av = small_values(12, 5), bv = small_values(12, 6);
    Array a = array(av, Shape::of({2, 6}));
    Array b = array(bv, Shape::of({6, 2}));
    Array bias = array(std::vector<float>{0.5f, -20.0f}, Shape::of({2}));
    Array y = relu(matmul(a, b) + bias);
    Partitioned p = check_against_reference({y});
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& st = p.ir.kernels[0].statements;
    REQUIRE(st.size() == 3); // init, sum, and the map of the sum as a final Assign
    CHECK(st[1].kind == StatementKind::Update);
    CHECK(st[2].kind == StatementKind::Assign);
    CHECK(st[2].write_buffer != st[1].write_buffer);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 1);
    // Without epilogues the map is a kernel of its own.
    sched::PartitionOptions separate;
    separate.epilogues = false;
    Partitioned q = run_partitioned({y}, {}, {}, separate);
    CHECK(q.ir.kernels.size() == 2);
    check_close(q.results[0], p.results[0]);
}

TEST_CASE("with max_epilogues, a map of an epilogue at the same element follows it (momentum)") {
    auto av = small_values(12, 9), bv = small_values(12, 10), vv = small_values(4, 11),
         wv = small_values(4, 12);
    Array a = array(av, Shape::of({2, 6})), b = array(bv, Shape::of({6, 2}));
    Array v = array(vv, Shape::of({2, 2})), w = array(wv, Shape::of({2, 2}));
    Array g = matmul(a, b);
    Array next_v = 0.5f * v + g, next_w = w - 0.25f * next_v;
    sched::PartitionOptions chains;
    chains.max_epilogues = 4;
    chains.fuse_rows = false; // the kernels as the epilogue rule makes them
    Partitioned p = run_partitioned({next_v, next_w}, {}, {}, chains);
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& st = p.ir.kernels[0].statements;
    REQUIRE(st.size() == 4); // init, sum, momentum, weight
    CHECK(st[3].reads.size() == 2);
    std::vector<HostArray> want = run_reference({next_v, next_w});
    check_close(p.results[0], want[0]);
    check_close(p.results[1], want[1]);
    // One epilogue by default (the openmp register tile's): the weight is a kernel of its own.
    CHECK(run_partitioned({next_v, next_w}).ir.kernels.size() == 2);
    // A map that also reads an expensive map of two uses (materialized) that comes after the
    // sum in node order joins when that map does not depend on the sum: its kernel is made
    // first (Adam's bias correction).
    Array u = array(small_values(4, 13), Shape::of({2, 2}));
    Array e = sin(u * 0.125f);
    Array v2 = 0.5f * v + matmul(a, b);
    Array late_w = w - 0.25f * v2 + e;
    Partitioned q = run_partitioned({v2, late_w, e * 2.0f}, {}, {}, chains);
    INFO(poly::to_string(q.ir));
    REQUIRE(q.ir.kernels.size() == 3); // exp, sum + momentum + weight, e * 2
    CHECK(q.ir.kernels[0].statements.size() == 1);
    CHECK(q.ir.kernels[1].statements.size() == 4);
    check_close(q.results[1], run_reference({late_w})[0], 1e-6);
    // When that map depends on the sum (here through a transposed read, so it is no epilogue
    // itself), the weight cannot join: it runs after the sum's kernel.
    Array e2 = sin(transpose(v2) * 0.125f);
    Array late_w2 = w - 0.25f * v2 + e2;
    Partitioned d = run_partitioned({v2, late_w2, e2 * 2.0f}, {}, {}, chains);
    INFO(poly::to_string(d.ir));
    REQUIRE(d.ir.kernels.size() == 4); // sum + momentum, exp, weight, e2 * 2
    CHECK(d.ir.kernels[0].statements.size() == 3);
    check_close(d.results[1], run_reference({late_w2})[0], 1e-6);
}

TEST_CASE("a convolution as window view, map and reduce is one kernel") {
    const int h = 6, w = 7, kh = 3, kw = 2, oh = h - kh + 1, ow = w - kw + 1;
    auto xv = small_values(h * w, 7), wv = small_values(kh * kw, 8);
    Array x = array(xv, Shape::of({h, w}));
    Array f = array(wv, Shape::of({kh, kw}));
    // win[i, j, r, s] = x[i + r, j + s]
    Array win =
        view(x, Shape::of({oh, ow, kh, kw}), AffineMap(4, 2, {1, 0, 1, 0, 0, 1, 0, 1}, {0, 0}));
    Array y = sum(win * f, {2, 3});
    Partitioned p = run_partitioned({y});
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& st = p.ir.kernels[0].statements;
    REQUIRE(st.size() == 2);
    CHECK(st[1].extents == std::vector<std::int64_t>{oh, ow, kh, kw});
    CHECK(st[1].reduction_dims == std::vector<int>{2, 3});
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    std::vector<double> want(oh * ow, 0.0);
    for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j)
            for (int r = 0; r < kh; ++r)
                for (int s = 0; s < kw; ++s)
                    want[i * ow + j] += xv[(i + r) * w + j + s] * wv[r * kw + s];
    check_close(p.results[0], want);
}

TEST_CASE("reductions with keepdims, max, min, prod and a custom combiner") {
    std::vector<float> xv{1, -2, 3, 4, 5, -6};
    Array x = array(xv, Shape::of({2, 3}));
    Array s = sum(x, {1}, true);
    Array mx = max(x, {0});
    Array mn = min(x, {1});
    Array pr = reduce(ReduceOp::Prod, x, {0}, true);
    Array cu = reduce([](Sym acc, Sym v) { return acc + v * v; }, 0.0, x, {1});
    Partitioned p = run_partitioned({s, mx, mn, pr, cu});
    REQUIRE(p.ir.kernels.size() == 5);
    const poly::Statement& u = p.ir.kernels[0].statements.at(1);
    CHECK(u.write_access == AffineMap(2, 2, {1, 0, 0, 0}, {0, 0})); // keepdims: (i, 0)
    CHECK(p.ir.kernels[4].statements.at(1).reduce_op == ReduceOp::Custom);
    check_close(p.results[0], {2, 3});
    check_close(p.results[1], {4, 5, 3});
    check_close(p.results[2], {-2, -6});
    check_close(p.results[3], {4, -10, -18});
    check_close(p.results[4], {14, 77});
    CHECK(p.results[0].sizes() == std::vector<std::int64_t>{2, 1});
}

TEST_CASE("an integer sum widens to i64 and matches the reference") {
    Array x = array(std::vector<std::int32_t>{2000000000, 2000000000, 7}, Shape::of({3}));
    Array s = sum(x);
    Partitioned p = check_against_reference({s});
    CHECK(p.results[0].dtype() == DType::I64);
    CHECK(p.results[0].values<std::int64_t>()[0] == 4000000007LL);
}

TEST_CASE("a view of a map is inlined with the view pushed into the map's operands") {
    auto av = small_values(6, 31), bv = small_values(6, 32);
    Array a = array(av, Shape::of({2, 3}));
    Array b = array(bv, Shape::of({2, 3}));
    Array c = array(std::vector<float>{1, 2}, Shape::of({2}));
    Array y = transpose(a + b) * c; // (3, 2)
    Partitioned p = run_partitioned({y});
    REQUIRE(p.ir.kernels.size() == 1);
    const auto& reads = p.ir.kernels[0].statements.at(0).reads;
    REQUIRE(reads.size() == 3);
    CHECK(reads[0].access == AffineMap(2, 2, {0, 1, 1, 0}, {0, 0})); // a[j, i]
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j)
            want.push_back((av[j * 3 + i] + bv[j * 3 + i]) * (j + 1));
    check_close(p.results[0], want);
}

TEST_CASE("a costly map read by a contraction is stored once, a cheap one is inlined") {
    const int n = 6;
    Array x = array(small_values(n * n, 21), Shape::of({n, n}));
    Array w = array(small_values(n * n, 22), Shape::of({n, n}));
    // tanh (a math function) feeding a product: stored, else recomputed per column of w.
    Array g = tanh(x * 0.125f) * x;
    Partitioned p = check_against_reference({matmul(g, w)}, {}, {}, 1e-5);
    bool stored = false;
    for (const poly::Buffer& b : p.ir.buffers)
        stored = stored || b.node == g.node();
    CHECK(stored);
    // A ReLU is cheaper to recompute than to store.
    Array r = relu(x);
    Partitioned q = check_against_reference({matmul(r, w)});
    for (const poly::Buffer& b : q.ir.buffers)
        CHECK(b.node != r.node());
    CHECK(q.ir.kernels.size() == 1);
}

TEST_CASE("a reduction that is no contraction, with an epilogue: contiguous counter innermost") {
    // An embedding's one-hot adjoint plus a second gradient of the same table (a tied head):
    // dtable[v, c] = sum_b (idx[b] == v ? g[b, c] : 0) + h[v, c]. Scheduled by isl, the nest ran
    // the batch counter innermost, every read of g strided by a row.
    const int batch = 40, vocab = 7, dim = 33;
    Array idx = array(std::vector<std::int64_t>(batch, 3), Shape::of({batch}));
    Array g = array(small_values(batch * dim, 23), Shape::of({batch, dim}));
    Array h = array(small_values(vocab * dim, 24), Shape::of({vocab, dim}));
    Array onehot =
        index_components(Shape::of({batch, vocab}), 1) == reshape(idx, Shape::of({batch, 1}));
    Array picked = where(reshape(onehot, Shape::of({batch, vocab, 1})),
                         reshape(g, Shape::of({batch, 1, dim})), 0.0f);
    Array dtable = sum(picked, {0}) + h;
    Partitioned p = check_against_reference({dtable}, {}, {}, 1e-6);
    sched::LoopProgram loops = sched::lower_kernels(p.ir);
    std::string ast = sched::to_string(loops.asts.back());
    CAPTURE(ast);
    CHECK(ast.find("// mark: direct") != std::string::npos);
    CHECK(ast.find("// mark: permutable") == std::string::npos);
}
