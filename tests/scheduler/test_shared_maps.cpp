// partition.store-shared-maps: a cheap map read by several kernels is recomputed in each, unless
// its inlined tree reads many buffers (partitioner.hpp). A residual stream x_l = x_(l-1) + d_l,
// read at every layer by a reduction (a layer norm's statistics), is the case: inlined, the
// layer-l kernels read x_0 and all of d_1..d_l; stored, each reads x_(l-1) and d_l.
#include <set>

#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

// Distinct buffers a statement reads.
std::size_t buffers_read(const poly::Statement& st) {
    std::set<int> read;
    for (const poly::Read& r : st.reads)
        if (r.buffer >= 0) read.insert(r.buffer);
    return read.size();
}

} // namespace

TEST_CASE("a residual stream read by every layer is stored, not recomputed from all layers") {
    const int layers = 8;
    std::vector<Array> outputs, placeholders;
    std::vector<HostArray> inputs;
    Array x = placeholder(Shape::of({16, 24}), DType::F32, "x0");
    placeholders.push_back(x);
    inputs.push_back(HostArray::from<float>(small_values(16 * 24, 1), {16, 24}));
    for (int l = 1; l <= layers; ++l) {
        Array d = placeholder(Shape::of({16, 24}), DType::F32, "d" + std::to_string(l));
        placeholders.push_back(d);
        inputs.push_back(HostArray::from<float>(
            small_values(16 * 24, static_cast<std::uint32_t>(l + 1)), {16, 24}));
        x = x + d;
        outputs.push_back(sum(x, {1})); // a kernel of its own per layer reads x_l
        outputs.push_back(max(x, {1})); // and another
    }
    outputs.push_back(x * 2.0f);
    // Row fusion keeps the stored layers row-local in one kernel; without it, each is a buffer.
    for (bool fuse_rows : {true, false}) {
        CAPTURE(fuse_rows);
        sched::PartitionOptions options;
        options.fuse_rows = fuse_rows;
        Partitioned p = check_against_reference(outputs, placeholders, inputs, 0.0, options);
        INFO(poly::to_string(p.ir));
        for (const poly::Kernel& k : p.ir.kernels)
            for (const poly::Statement& st : k.statements)
                CHECK(buffers_read(st) <= 2);
    }
    // Without several kernels reading it, a wide map stays inlined: one kernel reads them all.
    Array y = placeholder(Shape::of({16, 24}), DType::F32, "y0");
    Array chain = y;
    std::vector<Array> chain_inputs{y};
    for (int l = 1; l <= layers; ++l) {
        Array d = placeholder(Shape::of({16, 24}), DType::F32, "e" + std::to_string(l));
        chain_inputs.push_back(d);
        chain = chain + d;
    }
    poly::ProgramIR one = sched::partition({sum(chain, {1}).node()}, nodes_of(chain_inputs));
    CHECK(one.kernels.size() == 1);
}
