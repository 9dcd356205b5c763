// Whole program: matrix products (non-square, batched, broadcast batch, vector operands, and
// the primitive form reduce(sum, map(*, view A, view B))) against naive loops.
#include <doctest/doctest.h>

#include "hedra.hpp"

using namespace hedra;

namespace {

std::vector<float> sample(std::size_t n, int seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((static_cast<long>(i) * 7919 + seed * 104729) % 2001) / 1000.0f -
               1.0f;
    return v;
}

void check_close(const HostArray& h, const std::vector<std::int64_t>& sizes,
                 const std::vector<double>& expected, double eps = 1e-5) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
    }
}

// C[b][i][j] = sum_k A[ab(b)][i][k] * B[bb(b)][k][j] for `batches` batches.
template <class T, class AB, class BB>
std::vector<double> naive_matmul(const std::vector<T>& a, const std::vector<T>& b, int batches,
                                 int m, int k, int n, AB ab, BB bb) {
    std::vector<double> c;
    for (int p = 0; p < batches; ++p)
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int l = 0; l < k; ++l)
                    s += double(a[(ab(p) * m + i) * k + l]) * double(b[(bb(p) * k + l) * n + j]);
                c.push_back(s);
            }
    return c;
}

auto same = [](int p) { return p; };
auto zero = [](int) { return 0; };

} // namespace

TEST_CASE("program: non-square matmul") {
    auto av = sample(5 * 7, 1), bv = sample(7 * 3, 2);
    Array a = array(av, Shape::of({5, 7})), b = array(bv, Shape::of({7, 3}));
    HostArray c = compute(matmul(a, b));
    CHECK(c.dtype() == DType::F32);
    check_close(c, {5, 3}, naive_matmul(av, bv, 1, 5, 7, 3, zero, zero));

    std::vector<double> ad(av.begin(), av.end()), bd(bv.begin(), bv.end());
    HostArray cd = compute(matmul(array(bd, Shape::of({3, 7})), array(ad, Shape::of({7, 5}))));
    CHECK(cd.dtype() == DType::F64);
    check_close(cd, {3, 5}, naive_matmul(bd, ad, 1, 3, 7, 5, zero, zero), 1e-12);
}

TEST_CASE("program: batched matmul") {
    auto av = sample(4 * 5 * 7, 3), bv = sample(4 * 7 * 3, 4);
    Array a = array(av, Shape::of({4, 5, 7})), b = array(bv, Shape::of({4, 7, 3}));
    check_close(compute(matmul(a, b)), {4, 5, 3}, naive_matmul(av, bv, 4, 5, 7, 3, same, same));
    // A shared right operand (rank 2) broadcasts over the batch.
    auto wv = sample(7 * 3, 5);
    Array w = array(wv, Shape::of({7, 3}));
    check_close(compute(matmul(a, w)), {4, 5, 3}, naive_matmul(av, wv, 4, 5, 7, 3, same, zero));
}

TEST_CASE("program: matmul with broadcast batch axes") {
    // (2,1,5,7) x (3,7,4) -> (2,3,5,4).
    auto av = sample(2 * 5 * 7, 6), bv = sample(3 * 7 * 4, 7);
    Array a = array(av, Shape::of({2, 1, 5, 7})), b = array(bv, Shape::of({3, 7, 4}));
    auto expect = naive_matmul(
        av, bv, 6, 5, 7, 4, [](int p) { return p / 3; }, [](int p) { return p % 3; });
    check_close(compute(matmul(a, b)), {2, 3, 5, 4}, expect);
}

TEST_CASE("program: matmul with vector operands") {
    auto vv = sample(7, 8), bv = sample(7 * 3, 9), av = sample(5 * 7, 10);
    Array v = array(vv, Shape::of({7}));
    check_close(compute(matmul(v, array(bv, Shape::of({7, 3})))), {3},
                naive_matmul(vv, bv, 1, 1, 7, 3, zero, zero));
    check_close(compute(matmul(array(av, Shape::of({5, 7})), v)), {5},
                naive_matmul(av, vv, 1, 5, 7, 1, zero, zero));
}

TEST_CASE("program: matmul from the primitives") {
    const int m = 6, k = 5, n = 4;
    auto av = sample(m * k, 11), bv = sample(k * n, 12);
    Array a = array(av, Shape::of({m, k})), b = array(bv, Shape::of({k, n}));
    Shape space = Shape::of({m, n, k});
    Array a3 = view(a, space, AffineMap(3, 2, {1, 0, 0, 0, 0, 1}, {0, 0}));
    Array b3 = view(b, space, AffineMap(3, 2, {0, 0, 1, 0, 1, 0}, {0, 0}));
    Array c = reduce(ReduceOp::Sum, lazy([](auto x, auto y) { return x * y; }, a3, b3), {2});
    check_close(compute(c), {m, n}, naive_matmul(av, bv, 1, m, k, n, zero, zero));

    std::vector<std::int32_t> ai(m * k), bi(k * n);
    for (int i = 0; i < m * k; ++i)
        ai[i] = i % 7 - 3;
    for (int i = 0; i < k * n; ++i)
        bi[i] = i % 5 - 2;
    HostArray ci = compute(matmul(array(ai, Shape::of({m, k})), array(bi, Shape::of({k, n}))));
    check_close(ci, {m, n}, naive_matmul(ai, bi, 1, m, k, n, zero, zero), 1e-12);
}
