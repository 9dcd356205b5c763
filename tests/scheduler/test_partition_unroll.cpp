// partition: a reduction of at most 4 terms per result read only inside one other kernel (a
// 2x2 pooling window's tie count) is unrolled into the statements reading it instead of stored,
// unless several pieces of a fuse distributed into that kernel read it (a pooling adjoint).
// Checked structurally and by value against the reference interpreter, through the IR
// interpreter and the default (openmp) backend.
#include "ad/grad.hpp"
#include "nn/layers.hpp"
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;

TEST_CASE("a 2x2 window sum read by one map is unrolled into the map's kernel") {
    Array x = small_array({6, 8}, 1);
    // win[i, j, a, b] = x[2i + a, 2j + b]
    Array win = view(x, Shape::of({3, 4, 2, 2}), AffineMap(4, 2, {2, 0, 1, 0, 0, 2, 0, 1}, {0, 0}));
    Array count = sum(win, {2, 3});
    Array y = exp(count * 0.125f);
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);
    CHECK(p.ir.kernels.size() == 1);
    check_backend(y, 1e-6);
    // max, min and product, keeping the reduced axes.
    for (const Array& r : std::vector<Array>{max(win, {2, 3}, true), min(win, {3}, true),
                                             reduce(ReduceOp::Prod, win, {2})}) {
        Array z = r * 2.0f + 1.0f;
        Partitioned q = check_against_reference({z});
        CHECK(count_buffers(q.ir, BufferRole::Temporary) == 0);
        check_backend(z);
    }
}

TEST_CASE("a sum of more terms, or one read by two kernels, is still stored") {
    Array x = small_array({5, 6}, 2);
    Array five = sum(x, {0}); // 5 terms
    Array y = exp(five * 0.1f);
    Partitioned p = check_against_reference({y}, {}, {}, 1e-6);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 1);
    Array pair = sum(small_array({2, 6}, 3), {0}); // 2 terms, read by two outputs' kernels
    Partitioned q = check_against_reference({exp(pair * 0.1f), pair * 3.0f}, {}, {}, 1e-6);
    CHECK(count_buffers(q.ir, BufferRole::Temporary) == 1); // (one map is its epilogue)
}

TEST_CASE("a window's tie count read by the four pieces of a pooling adjoint is stored once") {
    // The gradient of a 2x2 max pool after a ReLU routes each window's cotangent, split among
    // its ties, to four strided pieces, one statement each; unrolled into each, the count
    // would be evaluated four times per window. Values rounded to halves make ties.
    Array x = floor(small_array({2, 3, 8, 8}, 4) * 2.0f) * 0.5f;
    Array g = small_array({2, 3, 4, 4}, 5);
    Array dx = grad(sum(nn::maxpool2d(relu(x), 2) * g), x);
    Partitioned p = check_against_reference({dx}, {}, {}, 1e-6);
    CAPTURE(poly::to_string(p.ir));
    int count = -1, readers = 0, updates = 0;
    for (std::size_t b = 0; b < p.ir.buffers.size(); ++b)
        if (p.ir.buffers[b].role == BufferRole::Temporary &&
            p.ir.buffers[b].sizes == std::vector<std::int64_t>{2, 3, 4, 4})
            count = static_cast<int>(b);
    REQUIRE(count >= 0);
    for (const poly::Kernel& k : p.ir.kernels)
        for (const poly::Statement& st : k.statements) {
            updates += st.kind == poly::StatementKind::Update;
            bool reads = false;
            for (const poly::Read& r : st.reads)
                reads = reads || r.buffer == count;
            readers += reads;
        }
    CHECK(updates == 0); // one Assign of its four terms, not a sum's loop
    CHECK(readers == 4);
    // Padded for a next layer's input gradient, the pieces still write into the padding
    // (partition.in-place-pieces): the count written before them in their kernel is no
    // obstacle. (Before compute(dx), which memoizes dx.)
    Array across = sum(pad(dx, {{0, 0}, {0, 0}, {2, 2}, {2, 2}}), {1});
    Partitioned q = check_against_reference({across}, {}, {}, 1e-6);
    CAPTURE(poly::to_string(q.ir));
    int copies = 0;
    for (const poly::Kernel& k : q.ir.kernels)
        for (const poly::Statement& st : k.statements)
            copies += st.kind == poly::StatementKind::Assign && st.reads.size() == 1 &&
                      st.value->op == ScalarOp::Input;
    CHECK(copies == 0);
    check_backend(dx, 1e-6);
}
