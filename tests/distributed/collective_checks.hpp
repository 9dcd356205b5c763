// The collectives every communicator must get right, run by every rank of a group and checked
// against sums formed here: rank r contributes values({6}, r + 1).
#pragma once

#include <doctest/doctest.h>

#include <vector>

#include "distributed/communicator.hpp"
#include "distributed_testing.hpp"

namespace hedra::distributed::test {

// On rank r of `c`'s group: all_reduce, mean, broadcast from 2, all_gather, reduce_scatter and
// start_all_reduce of values({6}, r + 1), then a barrier.
inline std::vector<HostArray> run_collectives(Communicator& c) {
    HostArray a = values({6}, unsigned(c.rank() + 1));
    std::vector<HostArray> out{c.all_reduce(a),     c.all_reduce(a, Reduction::Mean),
                               c.broadcast(a, 2),   c.all_gather(a),
                               c.reduce_scatter(a), c.start_all_reduce(a)->wait()};
    c.barrier();
    return out;
}

// run_collectives' results on rank r of n.
inline void check_collectives(const std::vector<HostArray>& out, int r, int n) {
    for (int i = 0; i < 6; ++i) {
        double sum = 0;
        for (int q = 0; q < n; ++q)
            sum += values({6}, unsigned(q + 1)).flat(i);
        CHECK(out[0].flat(i) == doctest::Approx(sum).epsilon(1e-6));
        CHECK(out[1].flat(i) == doctest::Approx(sum / n).epsilon(1e-6));
        CHECK(out[2].flat(i) == values({6}, 3).flat(i));
        CHECK(out[5].flat(i) == out[0].flat(i));
    }
    CHECK(out[3].sizes() == std::vector<std::int64_t>{n, 6});
    CHECK(out[3].flat(6 * 1 + 4) == values({6}, 2).flat(4));
    REQUIRE(out[4].sizes() == std::vector<std::int64_t>{6 / n});
    CHECK(out[4].flat(1) == out[0].flat((6 / n) * r + 1));
}

} // namespace hedra::distributed::test
