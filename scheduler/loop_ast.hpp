// LoopAst: the loop nest of one kernel after isl's AST generation, as plain data (no isl), so
// that printers (C++ with OpenMP, later CUDA) and tests walk it without isl. Expressions are
// isl's: integer affine expressions with floor division, min/max and comparisons. Every For
// carries the result of the dependence test of its generated loop: `parallel` is true when no
// dependence is carried by that loop (its iterations may run in any order).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hedra::sched {

struct RegisterTile; // register_tile.hpp

struct AstExpr {
    enum class Kind : std::uint8_t { Int, Id, Op };
    enum class Op : std::uint8_t {
        Add,
        Sub,
        Mul,
        Neg,
        Div,      // exact division
        FloorDiv, // rounds towards -infinity
        PDivQ,    // quotient, dividend known non-negative
        PDivR,    // remainder, dividend known non-negative
        ZDivR,    // remainder, only compared against zero
        Min,
        Max,
        Select,
        Eq,
        Le,
        Lt,
        Ge,
        Gt,
        And,
        Or
    };
    Kind kind = Kind::Int;
    Op op = Op::Add;
    std::int64_t value = 0; // Int
    std::string name;       // Id: a loop iterator
    std::vector<AstExpr> args;
};

struct AstNode {
    enum class Kind : std::uint8_t { Block, For, If, Call, Mark };
    Kind kind = Kind::Block;
    std::vector<AstNode> body;      // Block: the children; For: the loop body; If: then; Mark
    std::vector<AstNode> else_body; // If
    // For: for (iterator = init; cond; iterator += inc)
    std::string iterator;
    AstExpr init, cond, inc;
    bool parallel = false; // the dependence test of this generated loop passed
    // The loops from this one down that walk memory as one run (loop_coalesce.hpp): 0, or 2
    // and more; a C renderer prints them as one loop.
    int coalesce = 0;
    // If
    AstExpr condition;
    // For: accumulators per lane of a row reduction, chosen by the lane-reduction pass
    // (lane_reduction.hpp); 0 for none.
    int reduction_lanes = 0;
    // Mark: a schedule-tree mark around `body`, e.g. kPermutableMark
    std::string mark;
    // Mark (kPermutableMark): the register tile the register-tile pass chose for the nest
    // inside (register_tile.hpp), or null: the renderers print it, or the loops as they are.
    std::shared_ptr<const RegisterTile> register_tile;
    // Call: statement `statement` of the kernel at these counter values
    int statement = -1;
    std::vector<AstExpr> counters;
};

// The mark tile.cpp puts above a band of point loops: every loop inside it, down to the
// statements, belongs to one permutable band, so any reordering or further tiling of those
// loops is legal (printers use it for register tiles).
inline constexpr const char* kPermutableMark = "permutable";

std::string to_string(const AstExpr& e);
// Pseudo-C listing, loops annotated "// parallel"; statements as "S<k>(counters)".
std::string to_string(const AstNode& node, int indent = 0);

// Loop facts used by printers and tests.
bool contains_for(const std::vector<AstNode>& nodes);
int count_for(const AstNode& node);

} // namespace hedra::sched
