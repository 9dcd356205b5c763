// Evaluation: compute() evaluates arrays now; compile() builds a reusable program.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/backend.hpp"

namespace hedra {

struct ComputeOptions : CompileOptions {
    std::string backend; // empty: default_backend()
};

// Evaluates the arrays together (shared subgraphs once); the arrays are memoized afterwards.
std::vector<HostArray> compute(const std::vector<Array>& arrays,
                               const ComputeOptions& options = {});
HostArray compute(const Array& a, const ComputeOptions& options = {});
template <class... More>
std::vector<HostArray> compute(const Array& a, const Array& b, const More&... more) {
    return compute(std::vector<Array>{a, b, more...});
}

// A compiled program over placeholders: call it with one HostArray per placeholder.
class CompiledProgram {
public:
    CompiledProgram(std::shared_ptr<Program> program, std::vector<NodePtr> placeholders,
                    std::vector<NodePtr> outputs);
    // Throws hedra::Error if an input's sizes or dtype differ from its placeholder's.
    std::vector<HostArray> operator()(const std::vector<HostArray>& inputs) const;
    // The same call, telling `hook` of every output as it becomes final (Program::run_notifying).
    std::vector<HostArray> operator()(const std::vector<HostArray>& inputs,
                                      const OutputHook& hook) const;
    // The same call, giving up the inputs at CompileOptions::donate's positions: a result may
    // be written into a donated input's memory (Program::run_donated), which leaves that input
    // empty; the other inputs are left as they were, and all of them when it throws.
    std::vector<HostArray> operator()(std::vector<HostArray>&& inputs) const;
    std::size_t num_inputs() const { return placeholders_.size(); }
    // Its memory plan (Program::memory), where the backend has one.
    std::optional<ProgramMemory> memory() const;
    std::size_t num_outputs() const { return outputs_.size(); }

private:
    // The symbolic extents' values the inputs give (checked against the placeholders).
    std::map<int, std::int64_t> check_inputs(const std::vector<HostArray>& inputs) const;

    std::shared_ptr<Program> program_;
    std::vector<NodePtr> placeholders_;
    std::vector<NodePtr> outputs_;
    bool symbolic_ = false; // some axis is symbolic: sizes bound per call
};

CompiledProgram compile(const std::vector<Array>& outputs, const std::vector<Array>& placeholders,
                        const ComputeOptions& options = {});

} // namespace hedra
