// The C loops of bench/fused (see fused_peer.hpp).
#include "bench/fused_peer.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace hedra::bench {

void softmax_peer(const float* x, float* out, std::int64_t rows, std::int64_t cols, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) {
        const float* r = x + i * cols;
        float* o = out + i * cols;
        float m = r[0];
        for (std::int64_t j = 1; j < cols; ++j)
            m = r[j] > m ? r[j] : m;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (std::int64_t j = 0; j < cols; ++j) {
            o[j] = expf(r[j] - m);
            s += o[j];
        }
        float inv = 1.0f / s;
#pragma omp simd
        for (std::int64_t j = 0; j < cols; ++j)
            o[j] *= inv;
    }
}

void tanh_colsum_peer(const float* x, float* y, std::int64_t rows, std::int64_t cols, float a,
                      float b, int threads) {
    std::memset(y, 0, sizeof(float) * static_cast<std::size_t>(cols));
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> acc(static_cast<std::size_t>(cols), 0.0f);
        float* ac = acc.data();
#pragma omp for schedule(static) nowait
        for (std::int64_t i = 0; i < rows; ++i) {
            const float* r = x + i * cols;
#pragma omp simd
            for (std::int64_t j = 0; j < cols; ++j)
                ac[j] += tanhf(a * r[j] + b);
        }
#pragma omp critical
        for (std::int64_t j = 0; j < cols; ++j)
            y[j] += ac[j];
    }
}

void layer_norm_peer(const float* x, float* out, std::int64_t rows, std::int64_t cols,
                     int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) {
        const float* r = x + i * cols;
        float* o = out + i * cols;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (std::int64_t j = 0; j < cols; ++j)
            s += r[j];
        const float mean = s / float(cols);
        float q = 0;
#pragma omp simd reduction(+ : q)
        for (std::int64_t j = 0; j < cols; ++j)
            q += (r[j] - mean) * (r[j] - mean);
        const float inv = 1.0f / std::sqrt(q / float(cols) + 1e-5f);
#pragma omp simd
        for (std::int64_t j = 0; j < cols; ++j)
            o[j] = (r[j] - mean) * inv;
    }
}

void gelu_peer(const float* x, float* out, std::int64_t n, int threads) {
    const float c = 0.7978845608028654f; // sqrt(2 / pi)
#pragma omp parallel for simd num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        float v = x[i];
        out[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
    }
}

void chain10_peer(const float* x, const float* y, float* out, std::int64_t n) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
        float t = ((x[i] + y[i]) * x[i] - y[i]) * 0.5f + 1.0f;
        t = std::tanh(t > 0.0f ? t : 0.0f);
        out[i] = -(t * y[i] + x[i]);
    }
}

} // namespace hedra::bench
