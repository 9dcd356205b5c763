// The register tile on its own: which nests the register-tile pass recognizes
// (scheduler/register_tile.hpp), the block shape it picks from the CPU target it is given, that
// the renderer (backends/common/register_tile.hpp) prints only what it chose, and the values
// the blocks and remainders
// compute (rows past the last block of R in blocks of 4, 2, 1; columns in 2 vectors, 1 vector,
// then the original loops), against a naive loop.
#include <doctest/doctest.h>

#include <functional>
#include <random>

#include "backends/common/register_tile.hpp"
#include "hedra.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/register_tile.hpp"
#include "scheduler/target.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;
using sched::AstNode;

namespace {

const AstNode* find_mark(const AstNode& n) {
    if (n.kind == AstNode::Kind::Mark && n.mark == sched::kPermutableMark) return &n;
    for (const auto* list : {&n.body, &n.else_body})
        for (const AstNode& c : *list)
            if (const AstNode* m = find_mark(c)) return m;
    return nullptr;
}

struct Lowered {
    poly::ProgramIR ir;
    std::vector<AstNode> asts;
};

Lowered lowered(poly::ProgramIR ir, const sched::CpuTarget& cpu = sched::cpu_target()) {
    sched::KernelPassOptions options;
    options.cpu = cpu;
    sched::LoopProgram loops = sched::lower_kernels(ir, options);
    return {std::move(ir), std::move(loops.asts)};
}

// The register tile of kernel 0's first permutable nest, printed; "" when it does not apply.
std::string tile_text(const Lowered& l) {
    const AstNode* mark = find_mark(l.asts.at(0));
    if (!mark) return "";
    int names = 0;
    backend::RegisterTileContext cx{l.ir, l.ir.kernels[0],
                                    [](const AstNode&, int, std::string& out) { out += "S;\n"; },
                                    names, sched::cpu_target().vector_bytes};
    std::string out;
    return backend::print_register_tile(cx, *mark, 0, out) ? out : "";
}

} // namespace

TEST_CASE("register tile: a matmul nest is recognized, with its init in A's body") {
    Lowered l = lowered(test::matmul_ir(64, 48, 32));
    const AstNode* mark = find_mark(l.asts.at(0));
    REQUIRE(mark != nullptr);
    auto nest = sched::match_register_tile(l.ir, l.ir.kernels[0], *mark);
    REQUIRE(nest.has_value());
    CHECK(nest->ks.size() == 1);
    CHECK(nest->c_stride == 1);        // V is the result's stride-1 axis
    CHECK(nest->init_loop != nullptr); // C = 0 ahead of the K loop: accumulators start at 0
    CHECK(nest->epi_loop == nullptr);
    // The pass's choice is on the mark, and in the AST's dump.
    REQUIRE(mark->register_tile != nullptr);
    CHECK(mark->register_tile->reads.size() == 2);
    CHECK(sched::to_string(l.asts[0]).find("// register tile: ") != std::string::npos);
}

TEST_CASE("register tile: the rows and vectors come from the CpuTarget the pass is given") {
    sched::CpuTarget avx2 = sched::cpu_target_named("avx2");
    sched::CpuTarget avx512 = sched::cpu_target_named("avx512");
    for (const sched::CpuTarget& cpu : {avx2, avx512}) {
        CAPTURE(cpu.name);
        Lowered l = lowered(test::matmul_ir(64, 64, 64), cpu);
        const AstNode* mark = find_mark(l.asts.at(0));
        REQUIRE(mark != nullptr);
        REQUIRE(mark->register_tile != nullptr);
        CHECK(mark->register_tile->vector_bytes == cpu.vector_bytes);
        CHECK(mark->register_tile->lanes == cpu.vector_bytes / 4);
        CHECK(mark->register_tile->rows == cpu.register_tile_rows);
    }
    // Fewer vector registers: fewer rows (R x 2 accumulators beside the operands' registers).
    sched::CpuTarget few = avx2;
    few.vector_registers = 8;
    Lowered l = lowered(test::matmul_ir(64, 64, 64), few);
    const AstNode* mark = find_mark(l.asts.at(0));
    REQUIRE(mark != nullptr);
    if (mark->register_tile)
        CHECK(mark->register_tile->rows == sched::register_block_rows(few, 1, 0));
}

TEST_CASE("register tile: the renderer prints no tile the pass did not choose") {
    Lowered l = lowered(test::matmul_ir(64, 48, 32));
    AstNode* mark = const_cast<AstNode*>(find_mark(l.asts.at(0)));
    REQUIRE(mark != nullptr);
    CHECK(!tile_text(l).empty());
    mark->register_tile = nullptr;
    CHECK(tile_text(l).empty());
}

