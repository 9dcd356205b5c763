// Rows of a batch: a replica's share (data parallelism) or a micro-batch (pipelines).
#pragma once

#include <cstdint>

#include "core/host_array.hpp"

namespace hedra::distributed {

// Rows [first, last) of `a`'s leading axis (dense row-major), copied.
HostArray batch_rows(const HostArray& a, std::int64_t first, std::int64_t last);

} // namespace hedra::distributed
