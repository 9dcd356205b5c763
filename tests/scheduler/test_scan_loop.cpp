// A scan in the kernel IR: one loop kernel whose kernels are its body's, StepSlice buffers for
// its rows, operands staged, the states' two-row window when nothing reads them, one forward
// loop for a training step (merge-scans), and the GPU lowering's refusal.
#include <doctest/doctest.h>

#include "hedra.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

std::vector<NodePtr> nodes(const std::vector<Array>& a) {
    std::vector<NodePtr> n;
    for (const Array& x : a)
        n.push_back(x.node());
    return n;
}

int loops(const poly::ProgramIR& ir) {
    int n = 0;
    for (const poly::Kernel& k : ir.kernels)
        n += k.loop ? 1 : 0;
    return n;
}

} // namespace

TEST_CASE("scan loop: one kernel of kernels, slices of the stacked buffers, a window of states") {
    Array xs = placeholder(Shape::of({12, 4, 8}), DType::F32, "xs");
    Array w = placeholder(Shape::of({8, 8}), DType::F32, "w");
    auto [h, ys] = scan(
        [&](const Array& c, const Array& x) {
            Array n = tanh(x + matmul(c, w));
            return std::pair{n, n * 2.0f};
        },
        zeros(Shape::of({4, 8})), xs);
    poly::ProgramIR ir = sched::partition(nodes({h}), nodes({xs, w}));
    REQUIRE(loops(ir) == 1);
    const poly::Kernel* loop = nullptr;
    for (const poly::Kernel& k : ir.kernels)
        if (k.loop) loop = &k;
    CHECK(loop->statements.empty());
    CHECK(loop->loop->steps == 12);
    CHECK(!loop->loop->reverse);
    CHECK(!loop->loop->kernels.empty());
    int windows = 0, edges = 0;
    for (int s : loop->loop->slices) {
        const poly::Buffer& b = ir.buffers[static_cast<std::size_t>(s)];
        REQUIRE(b.is_slice());
        CHECK(b.storage_bytes() == 0);
        windows += b.slice.window == 2;
        edges += b.slice.edge >= 0;
        CHECK(std::binary_search(loop->loop->touched.begin(), loop->loop->touched.end(), s));
    }
    CHECK(windows == 2); // the carry in and the carry out: nothing reads the states
    CHECK(edges == 1);   // the last step writes the final carry
    // The unread ys are not computed: the body has one output, the carry.
    CHECK(poly::to_string(ir).find("scan loop: t from 0 to T-1, T = 12") != std::string::npos);

    // Reading the outputs keeps every step's row.
    poly::ProgramIR all = sched::partition(nodes({h, ys}), nodes({xs, w}));
    int stacked = 0;
    for (const poly::Buffer& b : all.buffers)
        stacked += b.is_slice() && b.slice.window == 0 ? 1 : 0;
    CHECK(stacked >= 2); // the x slices and the ys rows
}

TEST_CASE("scan loop: a training step runs one forward loop and one reverse loop") {
    Array xs = placeholder(Shape::of({9, 4, 8}), DType::F32, "xs");
    Array w = placeholder(Shape::of({8, 8}), DType::F32, "w");
    auto [h, ys] = scan(
        [&](const Array& c, const Array& x) {
            Array n = tanh(x + matmul(c, w));
            return std::pair{n, n};
        },
        zeros(Shape::of({4, 8})), xs);
    Array loss = sum(h * h) + sum(ys);
    Array g = grad(loss, w);
    poly::ProgramIR ir = sched::partition(nodes({loss, g}), nodes({xs, w}));
    CHECK(loops(ir) == 2); // the forward scan and the one extended with its contractions: one
    bool backward = false;
    for (const poly::Kernel& k : ir.kernels)
        backward = backward || (k.loop && k.loop->reverse);
    CHECK(backward);
}

