// The generator's shape operations: random invertible transforms, shape reshapes (move,
// broadcast, select), affine views with windows, reductions, fuse/overwrite/stack, and the
// library functions built on them (see fuzz_generator.hpp).
#include <algorithm>
#include <numeric>

#include "fuzz/lib/fuzz_generator_impl.hpp"

namespace hedra::fuzz::detail {

namespace {

// Counter sub-progression of r: `count` elements from counter c0 every `m` counters.
Range sub_range(const Range& r, std::int64_t c0, std::int64_t m, std::int64_t count) {
    if (count <= 1) return Range(r.index(c0), 1, count);
    return Range(r.index(c0), r.step * m, count);
}

} // namespace

Range random_subrange(Generator& g, const Range& r) {
    if (r.size == 0) return r;
    std::int64_t m = g.chance(0.7) ? 1 : g.uniform(1, 3);
    std::int64_t c0 = g.uniform(0, r.size - 1);
    std::int64_t max_count = (r.size - 1 - c0) / m + 1;
    return sub_range(r, c0, m, g.uniform(g.chance(0.05) ? 0 : 1, max_count));
}

int Generator::rebased(int a) {
    for (const Range& r : value(a).shape().ranges())
        if (r.start != 0 || r.step != 1) {
            Op op;
            op.kind = OpKind::Rebase;
            op.inputs = {a};
            return add(op);
        }
    return a;
}

int Generator::reshape_transform(int a) {
    const Shape& s = value(a).shape();
    int r = s.rank();
    std::vector<int> kept;
    std::vector<std::optional<std::int64_t>> pins(static_cast<std::size_t>(r));
    for (int d = 0; d < r; ++d) {
        if (s[d].size == 1 && chance(0.4))
            pins[d] = s[d].start;
        else
            kept.push_back(d);
    }
    std::shuffle(kept.begin(), kept.end(), rng_);
    std::vector<TransformAxis> outs;
    for (int d : kept) {
        std::int64_t scale = pick(std::vector<std::int64_t>{1, 1, 1, 1, -1, -1, 2, -2, 3});
        outs.push_back({d, scale, uniform(-6, 6)});
    }
    int extra = weighted({60, 30, 10});
    for (int k = 0; k < extra && static_cast<int>(outs.size()) < kMaxRank; ++k)
        outs.insert(outs.begin() + uniform(0, static_cast<std::int64_t>(outs.size())),
                    TransformAxis{-1, 1, uniform(-3, 5)});
    Op op;
    op.kind = OpKind::ReshapeTransform;
    op.inputs = {a};
    try {
        op.transform = Transform(r, outs, pins);
    } catch (const Error&) {
        return -1;
    }
    return add(op);
}

int Generator::reshape_shape(int a) {
    const Shape& s = value(a).shape();
    std::vector<Range> out;
    for (const Range& r : s.ranges()) {
        switch (weighted({35, r.size == 1 ? 30 : 0, 35})) {
        case 0: { // move: same size, any start and step
            Range m = random_range();
            out.push_back(Range(m.start, m.step, r.size));
            break;
        }
        case 1: // broadcast
            out.push_back(random_range(8));
            break;
        default: // select
            out.push_back(random_subrange(*this, r));
            break;
        }
    }
    int lead = weighted({70, 20, 10});
    for (int k = 0; k < lead && static_cast<int>(out.size()) < kMaxRank; ++k)
        out.insert(out.begin(), random_range(5));
    Op op;
    op.kind = OpKind::ReshapeShape;
    op.inputs = {a};
    op.shape = Shape(out);
    return add(op);
}

int Generator::broadcast(int a) {
    const Shape& s = value(a).shape();
    std::vector<Range> out;
    for (const Range& r : s.ranges())
        out.push_back(r.size == 1 && chance(0.6) ? random_range(8) : r);
    int lead = weighted({40, 40, 20});
    for (int k = 0; k < lead && static_cast<int>(out.size()) < kMaxRank; ++k)
        out.insert(out.begin(), random_range(6));
    Op op;
    op.kind = OpKind::BroadcastTo;
    op.inputs = {a};
    op.shape = Shape(out);
    return add(op);
}

int Generator::view(int a) {
    const Shape& in = value(a).shape();
    const int r = in.rank();
    int q = static_cast<int>(weighted({5, 25, 35, 25, 10}));
    // Counter coefficients g[d][k] of result axis k in input axis d (index-space coefficient
    // step_d * g); most input axes read one result axis (a move, flip or stride), some two (a
    // convolution window s*o + k), some none (a fixed index: a slice).
    std::vector<std::vector<std::int64_t>> g(r, std::vector<std::int64_t>(q, 0));
    std::vector<Range> res(static_cast<std::size_t>(q));
    std::vector<bool> sized(static_cast<std::size_t>(q), false);
    bool dense = chance(0.15);
    for (int d = 0; d < r && q > 0; ++d) {
        std::int64_t n = in[d].size;
        int k = static_cast<int>(uniform(0, q - 1));
        int mode = dense ? 3 : weighted({55, 20, 15, 10});
        if (mode == 1 && q >= 2 && n >= 2) { // window over result axes k (o) and k2
            int k2 = (k + 1) % q;
            if (sized[k] || sized[k2]) continue;
            std::int64_t kk = uniform(1, std::min<std::int64_t>(n, 4)), st = uniform(1, 3);
            res[k] = Range(chance(0.7) ? 0 : uniform(-3, 3), 1, (n - kk) / st + 1);
            res[k2] = Range(chance(0.7) ? 0 : uniform(-3, 3), 1, kk);
            sized[k] = sized[k2] = true;
            g[d][k] = st;
            g[d][k2] = 1;
        } else if (mode == 0 && !sized[k]) { // one result axis, coefficient c
            std::int64_t c = pick(std::vector<std::int64_t>{1, 1, 1, -1, 2, -2, 3});
            std::int64_t step = chance(0.8) ? 1 : 2;
            std::int64_t max_size = n == 0 ? 0 : (n - 1) / (std::abs(c) * step) + 1;
            res[k] = Range(chance(0.7) ? 0 : uniform(-4, 6), step,
                           chance(0.7) ? max_size : uniform(0, max_size));
            sized[k] = true;
            g[d][k] = c;
        } else if (mode == 3) {
            for (int j = 0; j < q; ++j)
                if (chance(0.4)) g[d][j] = pick(std::vector<std::int64_t>{1, -1, 2, 3});
        }
    }
    for (int k = 0; k < q; ++k)
        if (!sized[k]) res[k] = random_range(chance(0.5) ? 4 : 9); // broadcast axes
    bool empty_in = in.size() == 0;
    if (empty_in && q > 0) res[0] = Range(res[0].start, 1, 0);
    if (empty_in && q == 0) return -1;
    Shape s(res);
    if (s.size() > options_.max_elements) return -1;
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * q), 0), offset(r, 0);
    for (int d = 0; d < r; ++d) {
        std::int64_t n = in[d].size, beta = 0;
        for (int attempt = 0; attempt < 8; ++attempt) {
            std::int64_t lo = 0, hi = n - 1;
            for (int k = 0; k < q; ++k) {
                std::int64_t span =
                    g[d][k] * res[k].step * std::max<std::int64_t>(res[k].size - 1, 0);
                lo -= std::min<std::int64_t>(0, span);
                hi -= std::max<std::int64_t>(0, span);
            }
            if (empty_in || s.size() == 0) break;
            if (lo <= hi) {
                beta = uniform(lo, hi);
                break;
            }
            for (int k = 0; k < q; ++k) // too wide: drop a coefficient and retry
                if (g[d][k] != 0 && chance(0.5)) g[d][k] = 0;
            if (attempt == 7) return -1;
        }
        std::int64_t b = in[d].start + in[d].step * beta;
        for (int k = 0; k < q; ++k) {
            matrix[static_cast<std::size_t>(d * q + k)] = in[d].step * g[d][k];
            b -= in[d].step * g[d][k] * res[k].start;
        }
        offset[d] = b;
    }
    Op op;
    op.kind = OpKind::View;
    op.inputs = {a};
    op.shape = s;
    op.map = AffineMap(q, r, matrix, offset);
    return add(op);
}

