// The reference semantics of scalar expressions, used by the reference interpreter, constant
// folding and tests. Per dtype:
// - f32 results are rounded to float after every operation (computed in double first, which
//   for + - * / sqrt gives exactly the float result); f64 is IEEE double. bf16 and f16 results
//   are the f32 result rounded to the half format (to nearest even; core/f32_math.hpp), so an
//   operation on them is computed in f32, as the kernels do.
// - i32/i64 arithmetic wraps like two's complement; x/0 == 0; division truncates toward zero;
//   x % y has the sign of x and x % 0 == x (so x == (x/y)*y + x%y); pow(x, n) is repeated
//   multiplication for n >= 0 and 0 for n < 0; shl/shr by a count outside [0, bits) give 0
//   (shr of a negative value: -1), shr is arithmetic.
// - float x % y is fmod (exact); round is half to even; sin, cos, erf, log1p, expm1 of f32
//   are computed in double and rounded once, as exp, log and tanh are.
// - bool arithmetic is computed on 0/1 as integers and converted back with x != 0.
// - min/max of floats return NaN when either operand is NaN (as torch.minimum/maximum).
// - casts convert as C++ casts do; to bool is x != 0; a float that is NaN or whose truncation
//   does not fit the integer type converts to 0 (C++ leaves that undefined).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"
#include "core/scalar_dag.hpp"
#include "core/scalar_expr.hpp"

