// The scalar expression IR: what a traced `lazy` callable computes per element.
// Expressions are immutable DAGs: a value reused by several users is one shared node; binary
// operations always have operands of one dtype (the tracer inserts explicit casts), so printers and
// AD never promote implicitly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace hedra {

// The operations are listed once, in core/scalar_ops.def (name, arity, typing rule): a new
// operation is one line there, and the switches that must handle every operation (evaluation,
// derivatives) have no default, so that -Wswitch names each one still to write.
enum class ScalarOp : std::uint8_t {
#define HEDRA_SCALAR_OP(Id, ...) Id,
#include "core/scalar_ops.def"
};

// How an operation's operands are checked and its result dtype is found (scalar_unary,
// scalar_binary).
enum class ScalarOpRule : std::uint8_t {
    Leaf,      // Const, Input: no operands
    Keep,      // unary, the operand's dtype (neg of a bool is refused)
    FloatMath, // unary, float result: a non-float operand is cast to f32 first
    Cast,      // unary, the target dtype
    Arith,     // binary, operands promoted to a common dtype, which is the result's
    Bitwise,   // binary, integers or bools
    Shift,     // binary, integers only; shr is arithmetic
    Compare,   // binary, operands promoted, result bool
    Logical,   // not, and, or: bool operands, bool result
    Select,    // ternary: bool condition, then and else promoted
};

// One row of core/scalar_ops.def.
struct ScalarOpInfo {
    const char* name; // "add", "exp", ...
    int arity;        // the number of operands
    ScalarOpRule rule;
};

// clang-format off
inline constexpr ScalarOpInfo kScalarOpInfo[] = {
#define HEDRA_SCALAR_OP(Id, name, arity, rule) {name, arity, ScalarOpRule::rule},
#include "core/scalar_ops.def"
};
inline constexpr ScalarOp kAllScalarOps[] = {
#define HEDRA_SCALAR_OP(Id, ...) ScalarOp::Id,
#include "core/scalar_ops.def"
};
// clang-format on
inline constexpr std::size_t kNumScalarOps = std::size(kAllScalarOps);

constexpr const ScalarOpInfo& scalar_op_info(ScalarOp op) {
    return kScalarOpInfo[static_cast<std::size_t>(op)];
}
constexpr const char* scalar_op_name(ScalarOp op) { // "add", "exp", ...
    return scalar_op_info(op).name;
}
// The operation named `name` ("add"); nullopt for an unknown name.
std::optional<ScalarOp> scalar_op_from_name(std::string_view name);

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
