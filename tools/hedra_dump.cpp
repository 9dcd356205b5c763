// hedra-dump: shows what hedra's compiler does to a program, stage by stage, following PPCG's
// conventions. The input is a graph file (core/graph_file.hpp) or a built-in example; the
// stages come from the backend's own pass list through a CompileObserver, so what is printed is
// what a compile does. Output is deterministic: the same input gives the same bytes.
// Exit status: 0 ok, 1 bad input, 2 usage, 3 illegal schedule (--load-schedule), 4 internal.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "backends/openmp/lower.hpp"
#include "core/dump.hpp"
#include "core/error.hpp"
#include "core/graph_dot.hpp"
#include "core/graph_file.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"
#include "tools/dump_examples.hpp"
#include "tools/dump_report.hpp"
#ifdef HEDRA_DUMP_HAVE_CUDA
#include "backends/cuda/render/cuda_lower.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#endif

#ifndef HEDRA_VERSION_STRING
#define HEDRA_VERSION_STRING "unknown"
#endif

namespace hedra::tools {
namespace {

struct Options {
    std::string input;
    std::vector<Stage> stages; // empty: every stage the format and target allow
    Format format = Format::Text;
    std::string target = "openmp";
    std::vector<std::int64_t> tile_sizes;
    std::string save_schedule, load_schedule, output;
};

ToolError usage(const std::string& what) {
    return ToolError(2, what + " (see hedra-dump --help)");
}

std::string stage_list() {
    std::string s;
    for (const auto& [stage, name] : stage_names())
        s += (s.empty() ? "" : ",") + std::string(name);
    return s;
}

// The compiler's pass list (scheduler/lower.hpp), one pass per line: name, unit, the HEDRA_DUMP
// stage written after it, and what it does.
std::string pass_list_text() {
    std::string s = "# pass (timer)                unit     dump stage (HEDRA_DUMP)     what\n";
    for (const sched::PassInfo& p : sched::pass_list()) {
        std::string_view dumps = p.dumps.empty() ? "-" : p.dumps;
        char line[128];
        std::snprintf(line, sizeof line, "%-29.*s %-8.*s %-27.*s ", int(p.name.size()),
                      p.name.data(), int(p.unit.size()), p.unit.data(), int(dumps.size()),
                      dumps.data());
        s += line + std::string(p.what) + "\n";
    }
    return s;
}

std::string help_text() {
    return "usage: hedra-dump [options] INPUT\n"
           "\n"
           "Shows each stage of compiling a hedra program. INPUT is a built-in example (" +
           example_names() +
           ")\nor a graph file (JSON, docs/graph_files.md; write ./matmul for a file of an "
           "example's name).\n"
           "\n"
           "options:\n"
           "  --dump=STAGES         comma-separated, in any order (default: all that apply):\n"
           "                        " +
           stage_list() +
           "\n"
           "  --format=FORMAT       text (default), yaml (constraints and schedules), json (all),\n"
           "                        dot (graph), jscop (domains, accesses, schedules; Polly's)\n"
           "  --target=TARGET       openmp (default), reference (graph only), cuda (graph,\n"
           "                        partition, mapping: the GPU passes' decisions, code, and\n"
           "                        ptx when asked for: NVRTC's output\n"
           "                        for $HEDRA_CUDA_ARCH if a compute_XY, else compute_90;\n"
           "                        where the CUDA toolkit was found)\n"
           "  --tile-sizes=N,N,...  tile sizes per band member, outermost first (last repeats)\n"
           "  --save-schedule=FILE  write each kernel's computed schedule (isl YAML in JSON)\n"
           "  --load-schedule=FILE  use these schedules instead of computing them; a schedule\n"
           "                        that violates a dependence is rejected (exit status 3)\n"
           "  -o FILE               write the output to FILE instead of standard output\n"
           "  --list-passes         the compiler's passes, in order, with their dump stages\n"
           "  --help                this text\n"
           "  --version             hedra's version\n"
           "\n"
           "exit status: 0 ok, 1 bad input, 2 usage, 3 illegal schedule\n"
           "environment: HEDRA_DUMP=DIR and HEDRA_TIME_PASSES=1 work here too (docs/env_vars.md)\n";
}

// The stages a target has: the reference backend interprets the graph; the cuda backend maps the
// kernel IR in closed form (the GPU passes' mapping, docs/pipeline.md) and prints CUDA C++.
bool target_has(const std::string& target, Stage s) {
    if (target == "reference") return s == Stage::Graph;
    if (target == "cuda")
        return s == Stage::Graph || s == Stage::Partition || s == Stage::Mapping ||
               s == Stage::Code || s == Stage::Ptx;
    return s != Stage::Ptx && s != Stage::Mapping;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::string item;
    for (char c : s + ",") {
        if (c != ',') {
            item += c;
            continue;
        }
        out.push_back(item);
        item.clear();
    }
    return out;
}

void set_stages(Options& o, const std::string& value) {
    for (const std::string& name : split(value)) {
        if (name == "all") { // every stage but the cuda target's (the mapping; the PTX, NVRTC's)
            for (const auto& [stage, n] : stage_names())
                if (stage != Stage::Ptx && stage != Stage::Mapping) o.stages.push_back(stage);
            continue;
        }
        bool found = false;
        for (const auto& [stage, n] : stage_names())
            if (name == n) {
                o.stages.push_back(stage);
                found = true;
            }
        if (!found)
            throw usage("unknown stage '" + name + "' in --dump; stages are " + stage_list());
    }
}

void set_format(Options& o, const std::string& value) {
    for (Format f : {Format::Text, Format::Yaml, Format::Json, Format::Dot, Format::Jscop})
        if (value == format_name(f)) {
            o.format = f;
            return;
        }
    throw usage("unknown format '" + value + "'; formats are text, yaml, json, dot, jscop");
}

void set_tile_sizes(Options& o, const std::string& value) {
    for (const std::string& item : split(value)) {
        char* end = nullptr;
        long long v = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > (1LL << 30))
            throw usage("--tile-sizes takes positive integers separated by commas, not '" + value +
                        "'");
        o.tile_sizes.push_back(v);
    }
}

// Returns nothing when --help, --version or --list-passes was handled. The command line is
// CLI11's ("--name value" or "--name=value"); its errors become usage errors (exit status 2).
std::optional<Options> parse_arguments(int argc, char** argv) {
    Options o;
    std::string dump, format, tile_sizes;
    bool help = false, version = false, list_passes = false;
    CLI::App app{"hedra-dump", "hedra-dump"};
    app.set_help_flag(); // --help prints help_text(), not CLI11's listing
    app.add_flag("-h,--help", help);
    app.add_flag("--version", version);
    app.add_flag("--list-passes", list_passes);
    app.add_option("--dump", dump);
    app.add_option("--format", format);
    app.add_option("--target", o.target);
    app.add_option("--tile-sizes", tile_sizes);
    app.add_option("--save-schedule", o.save_schedule);
    app.add_option("--load-schedule", o.load_schedule);
    app.add_option("-o,--output", o.output);
    std::vector<std::string> inputs;
    app.add_option("input", inputs);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        throw usage(e.what());
    }
    if (inputs.size() > 1)
        throw usage("more than one input ('" + inputs[0] + "' and '" + inputs[1] + "')");
    if (!inputs.empty()) o.input = inputs[0];
    if (help) {
        std::cout << help_text();
        return std::nullopt;
    }
    if (version) {
        std::cout << "hedra-dump (hedra) " HEDRA_VERSION_STRING "\n";
        return std::nullopt;
    }
    if (list_passes) {
        std::cout << pass_list_text();
        return std::nullopt;
    }
    for (const auto& [name, value] :
         {std::pair{"--dump", &dump}, {"--format", &format}, {"--tile-sizes", &tile_sizes}}) {
        if (app.count(name) && value->empty())
            throw usage("option '" + std::string(name) + "' needs a value");
    }
    if (!dump.empty()) set_stages(o, dump);
    if (!format.empty()) set_format(o, format);
    if (!tile_sizes.empty()) set_tile_sizes(o, tile_sizes);
    if (o.input.empty())
        throw usage("no input: give a graph file or an example (" + example_names() + ")");
#ifndef HEDRA_DUMP_HAVE_CUDA
    if (o.target == "cuda")
        throw usage("target 'cuda' is not built into this hedra-dump (no CUDA toolkit at "
                    "configure time); targets are openmp, reference");
#endif
    if (o.target != "openmp" && o.target != "reference" && o.target != "cuda")
        throw usage("unknown target '" + o.target + "'; targets are openmp, reference, cuda");
    if (o.target != "openmp" && (!o.save_schedule.empty() || !o.load_schedule.empty()))
        throw usage("the " + o.target +
                    " target has no isl schedules to save or load "
                    "(use --target=openmp)");
    if (o.stages.empty()) {
        // (Not the PTX: it needs NVRTC at run time, so only when asked for.)
        for (const auto& [stage, name] : stage_names())
            if (format_applies(o.format, stage) && target_has(o.target, stage) &&
                stage != Stage::Ptx)
                o.stages.push_back(stage);
        if (o.stages.empty())
            throw usage("--format=" + std::string(format_name(o.format)) +
                        " applies to no stage of the " + o.target + " target");
    }
    for (Stage s : o.stages) {
        std::string name;
        for (const auto& [stage, n] : stage_names())
            if (stage == s) name = n;
        if (!format_applies(o.format, s))
            throw usage("--format=" + std::string(format_name(o.format)) +
                        " does not apply to stage '" + name + "'");
        if (!target_has(o.target, s))
            throw usage("stage '" + name + "' does not exist for the " + o.target + " target (" +
                        (s == Stage::Ptx ? "it is NVRTC's output; use --target=cuda"
                         : s == Stage::Mapping
                             ? "it is the GPU mapping passes' output; use --target=cuda"
                         : o.target == "reference" ? "it interprets the graph; use --target=openmp"
                                                   : "it maps kernels without isl schedules; use "
                                                     "--target=openmp") +
                        ")");
    }
    return o;
}

