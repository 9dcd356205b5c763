// partition.in-place-pieces: a temporary copied whole into the interior of a padded buffer is
// written there directly (scheduler/in_place_pieces.hpp): no copy statement, no buffer of its
// own, its other readers read the padded buffer's interior. Checked structurally and by value
// against the reference interpreter, the IR interpreter and the default backend.
#include "partition_testing.hpp"
#include "scheduler/in_place_pieces.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;

namespace {

// Statements of the program that only copy a buffer into another (value Input(0)).
int copies(const poly::ProgramIR& ir) {
    int n = 0;
    for (const poly::Kernel& k : ir.kernels)
        for (const poly::Statement& st : k.statements)
            n += st.kind == poly::StatementKind::Assign && st.reads.size() == 1 &&
                 st.reads[0].buffer >= 0 && st.value->op == ScalarOp::Input;
    return n;
}

int temporaries_of(const poly::ProgramIR& ir, const std::vector<std::int64_t>& sizes) {
    int n = 0;
    for (const poly::Buffer& b : ir.buffers)
        n += b.role == BufferRole::Temporary && b.sizes == sizes;
    return n;
}

} // namespace

TEST_CASE("a map padded for a later kernel and read by another is written into the padding") {
    Array x = small_array({2, 3, 6, 6}, 11);
    Array t = exp(x * 0.5f);                            // stored: read by two kernels
    Array f = pad(t, {{0, 0}, {0, 0}, {2, 2}, {1, 3}}); // its rows' interior
    Array across = sum(f, {1});                         // reads the padded buffer
    Array total = sum(t * t, {2, 3});                   // reads the map itself
    // Kernels not fused by rows (as on the GPU): the map's own kernel moves into the padding's.
    sched::PartitionOptions separate;
    separate.fuse_rows = false;
    Partitioned p = check_against_reference({across, total}, {}, {}, 1e-6, separate);
    CHECK(copies(p.ir) == 0);
    CHECK(p.ir.kernels.size() == 3); // the padding (border, then the map), and the two sums
    bool written_in_place = false;
    for (const poly::Kernel& k : p.ir.kernels)
        for (const poly::Statement& st : k.statements)
            written_in_place =
                written_in_place ||
                (p.ir.buffers[st.write_buffer].sizes == std::vector<std::int64_t>{2, 3, 10, 10} &&
                 st.write_access.offset(2) == 2 && st.write_access.offset(3) == 1);
    CHECK(written_in_place);
    CHECK(temporaries_of(p.ir, {2, 3, 6, 6}) == 0); // no buffer of the map's own
    check_backend(across, 1e-6);
    check_backend(total, 1e-6);
    // Rows fused (the CPU's default): the map is one row of a kernel, kept in the row.
    Partitioned rows = check_against_reference({across, total}, {}, {}, 1e-6);
    CHECK(rows.ir.kernels.size() == 1);
}

namespace {

poly::Statement assign(const std::string& name, std::vector<std::int64_t> extents, int buffer,
                       AffineMap write, ScalarExpr value, std::vector<poly::Read> reads = {}) {
    poly::Statement st;
    st.name = name;
    st.extents = std::move(extents);
    st.write_buffer = buffer;
    st.write_access = std::move(write);
    st.value = std::move(value);
    st.reads = std::move(reads);
    return st;
}

AffineMap shift(std::int64_t by) {
    return AffineMap(1, 1, {1}, {by});
}

// A buffer of n f32 elements added to the program.
void add_buffer(poly::ProgramIR& ir, const char* name, std::int64_t n, BufferRole role) {
    poly::Buffer b;
    b.name = name;
    b.sizes = {n};
    b.role = role;
    ir.buffers.push_back(b);
}

// in [4] -> B = 2 in (its own kernel) -> F [6] = 0 then F[i + 1] = B[i] -> out = 3 F, and with
// `later` a write F[2] = 7 after the copy.
poly::ProgramIR padded_copy(bool later) {
    poly::ProgramIR ir;
    auto buffer = [&](const char* name, std::int64_t n, BufferRole role) {
        add_buffer(ir, name, n, role);
    };
    buffer("b0", 4, BufferRole::Input);
    buffer("b1", 4, BufferRole::Temporary);
    buffer("b2", 6, BufferRole::Temporary);
    buffer("b3", 6, BufferRole::Output);
    ir.inputs = {0};
    ir.outputs = {3};
    const AffineMap id = AffineMap::identity(1);
    const ScalarExpr in0 = scalar_input(0, DType::F32);
    ir.kernels.push_back(
        {"k0",
         {assign("S0", {4}, 1, id, scalar_binary(ScalarOp::Mul, in0, scalar_const(2, DType::F32)),
                 {{0, id}})}});
    poly::Kernel pad{"k1",
                     {assign("S1", {6}, 2, id, scalar_const(0, DType::F32)),
                      assign("S2", {4}, 2, shift(1), in0, {{1, id}})}};
    if (later)
        pad.statements.push_back(assign("S3", {1}, 2, shift(2), scalar_const(7, DType::F32)));
    ir.kernels.push_back(pad);
    ir.kernels.push_back(
        {"k2",
         {assign("S4", {6}, 3, id, scalar_binary(ScalarOp::Mul, in0, scalar_const(3, DType::F32)),
                 {{2, id}})}});
    return ir;
}

} // namespace

