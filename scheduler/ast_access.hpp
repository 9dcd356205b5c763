// ast_access: the affine analysis of statement calls in a loop AST: the row-major linear index
// of an access, and the coefficient of a loop iterator in a counter or in an element's linear
// index. The passes over loop ASTs (loop_coalesce.hpp) and the renderers' register tiles use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::sched {

// Row-major linear index of `access` into `buffer`'s storage: sum_k coef[k] * i_k + constant.
// A row-local buffer's storage is one row: its leading row_local axes are left out; a windowed
// buffer's row (row mod window) is left out too, and c_element prints it.
struct LinearIndex {
    std::vector<std::int64_t> coef;
    std::int64_t constant = 0;
};
LinearIndex linear_index(const poly::Buffer& buffer, const AffineMap& access);

bool mentions(const AstExpr& e, const std::string& iterator);
// The coefficient of `iterator` in `e` if `e` is affine in it (0 when it does not occur).
std::optional<std::int64_t> iterator_coefficient(const AstExpr& e, const std::string& iterator);
// The coefficient of `iterator` in the linear index of `access` read or written by `call`.
std::optional<std::int64_t> element_coefficient(const poly::Buffer& buffer, const AffineMap& access,
                                                const AstNode& call, const std::string& iterator);

} // namespace hedra::sched
