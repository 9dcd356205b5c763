// Tests of the dataflow dependences (polyhedral/dependences.hpp) on a hand-built matmul and on
// an overwrite (a buffer written twice).
#include <doctest/doctest.h>

#include <isl/union_map.h>
#include <isl/union_set.h>

#include "polyhedral/dead_writes.hpp"
#include "polyhedral/dependences.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;

namespace {

bool covers(poly::IslContext& ctx, const poly::IslPtr<isl_union_map>& m, const char* text) {
    isl_union_map* expected = isl_union_map_read_from_str(ctx.get(), text);
    bool sub = isl_union_map_is_subset(expected, m.get()) == isl_bool_true;
    isl_union_map_free(expected);
    return sub;
}

bool equals(poly::IslContext& ctx, const poly::IslPtr<isl_union_map>& m, const char* text) {
    isl_union_map* expected = isl_union_map_read_from_str(ctx.get(), text);
    bool eq = isl_union_map_is_equal(expected, m.get()) == isl_bool_true;
    isl_union_map_free(expected);
    return eq;
}

} // namespace

TEST_CASE("dependences: matmul init -> first update -> next update") {
    poly::IslContext ctx;
    poly::ProgramIR p = test::matmul_ir(4, 5, 6);
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    CHECK(equals(ctx, deps.flow,
                 "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 4 and 0 <= j < 5; "
                 "S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 5 }"));
    CHECK(covers(ctx, deps.all(), "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 4 and 0 <= j < 5 }"));
    CHECK(covers(ctx, deps.all(),
                 "{ S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 5 }"));
    // Nothing flows between different output elements.
    isl_union_map* cross = isl_union_map_read_from_str(
        ctx.get(), "{ S1[i, j, k] -> S1[i2, j2, k2] : i2 != i or j2 != j }");
    cross = isl_union_map_intersect(cross, deps.all().release());
    CHECK(isl_union_map_is_empty(cross) == isl_bool_true);
    isl_union_map_free(cross);
}

TEST_CASE("dependences: an overwrite orders the two writes (WAW)") {
    poly::IslContext ctx;
    poly::ProgramIR p;
    p.buffers = {test::ir_buffer("b0", {8}, poly::BufferRole::Input),
                 test::ir_buffer("b1", {8}, poly::BufferRole::Output)};
    poly::Statement all;
    all.name = "S0";
    all.extents = {8};
    all.write_buffer = 1;
    all.write_access = AffineMap::identity(1);
    all.reads = {{0, AffineMap::identity(1)}};
    all.value = scalar_input(0, DType::F32);
    poly::Statement inner = all;
    inner.name = "S1";
    inner.extents = {6};
    inner.write_access = AffineMap(1, 1, {1}, {1});
    inner.reads = {{0, AffineMap(1, 1, {1}, {0})}, {0, AffineMap(1, 1, {1}, {2})}};
    inner.value =
        scalar_binary(ScalarOp::Add, scalar_input(0, DType::F32), scalar_input(1, DType::F32));
    p.kernels.push_back({"k0", {all, inner}});
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    CHECK(isl_union_map_is_empty(deps.flow.get()) == isl_bool_true);
    CHECK(equals(ctx, deps.output, "{ S0[i] -> S1[i - 1] : 1 <= i <= 6 }"));
}

TEST_CASE("dead writes: an overwritten copy is dead where the second write replaces it") {
    poly::IslContext ctx;
    poly::ProgramIR p;
    p.buffers = {test::ir_buffer("b0", {8}, poly::BufferRole::Input),
                 test::ir_buffer("b1", {8}, poly::BufferRole::Output)};
    poly::Statement all;
    all.name = "S0";
    all.extents = {8};
    all.write_buffer = 1;
    all.write_access = AffineMap::identity(1);
    all.reads = {{0, AffineMap::identity(1)}};
    all.value = scalar_input(0, DType::F32);
    poly::Statement inner = all;
    inner.name = "S1";
    inner.extents = {6};
    inner.write_access = AffineMap(1, 1, {1}, {1});
    p.kernels.push_back({"k0", {all, inner}});
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    isl_union_set* expected = isl_union_set_read_from_str(ctx.get(), "{ S0[i] : 1 <= i <= 6 }");
    CHECK(isl_union_set_is_equal(poly::dead_instances(scop, deps).get(), expected) ==
          isl_bool_true);
    isl_union_set_free(expected);
    std::optional<poly::Scop> live = poly::remove_dead_instances(scop, deps);
    REQUIRE(live);
    isl_union_set* kept =
        isl_union_set_read_from_str(ctx.get(), "{ S0[0]; S0[7]; S1[i] : 0 <= i <= 5 }");
    CHECK(isl_union_set_is_equal(live->domain.get(), kept) == isl_bool_true);
    isl_union_set_free(kept);

    // Matmul has no dead instance: the init is read by the first update.
    poly::ProgramIR mm = test::matmul_ir(3, 4, 5);
    poly::Scop mscop = poly::build_scop(ctx, mm, mm.kernels[0]);
    CHECK(!poly::remove_dead_instances(mscop, poly::compute_dependences(mscop)));
}
