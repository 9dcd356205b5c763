// Tracing arithmetic on Syms: the weak-literal promotion rule of sym.hpp, then the scalar IR
// constructors (which insert the casts). A weak literal converted to another dtype becomes a
// constant of that dtype (from its exact value), not a cast node.
#include "core/sym.hpp"

namespace hedra {
namespace {

int kind(DType t) {
    return t == DType::Bool ? 0 : is_integer(t) ? 1 : 2;
}

bool is_comparison(ScalarOp op) {
    return scalar_op_info(op).rule == ScalarOpRule::Compare;
}

DType common_dtype(const Sym& a, const Sym& b) {
    if (a.weak() == b.weak()) return promote(a.dtype(), b.dtype());
    const Sym& strong = a.weak() ? b : a;
    const Sym& weak = a.weak() ? a : b;
    if (kind(weak.dtype()) <= kind(strong.dtype())) return strong.dtype();
    return is_float(weak.dtype()) ? DType::F32 : DType::I64;
}

ScalarExpr convert(const Sym& x, DType t) {
    const ScalarExpr& e = x.expr();
    if (e->dtype == t) return e;
    if (x.weak() && e->op == ScalarOp::Const) {
        if (x.literal_value()) return scalar_const(*x.literal_value(), t);
        return is_float(e->dtype) ? scalar_const(e->fvalue, t) : scalar_const_int(e->ivalue, t);
    }
    return scalar_cast(e, t);
}

} // namespace

Sym sym_binary(ScalarOp op, const Sym& a, const Sym& b) {
    bool both_weak = a.weak() && b.weak();
    if (op == ScalarOp::And || op == ScalarOp::Or)
        return Sym(scalar_binary(op, convert(a, DType::Bool), convert(b, DType::Bool)), both_weak);
    DType t = common_dtype(a, b);
    return Sym(scalar_binary(op, convert(a, t), convert(b, t)), both_weak && !is_comparison(op));
}

Sym sym_unary(ScalarOp op, const Sym& a) {
    if (op == ScalarOp::Not) return Sym(scalar_unary(op, convert(a, DType::Bool)), a.weak());
    return Sym(scalar_unary(op, a.expr()), a.weak());
}

Sym cast(const Sym& a, DType to) {
    return Sym(convert(a, to), false);
}

Sym select(const Sym& cond, const Sym& then_value, const Sym& else_value) {
    DType t = common_dtype(then_value, else_value);
    return Sym(
        scalar_select(convert(cond, DType::Bool), convert(then_value, t), convert(else_value, t)),
        then_value.weak() && else_value.weak());
}

} // namespace hedra
