// A Communicator as the group of a graph's collective nodes (core/collective.hpp): the
// all-reduces of a tensor-parallel layer run on it when the program reaches them.
#pragma once

#include <memory>
#include <string>

#include "core/collective.hpp"
#include "distributed/communicator.hpp"

namespace hedra::distributed {

// `label` names the group in messages and listings ("tp").
std::shared_ptr<CollectiveGroup> collective_group(std::shared_ptr<Communicator> comm,
                                                  std::string label);

} // namespace hedra::distributed
