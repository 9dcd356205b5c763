// Reverse mode over the scalar expression DAG: visit nodes from the root down in reverse
// topological order, accumulating cotangent expressions per node (nullptr = zero), with a few
// algebraic simplifications (x*1, x+0, -(-x)) so that the emitted maps stay small.
#include "ad/scalar_derivative.hpp"

#include <unordered_map>

#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra::ad {
namespace {

bool is_const(const ScalarExpr& e, double v) {
    if (e->op != ScalarOp::Const) return false;
    return is_float(e->dtype) ? e->fvalue == v : static_cast<double>(e->ivalue) == v;
}

ScalarExpr constant_like(double v, const ScalarExpr& like) {
    return scalar_const(v, like->dtype);
}

ScalarExpr add(const ScalarExpr& a, const ScalarExpr& b) {
    if (!a) return b;
    if (!b) return a;
    return scalar_binary(ScalarOp::Add, a, b);
}

ScalarExpr neg(const ScalarExpr& a) {
    if (a->op == ScalarOp::Neg) return a->args[0];
    return scalar_unary(ScalarOp::Neg, a);
}

ScalarExpr mul(const ScalarExpr& a, const ScalarExpr& b) {
    if (is_const(a, 1.0)) return b;
    if (is_const(b, 1.0)) return a;
    if (is_const(a, -1.0)) return neg(b);
    if (is_const(b, -1.0)) return neg(a);
    return scalar_binary(ScalarOp::Mul, a, b);
}

ScalarExpr sub(const ScalarExpr& a, const ScalarExpr& b) {
    return scalar_binary(ScalarOp::Sub, a, b);
}

ScalarExpr div(const ScalarExpr& a, const ScalarExpr& b) {
    if (is_const(b, 1.0)) return a;
    return scalar_binary(ScalarOp::Div, a, b);
}

ScalarExpr cmp(ScalarOp op, const ScalarExpr& a, const ScalarExpr& b) {
    return scalar_binary(op, a, b);
}

// select(c, g, 0) and select(c, 0, g).
ScalarExpr where_true(const ScalarExpr& c, const ScalarExpr& g) {
    return scalar_select(c, g, constant_like(0.0, g));
}
ScalarExpr where_false(const ScalarExpr& c, const ScalarExpr& g) {
    return scalar_select(c, constant_like(0.0, g), g);
}

// Cotangent of `a` in max(a, b) (flip the comparisons for min): g where a wins, g/2 at ties.
ScalarExpr extremum_share(ScalarOp wins, const ScalarExpr& a, const ScalarExpr& b,
                          const ScalarExpr& g) {
    ScalarOp loses = wins == ScalarOp::Gt ? ScalarOp::Lt : ScalarOp::Gt;
    return scalar_select(
        cmp(wins, a, b), g,
        scalar_select(cmp(loses, a, b), constant_like(0.0, g), mul(g, constant_like(0.5, g))));
}

// The cotangent contributions of node `e` (with cotangent g) to each of its arguments.
std::vector<ScalarExpr> local_vjp(const ScalarExpr& e, const ScalarExpr& g) {
    const auto& x = e->args;
    std::vector<ScalarExpr> out(x.size());
    switch (e->op) {
    case ScalarOp::Const:
    case ScalarOp::Input:
    case ScalarOp::Not:
    case ScalarOp::Lt:
    case ScalarOp::Le:
    case ScalarOp::Gt:
    case ScalarOp::Ge:
    case ScalarOp::Eq:
    case ScalarOp::Ne:
    case ScalarOp::And:
    case ScalarOp::Or:
    case ScalarOp::Floor: // piecewise constant
    case ScalarOp::Ceil:
    case ScalarOp::Round:
    case ScalarOp::BitAnd: // integers only
    case ScalarOp::BitOr:
    case ScalarOp::BitXor:
    case ScalarOp::Shl:
    case ScalarOp::Shr:
        break;
    case ScalarOp::Neg:
        out[0] = neg(g);
        break;
    case ScalarOp::Abs: {
        ScalarExpr zero = constant_like(0.0, x[0]);
        out[0] = scalar_select(
            cmp(ScalarOp::Gt, x[0], zero), g,
            scalar_select(cmp(ScalarOp::Lt, x[0], zero), neg(g), constant_like(0.0, g)));
        break;
    }
    case ScalarOp::Exp:
        out[0] = mul(g, e);
        break;
    case ScalarOp::Log:
        out[0] = div(g, x[0]);
        break;
    case ScalarOp::Sqrt:
        out[0] = div(g, mul(constant_like(2.0, e), e));
        break;
    case ScalarOp::Tanh:
        out[0] = mul(g, sub(constant_like(1.0, e), mul(e, e)));
        break;
    case ScalarOp::Sigmoid:
        out[0] = mul(g, mul(e, sub(constant_like(1.0, e), e)));
        break;
    case ScalarOp::Sin:
        out[0] = mul(g, scalar_unary(ScalarOp::Cos, x[0]));
        break;
    case ScalarOp::Cos:
        out[0] = neg(mul(g, scalar_unary(ScalarOp::Sin, x[0])));
        break;
    case ScalarOp::Erf: // 2/sqrt(pi) exp(-x^2)
        out[0] = mul(g, mul(constant_like(1.1283791670955126, e),
                            scalar_unary(ScalarOp::Exp, neg(mul(x[0], x[0])))));
        break;
    case ScalarOp::Log1p:
        out[0] = div(g, scalar_binary(ScalarOp::Add, constant_like(1.0, x[0]), x[0]));
        break;
    case ScalarOp::Expm1:
        out[0] = mul(g, scalar_binary(ScalarOp::Add, e, constant_like(1.0, e)));
        break;
    case ScalarOp::Mod: // a - trunc(a / b) * b
        out[0] = g;
        if (is_float(e->dtype)) {
            ScalarExpr q =
                scalar_binary(ScalarOp::Div, scalar_binary(ScalarOp::Sub, x[0], e), x[1]);
            out[1] = neg(mul(g, q));
        }
        break;
    case ScalarOp::Cast:
        if (is_float(x[0]->dtype)) out[0] = scalar_cast(g, x[0]->dtype);
        break;
    case ScalarOp::Add:
        out[0] = g;
        out[1] = g;
        break;
    case ScalarOp::Sub:
        out[0] = g;
        out[1] = neg(g);
        break;
    case ScalarOp::Mul:
        out[0] = mul(g, x[1]);
        out[1] = mul(g, x[0]);
        break;
    case ScalarOp::Div:
        out[0] = div(g, x[1]);
        out[1] = neg(div(mul(g, e), x[1]));
        break;
    case ScalarOp::Pow: {
        const ScalarExpr& a = x[0];
        const ScalarExpr& b = x[1];
        ScalarExpr b_minus_1 = b->op == ScalarOp::Const ? scalar_const(b->fvalue - 1.0, b->dtype)
                                                        : sub(b, constant_like(1.0, b));
        out[0] = mul(g, mul(b, scalar_binary(ScalarOp::Pow, a, b_minus_1)));
        if (b->op != ScalarOp::Const) {
            ScalarExpr zero = constant_like(0.0, a);
            out[1] = mul(g, scalar_select(cmp(ScalarOp::Eq, a, zero), constant_like(0.0, e),
                                          mul(e, scalar_unary(ScalarOp::Log, a))));
        }
        break;
    }
    case ScalarOp::Max:
        out[0] = extremum_share(ScalarOp::Gt, x[0], x[1], g);
        out[1] = extremum_share(ScalarOp::Gt, x[1], x[0], g);
        break;
    case ScalarOp::Min:
        out[0] = extremum_share(ScalarOp::Lt, x[0], x[1], g);
        out[1] = extremum_share(ScalarOp::Lt, x[1], x[0], g);
        break;
    case ScalarOp::Select:
        out[1] = where_true(x[0], g);
        out[2] = where_false(x[0], g);
        break;
    }
    return out;
}

// Nodes reachable from `root`, each after all of its users.
std::vector<ScalarExpr> users_first(const ScalarExpr& root) {
    std::vector<ScalarExpr> order = topological_order(root);
    return {order.rbegin(), order.rend()};
}

} // namespace

