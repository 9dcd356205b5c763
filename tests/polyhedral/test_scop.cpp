// Tests of the isl view of a kernel (polyhedral/scop.hpp): domains and access relations of a
// hand-built matmul, checked against isl relations written out by hand.
#include <doctest/doctest.h>

#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "polyhedral/scop.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;

namespace {

bool same_map(poly::IslContext& ctx, const poly::IslPtr<isl_union_map>& m, const char* text) {
    isl_union_map* expected = isl_union_map_read_from_str(ctx.get(), text);
    bool eq = isl_union_map_is_equal(m.get(), expected) == isl_bool_true;
    isl_union_map_free(expected);
    return eq;
}

bool same_set(poly::IslContext& ctx, const poly::IslPtr<isl_union_set>& s, const char* text) {
    isl_union_set* expected = isl_union_set_read_from_str(ctx.get(), text);
    bool eq = isl_union_set_is_equal(s.get(), expected) == isl_bool_true;
    isl_union_set_free(expected);
    return eq;
}

} // namespace

TEST_CASE("scop: domain and access strings of matmul") {
    poly::ProgramIR p = test::matmul_ir(4, 5, 6);
    const poly::Statement& s1 = p.kernels[0].statements[1];
    CHECK(poly::iteration_domain_string(s1) ==
          "{ S1[i0, i1, i2] : 0 <= i0 < 4 and 0 <= i1 < 5 and 0 <= i2 < 6 }");
    CHECK(poly::access_relation_string(s1, s1.reads[0].access, "b0") ==
          "{ S1[i0, i1, i2] -> b0[i0, i2] }");
    CHECK(poly::access_relation_string(s1, s1.reads[1].access, "b1") ==
          "{ S1[i0, i1, i2] -> b1[i2, i1] }");
    AffineMap shifted(2, 2, {2, 0, -1, 1}, {1, -3});
    CHECK(poly::access_relation_string(p.kernels[0].statements[0], shifted, "b9") ==
          "{ S0[i0, i1] -> b9[2*i0 + 1, -i0 + i1 - 3] }");
}

TEST_CASE("scop: an indirect access relates each instance to the whole clamped range") {
    poly::ProgramIR p = test::matmul_ir(4, 5, 6);
    const poly::Statement& s0 = p.kernels[0].statements[0]; // S0[i0, i1]
    AffineMap rows(3, 2, {0, 0, 1, 0, 1, 0}, {0, 0});       // (i0, i1, v) -> (v, i1)
    CHECK(poly::access_relation_string(s0, rows, "b2", {50}) ==
          "{ S0[i0, i1] -> b2[o0, o1] : exists (i2 : o0 = i2 and o1 = i1 and 0 <= i2 < 50) }");
    // A source broadcast from rank 0: nothing but the range constrains the input.
    AffineMap scalar(3, 0, {}, {});
    CHECK(poly::access_relation_string(s0, scalar, "b3", {3}) ==
          "{ S0[i0, i1] -> b3[] : exists (i2 : 0 <= i2 < 3) }");
    poly::IslContext ctx;
    isl_map* m = isl_map_read_from_str(ctx.get(),
                                       poly::access_relation_string(s0, rows, "b2", {50}).c_str());
    REQUIRE(m != nullptr);
    isl_map_free(m);
}

TEST_CASE("scop: isl relations of matmul") {
    poly::IslContext ctx;
    poly::ProgramIR p = test::matmul_ir(4, 5, 6);
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    CHECK(same_set(ctx, scop.domain,
                   "{ S0[i, j] : 0 <= i < 4 and 0 <= j < 5; "
                   "S1[i, j, k] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 6 }"));
    CHECK(same_map(ctx, scop.writes,
                   "{ S0[i, j] -> b2[i, j] : 0 <= i < 4 and 0 <= j < 5; "
                   "S1[i, j, k] -> b2[i, j] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 6 }"));
    CHECK(same_map(ctx, scop.reads,
                   "{ S1[i, j, k] -> b2[i, j] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 6; "
                   "S1[i, j, k] -> b0[i, k] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 6; "
                   "S1[i, j, k] -> b1[k, j] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 6 }"));
    CHECK(scop.statement_index("S1") == 1);
    CHECK(scop.statement_index("S7") == -1);
}

TEST_CASE("scop: index reads touch no memory; rank-0 statements") {
    poly::IslContext ctx;
    poly::ProgramIR p = test::transpose_ir(3, 2);
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    CHECK(same_map(ctx, scop.reads, "{ S0[i, j] -> b0[j, i] : 0 <= i < 3 and 0 <= j < 2 }"));

    poly::ProgramIR q = test::matmul_ir(1, 1, 1);
    q.kernels[0].statements[0].extents = {};
    q.kernels[0].statements[0].write_access = AffineMap(0, 2, {}, {0, 0});
    poly::Scop scalar = poly::build_scop(ctx, q, q.kernels[0]);
    CHECK(same_map(ctx, scalar.writes, "{ S0[] -> b2[0, 0]; S1[0, 0, 0] -> b2[0, 0] }"));
}
