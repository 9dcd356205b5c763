// Whole program: softmax with the max subtracted (large inputs must not overflow), over the
// last axis and over axis 0, against a naive loop in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "hedra.hpp"

using namespace hedra;

namespace {

Array softmax(const Array& x, int axis) {
    Array shifted = x - max(x, {axis}, true);
    Array e = exp(shifted);
    return e / sum(e, {axis}, true);
}

// Softmax of a (rows, cols) row-major matrix over axis 1 (axis 0 if `over_rows`).
std::vector<double> naive_softmax(const std::vector<float>& x, int rows, int cols, bool over_rows) {
    std::vector<double> y(x.size());
    int outer = over_rows ? cols : rows, inner = over_rows ? rows : cols;
    for (int o = 0; o < outer; ++o) {
        auto at = [&](int i) { return over_rows ? i * cols + o : o * cols + i; };
        double m = -INFINITY, s = 0;
        for (int i = 0; i < inner; ++i)
            m = std::max(m, double(x[at(i)]));
        for (int i = 0; i < inner; ++i)
            s += std::exp(double(x[at(i)]) - m);
        for (int i = 0; i < inner; ++i)
            y[at(i)] = std::exp(double(x[at(i)]) - m) / s;
    }
    return y;
}

std::vector<float> logits(int n) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i)
        v[i] = static_cast<float>(std::sin(0.9 * i) * 4.0);
    v[1] = 1000.0f; // exp(1000) overflows without the max shift
    v[7] = 950.0f;
    return v;
}

void check_close(const HostArray& h, const std::vector<std::int64_t>& sizes,
                 const std::vector<double>& expect) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expect.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(std::isfinite(got[i]));
        CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-5));
    }
}

} // namespace

TEST_CASE("program: softmax over the last axis") {
    auto xv = logits(24);
    Array x = array(xv, Shape::of({4, 6}));
    check_close(compute(softmax(x, 1)), {4, 6}, naive_softmax(xv, 4, 6, false));
    check_close(compute(softmax(x, -1)), {4, 6}, naive_softmax(xv, 4, 6, false));
}

TEST_CASE("program: softmax over axis 0") {
    auto xv = logits(24);
    Array x = array(xv, Shape::of({4, 6}));
    check_close(compute(softmax(x, 0)), {4, 6}, naive_softmax(xv, 4, 6, true));
}

TEST_CASE("program: softmax of a batch sums to one") {
    auto xv = logits(30);
    Array x = array(xv, Shape::of({2, 3, 5}));
    HostArray y = compute(sum(softmax(x, 2), {2}));
    REQUIRE(y.sizes() == std::vector<std::int64_t>{2, 3});
    for (double v : y.to_doubles())
        CHECK(v == doctest::Approx(1.0).epsilon(1e-6));
    // Per row of 5, the same as the 2D naive softmax of the (6, 5) matrix.
    check_close(compute(softmax(x, 2)), {2, 3, 5}, naive_softmax(xv, 6, 5, false));
}
