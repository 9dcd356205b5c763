// Sym: the symbolic scalar a `lazy` callable is traced on. Arithmetic, comparisons and the
// math functions below build a ScalarExpr. C++ literals are "weak", as Python scalars are in
// PyTorch: with a strong operand they take its dtype (`x * 2.0` keeps x's f32), unless the
// literal is of a higher kind (bool < integer < float): a float literal with an integer or bool
// operand gives f32, an integer literal with a bool operand gives i64. Two weak operands give a
// weak result of the promoted dtype. Comparisons give a strong bool; and/or/not convert their
// operands to bool (x != 0).
#pragma once

#include <concepts>
#include <optional>
#include <tuple>
#include <type_traits>

#include "core/scalar_expr.hpp"

namespace hedra {

class Sym {
public:
    explicit Sym(ScalarExpr e, bool weak = false) : expr_(std::move(e)), weak_(weak) {}
    template <class T>
        requires std::is_arithmetic_v<T>
    Sym(T literal) : Sym(from_literal(literal)) {}

    const ScalarExpr& expr() const { return expr_; }
    bool weak() const { return weak_; }
    DType dtype() const { return expr_->dtype; }
    // A float literal's exact value (its f32 constant is rounded), so that `x * 0.1` with an
    // f64 x uses the double 0.1; empty for everything else.
    const std::optional<double>& literal_value() const { return literal_; }

private:
    template <class T>
    static Sym from_literal(T v) {
        if constexpr (std::is_same_v<T, bool>) return Sym(scalar_const_int(v, DType::Bool), true);
        else if constexpr (std::is_integral_v<T>)
            return Sym(scalar_const_int(static_cast<std::int64_t>(v), DType::I64), true);
        else {
            Sym s(scalar_const(static_cast<double>(v), DType::F32), true);
            s.literal_ = static_cast<double>(v);
            return s;
        }
    }
    ScalarExpr expr_;
    bool weak_;
    std::optional<double> literal_;
};

// Binary operations with the weak-literal rule.
Sym sym_binary(ScalarOp op, const Sym& a, const Sym& b);
Sym sym_unary(ScalarOp op, const Sym& a);

template <class T>
concept SymOperand = std::same_as<std::remove_cvref_t<T>, Sym> || std::is_arithmetic_v<std::remove_cvref_t<T>>;
template <class A, class B>
concept SymPair = SymOperand<A> && SymOperand<B> &&
                  (std::same_as<std::remove_cvref_t<A>, Sym> || std::same_as<std::remove_cvref_t<B>, Sym>);

#define HEDRA_SYM_BINARY(fn, op)                                                                  \
    template <class A, class B>                                                                   \
        requires SymPair<A, B>                                                                    \
    Sym fn(const A& a, const B& b) {                                                              \
        return sym_binary(ScalarOp::op, Sym(a), Sym(b));                                          \
    }
HEDRA_SYM_BINARY(operator+, Add)
HEDRA_SYM_BINARY(operator-, Sub)
HEDRA_SYM_BINARY(operator*, Mul)
HEDRA_SYM_BINARY(operator/, Div)
HEDRA_SYM_BINARY(operator%, Mod)
HEDRA_SYM_BINARY(operator&, BitAnd)
HEDRA_SYM_BINARY(operator|, BitOr)
HEDRA_SYM_BINARY(operator^, BitXor)
HEDRA_SYM_BINARY(operator<<, Shl)
HEDRA_SYM_BINARY(operator>>, Shr)
HEDRA_SYM_BINARY(operator<, Lt)
HEDRA_SYM_BINARY(operator<=, Le)
HEDRA_SYM_BINARY(operator>, Gt)
HEDRA_SYM_BINARY(operator>=, Ge)
HEDRA_SYM_BINARY(operator==, Eq)
HEDRA_SYM_BINARY(operator!=, Ne)
HEDRA_SYM_BINARY(operator&&, And)
HEDRA_SYM_BINARY(operator||, Or)
HEDRA_SYM_BINARY(min, Min)
HEDRA_SYM_BINARY(max, Max)
HEDRA_SYM_BINARY(pow, Pow)
#undef HEDRA_SYM_BINARY

inline Sym operator-(const Sym& a) { return sym_unary(ScalarOp::Neg, a); }
inline Sym operator!(const Sym& a) { return sym_unary(ScalarOp::Not, a); }
inline Sym abs(const Sym& a) { return sym_unary(ScalarOp::Abs, a); }
inline Sym exp(const Sym& a) { return sym_unary(ScalarOp::Exp, a); }
inline Sym log(const Sym& a) { return sym_unary(ScalarOp::Log, a); }
inline Sym sqrt(const Sym& a) { return sym_unary(ScalarOp::Sqrt, a); }
inline Sym tanh(const Sym& a) { return sym_unary(ScalarOp::Tanh, a); }
inline Sym sigmoid(const Sym& a) { return sym_unary(ScalarOp::Sigmoid, a); }
inline Sym sin(const Sym& a) { return sym_unary(ScalarOp::Sin, a); }
inline Sym cos(const Sym& a) { return sym_unary(ScalarOp::Cos, a); }
inline Sym erf(const Sym& a) { return sym_unary(ScalarOp::Erf, a); }
inline Sym log1p(const Sym& a) { return sym_unary(ScalarOp::Log1p, a); }
inline Sym expm1(const Sym& a) { return sym_unary(ScalarOp::Expm1, a); }
inline Sym floor(const Sym& a) { return sym_unary(ScalarOp::Floor, a); }
inline Sym ceil(const Sym& a) { return sym_unary(ScalarOp::Ceil, a); }
inline Sym round(const Sym& a) { return sym_unary(ScalarOp::Round, a); } // half to even
Sym cast(const Sym& a, DType to);
// select(c, a, b): a where c is true, else b; c is converted to bool.
Sym select(const Sym& cond, const Sym& then_value, const Sym& else_value);

namespace detail {

// Trace a callable on Syms; the result is one Sym, a literal, or a tuple/pair of them.
template <class R>
std::vector<ScalarExpr> trace_results(const R& r) {
    if constexpr (requires { std::tuple_size<R>::value; }) {
        std::vector<ScalarExpr> out;
        std::apply([&](const auto&... x) { (out.push_back(Sym(x).expr()), ...); }, r);
        return out;
    } else {
        return {Sym(r).expr()};
    }
}

} // namespace detail
} // namespace hedra
