// Small models written with hedra's primitives for the AD tests: conv2d as one window view, a
// map and a sum; max pooling as a window view and a max; softmax cross-entropy with a detached
// max; layer norm; causal attention with a mask from index_components; a two-layer MLP.
#pragma once

#include <cmath>

#include "ad/grad.hpp"
#include "hedra.hpp"

namespace hedra::test {

// x (N,C,H,W), w (CO,C,KH,KW) -> (N,CO,OH,OW), stride s, zero padding p.
inline Array conv2d(const Array& x, const Array& w, std::int64_t s, std::int64_t p) {
    auto xs = x.shape().sizes(), ws = w.shape().sizes();
    const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    const std::int64_t CO = ws[0], KH = ws[2], KW = ws[3];
    Array xp = p > 0 ? pad(x, {{0, 0}, {0, 0}, {p, p}, {p, p}}) : x;
    const std::int64_t OH = (H + 2 * p - KH) / s + 1, OW = (W + 2 * p - KW) / s + 1;
    Shape win{range(N), range(CO), range(C), range(OH), range(OW), range(KH), range(KW)};
    AffineMap mx(7, 4,
                 {1,      0, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 0, 0, 0, /**/ 0, 0, 0, s, 0, 1, 0,
                  /**/ 0, 0, 0, 0, s, 0, 1},
                 {0, 0, -p, -p});
    AffineMap mw(7, 4,
                 {0,      1, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 0, 1, 0,
                  /**/ 0, 0, 0, 0, 0, 0, 1},
                 {0, 0, 0, 0});
    return sum(view(xp, win, mx) * view(w, win, mw), {2, 5, 6});
}

// 2x2 max pooling with stride 2 of x (N,C,H,W), H and W even.
inline Array maxpool2x2(const Array& x) {
    auto xs = x.shape().sizes();
    Shape win{range(xs[0]), range(xs[1]), range(xs[2] / 2), range(xs[3] / 2), range(2), range(2)};
    AffineMap m(6, 4, {1,      0, 0, 0, 0, 0, /**/ 0, 1, 0, 0, 0, 0, /**/ 0, 0, 2, 0, 1, 0,
                       /**/ 0, 0, 0, 2, 0, 1},
                {0, 0, 0, 0});
    return max(view(x, win, m), {4, 5});
}

// log softmax along the last axis of a rank-2 array, with the max shift detached.
inline Array log_softmax(const Array& z) {
    Array m = stop_gradient(max(z, {1}, true));
    return z - (log(sum(exp(z - m), {1}, true)) + m);
}

// Mean cross-entropy of logits z (B,K) against i64 labels (B,1).
inline Array softmax_cross_entropy(const Array& z, const Array& labels) {
    Array onehot = index_components(z.shape(), 1) == labels;
    return -sum(where(onehot, log_softmax(z), 0.0)) / static_cast<double>(z.shape()[0].size);
}

// x (B,D) normalized over D, scaled by gamma (D) and shifted by beta (D).
inline Array layer_norm(const Array& x, const Array& gamma, const Array& beta) {
    Array mu = mean(x, {1}, true);
    Array d = x - mu;
    Array var = mean(d * d, {1}, true);
    return d / sqrt(var + 1e-5) * gamma + beta;
}

// Single-head causal attention of q, k, v (T,D).
inline Array causal_attention(const Array& q, const Array& k, const Array& v) {
    const std::int64_t T = q.shape()[0].size, D = q.shape()[1].size;
    Array scores = matmul(q, transpose(k)) / std::sqrt(static_cast<double>(D));
    Shape tt{range(T), range(T)};
    Array allowed = index_components(tt, 1) <= index_components(tt, 0);
    Array masked = where(allowed, scores, -1e9);
    Array att = exp(log_softmax(masked));
    return matmul(att, v);
}

// Two-layer MLP with tanh, mean squared error against t.
inline Array mlp_loss(const Array& x, const Array& w1, const Array& b1, const Array& w2,
                      const Array& b2, const Array& t) {
    Array h = tanh(matmul(x, w1) + b1);
    Array out = matmul(h, w2) + b2;
    Array d = out - t;
    return mean(d * d);
}

} // namespace hedra::test
