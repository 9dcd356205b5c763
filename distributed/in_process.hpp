// In-process ranks: a group of communicators for threads of one process, one per thread, for
// fast tests of data-parallel logic without launching processes. Sums are formed in rank order,
// so every rank gets the same bits.
#pragma once

#include <memory>
#include <vector>

#include "distributed/communicator.hpp"

namespace hedra::distributed {

// `ranks` communicators sharing one exchange; give communicator r to the thread of rank r.
std::vector<std::shared_ptr<Communicator>> in_process_group(int ranks);

} // namespace hedra::distributed
