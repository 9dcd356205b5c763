// c_access: the index arithmetic of printed kernels. Loop bounds and statement counters are
// isl AST expressions over the loop iterators (c0, c1, ...); a statement's counters are bound to
// locals i0, i1, ...; a buffer element is buffer[linear row-major index of access(i)].
// Also the affine analysis printers need to restructure loops: the coefficient of an iterator
// in a counter or in an element's linear index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

std::string c_int(std::int64_t v);                 // "5L", "(-3L)"
std::string c_index_expr(const sched::AstExpr& e); // C for an isl AST expression

// Row-major linear index of `access` into `buffer`: sum_k coef[k] * i_k + constant.
struct LinearIndex {
    std::vector<std::int64_t> coef;
    std::int64_t constant = 0;
};
LinearIndex linear_index(const poly::Buffer& buffer, const AffineMap& access);
// "b2[1024L * i0 + i1]" (the counters named i0, i1, ...).
std::string c_element(const poly::Buffer& buffer, const AffineMap& access);
// "const long i0 = <counter 0>;\n..." for a statement call, each line prefixed by `pad`.
std::string c_counter_lines(const sched::AstNode& call, const std::string& pad);

bool mentions(const sched::AstExpr& e, const std::string& iterator);
// The coefficient of `iterator` in `e` if `e` is affine in it (0 when it does not occur).
std::optional<std::int64_t> iterator_coefficient(const sched::AstExpr& e,
                                                 const std::string& iterator);
// The coefficient of `iterator` in the linear index of `access` read or written by `call`.
std::optional<std::int64_t> element_coefficient(const poly::Buffer& buffer, const AffineMap& access,
                                                const sched::AstNode& call,
                                                const std::string& iterator);

} // namespace hedra::backend
