// Neural-network layers written only with hedra's primitives and library functions: a dense
// layer and a convolution are a view of each operand over one index space, a map and a sum;
// max pooling is a window view and a max; softmax and cross-entropy detach the max shift with
// stop_gradient. Nothing here loops over tensor data: every layer returns a lazy array, so the
// forward pass, its gradient and the optimizer update compile into one program.
// Weights use PyTorch's layouts (linear (out, in...), conv (out, in, kh, kw)), so PyTorch's
// weights load unchanged.
// Under nn::Autocast (nn/autocast.hpp) linear and conv2d read half-rounded operands and give a
// half result, and softmax, log_softmax and the losses compute in f32 (their results are f32).
#pragma once

#include <cstdint>

#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra::nn {

// y[n..., o] = Σ_f x[n..., f...] · weight[o, f...] (+ bias[o]). weight is (O, F...) and x
// (N..., F...): x's last weight.rank() − 1 axes are the features, contracted with weight's
// (any number of feature axes: an image (C, H, W) against a weight (O, C, H, W) is contracted
// over all three, with no flatten), and its axes before them are kept, so a (B, T, C)
// activation against a (O, C) weight gives (B, T, O), as PyTorch's nn.Linear does.
// `bias` (O) may be an empty Array.
Array linear(const Array& x, const Array& weight, const Array& bias = Array(),
             SourceLocation loc = SourceLocation::current());

// 2-D convolution (cross-correlation, as PyTorch's): x (N, C, H, W), weight (CO, C, KH, KW),
// bias (CO) or an empty Array; zero padding `padding` on both sides of H and W, then a window
// view x[n, c, stride·oh + kh, stride·ow + kw]. Result (N, CO, OH, OW) with
// OH = (H + 2·padding − KH) / stride + 1, likewise OW.
Array conv2d(const Array& x, const Array& weight, const Array& bias = Array(),
             std::int64_t stride = 1, std::int64_t padding = 0,
             SourceLocation loc = SourceLocation::current());

// Max pooling over kernel×kernel windows of the last two axes of x (N, C, H, W), moved by
// `stride` (0: stride = kernel); no padding, a partial window at the edge is dropped.
Array maxpool2d(const Array& x, std::int64_t kernel, std::int64_t stride = 0,
                SourceLocation loc = SourceLocation::current());

// Activations are hedra's own: relu, tanh and sigmoid (core/library.hpp).

// Softmax and log-softmax along `axis`, shifted by the detached maximum so that large inputs do
// not overflow (the shift does not change the value, so no gradient is lost).
Array softmax(const Array& x, int axis = -1, SourceLocation loc = SourceLocation::current());
Array log_softmax(const Array& x, int axis = -1, SourceLocation loc = SourceLocation::current());

// Mean cross-entropy of logits (B, K) against integer class labels (B) in [0, K): the one-hot
// mask is index_components(logits' shape, 1) == labels, so no one-hot data is ever built.
// The result is a rank-0 array of the logits' dtype.
Array softmax_cross_entropy(const Array& logits, const Array& labels,
                            SourceLocation loc = SourceLocation::current());

// Mean cross-entropy of logits (..., K) against integer labels (...) over every leading
// position, as PyTorch's F.cross_entropy on logits flattened to (N, K): a (B, T, K) language
// model output against (B, T) targets gives −Σ log_softmax(logits)[b, t, label[b, t]] / (B·T).
// A label outside [0, K) picks no class and adds 0 to the sum (it still counts in the mean;
// PyTorch raises instead). The result is a rank-0 array of the logits' dtype.
Array cross_entropy(const Array& logits, const Array& labels,
                    SourceLocation loc = SourceLocation::current());

// The number of rows whose largest logit is at the label's class (ties go to the lowest
// class, as argmax does): a rank-0 i64 array.
Array count_correct(const Array& logits, const Array& labels,
                    SourceLocation loc = SourceLocation::current());

// Inverted dropout: each element of x is kept with probability 1 − p and scaled by 1/(1 − p),
// or set to 0. The keep decision is a counter-based generator evaluated in the graph
// (nn/random.hpp: SplitMix64 of the element's row-major position, seeded by `seed`), so the
// mask costs no memory, the backward pass recomputes it, and `seed` (a rank-0 integer array,
// e.g. a placeholder) changes per call of a compiled step without recompiling. The same seed
// gives the same mask. x itself when !training or p == 0 (`seed` may then be empty); zeros
// when p == 1. p must lie in [0, 1].
Array dropout(const Array& x, double p, const Array& seed, bool training = true,
              SourceLocation loc = SourceLocation::current());

} // namespace hedra::nn
