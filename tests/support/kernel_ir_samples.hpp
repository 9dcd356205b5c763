// Hand-built kernel IR programs for tests of the polyhedral layer, the scheduler and the C
// printer, independent of the partitioner: matmul (init + update), a 1D map, a transpose.
#pragma once

#include "polyhedral/kernel_ir.hpp"

namespace hedra::test {

inline poly::Buffer ir_buffer(std::string name, std::vector<std::int64_t> sizes,
                              poly::BufferRole role, DType dtype = DType::F32) {
    poly::Buffer b;
    b.name = std::move(name);
    b.sizes = std::move(sizes);
    b.role = role;
    b.dtype = dtype;
    return b;
}

// C[M,N] = sum_k A[M,K] * B[K,N]: S0 C[i,j] = 0; S1 C[i,j] += A[i,k] * B[k,j].
inline poly::ProgramIR matmul_ir(std::int64_t m, std::int64_t n, std::int64_t k,
                                 DType dtype = DType::F32) {
    poly::ProgramIR p;
    p.buffers = {ir_buffer("b0", {m, k}, poly::BufferRole::Input, dtype),
                 ir_buffer("b1", {k, n}, poly::BufferRole::Input, dtype),
                 ir_buffer("b2", {m, n}, poly::BufferRole::Output, dtype)};
    poly::Statement init;
    init.name = "S0";
    init.extents = {m, n};
    init.write_buffer = 2;
    init.write_access = AffineMap::identity(2);
    init.value = scalar_const(0.0, dtype);
    poly::Statement update;
    update.name = "S1";
    update.kind = poly::StatementKind::Update;
    update.extents = {m, n, k};
    update.write_buffer = 2;
    update.write_access = AffineMap::projection(3, {0, 1});
    update.reads = {{0, AffineMap::projection(3, {0, 2})}, {1, AffineMap::projection(3, {2, 1})}};
    update.value = scalar_binary(ScalarOp::Mul, scalar_input(0, dtype), scalar_input(1, dtype));
    update.reduce_op = ReduceOp::Sum;
    update.reduction_dims = {2};
    p.kernels.push_back({"k0", {init, update}});
    p.outputs = {2};
    p.inputs = {0, 1};
    return p;
}

// out[i,j] = in[j,i] * 2 + i (the index read as an i64 converted to f32).
inline poly::ProgramIR transpose_ir(std::int64_t rows, std::int64_t cols) {
    poly::ProgramIR p;
    p.buffers = {ir_buffer("b0", {cols, rows}, poly::BufferRole::Input),
                 ir_buffer("b1", {rows, cols}, poly::BufferRole::Output)};
    poly::Statement s;
    s.name = "S0";
    s.extents = {rows, cols};
    s.write_buffer = 1;
    s.write_access = AffineMap::identity(2);
    s.reads = {{0, AffineMap::projection(2, {1, 0})}, {-1, AffineMap::projection(2, {0})}};
    ScalarExpr twice =
        scalar_binary(ScalarOp::Mul, scalar_input(0, DType::F32), scalar_const(2.0, DType::F32));
    s.value =
        scalar_binary(ScalarOp::Add, twice, scalar_cast(scalar_input(1, DType::I64), DType::F32));
    p.kernels.push_back({"k0", {s}});
    p.outputs = {1};
    p.inputs = {0};
    return p;
}

} // namespace hedra::test
