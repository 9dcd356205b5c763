// narrow_domains: statements that write a temporary cover only the box its readers read.
#include "partition_testing.hpp"

using namespace hedra;
using test::check_against_reference;
using test::small_values;

namespace {

const poly::Statement* writer_of(const poly::ProgramIR& ir, int buffer, poly::StatementKind kind) {
    for (const poly::Kernel& k : ir.kernels)
        for (const poly::Statement& st : k.statements)
            if (st.write_buffer == buffer && st.kind == kind) return &st;
    return nullptr;
}

int temporary_reduce(const poly::ProgramIR& ir) {
    for (std::size_t b = 0; b < ir.buffers.size(); ++b)
        if (ir.buffers[b].role == poly::BufferRole::Temporary &&
            ir.buffers[b].node->kind == NodeKind::Reduce)
            return static_cast<int>(b);
    return -1;
}

} // namespace

TEST_CASE("narrow_domains: a reduction read only in its interior computes only the interior") {
    Array x = array(small_values(6 * 6 * 5, 1), Shape::of({6, 6, 5}));
    Array y = array(small_values(6 * 6 * 5, 2), Shape::of({6, 6, 5}));
    Array r = sum(x * y, {2});
    Array inner = reshape(r, Shape{range(1, 5), range(2, 6)});
    test::Partitioned p = check_against_reference({inner + 1.0f});
    int b = temporary_reduce(p.ir);
    REQUIRE(b >= 0);
    CHECK(p.ir.buffers[b].sizes == std::vector<std::int64_t>{6, 6}); // the buffer keeps its shape
    const poly::Statement* init = writer_of(p.ir, b, poly::StatementKind::Assign);
    const poly::Statement* update = writer_of(p.ir, b, poly::StatementKind::Update);
    REQUIRE(init);
    REQUIRE(update);
    CHECK(init->extents == std::vector<std::int64_t>{4, 4});
    CHECK(update->extents == std::vector<std::int64_t>{4, 4, 5});
    CHECK(update->write_access.offset(0) == 1); // counters shifted to start at 0
    CHECK(update->write_access.offset(1) == 2);
}

TEST_CASE("narrow_domains: outputs, and temporaries read everywhere, keep their domains") {
    Array x = array(small_values(6 * 6 * 5, 3), Shape::of({6, 6, 5}));
    Array r = sum(x * x, {2});
    Array inner = reshape(r, Shape{range(1, 5), range(1, 5)});
    test::Partitioned out = check_against_reference({r, inner * 2.0f});
    for (const poly::Kernel& k : out.ir.kernels)
        for (const poly::Statement& st : k.statements)
            if (st.kind == poly::StatementKind::Update)
                CHECK(st.extents == std::vector<std::int64_t>{6, 6, 5});

    Array corners = reshape(r, Shape{range(0, 6, 5), range(0, 6, 5)}); // rows/columns 0 and 5
    test::Partitioned strided = check_against_reference({corners + 1.0f});
    const poly::Statement* update =
        writer_of(strided.ir, temporary_reduce(strided.ir), poly::StatementKind::Update);
    REQUIRE(update);
    CHECK(update->extents == std::vector<std::int64_t>{6, 6, 5}); // the box of 0 and 5 is all
}

TEST_CASE("narrow_domains: pieces of a fuse outside the read box are dropped") {
    Array a = array(small_values(4 * 3, 4), Shape::of({4, 3}));
    Array b = array(small_values(4 * 3, 5), Shape::of({4, 3}));
    Array ab = stack(0, {a * 2.0f, b * 3.0f}); // (2, 4, 3), materialized
    Array second = reshape(ab, Shape{range(1, 2), range(4), range(3)});
    test::Partitioned p = check_against_reference({second + 1.0f});
    int statements_writing_stack = 0;
    for (const poly::Kernel& k : p.ir.kernels)
        for (const poly::Statement& st : k.statements)
            statements_writing_stack +=
                p.ir.buffers[st.write_buffer].role == poly::BufferRole::Temporary;
    CHECK(statements_writing_stack <= 1);
}
