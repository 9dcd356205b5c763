// partition: a fuse read only by one materialized map, element for element, is computed piece
// by piece in the map's kernel and never stored (partition.hpp). Checked structurally (no
// buffer for the fuse, one statement per piece) and by value against the reference
// interpreter, through the IR interpreter and through the default (openmp) backend.
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;

TEST_CASE("a padding read by a map is computed in the map's kernel, one statement per piece") {
    Array x = small_array({3, 4}, 1);
    Array z = reshape(small_array({5, 6}, 2),
                      Shape{Range(-1, 1, 5), Range(-1, 1, 6)}); // the padded ranges
    Array y = pad(x, {{1, 1}, {1, 1}}) * z + 1.0f; // the map's other operand is read per piece
    Partitioned p = check_against_reference({y});
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    REQUIRE(p.ir.kernels.size() == 1);
    CHECK(p.ir.kernels[0].statements.size() >= 2);
    check_backend(y);
}

TEST_CASE("interleaved strided pieces (stack, fuse of even and odd) distribute, in order") {
    Array a = small_array({6}, 3), b = small_array({6}, 4);
    Array s = stack(1, {a, b});                // (6, 2): two pieces strided along axis 1
    Array y = maximum(s, 0.0f) * 3.0f - s;     // the fuse read twice by one map: not fused
    Array w = where(s > 0.0f, s * 2.0f, 0.5f); // read once: distributed
    Partitioned p = check_against_reference({w});
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    REQUIRE(p.ir.kernels.size() == 1);
    CHECK(p.ir.kernels[0].statements.size() == 2);
    Partitioned twice = check_against_reference({y});
    CHECK(count_buffers(twice.ir, BufferRole::Temporary) == 0);
    CHECK(twice.ir.kernels.size() == 1);
    check_backend(w);
    check_backend(y);
}

TEST_CASE("overwrite: the later piece still wins after distribution") {
    Array x = small_array({4, 4}, 5);
    Array inner = reshape(small_array({2, 2}, 6), Shape{Range(1, 1, 2), Range(1, 1, 2)});
    Array y = exp(overwrite({x, inner}) * 0.25f);
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    REQUIRE(p.ir.kernels.size() == 1);
    CHECK(p.ir.kernels[0].statements.size() == 2);
    check_backend(y, 1e-6);
}

TEST_CASE("a fuse read by two kernels, or read through a permutation, is still stored") {
    Array x = small_array({3, 3}, 7);
    Array f = pad(x, {{1, 0}, {0, 1}}); // (4, 4)
    Array permuted = exp(transpose(f));
    Partitioned p = check_against_reference({permuted}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 1);
    Array u = f * 2.0f, v = sum(f, {0});
    Partitioned two = check_against_reference({u, v});
    CHECK(count_buffers(two.ir, BufferRole::Temporary) == 1);
}
