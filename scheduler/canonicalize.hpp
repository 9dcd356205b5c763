// canonicalize: the lazy graph as the partitioner sees it. Views are never materialized, so
// they are dropped from the graph: every use of a view chain is resolved to the first node
// that is not a view, with the chain's accesses composed into one affine access (counter
// space). Leaves (placeholders, host data, memoized nodes) stop the traversal. Hash-consing in
// core already gives CSE; nodes not reachable from the outputs are never visited (dead code).
// Also: constant folding and small measures of scalar expressions used by the partitioner.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/affine_map.hpp"
#include "core/node.hpp"
#include "core/scalar_expr.hpp"

namespace hedra::sched {

struct CanonicalNode {
    NodePtr node;
    bool leaf = false;          // placeholder, data, or memoized (constants are never leaves)
    bool output = false;        // requested as a graph output
    std::vector<int> operands;  // per node->inputs entry: the resolved operand (graph index)
    std::vector<int> consumers; // graph indices of the nodes reading this one, with multiplicity
};

// Non-view nodes (plus memoized views and views requested as outputs) in topological order:
// operands before users, discovered depth-first from the outputs in order (deterministic).
struct CanonicalGraph {
    std::vector<CanonicalNode> nodes;
    std::vector<int> outputs; // graph index per requested output

    // Graph index of `node`, or -1 if it is not in the graph.
    int find(const Node* node) const;

    // A use of `node` read at `access` (statement counters -> node counters), followed down its
    // chain of views: returns the first node that is in the graph as a non-view (or a leaf) and
    // the composed access into its counters.
    struct Use {
        NodePtr node;
        AffineMap access;
    };
    Use resolve(const NodePtr& node, const AffineMap& access) const;

    std::unordered_map<const Node*, int> index; // lookups only; never iterated for order
};

CanonicalGraph canonicalize(const std::vector<NodePtr>& outputs);

// Replace every operation whose arguments are all constants by its value.
ScalarExpr fold_constants(const ScalarExpr& e);
// Math through a scalar libm call anywhere in the expression (sin, cos, erf, log1p, expm1, pow;
// exp, log, tanh, sigmoid of f64): worth storing rather than recomputing. f32 exp, log, tanh and
// sigmoid are vector code and do not count. Also: select(c, v, v) folds to v.
bool has_transcendental(const ScalarExpr& e);
// f32 exp, log, tanh or sigmoid anywhere in the expression (core/f32_math.hpp).
bool has_vector_math(const ScalarExpr& e);
// The number of nodes of `e` once every Input(k) is replaced by an expression of input_sizes[k]
// nodes: each distinct node counted once, as the printers emit it once (saturates far above any
// cap).
std::int64_t expression_size(const ScalarExpr& e, const std::vector<std::int64_t>& input_sizes);

} // namespace hedra::sched
