// Differential test: random graphs of maps, views, reductions, contractions, overwrites,
// stacks and index components on 4x4 arrays, partitioned and run by the IR interpreter,
// against the reference interpreter.
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

struct Rng {
    std::uint32_t s;
    std::uint32_t next(std::uint32_t n) {
        s = s * 1664525u + 1013904223u;
        return (s >> 8) % n;
    }
};

Array random_op(Rng& rng, const std::vector<Array>& pool) {
    const Array& a = pool[rng.next(static_cast<std::uint32_t>(pool.size()))];
    const Array& b = pool[rng.next(static_cast<std::uint32_t>(pool.size()))];
    switch (rng.next(15)) {
    case 0:
        return a + b;
    case 1:
        return a * b;
    case 2:
        return maximum(a, b) - 1.0f;
    case 3:
        return tanh(a);
    case 4:
        return a * 0.5f + 1.0f;
    case 5:
        return transpose(a);
    case 6:
        return sum(a, {0}, true) + b;
    case 7:
        return max(a, {1}, true) * b;
    case 8:
        return matmul(a, b) * 0.125f;
    case 9:
        return overwrite({a, reshape(b, Shape{range(1, 3), range(0, 4, 2)})});
    case 10:
        return overwrite(
            {a, reshape(reshape(b, Transform::shift({1, 1})), Shape{range(1, 4), range(1, 4)})});
    case 11:
        return a + cast(index_components(a.shape(), 1), DType::F32);
    case 12:
        return sum(stack(0, {a, b}), {0});
    case 13:
        return 0.9f * a + matmul(b, a); // a momentum-like map of a sum
    default:
        return exp(a * 0.25f) * relu(b);
    }
}

// Two 4x4 leaves, the placeholder p, then `min_steps` to `min_steps` + 5 random operations.
std::vector<Array> random_pool(Rng& rng, std::uint32_t seed, const Array& p, int min_steps) {
    std::vector<Array> pool{array(small_values(16, seed), Shape::of({4, 4})),
                            array(small_values(16, seed + 100), Shape::of({4, 4})), p};
    int steps = min_steps + static_cast<int>(rng.next(6));
    for (int i = 0; i < steps; ++i)
        pool.push_back(random_op(rng, pool));
    return pool;
}

} // namespace

TEST_CASE("random graphs agree with the reference interpreter") {
    for (std::uint32_t seed = 1; seed <= 60; ++seed) {
        INFO("seed " << seed);
        Rng rng{seed};
        Array p = placeholder(Shape::of({4, 4}), DType::F32, "p");
        std::vector<Array> pool = random_pool(rng, seed, p, 3);
        std::vector<Array> outputs{pool.back(),
                                   pool[3 + rng.next(static_cast<std::uint32_t>(pool.size() - 3))]};
        HostArray pv = HostArray::from<float>(small_values(16, seed + 200), {4, 4});
        check_against_reference(outputs, {p}, {pv}, 1e-5);
    }
}

// The cuda backend's partition (several epilogues per sum, chains, operands hoisted before the
// sum's kernel), with every intermediate an output so that maps of sums are materialized and
// read by later maps: still the reference's values.
TEST_CASE("random graphs with epilogue chains agree with the reference interpreter") {
    sched::PartitionOptions chains;
    chains.max_epilogues = 4;
    int chained = 0;
    for (std::uint32_t seed = 1; seed <= 60; ++seed) {
        INFO("seed " << seed);
        Rng rng{seed};
        Array p = placeholder(Shape::of({4, 4}), DType::F32, "p");
        std::vector<Array> pool = random_pool(rng, seed, p, 4);
        std::vector<Array> outputs(pool.begin() + 3, pool.end());
        HostArray pv = HostArray::from<float>(small_values(16, seed + 200), {4, 4});
        Partitioned got = run_partitioned(outputs, {p}, {pv}, chains);
        std::vector<HostArray> want = run_reference(outputs, {p}, {pv});
        REQUIRE(got.results.size() == want.size());
        for (std::size_t k = 0; k < want.size(); ++k) {
            INFO("output " << k);
            check_close(got.results[k], want[k], 1e-5);
        }
        for (const poly::Kernel& kernel : got.ir.kernels)
            chained += kernel.statements.size() > 3;
    }
    CHECK(chained > 0); // some sums got more than one epilogue
}
