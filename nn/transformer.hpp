// The layers of a GPT-style transformer (nanoGPT's model): layer normalization, the tanh GELU,
// a token embedding and multi-head causal self-attention. Like nn/layers.hpp, each returns a
// lazy array built from views, maps and sums, so a whole block, its gradient and the optimizer
// update compile into one program. Weights use PyTorch's layouts (nn.Linear (out, in),
// nn.Embedding (vocab, dim), nn.LayerNorm (features)), so exported PyTorch weights load
// unchanged. With nn::linear (a (B, T, C) activation against an (O, C) weight gives (B, T, O))
// and nn::cross_entropy they make the whole model.
// Under nn::Autocast (nn/autocast.hpp) layer_norm and gelu compute in f32 and attention's two
// products read half operands (its scores are scaled and soft-maxed in f32).
#pragma once

#include <cstdint>

#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra::nn {

// PyTorch's nn.LayerNorm over the last axis of x (..., F): (x − mean) / sqrt(var + eps) ·
// weight + bias, with the biased variance (divided by F). weight and bias are (F); either may
// be an empty Array (no scale, no shift).
Array layer_norm(const Array& x, const Array& weight, const Array& bias, double eps = 1e-5,
                 SourceLocation loc = SourceLocation::current());

// GELU, tanh form (PyTorch's approximate="tanh"): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
Array gelu(const Array& x, SourceLocation loc = SourceLocation::current());

// PyTorch's nn.Embedding: rows of table (V, D) picked by integer indices of any shape (...),
// giving (..., D). An index outside [0, V) (negative included) gives a row of zeros, and no
// gradient reaches the table from it (PyTorch raises instead).
Array embedding(const Array& indices, const Array& table,
                SourceLocation loc = SourceLocation::current());

// nanoGPT's CausalSelfAttention without dropout. x is (B, T, C); [q | k | v] = linear(x, w_qkv,
// b_qkv) with w_qkv (3C, C) and b_qkv (3C) (or empty), in that order; head h reads channels
// h·D .. h·D + D − 1 of each (D = C / heads); per head softmax(q·kᵀ / √D + causal mask)·v, where
// position t attends to positions 0..t; the heads concatenated, then linear(·, w_proj, b_proj)
// with w_proj (C, C) and b_proj (C) (or empty). The heads are views of the projection: no
// copies, no transposes in memory. Result (B, T, C).
Array causal_self_attention(const Array& x, const Array& w_qkv, const Array& b_qkv,
                            const Array& w_proj, const Array& b_proj, std::int64_t heads,
                            SourceLocation loc = SourceLocation::current());

// The two halves of causal_self_attention, for layers that split the heads across ranks
// (nn/tensor_parallel.hpp): attention_heads gives every head's output (B, heads, T, D) from
// w_qkv (3 · heads · D, C) laid out as [q | k | v]; merge_heads contracts it with w_proj
// (C', heads · D) into (B, T, C'), adding b_proj (C') when given.
Array attention_heads(const Array& x, const Array& w_qkv, const Array& b_qkv, std::int64_t heads,
                      SourceLocation loc = SourceLocation::current());
Array merge_heads(const Array& y, const Array& w_proj, const Array& b_proj,
                  SourceLocation loc = SourceLocation::current());

} // namespace hedra::nn
