// host_program: the run-time shell of a program compiled to host machine code, which every CPU
// backend that prints C (openmp, c) shares: which memory each buffer of the ProgramIR gets
// (placeholders and leaves bound in place, temporaries in an arena kept between runs, results
// from a small pool), and the call of the generated entry
//   extern "C" void <entry>(void** buffers, int num_threads)
// (with symbolic extents, buffers[number of buffers] points to their values).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/buffer_plan.hpp"
#include "backends/common/compiled_module.hpp"
#include "core/backend.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend {

struct HostProgramCode {
    std::shared_ptr<CompiledModule> module;
    void (*entry)(void**, int) = nullptr;
    std::vector<std::vector<std::int64_t>> sizes; // per buffer
    std::vector<DType> dtypes;                    // per buffer
    std::vector<BufferBinding> bindings;          // per buffer
    std::vector<int> outputs;                     // buffer per output
    // Symbolic extents: per buffer and axis, the index of its value in the program's params
    // (-1: static). The values are read from the inputs' sizes and passed to the entry as
    // buffers[buffers.size()], a pointer to long long[num_params].
    std::vector<std::vector<int>> param_slots;
    std::size_t num_params = 0;
    // Output hooks (CompileOptions::output_hooks): the entry calls back after every kernel,
    // buffers[buffers.size() + 1]; ready_after[k] lists the outputs final after kernel k (the
    // last one that touches them), ready_at_end those no kernel touches.
    bool kernel_hooks = false;
    std::vector<std::vector<int>> ready_after;
    std::vector<int> ready_at_end;
    BufferPlan plan;      // temporaries' arena slots
    ProgramMemory memory; // the plan in bytes
    // The arena, kept between runs; a run that finds it busy uses a private one.
    mutable std::mutex arena_mutex;
    mutable std::vector<std::unique_ptr<AlignedStorage>> arena;
    // Per result buffer, the storage of its last two results (guarded by arena_mutex). A run
    // reuses one its caller has dropped (use_count 1: only this pool holds it): fresh memory
    // costs a page fault per 4 KiB (16 MiB: ~4000 faults, several ms) on every call. Two, so
    // that a loop feeding each result back as the next input (a training step) finds one.
    mutable std::vector<std::vector<std::shared_ptr<AlignedStorage>>> result_pool;
};

// Sizes, dtypes, bindings, outputs and the arena plan of `ir`; `backend` names the caller in
// internal errors. The module and entry are the caller's to set.
std::shared_ptr<HostProgramCode> bind_host_program(const poly::ProgramIR& ir,
                                                   const std::vector<NodePtr>& placeholders,
                                                   const std::vector<NodePtr>& leaves,
                                                   const std::string& backend);

// `give_up` (null, or `inputs` itself): the caller gives up the donated inputs, and those that
// are unshared are written in place and left empty; any other donated input is copied first,
// so that a result never overwrites memory its caller still reads.
std::vector<HostArray> run_host_program(const HostProgramCode& code,
                                        const std::vector<HostArray>& inputs,
                                        const std::vector<NodePtr>& leaves, int threads,
                                        const OutputHook* hook = nullptr,
                                        std::vector<HostArray>* give_up = nullptr);

// A compiled program: the shared code, this graph's leaves, and the thread count, resolved at
// each run by `thread_count(requested)` (null: one thread).
class HostProgram : public Program {
public:
    HostProgram(std::shared_ptr<const HostProgramCode> code, std::vector<NodePtr> leaves,
                int requested_threads, int (*thread_count)(int) = nullptr)
        : code_(std::move(code)), leaves_(std::move(leaves)), threads_(requested_threads),
          thread_count_(thread_count) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        return run_host_program(*code_, inputs, leaves_,
                                thread_count_ ? thread_count_(threads_) : 1);
    }
    std::vector<HostArray> run_notifying(const std::vector<HostArray>& inputs,
                                         const OutputHook& hook) override {
        return run_host_program(*code_, inputs, leaves_,
                                thread_count_ ? thread_count_(threads_) : 1, &hook);
    }
    std::vector<HostArray> run_donated(std::vector<HostArray>& inputs) override {
        return run_host_program(*code_, inputs, leaves_,
                                thread_count_ ? thread_count_(threads_) : 1, nullptr, &inputs);
    }
    std::optional<ProgramMemory> memory() const override { return code_->memory; }

private:
    std::shared_ptr<const HostProgramCode> code_;
    std::vector<NodePtr> leaves_;
    int threads_;
    int (*thread_count_)(int);
};

} // namespace hedra::backend
