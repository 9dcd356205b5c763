// Saving a lazy graph as a graph file (see graph_file.hpp and docs/graph_files.md): scalar
// expressions go into one table, shared subtrees once; nodes follow in topological order and
// refer to their inputs and expressions by position. Everything is numbered by traversal
// order, never by pointer, so the same graph gives the same bytes.
#include "core/graph_file.hpp"

#include <bit>
#include <cmath>
#include <fstream>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/scalar_dag.hpp"

namespace hedra {
namespace {

using json::Value;

Value shape_json(const Shape& shape) {
    Value a = Value::array();
    for (const Range& r : shape.ranges()) {
        Value v = {r.start, r.step, r.size};
        if (r.is_dynamic()) v.push_back(param_name(r.param)); // a symbolic extent: its name
        a.push_back(v);
    }
    return a;
}

Value float_json(double f) {
    if (std::isfinite(f)) return f;
    if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
    std::uint64_t bits = std::bit_cast<std::uint64_t>(f);
    if (bits == std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()))
        return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "nan:0x%016llx", static_cast<unsigned long long>(bits));
    return buf;
}

// The expression table: structurally equal subtrees share one entry.
class ExprTable {
public:
    int add(const ScalarExpr& root) {
        if (auto it = by_pointer_.find(root.get()); it != by_pointer_.end()) return it->second;
        for (const ScalarExpr& e : topological_order(root)) {
            if (by_pointer_.count(e.get())) continue;
            std::vector<int> args;
            for (const ScalarExpr& a : e->args)
                args.push_back(by_pointer_.at(a.get()));
            by_pointer_[e.get()] = entry_of(e, args);
        }
        return by_pointer_.at(root.get());
    }
    Value take() { return std::move(json_); }

private:
    // The table entry of `e`, whose operands are entries `args` already: an equal one's (same
    // fields, same operand entries), or a new one.
    int entry_of(const ScalarExpr& e, const std::vector<int>& args) {
        auto [first, last] = by_hash_.equal_range(e->hash);
        for (auto it = first; it != last; ++it) {
            const ScalarNode& x = *exprs_[it->second];
            if (x.op == e->op && x.dtype == e->dtype && x.ivalue == e->ivalue &&
                std::bit_cast<std::uint64_t>(x.fvalue) == std::bit_cast<std::uint64_t>(e->fvalue) &&
                args_[it->second] == args)
                return it->second;
        }
        int index = static_cast<int>(exprs_.size());
        exprs_.push_back(e);
        args_.push_back(args);
        json_.push_back(entry(*e, args));
        by_hash_.emplace(e->hash, index);
        return index;
    }

    static Value entry(const ScalarNode& e, const std::vector<int>& args) {
        Value v = {{"op", scalar_op_name(e.op)}, {"dtype", std::string(dtype_name(e.dtype))}};
        if (e.op == ScalarOp::Const) {
            if (e.dtype == DType::Bool)
                v["value"] = e.ivalue != 0;
            else if (is_integer(e.dtype))
                v["value"] = e.ivalue;
            else
                v["value"] = float_json(e.fvalue);
        } else if (e.op == ScalarOp::Input) {
            v["index"] = e.ivalue;
        } else {
            v["args"] = args;
        }
        return v;
    }

    std::vector<ScalarExpr> exprs_;
    std::vector<std::vector<int>> args_; // each entry's operand entries
    Value json_ = Value::array();
    std::unordered_map<const ScalarNode*, int> by_pointer_; // lookups only
    std::unordered_multimap<std::size_t, int> by_hash_;     // lookups only
};

Value access_json(const AffineMap& m) {
    Value rows = Value::array();
    for (int o = 0; o < m.out_rank(); ++o) {
        std::vector<std::int64_t> row;
        for (int i = 0; i < m.in_rank(); ++i)
            row.push_back(m.coeff(o, i));
        rows.push_back(row);
    }
    return {{"matrix", std::move(rows)}, {"offset", m.offsets()}};
}

