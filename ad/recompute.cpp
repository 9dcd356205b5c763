// Activation recomputation by copies of the forward's maps (see recompute.hpp).
#include "ad/recompute.hpp"

#include <unordered_map>
#include <unordered_set>

#include "core/node_builders.hpp"

namespace hedra::ad {
namespace {

NodePtr rebuilt(const Node& n, std::vector<NodePtr> inputs, std::uint64_t id) {
    auto m = detail::copy_node_with(n, std::move(inputs));
    m->id = id;
    return intern(std::move(m));
}

struct Rewrite {
    std::unordered_set<const Node*> forward;
    std::unordered_map<const Node*, NodePtr> copies, done;

    // A forward value as the backward reads it: a map computed again, a view of one over the
    // copy, anything else itself.
    NodePtr copy(const NodePtr& n) {
        if (n->memo() || (n->kind != NodeKind::Map && n->kind != NodeKind::View)) return n;
        if (auto it = copies.find(n.get()); it != copies.end()) return it->second;
        NodePtr c = n;
        if (n->kind == NodeKind::Map) {
            c = rebuilt(*n, n->inputs, fresh_node_id());
        } else if (NodePtr in = copy(n->inputs.at(0)); in != n->inputs[0]) {
            c = rebuilt(*n, {in}, n->id);
        }
        copies.emplace(n.get(), c);
        return c;
    }

    // Backward nodes in topological order, their forward inputs replaced by copies.
    void run(const std::vector<NodePtr>& order) {
        for (const NodePtr& n : order) {
            if (forward.count(n.get()) || n->memo()) continue;
            std::vector<NodePtr> inputs;
            bool changed = false;
            for (const NodePtr& in : n->inputs) {
                NodePtr now = in;
                if (forward.count(in.get()))
                    now = copy(in);
                else if (auto it = done.find(in.get()); it != done.end())
                    now = it->second;
                changed = changed || now != in;
                inputs.push_back(std::move(now));
            }
            done.emplace(n.get(), changed ? rebuilt(*n, std::move(inputs), n->id) : n);
        }
    }
};

} // namespace

std::vector<Array> recompute_maps(const std::vector<Array>& forward,
                                  const std::vector<Array>& backward) {
    std::vector<NodePtr> roots, ends;
    for (const Array& a : forward)
        roots.push_back(a.node());
    for (const Array& a : backward)
        ends.push_back(a.node());
    Rewrite r;
    for (const NodePtr& n : topological_order(roots))
        r.forward.insert(n.get());
    r.run(topological_order(ends));
    std::vector<Array> out;
    for (const NodePtr& n : ends)
        out.emplace_back(r.done.count(n.get()) ? r.done.at(n.get()) : n);
    return out;
}

} // namespace hedra::ad
