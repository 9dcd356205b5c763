// graph_key: the structural identity of a graph to compile, for the openmp backend's program
// cache. Two graphs get the same key when they compute the same thing from leaves of the same
// shapes and dtypes: host data and memoized nodes are keyed by shape and dtype only (their
// values are bound at run time), placeholders by their position among the given placeholders.
// So a training loop that rebuilds the same graph every step finds its compiled program.
// The leaves are listed in the traversal order, which is the same for equal keys.
#pragma once

#include <string>
#include <vector>

#include "core/node.hpp"

namespace hedra::backend {

struct GraphKey {
    std::string text;            // the canonical serialization (compared in full, not hashed)
    std::vector<NodePtr> leaves; // data, memoized and placeholder leaves, in traversal order
};

GraphKey graph_key(const std::vector<NodePtr>& outputs, const std::vector<NodePtr>& placeholders);

} // namespace hedra::backend
