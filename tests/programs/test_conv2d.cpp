// Whole program: 2D convolution written as a window view, a map and a reduce (stride 1 and 2,
// zero padding through pad()), against a naive loop nest.
#include <doctest/doctest.h>

#include "hedra.hpp"

using namespace hedra;

namespace {

constexpr int kN = 2, kC = 3, kH = 7, kW = 6, kF = 4, kKH = 3, kKW = 2;

std::vector<float> sample(std::size_t n, int seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((static_cast<long>(i) * 7919 + seed * 104729) % 2001) / 1000.0f -
               1.0f;
    return v;
}

// y[n,f,oh,ow] = sum_{c,kh,kw} x[n, c, s*oh + kh, s*ow + kw] * w[f, c, kh, kw] over the padded x.
Array conv2d(const Array& x, const Array& w, std::int64_t stride, std::int64_t padding) {
    Array xp = padding > 0 ? pad(x, {{0, 0}, {0, 0}, {padding, padding}, {padding, padding}}) : x;
    std::int64_t n = x.shape()[0].size, c = x.shape()[1].size;
    std::int64_t h = xp.shape()[2].size, wd = xp.shape()[3].size;
    std::int64_t f = w.shape()[0].size, kh = w.shape()[2].size, kw = w.shape()[3].size;
    std::int64_t oh = (h - kh) / stride + 1, ow = (wd - kw) / stride + 1;
    // Domain (n, f, oh, ow, c, kh, kw); pad() may move the index space, so read its starts.
    Shape space = Shape::of({n, f, oh, ow, c, kh, kw});
    AffineMap window(
        7, 4, {1, 0, 0,      0,      0, 0, 0, //
               0, 0, 0,      0,      1, 0, 0, //
               0, 0, stride, 0,      0, 1, 0, //
               0, 0, 0,      stride, 0, 0, 1},
        {xp.shape()[0].start, xp.shape()[1].start, xp.shape()[2].start, xp.shape()[3].start});
    AffineMap weights(7, 4, {0, 1, 0, 0, 0, 0, 0, //
                             0, 0, 0, 0, 1, 0, 0, //
                             0, 0, 0, 0, 0, 1, 0, //
                             0, 0, 0, 0, 0, 0, 1},
                      {0, 0, 0, 0});
    Array products = lazy([](auto a, auto b) { return a * b; }, view(xp, space, window),
                          view(w, space, weights));
    return sum(products, {4, 5, 6});
}

std::vector<double> naive_conv2d(const std::vector<float>& x, const std::vector<float>& w,
                                 int stride, int padding, int& oh, int& ow) {
    oh = (kH + 2 * padding - kKH) / stride + 1;
    ow = (kW + 2 * padding - kKW) / stride + 1;
    std::vector<double> y;
    for (int n = 0; n < kN; ++n)
        for (int f = 0; f < kF; ++f)
            for (int i = 0; i < oh; ++i)
                for (int j = 0; j < ow; ++j) {
                    double s = 0;
                    for (int c = 0; c < kC; ++c)
                        for (int a = 0; a < kKH; ++a)
                            for (int b = 0; b < kKW; ++b) {
                                int r = i * stride + a - padding, q = j * stride + b - padding;
                                if (r < 0 || r >= kH || q < 0 || q >= kW) continue;
                                s += double(x[((n * kC + c) * kH + r) * kW + q]) *
                                     double(w[((f * kC + c) * kKH + a) * kKW + b]);
                            }
                    y.push_back(s);
                }
    return y;
}

void check_conv(int stride, int padding) {
    INFO("stride " << stride << " padding " << padding);
    auto xv = sample(kN * kC * kH * kW, 1), wv = sample(kF * kC * kKH * kKW, 2);
    Array x = array(xv, Shape::of({kN, kC, kH, kW}));
    Array w = array(wv, Shape::of({kF, kC, kKH, kKW}));
    int oh = 0, ow = 0;
    auto expect = naive_conv2d(xv, wv, stride, padding, oh, ow);
    HostArray y = compute(conv2d(x, w, stride, padding));
    REQUIRE(y.sizes() == std::vector<std::int64_t>{kN, kF, oh, ow});
    auto got = y.to_doubles();
    REQUIRE(got.size() == expect.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-5));
    }
}

} // namespace

TEST_CASE("program: conv2d stride 1") {
    check_conv(1, 0);
}
TEST_CASE("program: conv2d stride 2") {
    check_conv(2, 0);
}
TEST_CASE("program: conv2d stride 1 with padding") {
    check_conv(1, 1);
}
TEST_CASE("program: conv2d stride 2 with padding") {
    check_conv(2, 1);
}