namespace hedra {
namespace f32math {
#include "core/f32_math.hpp" // NOLINT: definitions shared with the generated code
} // namespace f32math
namespace {

ScalarValue int_value(std::int64_t v, DType t) {
    ScalarValue r;
    r.dtype = t;
    switch (t) {
    case DType::Bool:
        r.i = v != 0;
        break;
    case DType::I32:
        r.i = static_cast<std::int32_t>(v);
        break; // modular since C++20
    case DType::I64:
        r.i = v;
        break;
    case DType::F32:
        r.f = static_cast<float>(v);
        break;
    case DType::F64:
        r.f = static_cast<double>(v);
        break;
    case DType::BF16:
    case DType::F16:
        r.f = ScalarValue::of(static_cast<double>(static_cast<float>(v)), t).f;
        break;
    }
    return r;
}

ScalarValue float_value(double v, DType t) {
    return ScalarValue::of(v, t);
}

// f32 math as the kernels compute it (core/f32_math.hpp); f64 through libm.
ScalarValue f32_or_f64(float (*f32)(float), double (*f64)(double), double v, DType t) {
    if (compute_dtype(t) == DType::F32) return float_value(f32(static_cast<float>(v)), t);
    return float_value(f64(v), t);
}
double sigmoid_f64(double v) {
    return 1.0 / (1.0 + std::exp(-v));
}
double exp_f64(double v) {
    return std::exp(v);
}
double log_f64(double v) {
    return std::log(v);
}
double tanh_f64(double v) {
    return std::tanh(v);
}

ScalarValue bool_value(bool b) {
    return int_value(b ? 1 : 0, DType::Bool);
}

std::uint64_t u(std::int64_t v) {
    return static_cast<std::uint64_t>(v);
}
std::int64_t s(std::uint64_t v) {
    return static_cast<std::int64_t>(v);
} // modular

std::int64_t int_pow(std::int64_t base, std::int64_t exponent) {
    if (exponent < 0) return 0;
    std::uint64_t result = 1, b = u(base);
    for (auto e = static_cast<std::uint64_t>(exponent); e; e >>= 1, b *= b)
        if (e & 1) result *= b;
    return s(result);
}

std::int64_t int_div(std::int64_t a, std::int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return s(0 - u(a)); // avoids the INT64_MIN / -1 overflow
    return a / b;
}

// a == int_div(a, b) * b + int_mod(a, b): the dividend's sign, and x % 0 == x.
std::int64_t int_mod(std::int64_t a, std::int64_t b) {
    if (b == 0) return a;
    if (b == -1) return 0;
    return a % b;
}

// Shifts of a `bits`-wide integer; counts outside [0, bits) shift every bit out.
std::int64_t shift_left(std::int64_t a, std::int64_t b, int bits) {
    return b < 0 || b >= bits ? 0 : s(u(a) << b);
}
std::int64_t shift_right(std::int64_t a, std::int64_t b, int bits) {
    return b < 0 || b >= bits ? (a < 0 ? -1 : 0) : a >> b; // arithmetic since C++20
}

double float_min(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
    return std::min(a, b);
}
double float_max(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
    return std::max(a, b);
}

// An operation applied to a dtype its constructor never gives it.
[[noreturn]] void unexpected(ScalarOp op, DType t) {
    internal_error(std::string("evaluate: '") + scalar_op_name(op) + "' of " +
                   std::string(dtype_name(t)));
}

// The result of an operation defined on floats only, `v` computed in double.
ScalarValue float_result(ScalarOp op, double v, DType t) {
    if (!is_float(t)) unexpected(op, t);
    return float_value(v, t);
}
// The result of exp, log, tanh or sigmoid: f32 as the kernels compute it, f64 through libm.
ScalarValue float_math(ScalarOp op, float (*f32)(float), double (*f64)(double), double v, DType t) {
    if (!is_float(t)) unexpected(op, t);
    return f32_or_f64(f32, f64, v, t);
}
// The result of an operation defined on integers and bools only.
ScalarValue int_result(ScalarOp op, std::int64_t v, DType t) {
    if (is_float(t)) unexpected(op, t);
    return int_value(v, t);
}

template <class Compare>
ScalarValue compare(const ScalarValue& a, const ScalarValue& b, Compare cmp) {
    return bool_value(is_float(a.dtype) ? cmp(a.f, b.f) : cmp(a.i, b.i));
}

ScalarValue cast_value(const ScalarValue& x, DType to) {
    if (is_float(x.dtype)) return ScalarValue::of(x.f, to);
    return int_value(x.i, to); // int -> float converts directly (one rounding)
}

// One node's value from its operands' values `a`. Every operation has its case (no default), so
// that a new one is a compiler warning here until its semantics are written.
ScalarValue apply(const ScalarNode& n, const ScalarValue* a,
                  const std::vector<ScalarValue>& inputs) {
    const ScalarOp op = n.op;
    const DType t = n.dtype;
    const bool fl = is_float(t);
    switch (op) {
    case ScalarOp::Const: {
        ScalarValue r;
        r.dtype = n.dtype;
        r.i = n.ivalue;
        r.f = n.fvalue;
        return r;
    }
    case ScalarOp::Input: {
        auto k = static_cast<std::size_t>(n.ivalue);
        if (k >= inputs.size())
            throw Error("evaluate: the expression reads input " + std::to_string(k) + " but " +
                        std::to_string(inputs.size()) + " inputs were given");
        if (inputs[k].dtype != n.dtype)
            throw Error("evaluate: input " + std::to_string(k) + " has dtype " +
                        std::string(dtype_name(inputs[k].dtype)) + " but the expression reads " +
                        std::string(dtype_name(n.dtype)));
        return inputs[k];
    }
    case ScalarOp::Neg:
        return fl ? float_value(-a[0].f, t) : int_value(s(0 - u(a[0].i)), t);
    case ScalarOp::Not:
        return bool_value(a[0].i == 0);
    case ScalarOp::Abs:
        return fl ? float_value(std::fabs(a[0].f), t)
                  : int_value(a[0].i < 0 ? s(0 - u(a[0].i)) : a[0].i, t);
    case ScalarOp::Exp:
        return float_math(op, f32math::hd_exp_f32, exp_f64, a[0].f, t);
    case ScalarOp::Log:
        return float_math(op, f32math::hd_log_f32, log_f64, a[0].f, t);
    case ScalarOp::Sqrt:
        return float_result(op, std::sqrt(a[0].f), t);
    case ScalarOp::Tanh:
        return float_math(op, f32math::hd_tanh_f32, tanh_f64, a[0].f, t);
    case ScalarOp::Sigmoid:
        return float_math(op, f32math::hd_sigmoid_f32, sigmoid_f64, a[0].f, t);
    case ScalarOp::Sin:
        return float_result(op, std::sin(a[0].f), t);
    case ScalarOp::Cos:
        return float_result(op, std::cos(a[0].f), t);
    case ScalarOp::Erf:
        return float_result(op, std::erf(a[0].f), t);
    case ScalarOp::Log1p:
        return float_result(op, std::log1p(a[0].f), t);
    case ScalarOp::Expm1:
        return float_result(op, std::expm1(a[0].f), t);
    case ScalarOp::Floor: // integers are unchanged
        return fl ? float_value(std::floor(a[0].f), t) : a[0];
    case ScalarOp::Ceil:
        return fl ? float_value(std::ceil(a[0].f), t) : a[0];
    case ScalarOp::Round:
        return fl ? float_value(std::nearbyint(a[0].f), t) : a[0]; // half to even
    case ScalarOp::Cast:
        return cast_value(a[0], t);
    case ScalarOp::Add:
        return fl ? float_value(a[0].f + a[1].f, t) : int_value(s(u(a[0].i) + u(a[1].i)), t);
    case ScalarOp::Sub:
        return fl ? float_value(a[0].f - a[1].f, t) : int_value(s(u(a[0].i) - u(a[1].i)), t);
    case ScalarOp::Mul:
        return fl ? float_value(a[0].f * a[1].f, t) : int_value(s(u(a[0].i) * u(a[1].i)), t);
    case ScalarOp::Div:
        return fl ? float_value(a[0].f / a[1].f, t) : int_value(int_div(a[0].i, a[1].i), t);
    case ScalarOp::Mod:
        return fl ? float_value(std::fmod(a[0].f, a[1].f), t)
                  : int_value(int_mod(a[0].i, a[1].i), t);
    case ScalarOp::Pow:
        return fl ? float_value(std::pow(a[0].f, a[1].f), t)
                  : int_value(int_pow(a[0].i, a[1].i), t);
    case ScalarOp::Min:
        return fl ? float_value(float_min(a[0].f, a[1].f), t)
                  : int_value(std::min(a[0].i, a[1].i), t);
    case ScalarOp::Max:
        return fl ? float_value(float_max(a[0].f, a[1].f), t)
                  : int_value(std::max(a[0].i, a[1].i), t);
    case ScalarOp::BitAnd:
        return int_result(op, a[0].i & a[1].i, t);
    case ScalarOp::BitOr:
        return int_result(op, a[0].i | a[1].i, t);
    case ScalarOp::BitXor:
        return int_result(op, a[0].i ^ a[1].i, t);
    case ScalarOp::Shl:
        return int_result(op, shift_left(a[0].i, a[1].i, t == DType::I32 ? 32 : 64), t);
    case ScalarOp::Shr:
        return int_result(op, shift_right(a[0].i, a[1].i, t == DType::I32 ? 32 : 64), t);
    case ScalarOp::Lt:
        return compare(a[0], a[1], std::less<>());
    case ScalarOp::Le:
        return compare(a[0], a[1], std::less_equal<>());
    case ScalarOp::Gt:
        return compare(a[0], a[1], std::greater<>());
    case ScalarOp::Ge:
        return compare(a[0], a[1], std::greater_equal<>());
    case ScalarOp::Eq:
        return compare(a[0], a[1], std::equal_to<>());
    case ScalarOp::Ne:
        return compare(a[0], a[1], std::not_equal_to<>());
    case ScalarOp::And:
        return bool_value(a[0].i != 0 && a[1].i != 0);
    case ScalarOp::Or:
        return bool_value(a[0].i != 0 || a[1].i != 0);
    case ScalarOp::Select:
        return a[0].i != 0 ? a[1] : a[2];
    }
    internal_error("evaluate: malformed scalar node");
}

} // namespace

ScalarValue ScalarValue::of(double v, DType t) {
    ScalarValue r;
    r.dtype = t;
    switch (t) {
    case DType::Bool:
        r.i = v != 0;
        break;
    case DType::I32:
        r.i = v > -2147483649.0 && v < 2147483648.0 ? static_cast<std::int32_t>(v) : 0;
        break;
    case DType::I64:
        r.i = v >= -9223372036854775808.0 && v < 9223372036854775808.0
                  ? static_cast<std::int64_t>(v)
                  : 0;
        break;
    case DType::F32:
        r.f = static_cast<float>(v);
        break;
    case DType::F64:
        r.f = v;
        break;
    case DType::BF16:
        r.f = f32math::hd_round_bf16(static_cast<float>(v));
        break;
    case DType::F16:
        r.f = f32math::hd_round_f16(static_cast<float>(v));
        break;
    }
    return r;
}

ScalarProgram::ScalarProgram(const ScalarExpr& e) {
    if (!e) throw Error("evaluate: null scalar expression");
    nodes_ = topological_order(e);
    std::unordered_map<const ScalarNode*, int> slot;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        first_operand_.push_back(static_cast<int>(operands_.size()));
        for (const ScalarExpr& a : nodes_[i]->args)
            operands_.push_back(slot.at(a.get()));
        slot.emplace(nodes_[i].get(), static_cast<int>(i));
    }
    first_operand_.push_back(static_cast<int>(operands_.size()));
    values_.resize(nodes_.size());
}

ScalarValue ScalarProgram::operator()(const std::vector<ScalarValue>& inputs) {
    ScalarValue a[3];
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        int first = first_operand_[i], count = first_operand_[i + 1] - first;
        for (int j = 0; j < count; ++j)
            a[j] =
                values_[static_cast<std::size_t>(operands_[static_cast<std::size_t>(first + j)])];
        values_[i] = apply(*nodes_[i], a, inputs);
    }
    return values_.back();
}

ScalarValue evaluate(const ScalarExpr& e, const std::vector<ScalarValue>& inputs) {
    return ScalarProgram(e)(inputs);
}

} // namespace hedra
