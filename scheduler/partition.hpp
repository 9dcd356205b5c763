// partition: splits the canonical lazy graph into kernels of the kernel IR (polyhedral/
// kernel_ir.hpp), before isl sees anything. The economy is tinygrad's:
// - leaves (placeholders in the given order, then host data and memoized nodes in topological
//   order) are Input buffers; constants are inlined as Const; index components (iota) are
//   inlined as reads of the affine index expression (Read::buffer == -1);
// - views are never materialized: their accesses are composed into each use;
// - maps are inlined into their consumers, except a map that is a graph output, or that has
//   several uses and is either expensive (libm math in its inlined tree; with fuse_rows, also
//   f32 exp/log/tanh/sigmoid, which a row-local buffer then keeps) or
//   used by several kernels one of which multiplies it into a sum (a contraction's operand):
//   that one is a Temporary with one Assign statement; a cheap map read by several kernels is
//   recomputed in each (a bias add and a ReLU cost no pass over memory of their own); a map
//   of more than a few operations or with a math function that is an operand of a contraction
//   is stored too (inlined, it would be recomputed once per column of the other operand);
//   a cheap map read by several kernels whose inlined tree reads many full-size buffers is
//   stored (a residual stream, inlined, reads every earlier layer's output in each layer);
// - reductions are materialized as an Assign of the identity over the result and an Update over
//   the input's full counter box (so matmul is one kernel and its product is never stored),
//   except a reduction of at most 4 terms per result read only inside one other kernel (a
//   pooling window's tie count): it is unrolled into the reading statements; a max or min of
//   at most 4 terms that is stored (a 2x2 max pool) is one Assign of its unrolled terms;
// - fuse/overwrite/stack is materialized as one Assign per piece, in order (later wins), except
//   a fuse read only by one materialized map at the map's own counters: that map's kernel then
//   has one Assign per piece, the map applied to the piece (the fuse is never stored);
// - a materialized map that reads a sum reduction's result at the sum's own counters, and
//   otherwise only what exists before the sum's kernel runs, joins that kernel as a final
//   Assign (an epilogue: w - lr * sum(...) is written where the sum completes; the register
//   tile applies it to the accumulators, so a result read only there is never stored); with
//   PartitionOptions::max_epilogues, maps reading that epilogue at the same element follow it;
// - a temporary whose only use is to be copied whole into a box of another buffer (a padded
//   buffer's interior) is written there instead (in_place_pieces.hpp);
// - every graph output is an Output buffer written by the program (a copy for a leaf);
// - a statement's inlined expression is capped (max_expression_nodes): past the cap, the
//   largest inlined operand is materialized.
// One kernel per materialized node, in topological order; names b0.., S0.., k0.. follow that
// order, so the result is byte-identical across runs.
#pragma once

#include <vector>

#include "core/node.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

struct PartitionOptions {
    int max_expression_nodes = 64;
    bool narrow = true; // compute only the read part of temporaries (narrow_domains.hpp)
    // A map that reads a sum's result element for element (an SGD update of a weight gradient)
    // joins the sum's kernel as a final Assign (its epilogue); see partition.hpp above.
    bool epilogues = true;
    // How many maps may join one sum's kernel, each reading the sum or the earlier ones at the
    // same element (SGD with momentum: the momentum, then the weight that reads it; Adam: m and
    // v, then the weight). The openmp register tile applies one (reading the sum once); the
    // cuda templates apply any number.
    int max_epilogues = 1;
    // Consecutive kernels working row by row on the same rows become one, and a temporary
    // only that kernel reads is kept one row per thread (row_fusion.hpp); a shared map with
    // f32 vector math is then stored (in the row) rather than recomputed. W5a softmax, 1
    // thread: 4.8 ms in three kernels, 2.9 ms as one.
    bool fuse_rows = true;
    // Long reductions over the leading axis into a few results run in blocks of rows, then
    // the blocks' partials are reduced (split_reduction.hpp).
    bool split_reductions = true;
    // Chains of stencil sweeps run as one stream over the rows, their intermediate grids kept
    // as windows of rows (stencil_stream.hpp).
    bool stream_stencils = true;
    // A map that only widens a bf16 or f16 value to f32 stays inlined in every kernel that
    // reads it, its half value materialized instead (where the map would be stored for several
    // kernels), so a contraction reading it reads the half buffer: tensor cores take it as an
    // operand, and it is half the bytes. Under autocast the backward products' gradients come
    // so (the gradient of a half activation, widened). The CPU's register tiles take f32.
    bool half_operands = false;
};

// Throws hedra::Error if a placeholder reachable from `outputs` is not listed, or one is listed
// twice. `donated`: placeholders whose memory outputs may take (donate_inputs.hpp).
poly::ProgramIR partition(const std::vector<NodePtr>& outputs,
                          const std::vector<NodePtr>& placeholders,
                          const PartitionOptions& options = {},
                          const std::vector<NodePtr>& donated = {});

} // namespace hedra::sched
