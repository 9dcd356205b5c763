// Canonical serialization of a lazy graph up to leaf values (see graph_key.hpp).
#include "backends/common/graph_key.hpp"

#include <cstring>
#include <unordered_map>

#include "core/scalar_dag.hpp"
namespace hedra::backend {
namespace {

void put(std::string& s, std::int64_t v) {
    s += std::to_string(v);
    s += ',';
}

// The expression's distinct nodes in topological order, each "(op,dtype,ivalue,bits,#arg,...)"
// with its operands named by their position in that order: linear in the DAG's size.
void put_expr(std::string& s, const ScalarExpr& e) {
    if (!e) {
        s += "~";
        return;
    }
    std::unordered_map<const ScalarNode*, std::int64_t> number;
    s += '{';
    for (const ScalarExpr& x : topological_order(e)) {
        s += '(';
        put(s, static_cast<int>(x->op));
        put(s, static_cast<int>(x->dtype));
        put(s, x->ivalue);
        std::int64_t bits = 0;
        std::memcpy(&bits, &x->fvalue, sizeof bits);
        put(s, bits);
        for (const ScalarExpr& a : x->args) {
            s += '#';
            put(s, number.at(a.get()));
        }
        s += ')';
        number.emplace(x.get(), static_cast<std::int64_t>(number.size()));
    }
    s += '}';
}

void put_shape(std::string& s, const Shape& shape) {
    s += '[';
    for (const Range& r : shape.ranges()) {
        put(s, r.start);
        put(s, r.step);
        put(s, r.size);
        if (r.is_dynamic()) s += "d" + param_name(r.param) + ";"; // by name: stable across runs
    }
    s += ']';
}

void put_map(std::string& s, const AffineMap& m) {
    put(s, m.in_rank());
    put(s, m.out_rank());
    for (std::int64_t c : m.matrix())
        put(s, c);
    for (std::int64_t c : m.offsets())
        put(s, c);
}

bool is_leaf(const Node& n) {
    return n.kind == NodeKind::Data || n.kind == NodeKind::Placeholder ||
           (n.memo() && n.kind != NodeKind::Constant);
}

struct Walker {
    const std::vector<NodePtr>& placeholders;
    GraphKey key;
    std::unordered_map<const Node*, int> index;
    int next = 0;

    // A scan's step: its own graph, its placeholders keyed by their position among its params.
    static void put_body(std::string& s, const ScanBody& b) {
        Walker inner{b.params, {}, {}, 0};
        std::vector<int> out;
        for (const NodePtr& o : b.outputs)
            out.push_back(inner.visit(o));
        s += "scan(" + inner.key.text;
        for (int o : out)
            put(s, o);
        put(s, b.carries);
        put(s, b.xs);
        put_shape(s, Shape{b.steps});
        put(s, b.reverse);
        s += ')';
    }

    int visit(const NodePtr& n) {
        if (auto it = index.find(n.get()); it != index.end()) return it->second;
        std::vector<int> inputs;
        bool leaf = is_leaf(*n);
        if (!leaf)
            for (const NodePtr& in : n->inputs)
                inputs.push_back(visit(in));
        std::string& s = key.text;
        s += '{';
        put(s, static_cast<int>(n->dtype));
        put_shape(s, n->shape);
        if (leaf) {
            int position = -1;
            for (std::size_t p = 0; p < placeholders.size(); ++p)
                if (placeholders[p] == n) position = static_cast<int>(p);
            s += n->kind == NodeKind::Placeholder ? "P" : "L";
            put(s, position);
            key.leaves.push_back(n);
        } else {
            put(s, static_cast<int>(n->kind));
            for (int i : inputs)
                put(s, i);
            s += '|';
            put_expr(s, n->expr);
            put_expr(s, n->identity);
            put(s, n->component);
            for (std::size_t t = 0; t < n->tuple_exprs.size(); ++t) {
                put_expr(s, n->tuple_exprs[t]);
                put_expr(s, n->tuple_identities[t]);
            }
            if (n->kind == NodeKind::View) put_map(s, n->access);
            put(s, n->axis);
            for (int a : n->axes)
                put(s, a);
            s += '|';
            put(s, n->keepdims);
            put(s, static_cast<int>(n->reduce_op));
            put(s, n->overwrite);
            if (n->body) put_body(s, *n->body);
        }
        s += '}';
        int id = next++;
        index.emplace(n.get(), id);
        return id;
    }
};

} // namespace

GraphKey graph_key(const std::vector<NodePtr>& outputs, const std::vector<NodePtr>& placeholders) {
    Walker w{placeholders, {}, {}, 0};
    w.key.text = "outputs:";
    std::vector<int> out;
    for (const NodePtr& o : outputs)
        out.push_back(w.visit(o));
    for (int o : out)
        put(w.key.text, o);
    return std::move(w.key);
}

} // namespace hedra::backend
