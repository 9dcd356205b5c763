// Symbolic extents (Range::param, `dynamic`): binding their values when a compiled program is
// called, the sizes they give, and a graph specialized to given values, for backends that
// compile a program per value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/node.hpp"

namespace hedra {

// The value of each symbolic extent, by parameter number (Range::param).
using ParamValues = std::map<int, std::int64_t>;

// Whether any node reachable from `nodes` has a symbolic axis.
bool has_symbolic_extents(const std::vector<NodePtr>& nodes);
// The parameters of the nodes reachable from `nodes` (not behind computed nodes), sorted.
std::vector<int> symbolic_params(const std::vector<NodePtr>& nodes);

// The values the inputs give the placeholders' symbolic axes. Throws hedra::Error naming the
// input when a size exceeds its declared maximum, two inputs disagree on one extent, or a
// static axis differs from its placeholder's; `op` names the caller.
ParamValues bind_params(const std::vector<NodePtr>& placeholders,
                        const std::vector<HostArray>& inputs, const std::string& op);

// Whether the symbolic axes of `shape` change no stride of a dense row-major layout: at most
// one, with only axes of size 1 before it (so [n, ...] data is laid out as for the maximum).
bool symbolic_axis_leads(const Shape& shape);

// The sizes of `shape` with its symbolic axes at their values.
std::vector<std::int64_t> actual_sizes(const Shape& shape, const ParamValues& values);

// `nodes` rebuilt with every symbolic axis at its value (placeholders keep their identity; the
// views, reductions and maps above them are rebuilt on the new shapes).
std::vector<NodePtr> specialize(const std::vector<NodePtr>& nodes, const ParamValues& values);

// A program for backends without symbolic extents: the graph specialized to each call's values
// and compiled once per distinct value (kept, so a loop over two batch sizes compiles twice).
class SpecializingProgram : public Program {
public:
    SpecializingProgram(std::shared_ptr<Backend> backend, std::vector<NodePtr> outputs,
                        std::vector<NodePtr> placeholders, CompileOptions options)
        : backend_(std::move(backend)), outputs_(std::move(outputs)),
          placeholders_(std::move(placeholders)), options_(std::move(options)) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override;
    std::vector<HostArray> run_notifying(const std::vector<HostArray>& inputs,
                                         const OutputHook& hook) override;
    std::vector<HostArray> run_donated(std::vector<HostArray>& inputs) override;

private:
    std::shared_ptr<Program> program_for(const std::vector<HostArray>& inputs);

    std::shared_ptr<Backend> backend_;
    std::vector<NodePtr> outputs_, placeholders_;
    CompileOptions options_;
    std::mutex mutex_;
    std::map<ParamValues, std::shared_ptr<Program>> programs_;
};

} // namespace hedra
