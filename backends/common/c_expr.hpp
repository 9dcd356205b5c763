// c_expr: scalar expressions (core/scalar_expr.hpp) as C++ statements, with the exact per-dtype
// semantics of core/scalar_eval.cpp: f32 arithmetic in float; f32 exp/log/tanh/pow/sigmoid
// computed in double and rounded once (as the reference does, so results agree bit for bit);
// integer arithmetic wraps (through unsigned helpers); integer x/0 == 0 and division
// truncates; float min/max propagate NaN; float-to-int casts of NaN or out-of-range values
// give 0; bool arithmetic on 0/1 converted back with != 0. Shared subexpressions are bound to
// `const` locals once. The helpers live in c_prelude() and are printed once per program.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/node.hpp"
#include "core/scalar_expr.hpp"

namespace hedra::backend {

// The C++ type of a value of `t` ("float", "long long", "bool", ...).
const char* c_value_type(DType t);
// The C++ type of a buffer element of `t` (bool is stored as "unsigned char").
const char* c_storage_type(DType t);
// A literal of the constant node `e` (exact: floats in hexadecimal).
std::string c_literal(const ScalarNode& e);

// Prints `e` as const locals into `out` (each line prefixed by `indent`) and returns the C
// expression of its value. `input(k)` gives the C expression of Input(k). Temporaries are
// named <prefix>0, <prefix>1, ...
std::string print_scalar(const ScalarExpr& e, const std::function<std::string(int)>& input,
                         const std::string& indent, const std::string& prefix, std::string& out);

// The C expression of an operation node (not a leaf) whose operands are the expressions `args`.
std::string c_operation(const ScalarNode& n, const std::vector<std::string>& args);

// Operations used once are written into their user's expression rather than bound to a local
// (clang's frontend pays per declaration), nested at most this deep.
constexpr int kMaxInlineDepth = 4;
// `e` as an operand: itself when it is one parenthesized group, else wrapped in parentheses.
std::string operand_text(const std::string& e);

// The values of several expressions, their shared subexpressions bound once; operations used
// once are written inline.
std::vector<std::string> print_scalars(const std::vector<ScalarExpr>& roots,
                                       const std::function<std::string(int)>& input,
                                       const std::string& indent, const std::string& prefix,
                                       std::string& out);

// combine(acc, value) of a reduction op of dtype `t` (not Custom), as a C expression.
// `x` (an f32 value) rounded to `t` when `t` is a half format; `x` otherwise.
std::string c_round_half(DType t, const std::string& x);
std::string c_combine(ReduceOp op, DType t, const std::string& acc, const std::string& value);

// Helper functions the printed expressions call (static inline, no #include).
std::string c_prelude(int vector_bytes); // vector_bytes: the target's vector register
const std::string& c_prelude_body();     // what follows its HD_VECTOR_BYTES line

} // namespace hedra::backend
