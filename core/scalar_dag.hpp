// Walking scalar expressions as the DAGs they are. A traced callable that reuses a value
// (`y = tanh(y) * 0.5f + y * 0.5f`, repeated) shares one node among its users; a pass that
// recursed into operands would visit it once per path, exponentially often. Every pass over
// expressions walks topological_order() with a memo keyed by node instead, so its cost is linear
// in the number of distinct subexpressions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/scalar_expr.hpp"

namespace hedra {

// Every node reachable from `roots`, each once, operands before their users. Iterative, so a
// chain of many thousand nodes does not exhaust the stack.
std::vector<ScalarExpr> topological_order(const std::vector<ScalarExpr>& roots);
inline std::vector<ScalarExpr> topological_order(const ScalarExpr& root) {
    return topological_order(std::vector<ScalarExpr>{root});
}

// How many nodes topological_order() has returned on this thread: tests read it before and after
// a pass to check that the pass visited each distinct node a bounded number of times.
std::uint64_t scalar_nodes_visited();

// Rebuilds `e` from the leaves up: `f(node, args)` is called once per distinct node, with its
// operands already rebuilt, and returns the node's replacement (with_args(node, args) keeps it).
using ScalarRewrite =
    std::function<ScalarExpr(const ScalarExpr& node, std::vector<ScalarExpr> args)>;
ScalarExpr rewrite(const ScalarExpr& e, const ScalarRewrite& f);
// The same over several roots at once: a node they share is rebuilt once.
std::vector<ScalarExpr> rewrite(const std::vector<ScalarExpr>& roots, const ScalarRewrite& f);

// `e` with structurally equal subexpressions merged into one node each (hash-consing): a value
// computed twice by different paths (an adjoint that forms `v * 0.5` once per use, two literal
// 0.5s) is computed once by every backend. Linear: each node is looked up by its operands, which
// are already merged.
ScalarExpr share_common_subexpressions(const ScalarExpr& e);
// The same over several roots at once (the values of a tuple share their common parts).
std::vector<ScalarExpr> share_common_subexpressions(const std::vector<ScalarExpr>& roots);

// The dtype Input(k) has in any of `roots`, or `fallback` where none reads it (an index read
// a printer binds without a typed use).
DType input_dtype(const std::vector<ScalarExpr>& roots, int k, DType fallback = DType::I64);

// `like` with operands `args` (of the same dtypes): `like` itself when they are its own.
ScalarExpr with_args(const ScalarExpr& like, std::vector<ScalarExpr> args);

// The number of users of each node of topological_order(roots) within it (roots count one use
// each); a node used more than once is a shared subexpression.
std::vector<int> use_counts(const std::vector<ScalarExpr>& order,
                            const std::vector<ScalarExpr>& roots);

} // namespace hedra
