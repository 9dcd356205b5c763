// register_tile: a contraction's point loops printed as the register-tiled micro-kernel that the
// register-tile pass chose (scheduler/register_tile.hpp: the nest's form and every decision):
// blocks of R rows of A by 2 vectors (then 1 vector) of columns of V whose C values live in
// vector registers across the K loops, the packed panels filled first (above the loops the pass
// says they do not depend on), rows past the last block of R in blocks of 4, 2 and 1, and the
// columns past the last vector in the original loops. Each element still accumulates its terms
// in the original K order. When V is not C's stride-1 axis (a convolution vectorizes over
// output channels) C's block is gathered and scattered lane by lane. With the result's init in
// A's body (contraction_schedule.hpp) the accumulators start at 0 instead of loading C; an
// epilogue after the K loops (partition.hpp) is applied to the accumulators as they are stored
// when the pass planned it so.
#pragma once

#include <functional>
#include <string>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

struct RegisterTileContext {
    const poly::ProgramIR& program;
    const poly::Kernel& kernel;
    // Prints one statement call (the code the original loops would run).
    std::function<void(const sched::AstNode& call, int indent, std::string& out)> print_statement;
    int& next_name; // for unique local names
    int vector_bytes; // the prelude's hd_vf/hd_vd (c_prelude): the target's vector register
};

// Prints the nest under `mark` as its register tile and returns true, or prints nothing and
// returns false when the pass chose none (AstNode::register_tile).
bool print_register_tile(const RegisterTileContext& context, const sched::AstNode& mark, int indent,
                         std::string& out);

} // namespace hedra::backend
