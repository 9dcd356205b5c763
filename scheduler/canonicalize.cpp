// canonicalize: drops plain views from the graph (their accesses are composed at each use),
// stops at leaves, and records operands and consumers of the remaining nodes. See the header.
#include "scheduler/canonicalize.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra::sched {

namespace {

bool is_leaf_now(const Node& n) {
    if (n.kind == NodeKind::Placeholder || n.kind == NodeKind::Data) return true;
    return n.kind != NodeKind::Constant && n.memo() != nullptr;
}

struct Frame {
    NodePtr node;
    bool leaf;
    std::size_t next = 0;
};

class Builder {
public:
    explicit Builder(const std::vector<NodePtr>& outputs) {
        for (const NodePtr& n : outputs)
            output_set_.insert(n.get());
    }

    void visit(const NodePtr& root) {
        if (!mark(root)) return;
        std::vector<Frame> stack;
        stack.push_back({root, leaf_.at(root.get())});
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (!f.leaf && f.next < f.node->inputs.size()) {
                const NodePtr& child = f.node->inputs[f.next++];
                if (mark(child)) stack.push_back({child, leaf_.at(child.get())});
                continue;
            }
            NodePtr n = f.node;
            bool leaf = f.leaf;
            stack.pop_back();
            bool output = output_set_.count(n.get()) != 0;
            if (n->kind == NodeKind::View && !leaf && !output) continue;
            graph.index.emplace(n.get(), static_cast<int>(graph.nodes.size()));
            graph.nodes.push_back({n, leaf, output, {}, {}});
        }
    }

    CanonicalGraph graph;

private:
    bool mark(const NodePtr& n) {
        if (leaf_.count(n.get())) return false;
        leaf_.emplace(n.get(), is_leaf_now(*n));
        return true;
    }
    std::unordered_set<const Node*> output_set_;
    std::unordered_map<const Node*, bool> leaf_; // visited, with the leaf status seen then
};

// Math computed through a scalar libm call: worth storing rather than recomputing. f32 exp,
// log, tanh and sigmoid are vector code (core/f32_math.hpp), cheaper to recompute than a pass
// over memory.
bool is_vector_math(const ScalarExpr& x) {
    ScalarOp op = x->op;
    return x->dtype == DType::F32 && (op == ScalarOp::Exp || op == ScalarOp::Log ||
                                      op == ScalarOp::Tanh || op == ScalarOp::Sigmoid);
}

bool is_expensive(const ScalarExpr& x) {
    ScalarOp op = x->op;
    return !is_vector_math(x) &&
           ((scalar_op_info(op).rule == ScalarOpRule::FloatMath && op != ScalarOp::Sqrt) ||
            op == ScalarOp::Pow);
}

// Whether two operands are the same value: one node, or the same input or constant.
bool same_value(const ScalarExpr& a, const ScalarExpr& b) {
    if (a == b) return true;
    if (a->op != b->op || a->dtype != b->dtype) return false;
    if (a->op == ScalarOp::Input) return a->ivalue == b->ivalue;
    return false;
}

ScalarExpr constant_of(const ScalarValue& v) {
    return is_float(v.dtype) ? scalar_const(v.f, v.dtype) : scalar_const_int(v.i, v.dtype);
}

ScalarExpr rebuild(const ScalarExpr& e, const std::vector<ScalarExpr>& args) {
    switch (e->op) {
    case ScalarOp::Cast:
        return scalar_cast(args[0], e->dtype);
    case ScalarOp::Select:
        return scalar_select(args[0], args[1], args[2]);
    default:
        break;
    }
    if (args.size() == 1) return scalar_unary(e->op, args[0]);
    HEDRA_INTERNAL_CHECK(args.size() == 2, "fold_constants: unexpected arity");
    return scalar_binary(e->op, args[0], args[1]);
}

} // namespace

int CanonicalGraph::find(const Node* node) const {
    auto it = index.find(node);
    return it == index.end() ? -1 : it->second;
}

CanonicalGraph::Use CanonicalGraph::resolve(const NodePtr& node, const AffineMap& access) const {
    NodePtr n = node;
    AffineMap a = access;
    while (n->kind == NodeKind::View) {
        int i = find(n.get());
        if (i >= 0 && nodes[i].leaf) break;
        a = n->access.compose(a);
        n = n->inputs.at(0);
    }
    return {n, a};
}

CanonicalGraph canonicalize(const std::vector<NodePtr>& outputs) {
    Builder b(outputs);
    for (const NodePtr& n : outputs) {
        HEDRA_INTERNAL_CHECK(n != nullptr, "canonicalize: null output");
        b.visit(n);
    }
    CanonicalGraph g = std::move(b.graph);
    auto operand_of = [&](const NodePtr& input, const AffineMap& access) {
        int i = g.find(g.resolve(input, access).node.get());
        HEDRA_INTERNAL_CHECK(i >= 0, "canonicalize: operand missing from the graph");
        return i;
    };
    for (std::size_t c = 0; c < g.nodes.size(); ++c) {
        CanonicalNode& cn = g.nodes[c];
        if (cn.leaf) continue;
        const Node& n = *cn.node;
        if (n.kind == NodeKind::View) {
            cn.operands.push_back(operand_of(n.inputs.at(0), n.access));
        } else {
            for (const NodePtr& in : n.inputs)
                cn.operands.push_back(operand_of(in, AffineMap::identity(in->shape.rank())));
        }
        for (int o : cn.operands)
            g.nodes[o].consumers.push_back(static_cast<int>(c));
    }
    for (const NodePtr& n : outputs)
        g.outputs.push_back(g.find(n.get()));
    return g;
}

ScalarExpr fold_constants(const ScalarExpr& e) {
    return rewrite(e, [](const ScalarExpr& x, std::vector<ScalarExpr> args) {
        if (x->op == ScalarOp::Const || x->op == ScalarOp::Input) return x;
        bool changed = false, all_const = true;
        for (std::size_t i = 0; i < args.size(); ++i) {
            changed = changed || args[i] != x->args[i];
            all_const = all_const && args[i]->op == ScalarOp::Const;
        }
        // select(c, v, v) is v (a detached value, ad's stop-gradient, reads as one).
        if (x->op == ScalarOp::Select && same_value(args[1], args[2])) return args[1];
        if (!changed && !all_const) return x;
        ScalarExpr r = changed ? rebuild(x, args) : x;
        return all_const ? constant_of(evaluate(r, {})) : r;
    });
}

bool has_transcendental(const ScalarExpr& e) {
    std::vector<ScalarExpr> order = topological_order(e);
    return std::any_of(order.begin(), order.end(),
                       [](const ScalarExpr& x) { return is_expensive(x); });
}

bool has_vector_math(const ScalarExpr& e) {
    std::vector<ScalarExpr> order = topological_order(e);
    return std::any_of(order.begin(), order.end(),
                       [](const ScalarExpr& x) { return is_vector_math(x); });
}

std::int64_t expression_size(const ScalarExpr& e, const std::vector<std::int64_t>& input_sizes) {
    constexpr std::int64_t kSaturated = std::int64_t{1} << 40;
    std::int64_t total = 0;
    for (const ScalarExpr& x : topological_order(e)) {
        std::int64_t n = 1;
        if (x->op == ScalarOp::Input) {
            auto k = static_cast<std::size_t>(x->ivalue);
            n = k < input_sizes.size() ? input_sizes[k] : 1;
        }
        total = std::min(kSaturated, total + n);
    }
    return total;
}

} // namespace hedra::sched
