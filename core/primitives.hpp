// The primitives of the array language (semantics.md): map (lazy), reshape/view, reduce,
// fuse/overwrite/stack. Each checks shapes, ranges and dtypes when the node is built and throws
// hedra::Error naming the operation, the shapes as ranges, the axis and the creation sites.
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/source_location.hpp"
#include "core/transform.hpp"

namespace hedra {

// ---- map ----------------------------------------------------------------------------------
namespace detail {
// Broadcast the array operands (aligned from the right), then build one Map node per traced
// output. `op` names the operation in error messages ("lazy", "add", ...).
std::vector<Array> make_map(const std::vector<ScalarExpr>& outputs,
                            const std::vector<Operand>& operands, const std::string& op,
                            SourceLocation loc);
// The Syms a callable is traced on: inputs for arrays (numbered in order), weak literals as is.
std::vector<Sym> trace_arguments(const std::vector<Operand>& operands);

template <class F, std::size_t... I>
std::vector<ScalarExpr> trace_fixed(F& f, const std::vector<Sym>& syms, std::index_sequence<I...>) {
    return trace_results(f(syms[I]...));
}
template <std::size_t N, class F>
std::vector<Array> lazy_n(F& f, const std::vector<Operand>& ops, SourceLocation loc) {
    auto syms = trace_arguments(ops);
    return make_map(trace_fixed(f, syms, std::make_index_sequence<N>{}), ops, "lazy", loc);
}
} // namespace detail

// lazy(f, a, b, ...): f traced on symbolic scalars and mapped over the broadcast operands (any
// number of them, arrays or literals). The site recorded is where the first operand was
// converted, i.e. the caller's expression.
template <class F, class... Ops>
requires(std::convertible_to<const Ops&, Operand>&&...) Array
    lazy(F f, const Operand& a, const Ops&... rest) {
    return detail::lazy_n<1 + sizeof...(Ops)>(f, {a, Operand(rest)...}, a.loc()).at(0);
}
// Any number of operands: f takes a const std::vector<Sym>&.
template <class F>
Array lazy_n_ary(F f, const std::vector<Operand>& operands,
                 SourceLocation loc = SourceLocation::current()) {
    auto syms = detail::trace_arguments(operands);
    return detail::make_map(detail::trace_results(f(syms)), operands, "lazy", loc).at(0);
}
// A callable returning a tuple: one array per element.
template <class F, class... Ops>
requires(std::convertible_to<const Ops&, Operand>&&...) std::vector<Array> lazy_multiple_value(
    F f, const Operand& a, const Ops&... rest) {
    return detail::lazy_n<1 + sizeof...(Ops)>(f, {a, Operand(rest)...}, a.loc());
}

// ---- reshape and view ---------------------------------------------------------------------
// result[t(i)] = a[i]; t must match a's rank and pins.
Array reshape(const Array& a, const Transform& t, SourceLocation loc = SourceLocation::current());
// Per axis (aligned from the right; new leading axes broadcast): move (same size), broadcast
// (source size 1) or select (target a subset of the source).
Array reshape(const Array& a, const Shape& s, SourceLocation loc = SourceLocation::current());
// result[j] = a[m(j)] for j in s; m's image of s must lie inside a's shape.
Array view(const Array& a, const Shape& s, const AffineMap& m,
           SourceLocation loc = SourceLocation::current());
// Broadcast a to `s` (NumPy rules, aligned from the right).
Array broadcast_to(const Array& a, const Shape& s, SourceLocation loc = SourceLocation::current());

// ---- reduce -------------------------------------------------------------------------------
// Reduce over `axes` (any order, no duplicates; negative counts from the end; empty = all).
// Sum/prod of bool or i32 give i64; and/or give bool; max/min keep the dtype.
Array reduce(ReduceOp op, const Array& a, std::vector<int> axes = {}, bool keepdims = false,
             SourceLocation loc = SourceLocation::current());
// A user associative callable with its identity: f(acc, x) -> acc.
template <class F>
Array reduce(F f, double identity, const Array& a, std::vector<int> axes = {},
             bool keepdims = false, SourceLocation loc = SourceLocation::current());

namespace detail {
Array make_custom_reduce(const ScalarExpr& combiner, double identity, const Array& a,
                         std::vector<int> axes, bool keepdims, SourceLocation loc);
}
template <class F>
Array reduce(F f, double identity, const Array& a, std::vector<int> axes, bool keepdims,
             SourceLocation loc) {
    Sym acc(scalar_input(0, a.dtype())), x(scalar_input(1, a.dtype()));
    auto out = detail::trace_results(f(acc, x));
    if (out.size() != 1) throw Error("reduce: the combiner must return one value");
    return detail::make_custom_reduce(out[0], identity, a, std::move(axes), keepdims, loc);
}

// Several arrays of one shape reduced together by an associative combiner of tuples: with k
// arrays, f(acc, x) gets two std::vector<Sym> of k values (the accumulators, one element of
// each array) and returns the k new accumulators (a std::vector<Sym> or a tuple; each is cast to
// its array's dtype). `identities` has one value per array. One array per component, e.g.
// argmax as (value, index): reduce_multiple_value([](auto acc, auto x) { auto take = x[0] >
// acc[0]; return std::vector<Sym>{select(take, x[0], acc[0]), select(take, x[1], acc[1])}; },
// {-inf, 0}, {a, index_components(a.shape(), 1)}, {1}).
namespace detail {
std::vector<Array> make_multi_reduce(const std::vector<ScalarExpr>& combiners,
                                     const std::vector<double>& identities,
                                     const std::vector<Array>& arrays, std::vector<int> axes,
                                     bool keepdims, SourceLocation loc);
inline std::vector<ScalarExpr> trace_sym_list(const std::vector<Sym>& v) {
    std::vector<ScalarExpr> out;
    for (const Sym& s : v)
        out.push_back(s.expr());
    return out;
}
} // namespace detail
template <class F>
std::vector<Array> reduce_multiple_value(F f, const std::vector<double>& identities,
                                         const std::vector<Array>& arrays,
                                         std::vector<int> axes = {}, bool keepdims = false,
                                         SourceLocation loc = SourceLocation::current()) {
    std::vector<Sym> acc, x;
    const int k = static_cast<int>(arrays.size());
    for (int i = 0; i < k; ++i) {
        acc.emplace_back(scalar_input(i, arrays[static_cast<std::size_t>(i)].dtype()));
        x.emplace_back(scalar_input(k + i, arrays[static_cast<std::size_t>(i)].dtype()));
    }
    auto r = f(acc, x);
    std::vector<ScalarExpr> combiners;
    if constexpr (std::is_same_v<decltype(r), std::vector<Sym>>)
        combiners = detail::trace_sym_list(r);
    else
        combiners = detail::trace_results(r);
    return detail::make_multi_reduce(combiners, identities, arrays, std::move(axes), keepdims, loc);
}

// ---- fuse, overwrite, stack ---------------------------------------------------------------
// Pairwise-disjoint pieces whose union is a shape (strided pieces may interleave).
Array fuse(const std::vector<Array>& pieces, SourceLocation loc = SourceLocation::current());
// Overlaps allowed; the rightmost piece wins; the union must be a shape.
Array overwrite(const std::vector<Array>& pieces, SourceLocation loc = SourceLocation::current());
// Arrays of one shape stacked along a new axis `axis` (indices 0..n-1).
Array stack(int axis, const std::vector<Array>& arrays,
            SourceLocation loc = SourceLocation::current());

// ---- take ---------------------------------------------------------------------------------
// Elements of `src` chosen along `axis` by an integer array (numpy's take; PyTorch's
// index_select and embedding for any shape of indices). The result's axes are src's before
// `axis`, then the indices', then src's after it: result(p, q, r) = src(p, indices(q), r),
// where an index is a position 0..n-1 along the axis. Indices that are host data are checked
// here; an index computed at run time outside [0, n) is clamped to the nearest end, so no
// kernel reads outside src. The adjoint adds the result's gradient back into the chosen rows
// in index order (deterministic, bit for bit).
Array take(const Array& src, const Array& indices, int axis = 0,
           SourceLocation loc = SourceLocation::current());
// take's adjoint: an array of `shape`, zero except that values(p, q, r) is added at
// (p, clamp(indices(q)), r), the additions into one element in the order of q (row-major over
// the indices' axes), so a run repeats bit for bit. `values` has the shape take(x, indices,
// axis) has for an x of `shape`; bool values are refused (sum them as integers).
Array scatter_add(const Array& values, const Array& indices, int axis, const Shape& shape,
                  SourceLocation loc = SourceLocation::current());

} // namespace hedra
