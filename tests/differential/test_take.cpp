// Differential: take (data-dependent reads along one axis) on every backend against the
// reference and against a naive loop: embedding-shaped tables, middle axes, views of the source,
// computed sources and computed (clamped) indices, and take inside larger fused programs.
#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;

namespace {

// result(p, q, r) = src(p, clamp(idx(q)), r) over row-major flat loops.
std::vector<double> naive_take(const HostArray& src, const HostArray& idx, int axis) {
    const std::vector<std::int64_t>& s = src.sizes();
    std::int64_t outer = 1, inner = 1, n = s[static_cast<std::size_t>(axis)];
    for (int d = 0; d < axis; ++d)
        outer *= s[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < s.size(); ++d)
        inner *= s[d];
    std::vector<double> out;
    for (std::int64_t p = 0; p < outer; ++p)
        for (std::int64_t q = 0; q < idx.size(); ++q) {
            auto v = static_cast<std::int64_t>(idx.flat(q));
            v = std::min<std::int64_t>(std::max<std::int64_t>(v, 0), n - 1);
            for (std::int64_t r = 0; r < inner; ++r)
                out.push_back(src.flat((p * n + v) * inner + r));
        }
    return out;
}

void check_naive(const Array& result, const HostArray& src, const HostArray& idx, int axis) {
    std::vector<double> want = naive_take(src, idx, axis);
    for (const std::string& b : test::generating_backends()) {
        CAPTURE(b);
        HostArray got = get_backend(b)->evaluate({result.node()}, {}).at(0);
        REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
        for (std::size_t i = 0; i < want.size(); ++i)
            REQUIRE(got.flat(static_cast<std::int64_t>(i)) == want[i]);
    }
}

} // namespace

TEST_CASE("differential: take rows of a table by a batch of token ids (embedding)") {
    for (std::int64_t vocab : {1, 7, 300}) {
        CAPTURE(vocab);
        Array table = test::random_array(Shape::of({vocab, 12}), 1);
        auto ids = test::random_ints(5 * 9, 2, 0, static_cast<int>(vocab - 1));
        Array tokens = array(ids, Shape::of({5, 9}));
        Array x = take(table, tokens);
        CHECK(x.shape() == Shape::of({5, 9, 12}));
        check_differential({x, x * 2.0f + 1.0f});
        check_naive(x, compute(table, test::on_backend("reference")), compute(tokens), 0);
    }
}

TEST_CASE("differential: take along a middle axis, i64 indices, a view and a map as source") {
    Array a = test::random_array(Shape::of({3, 11, 4}), 3);
    std::vector<std::int64_t> picks{10, 0, 3, 3, 7};
    Array idx = array(picks, Shape::of({5}));
    Array t = take(a, idx, 1);
    CHECK(t.shape() == Shape::of({3, 5, 4}));
    HostArray src = compute(a, test::on_backend("reference"));
    check_naive(t, src, compute(idx), 1);
    // A transposed view and a computed source are materialized before the gather reads them.
    Array at = reshape(a, Transform::permutation({2, 1, 0})); // (4, 11, 3)
    Array s = exp(a) - 1.0f;
    Array rows = array(std::vector<std::int32_t>{2, 0, 1, 1}, Shape::of({2, 2}));
    check_differential({take(at, idx, 1), take(s, idx, -2), take(s, rows, 0) + 1.0f});
    // A scalar index drops the axis.
    Array one = take(a, array(std::vector<std::int32_t>{4}, Shape{}), 1);
    CHECK(one.shape() == Shape::of({3, 4}));
    check_differential({one});
}

TEST_CASE("differential: computed indices are clamped into the axis, as the reference does") {
    Array table = test::random_array(Shape::of({6, 3}), 4);
    // argmax of a computed array, and an index expression that leaves the range both ways.
    Array scores = test::random_array(Shape::of({4, 6}), 5);
    Array best = argmax(scores, 1);
    Array wild = index_components(Shape::of({8}), 0) * 3 - 5; // -5, -2, ..., 16
    Array picked = take(table, best);
    Array clamped = take(table, wild);
    check_differential({picked, clamped, picked * 2.0f});
    check_naive(clamped, compute(table, test::on_backend("reference")),
                compute(wild, test::on_backend("reference")), 0);
}

TEST_CASE("differential: take feeding reductions and contractions in one program") {
    Array table = test::random_array(Shape::of({50, 16}), 6);
    Array w = test::random_array(Shape::of({16, 8}), 7);
    Array tokens = array(test::random_ints(4 * 6, 8, 0, 49), Shape::of({4, 6}));
    Array x = take(table, tokens); // (4, 6, 16)
    Array h = matmul(x, w);        // (4, 6, 8)
    Array mean_row = sum(x, {2}) / 16.0f;
    check_differential({h, mean_row, exp(h) / sum(exp(h), {2}, true)}, test::Compare::Tolerance);
}

