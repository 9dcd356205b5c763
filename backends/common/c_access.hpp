// c_access: the index arithmetic of printed kernels. Loop bounds and statement counters are
// isl AST expressions over the loop iterators (c0, c1, ...); a statement's counters are bound to
// locals i0, i1, ...; a buffer element is buffer[linear row-major index of access(i)].
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/ast_access.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

std::string c_int(std::int64_t v);                 // "5L", "(-3L)"
std::string c_index_expr(const sched::AstExpr& e); // C for an isl AST expression

// The affine analysis (scheduler/ast_access.hpp), for the printers.
using sched::element_coefficient;
using sched::iterator_coefficient;
using sched::linear_index;
using sched::LinearIndex;
using sched::mentions;
// "b2[1024L * i0 + i1]" (the counters named i0, i1, ...).
std::string c_element(const poly::Buffer& buffer, const AffineMap& access);
// "for (long c1 = <init>; <cond>; c1 += <inc>)" of a For node.
std::string c_loop_header(const sched::AstNode& loop);
// A loop AST printed plainly, each line prefixed by `in` and four spaces per level: blocks and
// marks as their bodies, ifs and loops as C, statement calls by `call(node, indent, out)`.
using CallPrinter = std::function<void(const sched::AstNode&, const std::string&, std::string&)>;
void c_print_plain(const sched::AstNode& n, const std::string& in, std::string& out,
                   const CallPrinter& call);
// "const long i0 = <counter 0>;\n..." for a statement call, each line prefixed by `pad`.
std::string c_counter_lines(const sched::AstNode& call, const std::string& pad);

} // namespace hedra::backend
