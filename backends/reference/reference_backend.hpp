// The "reference" backend: compile() only records the outputs and placeholders, and every run
// interprets the graph (reference/interpreter.hpp). Slow and simple: the oracle for the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace hedra::backend {

class ReferenceBackend : public Backend {
public:
    std::string name() const override { return "reference"; }
    // Throws hedra::Error if an output needs a placeholder that is not listed.
    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders,
                                     const CompileOptions& options) override;
};

} // namespace hedra::backend
