// Construction, structural hashing and equality, substitution and printing of scalar
// expressions. Constructors insert explicit casts so that every binary node has operands of one
// dtype; they do no other rewriting (a cast to the operand's own dtype is simply omitted).
// Hashes mix op, dtype, values and the children's hashes only, never pointers, so they are
// identical across runs.
#include "core/scalar_expr.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    // splitmix64 finalizer over (h, v): deterministic and well spread.
    std::uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

ScalarExpr make_node(ScalarOp op, DType dtype, std::vector<ScalarExpr> args,
                     std::int64_t ivalue = 0, double fvalue = 0.0) {
    auto n = std::make_shared<ScalarNode>();
    n->op = op;
    n->dtype = dtype;
    n->ivalue = ivalue;
    n->fvalue = fvalue;
    std::uint64_t h = mix(static_cast<std::uint64_t>(op), static_cast<std::uint64_t>(dtype));
    h = mix(h, static_cast<std::uint64_t>(ivalue));
    h = mix(h, std::bit_cast<std::uint64_t>(fvalue));
    for (auto& a : args)
        h = mix(h, a->hash);
    n->hash = static_cast<std::size_t>(h);
    n->args = std::move(args);
    return n;
}

ScalarOpRule rule(ScalarOp op) {
    return scalar_op_info(op).rule;
}

void check_operand(const ScalarExpr& e, const char* what) {
    if (!e) throw Error(std::string(what) + ": null scalar expression operand");
}

std::string format_const(const ScalarNode& n) {
    if (n.dtype == DType::Bool) return n.ivalue ? "true" : "false";
    if (!is_float(n.dtype)) return std::to_string(n.ivalue);
    char buf[64];
    auto r = n.dtype != DType::F64
                 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(n.fvalue))
                 : std::to_chars(buf, buf + sizeof buf, n.fvalue);
    return std::string(buf, r.ptr);
}

// One node, its operands given by `name` (a shared node's local name, or its own text).
std::string print_node(const ScalarNode& e,
                       const std::function<std::string(const ScalarNode&)>& name) {
    switch (e.op) {
    case ScalarOp::Const:
        return format_const(e) + ":" + std::string(dtype_name(e.dtype));
    case ScalarOp::Input:
        return "in" + std::to_string(e.ivalue) + ":" + std::string(dtype_name(e.dtype));
    default:
        break;
    }
    std::string out = e.op == ScalarOp::Cast ? "cast<" + std::string(dtype_name(e.dtype)) + ">"
                                             : std::string(scalar_op_name(e.op));
    out += "(";
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        out += name(*e.args[i]);
    }
    return out + ")";
}

} // namespace

ScalarNode::~ScalarNode() {
    // Operands whose last owner is this node give up their own operands first, so that they
    // die without recursing. Nothing else can take a new reference to a node no one holds.
    std::vector<ScalarExpr> pending = std::move(args);
    while (!pending.empty()) {
        ScalarExpr e = std::move(pending.back());
        pending.pop_back();
        if (e.use_count() != 1 || e->args.empty()) continue;
        auto& orphan = const_cast<ScalarNode&>(*e);
        for (ScalarExpr& a : orphan.args)
            pending.push_back(std::move(a));
        orphan.args.clear();
    }
}

std::optional<ScalarOp> scalar_op_from_name(std::string_view name) {
    for (ScalarOp op : kAllScalarOps)
        if (name == scalar_op_name(op)) return op;
    return std::nullopt;
}

ScalarExpr scalar_const(double value, DType dtype) {
    ScalarValue v = ScalarValue::of(value, dtype);
    return make_node(ScalarOp::Const, dtype, {}, v.i, v.f);
}

