// The transformer layers of transformer.hpp. Attention reads its heads as views of the fused
// q|k|v projection: head h of q at (b, h, t, d) is qkv[b, t, h·D + d], and kᵀ is the same view
// with its last two axes swapped, so q·kᵀ and att·v are matmuls of views. The heads are merged
// by reading the output projection's weight (C, C) as (C, heads, D) and contracting over both
// head axes, which needs no (B, T, C) copy of the attention output.
#include "nn/transformer.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "nn/autocast.hpp"
#include "nn/index_space.hpp"
#include "nn/layers.hpp"

namespace hedra::nn {

namespace {

using detail::at;
using detail::IndexMap;
using detail::zero_based;

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string out = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        out += (i ? ", " : "") + std::to_string(sizes[i]);
    return out + ")";
}

// Throws unless `a` is a float array of the given sizes (or empty, where `optional`).
void check_parameter(const char* op, const char* name, const Array& a,
                     const std::vector<std::int64_t>& sizes, bool optional, SourceLocation loc) {
    if (optional && !a.valid()) return;
    if (!a.valid() || !is_float(a.dtype()) || a.shape().sizes() != sizes)
        throw Error(std::string(op) + ": " + name + " must be a float array of shape " +
                    sizes_string(sizes) + (optional ? " or an empty Array" : "") + ", got " +
                    (a.valid() ? a.describe() : std::string("an empty Array")) + at(loc));
}

// Head `part` (0: q, 1: k, 2: v) of qkv (B, T, 3C) as (B, heads, T, D), or as (B, heads, D, T)
// where `transposed`.
Array head_view(const Array& qkv, int part, std::int64_t heads, bool transposed,
                SourceLocation loc) {
    const auto s = qkv.shape().sizes();
    const std::int64_t b = s[0], t = s[1], c = s[2] / 3, d = c / heads;
    const int t_axis = transposed ? 3 : 2, d_axis = transposed ? 2 : 3;
    const Shape space = transposed ? Shape::of({b, heads, d, t}) : Shape::of({b, heads, t, d});
    IndexMap m(4, qkv.shape());
    m.read(0, 0).read(1, t_axis).read(2, 1, d).read(2, d_axis).shift(2, part * c);
    return view(qkv, space, m.map(), loc);
}

} // namespace

Array layer_norm(const Array& x_in, const Array& weight, const Array& bias, double eps,
                 SourceLocation loc) {
    const Array x = autocast_f32(x_in, loc);
    if (x.rank() < 1 || !is_float(x.dtype()))
        throw Error("layer_norm: x must be a float array (..., features), got " + x.describe() +
                    at(loc));
    const std::int64_t features = x.shape()[x.rank() - 1].size;
    check_parameter("layer_norm", "weight", weight, {features}, true, loc);
    check_parameter("layer_norm", "bias", bias, {features}, true, loc);
    if (!(eps >= 0.0))
        throw Error("layer_norm: eps must be >= 0, got " + std::to_string(eps) + at(loc));
    Array z = zero_based(x);
    Array centered = Operand(z, loc) - mean(z, {-1}, true, loc);
    Array variance = mean(Operand(centered, loc) * centered, {-1}, true, loc);
    Array y = Operand(centered, loc) * (1.0 / sqrt(Operand(variance, loc) + eps, loc));
    if (weight.valid()) y = Operand(y, loc) * zero_based(weight);
    if (bias.valid()) y = Operand(y, loc) + zero_based(bias);
    return y;
}

Array gelu(const Array& x_in, SourceLocation loc) {
    const Array x = autocast_f32(x_in, loc); // one rounding where the next contraction reads it
    if (!is_float(x.dtype()))
        throw Error("gelu: x must be a float array, got " + x.describe() + at(loc));
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return lazy([k](Sym v) { return 0.5 * v * (1.0 + tanh(k * (v + 0.044715 * v * v * v))); },
                Operand(x, loc));
}

// A gather (core take): out[..., d] = table[indices[...], d], so the work is the rows read, not
// tokens × vocabulary × width; its gradient adds the cotangent rows back per index in index
// order (scatter_add). take clamps a computed index into the table, so the rows of indices
// outside [0, V) are masked to zero here (and pass no gradient), as documented.
Array embedding(const Array& indices, const Array& table, SourceLocation loc) {
    if (!is_integer(indices.dtype()))
        throw Error("embedding: indices must be an integer array, got " + indices.describe() +
                    at(loc));
    if (table.rank() != 2 || !is_float(table.dtype()))
        throw Error("embedding: table must be a float array (vocabulary, dim), got " +
                    table.describe() + at(loc));
    Array idx = zero_based(indices), tab = zero_based(table);
    const std::int64_t vocab = tab.shape()[0].size;
    // Clamped here, so take sees a computed index (its host-data check would refuse -1).
    Array inside_vocab = minimum(maximum(idx, 0), vocab - 1);
    Array rows = take(tab, inside_vocab, 0, loc); // (..., D)
    Array column = detail::as_column(idx);        // (..., 1)
    Array inside = Operand(column >= 0, loc) & Operand(column < vocab, loc);
    return where(Operand(inside, loc), Operand(rows, loc), 0.0);
}

