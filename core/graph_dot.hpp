// Graphviz view of a lazy graph: one box per node (numbered as in to_string(outputs)), edges
// from inputs to users labelled with the input position, outputs marked. Deterministic: nodes
// are numbered by topological order, never by address.
#pragma once

#include <string>
#include <vector>

#include "core/node.hpp"

namespace hedra {

// A `digraph` in the dot language; render with `dot -Tsvg graph.dot -o graph.svg`.
std::string to_dot(const std::vector<NodePtr>& outputs);

} // namespace hedra
