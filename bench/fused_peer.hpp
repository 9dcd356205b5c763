// Plain C loops for bench/fused, compiled -O3 -march=native -ffast-math (glibc's vector expf and
// tanhf through libmvec): the in-process peer of bench/fused.
#pragma once

#include <cstdint>

namespace hedra::bench {

// W5a: out = softmax(x) along rows of a rows x cols matrix.
void softmax_peer(const float* x, float* out, std::int64_t rows, std::int64_t cols, int threads);
// W5b: y[j] = sum_i tanh(a x[i][j] + b).
void tanh_colsum_peer(const float* x, float* y, std::int64_t rows, std::int64_t cols, float a,
                      float b, int threads);

// Layer norm over each row, without scale and shift: (x - mean) / sqrt(var + 1e-5).
void layer_norm_peer(const float* x, float* out, std::int64_t rows, std::int64_t cols,
                     int threads);
// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu_peer(const float* x, float* out, std::int64_t n, int threads);
// W6: the 10-op chain of bench/peers/w6_torch.py on n elements (one thread).
void chain10_peer(const float* x, const float* y, float* out, std::int64_t n);

} // namespace hedra::bench
