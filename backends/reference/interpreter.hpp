// The reference interpreter: evaluates the lazy graph node by node on the host, with no
// scheduling and no fusion. It is written to be obviously correct rather than fast; every other
// backend and the autodiff tests are checked against it.
#pragma once

#include <vector>

#include "core/host_array.hpp"
#include "core/node.hpp"

namespace hedra::backend {

// Evaluates `outputs` (each node once) and returns one dense, 0-based, row-major HostArray per
// output. `inputs[i]` is bound to `placeholders[i]`; nodes with a memo are leaves. Throws
// hedra::Error if a placeholder that must be evaluated is not bound or its input has the wrong
// sizes or dtype.
std::vector<HostArray> interpret(const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& placeholders,
                                 const std::vector<HostArray>& inputs);

// The placeholders that evaluating `outputs` needs (reachable without passing a memoized node),
// in topological order.
std::vector<NodePtr> required_placeholders(const std::vector<NodePtr>& outputs);

} // namespace hedra::backend
