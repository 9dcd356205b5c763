// Saving a lazy graph as a graph file (see graph_file.hpp and docs/graph_files.md): scalar
// expressions go into one table, shared subtrees once; nodes follow in topological order and
// refer to their inputs and expressions by position. Everything is numbered by traversal
// order, never by pointer, so the same graph gives the same bytes.
#include "core/graph_file.hpp"

#include <bit>
#include <cmath>
#include <fstream>
#include <unordered_map>

#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra {
namespace {

using json::Value;

Value int_array(const std::vector<std::int64_t>& values) {
    Value a = Value::array();
    for (std::int64_t v : values)
        a.push(Value::number(v));
    return a;
}

Value shape_json(const Shape& shape) {
    Value a = Value::array();
    for (const Range& r : shape.ranges())
        a.push(int_array({r.start, r.step, r.size}));
    return a;
}

Value float_json(double f) {
    if (std::isfinite(f)) return Value::number(f);
    if (std::isinf(f)) return Value::string(f > 0 ? "inf" : "-inf");
    std::uint64_t bits = std::bit_cast<std::uint64_t>(f);
    if (bits == std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()))
        return Value::string("nan");
    char buf[32];
    std::snprintf(buf, sizeof buf, "nan:0x%016llx", static_cast<unsigned long long>(bits));
    return Value::string(buf);
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
        json_.push(entry(*e, args));
        by_hash_.emplace(e->hash, index);
        return index;
    }

    static Value entry(const ScalarNode& e, const std::vector<int>& args) {
        Value v = Value::object();
        v.set("op", Value::string(scalar_op_name(e.op)));
        v.set("dtype", Value::string(std::string(dtype_name(e.dtype))));
        if (e.op == ScalarOp::Const) {
            if (e.dtype == DType::Bool)
                v.set("value", Value::boolean(e.ivalue != 0));
            else if (is_integer(e.dtype))
                v.set("value", Value::number(e.ivalue));
            else
                v.set("value", float_json(e.fvalue));
        } else if (e.op == ScalarOp::Input) {
            v.set("index", Value::number(e.ivalue));
        } else {
            Value a = Value::array();
            for (int i : args)
                a.push(Value::number(std::int64_t{i}));
            v.set("args", std::move(a));
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
        rows.push(int_array(row));
    }
    Value v = Value::object();
    v.set("matrix", std::move(rows));
    v.set("offset", int_array(m.offsets()));
    return v;
}

Value node_json(const Node& n, const std::unordered_map<const Node*, int>& index, ExprTable& exprs,
                const GraphSaveOptions& options) {
    Value v = Value::object();
    v.set("kind", Value::string(node_kind_name(n.kind)));
    v.set("dtype", Value::string(std::string(dtype_name(n.dtype))));
    v.set("shape", shape_json(n.shape));
    if (!n.inputs.empty()) {
        Value in = Value::array();
        for (const NodePtr& i : n.inputs)
            in.push(Value::number(std::int64_t{index.at(i.get())}));
        v.set("inputs", std::move(in));
    }
    switch (n.kind) {
    case NodeKind::Constant:
    case NodeKind::Map:
        v.set("expr", Value::number(std::int64_t{exprs.add(n.expr)}));
        break;
    case NodeKind::Placeholder:
        v.set("id", Value::number(static_cast<std::int64_t>(n.id)));
        if (!n.name.empty()) v.set("name", Value::string(n.name));
        break;
    case NodeKind::Data:
        v.set("id", Value::number(static_cast<std::int64_t>(n.id)));
        if (options.embed_data)
            v.set("data", Value::string(json::base64_encode(n.data.raw(), n.data.bytes())));
        break;
    case NodeKind::Iota:
        v.set("axis", Value::number(std::int64_t{n.axis}));
        break;
    case NodeKind::View:
        v.set("access", access_json(n.access));
        break;
    case NodeKind::Reduce: {
        v.set("op", Value::string(reduce_op_name(n.reduce_op)));
        v.set("axes", int_array(std::vector<std::int64_t>(n.axes.begin(), n.axes.end())));
        v.set("keepdims", Value::boolean(n.keepdims));
        if (n.reduce_op == ReduceOp::Custom) {
            v.set("expr", Value::number(std::int64_t{exprs.add(n.expr)}));
            v.set("identity", Value::number(std::int64_t{exprs.add(n.identity)}));
        }
        if (!n.tuple_exprs.empty()) { // reduce_multiple_value: every component, and this one
            Value tuple = Value::array(), ids = Value::array();
            for (std::size_t j = 0; j < n.tuple_exprs.size(); ++j) {
                tuple.push(Value::number(std::int64_t{exprs.add(n.tuple_exprs[j])}));
                ids.push(Value::number(std::int64_t{exprs.add(n.tuple_identities[j])}));
            }
            v.set("tuple", std::move(tuple));
            v.set("identities", std::move(ids));
            v.set("component", Value::number(std::int64_t{n.component}));
        }
        break;
    }
    case NodeKind::Fuse:
        v.set("overwrite", Value::boolean(n.overwrite));
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
    std::vector<NodePtr> order = topological_order(roots);
    std::unordered_map<const Node*, int> index; // lookups only
    for (const NodePtr& n : order)
        index.emplace(n.get(), static_cast<int>(index.size()));

    ExprTable exprs;
    Value nodes = Value::array();
    for (const NodePtr& n : order)
        nodes.push(node_json(*n, index, exprs, options));
    Value inputs = Value::array();
    std::vector<bool> listed(order.size(), false);
    for (const NodePtr& p : placeholders) {
        int i = index.at(p.get());
        if (listed[i]) continue;
        listed[i] = true;
        inputs.push(Value::number(std::int64_t{i}));
    }
    for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i]->kind == NodeKind::Placeholder && !listed[i])
            inputs.push(Value::number(static_cast<std::int64_t>(i)));
    Value outs = Value::array();
    for (const NodePtr& o : outputs)
        outs.push(Value::number(std::int64_t{index.at(o.get())}));

    Value doc = Value::object();
    doc.set("format", Value::string("hedra-graph"));
    doc.set("version", Value::number(std::int64_t{1}));
    doc.set("exprs", exprs.take());
    doc.set("nodes", std::move(nodes));
    doc.set("inputs", std::move(inputs));
    doc.set("outputs", std::move(outs));
    return doc;
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
