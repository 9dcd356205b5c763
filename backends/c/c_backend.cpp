// The c backend: lower, render in the serial style, compile with the system compiler (see the
// header).
#include "backends/c/c_backend.hpp"

#include <cstdlib>
#include <filesystem>

#include "backends/common/c_renderer.hpp"
#include "backends/common/external_compiler.hpp"
#include "backends/common/graph_key.hpp"
#include "backends/common/hash.hpp"
#include "backends/common/host_program.hpp"
#include "core/dump.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"

namespace hedra::backend {
namespace {

std::string compiler() {
    const char* cc = std::getenv("HEDRA_CC");
    return cc && *cc ? cc : "c++";
}

// The program's source: every kernel pass, then the serial renderer.
std::string render(const poly::ProgramIR& ir, const CompileOptions& options) {
    sched::ChosenObserver observer(nullptr);
    sched::LowerOptions passes;
    passes.tile_sizes = options.tile_sizes;
    passes.observer = observer.watching();
    const sched::Target target = sched::Target::for_cpu();
    sched::LoweredKernels loops = sched::lower(ir, target, passes);
    PrintOptions print;
    print.dialect = serial_dialect();
    print.vector_bytes = target.cpu.vector_bytes;
    dump::PassTimer timer("print");
    std::string source = print_program(ir, loops.asts, print);
    observer->emitted(source, "cpp");
    return source;
}

} // namespace

std::unique_ptr<Program> CBackend::compile(const std::vector<NodePtr>& outputs,
                                           const std::vector<NodePtr>& placeholders,
                                           const CompileOptions& options) {
    GraphKey key = graph_key(outputs, placeholders);
    std::string text = tile_sizes_key(options.tile_sizes) + donate_key(options.donate) + key.text;
    std::shared_ptr<const HostProgramCode> code = cache_.find(text);
    if (!code) {
        dump::CompileScope dump_scope;
        dump::write_graph(outputs);
        poly::ProgramIR ir = sched::partition(outputs, placeholders,
                                              sched::partition_options(sched::Target::for_cpu()),
                                              donated_placeholders(placeholders, options.donate));
        std::shared_ptr<HostProgramCode> made =
            bind_host_program(ir, placeholders, key.leaves, "c");
        std::string source = render(ir, options);
        // Values are computed exactly as the other backends compute them (c_renderer.hpp).
        const std::vector<std::string> flags = {"-O2", "-fPIC", "-ffp-contract=off",
                                                "-fno-math-errno", "-w"};
        std::string compiler_name = compiler();
        dump::PassTimer timer("jit");
        made->module = compile_with_external_compiler(
            compiler_name, source, flags, sha256_hex(compiler_name + "\n" + source),
            std::filesystem::temp_directory_path() / "hedra-c");
        made->entry = made->module->function<void(void**, int)>(PrintOptions{}.entry);
        code = cache_.insert(std::move(text), std::move(made));
    }
    return std::make_unique<HostProgram>(std::move(code), std::move(key.leaves), 1);
}

} // namespace hedra::backend