std::vector<ScalarExpr> scalar_vjp(const ScalarExpr& expr, const ScalarExpr& cotangent,
                                   int num_inputs) {
    HEDRA_INTERNAL_CHECK(expr && cotangent, "scalar_vjp of a null expression");
    HEDRA_INTERNAL_CHECK(cotangent->dtype == expr->dtype, "scalar_vjp: cotangent dtype");
    std::vector<ScalarExpr> result(static_cast<std::size_t>(num_inputs));
    if (!is_float(expr->dtype)) return result;
    std::unordered_map<const ScalarNode*, ScalarExpr> bar;
    bar[expr.get()] = cotangent;
    for (const ScalarExpr& e : users_first(expr)) {
        auto it = bar.find(e.get());
        if (it == bar.end() || !it->second || !is_float(e->dtype)) continue;
        const ScalarExpr g = it->second;
        if (e->op == ScalarOp::Input) {
            auto k = static_cast<std::size_t>(e->ivalue);
            HEDRA_INTERNAL_CHECK(k < result.size(), "scalar_vjp: input number out of range");
            result[k] = add(result[k], g);
            continue;
        }
        std::vector<ScalarExpr> contributions = local_vjp(e, g);
        for (std::size_t i = 0; i < contributions.size(); ++i) {
            if (!contributions[i] || !is_float(e->args[i]->dtype)) continue;
            ScalarExpr& slot = bar[e->args[i].get()];
            slot = add(slot, contributions[i]);
        }
    }
    return result;
}

} // namespace hedra::ad
