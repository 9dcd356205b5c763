// Library functions built only from the primitives: elementwise operators and math (maps),
// reductions by name, transpose (a Transform), matmul (two views, a map and a sum), pad
// (overwrite of a full array), flatten (a fuse of pieces), unflatten (an affine view), rebase.
#include "core/library.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/node_builders.hpp"

namespace hedra {
namespace {

using detail::site;

// Unary functions take their caller's location; binary operators the site recorded by their
// first Operand (the user's expression).
Array map1(ScalarOp op, const Array& a, const char* name, SourceLocation loc) {
    auto s = detail::trace_arguments({a});
    return detail::make_map({sym_unary(op, s[0]).expr()}, {a}, name, loc).at(0);
}

Array map2(ScalarOp op, const Operand& a, const Operand& b, const char* name) {
    auto s = detail::trace_arguments({a, b});
    return detail::make_map({sym_binary(op, s[0], s[1]).expr()}, {a, b}, name, a.loc()).at(0);
}

} // namespace

Array operator+(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Add, a, b, "add");
}
Array operator-(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Sub, a, b, "sub");
}
Array operator*(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Mul, a, b, "mul");
}
Array operator/(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Div, a, b, "div");
}
Array operator%(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Mod, a, b, "mod");
}
Array operator&(const Operand& a, const Operand& b) {
    return map2(ScalarOp::BitAnd, a, b, "bitand");
}
Array operator|(const Operand& a, const Operand& b) {
    return map2(ScalarOp::BitOr, a, b, "bitor");
}
Array operator^(const Operand& a, const Operand& b) {
    return map2(ScalarOp::BitXor, a, b, "bitxor");
}
Array operator<<(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Shl, a, b, "shl");
}
Array operator>>(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Shr, a, b, "shr");
}
Array operator-(const Operand& a) {
    if (!a.is_array()) throw Error("neg: the operand must be an array");
    return map1(ScalarOp::Neg, a.array(), "neg", a.loc());
}
Array operator<(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Lt, a, b, "lt");
}
Array operator<=(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Le, a, b, "le");
}
Array operator>(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Gt, a, b, "gt");
}
Array operator>=(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Ge, a, b, "ge");
}
Array operator==(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Eq, a, b, "eq");
}
Array operator!=(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Ne, a, b, "ne");
}
Array minimum(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Min, a, b, "minimum");
}
Array maximum(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Max, a, b, "maximum");
}
Array pow(const Operand& a, const Operand& b) {
    return map2(ScalarOp::Pow, a, b, "pow");
}
Array exp(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Exp, a, "exp", loc);
}
Array log(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Log, a, "log", loc);
}
Array sqrt(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Sqrt, a, "sqrt", loc);
}
Array tanh(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Tanh, a, "tanh", loc);
}
Array sigmoid(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Sigmoid, a, "sigmoid", loc);
}
Array sin(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Sin, a, "sin", loc);
}
Array cos(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Cos, a, "cos", loc);
}
Array erf(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Erf, a, "erf", loc);
}
Array log1p(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Log1p, a, "log1p", loc);
}
Array expm1(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Expm1, a, "expm1", loc);
}
Array floor(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Floor, a, "floor", loc);
}
Array ceil(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Ceil, a, "ceil", loc);
}
Array round(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Round, a, "round", loc);
}
Array abs(const Array& a, SourceLocation loc) {
    return map1(ScalarOp::Abs, a, "abs", loc);
}

Array where(const Operand& cond, const Operand& a, const Operand& b) {
    auto s = detail::trace_arguments({cond, a, b});
    return detail::make_map({select(s[0], s[1], s[2]).expr()}, {cond, a, b}, "where", cond.loc())
        .at(0);
}

Array relu(const Array& a, SourceLocation loc) {
    return map2(ScalarOp::Max, Operand(a, loc), 0, "relu");
}

Array cast(const Array& a, DType to, SourceLocation loc) {
    return Array(detail::cast_node(a.node(), to, loc));
}

