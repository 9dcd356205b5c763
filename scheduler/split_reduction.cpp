// Long reductions over the leading axis split into blocks (see split_reduction.hpp).
#include "scheduler/split_reduction.hpp"

#include <cstdlib>
#include <string>

namespace hedra::sched {
namespace {

using poly::Kernel;
using poly::Statement;
using poly::StatementKind;

// The number of blocks for `rows` rows: 16, 8 or 4, whichever divides them; 0 if none does.
std::int64_t block_count(std::int64_t rows) {
    for (std::int64_t p : {16, 8, 4})
        if (rows % p == 0) return p;
    return 0;
}

bool splittable(const poly::ProgramIR& program, const Kernel& k) {
    if (k.statements.size() != 2) return false;
    const Statement& init = k.statements[0];
    const Statement& up = k.statements[1];
    if (init.kind != StatementKind::Assign || !init.reads.empty() || !init.tuple_writes.empty() ||
        up.kind != StatementKind::Update || !up.tuple_writes.empty() ||
        init.write_buffer != up.write_buffer || up.reduction_dims != std::vector<int>{0} ||
        up.extents.size() < 2 || poly::has_indirect(up))
        return false;
    if (up.reduce_op != ReduceOp::Sum && up.reduce_op != ReduceOp::Max &&
        up.reduce_op != ReduceOp::Min)
        return false;
    for (int r = 0; r < up.write_access.out_rank(); ++r)
        if (up.write_access.coeff(r, 0) != 0) return false;
    std::int64_t results = 1;
    for (std::size_t d = 1; d < up.extents.size(); ++d)
        results *= up.extents[d];
    const poly::Buffer& out = program.buffers.at(static_cast<std::size_t>(up.write_buffer));
    return up.extents[0] >= kMinSplitRows && block_count(up.extents[0]) > 0 &&
           results <= kMaxSplitResults && out.role != poly::BufferRole::Input;
}

int next_statement_number(const poly::ProgramIR& program) {
    int next = 0;
    for (const Kernel& k : program.kernels)
        poly::for_each_statement(k, [&](const Statement& st) {
            if (st.name.size() > 1 && st.name[0] == 'S')
                next = std::max(next, std::atoi(st.name.c_str() + 1) + 1);
        });
    return next;
}

// (d0, d1, d2, ...) -> (d0 * block + d1, d2, ...): a block's row back to the original row.
AffineMap unblock(int rank, std::int64_t block) {
    std::vector<std::int64_t> m(static_cast<std::size_t>(rank) * (rank + 1), 0);
    m[0] = block;
    m[1] = 1;
    for (int o = 1; o < rank; ++o)
        m[static_cast<std::size_t>(o) * (rank + 1) + o + 1] = 1;
    return AffineMap(rank + 1, rank, std::move(m), std::vector<std::int64_t>(rank, 0));
}

} // namespace

void split_outer_reductions(poly::ProgramIR& program) {
    std::vector<Kernel> out;
    int number = next_statement_number(program);
    auto name = [&] { return "S" + std::to_string(number++); };
    for (Kernel& k : program.kernels) {
        if (!splittable(program, k)) {
            out.push_back(std::move(k));
            continue;
        }
        const Statement init = k.statements[0];
        const Statement up = k.statements[1];
        const int rank = static_cast<int>(up.extents.size());
        const std::int64_t blocks = block_count(up.extents[0]);
        const std::int64_t rows = up.extents[0] / blocks;
        // Copies: the push_back below may move the buffers (a reference would dangle).
        const poly::Buffer& written = program.buffers[static_cast<std::size_t>(up.write_buffer)];
        const DType result_dtype = written.dtype;
        const NodePtr result_node = written.node;
        std::vector<std::int64_t> partial_sizes{blocks};
        partial_sizes.insert(partial_sizes.end(), up.extents.begin() + 1, up.extents.end());
        const int partial = static_cast<int>(program.buffers.size());
        poly::Buffer partials;
        partials.name = "b" + std::to_string(partial);
        partials.dtype = result_dtype;
        partials.sizes = partial_sizes;
        partials.node = result_node;
        program.buffers.push_back(std::move(partials));
        // The blocks: partial[p, ...] = identity, then += over the block's rows.
        Kernel blocked{k.name, {}};
        Statement zero = init;
        zero.name = name();
        zero.extents = partial_sizes;
        zero.write_buffer = partial;
        zero.write_access = AffineMap::identity(rank);
        Statement step = up;
        step.name = name();
        step.extents = {blocks, rows};
        step.extents.insert(step.extents.end(), up.extents.begin() + 1, up.extents.end());
        step.write_buffer = partial;
        std::vector<int> kept{0};
        for (int d = 2; d <= rank; ++d)
            kept.push_back(d);
        step.write_access = AffineMap::projection(rank + 1, kept);
        for (poly::Read& r : step.reads)
            r.access = r.access.compose(unblock(rank, rows));
        for (poly::ParamBound& b : step.param_bounds)
            b.expr = b.expr.compose(unblock(rank, rows));
        // The fold runs over the blocks (a static count): every partial is initialized.
        Statement fold_template = up;
        fold_template.param_bounds.clear();
        step.reduction_dims = {1};
        blocked.statements = {zero, step};
        // The result: its init, then the partials reduced over the blocks.
        Kernel combine{k.name, {}};
        Statement fold = fold_template;
        fold.name = name();
        fold.extents = partial_sizes;
        fold.reads = {{partial, AffineMap::identity(rank)}};
        fold.value = scalar_input(0, result_dtype);
        combine.statements = {init, fold};
        out.push_back(std::move(blocked));
        out.push_back(std::move(combine));
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].name = "k" + std::to_string(i);
    program.kernels = std::move(out);
}

} // namespace hedra::sched
