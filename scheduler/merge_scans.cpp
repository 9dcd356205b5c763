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
    // A component of a merged scan is read from the larger scan rebuilt on the smaller one's
    // rebuilt inputs (interning makes it the larger scan's own rebuild): a chain of scans (the
    // layers of a stacked LSTM) merges layer by layer.
    return detail::rebuild_graph(
        outputs,
        [&](const NodePtr& n, const std::unordered_map<const Node*, NodePtr>& done) -> NodePtr {
            if (n->memo()) return n;
            if (n->kind != NodeKind::ScanOutput) return nullptr;
            const NodePtr& scan = n->inputs[0];
            auto it = into.find(scan.get());
            if (it == into.end()) return nullptr;
            const ScanBody& larger = *it->second->body;
            std::vector<NodePtr> extra(larger.outputs.begin() +
                                           static_cast<long>(scan->body->outputs.size()),
                                       larger.outputs.end());
            NodePtr merged = detail::extend_scan(done.at(scan.get()), extra);
            return detail::scan_output(
                merged, detail::extended_component(*scan->body, larger, n->component), n->loc);
        });
}

} // namespace hedra::sched