struct Program {
    std::vector<NodePtr> outputs, placeholders;
};

Program load_input(const std::string& input) {
    Program p;
    if (const Example* e = find_example(input)) {
        ExampleGraph g = e->build();
        for (const Array& a : g.outputs)
            p.outputs.push_back(a.node());
        for (const Array& a : g.placeholders)
            p.placeholders.push_back(a.node());
        return p;
    }
    if (input.find('/') == std::string::npos && input.find('.') == std::string::npos &&
        !std::ifstream(input))
        throw ToolError(1, "'" + input + "' is neither a file nor a built-in example (" +
                               example_names() + ")");
    GraphFile f = load_graph_file(input);
    return {f.outputs, f.placeholders};
}

void write_file(const std::string& path, const std::string& text, const char* what) {
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw ToolError(1, std::string("cannot write the ") + what + " '" + path + "'");
}

int run(int argc, char** argv) {
    std::optional<Options> parsed = parse_arguments(argc, argv);
    if (!parsed) return 0;
    const Options& o = *parsed;
    Program program = load_input(o.input);
    GraphViews graph;
    graph.text = to_string(program.outputs);
    graph.dot = to_dot(program.outputs);
    graph.json = graph_to_json(program.outputs, program.placeholders);
    Report report;
    dump::CompileScope dump_scope; // HEDRA_DUMP works here as in a compile
    dump::write_graph(program.outputs);
    if (o.target == "openmp") {
        std::optional<ScheduleFile> load;
        if (!o.load_schedule.empty()) load = read_schedule_file(o.load_schedule);
        poly::ProgramIR ir = sched::partition(program.outputs, program.placeholders);
        ReportObserver observer(report, load ? &*load : nullptr, o.load_schedule);
        backend::LowerOptions lo;
        lo.tile_sizes = o.tile_sizes;
        lo.observer = &observer;
        backend::lower(ir, lo);
        if (load)
            for (const auto& [name, text] : *load) {
                bool used = false;
                for (const KernelReport& k : report.kernels)
                    used = used || k.name == name;
                if (!used)
                    throw ToolError(1, "the schedule file '" + o.load_schedule +
                                           "' has a schedule for kernel " + name +
                                           ", which the program does not have");
            }
        if (!o.save_schedule.empty())
            write_file(o.save_schedule, schedule_file_text(report, o.input), "schedule file");
    }
#ifdef HEDRA_DUMP_HAVE_CUDA
    if (o.target == "cuda") {
        poly::ProgramIR ir = sched::partition(program.outputs, program.placeholders,
                                              sched::partition_options(sched::Target::for_gpu({})));
        report.partition = poly::to_string(ir);
        backend::CudaLowerOptions lo;
        lo.tile_sizes = o.tile_sizes;
        backend::CudaLoweredProgram lowered = backend::lower_cuda(ir, lo);
        report.mapping = lowered.mapping;
        report.code = std::move(lowered.source);
        if (!report.code.empty() && report.code.back() != '\n') report.code += '\n';
        report.code_extension = "cu";
        if (std::find(o.stages.begin(), o.stages.end(), Stage::Ptx) != o.stages.end()) {
            // PTX for a virtual architecture, as the backend compiles with HEDRA_CUDA_ARCH set
            // to one; compute_90 (H100/H200) unless that says another.
            const char* env = std::getenv("HEDRA_CUDA_ARCH");
            std::string arch =
                env && std::string(env).rfind("compute_", 0) == 0 ? env : "compute_90";
            report.ptx = backend::cuda::Nvrtc::instance().compile(report.code, arch).image;
        }
    }
#endif
    std::string text = render(graph, report, o.stages, o.format, o.input, o.target);
    if (o.output.empty())
        std::cout << text << std::flush;
    else
        write_file(o.output, text, "output file");
    return 0;
}

} // namespace
} // namespace hedra::tools

int main(int argc, char** argv) {
    try {
        return hedra::tools::run(argc, argv);
    } catch (const hedra::tools::ToolError& e) {
        std::cerr << "hedra-dump: " << e.what() << "\n";
        return e.status;
    } catch (const hedra::Error& e) {
        std::string what = e.what();
        std::cerr << "hedra-dump: " << what << "\n";
        return what.rfind("internal error", 0) == 0 ? 4 : 1;
    } catch (const std::exception& e) {
        std::cerr << "hedra-dump: internal error: " << e.what() << "\n";
        return 4;
    }
}
