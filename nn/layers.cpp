// The layers of layers.hpp. Each contraction is one index space holding the result axes
// followed by the reduced axes; each operand is read through an AffineMap from that space
// (built by nn/index_space.hpp's IndexMap, which honours the operand's own range starts and
// steps), the products are one map and the reduced axes one sum. That is exactly matmul's form,
// so the scheduler sees dense layers and convolutions the way it sees matmul.
#include "nn/layers.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ad/grad.hpp"
#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "nn/autocast.hpp"
#include "nn/index_space.hpp"
#include "nn/random.hpp"

namespace hedra::nn {

namespace {

// Axis d of x as an index space's axis: [0, size), or x's symbolic extent (a batch) as it is.
Range leading_range(const Array& x, int d = 0) {
    const Range& r = x.shape()[d];
    return r.is_dynamic() ? r : range(r.size);
}

using detail::at;
using detail::IndexMap;
using detail::zero_based;

// bias (C) added along `axis` of y: bias seen as (C, 1, ..., 1) with y's axes after `axis`.
Array add_channel_bias(const Array& y, const Array& bias, int axis, const char* op,
                       SourceLocation loc) {
    if (!bias.valid()) return y;
    if (bias.rank() != 1 || bias.shape()[0].size != y.shape()[axis].size)
        throw Error(std::string(op) + ": bias must have shape (" +
                    std::to_string(y.shape()[axis].size) + "), got " + bias.describe() + at(loc));
    if (axis == y.rank() - 1) return y + zero_based(bias);
    std::vector<TransformAxis> axes{TransformAxis{0, 1, 0}};
    for (int d = axis + 1; d < y.rank(); ++d)
        axes.push_back(TransformAxis{-1, 1, 0});
    return y + reshape(zero_based(bias), Transform(1, axes));
}

// "(2, 3)": the sizes of a's axes before its last.
std::string leading_sizes(const Array& a) {
    std::string out = "(";
    for (int d = 0; d + 1 < a.rank(); ++d)
        out += (d ? ", " : "") + std::to_string(a.shape()[d].size);
    return out + ")";
}

// A contraction's operands under autocast (nn/autocast.hpp): both rounded to the half type and
// read in f32 inside the products' map, so that the products (exact in f32) and their sum are
// f32 and the result is rounded once, after the bias, as core matmul forms a half product. The
// casts to f32 stay inside the one map over the contraction's space: a cast of its own there
// would be a node of the broadcast (n..., o, f...) shape, which the partitioner materializes
// whole when the operand's expression is worth keeping.
struct ContractionOperands {
    Array x, weight;
    bool half = false;
    Array products(const Array& xv, const Array& wv) const {
        if (!half) return xv * wv;
        return lazy([](Sym a, Sym b) { return cast(a, DType::F32) * cast(b, DType::F32); }, xv, wv);
    }
    Array bias(const Array& b) const {
        return half && b.valid() ? cast(autocast_half(b), DType::F32) : b;
    }
    Array result(const Array& y) const { return half ? cast(y, x.dtype()) : y; }
};

ContractionOperands contraction_operands(const Array& x, const Array& weight, SourceLocation loc) {
    ContractionOperands o{autocast_half(x, loc), autocast_half(weight, loc)};
    o.half =
        autocast_dtype() != DType::F32 && is_half(o.x.dtype()) && o.x.dtype() == o.weight.dtype();
    if (!o.half) o = {x, weight};
    return o;
}

} // namespace

Array linear(const Array& x, const Array& weight, const Array& bias, SourceLocation loc) {
    const int k = weight.rank() - 1, lead = x.rank() - k;
    if (weight.rank() < 2 || lead < 1)
        throw Error("linear: x must be (N..., features...) and weight (out, features...) with the "
                    "same features; got x " +
                    x.describe() + " and weight " + weight.describe() + at(loc));
    for (int d = 1; d <= k; ++d)
        if (x.shape()[lead - 1 + d].size != weight.shape()[d].size)
            throw Error("linear: feature axis " + std::to_string(lead - 1 + d) + " has size " +
                        std::to_string(x.shape()[lead - 1 + d].size) + " in x and " +
                        std::to_string(weight.shape()[d].size) + " in weight" +
                        (lead == 1 ? "" : " (its axis " + std::to_string(d) + ")") + "; x " +
                        x.describe() + ", weight " + weight.describe() + at(loc));
    // Space (n..., o, f...): x reads (n..., f...), weight reads (o, f...).
    std::vector<Range> ranges; // x's leading axes as they are: a symbolic batch stays one
    for (int d = 0; d < lead; ++d)
        ranges.push_back(leading_range(x, d));
    ranges.push_back(range(weight.shape()[0].size));
    for (int d = 1; d <= k; ++d)
        ranges.push_back(range(weight.shape()[d].size));
    const Shape space(std::move(ranges));
    const int rank = space.rank();
    const ContractionOperands o = contraction_operands(x, weight, loc);
    IndexMap xm(rank, x.shape()), wm(rank, weight.shape());
    for (int d = 0; d < lead; ++d)
        xm.read(d, d);
    wm.read(0, lead);
    std::vector<int> reduced;
    for (int d = 1; d <= k; ++d) {
        xm.read(lead - 1 + d, lead + d);
        wm.read(d, lead + d);
        reduced.push_back(lead + d);
    }
    Array products =
        o.products(view(o.x, space, xm.map(), loc), view(o.weight, space, wm.map(), loc));
    return o.result(add_channel_bias(sum(products, reduced), o.bias(bias), lead, "linear", loc));
}

Array conv2d(const Array& x, const Array& weight, const Array& bias, std::int64_t stride,
             std::int64_t padding, SourceLocation loc) {
    if (x.rank() != 4 || weight.rank() != 4)
        throw Error("conv2d: x must be (N, C, H, W) and weight (CO, C, KH, KW); got x " +
                    x.describe() + " and weight " + weight.describe() + at(loc));
    if (stride < 1 || padding < 0)
        throw Error("conv2d: stride must be >= 1 and padding >= 0, got stride " +
                    std::to_string(stride) + " and padding " + std::to_string(padding) + at(loc));
    const auto xs = x.shape().sizes(), ws = weight.shape().sizes();
    if (xs[1] != ws[1])
        throw Error("conv2d: x has " + std::to_string(xs[1]) + " channels (axis 1) but weight " +
                    "expects " + std::to_string(ws[1]) + "; x " + x.describe() + ", weight " +
                    weight.describe() + at(loc));
    const std::int64_t h = xs[2] + 2 * padding, w = xs[3] + 2 * padding;
    if (ws[2] > h || ws[3] > w)
        throw Error("conv2d: a " + std::to_string(ws[2]) + "x" + std::to_string(ws[3]) +
                    " kernel does not fit the padded " + std::to_string(h) + "x" +
                    std::to_string(w) + " input; x " + x.describe() + ", weight " +
                    weight.describe() + at(loc));
    const std::int64_t oh = (h - ws[2]) / stride + 1, ow = (w - ws[3]) / stride + 1;
    const ContractionOperands o = contraction_operands(x, weight, loc);
    Array xp = padding > 0
                   ? pad(o.x, {{0, 0}, {0, 0}, {padding, padding}, {padding, padding}}, 0.0, loc)
                   : o.x;
    // Space (n, co, oh, ow, c, kh, kw).
    const Shape space{leading_range(x), range(ws[0]), range(oh),   range(ow),
                      range(xs[1]),     range(ws[2]), range(ws[3])};
    IndexMap xm(7, xp.shape()), wm(7, weight.shape());
    xm.read(0, 0).read(1, 4).read(2, 2, stride).read(2, 5).read(3, 3, stride).read(3, 6);
    wm.read(0, 1).read(1, 4).read(2, 5).read(3, 6);
    Array products =
        o.products(view(xp, space, xm.map(), loc), view(o.weight, space, wm.map(), loc));
    return o.result(add_channel_bias(sum(products, {4, 5, 6}), o.bias(bias), 1, "conv2d", loc));
}

Array maxpool2d(const Array& x, std::int64_t kernel, std::int64_t stride, SourceLocation loc) {
    if (stride == 0) stride = kernel;
    if (x.rank() != 4 || kernel < 1 || stride < 1)
        throw Error("maxpool2d: x must be (N, C, H, W) with kernel and stride >= 1; got x " +
                    x.describe() + ", kernel " + std::to_string(kernel) + ", stride " +
                    std::to_string(stride) + at(loc));
    const auto xs = x.shape().sizes();
    if (kernel > xs[2] || kernel > xs[3])
        throw Error("maxpool2d: a " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                    " window does not fit x " + x.describe() + at(loc));
    const std::int64_t oh = (xs[2] - kernel) / stride + 1, ow = (xs[3] - kernel) / stride + 1;
    // Space (n, c, oh, ow, kh, kw).
    const Shape space{leading_range(x), range(xs[1]),  range(oh),
                      range(ow),        range(kernel), range(kernel)};
    IndexMap m(6, x.shape());
    m.read(0, 0).read(1, 1).read(2, 2, stride).read(2, 4).read(3, 3, stride).read(3, 5);
    return max(view(x, space, m.map(), loc), {4, 5});
}

Array log_softmax(const Array& x_in, int axis, SourceLocation loc) {
    const Array x = autocast_f32(x_in, loc);
    Array shift = stop_gradient(max(x, {axis}, true, loc));
    Array shifted = Operand(x, loc) - shift;
    return Operand(shifted, loc) - log(sum(exp(shifted, loc), {axis}, true, loc), loc);
}

Array softmax(const Array& x_in, int axis, SourceLocation loc) {
    const Array x = autocast_f32(x_in, loc);
    Array e = exp(Operand(x, loc) - stop_gradient(max(x, {axis}, true, loc)), loc);
    // One reciprocal per row and a product per element (a division per element costs more).
    return Operand(e, loc) * (1.0 / Operand(sum(e, {axis}, true, loc), loc));
}

namespace {

void check_logits_and_labels(const char* op, const Array& logits, const Array& labels,
                             SourceLocation loc) {
    if (logits.rank() != 2 || !is_float(logits.dtype()))
        throw Error(std::string(op) + ": logits must be a float array (batch, classes), got " +
                    logits.describe() + at(loc));
    if (labels.rank() != 1 || !is_integer(labels.dtype()) ||
        labels.shape()[0].size != logits.shape()[0].size)
        throw Error(std::string(op) + ": labels must be integers of shape (" +
                    std::to_string(logits.shape()[0].size) + ") for logits " + logits.describe() +
                    ", got " + labels.describe() + at(loc));
}

// The total over every label divided by their number (known when the program runs if the
// batch is symbolic).
Array mean_over_labels(const Array& total, const Array& labels, SourceLocation loc) {
    for (const Range& r : labels.shape().ranges())
        if (r.is_dynamic())
            return Operand(total, loc) / Operand(element_count(labels, {}, loc), loc);
    return Operand(total, loc) / static_cast<double>(labels.size());
}

} // namespace

Array softmax_cross_entropy(const Array& logits, const Array& labels, SourceLocation loc) {
    check_logits_and_labels("softmax_cross_entropy", logits, labels, loc);
    Array z = zero_based(logits);
    Array onehot = index_components(z.shape(), 1, loc) == detail::as_column(zero_based(labels));
    Array picked = where(Operand(onehot, loc), log_softmax(z, 1, loc), 0.0);
    return mean_over_labels(-Operand(sum(picked, {}, false, loc), loc), labels, loc);
}

Array cross_entropy(const Array& logits, const Array& labels, SourceLocation loc) {
    if (logits.rank() < 1 || !is_float(logits.dtype()))
        throw Error("cross_entropy: logits must be a float array (..., classes), got " +
                    logits.describe() + at(loc));
    bool match = is_integer(labels.dtype()) && labels.rank() == logits.rank() - 1;
    for (int d = 0; match && d < labels.rank(); ++d)
        match = labels.shape()[d].size == logits.shape()[d].size;
    if (!match)
        throw Error("cross_entropy: labels must be integers of shape " + leading_sizes(logits) +
                    " for logits " + logits.describe() + ", got " + labels.describe() + at(loc));
    Array z = zero_based(logits);
    const int last = z.rank() - 1;
    Array onehot = index_components(z.shape(), last, loc) == detail::as_column(zero_based(labels));
    Array picked = where(Operand(onehot, loc), log_softmax(z, last, loc), 0.0);
    return mean_over_labels(-Operand(sum(picked, {}, false, loc), loc), labels, loc);
}

Array count_correct(const Array& logits, const Array& labels, SourceLocation loc) {
    check_logits_and_labels("count_correct", logits, labels, loc);
    Array z = zero_based(logits);
    const std::int64_t classes = z.shape()[1].size;
    Array is_max = z == max(z, {1}, true);
    Array predicted = min(where(is_max, index_components(z.shape(), 1, loc), classes), {1});
    return sum(predicted == zero_based(labels));
}

Array dropout(const Array& x, double p, const Array& seed, bool training, SourceLocation loc) {
    if (!(p >= 0.0 && p <= 1.0))
        throw Error("dropout: p must lie in [0, 1], got " + std::to_string(p) + at(loc));
    if (!is_float(x.dtype()))
        throw Error("dropout: x must be a float array, got " + x.describe() + at(loc));
    if (!training || p == 0.0) return x;
    detail::check_seed("dropout", seed, loc);
    Array z = zero_based(x);
    if (p == 1.0) return zeros(z.shape(), z.dtype(), loc);
    // Kept when the top 53 bits, uniform in [0, 2^53), are >= p·2^53: probability 1 − p.
    const auto threshold = static_cast<std::int64_t>(std::llround(std::ldexp(p, 53)));
    Array keep = detail::random_top_bits(z.shape(), seed, 53, loc) >= threshold;
    return where(Operand(keep, loc), z * (1.0 / (1.0 - p)), 0.0);
}

} // namespace hedra::nn
