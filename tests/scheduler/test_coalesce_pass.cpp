// The coalesce pass (scheduler/loop_coalesce.hpp) marks the loop AST; the renderer only reads
// the mark. Contiguous image rows under a per-channel operand: the (14, 14) rows are one run,
// the channel loop above them is not.
#include <doctest/doctest.h>

#include "hedra.hpp"
#include "scheduler/lower.hpp"

using namespace hedra;
using sched::AstNode;

namespace {

// The coalesce marks of the loops, outermost first, along the first path to a statement.
std::vector<int> marks_along(const AstNode& n) {
    std::vector<int> out;
    const AstNode* at = &n;
    while (!at->body.empty()) {
        if (at->kind == AstNode::Kind::For) out.push_back(at->coalesce);
        at = &at->body[0];
    }
    return out;
}

} // namespace

TEST_CASE("coalesce pass: the contiguous trailing loops are marked, the strided ones not") {
    Array x = placeholder(Shape::of({8, 3, 14, 14}), DType::F32, "x");
    Array b = placeholder(Shape::of({3}), DType::F32, "b");
    Array bias = reshape(b, Transform(1, {TransformAxis{0, 1, 0}, TransformAxis{-1, 1, 0},
                                          TransformAxis{-1, 1, 0}}));
    poly::ProgramIR ir = sched::partition({relu(x + bias).node()}, {x.node(), b.node()});
    sched::LoopProgram loops = sched::lower_kernels(ir);
    std::vector<int> marks = marks_along(loops.asts.at(0));
    REQUIRE(marks.size() == 4);
    // (8, 3) cannot join the rows: the bias moves by one element per channel, not by 196.
    CHECK(marks[0] == 0);
    CHECK(marks[1] == 0);
    CHECK(marks[2] == 2); // the 14 x 14 rows, one run of 196
    CHECK(sched::to_string(loops.asts.at(0)).find("// coalesce 2") != std::string::npos);

    // Every axis contiguous: the whole nest is one run.
    poly::ProgramIR all = sched::partition({relu(x).node()}, {x.node()});
    CHECK(marks_along(sched::lower_kernels(all).asts.at(0)).at(0) == 4);
}