ScalarExpr scalar_const_int(std::int64_t value, DType dtype) {
    switch (dtype) {
    case DType::Bool:
        return make_node(ScalarOp::Const, dtype, {}, value != 0);
    case DType::I32:
        return make_node(ScalarOp::Const, dtype, {}, static_cast<std::int32_t>(value));
    case DType::I64:
        return make_node(ScalarOp::Const, dtype, {}, value);
    case DType::F32:
        return make_node(ScalarOp::Const, dtype, {}, 0, static_cast<float>(value));
    case DType::F64:
        return make_node(ScalarOp::Const, dtype, {}, 0, static_cast<double>(value));
    case DType::BF16:
    case DType::F16: // through f32, as a cast of the integer would
        return make_node(ScalarOp::Const, dtype, {}, 0,
                         ScalarValue::of(static_cast<float>(value), dtype).f);
    }
    internal_error("scalar_const_int: unknown dtype");
}

ScalarExpr scalar_input(int index, DType dtype) {
    if (index < 0)
        throw Error("scalar_input: input number " + std::to_string(index) +
                    " must not be negative");
    return make_node(ScalarOp::Input, dtype, {}, index);
}

ScalarExpr scalar_unary(ScalarOp op, ScalarExpr x) {
    check_operand(x, scalar_op_name(op));
    if (op == ScalarOp::Cast)
        throw Error("scalar_unary: 'cast' needs a target dtype; use scalar_cast");
    if (scalar_op_info(op).arity != 1)
        throw Error("scalar_unary: '" + std::string(scalar_op_name(op)) +
                    "' is not a unary operation");
    if (rule(op) == ScalarOpRule::Logical && x->dtype != DType::Bool)
        throw Error("'" + std::string(scalar_op_name(op)) + "' needs a bool operand, got " +
                    std::string(dtype_name(x->dtype)) + "; compare with zero first");
    if (op == ScalarOp::Neg && x->dtype == DType::Bool)
        throw Error("'neg' of a bool operand; use 'not', or cast to an integer first");
    if (rule(op) == ScalarOpRule::FloatMath && !is_float(x->dtype)) x = scalar_cast(x, DType::F32);
    DType t = x->dtype;
    return make_node(op, t, {std::move(x)});
}

ScalarExpr scalar_cast(ScalarExpr x, DType to) {
    check_operand(x, "cast");
    if (x->dtype == to) return x;
    return make_node(ScalarOp::Cast, to, {std::move(x)});
}

ScalarExpr scalar_binary(ScalarOp op, ScalarExpr a, ScalarExpr b) {
    check_operand(a, scalar_op_name(op));
    check_operand(b, scalar_op_name(op));
    if (scalar_op_info(op).arity != 2)
        throw Error("scalar_binary: '" + std::string(scalar_op_name(op)) +
                    "' is not a binary operation");
    const ScalarOpRule r = rule(op);
    DType t = r == ScalarOpRule::Logical ? DType::Bool : promote(a->dtype, b->dtype);
    const bool shift = r == ScalarOpRule::Shift;
    if ((r == ScalarOpRule::Bitwise || shift) && (is_float(t) || (t == DType::Bool && shift)))
        throw Error("'" + std::string(scalar_op_name(op)) + "' needs integer operands" +
                    (shift ? "" : " (or bools)") + ", got " + std::string(dtype_name(a->dtype)) +
                    " and " + std::string(dtype_name(b->dtype)) + "; cast to i32 or i64 first");
    DType result = r == ScalarOpRule::Compare ? DType::Bool : t;
    return make_node(op, result, {scalar_cast(std::move(a), t), scalar_cast(std::move(b), t)});
}

ScalarExpr scalar_select(ScalarExpr cond, ScalarExpr then_value, ScalarExpr else_value) {
    check_operand(cond, "select");
    check_operand(then_value, "select");
    check_operand(else_value, "select");
    DType t = promote(then_value->dtype, else_value->dtype);
    return make_node(ScalarOp::Select, t,
                     {scalar_cast(std::move(cond), DType::Bool),
                      scalar_cast(std::move(then_value), t),
                      scalar_cast(std::move(else_value), t)});
}