Array sum(const Array& a, std::vector<int> axes, bool keepdims, SourceLocation loc) {
    return reduce(ReduceOp::Sum, a, std::move(axes), keepdims, loc);
}

Array element_count(const Array& a, std::vector<int> axes, SourceLocation loc) {
    std::int64_t count = 1;
    std::vector<Range> symbolic;
    for (int d : detail::normalize_axes("element_count", axes, a.node())) {
        if (a.shape()[d].is_dynamic())
            symbolic.push_back(a.shape()[d]);
        else
            count *= a.shape()[d].size;
    }
    Array n = full(Shape(), static_cast<double>(count), DType::F32, loc);
    if (symbolic.empty()) return n;
    // The extents' product as a sum of ones over them: exact in i64, computed at run time.
    Array ones = full(Shape(std::move(symbolic)), 1.0, DType::I64, loc);
    return Operand(cast(sum(ones, {}, false, loc), DType::F32, loc), loc) * Operand(n, loc);
}

Array mean(const Array& a, std::vector<int> axes, bool keepdims, SourceLocation loc) {
    std::int64_t count = 1;
    bool symbolic = false;
    for (int d : detail::normalize_axes("mean", axes, a.node())) {
        count *= a.shape()[d].size;
        symbolic = symbolic || a.shape()[d].is_dynamic();
    }
    Array x = is_float(a.dtype()) ? a : cast(a, DType::F32, loc);
    if (symbolic)
        return Operand(sum(x, axes, keepdims, loc), loc) /
               Operand(element_count(a, axes, loc), loc);
    return map2(ScalarOp::Div, Operand(sum(x, std::move(axes), keepdims, loc), loc),
                static_cast<double>(count), "mean");
}

Array max(const Array& a, std::vector<int> axes, bool keepdims, SourceLocation loc) {
    return reduce(ReduceOp::Max, a, std::move(axes), keepdims, loc);
}

Array min(const Array& a, std::vector<int> axes, bool keepdims, SourceLocation loc) {
    return reduce(ReduceOp::Min, a, std::move(axes), keepdims, loc);
}

namespace {

Array arg_extremum(const Array& a, int axis, bool keepdims, bool largest, const char* name,
                   SourceLocation loc) {
    const NodePtr& n = a.node();
    int ax = detail::normalize_axis(name, axis, n->shape.rank(), n->shape, n);
    if (n->shape[ax].size == 0)
        throw Error(std::string(name) + ": axis " + std::to_string(ax) + " of shape " +
                    n->shape.to_string() + " is empty, so it has no " +
                    (largest ? "largest" : "smallest") + " element; array created at " + site(n));
    // One pass over (value, index) with NumPy's order: a NaN beats every number, a larger
    // (smaller) value beats a smaller (larger) one, and of equals the smaller index wins. That
    // order is total, so the combiner is associative; the identity (the worst value, the
    // largest index) loses to every element. Bools compare as 0 and 1.
    Array values = n->dtype == DType::Bool ? cast(a, DType::I32, loc) : a;
    Array index = index_components(n->shape, ax, loc);
    auto better = [largest](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
        Sym e_nan = e[0] != e[0], acc_nan = acc[0] != acc[0];
        Sym beats = largest ? e[0] > acc[0] : e[0] < acc[0];
        Sym tie = e[0] == acc[0] || (e_nan && acc_nan);
        Sym take = (e_nan && !acc_nan) || beats || (tie && e[1] < acc[1]);
        return std::vector<Sym>{select(take, e[0], acc[0]), select(take, e[1], acc[1])};
    };
    const double worst = largest ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity();
    const double last = static_cast<double>(std::numeric_limits<std::int64_t>::max());
    return reduce_multiple_value(better, {worst, last}, {values, index}, {ax}, keepdims, loc)[1];
}

} // namespace

Array argmax(const Array& a, int axis, bool keepdims, SourceLocation loc) {
    return arg_extremum(a, axis, keepdims, true, "argmax", loc);
}

