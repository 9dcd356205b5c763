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

std::string c_int(std::int64_t v);    // "5L", "(-3L)"
std::string int_text(std::int64_t v); // "42L", "(-3L)"; "42", "(-3)" under an Index32Scope
// The C type of index arithmetic: "long", or "int" under an Index32Scope.
const char* index_type();

// While alive, index arithmetic printed on this thread (int_text, index_type, print_unflatten)
// is 32-bit: for a kernel whose every buffer and counter range fits in int (fewer registers:
// addresses and counters take one each instead of two).
class Index32Scope {
public:
    explicit Index32Scope(bool on);
    ~Index32Scope();
    Index32Scope(const Index32Scope&) = delete;
    Index32Scope& operator=(const Index32Scope&) = delete;

private:
    bool saved_;
};

std::string c_index_expr(const sched::AstExpr& e); // C for an isl AST expression

// The affine analysis (scheduler/ast_access.hpp), for the printers.
using sched::element_coefficient;
using sched::iterator_coefficient;
using sched::linear_index;
using sched::LinearIndex;
using sched::mentions;
// "b2[1024L * i0 + i1]" (the counters named i0, i1, ...): the row-major linear index of the
// buffer's element at access(i0, i1, ...), its integers printed by int_text; a row-local
// buffer's rows left out, a windowed buffer's row taken mod the window.
std::string c_element(const poly::Buffer& buffer, const AffineMap& access);
// A loaded element as a value: a bool buffer's byte read as (element != 0).
std::string c_loaded(DType t, const std::string& element);
// The element read `r` of statement `st` reads: c_element, or for a data-dependent read
// (Read::indirect) the element at its index reads' values, clamped into their range.
std::string c_read_element(const poly::ProgramIR& program, const poly::Statement& st,
                           const poly::Read& r);
// The element statement `st` writes (and an update reads): c_element, or at its indirect
// write's clamped index values (Statement::write_indirect).
std::string c_write_element(const poly::ProgramIR& program, const poly::Statement& st);
// "1024L * i0 + i1"; `columns[k]`, where given and not empty, is printed for the access's
// input k instead of i<k> (an indirect read's index value).
std::string c_element_index(const poly::Buffer& buffer, const AffineMap& access,
                            const std::vector<std::string>& columns = {});
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
