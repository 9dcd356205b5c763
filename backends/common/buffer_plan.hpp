// buffer_plan: where a program's temporaries live. A temporary is live from the first kernel
// that touches it to the last; temporaries whose lifetimes do not overlap share one slot of an
// arena that the program keeps between runs, so a 10-sweep stencil needs two buffers, not ten,
// and repeated runs touch warm memory (no page faults). Greedy, in kernel order, best fit.
#pragma once

#include <cstddef>
#include <vector>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend {

struct BufferPlan {
    std::vector<int> slot;               // per buffer: its arena slot, -1 if not a temporary
    std::vector<std::size_t> slot_bytes; // per slot
};

BufferPlan plan_temporaries(const poly::ProgramIR& program);

// 64-byte aligned, uninitialized storage (kernels write every element they later read).
struct AlignedStorage {
    void* data = nullptr;
    std::size_t bytes = 0;
    explicit AlignedStorage(std::size_t n);
    ~AlignedStorage();
    AlignedStorage(const AlignedStorage&) = delete;
    AlignedStorage& operator=(const AlignedStorage&) = delete;
};

} // namespace hedra::backend
