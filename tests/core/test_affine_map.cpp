// AffineMap: construction checks, apply, compose against applying twice, printing.
#include <doctest/doctest.h>

#include <random>

#include "core/affine_map.hpp"
#include "expect_error.hpp"

using namespace hedra;

namespace {

AffineMap random_map(std::mt19937& rng, int in_rank, int out_rank) {
    std::uniform_int_distribution<int> coeff(-3, 3), off(-5, 5);
    std::vector<std::int64_t> m(static_cast<std::size_t>(in_rank * out_rank)), b(out_rank);
    for (auto& x : m)
        x = coeff(rng);
    for (auto& x : b)
        x = off(rng);
    return AffineMap(in_rank, out_rank, m, b);
}

// out = M in + b by hand.
std::vector<std::int64_t> naive_apply(const AffineMap& a, const std::vector<std::int64_t>& in) {
    std::vector<std::int64_t> out;
    for (int o = 0; o < a.out_rank(); ++o) {
        std::int64_t v = a.offsets()[o];
        for (int i = 0; i < a.in_rank(); ++i)
            v += a.matrix()[o * a.in_rank() + i] * in[i];
        out.push_back(v);
    }
    return out;
}

} // namespace

TEST_CASE("affine map basics") {
    // (d0, d1) -> (d1, 2*d0 + 1)
    AffineMap m(2, 2, {0, 1, 2, 0}, {0, 1});
    CHECK(m.in_rank() == 2);
    CHECK(m.out_rank() == 2);
    CHECK(m.coeff(1, 0) == 2);
    CHECK(m.offset(1) == 1);
    CHECK(m.apply({3, 5}) == std::vector<std::int64_t>{5, 7});
    CHECK(m.to_string() == "(d0, d1) -> (d1, 2*d0 + 1)");
    CHECK_FALSE(m.is_identity());

    AffineMap id = AffineMap::identity(3);
    CHECK(id.is_identity());
    CHECK(id.apply({4, -1, 2}) == std::vector<std::int64_t>{4, -1, 2});
    CHECK(id.to_string() == "(d0, d1, d2) -> (d0, d1, d2)");
    CHECK(AffineMap::identity(0).is_identity());
    CHECK(AffineMap::identity(0).apply({}).empty());
    CHECK_FALSE(AffineMap(2, 2, {1, 0, 0, 1}, {0, 1}).is_identity());
    CHECK_FALSE(AffineMap::projection(2, {0}).is_identity());

    AffineMap p = AffineMap::projection(3, {2, 0, 0});
    CHECK(p.apply({7, 8, 9}) == std::vector<std::int64_t>{9, 7, 7});
    CHECK(p.to_string() == "(d0, d1, d2) -> (d2, d0, d0)");
}

TEST_CASE("affine map printing") {
    CHECK(AffineMap(2, 1, {1, 2}, {-3}).to_string() == "(d0, d1) -> (d0 + 2*d1 - 3)");
    CHECK(AffineMap(2, 1, {-1, -2}, {0}).to_string() == "(d0, d1) -> (-d0 - 2*d1)");
    CHECK(AffineMap(1, 2, {0, 0}, {0, 4}).to_string() == "(d0) -> (0, 4)");
    CHECK(AffineMap(0, 1, {}, {5}).to_string() == "() -> (5)");
    CHECK(AffineMap(2, 0, {}, {}).to_string() == "(d0, d1) -> ()");
}

TEST_CASE("affine map compose equals applying twice") {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> rank(0, 3), val(-6, 6);
    for (int trial = 0; trial < 300; ++trial) {
        int n = rank(rng), m = rank(rng), p = rank(rng);
        AffineMap inner = random_map(rng, n, m), outer = random_map(rng, m, p);
        AffineMap both = outer.compose(inner);
        CHECK(both.in_rank() == n);
        CHECK(both.out_rank() == p);
        for (int k = 0; k < 5; ++k) {
            std::vector<std::int64_t> x(n);
            for (auto& v : x)
                v = val(rng);
            CHECK(inner.apply(x) == naive_apply(inner, x));
            CHECK(both.apply(x) == outer.apply(inner.apply(x)));
        }
        CHECK(AffineMap::identity(m).compose(inner) == inner);
        CHECK(inner.compose(AffineMap::identity(n)) == inner);
    }
}

TEST_CASE("a convolution window as one affine map") {
    // (n, oh, kh) -> (n, 2*oh + kh)
    AffineMap w(3, 2, {1, 0, 0, 0, 2, 1}, {0, 0});
    CHECK(w.apply({1, 3, 2}) == std::vector<std::int64_t>{1, 8});
    CHECK(w.to_string() == "(d0, d1, d2) -> (d0, 2*d1 + d2)");
}

TEST_CASE("bad affine maps throw") {
    CHECK_ERROR(AffineMap(2, 2, {1, 0, 0}, {0, 0}), "matrix has 3 entries", "expected 4");
    CHECK_ERROR(AffineMap(2, 2, {1, 0, 0, 1}, {0}), "offset has 1 entries", "expected 2");
    CHECK_ERROR(AffineMap(-1, 2, {}, {0, 0}), "negative rank");
    CHECK_ERROR(AffineMap::projection(2, {0, 2}), "output 1", "axis 2", "input rank is 2");
    CHECK_ERROR(AffineMap::projection(2, {-1}), "axis -1");
    CHECK_ERROR(AffineMap::identity(2).apply({1, 2, 3}), "rank 3", "expected rank 2",
                "(d0, d1) -> (d0, d1)");
    CHECK_ERROR(AffineMap::identity(2).compose(AffineMap::identity(3)), "cannot compose",
                "3 outputs", "expected 2");
}
