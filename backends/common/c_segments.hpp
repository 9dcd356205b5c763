// A very large scalar expression split into several functions. clang's greedy register
// allocator is superlinear in the size of one function: a kernel whose value is a 12,000-node
// DAG (a traced callable reusing a value 2000 times) spends seconds there. Its nodes are split,
// in topological order, into segments of at most kSegmentNodes, each a static noinline
// function; values that cross segments travel through small per-dtype arrays on the kernel's
// stack (L1 accesses, cheap next to the operations of such an expression).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/scalar_expr.hpp"

namespace hedra::backend {

constexpr std::size_t kSegmentedNodes = 1024; // expressions above this many nodes
constexpr std::size_t kSegmentNodes = 256;    // nodes per segment function

// Whether `e` is worth splitting (more than kSegmentedNodes distinct nodes).
bool worth_segmenting(const ScalarExpr& e);

struct SegmentedValue {
    std::string functions; // the segment functions, <name>_0, <name>_1, ... (file scope)
    std::string value;     // the C expression of the result, valid after the calls
};

// Prints, at `indent` into `out`, the slot arrays, the inputs (`input(k)`) stored into them and
// one call per segment; the segments themselves go to the result's `functions`. Deterministic:
// the same expression and name give the same functions, so a caller printing one statement in
// several places emits them once.
SegmentedValue print_segmented(const ScalarExpr& e, const std::function<std::string(int)>& input,
                               const std::string& indent, const std::string& name,
                               std::string& out);

} // namespace hedra::backend
