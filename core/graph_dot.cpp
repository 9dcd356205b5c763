// The Graphviz printer of the lazy graph (see graph_dot.hpp).
#include "core/graph_dot.hpp"

#include <unordered_map>

#include "core/collective.hpp"

namespace hedra {
namespace {

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

std::string shorten(std::string s, std::size_t limit = 72) {
    if (s.size() > limit) s = s.substr(0, limit - 3) + "...";
    return s;
}

std::string payload(const Node& n) {
    switch (n.kind) {
    case NodeKind::Constant:
    case NodeKind::Map:
        return shorten(to_string(n.expr));
    case NodeKind::Data:
        return "#" + std::to_string(n.id);
    case NodeKind::Placeholder:
        return "#" + std::to_string(n.id) + (n.name.empty() ? "" : " '" + n.name + "'");
    case NodeKind::Iota:
        return "axis " + std::to_string(n.axis);
    case NodeKind::Gather:
        return "take axis " + std::to_string(n.axis);
    case NodeKind::Scatter:
        return "scatter_add axis " + std::to_string(n.axis);
    case NodeKind::View:
        return shorten(n.access.to_string());
    case NodeKind::Reduce: {
        std::string s = reduce_op_name(n.reduce_op);
        s += " axes [";
        for (std::size_t i = 0; i < n.axes.size(); ++i)
            s += (i ? "," : "") + std::to_string(n.axes[i]);
        return s + "]" + (n.keepdims ? " keepdims" : "");
    }
    case NodeKind::Fuse:
        return n.overwrite ? "overwrite" : "disjoint";
    case NodeKind::Scan:
        return std::string(n.body->reverse ? "reverse " : "") + std::to_string(n.body->steps.size) +
               " steps, " + std::to_string(n.body->outputs.size()) + " body outputs";
    case NodeKind::ScanOutput:
        return "component " + std::to_string(n.component);
    case NodeKind::Collective:
        return collective_op_name(n.collective_op);
    }
    return "";
}

const char* style(NodeKind k) {
    switch (k) {
    case NodeKind::Placeholder:
        return "shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"";
    case NodeKind::Data:
        return "shape=ellipse, style=filled, fillcolor=\"#d9ead3\"";
    case NodeKind::Constant:
    case NodeKind::Iota:
        return "shape=ellipse";
    case NodeKind::View:
        return "shape=box, style=dashed";
    case NodeKind::Reduce:
        return "shape=box, style=\"filled,bold\", fillcolor=\"#fce5cd\"";
    case NodeKind::Fuse:
        return "shape=hexagon";
    case NodeKind::Gather:
    case NodeKind::Scatter:
        return "shape=box, style=\"filled\", fillcolor=\"#ead1dc\"";
    case NodeKind::Scan:
        return "shape=box3d, style=\"filled,bold\", fillcolor=\"#d0e0e3\"";
    case NodeKind::ScanOutput:
        return "shape=box";
    case NodeKind::Collective:
        return "shape=doubleoctagon, style=filled, fillcolor=\"#f4cccc\"";
    case NodeKind::Map:
        return "shape=box";
    }
    return "shape=box";
}

} // namespace

std::string to_dot(const std::vector<NodePtr>& outputs) {
    std::vector<NodePtr> order = topological_order(outputs);
    std::unordered_map<const Node*, std::size_t> number; // lookups only
    std::string s =
        "digraph hedra {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n"
        "  edge [fontname=\"monospace\", fontsize=9];\n";
    for (const NodePtr& n : order) {
        std::size_t k = number.size();
        number[n.get()] = k;
        std::string title =
            "%" + std::to_string(k) + " " + node_kind_name(n->kind) + " " + payload(*n);
        std::string type = std::string(dtype_name(n->dtype)) + " " + n->shape.to_string() +
                           (n->memo() ? " (computed)" : "");
        std::string escaped = escape(title) + "\\n" + escape(type);
        s += "  n" + std::to_string(k) + " [label=\"" + escaped + "\", " + style(n->kind) + "];\n";
        for (std::size_t i = 0; i < n->inputs.size(); ++i)
            s += "  n" + std::to_string(number.at(n->inputs[i].get())) + " -> n" +
                 std::to_string(k) +
                 (n->inputs.size() > 1 ? " [label=\"" + std::to_string(i) + "\"]" : "") + ";\n";
    }
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        if (!outputs[o]) continue;
        s += "  out" + std::to_string(o) + " [label=\"output " + std::to_string(o) +
             "\", shape=plaintext];\n";
        s += "  n" + std::to_string(number.at(outputs[o].get())) + " -> out" + std::to_string(o) +
             ";\n";
    }
    return s + "}\n";
}

} // namespace hedra