Value node_json(const Node& n, const std::unordered_map<const Node*, int>& index, ExprTable& exprs,
                const GraphSaveOptions& options) {
    Value v = {{"kind", node_kind_name(n.kind)},
               {"dtype", std::string(dtype_name(n.dtype))},
               {"shape", shape_json(n.shape)}};
    if (!n.inputs.empty()) {
        Value& in = v["inputs"] = Value::array();
        for (const NodePtr& i : n.inputs)
            in.push_back(index.at(i.get()));
    }
    switch (n.kind) {
    case NodeKind::Scan: { // the body's nodes come before it in the list
        const ScanBody& b = *n.body;
        Value params = Value::array(), outs = Value::array();
        for (const NodePtr& p : b.params)
            params.push_back(index.at(p.get()));
        for (const NodePtr& o : b.outputs)
            outs.push_back(index.at(o.get()));
        v["body"] = {{"params", std::move(params)},
                     {"outputs", std::move(outs)},
                     {"carries", b.carries},
                     {"xs", b.xs},
                     {"shape", shape_json(Shape{b.steps})},
                     {"reverse", b.reverse}}; // the scan axis
        break;
    }
    case NodeKind::ScanOutput:
        v["component"] = n.component;
        break;
    case NodeKind::Collective: // its group is a live communicator of this process
        throw Error("save_graph: the graph has a collective (" +
                    std::string(collective_op_name(n.collective_op)) + " of " +
                    n.shape.to_string() +
                    "), which a graph file cannot hold; save a graph without all_reduce or "
                    "copy_to_group");
    case NodeKind::Constant:
    case NodeKind::Map:
        v["expr"] = exprs.add(n.expr);
        break;
    case NodeKind::Placeholder:
        v["id"] = n.id;
        if (!n.name.empty()) v["name"] = n.name;
        break;
    case NodeKind::Data:
        v["id"] = n.id;
        if (options.embed_data) v["data"] = json::base64_encode(n.data.raw(), n.data.bytes());
        break;
    case NodeKind::Iota:
    case NodeKind::Gather:
    case NodeKind::Scatter:
        v["axis"] = n.axis;
        break;
    case NodeKind::View:
        v["access"] = access_json(n.access);
        break;
    case NodeKind::Reduce: {
        v["op"] = reduce_op_name(n.reduce_op);
        v["axes"] = n.axes;
        v["keepdims"] = n.keepdims;
        if (n.reduce_op == ReduceOp::Custom) {
            v["expr"] = exprs.add(n.expr);
            v["identity"] = exprs.add(n.identity);
        }
        if (!n.tuple_exprs.empty()) { // reduce_multiple_value: every component, and this one
            Value tuple = Value::array(), ids = Value::array();
            for (std::size_t j = 0; j < n.tuple_exprs.size(); ++j) {
                tuple.push_back(exprs.add(n.tuple_exprs[j]));
                ids.push_back(exprs.add(n.tuple_identities[j]));
            }
            v["tuple"] = std::move(tuple);
            v["identities"] = std::move(ids);
            v["component"] = n.component;
        }
        break;
    }
    case NodeKind::Fuse:
        v["overwrite"] = n.overwrite;
        break;
    }
    return v;
}

} // namespace

json::Value graph_to_json(const std::vector<NodePtr>& outputs,
                          const std::vector<NodePtr>& placeholders,
                          const GraphSaveOptions& options) {
    for (const NodePtr& p : placeholders)
        if (!p || p->kind != NodeKind::Placeholder)
            throw Error("save_graph: the placeholders list holds a " +
                        std::string(p ? node_kind_name(p->kind) : "null") +
                        " node; list only placeholder() arrays");
    for (const NodePtr& o : outputs)
        if (!o) throw Error("save_graph: an output is an empty array handle");
    std::vector<NodePtr> roots = outputs;
    roots.insert(roots.end(), placeholders.begin(), placeholders.end());
    // Nodes in order, a scan's body (its own closed graph) just before the scan.
    std::vector<NodePtr> order;
    std::unordered_map<const Node*, int> index; // lookups only
    std::unordered_set<const Node*> body_params;
    std::function<void(const std::vector<NodePtr>&)> add = [&](const std::vector<NodePtr>& from) {
        for (const NodePtr& n : topological_order(from)) {
            if (index.count(n.get())) continue;
            if (n->kind == NodeKind::Scan && !n->memo()) {
                std::vector<NodePtr> body = n->body->params;
                body.insert(body.end(), n->body->outputs.begin(), n->body->outputs.end());
                add(body);
                for (const NodePtr& p : n->body->params)
                    body_params.insert(p.get());
            }
            index.emplace(n.get(), static_cast<int>(order.size()));
            order.push_back(n);
        }
    };
    add(roots);

    ExprTable exprs;
    Value nodes = Value::array();
    for (const NodePtr& n : order)
        nodes.push_back(node_json(*n, index, exprs, options));
    Value inputs = Value::array();
    std::vector<bool> listed(order.size(), false);
    for (const NodePtr& p : placeholders) {
        int i = index.at(p.get());
        if (listed[i]) continue;
        listed[i] = true;
        inputs.push_back(i);
    }
    for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i]->kind == NodeKind::Placeholder && !listed[i] &&
            !body_params.count(order[i].get()))
            inputs.push_back(i);
    Value outs = Value::array();
    for (const NodePtr& o : outputs)
        outs.push_back(index.at(o.get()));
    return {{"format", "hedra-graph"},     {"version", 1},
            {"exprs", exprs.take()},       {"nodes", std::move(nodes)},
            {"inputs", std::move(inputs)}, {"outputs", std::move(outs)}};
}

std::string save_graph(const std::vector<NodePtr>& outputs,
                       const std::vector<NodePtr>& placeholders, const GraphSaveOptions& options) {
    return json::write(graph_to_json(outputs, placeholders, options), 100, 2);
}

namespace {
std::vector<NodePtr> nodes_of(const std::vector<Array>& arrays) {
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    return nodes;
}
} // namespace

std::string save_graph(const std::vector<Array>& outputs, const std::vector<Array>& placeholders,
                       const GraphSaveOptions& options) {
    return save_graph(nodes_of(outputs), nodes_of(placeholders), options);
}

void save_graph_file(const std::string& path, const std::vector<Array>& outputs,
                     const std::vector<Array>& placeholders, const GraphSaveOptions& options) {
    std::string text = save_graph(outputs, placeholders, options) + "\n";
    std::ofstream out(path, std::ios::binary);
    if (!out) throw Error("save_graph_file: cannot open '" + path + "' for writing");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw Error("save_graph_file: cannot write '" + path + "'");
}

std::vector<Array> GraphFile::output_arrays() const {
    return std::vector<Array>(outputs.begin(), outputs.end());
}

std::vector<Array> GraphFile::placeholder_arrays() const {
    return std::vector<Array>(placeholders.begin(), placeholders.end());
}

} // namespace hedra
