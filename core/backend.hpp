// The backend plug-in interface and the registry that chooses a backend by name.
// core only declares the interface; backends (reference, openmp, cuda, a user's plug-in)
// register themselves, and hedra.hpp registers the built-in ones.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/node.hpp"

namespace hedra {

struct CompileOptions {
    std::vector<std::int64_t> tile_sizes; // empty: the backend's own choice
    int num_threads = 0;                  // 0: HEDRA_NUM_THREADS or the machine's
    // Program::run_notifying may tell each output as soon as it is final (a host program calls
    // back after the kernel that completes it); off, it tells them all at the end.
    bool output_hooks = false;
    // Positions of placeholders whose memory the caller gives up when it calls the program with
    // its inputs moved in (CompiledProgram::operator()(std::vector<HostArray>&&)): an output of
    // the same shape and dtype computed element for element from one of them (an updated
    // parameter or optimizer state) is written into it instead of new memory, where every other
    // read of it comes first. Backends without a memory plan ignore it.
    std::vector<int> donate;
};

// Called once per output of a run, in the order the outputs become final, with the memory of
// the result (which the callback may change in place, e.g. an in-place all-reduce, as long as
// it is done by the time the run's results are read).
struct OutputHook {
    void (*ready)(void* context, int output, void* data) = nullptr;
    void* context = nullptr;
    // Called after every kernel while the run goes on (to progress communication), may be null.
    void (*tick)(void* context) = nullptr;
};

// What one run of a compiled program keeps in memory, in bytes, where the backend plans it
// (the CPU backends do). Temporaries whose lifetimes (first to last kernel touching them) do
// not overlap share a slot of the arena, which the program keeps between runs; row-local
// temporaries live per row inside their kernel and take none. Inputs are bound in place.
struct ProgramMemory {
    std::size_t arena = 0;       // the temporaries' arena: the sum of its slots
    std::size_t temporaries = 0; // the same temporaries, each in memory of its own
    std::size_t results = 0;     // one run's outputs (reused across runs when dropped)
    std::size_t inputs = 0;      // placeholders and leaves read in place
    std::size_t donated = 0;     // outputs written into donated inputs (not in `results`)
    int temporary_count = 0;     // temporaries with memory
    int slots = 0;               // arena slots they share
    int row_local = 0;           // temporaries that need no memory
    // "arena 12.5 MB (31 temporaries in 9 slots; 40.1 MB unshared), results 3.2 MB, inputs
    // 4.0 MB, 5 row-local, 2.1 MB donated"
    std::string to_string() const;
};

// A compiled program: run it many times with new inputs, without rescheduling.
class Program {
public:
    virtual ~Program() = default;
    // `inputs` in the order of the placeholders given to compile; shapes and dtypes have been
    // checked by the caller. Returns one HostArray per output.
    virtual std::vector<HostArray> run(const std::vector<HostArray>& inputs) = 0;
    // run(), telling `hook` of every output as it becomes final. The default runs, then tells
    // every output in order.
    virtual std::vector<HostArray> run_notifying(const std::vector<HostArray>& inputs,
                                                 const OutputHook& hook);
    // run(), where the caller gives up the inputs at CompileOptions::donate's positions: a
    // result may take a donated input's memory when nothing else refers to it
    // (HostArray::unshared()), which then leaves that input empty; one shared elsewhere is
    // copied first. Nothing is taken when it throws. The default runs as run() does.
    virtual std::vector<HostArray> run_donated(std::vector<HostArray>& inputs) {
        return run(inputs);
    }
    // The program's memory plan; empty where the backend does not plan one (reference, cuda).
    virtual std::optional<ProgramMemory> memory() const { return std::nullopt; }
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Compile `outputs`; `placeholders` are the Placeholder nodes the program takes as inputs
    // (every placeholder reachable from outputs must be listed). Nodes with a memo are leaves.
    virtual std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                             const std::vector<NodePtr>& placeholders,
                                             const CompileOptions& options) = 0;
    // Whether compile() takes this graph's symbolic extents (Range::param) as run-time values,
    // one program for every value; if not, compile() in core compiles a program per value.
    virtual bool compiles_symbolic_extents(const std::vector<NodePtr>& outputs,
                                           const std::vector<NodePtr>& placeholders) const {
        (void)outputs;
        (void)placeholders;
        return false;
    }
    // Evaluate once (no placeholders). The default compiles and runs.
    virtual std::vector<HostArray> evaluate(const std::vector<NodePtr>& outputs,
                                            const CompileOptions& options);
};

using BackendFactory = std::function<std::shared_ptr<Backend>()>;

// Register a backend under `name` (replacing an earlier registration of that name).
void register_backend(const std::string& name, BackendFactory factory);
std::vector<std::string> backend_names();
// The backend called `name`; throws hedra::Error listing the known names if there is none.
std::shared_ptr<Backend> get_backend(const std::string& name);
// set_default_backend(name) wins; else $HEDRA_BACKEND; else the built-in default.
void set_default_backend(const std::string& name);
std::string default_backend_name();
std::shared_ptr<Backend> default_backend();
// What the built-in default is ("reference" until a faster backend registers itself so).
void set_builtin_default_backend(const std::string& name);

} // namespace hedra
