// Structural tests of the schedule of matmul and of a transpose (scheduler/compute_schedule,
// tile, ast_build): the init never runs inside the reduction loop, the parallel loop is the
// outer (tile) loop over i, the stride-1 loop is innermost, and the reduction loop is never
// marked parallel.
#include <doctest/doctest.h>

#include <array>
#include <functional>
#include <set>

#include "polyhedral/dependences.hpp"
#include "scheduler/ast_build.hpp"
#include "scheduler/compute_schedule.hpp"
#include "scheduler/tile.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;
using sched::AstExpr;
using sched::AstNode;

namespace {

sched::AstNode schedule_kernel(const poly::ProgramIR& p, const sched::TileOptions& tile = {}) {
    poly::IslContext ctx;
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    sched::KernelSchedule ks = sched::compute_schedule(ctx, scop, deps);
    REQUIRE(!ks.fell_back);
    poly::IslPtr<isl_schedule> tiled = sched::tile_schedule(scop, ks.schedule, tile);
    return sched::build_loop_ast(scop, deps, tiled);
}

bool mentions(const AstExpr& e, const std::string& name) {
    if (e.kind == AstExpr::Kind::Id) return e.name == name;
    for (const AstExpr& a : e.args)
        if (mentions(a, name)) return true;
    return false;
}

// Every call in `n`, with the iterators of the loops around it (outermost first).
void calls(const AstNode& n, std::vector<const AstNode*>& loops,
           const std::function<void(const AstNode&, const std::vector<const AstNode*>&)>& f) {
    if (n.kind == AstNode::Kind::Call) f(n, loops);
    if (n.kind == AstNode::Kind::For) loops.push_back(&n);
    for (const AstNode& c : n.body)
        calls(c, loops, f);
    for (const AstNode& c : n.else_body)
        calls(c, loops, f);
    if (n.kind == AstNode::Kind::For) loops.pop_back();
}

std::set<int> statements_in(const AstNode& n) {
    std::set<int> s;
    std::vector<const AstNode*> loops;
    calls(n, loops, [&](const AstNode& c, const auto&) { s.insert(c.statement); });
    return s;
}

} // namespace

bool has_if(const AstNode& n) {
    if (n.kind == AstNode::Kind::If) return true;
    for (const AstNode& c : n.body)
        if (has_if(c)) return true;
    return false;
}

TEST_CASE("schedule: matmul's init runs in its own loop over j inside the row loop, never in a "
          "k loop (no k == 0 guards); the outer loop over i is parallel") {
    for (auto [m, n, k] : {std::array<std::int64_t, 3>{200, 96, 80}, {7, 33, 5}, {1000, 8, 3}}) {
        CAPTURE(m);
        AstNode root = schedule_kernel(test::matmul_ir(m, n, k));
        INFO(sched::to_string(root));
        CHECK(!has_if(root));
        // A contraction's nest takes its init in; a small kernel keeps it as a nest ahead.
        REQUIRE((root.body.size() == 1 || root.body.size() == 2));
        if (root.body.size() == 2) CHECK(statements_in(root.body[0]) == std::set<int>{0});
        if (m == 200) CHECK(root.body.size() == 1);
        const AstNode* outer = &root.body.back();
        while (outer->kind == AstNode::Kind::Mark)
            outer = &outer->body.at(0);
        const AstNode& nest = *outer;
        REQUIRE(nest.kind == AstNode::Kind::For);
        CHECK(nest.parallel);
        std::vector<const AstNode*> loops;
        int seen = 0;
        calls(nest, loops, [&](const AstNode& c, const std::vector<const AstNode*>& around) {
            ++seen;
            // The outermost loop drives i (counter 0) only.
            CHECK(mentions(c.counters[0], around.front()->iterator));
            CHECK(!mentions(c.counters[1], around.front()->iterator));
            // The innermost loop drives j (counter 1), the stride-1 one.
            CHECK(mentions(c.counters[1], around.back()->iterator));
            CHECK(around.back()->parallel);
            if (c.statement == 0) {
                CHECK(around.size() <= 3); // i tile, i, j: no k loop around the init
                return;
            }
            CHECK(!mentions(c.counters[2], around.front()->iterator));
            // Every loop driving k is sequential.
            for (const AstNode* l : around)
                if (mentions(c.counters[2], l->iterator)) CHECK(!l->parallel);
        });
        CHECK(seen > 0);
    }
}

TEST_CASE("schedule: without direct schedules (explicit tiles), matmul's init is hoisted into "
          "its own nest ahead of the reduction") {
    poly::IslContext ctx;
    poly::ProgramIR p = test::matmul_ir(200, 96, 80);
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    sched::ScheduleOptions isl_only;
    isl_only.direct = false;
    sched::KernelSchedule ks = sched::compute_schedule(ctx, scop, deps, isl_only);
    AstNode root = sched::build_loop_ast(scop, deps, sched::tile_schedule(scop, ks.schedule));
    INFO(sched::to_string(root));
    REQUIRE(root.body.size() == 2);
    CHECK(statements_in(root.body[0]) == std::set<int>{0});
    CHECK(statements_in(root.body[1]) == std::set<int>{1});
}

TEST_CASE("schedule: transpose keeps the write stride-1 innermost; both loops parallel") {
    AstNode root = schedule_kernel(test::transpose_ir(40, 70));
    INFO(sched::to_string(root));
    std::vector<const AstNode*> loops;
    calls(root, loops, [&](const AstNode& c, const std::vector<const AstNode*>& around) {
        CHECK(mentions(c.counters[1], around.back()->iterator));
        for (const AstNode* l : around)
            CHECK(l->parallel);
    });
}

TEST_CASE("schedule: a one-iteration loop removed by isl never takes the parallel mark") {
    // M = 1: isl drops the i loop; the outermost generated loop runs over j and is parallel,
    // the k loop is not.
    AstNode root = schedule_kernel(test::matmul_ir(1, 50, 40));
    INFO(sched::to_string(root));
    std::vector<const AstNode*> loops;
    calls(root.body[1], loops, [&](const AstNode& c, const std::vector<const AstNode*>& around) {
        CHECK(c.counters[0].kind == AstExpr::Kind::Int);
        for (const AstNode* l : around)
            CHECK(l->parallel == !mentions(c.counters[2], l->iterator));
    });
}

TEST_CASE("schedule: on quota the kernel falls back to program order") {
    poly::IslContext ctx;
    poly::ProgramIR p = test::matmul_ir(20, 30, 40);
    poly::Scop scop = poly::build_scop(ctx, p, p.kernels[0]);
    poly::Dependences deps = poly::compute_dependences(scop);
    sched::ScheduleOptions tiny;
    tiny.base_operations = 1;
    tiny.operations_per_statement = 0;
    tiny.direct = false; // a lone contraction is otherwise scheduled without isl's scheduler
    sched::KernelSchedule ks = sched::compute_schedule(ctx, scop, deps, tiny);
    CHECK(ks.fell_back);
    AstNode root = sched::build_loop_ast(scop, deps, sched::tile_schedule(scop, ks.schedule));
    INFO(sched::to_string(root));
    REQUIRE(root.body.size() == 2);
    CHECK(statements_in(root.body[0]) == std::set<int>{0});
    CHECK(statements_in(root.body[1]) == std::set<int>{1});
    CHECK(sched::count_for(root.body[1]) == 3); // untiled: i, j, k
    // The context works normally afterwards.
    sched::KernelSchedule again = sched::compute_schedule(ctx, scop, deps);
    CHECK(!again.fell_back);
}