int Generator::reduce(int a) {
    const Array& x = value(a);
    int r = x.rank();
    Op op;
    op.inputs = {a};
    if (r > 0 && chance(0.9)) {
        for (int d = 0; d < r; ++d)
            if (chance(0.45)) op.axes.push_back(chance(0.2) ? d - r : d);
        if (op.axes.empty()) op.axes.push_back(static_cast<int>(uniform(0, r - 1)));
        std::shuffle(op.axes.begin(), op.axes.end(), rng_);
    }
    op.keepdims = chance(0.3);
    DType t = x.dtype();
    if (chance(0.2) && !options_.differentiable) {
        op.kind = OpKind::CustomReduce;
        op.combiner = static_cast<Combiner>(is_float(t) ? uniform(0, 3) : uniform(0, 4));
        if (!op.axes.empty() && chance(0.3)) op.combiner = Combiner::ArgMax;
        double lowest = t == DType::I32    ? -2147483648.0
                        : t == DType::I64  ? -9223372036854775808.0
                        : t == DType::Bool ? 0.0
                                           : -INFINITY;
        double highest = t == DType::I32    ? 2147483647.0
                         : t == DType::I64  ? 9223372036854774784.0
                         : t == DType::Bool ? 1.0
                                            : INFINITY;
        switch (op.combiner) {
        case Combiner::Add:
            op.value = 0;
            break;
        case Combiner::Mul:
            op.value = 1;
            break;
        case Combiner::Min:
            op.value = highest;
            break;
        default:
            op.value = lowest;
            break;
        }
        int c = add(op);
        if (c >= 0) return c;
    }
    op.kind = OpKind::Reduce;
    static const std::vector<ReduceOp> ops = {ReduceOp::Sum,  ReduceOp::Max, ReduceOp::Min,
                                              ReduceOp::Prod, ReduceOp::And, ReduceOp::Or};
    std::vector<int> weights = {35, 20, 15, 10, 5, 5};
    if (options_.differentiable) weights = {50, 20, 20, 5, 0, 0};
    if (options_.linear) weights = {1, 0, 0, 0, 0, 0};
    op.reduce_op = ops[static_cast<std::size_t>(weighted(weights))];
    int c = add(op);
    if (c >= 0) return c;
    op.reduce_op = ReduceOp::Max;
    return add(op);
}

