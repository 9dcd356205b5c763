// Lifetime-based sharing of temporary buffers (see buffer_plan.hpp).
#include "backends/common/buffer_plan.hpp"

#include "core/allocation.hpp"
#include "core/error.hpp"

#include <cstdlib>
#include <new>

namespace hedra::backend {

BufferPlan plan_temporaries(const poly::ProgramIR& program) {
    std::size_t nb = program.buffers.size();
    std::vector<int> first(nb, -1), last(nb, -1);
    for (int k = 0; k < static_cast<int>(program.kernels.size()); ++k) {
        auto touch = [&](int b) {
            if (b < 0) return;
            if (first[b] < 0) first[b] = k;
            last[b] = k;
        };
        for (const poly::Statement& st : program.kernels[k].statements) {
            touch(st.write_buffer);
            for (const poly::Statement::TupleWrite& w : st.tuple_writes)
                touch(w.buffer);
            for (const poly::Read& r : st.reads)
                touch(r.buffer);
        }
        // A scan's loop: everything it touches is live for the whole loop.
        if (program.kernels[k].loop)
            for (int b : program.kernels[k].loop->touched)
                touch(b);
    }
    BufferPlan plan;
    plan.slot.assign(nb, -1);
    std::vector<int> busy_until; // per slot: the last kernel of its current buffer
    for (int k = 0; k < static_cast<int>(program.kernels.size()); ++k)
        for (std::size_t b = 0; b < nb; ++b) {
            if (program.buffers[b].role != poly::BufferRole::Temporary ||
                program.buffers[b].row_local > 0 || program.buffers[b].is_slice() || first[b] != k)
                continue;
            std::size_t bytes = program.buffers[b].storage_bytes(); // a window: its rows
            int best = -1;
            for (int s = 0; s < static_cast<int>(busy_until.size()); ++s)
                if (busy_until[s] < k && plan.slot_bytes[s] >= bytes &&
                    (best < 0 || plan.slot_bytes[s] < plan.slot_bytes[best]))
                    best = s;
            if (best < 0) {
                best = static_cast<int>(busy_until.size());
                busy_until.push_back(-1);
                plan.slot_bytes.push_back(bytes);
            }
            busy_until[best] = last[b];
            plan.slot[b] = best;
        }
    return plan;
}

AlignedStorage::AlignedStorage(std::size_t n) : bytes(n) {
    check_allocation(n, "a buffer of a compiled program");
    std::size_t rounded = (n + 63) / 64 * 64;
    data = std::aligned_alloc(64, rounded > 0 ? rounded : 64);
    if (!data)
        throw Error("out of memory: cannot allocate " + std::to_string(n) +
                    " bytes for a buffer of a compiled program");
}

AlignedStorage::~AlignedStorage() {
    std::free(data);
}

BufferBinding binding_of(const poly::Buffer& buffer, const std::vector<NodePtr>& placeholders,
                         const std::vector<NodePtr>& leaves, const std::string& backend) {
    BufferBinding bind;
    if (buffer.row_local > 0 || buffer.is_slice()) bind.kind = BufferBinding::Kind::Local;
    if (buffer.role != poly::BufferRole::Input) return bind;
    bind.index = -1;
    for (std::size_t p = 0; p < placeholders.size(); ++p)
        if (placeholders[p] == buffer.node) bind = {BufferBinding::Kind::Placeholder, int(p)};
    for (std::size_t l = 0; l < leaves.size() && bind.index < 0; ++l)
        if (leaves[l] == buffer.node) bind = {BufferBinding::Kind::Leaf, int(l)};
    HEDRA_INTERNAL_CHECK(bind.index >= 0, backend + ": input buffer " + buffer.name +
                                              " is neither a placeholder nor a leaf");
    HEDRA_INTERNAL_CHECK(!buffer.donated || bind.kind == BufferBinding::Kind::Placeholder,
                         backend + ": donated buffer " + buffer.name + " is not a placeholder");
    bind.donated = buffer.donated;
    return bind;
}

} // namespace hedra::backend