Array attention_heads(const Array& x, const Array& w_qkv, const Array& b_qkv, std::int64_t heads,
                      SourceLocation loc) {
    const char* op = "attention_heads";
    if (x.rank() != 3 || !is_float(x.dtype()))
        throw Error(std::string(op) + ": x must be a float array (batch, time, channels), got " +
                    x.describe() + at(loc));
    const std::int64_t c = x.shape()[2].size;
    const std::int64_t rows = w_qkv.valid() && w_qkv.rank() == 2 ? w_qkv.shape()[0].size : 0;
    if (heads < 1 || rows % (3 * heads) != 0 || rows == 0)
        throw Error(std::string(op) + ": w_qkv must be (3 * heads * D, " + std::to_string(c) +
                    ") for " + std::to_string(heads) + " heads, got " +
                    (w_qkv.valid() ? w_qkv.describe() : std::string("an empty Array")) + at(loc));
    check_parameter(op, "w_qkv", w_qkv, {rows, c}, false, loc);
    check_parameter(op, "b_qkv", b_qkv, {rows}, true, loc);
    const std::int64_t d = rows / (3 * heads);
    Array qkv = linear(x, w_qkv, b_qkv, loc); // (B, T, 3·heads·D), 0-based
    // Under autocast qkv is half already, the scores are scaled in f32 and the probabilities
    // rounded to half for the second product (nn/autocast.hpp).
    Array scores = Operand(autocast_f32(matmul(head_view(qkv, 0, heads, false, loc),
                                               head_view(qkv, 1, heads, true, loc), loc),
                                        loc),
                           loc) *
                   (1.0 / std::sqrt(static_cast<double>(d)));
    const Shape& s = scores.shape(); // (B, heads, T, T): query t attends to keys 0..t
    Array causal = index_components(s, 3, loc) <= index_components(s, 2, loc);
    Array masked = where(Operand(causal, loc), scores, -std::numeric_limits<double>::infinity());
    return matmul(autocast_half(softmax(masked, -1, loc), loc),
                  autocast_half(head_view(qkv, 2, heads, false, loc), loc), loc);
}

Array merge_heads(const Array& y, const Array& w_proj, const Array& b_proj, SourceLocation loc) {
    const char* op = "merge_heads";
    if (y.rank() != 4)
        throw Error(std::string(op) + ": y must be (batch, heads, time, D), got " + y.describe() +
                    at(loc));
    const std::int64_t heads = y.shape()[1].size, d = y.shape()[3].size;
    const std::int64_t c = w_proj.valid() && w_proj.rank() == 2 ? w_proj.shape()[0].size : 0;
    check_parameter(op, "w_proj", w_proj, {c, heads * d}, false, loc);
    check_parameter(op, "b_proj", b_proj, {c}, true, loc);
    // (B, heads, T, D) read as (B, T, heads, D), against w_proj read as (C, heads, D).
    IndexMap pm(3, w_proj.shape());
    pm.read(0, 0).read(1, 1, d).read(1, 2);
    Array w_heads = view(w_proj, Shape::of({c, heads, d}), pm.map(), loc);
    return linear(transpose(y, {0, 2, 1, 3}, loc), w_heads, b_proj, loc);
}

Array causal_self_attention(const Array& x, const Array& w_qkv, const Array& b_qkv,
                            const Array& w_proj, const Array& b_proj, std::int64_t heads,
                            SourceLocation loc) {
    const char* op = "causal_self_attention";
    if (x.rank() != 3 || !is_float(x.dtype()))
        throw Error(std::string(op) + ": x must be a float array (batch, time, channels), got " +
                    x.describe() + at(loc));
    const std::int64_t c = x.shape()[2].size;
    if (heads < 1 || c % heads != 0)
        throw Error(std::string(op) + ": heads must divide the " + std::to_string(c) +
                    " channels of x " + x.describe() + ", got heads = " + std::to_string(heads) +
                    at(loc));
    check_parameter(op, "w_qkv", w_qkv, {3 * c, c}, false, loc);
    check_parameter(op, "b_qkv", b_qkv, {3 * c}, true, loc);
    check_parameter(op, "w_proj", w_proj, {c, c}, false, loc);
    check_parameter(op, "b_proj", b_proj, {c}, true, loc);
    return merge_heads(attention_heads(x, w_qkv, b_qkv, heads, loc), w_proj, b_proj, loc);
}

} // namespace hedra::nn
