// Tests of the temporaries' arena plan (backends/common/buffer_plan.hpp): buffers whose
// lifetimes do not overlap share a slot; overlapping ones never do; inputs and outputs get none.
#include <doctest/doctest.h>

#include "backends/common/buffer_plan.hpp"
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
