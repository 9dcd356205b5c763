// Helpers for the nn layer tests: seeded host data, evaluation on the reference backend, and
// naive loop implementations of the layers in double (the independent oracle).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/compute.hpp"
#include "hedra.hpp"

namespace hedra::nn::test {

inline ComputeOptions reference_backend() {
    ComputeOptions o;
    o.backend = "reference";
    return o;
}

inline std::vector<double> evaluate(const Array& a) {
    return compute(a, reference_backend()).to_doubles();
}

// Uniform values in [lo, hi) from a seeded engine; distinct with probability 1.
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
    std::mt19937_64 engine(seed);
    std::vector<double> v(n);
    for (double& x : v)
        x = lo + (hi - lo) * (static_cast<double>(engine() >> 11) * 0x1.0p-53);
    return v;
}

inline void check_close(const std::vector<double>& got, const std::vector<double>& expect,
                        double rel = 1e-9, double abs = 1e-12) {
    REQUIRE(got.size() == expect.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(std::abs(got[i] - expect[i]) <= abs + rel * std::abs(expect[i]));
    }
}

// y[n, o] = Σ_f x[n, f] w[o, f] + b[o], x (n, f) and w (o, f) flat row-major.
inline std::vector<double> naive_linear(const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, int n, int f, int o) {
    std::vector<double> y(static_cast<std::size_t>(n * o));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < o; ++j) {
            double s = b.empty() ? 0.0 : b[j];
            for (int k = 0; k < f; ++k)
                s += x[i * f + k] * w[j * f + k];
            y[i * o + j] = s;
        }
    return y;
}

struct ConvSizes {
    int n, c, h, w, co, kh, kw, stride, pad;
    int oh() const { return (h + 2 * pad - kh) / stride + 1; }
    int ow() const { return (w + 2 * pad - kw) / stride + 1; }
};

inline std::vector<double> naive_conv2d(const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, const ConvSizes& s) {
    std::vector<double> y;
    for (int n = 0; n < s.n; ++n)
        for (int f = 0; f < s.co; ++f)
            for (int i = 0; i < s.oh(); ++i)
                for (int j = 0; j < s.ow(); ++j) {
                    double acc = b.empty() ? 0.0 : b[f];
                    for (int c = 0; c < s.c; ++c)
                        for (int a = 0; a < s.kh; ++a)
                            for (int q = 0; q < s.kw; ++q) {
                                int r = i * s.stride + a - s.pad, t = j * s.stride + q - s.pad;
                                if (r < 0 || r >= s.h || t < 0 || t >= s.w) continue;
                                acc += x[((n * s.c + c) * s.h + r) * s.w + t] *
                                       w[((f * s.c + c) * s.kh + a) * s.kw + q];
                            }
                    y.push_back(acc);
                }
    return y;
}

inline std::vector<double> naive_maxpool(const std::vector<double>& x, int n, int c, int h, int w,
                                         int k, int stride) {
    const int oh = (h - k) / stride + 1, ow = (w - k) / stride + 1;
    std::vector<double> y;
    for (int p = 0; p < n * c; ++p)
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < ow; ++j) {
                double m = -INFINITY;
                for (int a = 0; a < k; ++a)
                    for (int q = 0; q < k; ++q)
                        m = std::max(m, x[(p * h + i * stride + a) * w + j * stride + q]);
                y.push_back(m);
            }
    return y;
}

// log-softmax of each row of a (rows, cols) matrix.
inline std::vector<double> naive_log_softmax(const std::vector<double>& z, int rows, int cols) {
    std::vector<double> out(z.size());
    for (int r = 0; r < rows; ++r) {
        double m = -INFINITY, s = 0.0;
        for (int c = 0; c < cols; ++c)
            m = std::max(m, z[r * cols + c]);
        for (int c = 0; c < cols; ++c)
            s += std::exp(z[r * cols + c] - m);
        for (int c = 0; c < cols; ++c)
            out[r * cols + c] = z[r * cols + c] - m - std::log(s);
    }
    return out;
}

} // namespace hedra::nn::test
