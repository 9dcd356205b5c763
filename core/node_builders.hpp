// Internal helpers shared by the files that build the lazy graph (array, map, view, reduce,
// fuse, library): node constructors that keep the graph canonical (views compose, identity
// views vanish, maps drop unused and repeated inputs) and the common parts of error messages.
// Not part of the public API.
#pragma once

#include <string>
#include <vector>

#include <functional>
#include <unordered_map>

#include "core/array.hpp"
#include "core/node.hpp"
#include "core/source_location.hpp"

namespace hedra::detail {

// A fresh, not yet interned node.
std::shared_ptr<Node> new_node(NodeKind kind, DType dtype, Shape shape, std::vector<NodePtr> inputs,
                               SourceLocation loc);

// A fresh, not yet interned node like `n` (every field but the inputs) on `inputs`.
std::shared_ptr<Node> copy_node_with(const Node& n, std::vector<NodePtr> inputs);

// `outputs` rebuilt from the leaves up: each node becomes `replace(node, done)` when that is
// not null (`done`: the nodes rebuilt so far, its inputs among them), else the node on its
// rebuilt inputs (itself when none changed). `image` (if given) receives every node's result.
using NodeReplacement = std::function<NodePtr(
    const NodePtr& node, const std::unordered_map<const Node*, NodePtr>& done)>;
std::vector<NodePtr> rebuild_graph(const std::vector<NodePtr>& outputs,
                                   const NodeReplacement& replace,
                                   std::unordered_map<const Node*, NodePtr>* image = nullptr);

// A View of `input` on `shape`; `access` maps result counters to input counters. A View of a
// View composes into one; an identity view is `input` itself.
NodePtr make_view(const NodePtr& input, const Shape& shape, const AffineMap& access,
                  SourceLocation loc);
// `input` broadcast to `shape` (already checked: aligned from the right, each axis equal or of
// size 1 in `input`).
NodePtr broadcast_node(const NodePtr& input, const Shape& shape, SourceLocation loc);
// A Map node of `expr` over `inputs` (all of shape `shape`), with unused inputs dropped and
// repeated ones merged and equal subexpressions shared; `expr` = Input(k) alone is inputs[k]
// itself.
NodePtr make_map_node(const ScalarExpr& expr, const std::vector<NodePtr>& inputs,
                      const Shape& shape, SourceLocation loc);
// A Fuse node without checks: the caller guarantees the pieces tile `shape` (or, with
// `overwrite`, cover it).
NodePtr make_fuse_node(std::vector<NodePtr> pieces, const Shape& shape, bool overwrite,
                       SourceLocation loc);
// `a` converted elementwise to `to` (`a` itself if it has that dtype).
NodePtr cast_node(const NodePtr& a, DType to, SourceLocation loc);

// Axis numbers: negative counts from the end; throws "OP: axis 3 out of range for shape (2,3)".
// `rank` is the number of valid positions (shape.rank(), or one more for a new axis).
int normalize_axis(const std::string& op, int axis, int rank, const Shape& shape,
                   const NodePtr& array);
// Distinct axes, sorted; empty means all axes.
std::vector<int> normalize_axes(const std::string& op, const std::vector<int>& axes,
                                const NodePtr& array);
// Throws "OP: the result would have rank R, above the maximum rank 8".
void check_result_rank(const std::string& op, int rank);

// "model.cpp:17"
std::string site(const NodePtr& n);
// "a", "b", ... for operand i.
std::string operand_name(std::size_t i);
// "[1,2,3]"
std::string list_string(const std::vector<std::int64_t>& values);
std::string list_string(const std::vector<int>& values);

} // namespace hedra::detail