TEST_CASE("a copy into a buffer that is written again afterwards stays a copy") {
    HostArray in = HostArray::from(std::vector<float>{1, 2, 3, 4}, {4});
    // Without the later write: B's kernel moves into F's, after the border; B is gone.
    poly::ProgramIR moved = padded_copy(false);
    sched::write_pieces_in_place(moved);
    CHECK(moved.buffers.size() == 3);
    REQUIRE(moved.kernels.size() == 2);
    REQUIRE(moved.kernels[0].statements.size() == 2);
    CHECK(moved.kernels[0].statements[0].name == "S1");
    CHECK(moved.kernels[0].statements[1].name == "S0");
    CHECK(moved.kernels[0].statements[1].write_access == shift(1));
    check_close(interpret_ir(moved, {in}).at(0), std::vector<double>{0, 6, 12, 18, 24, 0});
    // With it, the copy stays: moving B's writes after the later one would undo it.
    poly::ProgramIR kept = padded_copy(true);
    sched::write_pieces_in_place(kept);
    CHECK(kept.buffers.size() == 4);
    CHECK(kept.kernels.size() == 3);
    check_close(interpret_ir(kept, {in}).at(0), std::vector<double>{0, 6, 21, 18, 24, 0});
}

TEST_CASE("a copy's writers may read what their kernel computes before them") {
    // One kernel (rows fused): C = in + 1, then B = 2 C, then F = 0 and F[i + 1] = B[i] (a pooling
    // adjoint's tie count, its pieces, the padding): the pieces move past the border only, so
    // C, written before them, stays before them and B is written into F.
    poly::ProgramIR ir;
    add_buffer(ir, "b0", 4, BufferRole::Input);
    add_buffer(ir, "b1", 4, BufferRole::Temporary); // C
    add_buffer(ir, "b2", 4, BufferRole::Temporary); // B
    add_buffer(ir, "b3", 6, BufferRole::Output);    // F
    ir.inputs = {0};
    ir.outputs = {3};
    const AffineMap id = AffineMap::identity(1);
    const ScalarExpr in0 = scalar_input(0, DType::F32);
    ir.kernels.push_back(
        {"k0",
         {assign("S0", {4}, 1, id, scalar_binary(ScalarOp::Add, in0, scalar_const(1, DType::F32)),
                 {{0, id}}),
          assign("S1", {4}, 2, id, scalar_binary(ScalarOp::Mul, in0, scalar_const(2, DType::F32)),
                 {{1, id}}),
          assign("S2", {6}, 3, id, scalar_const(0, DType::F32)),
          assign("S3", {4}, 3, shift(1), in0, {{2, id}})}});
    sched::write_pieces_in_place(ir);
    CAPTURE(poly::to_string(ir));
    CHECK(ir.buffers.size() == 3);
    REQUIRE(ir.kernels.size() == 1);
    REQUIRE(ir.kernels[0].statements.size() == 3);
    CHECK(ir.kernels[0].statements[0].name == "S0");
    CHECK(ir.kernels[0].statements[1].name == "S2");
    CHECK(ir.kernels[0].statements[2].name == "S1");
    HostArray in = HostArray::from(std::vector<float>{1, 2, 3, 4}, {4});
    check_close(interpret_ir(ir, {in}).at(0), std::vector<double>{0, 4, 6, 8, 10, 0});
}
