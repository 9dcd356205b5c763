// The scalar expression IR: what a traced `lazy` callable computes per element.
// Expressions are immutable DAGs: a value reused by several users is one shared node; binary
// operations always have operands of one dtype (the tracer inserts explicit casts), so printers and
// AD never promote implicitly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace hedra {

// clang-format off
enum class ScalarOp : std::uint8_t {
    // leaves
    Const, // value in ivalue (bool, ints) or fvalue (floats)
    Input, // the element of the map's input number `index`
    // unary
    Neg, Not, Abs,
    Exp, Log, Sqrt, Tanh, Sigmoid, Sin, Cos, Erf, Log1p, Expm1, // float results
    Floor, Ceil, Round,     // float to float (round: half to even); integers unchanged
    Cast,
    // binary (operands of equal dtype)
    Add, Sub, Mul, Div, Mod, Pow, Min, Max,
    BitAnd, BitOr, BitXor,  // integers (bool: logical)
    Shl, Shr,               // integers; shr is arithmetic
    Lt, Le, Gt, Ge, Eq, Ne, // result bool
    And, Or,                // bool operands
    // ternary
    Select // args: bool condition, then, else (then and else of equal dtype)
};
// clang-format on

const char* scalar_op_name(ScalarOp op); // "add", "exp", ...

struct ScalarNode;
using ScalarExpr = std::shared_ptr<const ScalarNode>;

// clang-format off
struct ScalarNode {
    ScalarOp op;
    DType dtype;               // the result dtype
    std::vector<ScalarExpr> args;
    std::int64_t ivalue = 0;   // Const of bool/integer dtype; Input: the input number
    double fvalue = 0.0;       // Const of float dtype
    std::size_t hash = 0;      // structural hash, computed at construction

    // Releases long operand chains iteratively (a traced loop of a million steps must not
    // overflow the stack when it is dropped).
    ~ScalarNode();
};
// clang-format on

// Construction (checks arity and dtypes; throws hedra::Error on misuse).
ScalarExpr scalar_const(double value, DType dtype); // any dtype; ints truncate
ScalarExpr scalar_const_int(std::int64_t value, DType dtype);
ScalarExpr scalar_input(int index, DType dtype);
// Unary ops keep the operand dtype, except: Not needs bool; Exp through Expm1 of a non-float
// operand cast it to f32 first.
ScalarExpr scalar_unary(ScalarOp op, ScalarExpr x);
ScalarExpr scalar_cast(ScalarExpr x, DType to);
// Binary ops promote both operands to a common dtype with explicit casts (comparisons return
// bool; And/Or cast to bool; Div of integers truncates toward zero, x/0 == 0; Mod has the sign
// of the dividend, a == (a/b)*b + a%b, so x%0 == x; bit operations and shifts need integer
// operands (bit operations also take bools); shifts by a count outside [0, bits) give 0, or
// for shr of a negative value -1).
ScalarExpr scalar_binary(ScalarOp op, ScalarExpr a, ScalarExpr b);
ScalarExpr scalar_select(ScalarExpr cond, ScalarExpr then_value, ScalarExpr else_value);

bool structurally_equal(const ScalarExpr& a, const ScalarExpr& b);
int scalar_num_inputs(const ScalarExpr& e); // 1 + the largest Input index used, 0 if none
// Replace Input(k) by replacements[k].
ScalarExpr substitute_inputs(const ScalarExpr& e, const std::vector<ScalarExpr>& replacements);
std::string to_string(const ScalarExpr& e); // "add(in0:f32, 2:f32)"

// A scalar value tagged with its dtype; used by the reference interpreter and constant folding.
struct ScalarValue {
    DType dtype = DType::F32;
    std::int64_t i = 0; // bool, i32, i64
    double f = 0.0;     // f32 (rounded to float), f64
    double as_double() const { return is_float(dtype) ? f : static_cast<double>(i); }
    static ScalarValue of(double v, DType t); // converts as a C++ cast would
};

// Evaluate with exact per-dtype semantics: f32 results are rounded to float after every
// operation, integer arithmetic wraps like two's complement, integer x/0 == 0.
// Every distinct node is computed once, so shared subexpressions cost nothing extra (and both
// branches of a select are computed: no operation traps).
ScalarValue evaluate(const ScalarExpr& e, const std::vector<ScalarValue>& inputs);

// `e` prepared for evaluation at many elements (the reference interpreter's loop): its nodes in
// topological order and a slot per node, reused by every call (so one program per thread).
class ScalarProgram {
public:
    explicit ScalarProgram(const ScalarExpr& e);
    ScalarValue operator()(const std::vector<ScalarValue>& inputs);

private:
    std::vector<ScalarExpr> nodes_;
    std::vector<int> first_operand_; // nodes_[i]'s operands are operands_[first_[i], first_[i+1])
    std::vector<int> operands_;      // slot numbers
    std::vector<ScalarValue> values_;
};

} // namespace hedra
