// The program compile() makes of a graph with collectives: the graph is cut at its all-reduce
// nodes into pieces, each an ordinary program of the backend; a run runs the pieces in order
// and, after each, the all-reduces that read its results, whose sums the next pieces take as
// inputs. A node's piece is the number of all-reduces on its longest path from the inputs, so
// every piece is as large as the collectives allow (everything between two all-reduces fuses
// as in one program) and a graph with k all-reduces in a chain runs k + 1 pieces. copy_to_group
// is the identity here (it matters only to the gradient).
#pragma once

#include <memory>
#include <vector>

#include "core/compute.hpp"

namespace hedra::detail {

// `outputs` over `placeholders` (checked by compile()), cut at the collectives.
std::unique_ptr<Program> compile_with_collectives(const std::vector<NodePtr>& outputs,
                                                  const std::vector<NodePtr>& placeholders,
                                                  const ComputeOptions& options);

// How compile_with_collectives cut a graph, for tests and dumps: pieces and all-reduces.
struct CollectivePlan {
    int pieces = 0;
    int all_reduces = 0;
};
CollectivePlan collective_plan(const Program& program);

} // namespace hedra::detail