Array argmin(const Array& a, int axis, bool keepdims, SourceLocation loc) {
    return arg_extremum(a, axis, keepdims, false, "argmin", loc);
}

Array transpose(const Array& a, std::vector<int> perm, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank();
    if (perm.empty())
        for (int i = r - 1; i >= 0; --i)
            perm.push_back(i);
    std::vector<bool> seen(r, false);
    bool valid = static_cast<int>(perm.size()) == r;
    for (int& p : perm) {
        if (p < 0) p += r;
        valid = valid && p >= 0 && p < r && !seen[p];
        if (valid) seen[p] = true;
    }
    if (!valid)
        throw Error("transpose: " + detail::list_string(perm) +
                    " is not a permutation of the axes of shape " + n->shape.to_string() +
                    "; array created at " + site(n));
    return reshape(a, Transform::permutation(perm), loc);
}

Array matmul(const Array& a, const Array& b, SourceLocation loc) {
    const NodePtr &na = a.node(), &nb = b.node();
    const int ra = na->shape.rank(), rb = nb->shape.rank();
    auto fail = [&](const std::string& why) {
        return Error("matmul: " + why + "; shapes " + na->shape.to_string() + " and " +
                     nb->shape.to_string() + "; a created at " + site(na) + ", b at " + site(nb));
    };
    if (ra == 0 || rb == 0) throw fail("operands need at least one axis");
    const Range &ka = na->shape[ra - 1], &kb = nb->shape[rb == 1 ? 0 : rb - 2];
    if (ka.size != kb.size)
        throw fail("inner sizes differ: " + std::to_string(ka.size) + " (axis " +
                   std::to_string(ra - 1) + " of a) and " + std::to_string(kb.size) + " (axis " +
                   std::to_string(rb == 1 ? 0 : rb - 2) + " of b)");
    const bool has_m = ra >= 2, has_n = rb >= 2;
    const int batch_a = std::max(ra - 2, 0), batch_b = std::max(rb - 2, 0);
    for (int i = 1; i <= std::min(batch_a, batch_b); ++i) {
        const Range &x = na->shape[batch_a - i], &y = nb->shape[batch_b - i];
        if (!(x == y) && x.size != 1 && y.size != 1)
            throw Error("cannot broadcast in 'matmul': batch axis " +
                        std::to_string(std::max(batch_a, batch_b) - i) + " has ranges " +
                        x.to_string() + " and " + y.to_string() + "; shapes " +
                        na->shape.to_string() + " and " + nb->shape.to_string() +
                        "; a created at " + site(na) + ", b at " + site(nb));
    }
    detail::check_result_rank("matmul", std::max(batch_a, batch_b) + has_m + has_n + 1);
    const Range k = ka.is_dynamic() ? ka : kb.is_dynamic() ? kb : range(ka.size);
    // a' = (batch_a..., [m], [1], k) and b' = (batch_b..., [1], [n], k), as views.
    std::vector<Range> sa(na->shape.ranges().begin(), na->shape.ranges().end() - 1);
    if (has_n) sa.push_back(range(1));
    sa.push_back(k);
    const int ra2 = static_cast<int>(sa.size());
    std::vector<std::int64_t> ma(static_cast<std::size_t>(ra * ra2), 0), oa(ra, 0);
    for (int i = 0; i + 1 < ra; ++i)
        ma[i * ra2 + i] = 1;
    ma[(ra - 1) * ra2 + ra2 - 1] = ka.step;
    oa[ra - 1] = ka.start;
    std::vector<Range> sb(nb->shape.ranges().begin(), nb->shape.ranges().begin() + batch_b);
    if (has_m) sb.push_back(range(1));
    if (has_n) sb.push_back(nb->shape[rb - 1]);
    sb.push_back(k);
    const int rb2 = static_cast<int>(sb.size());
    std::vector<std::int64_t> mb(static_cast<std::size_t>(rb * rb2), 0), ob(rb, 0);
    for (int i = 0; i < batch_b; ++i)
        mb[i * rb2 + i] = 1;
    const int krow = rb == 1 ? 0 : rb - 2;
    mb[krow * rb2 + rb2 - 1] = kb.step;
    ob[krow] = kb.start;
    if (has_n) mb[(rb - 1) * rb2 + rb2 - 2] = 1;
    Array av = view(a, Shape(std::move(sa)), AffineMap(ra2, ra, std::move(ma), std::move(oa)), loc);
    Array bv = view(b, Shape(std::move(sb)), AffineMap(rb2, rb, std::move(mb), std::move(ob)), loc);
    const DType out = promote(na->dtype, nb->dtype);
    const bool logical = out == DType::Bool;
    if (is_half(out)) { // products (exact in f32) and their sum in f32, rounded once
        av = Array(detail::cast_node(av.node(), DType::F32, loc));
        bv = Array(detail::cast_node(bv.node(), DType::F32, loc));
    }
    auto s = detail::trace_arguments({av, bv});
    Sym product = sym_binary(logical ? ScalarOp::And : ScalarOp::Mul, s[0], s[1]);
    Array p = detail::make_map({product.expr()}, {av, bv}, "matmul", loc).at(0);
    Array total = reduce(logical ? ReduceOp::Or : ReduceOp::Sum, p, {-1}, false, loc);
    return Array(detail::cast_node(total.node(), out, loc));
}