int Generator::fuse(int a) {
    const Shape& s = value(a).shape();
    DType t = value(a).dtype();
    std::vector<int> axes;
    for (int d = 0; d < s.rank(); ++d)
        if (s[d].size >= 2) axes.push_back(d);
    if (axes.empty()) return -1;
    int d = pick(axes);
    const Range& r = s[d];
    std::vector<Range> pieces;
    if (chance(0.5)) { // interleaved strided pieces
        std::int64_t k = std::min<std::int64_t>(r.size, uniform(2, 3));
        for (std::int64_t j = 0; j < k; ++j)
            pieces.push_back(sub_range(r, j, k, (r.size - 1 - j) / k + 1));
    } else { // contiguous pieces
        std::int64_t cut = uniform(1, r.size - 1), c0 = 0;
        std::vector<std::int64_t> cuts = {cut};
        if (r.size - cut >= 2 && chance(0.4)) cuts.push_back(uniform(cut + 1, r.size - 1));
        for (std::int64_t c : cuts) {
            pieces.push_back(sub_range(r, c0, 1, c - c0));
            c0 = c;
        }
        pieces.push_back(sub_range(r, c0, 1, r.size - c0));
    }
    std::shuffle(pieces.begin(), pieces.end(), rng_);
    Op op;
    op.kind = OpKind::Fuse;
    for (const Range& p : pieces) {
        std::vector<Range> ranges = s.ranges();
        ranges[d] = p;
        int src = array_of_shape(Shape(ranges), t, a);
        if (src < 0) return -1;
        op.inputs.push_back(src);
    }
    return add(op);
}

int Generator::overwrite(int a) {
    const Shape& s = value(a).shape();
    DType t = value(a).dtype();
    Op op;
    op.kind = OpKind::Overwrite;
    op.inputs = {a};
    int n = static_cast<int>(uniform(1, 2));
    for (int k = 0; k < n; ++k) {
        std::vector<Range> ranges;
        for (const Range& r : s.ranges())
            ranges.push_back(chance(0.3) ? r : random_subrange(*this, r));
        int src = array_of_shape(Shape(ranges), t, -1);
        if (src < 0) return -1;
        op.inputs.push_back(src);
    }
    return add(op);
}

int Generator::stack(int a) {
    const Shape& s = value(a).shape();
    if (s.rank() >= kMaxRank) return -1;
    Op op;
    op.kind = OpKind::Stack;
    op.axis = static_cast<int>(uniform(0, s.rank()));
    op.inputs = {a};
    int n = static_cast<int>(uniform(1, 2));
    for (int k = 0; k < n; ++k) {
        int src = array_of_shape(s, value(a).dtype(), a);
        if (src < 0) return -1;
        op.inputs.push_back(src);
    }
    std::shuffle(op.inputs.begin(), op.inputs.end(), rng_);
    return add(op);
}

