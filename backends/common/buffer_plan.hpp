// buffer_plan: where a program's temporaries live. A temporary is live from the first kernel
// that touches it to the last; temporaries whose lifetimes do not overlap share one slot of an
// arena that the program keeps between runs (row-local buffers need none), so a 10-sweep stencil
// needs two buffers, not ten, and repeated runs touch warm memory (no page faults). Greedy, in
// kernel order, best fit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend {

struct BufferPlan {
    std::vector<int> slot;               // per buffer: its arena slot, -1 if not a temporary
    std::vector<std::size_t> slot_bytes; // per slot
};

BufferPlan plan_temporaries(const poly::ProgramIR& program);

// How one buffer of the program gets its memory at run time: allocated by the program, an
// input bound in place (a placeholder by position, a leaf by its position in GraphKey::leaves),
// or none (a row-local buffer lives inside its kernel). A donated placeholder is also an
// output, written in place (scheduler/donate_inputs.hpp).
struct BufferBinding {
    enum class Kind : std::uint8_t { Allocate, Placeholder, Leaf, Local } kind = Kind::Allocate;
    int index = 0;
    bool donated = false;
};
// The binding of `buffer`; `backend` names the caller in the internal error raised when an
// input buffer is neither a placeholder nor a leaf.
BufferBinding binding_of(const poly::Buffer& buffer, const std::vector<NodePtr>& placeholders,
                         const std::vector<NodePtr>& leaves, const std::string& backend);

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
