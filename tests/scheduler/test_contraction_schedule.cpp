// contraction_schedule: which counters become the vector (V) and row (A) loops, the tiles, and
// the printed register tile for layouts where V is not the result's stride-1 axis.
#include <doctest/doctest.h>

#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"
#include "scheduler/contraction_schedule.hpp"
#include "scheduler/partition.hpp"
#include "scheduler/target.hpp"

using namespace hedra;

namespace {

// The kernel of `out` (a contraction) and its update statement.
struct Contraction {
    poly::ProgramIR ir;
    int kernel = -1, statement = -1;
};

Contraction contraction_of(const Array& out) {
    Contraction c;
    c.ir = sched::partition({out.node()}, {});
    for (std::size_t k = 0; k < c.ir.kernels.size(); ++k)
        for (std::size_t s = 0; s < c.ir.kernels[k].statements.size(); ++s)
            if (c.ir.kernels[k].statements[s].kind == poly::StatementKind::Update) {
                c.kernel = static_cast<int>(k);
                c.statement = static_cast<int>(s);
            }
    REQUIRE(c.kernel >= 0);
    return c;
}

// Host data (a leaf buffer, not a constant the partitioner would fold).
Array zeros_of(std::vector<std::int64_t> sizes) {
    Shape shape = Shape::of(sizes);
    return array(std::vector<float>(static_cast<std::size_t>(shape.size()), 0.5f), shape);
}

} // namespace

TEST_CASE("contraction plan: matmul A·B vectorizes along B's columns, rows of A broadcast") {
    Contraction c = contraction_of(matmul(zeros_of({64, 96}), zeros_of({96, 80})));
    auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
    REQUIRE(plan);
    CHECK(plan->v == 1); // j
    CHECK(plan->a == 0); // i
    CHECK(plan->reduction == std::vector<int>{2});
}

TEST_CASE("contraction plan: a convolution vectorizes along output channels (result stride "
          "196), its reduction loops in order, the batch loop outside for parallelism") {
    Array x = zeros_of({8, 16, 18, 18});
    Array w = zeros_of({32, 16, 5, 5});
    Contraction c = contraction_of(nn::conv2d(x, w, Array(), 1, 0));
    const poly::Statement& st = c.ir.kernels[c.kernel].statements[c.statement];
    REQUIRE(st.extents == std::vector<std::int64_t>{8, 32, 14, 14, 16, 5, 5});
    auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
    REQUIRE(plan);
    CHECK(plan->v == 1);
    CHECK(plan->reduction == std::vector<int>{4, 5, 6}); // (c, kh, kw): kw steps least
    CHECK(plan->parallel >= 0);
    CHECK(plan->parallel != plan->a);
    // 16·5·5 = 400 reduction points fit one panel: nothing tiled there.
    for (int k : plan->reduction)
        CHECK(plan->tile[k] == st.extents[k]);
}

TEST_CASE("contraction plan: a long reduction is tiled so a packed panel fits the cache") {
    Contraction c = contraction_of(matmul(zeros_of({256, 4096}), zeros_of({4096, 512})));
    const poly::Statement& st = c.ir.kernels[c.kernel].statements[c.statement];
    auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
    REQUIRE(plan);
    CHECK(plan->tile[2] < st.extents[2]);
    CHECK(plan->tile[plan->v] % 16 == 0);
    CHECK(plan->tile[2] * plan->tile[plan->v] * 4 <= 128 * 1024);
}