bool structurally_equal(const ScalarExpr& a, const ScalarExpr& b) {
    // Pairs already proven equal, so that shared sub-DAGs are compared once.
    std::unordered_map<const ScalarNode*, const ScalarNode*> proven;
    std::function<bool(const ScalarNode*, const ScalarNode*)> eq = [&](const ScalarNode* x,
                                                                       const ScalarNode* y) {
        if (x == y) return true;
        if (!x || !y) return false;
        if (auto it = proven.find(x); it != proven.end() && it->second == y) return true;
        if (x->hash != y->hash || x->op != y->op || x->dtype != y->dtype ||
            x->ivalue != y->ivalue ||
            std::bit_cast<std::uint64_t>(x->fvalue) != std::bit_cast<std::uint64_t>(y->fvalue) ||
            x->args.size() != y->args.size())
            return false;
        for (std::size_t i = 0; i < x->args.size(); ++i)
            if (!eq(x->args[i].get(), y->args[i].get())) return false;
        proven[x] = y;
        return true;
    };
    return eq(a.get(), b.get());
}

int scalar_num_inputs(const ScalarExpr& e) {
    int n = 0;
    for (const ScalarExpr& x : topological_order(e))
        if (x->op == ScalarOp::Input) n = std::max(n, static_cast<int>(x->ivalue) + 1);
    return n;
}

ScalarExpr substitute_inputs(const ScalarExpr& e, const std::vector<ScalarExpr>& replacements) {
    check_operand(e, "substitute_inputs");
    return rewrite(e, [&](const ScalarExpr& x, std::vector<ScalarExpr> args) {
        if (x->op != ScalarOp::Input) return with_args(x, std::move(args));
        auto k = static_cast<std::size_t>(x->ivalue);
        if (k >= replacements.size() || !replacements[k])
            throw Error("substitute_inputs: no replacement for input " + std::to_string(k) + " (" +
                        std::to_string(replacements.size()) + " given)");
        // A replacement of another dtype is cast, so the expression's dtypes are unchanged.
        return scalar_cast(replacements[k], x->dtype);
    });
}

ScalarExpr with_args(const ScalarExpr& like, std::vector<ScalarExpr> args) {
    HEDRA_INTERNAL_CHECK(like && args.size() == like->args.size(), "with_args: operand count");
    bool same = true;
    for (std::size_t i = 0; i < args.size(); ++i) {
        HEDRA_INTERNAL_CHECK(args[i] && args[i]->dtype == like->args[i]->dtype,
                             "with_args: an operand of another dtype");
        same = same && args[i] == like->args[i];
    }
    if (same) return like;
    return make_node(like->op, like->dtype, std::move(args), like->ivalue, like->fvalue);
}

std::string to_string(const ScalarExpr& e) {
    if (!e) return "<null>";
    // A node used more than once (and not a leaf) is printed once, as "%k = ...; ", before the
    // root; an expression without sharing prints as a plain term.
    std::vector<ScalarExpr> order = topological_order(e);
    std::vector<int> uses = use_counts(order, {e});
    std::unordered_map<const ScalarNode*, std::pair<std::string, bool>> text; // text, shared
    std::string lets;
    int next = 0;
    auto name = [&](const ScalarNode& n) {
        auto& [t, shared] = text.at(&n);
        return shared ? t : std::move(t); // an unshared operand's text is used once
    };
    for (std::size_t i = 0; i < order.size(); ++i) {
        const ScalarNode& n = *order[i];
        std::string t = print_node(n, name);
        if (uses[i] > 1 && !n.args.empty() && order[i] != e) {
            std::string local = "%" + std::to_string(next++);
            lets += local + " = " + t + "; ";
            t = local;
        }
        text.emplace(&n, std::make_pair(std::move(t), uses[i] > 1));
    }
    return lets + text.at(e.get()).first;
}

} // namespace hedra
