// Shared pieces of graph construction: fresh nodes, axis normalization and the parts of error
// messages every primitive uses (creation sites, operand names, lists).
#include "core/node_builders.hpp"

#include <algorithm>

namespace hedra::detail {

std::shared_ptr<Node> new_node(NodeKind kind, DType dtype, Shape shape, std::vector<NodePtr> inputs,
                               SourceLocation loc) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->dtype = dtype;
    n->shape = std::move(shape);
    n->inputs = std::move(inputs);
    n->loc = loc;
    return n;
}

std::shared_ptr<Node> copy_node_with(const Node& n, std::vector<NodePtr> inputs) {
    auto m = new_node(n.kind, n.dtype, n.shape, std::move(inputs), n.loc);
    m->expr = n.expr;
    m->identity = n.identity;
    m->tuple_exprs = n.tuple_exprs;
    m->tuple_identities = n.tuple_identities;
    m->component = n.component;
    m->body = n.body;
    m->access = n.access;
    m->axis = n.axis;
    m->axes = n.axes;
    m->keepdims = n.keepdims;
    m->reduce_op = n.reduce_op;
    m->overwrite = n.overwrite;
    m->collective_op = n.collective_op;
    m->group = n.group;
    m->id = n.id;
    m->name = n.name;
    m->data = n.data;
    return m;
}

std::vector<NodePtr> rebuild_graph(const std::vector<NodePtr>& outputs,
                                   const NodeReplacement& replace,
                                   std::unordered_map<const Node*, NodePtr>* image) {
    std::unordered_map<const Node*, NodePtr> local;
    std::unordered_map<const Node*, NodePtr>& done = image ? *image : local;
    for (const NodePtr& n : topological_order(outputs)) {
        if (NodePtr r = replace(n, done)) {
            done.emplace(n.get(), std::move(r));
            continue;
        }
        std::vector<NodePtr> inputs;
        bool changed = false;
        for (const NodePtr& in : n->inputs) {
            inputs.push_back(done.at(in.get()));
            changed = changed || inputs.back() != in;
        }
        done.emplace(n.get(), changed ? intern(copy_node_with(*n, std::move(inputs))) : n);
    }
    std::vector<NodePtr> out;
    for (const NodePtr& o : outputs)
        out.push_back(done.at(o.get()));
    return out;
}

int normalize_axis(const std::string& op, int axis, int rank, const Shape& shape,
                   const NodePtr& array) {
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        throw Error(op + ": axis " + std::to_string(axis) + " out of range for shape " +
                    shape.to_string() + (array ? "; array created at " + site(array) : ""));
    return a;
}

std::vector<int> normalize_axes(const std::string& op, const std::vector<int>& axes,
                                const NodePtr& array) {
    const Shape& shape = array->shape;
    std::vector<int> out;
    if (axes.empty()) {
        for (int i = 0; i < shape.rank(); ++i)
            out.push_back(i);
        return out;
    }
    for (int axis : axes) {
        int a = normalize_axis(op, axis, shape.rank(), shape, array);
        if (std::find(out.begin(), out.end(), a) != out.end())
            throw Error(op + ": axis " + std::to_string(a) + " appears twice in axes " +
                        list_string(axes) + " for shape " + shape.to_string() +
                        "; array created at " + site(array));
        out.push_back(a);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void check_result_rank(const std::string& op, int rank) {
    if (rank > kMaxRank)
        throw Error(op + ": the result would have rank " + std::to_string(rank) +
                    ", above the maximum rank " + std::to_string(kMaxRank) + "; merge axes first");
}

std::string site(const NodePtr& n) {
    return location_string(n->loc);
}

std::string operand_name(std::size_t i) {
    if (i < 26) return std::string(1, static_cast<char>('a' + i));
    return "operand " + std::to_string(i);
}

std::string list_string(const std::vector<std::int64_t>& values) {
    std::string s = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i ? "," : "") + std::to_string(values[i]);
    return s + "]";
}

std::string list_string(const std::vector<int>& values) {
    return list_string(std::vector<std::int64_t>(values.begin(), values.end()));
}

} // namespace hedra::detail