Array flatten(const Array& a, int first, int last, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank();
    first = detail::normalize_axis("flatten", first, r, n->shape, n);
    last = detail::normalize_axis("flatten", last, r, n->shape, n);
    if (first > last)
        throw Error("flatten: first axis " + std::to_string(first) + " comes after last axis " +
                    std::to_string(last) + " in shape " + n->shape.to_string() +
                    "; array created at " + site(n));
    for (int d = first; d <= last; ++d)
        if (n->shape[d].start != 0 || n->shape[d].step != 1)
            throw Error("flatten: axis " + std::to_string(d) + " of shape " + n->shape.to_string() +
                        " has range " + n->shape[d].to_string() +
                        "; flatten needs 0-based step-1 ranges (rebase first); array created at " +
                        site(n));
    if (first == last) return a;
    std::int64_t pieces = 1, total = 1;
    for (int d = first; d <= last; ++d)
        total *= n->shape[d].size;
    for (int d = first; d < last; ++d)
        pieces *= n->shape[d].size;
    std::vector<Range> out(n->shape.ranges().begin(), n->shape.ranges().begin() + first);
    out.push_back(range(total));
    out.insert(out.end(), n->shape.ranges().begin() + last + 1, n->shape.ranges().end());
    Shape result(std::move(out));
    const int rr = result.rank();
    if (total == 0)
        return view(
            a, result,
            AffineMap(rr, r, std::vector<std::int64_t>(r * rr), std::vector<std::int64_t>(r)), loc);
    if (pieces > 65536)
        throw Error("flatten: merging axes " + std::to_string(first) + ".." + std::to_string(last) +
                    " of shape " + n->shape.to_string() + " needs " + std::to_string(pieces) +
                    " pieces, more than 65536; contract or reduce over several axes instead of "
                    "flattening them; array created at " +
                    site(n));
    // One piece per index of the outer merged axes: a row of the flat axis.
    std::vector<NodePtr> rows;
    std::vector<std::int64_t> outer(static_cast<std::size_t>(last - first), 0);
    const std::int64_t row = n->shape[last].size;
    for (std::int64_t p = 0; p < pieces; ++p) {
        std::vector<Range> select = n->shape.ranges();
        std::vector<std::optional<std::int64_t>> pins(r);
        std::int64_t offset = 0;
        for (int d = first; d < last; ++d) {
            select[d] = Range(outer[d - first], 1, 1);
            pins[d] = outer[d - first];
            offset = offset * n->shape[d].size + outer[d - first];
        }
        std::vector<TransformAxis> axes;
        for (int d = 0; d < first; ++d)
            axes.push_back({d, 1, 0});
        axes.push_back({last, 1, offset * row});
        for (int d = last + 1; d < r; ++d)
            axes.push_back({d, 1, 0});
        Array sel = reshape(a, Shape(std::move(select)), loc);
        rows.push_back(reshape(sel, Transform(r, std::move(axes), std::move(pins)), loc).node());
        for (int d = last - 1; d >= first && ++outer[d - first] == n->shape[d].size; --d)
            outer[d - first] = 0;
    }
    return Array(detail::make_fuse_node(std::move(rows), result, false, loc));
}

