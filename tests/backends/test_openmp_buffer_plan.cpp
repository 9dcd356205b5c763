// Tests of the temporaries' arena plan (backends/common/buffer_plan.hpp): buffers whose
// lifetimes do not overlap share a slot; overlapping ones never do; inputs and outputs get none.
#include <doctest/doctest.h>

#include "backends/common/buffer_plan.hpp"
#include "hedra.hpp"
#include "support/kernel_ir_samples.hpp"

using namespace hedra;

namespace {

// Kernel k copies buffer `from` into buffer `to`.
poly::Kernel copy_kernel(int k, int from, int to) {
    poly::Statement s;
    s.name = "S" + std::to_string(k);
    s.extents = {16};
    s.write_buffer = to;
    s.write_access = AffineMap::identity(1);
    s.reads = {{from, AffineMap::identity(1)}};
    s.value = scalar_input(0, DType::F32);
    return {"k" + std::to_string(k), {s}};
}

} // namespace

TEST_CASE("buffer plan: a chain of temporaries needs two slots") {
    using poly::BufferRole;
    poly::ProgramIR p;
    p.buffers.push_back(test::ir_buffer("b0", {16}, BufferRole::Input));
    for (int t = 1; t <= 5; ++t)
        p.buffers.push_back(test::ir_buffer("b" + std::to_string(t), {16}, BufferRole::Temporary));
    p.buffers.push_back(test::ir_buffer("b6", {16}, BufferRole::Output));
    for (int k = 0; k < 6; ++k)
        p.kernels.push_back(copy_kernel(k, k, k + 1));
    backend::BufferPlan plan = backend::plan_temporaries(p);
    CHECK(plan.slot[0] == -1);
    CHECK(plan.slot[6] == -1);
    CHECK(plan.slot_bytes.size() == 2);
    for (int t = 1; t < 5; ++t)
        CHECK(plan.slot[t] != plan.slot[t + 1]); // live together in kernel t
    CHECK(plan.slot[1] == plan.slot[3]);
}

TEST_CASE("program memory: the arena of a matmul chain, its results and inputs in bytes") {
    // y = (((x a) b) c) d: t1 = x a, t2 = t1 b, t3 = t2 c are temporaries of 32 x 32 f32; t1 is
    // dead when t3 is computed, so two slots hold the three.
    auto m = [](unsigned seed) {
        std::vector<float> v(32 * 32);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>((i * 7 + seed) % 11) - 5.0f;
        return array(v, Shape::of({32, 32}));
    };
    Array x = placeholder(Shape::of({32, 32}), DType::F32, "x");
    Array y = matmul(matmul(matmul(matmul(x, m(1)), m(2)), m(3)), m(4));
    ComputeOptions options;
    options.backend = "openmp";
    CompiledProgram p = compile({y}, {x}, options);
    std::optional<ProgramMemory> mem = p.memory();
    REQUIRE(mem.has_value());
    const std::size_t one = 32 * 32 * 4;
    CHECK(mem->temporary_count == 3);
    CHECK(mem->temporaries == 3 * one);
    CHECK(mem->slots == 2);
    CHECK(mem->arena == 2 * one);
    CHECK(mem->results == one);
    CHECK(mem->inputs == 5 * one); // x and the four matrices, read in place
    CHECK(mem->to_string().find("arena 0.0 MB (3 temporaries in 2 slots") == 0);
    ComputeOptions ref;
    ref.backend = "reference";
    CHECK_FALSE(compile({y}, {x}, ref).memory().has_value());
}
