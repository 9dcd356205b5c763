// What hedra-dump collects from one compilation (a CompileObserver over the backend's passes),
// how it renders the selected stages in each format, and its schedule files
// (--save-schedule / --load-schedule). Kept apart from main() so that tests can link it.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "polyhedral/scop_print.hpp"
#include "scheduler/compile_observer.hpp"

namespace hedra::tools {

// An error with the exit status it maps to (1 bad input, 2 usage, 3 illegal schedule).
struct ToolError : std::runtime_error {
    ToolError(int status, const std::string& message)
        : std::runtime_error(message), status(status) {}
    int status;
};

// The stages, in pipeline order.
enum class Stage {
    Graph,
    Partition,
    Mapping, // the cuda target's GPU mapping passes (scheduler/gpu_mapping.hpp)
    Domains,
    Accesses,
    Deps,
    Constraints,
    Schedule,
    Final,
    Ast,
    Code,
    Ptx // the cuda target's code compiled by NVRTC (only when asked for)
};
const std::vector<std::pair<Stage, const char*>>& stage_names();
enum class Format { Text, Yaml, Json, Dot, Jscop };
const char* format_name(Format f);
bool format_applies(Format f, Stage s);

struct KernelReport {
    std::string name;
    std::vector<poly::StatementDescription> statements;
    std::string flow, output, anti;
    std::string constraints;    // isl YAML, "" when none was computed
    std::string schedule;       // isl block YAML of the computed (or loaded) schedule
    std::string final_schedule; // after tiling
    std::vector<std::string> schedule_maps, final_maps; // per statement
    std::string ast;
    bool fell_back = false;
    bool loaded = false;
};

struct Report {
    std::string partition;
    // Per kernel of a scan's loop: the loops around it, outermost first ("for (t0 = 0; t0 < 28;
    // t0 += 1) // scan loop k4, sequential").
    std::map<std::string, std::vector<std::string>> scan_loops;
    std::string mapping; // cuda: sched::to_string of the GPU mapping
    std::vector<KernelReport> kernels;
    std::string code, code_extension = "cpp";
    std::string ptx;
};

// Schedules by kernel name, as read from a --load-schedule file.
using ScheduleFile = std::map<std::string, std::string>;
ScheduleFile read_schedule_file(const std::string& path); // ToolError(1) if unusable
std::string schedule_file_text(const Report& report, const std::string& input);

class ReportObserver : public sched::CompileObserver {
public:
    // `load` (may be null): schedules that replace the computed ones; `load_path` names them.
    ReportObserver(Report& report, const ScheduleFile* load, std::string load_path);
    void partitioned(const poly::ProgramIR& program) override;
    void analyzed(const poly::Scop& scop, const poly::Dependences& deps) override;
    poly::IslPtr<isl_schedule> replacement_schedule(poly::IslContext& ctx, const poly::Scop& scop,
                                                    const poly::Dependences& deps) override;
    void scheduled(const poly::Scop& scop, const sched::KernelSchedule& ks) override;
    void finalized(const poly::Scop& scop, const poly::IslPtr<isl_schedule>& s) override;
    void ast_built(const poly::Scop& scop, const sched::AstNode& ast) override;
    void emitted(const std::string& source, const std::string& extension) override;

private:
    Report& report_;
    std::unique_ptr<sched::CompileObserver> files_; // HEDRA_DUMP's files, when it is set
    // The current kernel's when its schedule was loaded, to check it after tiling; held only
    // from replacement_schedule to finalized (lower()'s isl context must outlive them).
    poly::Dependences deps_;
    const ScheduleFile* load_;
    std::string load_path_;
};

// The graph as the three formats know it.
struct GraphViews {
    std::string text, dot;
    json::Value json;
};

// The selected stages of `report` in `format` (checked by the caller with format_applies).
std::string render(const GraphViews& graph, const Report& report, const std::vector<Stage>& stages,
                   Format format, const std::string& input, const std::string& target);

} // namespace hedra::tools