int Generator::matmul(int a) {
    const Shape& s = value(a).shape();
    if (s.rank() == 0) return -1;
    std::int64_t k = s[s.rank() - 1].size;
    Range kr = random_range();
    kr = Range(kr.start, kr.step, k);
    Shape bs = chance(0.25) ? Shape{kr} : Shape{kr, random_range(17)};
    DType t = value(a).dtype();
    int b = chance(0.7) ? data(bs, t) : data(bs, random_dtype());
    if (b < 0) return -1;
    Op op;
    op.kind = OpKind::Matmul;
    op.inputs = chance(0.2) && s.rank() == 1 ? std::vector<int>{b, a} : std::vector<int>{a, b};
    if (op.inputs[0] == b) { // b (k) @ a (k): both rank 1
        if (value(b).rank() != 1) op.inputs = {a, b};
    }
    return add(op);
}

int Generator::transpose(int a) {
    int r = value(a).rank();
    Op op;
    op.kind = OpKind::Transpose;
    op.inputs = {a};
    if (chance(0.7)) {
        op.axes.resize(static_cast<std::size_t>(r));
        std::iota(op.axes.begin(), op.axes.end(), 0);
        std::shuffle(op.axes.begin(), op.axes.end(), rng_);
        for (int& p : op.axes)
            if (chance(0.15)) p -= r;
    }
    return add(op);
}

int Generator::pad(int a) {
    Op op;
    op.kind = OpKind::Pad;
    op.inputs = {a};
    for (int d = 0; d < value(a).rank(); ++d)
        op.pads.push_back({uniform(0, 2), chance(0.5) ? 0 : uniform(0, 3)});
    op.value = options_.linear ? 0.0 : random_literal().value;
    return add(op);
}

int Generator::flatten(int a) {
    int r = value(a).rank();
    if (r == 0) return -1;
    int b = rebased(a);
    if (b < 0) return -1;
    Op op;
    op.kind = OpKind::Flatten;
    op.inputs = {b};
    op.axis = static_cast<int>(uniform(0, r - 1));
    op.last = static_cast<int>(uniform(op.axis, r - 1));
    if (chance(0.3)) op.last -= r;
    return add(op);
}

int Generator::unflatten(int a) {
    int r = value(a).rank();
    if (r == 0) return -1;
    int b = rebased(a);
    if (b < 0) return -1;
    Op op;
    op.kind = OpKind::Unflatten;
    op.inputs = {b};
    op.axis = static_cast<int>(uniform(0, r - 1));
    std::int64_t n = value(b).shape()[op.axis].size;
    if (n == 0) {
        op.sizes = {0, uniform(1, 3)};
    } else {
        std::vector<std::int64_t> divisors;
        for (std::int64_t f = 1; f <= n; ++f)
            if (n % f == 0) divisors.push_back(f);
        std::int64_t f = pick(divisors);
        op.sizes = {f, n / f};
        if (chance(0.3)) op.sizes.insert(op.sizes.begin() + uniform(0, 2), 1);
    }
    if (chance(0.3)) op.axis -= r;
    return add(op);
}

// take along a random axis of a: indices as host data inside the axis, or computed from such
// data as 2·x − 1, which leaves the axis on both sides (every backend clamps them).
int Generator::take(int a) {
    const Shape& s = value(a).shape();
    if (s.rank() == 0) return -1;
    int axis = static_cast<int>(uniform(0, s.rank() - 1));
    const Range& along = s[axis];
    if (along.is_dynamic() || along.size == 0) return -1;
    Op ids;
    ids.kind = OpKind::Data;
    ids.dtype = chance(0.5) ? DType::I32 : DType::I64;
    int rank = weighted({15, 50, 35});
    std::vector<std::int64_t> sizes;
    for (int d = 0; d < rank; ++d)
        sizes.push_back(uniform(1, 5));
    ids.shape = Shape::of(sizes);
    for (std::int64_t k = 0; k < ids.shape.size(); ++k)
        ids.values.push_back(static_cast<double>(uniform(0, along.size - 1)));
    int i = add(ids);
    if (i < 0) return -1;
    if (chance(0.3)) {
        Op m;
        m.kind = OpKind::Map;
        m.inputs = {i};
        m.operands = {MapOperand{0}};
        m.expr =
            Expr::binary(ScalarOp::Sub,
                         Expr::binary(ScalarOp::Mul, Expr::in(0), Expr::lit(Expr::Literal::Int, 2)),
                         Expr::lit(Expr::Literal::Int, 1));
        i = add(m);
        if (i < 0) return -1;
    }
    Op op;
    op.kind = OpKind::Take;
    op.inputs = {a, i};
    op.axis = chance(0.3) ? axis - s.rank() : axis;
    return add(op);
}

int Generator::cast(int a) {
    Op op;
    op.kind = OpKind::Cast;
    op.inputs = {a};
    op.dtype = random_dtype();
    return add(op);
}

} // namespace hedra::fuzz::detail