// A weight gradient dW = dYᵀ·X over many tokens: dY's rows (A) are far apart along the
// tokens (K), so they are copied into row panels; with K tiled too, the V tiles run inside the
// K tile (under the mark), so each A tile's panels are copied once per K tile, not once per
// V tile as well.
TEST_CASE("contraction plan: a weight gradient over a tiled K copies its row panels once per "
          "K tile") {
    Array dy = zeros_of({2048, 1536});
    Array x = zeros_of({2048, 384});
    Contraction c = contraction_of(matmul(transpose(dy), x));
    const poly::Statement& st = c.ir.kernels[c.kernel].statements[c.statement];
    auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
    REQUIRE(plan);
    CHECK(plan->a == 0); // dW's rows: dY's columns
    CHECK(plan->v == 1);
    REQUIRE(plan->reduction.size() == 1);
    CHECK(plan->tile[plan->reduction[0]] < st.extents[plan->reduction[0]]);
    CHECK(plan->v_tiles_inside);
    CHECK(plan->tile[plan->a] < st.extents[plan->a]);
}

// x·Wᵀ: a panel is gathered across the rows of one operand (strided along V). With few rows
// per panel fill K stays whole (no partial sums); with many, each register block reads the
// panel again, so K is tiled for the panel to stay in L1.
TEST_CASE("contraction plan: x·Wᵀ keeps K whole for few rows, tiles it for many") {
    struct Case {
        std::int64_t rows, out, k;
        bool whole;
    };
    for (const Case& t : {Case{64, 64, 784, true}, Case{2048, 384, 1536, false}}) {
        CAPTURE(t.rows);
        Contraction c =
            contraction_of(matmul(zeros_of({t.rows, t.k}), transpose(zeros_of({t.out, t.k}))));
        const poly::Statement& st = c.ir.kernels[c.kernel].statements[c.statement];
        auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
        REQUIRE(plan);
        REQUIRE(plan->reduction.size() == 1);
        const std::int64_t kc = plan->tile[plan->reduction[0]];
        if (t.whole)
            CHECK(kc == st.extents[plan->reduction[0]]);
        else
            CHECK(kc <= 256);
    }
    // A GPT's activations (batch, position, features): the batch runs outside, 256 rows per
    // panel fill.
    Contraction c =
        contraction_of(nn::linear(zeros_of({8, 256, 1536}), zeros_of({384, 1536}), Array()));
    auto plan = sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement);
    REQUIRE(plan);
    REQUIRE(plan->reduction.size() == 1);
    CHECK(plan->tile[plan->reduction[0]] <= 256);
}

TEST_CASE("contraction plan: a per-row division folds into the product (softmax · V)") {
    // Attention's probabilities times V: exp(s) / sum(exp(s)) stays inlined in the
    // contraction, and division prints on the vector types.
    Array e = zeros_of({64, 48});
    Array s = zeros_of({64, 1});
    Contraction c = contraction_of(matmul(e / s, zeros_of({48, 40})));
    CHECK(sched::plan_contraction(c.ir, c.ir.kernels[c.kernel], c.statement));
}

TEST_CASE("contraction plan: not for other reductions, tiny ones, or reads of the result") {
    Contraction m = contraction_of(max(zeros_of({64, 64, 8}), {2}));
    CHECK(!sched::plan_contraction(m.ir, m.ir.kernels[m.kernel], m.statement));
    Contraction tiny = contraction_of(matmul(zeros_of({4, 4}), zeros_of({4, 4})));
    CHECK(!sched::plan_contraction(tiny.ir, tiny.ir.kernels[tiny.kernel], tiny.statement));
}

TEST_CASE("contraction: the printed register tile gathers a strided result and packs a "
          "strided operand over several reduction loops") {
    Array x = zeros_of({8, 16, 18, 18});
    Array w = zeros_of({32, 16, 5, 5});
    poly::ProgramIR ir = sched::partition({nn::conv2d(x, w, Array(), 1, 0).node()}, {});
    std::string code = backend::lower(ir).source;
    CHECK(code.find("register tile") != std::string::npos);
    CHECK(code.find("(hd_vf){") != std::string::npos); // C gathered along V
    // The weight panel, one block of 2 vectors wide.
    const int width = 2 * sched::tile_vector_bytes(32, 4) / 4;
    CHECK(code.find("hd_pk0[hd_pi * " + std::to_string(width) + "L") != std::string::npos);
}
