// Rebuilding the nodes of a graph file, field by field, with the checks that keep a
// hand-edited file from building a graph the API could not (see graph_file_load.cpp).
#include <algorithm>
#include <cstring>
#include <functional>

#include "core/graph_file_reader.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"
#include "core/scalar_dag.hpp"
#include "core/scan.hpp"

namespace hedra::detail {
namespace {

bool parse_node_kind(const std::string& name, NodeKind& out) {
    for (int i = 0; i <= static_cast<int>(NodeKind::ScanOutput); ++i)
        if (name == node_kind_name(static_cast<NodeKind>(i))) {
            out = static_cast<NodeKind>(i);
            return true;
        }
    return false;
}

bool parse_reduce_op(const std::string& name, ReduceOp& out) {
    for (int i = 0; i <= static_cast<int>(ReduceOp::Custom); ++i)
        if (name == reduce_op_name(static_cast<ReduceOp>(i))) {
            out = static_cast<ReduceOp>(i);
            return true;
        }
    return false;
}

std::string dname(DType t) {
    return std::string(dtype_name(t));
}

// Every distinct Input(k) leaf of `e`.
void for_each_input(const ScalarExpr& e, const std::function<void(const ScalarNode&)>& f) {
    for (const ScalarExpr& x : topological_order(e))
        if (x->op == ScalarOp::Input) f(*x);
}

} // namespace

void GraphReader::check_inputs(const Value& n, const Node& node, std::size_t count) const {
    if (node.inputs.size() != count)
        fail(n, "takes " + std::to_string(count) + " input" + (count == 1 ? "" : "s") + ", found " +
                    std::to_string(node.inputs.size()));
}

void GraphReader::check_map(const Value& n, const Node& node) const {
    for (std::size_t i = 0; i < node.inputs.size(); ++i)
        if (!(node.inputs[i]->shape == node.shape))
            fail(n, "input " + std::to_string(i) + " has shape " +
                        node.inputs[i]->shape.to_string() + " but the map has shape " +
                        node.shape.to_string());
    if (node.expr->dtype != node.dtype)
        fail(n, "the expression has dtype " + dname(node.expr->dtype) + " but the node has " +
                    dname(node.dtype));
    for_each_input(node.expr, [&](const ScalarNode& in) {
        if (in.ivalue >= static_cast<std::int64_t>(node.inputs.size()))
            fail(n, "the expression reads in" + std::to_string(in.ivalue) + " but the map has " +
                        std::to_string(node.inputs.size()) + " inputs");
        DType t = node.inputs[static_cast<std::size_t>(in.ivalue)]->dtype;
        if (in.dtype != t)
            fail(n, "the expression reads in" + std::to_string(in.ivalue) + " as " +
                        dname(in.dtype) + " but that input has dtype " + dname(t));
    });
}

void GraphReader::check_view(const Value& n, const Node& node) const {
    const Node& in = *node.inputs[0];
    if (in.dtype != node.dtype)
        fail(n, "a view has its input's dtype " + dname(in.dtype) + ", not " + dname(node.dtype));
    if (node.shape.empty()) return;
    const AffineMap& m = node.access;
    for (int o = 0; o < m.out_rank(); ++o) {
        __int128 lo = m.offset(o), hi = m.offset(o); // |coeff|, size < 2^41: no overflow
        for (int i = 0; i < m.in_rank(); ++i) {
            __int128 c = static_cast<__int128>(m.coeff(o, i)) * (node.shape[i].size - 1);
            (c < 0 ? lo : hi) += c;
        }
        if (lo < 0 || hi >= in.shape[o].size)
            fail(n, "the access " + m.to_string() + " reads counters [" +
                        std::to_string(static_cast<long long>(lo)) + ", " +
                        std::to_string(static_cast<long long>(hi)) + "] of input axis " +
                        std::to_string(o) + ", which has " + std::to_string(in.shape[o].size));
    }
}

void GraphReader::check_reduce(const Value& n, const Node& node) const {
    const Node& in = *node.inputs[0];
    if (in.dtype != node.dtype)
        fail(n,
             "a reduction has its input's dtype " + dname(in.dtype) + ", not " + dname(node.dtype));
    ReduceOp op = node.reduce_op;
    if ((op == ReduceOp::And || op == ReduceOp::Or) && node.dtype != DType::Bool)
        fail(n, std::string("'") + reduce_op_name(op) + "' reduces bool arrays, not " +
                    dname(node.dtype));
    if ((op == ReduceOp::Sum || op == ReduceOp::Prod) &&
        (node.dtype == DType::Bool || node.dtype == DType::I32))
        fail(n, std::string("'") + reduce_op_name(op) + "' of " + dname(node.dtype) +
                    " accumulates in i64: cast the input first");
    std::vector<Range> expect;
    for (int d = 0, j = 0; d < in.shape.rank(); ++d) {
        bool reduced = j < static_cast<int>(node.axes.size()) && node.axes[j] == d;
        j += reduced;
        if (!reduced)
            expect.push_back(in.shape[d]);
        else if (node.keepdims)
            expect.push_back(range(1));
    }
    for (std::size_t j = 0; j < node.axes.size(); ++j)
        if (node.axes[j] < 0 || node.axes[j] >= in.shape.rank() ||
            (j > 0 && node.axes[j] <= node.axes[j - 1]))
            fail(n, "'axes' " + list_string(node.axes) +
                        " must be increasing axes of the input, which has rank " +
                        std::to_string(in.shape.rank()));
    if (!(Shape(expect) == node.shape))
        fail(n, "reducing " + in.shape.to_string() + " over axes " + list_string(node.axes) +
                    " gives shape " + Shape(expect).to_string() + ", not " +
                    node.shape.to_string());
    if (op != ReduceOp::Custom || !node.tuple_exprs.empty()) return; // tuples: read_tuple_reduce
    if (node.expr->dtype != node.dtype || node.identity->dtype != node.dtype ||
        node.identity->op != ScalarOp::Const)
        fail(n, "a custom reduction needs a combiner and a constant identity of dtype " +
                    dname(node.dtype));
    for_each_input(node.expr, [&](const ScalarNode& i) {
        if (i.ivalue > 1 || i.dtype != node.dtype)
            fail(n, "the combiner may read only in0 and in1 of dtype " + dname(node.dtype));
    });
}

void GraphReader::read_tuple_reduce(const Value& n, Node& node) const {
    const Value& tuple = typed(member(n, "tuple"), Value::value_t::array, "tuple");
    const Value& ids = typed(member(n, "identities"), Value::value_t::array, "identities");
    const std::size_t k = node.inputs.size();
    if (k < 2 || tuple.size() != k || ids.size() != k)
        fail(n, "a multi-value reduction has one combiner and one identity per input (at least "
                "2), found " +
                    std::to_string(tuple.size()) + " and " + std::to_string(ids.size()) + " for " +
                    std::to_string(k) + " inputs");
    auto entry = [&](const Value& v, const char* key) {
        std::int64_t i = integer(v, key, 0, static_cast<std::int64_t>(exprs_.size()) - 1);
        return exprs_[static_cast<std::size_t>(i)];
    };
    for (std::size_t j = 0; j < k; ++j) {
        node.tuple_exprs.push_back(entry(tuple[j], "tuple"));
        node.tuple_identities.push_back(entry(ids[j], "identities"));
    }
    node.component =
        static_cast<int>(integer_member(n, "component", 0, static_cast<std::int64_t>(k) - 1));
    const Value& op = typed(member(n, "op"), Value::value_t::string, "op");
    if (text(op) != "custom")
        fail(op, "a multi-value reduction is 'custom', not '" + text(op) + "'");
    node.reduce_op = ReduceOp::Custom;
    const Value& axes = typed(member(n, "axes"), Value::value_t::array, "axes");
    for (const Value& a : axes)
        node.axes.push_back(static_cast<int>(integer(a, "axes", 0, kMaxRank)));
    node.keepdims = bool_member(n, "keepdims");
    for (std::size_t j = 0; j < k; ++j) {
        const Node& in = *node.inputs[j];
        if (!(in.shape == node.inputs[0]->shape))
            fail(n, "input " + std::to_string(j) + " has shape " + in.shape.to_string() +
                        " but input 0 has shape " + node.inputs[0]->shape.to_string());
        if (node.tuple_exprs[j]->dtype != in.dtype || node.tuple_identities[j]->dtype != in.dtype ||
            node.tuple_identities[j]->op != ScalarOp::Const)
            fail(n, "component " + std::to_string(j) +
                        " needs a combiner and a constant "
                        "identity of its input's dtype " +
                        dname(in.dtype));
        for_each_input(node.tuple_exprs[j], [&](const ScalarNode& i) {
            std::int64_t m = i.ivalue % static_cast<std::int64_t>(k);
            if (i.ivalue >= static_cast<std::int64_t>(2 * k) ||
                i.dtype != node.inputs[static_cast<std::size_t>(m)]->dtype)
                fail(n, "a combiner reads in0..in" + std::to_string(2 * k - 1) +
                            " (the accumulators, then the elements), each of its input's dtype");
        });
    }
    const auto c = static_cast<std::size_t>(node.component);
    node.expr = node.tuple_exprs[c];
    node.identity = node.tuple_identities[c];
    // The shape and dtype checks of a reduction of input `component`.
    std::vector<NodePtr> all = node.inputs;
    node.inputs = {all[c]};
    check_reduce(n, node);
    node.inputs = std::move(all);
}

void GraphReader::check_fuse(const Value& n, const Node& node) const {
    if (node.inputs.empty()) fail(n, "a fuse needs at least one input");
    std::vector<Array> pieces;
    for (const NodePtr& p : node.inputs) {
        if (p->dtype != node.dtype || p->shape.rank() != node.shape.rank())
            fail(n, "every piece must have the fuse's dtype " + dname(node.dtype) + " and rank " +
                        std::to_string(node.shape.rank()) + "; found " + dname(p->dtype) + " " +
                        p->shape.to_string());
        pieces.emplace_back(p);
    }
    Shape result;
    try {
        result = (node.overwrite ? overwrite(pieces) : fuse(pieces)).shape();
    } catch (const Error& e) {
        fail(n, e.what());
    }
    if (!(result == node.shape))
        fail(n, "the pieces make shape " + result.to_string() + ", not " + node.shape.to_string());
}

void GraphReader::check_gather(const Value& n, const Node& node) const {
    Array result;
    try {
        result = take(Array(node.inputs[0]), Array(node.inputs[1]), node.axis);
    } catch (const Error& e) {
        fail(n, e.what());
    }
    if (result.dtype() != node.dtype || !(result.shape() == node.shape))
        fail(n, "take gives " + dname(result.dtype()) + " " + result.shape().to_string() +
                    ", not " + dname(node.dtype) + " " + node.shape.to_string());
}

void GraphReader::check_scatter(const Value& n, const Node& node) const {
    Array result;
    try {
        result = scatter_add(Array(node.inputs[0]), Array(node.inputs[1]), node.axis, node.shape);
    } catch (const Error& e) {
        fail(n, e.what());
    }
    if (result.dtype() != node.dtype)
        fail(n, "scatter_add gives " + dname(result.dtype()) + ", not " + dname(node.dtype));
}

// A scan's body: its params and outputs are nodes listed before it (its own closed graph),
// checked against its inputs as scan() built them.
void GraphReader::read_scan(const Value& n, Node& node) {
    const Value& b = typed(member(n, "body"), Value::value_t::object, "body");
    ScanBody body;
    const std::size_t before = nodes_.size();
    for (const Value& p : typed(member(b, "params"), Value::value_t::array, "params")) {
        body.params.push_back(node_ref(p, before));
        if (body.params.back()->kind != NodeKind::Placeholder)
            fail(p, "a scan body's parameter is a placeholder node");
        scan_params_.insert(body.params.back().get());
    }
    for (const Value& o : typed(member(b, "outputs"), Value::value_t::array, "outputs"))
        body.outputs.push_back(node_ref(o, before));
    const auto count = static_cast<std::int64_t>(body.params.size());
    body.carries = static_cast<int>(integer_member(b, "carries", 0, count));
    body.xs = static_cast<int>(integer_member(b, "xs", 0, count - body.carries));
    const Shape steps = shape_member(b); // the scan axis
    if (steps.rank() != 1) fail(b, "a scan body's 'shape' is its scan axis, one range");
    body.steps = steps[0];
    body.reverse = bool_member(b, "reverse");
    if (node.inputs.size() != body.params.size())
        fail(n, "a scan has one input per body parameter (" + std::to_string(body.params.size()) +
                    "), not " + std::to_string(node.inputs.size()));
    if (static_cast<int>(body.outputs.size()) < body.carries)
        fail(b, "a scan body outputs its new carries first");
    auto same = [](const NodePtr& a, const NodePtr& c) {
        return a->dtype == c->dtype && a->shape == c->shape;
    };
    for (std::size_t k = 0; k < body.params.size(); ++k) {
        const NodePtr& p = body.params[k];
        const NodePtr& in = node.inputs[k];
        const bool x =
            static_cast<int>(k) >= body.carries && static_cast<int>(k) < body.carries + body.xs;
        bool ok = in->dtype == p->dtype;
        if (x) {
            std::vector<Range> r{body.steps};
            for (const Range& d : p->shape.ranges())
                r.push_back(d);
            ok = ok && in->shape == Shape(std::move(r));
        } else {
            ok = ok && in->shape == p->shape;
        }
        if (!ok) fail(n, "scan input " + std::to_string(k) + " does not fit its body parameter");
        if (static_cast<int>(k) < body.carries && !same(body.outputs[k], p))
            fail(b, "a scan body changes carry " + std::to_string(k) + "'s shape or dtype");
    }
    body.hash = scan_body_hash(body);
    node.body = std::make_shared<ScanBody>(std::move(body));
}

void GraphReader::check_scan_output(const Value& n, const Node& node) const {
    const NodePtr& scan = node.inputs[0];
    if (scan->kind != NodeKind::Scan) fail(n, "a scan_output reads a scan node");
    if (node.component >= scan->body->components()) fail(n, "no such scan component");
    NodePtr want = scan_output(scan, node.component, SourceLocation::current());
    if (want->dtype != node.dtype || !(want->shape == node.shape))
        fail(n, "scan component " + std::to_string(node.component) + " is " + dname(want->dtype) +
                    " " + want->shape.to_string());
}

NodePtr GraphReader::read_node(const Value& n, std::size_t position) {
    context_ = "node " + std::to_string(position);
    typed(n, Value::value_t::object, "nodes");
    const Value& kind_value = typed(member(n, "kind"), Value::value_t::string, "kind");
    NodeKind kind = NodeKind::Constant;
    if (!parse_node_kind(text(kind_value), kind))
        fail(kind_value, "unknown node kind '" + text(kind_value) + "'");
    context_ += " (" + text(kind_value) + ")";
    DType dtype = dtype_member(n);
    Shape shape = shape_member(n);
    std::vector<NodePtr> inputs;
    if (const Value* in = json::find(n, "inputs")) {
        typed(*in, Value::value_t::array, "inputs");
        for (const Value& i : *in)
            inputs.push_back(node_ref(i, position));
    }
    auto node = new_node(kind, dtype, shape, std::move(inputs), SourceLocation::current());
    bool omitted = false;
    auto identity = [&] {
        const Value* id = json::find(n, "id");
        if (!options_.keep_ids || !id) return fresh_node_id();
        return static_cast<std::uint64_t>(integer(*id, "id", 1, 1LL << 62));
    };
    switch (kind) {
    case NodeKind::Constant:
        check_inputs(n, *node, 0);
        node->expr = expr_ref(n, "expr");
        if (node->expr->op != ScalarOp::Const || node->expr->dtype != dtype || shape.rank() != 0)
            fail(n, "a constant is rank 0 with a constant expression of its dtype");
        break;
    case NodeKind::Placeholder:
        check_inputs(n, *node, 0);
        node->id = identity();
        if (const Value* name = json::find(n, "name"))
            node->name = text(typed(*name, Value::value_t::string, "name"));
        break;
    case NodeKind::Data: {
        check_inputs(n, *node, 0);
        node->id = identity();
        const Value* data = json::find(n, "data");
        if (!data || data->is_null()) {
            node->kind = NodeKind::Placeholder;
            node->name = "data" + std::to_string(position);
            omitted = true;
            break;
        }
        typed(*data, Value::value_t::string, "data");
        std::vector<unsigned char> bytes;
        try {
            bytes = json::base64_decode(text(*data), "'data'");
        } catch (const Error& e) {
            fail(*data, e.what());
        }
        std::size_t need = static_cast<std::size_t>(shape.size()) * dtype_size(dtype);
        if (bytes.size() != need)
            fail(*data, "'data' holds " + std::to_string(bytes.size()) + " bytes but " +
                            dname(dtype) + " " + shape.to_string() + " needs " +
                            std::to_string(need));
        HostArray values(shape.sizes(), dtype);
        if (dtype == DType::Bool &&
            std::any_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b > 1; }))
            fail(*data, "'data' of a bool array holds a byte other than 0 and 1");
        if (!bytes.empty()) std::memcpy(values.raw_mutable(), bytes.data(), bytes.size());
        node->data = std::move(values);
        break;
    }
    case NodeKind::Iota:
        check_inputs(n, *node, 0);
        if (dtype != DType::I64) fail(n, "index components have dtype i64");
        if (shape.rank() == 0) fail(n, "index components need rank 1 or more");
        node->axis = static_cast<int>(integer_member(n, "axis", 0, shape.rank() - 1));
        break;
    case NodeKind::Map:
        node->expr = expr_ref(n, "expr");
        check_map(n, *node);
        break;
    case NodeKind::View:
        check_inputs(n, *node, 1);
        node->access = access_member(n, shape.rank(), node->inputs[0]->shape.rank());
        check_view(n, *node);
        break;
    case NodeKind::Reduce: {
        if (json::find(n, "tuple")) {
            read_tuple_reduce(n, *node);
            break;
        }
        check_inputs(n, *node, 1);
        const Value& op = typed(member(n, "op"), Value::value_t::string, "op");
        if (!parse_reduce_op(text(op), node->reduce_op))
            fail(op, "unknown reduction '" + text(op) + "'");
        const Value& axes = typed(member(n, "axes"), Value::value_t::array, "axes");
        for (const Value& a : axes)
            node->axes.push_back(static_cast<int>(integer(a, "axes", 0, kMaxRank)));
        node->keepdims = bool_member(n, "keepdims");
        if (node->reduce_op == ReduceOp::Custom) {
            node->expr = expr_ref(n, "expr");
            node->identity = expr_ref(n, "identity");
        }
        check_reduce(n, *node);
        break;
    }
    case NodeKind::Fuse:
        node->overwrite = bool_member(n, "overwrite");
        check_fuse(n, *node);
        break;
    case NodeKind::Gather:
        check_inputs(n, *node, 2);
        node->axis = static_cast<int>(integer_member(n, "axis", 0, kMaxRank));
        check_gather(n, *node);
        break;
    case NodeKind::Scatter:
        check_inputs(n, *node, 2);
        node->axis = static_cast<int>(integer_member(n, "axis", 0, kMaxRank));
        check_scatter(n, *node);
        break;
    case NodeKind::Scan:
        read_scan(n, *node);
        break;
    case NodeKind::ScanOutput:
        check_inputs(n, *node, 1);
        node->component = static_cast<int>(integer_member(n, "component", 0, 1 << 20));
        check_scan_output(n, *node);
        break;
    case NodeKind::Collective: // not parsed: a file holds none
        fail(n, "a graph file holds no collectives");
    }
    omitted_data_.push_back(omitted);
    return intern(std::move(node));
}

} // namespace hedra::detail
