// The "c" backend: the scheduler's passes (scheduler/lower.hpp), the C-style renderer with plain
// loops (backends/common/c_renderer.hpp, serial_dialect: no OpenMP, no threads), compiled by the
// system C++ compiler into a shared object that is dlopen'ed, and run by the host program shell
// (backends/common/host_program.hpp). It is the simplest portable fallback where LLVM's JIT is
// absent, and the proof that a code-generating backend is a dialect plus a compiler.
// Compiler: $HEDRA_CC, else `c++`. Programs are cached by graph structure within the process;
// each program's source stays in <temp>/hedra-c/external (named by its SHA-256) for debugging.
#pragma once

#include <memory>
#include <string>

#include "backends/common/program_cache.hpp"
#include "core/backend.hpp"

namespace hedra::backend {

struct HostProgramCode;

class CBackend : public Backend {
public:
    std::string name() const override { return "c"; }
    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders,
                                     const CompileOptions& options) override;

private:
    ProgramCache<HostProgramCode> cache_;
};

} // namespace hedra::backend
