// Topological order by an explicit stack (a node is emitted once all its operands are), and the
// memoized bottom-up rebuild every rewriting pass shares.
#include "core/scalar_dag.hpp"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "core/error.hpp"

namespace hedra {
namespace {

thread_local std::uint64_t visited_count = 0;

} // namespace

std::vector<ScalarExpr> topological_order(const std::vector<ScalarExpr>& roots) {
    std::vector<ScalarExpr> order;
    std::unordered_map<const ScalarNode*, bool> state; // false: on the stack, true: emitted
    std::vector<std::pair<const ScalarExpr*, std::size_t>> stack; // node, next operand
    for (const ScalarExpr& root : roots) {
        if (!root || state.count(root.get())) continue;
        state.emplace(root.get(), false);
        stack.emplace_back(&root, 0);
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            const auto& args = (*node)->args;
            if (next < args.size()) {
                const ScalarExpr& a = args[next++];
                if (state.emplace(a.get(), false).second) stack.emplace_back(&a, 0);
                continue;
            }
            state[node->get()] = true;
            order.push_back(*node);
            stack.pop_back();
        }
    }
    visited_count += order.size();
    return order;
}

std::uint64_t scalar_nodes_visited() {
    return visited_count;
}

std::vector<ScalarExpr> rewrite(const std::vector<ScalarExpr>& roots, const ScalarRewrite& f) {
    for (const ScalarExpr& r : roots)
        HEDRA_INTERNAL_CHECK(r != nullptr, "rewrite of a null scalar expression");
    std::unordered_map<const ScalarNode*, ScalarExpr> done;
    for (const ScalarExpr& n : topological_order(roots)) {
        std::vector<ScalarExpr> args;
        args.reserve(n->args.size());
        for (const ScalarExpr& a : n->args)
            args.push_back(done.at(a.get()));
        done.emplace(n.get(), f(n, std::move(args)));
    }
    std::vector<ScalarExpr> out;
    for (const ScalarExpr& r : roots)
        out.push_back(done.at(r.get()));
    return out;
}

ScalarExpr rewrite(const ScalarExpr& e, const ScalarRewrite& f) {
    return rewrite(std::vector<ScalarExpr>{e}, f).front();
}

namespace {

// Equal nodes whose operands are the same (already merged) nodes.
bool same_node(const ScalarNode& a, const ScalarNode& b) {
    if (a.hash != b.hash || a.op != b.op || a.dtype != b.dtype || a.ivalue != b.ivalue ||
        std::bit_cast<std::uint64_t>(a.fvalue) != std::bit_cast<std::uint64_t>(b.fvalue) ||
        a.args.size() != b.args.size())
        return false;
    for (std::size_t i = 0; i < a.args.size(); ++i)
        if (a.args[i] != b.args[i]) return false;
    return true;
}

} // namespace

std::vector<ScalarExpr> share_common_subexpressions(const std::vector<ScalarExpr>& roots) {
    std::unordered_multimap<std::size_t, ScalarExpr> seen; // merged nodes by structural hash
    return rewrite(roots, [&](const ScalarExpr& n, std::vector<ScalarExpr> args) {
        ScalarExpr m = with_args(n, std::move(args));
        auto [first, last] = seen.equal_range(m->hash);
        auto it =
            std::find_if(first, last, [&](const auto& s) { return same_node(*s.second, *m); });
        if (it != last) return it->second;
        seen.emplace(m->hash, m);
        return m;
    });
}

ScalarExpr share_common_subexpressions(const ScalarExpr& e) {
    return share_common_subexpressions(std::vector<ScalarExpr>{e}).front();
}

DType input_dtype(const std::vector<ScalarExpr>& roots, int k, DType fallback) {
    for (const ScalarExpr& x : topological_order(roots))
        if (x->op == ScalarOp::Input && x->ivalue == k) return x->dtype;
    return fallback;
}

std::vector<int> use_counts(const std::vector<ScalarExpr>& order,
                            const std::vector<ScalarExpr>& roots) {
    std::unordered_map<const ScalarNode*, std::size_t> index;
    for (std::size_t i = 0; i < order.size(); ++i)
        index.emplace(order[i].get(), i);
    std::vector<int> uses(order.size(), 0);
    for (const ScalarExpr& n : order)
        for (const ScalarExpr& a : n->args)
            ++uses.at(index.at(a.get()));
    for (const ScalarExpr& r : roots)
        if (r) ++uses.at(index.at(r.get()));
    return uses;
}

} // namespace hedra