Array unflatten(const Array& a, int axis, const std::vector<std::int64_t>& sizes,
                SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank();
    axis = detail::normalize_axis("unflatten", axis, r, n->shape, n);
    const Range& rg = n->shape[axis];
    std::int64_t total = 1;
    for (std::int64_t s : sizes) {
        if (s < 0)
            throw Error("unflatten: negative size in " + detail::list_string(sizes) +
                        "; array created at " + site(n));
        total *= s;
    }
    if (total != rg.size)
        throw Error("unflatten: sizes " + Shape::of(sizes).to_string() + " have " +
                    std::to_string(total) + " elements but axis " + std::to_string(axis) +
                    " of shape " + n->shape.to_string() + " has " + std::to_string(rg.size) +
                    "; array created at " + site(n));
    if (rg.start != 0 || rg.step != 1)
        throw Error("unflatten: axis " + std::to_string(axis) + " of shape " +
                    n->shape.to_string() + " has range " + rg.to_string() +
                    "; unflatten needs a 0-based step-1 range (rebase first); array created at " +
                    site(n));
    const int k = static_cast<int>(sizes.size()), rr = r - 1 + k;
    detail::check_result_rank("unflatten", rr);
    std::vector<Range> out(n->shape.ranges().begin(), n->shape.ranges().begin() + axis);
    for (std::int64_t s : sizes)
        out.push_back(range(s));
    out.insert(out.end(), n->shape.ranges().begin() + axis + 1, n->shape.ranges().end());
    std::vector<std::int64_t> m(static_cast<std::size_t>(r * rr), 0);
    for (int i = 0; i < axis; ++i)
        m[i * rr + i] = 1;
    std::int64_t stride = 1;
    for (int t = k - 1; t >= 0; --t) {
        m[axis * rr + axis + t] = stride;
        stride *= sizes[t];
    }
    for (int i = axis + 1; i < r; ++i)
        m[i * rr + i - 1 + k] = 1;
    return view(a, Shape(std::move(out)),
                AffineMap(rr, r, std::move(m), std::vector<std::int64_t>(r)), loc);
}

Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
          double value, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank();
    if (static_cast<int>(pairs.size()) != r)
        throw Error("pad: " + std::to_string(pairs.size()) + " (before, after) pairs for shape " +
                    n->shape.to_string() + " of rank " + std::to_string(r) + "; array created at " +
                    site(n));
    std::vector<Range> ranges;
    for (int d = 0; d < r; ++d) {
        auto [before, after] = pairs[d];
        if (before < 0 || after < 0)
            throw Error("pad: negative padding (" + std::to_string(before) + ", " +
                        std::to_string(after) + ") on axis " + std::to_string(d) + " of shape " +
                        n->shape.to_string() + "; array created at " + site(n));
        const Range& rg = n->shape[d];
        if (before == 0 && after == 0)
            ranges.push_back(rg); // as it is (a symbolic axis stays symbolic)
        else
            ranges.emplace_back(rg.start - before * rg.step, rg.step, rg.size + before + after);
    }
    return overwrite({full(Shape(std::move(ranges)), value, n->dtype, loc), a}, loc);
}

Array rebase(const Array& a, SourceLocation loc) {
    return reshape(a, Shape::of(a.shape().sizes()), loc);
}

} // namespace hedra