TEST_CASE("differential: scatter_add sums rows in index order, the same bits every run") {
    Array ids = array(test::random_ints(7 * 5, 9, 0, 9), Shape::of({7, 5}));
    Array values = test::random_array(Shape::of({7, 5, 33}), 10);
    Array x = scatter_add(values, ids, 0, Shape::of({10, 33}));
    check_differential({x}, test::Compare::Tolerance);
    // Integers exactly; a middle axis; computed (clamped) indices.
    Array ivalues = array(test::random_ints(3 * 6 * 2, 11, -1000, 1000), Shape::of({3, 6, 2}));
    Array wild = index_components(Shape::of({6}), 0) * 2 - 3; // -3 .. 7
    check_differential({scatter_add(ivalues, wild, 1, Shape::of({3, 4, 2}))});
    // The order of the additions is fixed: every backend, thread count and run gives the bits
    // of a sequential sum over the indices in row-major order (not the reference's f64 sums).
    HostArray v = compute(values, test::on_backend("reference"));
    HostArray idx = compute(ids);
    std::vector<float> want(10 * 33, 0.0f);
    for (std::int64_t q = 0; q < 35; ++q)
        for (std::int64_t r = 0; r < 33; ++r)
            want[static_cast<std::size_t>(static_cast<std::int64_t>(idx.flat(q)) * 33 + r)] +=
                static_cast<float>(v.flat(q * 33 + r));
    for (const std::string& b : test::generating_backends())
        for (int threads : {1, 2}) {
            CAPTURE(b);
            CAPTURE(threads);
            CompileOptions o;
            o.num_threads = threads;
            HostArray got = get_backend(b)->evaluate({x.node()}, o).at(0);
            for (std::size_t i = 0; i < want.size(); ++i)
                REQUIRE(got.values<float>()[i] == want[i]);
        }
}

TEST_CASE("differential: an embedding's forward and backward in one program") {
    Array table = test::random_array(Shape::of({40, 8}), 12);
    Array tokens = array(test::random_ints(6 * 4, 13, 0, 39), Shape::of({6, 4}));
    Array w = test::random_array(Shape::of({8, 8}), 14);
    Array h = matmul(take(table, tokens), w);
    Array g = grad(sum(h * h), table);
    check_differential({h, g}, test::Compare::Tolerance);
}

TEST_CASE("differential: take and scatter_add of small reductions, fuses and broadcasts") {
    // Operands the partitioner would otherwise inline (a reduction of 3 terms unrolled into its
    // reader, a broadcast view of a scalar) stay buffers for the indexed reads.
    Array a = test::random_array(Shape::of({4, 3}), 15);
    Array small = sum(a, {1}); // (4), 3 terms each
    Array ids = array(std::vector<std::int32_t>{3, 0, 3}, Shape::of({3}));
    Array scalar_src = broadcast_to(sum(a), Shape::of({5, 2}));
    Array one = array(std::vector<std::int64_t>{1}, Shape{});
    Array rows = take(small, ids) * 2.0f;
    check_differential(
        {rows, take(scalar_src, one, -1),
         take(take(a, ids), array(std::vector<std::int32_t>{2, 0}, Shape::of({2})), 0),
         scatter_add(rows, ids, 0, Shape::of({4}))},
        test::Compare::Tolerance);
}

TEST_CASE("differential: take and its gradient with a symbolic batch, one program per backend") {
    Array table = test::random_array(Shape::of({30, 6}), 16);
    Array ids = placeholder(Shape{dynamic("take_rows", 8), range(3)}, DType::I32, "ids");
    Array x = take(table, ids);
    Array g = grad(sum(x * x), table);
    for (const std::string& b : test::generating_backends()) {
        CAPTURE(b);
        ComputeOptions options = test::on_backend(b);
        CompiledProgram p = compile({x, g}, {ids}, options);
        for (std::int64_t rows : {2, 5, 8}) {
            CAPTURE(rows);
            std::vector<std::int32_t> v;
            for (std::int64_t i = 0; i < rows * 3; ++i)
                v.push_back(static_cast<std::int32_t>((i * 11 + rows) % 30));
            HostArray h = HostArray::from(v, {rows, 3});
            std::vector<HostArray> got = p({h});
            std::vector<HostArray> want =
                get_backend("reference")
                    ->evaluate(
                        {take(table, array(h)).node(),
                         grad(sum(take(table, array(h)) * take(table, array(h))), table).node()},
                        {});
            test::compare_arrays(got[0], want[0], test::Compare::Exact, {}, b);
            test::compare_arrays(got[1], want[1], test::Compare::Tolerance, {}, b);
        }
    }
}

// A reduction's rows gathered along a row axis in the same row-fused kernel: the kernel's rows
// are only the axes before the gathered one (a row fused over both wrote row q of the sums and
// then read rows the loop had not reached yet: stale values from the previous run).
TEST_CASE("differential: take along a row axis of a sum computed in the same kernel") {
    Array x = test::random_array(Shape::of({3, 4, 2, 5}), 5);
    Array sums = sum(x, {2}); // (3, 4, 5)
    Array ids = array(std::vector<std::int64_t>{3, 1, 1, 0, 2, 3, 0, 2}, Shape::of({4, 2}));
    Array gathered = take(sums, ids, 1) * 2.0f; // (3, 4, 2, 5)
    check_differential({gathered});
    HostArray src = compute(sums, test::on_backend("reference"));
    std::vector<double> want = naive_take(src, compute(ids, test::on_backend("reference")), 1);
    for (const std::string& b : test::generating_backends()) {
        CAPTURE(b);
        for (int run = 0; run < 2; ++run) {
            HostArray got = get_backend(b)->evaluate({gathered.node()}, {}).at(0);
            REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                CHECK(got.flat(static_cast<std::int64_t>(i)) == doctest::Approx(2 * want[i]));
        }
    }
}
