// register_tile: a contraction's point loops printed as a register-tiled micro-kernel (BLIS
// style), the step from 38 to ~90 GFLOP/s on matmul. Under a permutable mark (every loop there
// belongs to one permutable band, so reordering and strip-mining are legal), a perfect nest
//   for A { for K... { for V { C[A, V] += f(reads) } } }
// with V the stride-1 loop of the write and K the reduction loops becomes: blocks of R rows of
// A (up to 6, as many as the 16 vector registers allow) and W = 2 vectors of columns of V
// (then 1 vector) whose C values live in vector registers across the K loops; the reads that do
// not depend on A and run along V are first packed into a contiguous local panel (no cache-set
// aliasing at power-of-two row lengths). Rows past the last block of R run in blocks of 4, 2
// and 1. Each element still accumulates its terms in the original K order; the columns past
// the last vector run the original loops.
// V need not be C's stride-1 axis (a convolution vectorizes over output channels): C's block
// is then gathered and scattered lane by lane, and reads strided along V are always packed,
// over all the K loops (one panel row per K iteration, filled K-innermost when the source rows
// are pages apart). Panels that read no loop above A are filled once above those loops. When
// A's body is `for V { C = 0 }` followed by the K loops (contraction_schedule.hpp puts the
// reduction's init there), the accumulators start at 0 instead of loading C; an epilogue after
// the K loops (a map of the result, partition.hpp) is applied to the accumulators as they are
// stored. A broadcast operand whose K steps are a KiB or more apart (dZ[b, o] in dZᵀ·X) is
// copied once, above the loops over V tiles, into panels of R rows x K (BLIS's packed A).
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
};

// Prints the nest under `mark` as a register tile and returns true, or prints nothing and
// returns false when the nest does not have that form.
bool print_register_tile(const RegisterTileContext& context, const sched::AstNode& mark, int indent,
                         std::string& out);

} // namespace hedra::backend