TEST_CASE("register tile: no tile where there is no contraction") {
    CHECK(tile_text(lowered(test::transpose_ir(64, 64))).empty());
}

TEST_CASE("register tile: R rows of 2 vectors, as the CPU target's registers allow") {
    const sched::CpuTarget& cpu = sched::cpu_target();
    const int f32_width = 2 * cpu.vector_bytes / 4, f64_width = 2 * cpu.vector_bytes / 8;
    std::string f32 = tile_text(lowered(test::matmul_ir(64, 64, 64)));
    CHECK(f32.find("register tile: " + std::to_string(cpu.register_tile_rows) + " x " +
                   std::to_string(f32_width)) != std::string::npos);
    std::string f64 = tile_text(lowered(test::matmul_ir(64, 64, 64, DType::F64)));
    CHECK(f64.find("register tile: " + std::to_string(cpu.register_tile_rows) + " x " +
                   std::to_string(f64_width)) != std::string::npos);
    // Fewer rows than R: the block is as tall as the rows.
    std::string short_a = tile_text(lowered(test::matmul_ir(3, 64, 64)));
    CHECK(short_a.find("register tile: 3 x ") != std::string::npos);
}

TEST_CASE("register tile: every row and column remainder computes the naive product") {
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    ComputeOptions o;
    o.backend = "openmp";
    for (int m : {1, 2, 3, 5, 6, 7, 11, 13})
        for (int n : {1, 8, 9, 17, 33}) {
            const int k = 5;
            CAPTURE(m);
            CAPTURE(n);
            std::vector<float> a(static_cast<std::size_t>(m * k)),
                b(static_cast<std::size_t>(k * n));
            for (float& x : a)
                x = dist(gen);
            for (float& x : b)
                x = dist(gen);
            HostArray got =
                compute(matmul(array(a, Shape::of({m, k})), array(b, Shape::of({k, n}))), o);
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    double want = 0;
                    for (int p = 0; p < k; ++p)
                        want += double(a[i * k + p]) * b[p * n + j];
                    CHECK(got.flat(i * n + j) == doctest::Approx(want).epsilon(1e-5));
                }
        }
}

// A weight gradient's product reads A transposed (A stored K x M, far apart along K): the tile
// copies it into row panels of R rows first. Every full panel and the rows past the last one
// compute the naive product.
TEST_CASE("register tile: row panels of a transposed operand compute the naive product") {
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> dist(-1, 1);
    const int m = 259, k = 37, n = 33; // two blocks of rows: 22 panels of 6; 21 and 1 row
    std::vector<float> a(static_cast<std::size_t>(k * m)), b(static_cast<std::size_t>(k * n));
    for (float& x : a)
        x = dist(gen);
    for (float& x : b)
        x = dist(gen);
    Array at = placeholder(Shape::of({k, m}), DType::F32, "a");
    Array bt = placeholder(Shape::of({k, n}), DType::F32, "b");
    Array product = matmul(transpose(at), bt);
    Lowered l = lowered(sched::partition({product.node()}, {at.node(), bt.node()}));
    std::string dump;
    for (const AstNode& ast : l.asts)
        dump += sched::to_string(ast);
    INFO(dump);
    CHECK(dump.find("row panels 22 blocks of 37 K") != std::string::npos);
    ComputeOptions o;
    o.backend = "openmp";
    for (int threads : {1, 2}) {
        o.num_threads = threads;
        HostArray got = compile({product}, {at, bt},
                                o)({HostArray::from(a, {k, m}), HostArray::from(b, {k, n})})[0];
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double want = 0;
                for (int p = 0; p < k; ++p)
                    want += double(a[p * m + i]) * b[p * n + j];
                CHECK(got.flat(i * n + j) == doctest::Approx(want).epsilon(1e-5));
            }
    }
}

// A target with more rows than 8 (the remainder blocks 4, 2, 1 covered only 7 rows past the last
// block: 13 rows were left out): the remainder takes each power of two below R once.
TEST_CASE("register tile: the rows past the last block of a 14-row tile are all computed") {
    sched::CpuTarget cpu = sched::cpu_target_named("avx512");
    cpu.register_tile_rows = 14;
    Lowered l = lowered(test::matmul_ir(2 * 14 + 13, 64, 32), cpu);
    const std::string text = tile_text(l);
    INFO(text);
    REQUIRE(!text.empty());
    for (int rows : {8, 4, 2, 1})
        CHECK(text.find("if (hd_r + " + std::to_string(rows - 1) + " <= ") != std::string::npos);
}
