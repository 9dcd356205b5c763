// Rows of a batch (see batch_rows.hpp).
#include "distributed/batch_rows.hpp"

#include <cstring>
#include <vector>

namespace hedra::distributed {

HostArray batch_rows(const HostArray& a, std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> sizes = a.sizes();
    const std::size_t row = a.bytes() / static_cast<std::size_t>(sizes[0]);
    sizes[0] = last - first;
    HostArray out(sizes, a.dtype());
    if (out.bytes() > 0)
        std::memcpy(out.raw_mutable(),
                    static_cast<const unsigned char*>(a.raw()) +
                        row * static_cast<std::size_t>(first),
                    out.bytes());
    return out;
}

} // namespace hedra::distributed