TEST_CASE("scan loop: the GPU lowering refuses a scan with a clear error") {
    Array xs = placeholder(Shape::of({3, 4}), DType::F32, "xs");
    auto [h, ys] = scan(
        [](const Array& c, const Array& x) {
            return std::pair{c + x, c};
        },
        zeros(Shape::of({4})), xs);
    sched::Target gpu = sched::Target::for_gpu(sched::GpuTarget{});
    poly::ProgramIR ir = sched::partition(nodes({h}), nodes({xs}), sched::partition_options(gpu));
    CHECK_THROWS_WITH_AS(sched::lower(ir, gpu), doctest::Contains("the program has a scan"), Error);
}

TEST_CASE("scan loop: two stacked scans and their adjoints run four loops") {
    Array xs = placeholder(Shape::of({7, 4, 8}), DType::F32, "xs");
    Array w1 = placeholder(Shape::of({8, 8}), DType::F32, "w1");
    Array w2 = placeholder(Shape::of({8, 8}), DType::F32, "w2");
    auto layer = [](const Array& w, const Array& in) {
        return scan(
            [&](const Array& c, const Array& x) {
                Array n = tanh(x + matmul(c, w));
                return std::pair{n, n};
            },
            zeros(Shape::of({4, 8})), in);
    };
    auto [h1, y1] = layer(w1, xs);
    auto [h2, y2] = layer(w2, y1);
    Array loss = sum(y2 * y2);
    std::vector<Array> g = grad(loss, {w1, w2});
    poly::ProgramIR ir = sched::partition(nodes({loss, g[0], g[1]}), nodes({xs, w1, w2}));
    CHECK(loops(ir) == 4);
    // And the values are the reference's.
    std::vector<NodePtr> out = nodes({loss, g[0], g[1]});
    std::vector<HostArray> in;
    for (const NodePtr& p : nodes({xs, w1, w2})) {
        HostArray h(p->shape.sizes(), DType::F32);
        auto v = h.mutable_values<float>();
        for (std::size_t k = 0; k < v.size(); ++k)
            v[k] = 0.05f * static_cast<float>(static_cast<int>(k * 7 % 11) - 5);
        in.push_back(h);
    }
    auto want = get_backend("reference")->compile(out, nodes({xs, w1, w2}), {})->run(in);
    auto got = get_backend("openmp")->compile(out, nodes({xs, w1, w2}), {})->run(in);
    for (std::size_t k = 0; k < want.size(); ++k)
        for (std::int64_t i = 0; i < want[k].size(); ++i)
            CHECK(got[k].flat(i) == doctest::Approx(want[k].flat(i)).epsilon(1e-4));
}

TEST_CASE("scan loop: a closed-over matrix read as x·Wᵀ is transposed once before the loop") {
    Array xs = placeholder(Shape::of({5, 4, 8}), DType::F32, "xs");
    Array w = placeholder(Shape::of({6, 8}), DType::F32, "w"); // (out, in): nn::linear's layout
    Array u = placeholder(Shape::of({6, 6}), DType::F32, "u");
    auto [h, ys] = scan(
        [&](const Array& c, const Array& x) {
            Array n = tanh(matmul(x, transpose(w)) + matmul(c, transpose(u)));
            return std::pair{n, n};
        },
        zeros(Shape::of({4, 6})), xs);
    poly::ProgramIR ir = sched::partition(nodes({h}), nodes({xs, w, u}));
    // Before the loop: kernels writing a (8, 6) and a (6, 6) copy that read w and u swapped.
    int transposed = 0;
    for (const poly::Kernel& k : ir.kernels) {
        if (k.loop) break;
        for (const poly::Statement& st : k.statements)
            for (const poly::Read& r : st.reads)
                if ((r.buffer == ir.inputs[1] || r.buffer == ir.inputs[2]) &&
                    r.access.coeff(0, 1) == 1 && r.access.coeff(1, 0) == 1)
                    ++transposed;
    }
    CHECK(transposed == 2);
}
