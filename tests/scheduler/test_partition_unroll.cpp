// partition: a reduction of at most 4 terms per result read only inside one other kernel (a
// 2x2 pooling window's tie count) is unrolled into the statements reading it instead of stored.
// Checked structurally and by value against the reference interpreter, through the IR
// interpreter and the default (openmp) backend.
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;

TEST_CASE("a 2x2 window sum read by one map is unrolled into the map's kernel") {
    Array x = small_array({6, 8}, 1);
    // win[i, j, a, b] = x[2i + a, 2j + b]
    Array win = view(x, Shape::of({3, 4, 2, 2}), AffineMap(4, 2, {2, 0, 1, 0, 0, 2, 0, 1}, {0, 0}));
    Array count = sum(win, {2, 3});
    Array y = exp(count * 0.125f);
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    CHECK(p.ir.kernels.size() == 1);
    check_backend(y, 1e-6);
    // max, min and product, keeping the reduced axes.
    for (const Array& r : std::vector<Array>{max(win, {2, 3}, true), min(win, {3}, true),
                                             reduce(ReduceOp::Prod, win, {2})}) {
        Array z = r * 2.0f + 1.0f;
        Partitioned q = check_against_reference({z});
        CHECK(count_buffers(q.ir, BufferRole::Temporary) == 0);
        check_backend(z);
    }
}

TEST_CASE("a sum of more terms, or one read by two kernels, is still stored") {
    Array x = small_array({5, 6}, 2);
    Array five = sum(x, {0}); // 5 terms
    Array y = exp(five * 0.1f);
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 1);
    Array pair = sum(small_array({2, 6}, 3), {0}); // 2 terms, read by two outputs' kernels
    Partitioned q = check_against_reference({exp(pair * 0.1f), pair * 3.0f}, {}, {}, 1e-6);
    CHECK(count_buffers(q.ir, BufferRole::Temporary) == 1); // (one map is its epilogue)
}
