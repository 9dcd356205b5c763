// register_tile_nest: the loop nest a register tile can print (register_tile.hpp), recognized
// under a permutable mark: for A { [init row] for K... { for V { C[A, V] += f(reads) } }
// [epilogue row] }, and the loop helpers the printer shares with the recognizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/register_tile.hpp"
#include "core/scalar_expr.hpp"
#include "scheduler/contraction_schedule.hpp"
#include "scheduler/loop_ast.hpp"
#include "scheduler/target.hpp"

namespace hedra::backend::register_tile_detail {

using sched::AstExpr;
using sched::AstNode;

constexpr std::size_t kMaxPackBytes = 256 * 1024; // all packed K x V panels of a nest

// The inclusive upper bound of a canonical loop (`it <= e` or `it < e`), or null.
std::optional<std::string> upper_bound(const AstNode& loop);
// A constant bound on the trip count of a canonical loop, from constants in its init (a
// number or a max with one) and its bound (a number or a min with one).
std::optional<std::int64_t> max_trip(const AstNode& loop);
using sched::vector_expression; // scheduler/contraction_schedule.hpp

struct Nest {
    std::vector<const AstNode*> outer; // loops above A, printed unchanged
    const AstNode* a = nullptr;
    std::vector<const AstNode*> ks;
    const AstNode* v = nullptr;
    const AstNode* call = nullptr;
    std::string ua, uv; // inclusive upper bounds
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

// Elements of a packed panel: one row per iteration of the K loops, each round_up(trip_v, width).
std::optional<std::int64_t> pack_elements(const Nest& n, std::int64_t width);

// The nest under `mark`, or nothing when it does not have the form above.
std::optional<Nest> match(const RegisterTileContext& cx, const AstNode& mark);

} // namespace hedra::backend::register_tile_detail
