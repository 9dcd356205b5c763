// register_tile: the CPU pass that chooses a contraction's register tile (BLIS's micro-kernel),
// which the C renderers print (backends/common/register_tile.hpp). Under a permutable mark
// (every loop there belongs to one permutable band, so reordering and strip-mining are legal),
// a perfect nest
//   for A { [init row] for K... { for V { C[A, V] += f(reads) } } [epilogue row] }
// with V the stride-1 loop of the write and K the reduction loops gets blocks of R rows of A
// (as many as the vector registers allow, up to CpuTarget::register_tile_rows) by 2 vectors of
// columns of V whose C values live in vector registers across the K loops. The pass decides,
// from the CpuTarget it is given: R, the vectors' width, which reads are packed into
// contiguous K x V panels (shared operands along V; strided ones always), the loops those
// panels are filled above, the order each is filled in, which far broadcast operands are
// copied into R-row panels (BLIS's packed A), and whether an epilogue (a map of the result
// after the K loops, partition.hpp) runs on the accumulators. The decision is the mark's
// AstNode::register_tile; a nest without that form gets none and prints as its loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

// The loops of a register tile's nest under its mark (pointers into that AST).
struct RegisterTileNest {
    std::vector<const AstNode*> outer; // loops above A, printed unchanged
    const AstNode* a = nullptr;
    std::vector<const AstNode*> ks;
    const AstNode* v = nullptr;
    const AstNode* call = nullptr;
    std::int64_t trip_v = 0;
    std::int64_t c_stride = 1; // of V in the written element (else gathered and scattered)
    // The result's init inside A, ahead of the K loops (contraction_schedule.hpp): a loop over
    // V's columns setting them to 0. The accumulators then start at 0 instead of loading C.
    const AstNode* init_loop = nullptr;
    std::size_t init_after = 0; // the index in the loops above V of the loop holding it
    // The epilogue (partition.hpp) after the K loops inside A: a loop over V's columns
    // assigning a map of the result to another buffer, applied to the accumulators.
    const AstNode* epi_loop = nullptr;
};

// The nest under `mark` when it has the form above (no machine facts: the loops only).
std::optional<RegisterTileNest> match_register_tile(const poly::ProgramIR& program,
                                                    const poly::Kernel& kernel,
                                                    const AstNode& mark);

// A constant bound on the trip count of a canonical loop, from constants in its init (a
// number or a max with one) and its bound (a number or a min with one).
std::optional<std::int64_t> max_trip(const AstNode& loop);

// What the pass chose for one nest.
struct RegisterTile {
    int rows = 1;         // R: rows of A per block; rows past the last block run in 4, 2, 1
    int vector_bytes = 0; // of the accumulators' vectors (a short V row takes 32-byte ones)
    int lanes = 0;        // elements per vector; a block is 2 vectors of columns, then 1
    struct Read {
        bool vector = false;      // runs along V (else one value per row and K step)
        bool per_row = false;     // depends on A
        int pack = -1;            // its packed K x V panel, or -1
        bool pack_v_inner = true; // the panel filled V innermost (else the K loops innermost)
        int row_pack = -1;        // a far broadcast operand's R-row panels, or -1
    };
    std::vector<Read> reads; // per read of the update, in order
    int packs = 0;
    std::int64_t pack_rows = 0, pack_width = 0; // a panel: one row per K iteration
    std::size_t pack_level = 0; // the panels are filled inside this many loops above A
    int row_packs = 0;
    std::int64_t row_pack_rows = 0, row_pack_blocks = 0; // K rows, full blocks of R rows of A
    // The epilogue's plan: applied to the accumulators (vector) or run as its own loop over
    // the stored result; reads contiguous along V (vectors) or constant along it (broadcast).
    bool epilogue_vector = false;
    std::vector<bool> epilogue_reads_vector;
    std::int64_t epilogue_stride = 0; // of V in the epilogue's written element
    bool result_dead = false;         // only the epilogue reads the result: never stored
};

// The rows of a block: as many as the vector registers hold beside 2 for each shared vector
// operand and 2 for the per-row ones (R x 2 accumulators, one register left for a broadcast),
// at most register_tile_rows; below 1 when the operands alone fill the registers.
int register_block_rows(const CpuTarget& cpu, int shared_vectors, int row_vectors);

// The register tile for the nest under `mark`, or nothing when it does not have that form.
std::optional<RegisterTile> plan_register_tile(const poly::ProgramIR& program,
                                               const poly::Kernel& kernel, const AstNode& mark,
                                               const CpuTarget& cpu);

// The pass: every permutable mark of `root` gets its register tile, where it has one.
void choose_register_tiles(const poly::ProgramIR& program, const poly::Kernel& kernel,
                           AstNode& root, const CpuTarget& cpu);

// One line for the dumps: "register tile: 6 x 2x8 (32-byte vectors), packs 1 (v), ...".
std::string to_string(const RegisterTile& tile);

} // namespace hedra::sched
