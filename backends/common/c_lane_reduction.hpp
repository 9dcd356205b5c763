// c_lane_reduction: the text of a row reduction the lane-reduction pass chose
// (scheduler/lane_reduction.hpp): independent accumulators per lane (vector registers), combined
// as a tree at the end of the row, then the rest of the row, then one update of the element.
// Max and min are exact in any order; a sum is reassociated, as c_renderer.hpp allows.
#pragma once

#include <functional>
#include <string>

#include "core/node.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

// What the text needs from the kernel's printer.
struct LaneReduction {
    const sched::AstNode* loop = nullptr; // the loop the pass chose (reduction_lanes > 0)
    const sched::AstNode* call = nullptr; // its update statement's call
    ReduceOp op = ReduceOp::Sum;
    DType dtype = DType::F32;   // the accumulator's (f32 or f64)
    std::string id;             // a name suffix unique in the kernel
    std::string simd;           // the dialect's simd pragma, or empty
    int vector_bytes = 32;      // one vector register of the target
    std::string target, loaded; // the element updated, and its value as read
    // Prints the lines that compute the statement's value at the loop's counter (indented by
    // the given pad) into `out`, and returns the value's name.
    std::function<std::string(const std::string& pad, std::string& out)> value;
};

std::string lane_reduction_text(const LaneReduction& r, const std::string& pad);

} // namespace hedra::backend
