// Regression tests for bugs the fuzzer found, each the shrunk reproducer of a failing seed.
#include <doctest/doctest.h>

#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_runner.hpp"

using namespace hedra;

namespace {

ComputeOptions openmp_with(int threads, std::vector<std::int64_t> tiles = {}) {
    fuzz::openmp_backend();
    ComputeOptions o;
    o.backend = "openmp";
    o.num_threads = threads;
    o.tile_sizes = std::move(tiles);
    return o;
}

// How many of `runs` evaluations on openmp differ from the reference (evaluate: no memo).
int wrong_runs(const Array& a, int runs, const CompileOptions& o) {
    std::vector<NodePtr> nodes = {a.node()};
    std::vector<double> want = get_backend("reference")->evaluate(nodes, {}).at(0).to_doubles();
    int wrong = 0;
    CompileOptions one = o;
    one.num_threads = 1;
    for (int r = 0; r < runs; ++r) {
        wrong += fuzz::openmp_backend()->evaluate(nodes, r % 2 ? o : one).at(0).to_doubles() != want;
    }
    return wrong;
}

} // namespace

TEST_CASE("fuzz regression: seed 300366, a full i32 sum raced with 2 threads") {
    Array v0 = array(fuzz::leaf<std::int32_t>(93, 7933851179578242019ull, fuzz::ValueKind::SmallInt),
                     Shape{range(31), Range(-4, 1, 3)});
    Array v2 = reduce(ReduceOp::Sum, transpose(v0, {}), {0, -1}, false);
    CompileOptions o = openmp_with(2);
    CHECK(wrong_runs(v2, 200, o) == 0);
    Array v3 = view(v2, Shape{Range(-2, 1, 5), range(1), Range(0, 2, 4)}, AffineMap(3, 0, {}, {}));
    Array v4 = array(fuzz::leaf<float>(20, 2716497864466459293ull, fuzz::ValueKind::Special),
                     Shape{Range(-2, 1, 5), range(1), Range(0, 2, 4)});
    Array v5 = lazy_n_ary([](const std::vector<Sym>& in) { return log(max(in[1], in[0])); },
                          {Operand(v3), Operand(v4)});
    CHECK(wrong_runs(v5, 200, o) == 0);
    Array simple = cast(v3, DType::F32) + v4;
    CHECK(wrong_runs(simple, 200, o) == 0);
    Array bare = v3 * 1;
    CHECK(wrong_runs(bare, 200, o) == 0);
}

TEST_CASE("fuzz regression: reductions are never split across threads without privatization") {
    // Large integer sums (exact), over every subset of axes of transposed and strided views: a
    // reduced loop run in parallel loses updates almost every time at these sizes.
    Array x = array(fuzz::leaf<std::int64_t>(400 * 96, 77, fuzz::ValueKind::SmallInt),
                    Shape{range(400), Range(-3, 2, 96)});
    CompileOptions o = openmp_with(2);
    for (const Array& a : {x, transpose(x, {}), reshape(x, Shape{range(0, 400, 3), Range(-3, 4, 48)})})
        for (std::vector<int> axes : {std::vector<int>{0}, {1}, {0, 1}, {1, 0}}) {
            CAPTURE(a.shape().to_string());
            CAPTURE(axes.size());
            CHECK(wrong_runs(sum(a, axes), 6, o) == 0);
            CHECK(wrong_runs(sum(a * 3, axes, true) + 1, 6, o) == 0);
            CHECK(wrong_runs(max(a, axes), 6, o) == 0);
        }
}
