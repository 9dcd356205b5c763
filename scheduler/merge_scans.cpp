// merge_scans (merge_scans.hpp).
#include "scheduler/merge_scans.hpp"

#include <unordered_map>

#include "core/node_builders.hpp"
#include "core/scan.hpp"

namespace hedra::sched {
namespace {

// Whether `larger`'s step is `smaller`'s with more outputs, over the same inputs.
bool extends(const Node& larger, const Node& smaller) {
    const ScanBody& a = *smaller.body;
    const ScanBody& b = *larger.body;
    if (larger.inputs != smaller.inputs || a.params != b.params || a.carries != b.carries ||
        a.xs != b.xs || !(a.steps == b.steps) || a.reverse != b.reverse ||
        a.outputs.size() > b.outputs.size())
        return false;
    for (std::size_t o = 0; o < a.outputs.size(); ++o)
        if (a.outputs[o] != b.outputs[o]) return false;
    return true;
}

} // namespace

std::vector<NodePtr> merge_scans(const std::vector<NodePtr>& outputs) {
    std::vector<NodePtr> order = topological_order(outputs);
    std::vector<NodePtr> scans;
    for (const NodePtr& n : order)
        if (n->kind == NodeKind::Scan && !n->memo()) scans.push_back(n);
    if (scans.size() < 2) return outputs;
    // Each scan to the largest scan extending it (extension is transitive).
    std::unordered_map<const Node*, NodePtr> into;
    for (const NodePtr& a : scans)
        for (const NodePtr& b : scans) {
            if (a == b || !extends(*b, *a)) continue;
            auto it = into.find(a.get());
            if (it == into.end() || b->body->outputs.size() > it->second->body->outputs.size())
                into[a.get()] = b;
        }
    if (into.empty()) return outputs;
    std::unordered_map<const Node*, NodePtr> done;
    for (const NodePtr& n : order) {
        if (n->memo()) {
            done.emplace(n.get(), n);
            continue;
        }
        if (n->kind == NodeKind::ScanOutput) {
            const Node* scan = n->inputs[0].get();
            if (auto it = into.find(scan); it != into.end()) {
                const int c =
                    detail::extended_component(*scan->body, *it->second->body, n->component);
                done.emplace(n.get(), detail::scan_output(it->second, c, n->loc));
                continue;
            }
        }
        std::vector<NodePtr> inputs;
        bool changed = false;
        for (const NodePtr& in : n->inputs) {
            inputs.push_back(done.at(in.get()));
            changed = changed || inputs.back() != in;
        }
        done.emplace(n.get(), changed ? intern(detail::copy_node_with(*n, std::move(inputs))) : n);
    }
    std::vector<NodePtr> out;
    for (const NodePtr& o : outputs)
        out.push_back(done.at(o.get()));
    return out;
}

} // namespace hedra::sched
