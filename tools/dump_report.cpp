// hedra-dump's report: the observer that records each stage, the renderers (text, YAML, JSON,
// Graphviz, JSCoP) and the schedule files (see dump_report.hpp).
#include "tools/dump_report.hpp"

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "scheduler/schedule_io.hpp"

namespace hedra::tools {
namespace {

using json::Value;

std::string with_newline(std::string s) {
    if (!s.empty() && s.back() != '\n') s += '\n';
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

bool selected(const std::vector<Stage>& stages, Stage s) {
    for (Stage t : stages)
        if (t == s) return true;
    return false;
}

} // namespace

const std::vector<std::pair<Stage, const char*>>& stage_names() {
    static const std::vector<std::pair<Stage, const char*>> names{
        {Stage::Graph, "graph"},
        {Stage::Partition, "partition"},
        {Stage::Mapping, "mapping"},
        {Stage::Domains, "domains"},
        {Stage::Accesses, "accesses"},
        {Stage::Deps, "deps"},
        {Stage::Constraints, "constraints"},
        {Stage::Schedule, "schedule"},
        {Stage::Final, "final-schedule"},
        {Stage::Ast, "ast"},
        {Stage::Code, "code"},
        {Stage::Ptx, "ptx"}};
    return names;
}

const char* format_name(Format f) {
    switch (f) {
    case Format::Text:
        return "text";
    case Format::Yaml:
        return "yaml";
    case Format::Json:
        return "json";
    case Format::Dot:
        return "dot";
    case Format::Jscop:
        return "jscop";
    }
    return "?";
}

bool format_applies(Format f, Stage s) {
    switch (f) {
    case Format::Text:
    case Format::Json:
        return true;
    case Format::Yaml:
        return s == Stage::Constraints || s == Stage::Schedule || s == Stage::Final;
    case Format::Dot:
        return s == Stage::Graph;
    case Format::Jscop:
        return s == Stage::Domains || s == Stage::Accesses || s == Stage::Schedule ||
               s == Stage::Final;
    }
    return false;
}

ScheduleFile read_schedule_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ToolError(1, "cannot open the schedule file '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    json::Document doc;
    try {
        doc = json::parse(text.str(), path);
    } catch (const Error& e) {
        throw ToolError(1, e.what());
    }
    auto bad = [&](const Value& at, const std::string& what) {
        return ToolError(1, doc.where(at) + ": " + what);
    };
    const Value* format = json::find(doc.root, "format");
    if (!format || *format != "hedra-schedules")
        throw bad(doc.root, "not a hedra schedule file ('format' must be \"hedra-schedules\")");
    const Value* kernels = json::find(doc.root, "kernels");
    if (!kernels || !kernels->is_array()) throw bad(doc.root, "'kernels' must be an array");
    ScheduleFile out;
    for (const Value& k : *kernels) {
        const Value* name = json::find(k, "name");
        const Value* schedule = json::find(k, "schedule");
        if (!name || !name->is_string() || !schedule)
            throw bad(k, "each kernel is {\"name\": ..., \"schedule\": ...}");
        std::string text;
        if (schedule->is_string()) {
            text = schedule->get<std::string>();
        } else if (schedule->is_array()) {
            for (const Value& line : *schedule) {
                if (!line.is_string()) throw bad(line, "schedule lines must be strings");
                text += line.get<std::string>() + "\n";
            }
        } else {
            throw bad(*schedule, "'schedule' must be a string or an array of lines");
        }
        if (!out.emplace(name->get<std::string>(), text).second)
            throw bad(*name, "kernel '" + name->get<std::string>() + "' appears twice");
    }
    return out;
}

std::string schedule_file_text(const Report& report, const std::string& input) {
    Value kernels = Value::array();
    for (const KernelReport& k : report.kernels)
        kernels.push_back({{"name", k.name}, {"schedule", lines_of(k.schedule)}});
    Value doc = {{"format", "hedra-schedules"},
                 {"version", 1},
                 {"input", input},
                 {"kernels", std::move(kernels)}};
    return json::write(doc) + "\n";
}

ReportObserver::ReportObserver(Report& report, const ScheduleFile* load, std::string load_path)
    : report_(report), files_(sched::dump_observer()), load_(load),
      load_path_(std::move(load_path)) {}

namespace {

// The loops around the kernels of scans' loops (Report::scan_loops).
void note_scan_loops(const std::vector<poly::Kernel>& kernels, std::vector<std::string> around,
                     std::map<std::string, std::vector<std::string>>& out) {
    for (const poly::Kernel& k : kernels) {
        if (!k.loop) continue;
        const poly::ScanLoop& l = *k.loop;
        const std::string t = "t" + std::to_string(around.size());
        const std::string n = l.param >= 0 ? param_name(l.param) : std::to_string(l.steps);
        std::vector<std::string> inner = around;
        inner.push_back(l.reverse
                            ? "for (" + t + " = " + n + " - 1; " + t + " >= 0; " + t + " -= 1)"
                            : "for (" + t + " = 0; " + t + " < " + n + "; " + t + " += 1)");
        inner.back() +=
            " // scan loop " + k.name + ", sequential: each step reads the last one's carries";
        for (const poly::Kernel& in : l.kernels)
            out[in.name] = inner;
        note_scan_loops(l.kernels, inner, out);
    }
}

// `text` inside the loops `around` (indented, braces closed).
std::string inside_loops(const std::vector<std::string>& around, const std::string& text) {
    std::string open, close;
    for (std::size_t d = 0; d < around.size(); ++d) {
        const std::size_t note = around[d].find(" // ");
        open += std::string(2 * d, ' ') + around[d].substr(0, note) + " {" +
                (note == std::string::npos ? "" : around[d].substr(note)) + "\n";
        close = std::string(2 * d, ' ') + "}\n" + close;
    }
    std::string body;
    const std::string pad(2 * around.size(), ' ');
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        body += pad + text.substr(at, end - at) + "\n";
        at = end + 1;
    }
    return open + body + close;
}

} // namespace

void ReportObserver::partitioned(const poly::ProgramIR& program) {
    if (files_) files_->partitioned(program);
    report_.partition = poly::to_string(program);
    report_.scan_loops.clear();
    note_scan_loops(program.kernels, {}, report_.scan_loops);
}

void ReportObserver::analyzed(const poly::Scop& scop, const poly::Dependences& deps) {
    KernelReport k;
    k.name = scop.kernel->name;
    k.statements = poly::describe_scop(scop);
    k.flow = deps.flow.to_string();
    k.output = deps.output.to_string();
    k.anti = deps.anti.to_string();
    report_.kernels.push_back(std::move(k));
    if (files_) files_->analyzed(scop, deps);
}

poly::IslPtr<isl_schedule> ReportObserver::replacement_schedule(poly::IslContext& ctx,
                                                                const poly::Scop& scop,
                                                                const poly::Dependences& deps) {
    if (!load_) return {};
    const std::string& kernel = scop.kernel->name;
    auto it = load_->find(kernel);
    if (it == load_->end())
        throw ToolError(1, "the schedule file '" + load_path_ + "' has no schedule for kernel " +
                               kernel);
    std::string what = "the schedule of kernel " + kernel + " in '" + load_path_ + "'";
    poly::IslPtr<isl_schedule> s;
    try {
        s = sched::parse_schedule(ctx, it->second, what);
    } catch (const Error& e) {
        throw ToolError(1, e.what());
    }
    std::string mismatch = sched::domain_mismatch(scop, s);
    if (!mismatch.empty()) throw ToolError(1, what + " does not fit the kernel: " + mismatch);
    poly::IslPtr<isl_union_map> violated = sched::violated_dependences(deps, s);
    if (!sched::is_empty(violated))
        throw ToolError(3, what + " is illegal: it violates the dependences " +
                               violated.to_string() +
                               " (each source instance must run before its sink)");
    report_.kernels.back().loaded = true;
    deps_ = deps; // for finalized's check, which releases them
    return s;
}

void ReportObserver::scheduled(const poly::Scop& scop, const sched::KernelSchedule& ks) {
    if (files_) files_->scheduled(scop, ks);
    KernelReport& k = report_.kernels.back();
    if (ks.constraints)
        k.constraints = sched::constraints_yaml(ks.constraints);
    else if (k.loaded)
        k.constraints = "# the schedule was loaded from '" + load_path_ + "': none computed\n";
    else
        k.constraints = "# no statement left for isl: every statement is a hoisted init\n";
    k.schedule = sched::schedule_yaml(ks.schedule);
    k.schedule_maps = sched::statement_schedule_maps(scop, ks.schedule);
    k.fell_back = ks.fell_back;
}

void ReportObserver::finalized(const poly::Scop& scop, const poly::IslPtr<isl_schedule>& s) {
    KernelReport& k = report_.kernels.back();
    // Taken out of the observer here: isl objects must not outlive lower()'s isl context (it is
    // not freed while they reference it, and leaks).
    poly::Dependences deps = std::move(deps_);
    deps_ = {};
    if (k.loaded) { // tiling trusts the file's "permutable" marks: check the result too
        poly::IslPtr<isl_union_map> violated = sched::violated_dependences(deps, s);
        if (!sched::is_empty(violated))
            throw ToolError(3, "the schedule of kernel " + k.name + " in '" + load_path_ +
                                   "' is illegal once tiled (a band marked permutable is not): "
                                   "it violates the dependences " +
                                   violated.to_string());
    }
    if (files_) files_->finalized(scop, s);
    k.final_schedule = sched::schedule_yaml(s);
    k.final_maps = sched::statement_schedule_maps(scop, s);
}

void ReportObserver::ast_built(const poly::Scop& scop, const sched::AstNode& ast) {
    if (files_) files_->ast_built(scop, ast);
    report_.kernels.back().ast = with_newline(sched::to_string(ast));
}

void ReportObserver::emitted(const std::string& source, const std::string& extension) {
    if (files_) files_->emitted(source, extension);
    report_.code = with_newline(source);
    report_.code_extension = extension;
}

namespace {

struct Section {
    Stage stage;
    std::string kernel;
    std::string text;
};

std::vector<Section> sections(const GraphViews& graph, const Report& r, Format format) {
    std::vector<Section> out;
    out.push_back({Stage::Graph, "", format == Format::Dot ? graph.dot : graph.text});
    out.push_back({Stage::Partition, "", with_newline(r.partition)});
    out.push_back({Stage::Mapping, "", r.mapping});
    for (const KernelReport& k : r.kernels) {
        out.push_back({Stage::Domains, k.name, poly::domains_text(k.statements)});
        out.push_back({Stage::Accesses, k.name, poly::accesses_text(k.statements)});
        out.push_back(
            {Stage::Deps, k.name,
             "flow := " + k.flow + "\noutput := " + k.output + "\nanti := " + k.anti + "\n"});
        out.push_back({Stage::Constraints, k.name, k.constraints});
        std::string note = k.fell_back ? "# isl's quota ran out: program order\n"
                           : k.loaded  ? "# loaded (--load-schedule)\n"
                                       : "";
        // A kernel of a scan's loop: its schedule runs once per step of the loops around it.
        std::string loops;
        auto around = r.scan_loops.find(k.name);
        if (around != r.scan_loops.end())
            for (const std::string& l : around->second)
                loops += "# inside " + l + "\n";
        out.push_back({Stage::Schedule, k.name, note + loops + k.schedule});
        out.push_back({Stage::Final, k.name, loops + k.final_schedule});
        out.push_back({Stage::Ast, k.name,
                       around == r.scan_loops.end() ? k.ast : inside_loops(around->second, k.ast)});
    }
    out.push_back({Stage::Code, "", r.code});
    out.push_back({Stage::Ptx, "", r.ptx});
    return out;
}

const char* name_of(Stage s) {
    for (const auto& [stage, name] : stage_names())
        if (stage == s) return name;
    return "?";
}

Value kernel_json(const KernelReport& k, const std::vector<Stage>& stages) {
    Value v = {{"name", k.name}};
    bool domains = selected(stages, Stage::Domains), accesses = selected(stages, Stage::Accesses);
    if (domains || accesses) {
        Value statements = Value::array();
        for (const poly::StatementDescription& st : k.statements) {
            Value s = {{"name", st.name}, {"kind", st.kind}};
            if (domains) s["domain"] = st.domain;
            if (accesses) {
                Value list = Value::array();
                for (const poly::AccessDescription& a : st.accesses)
                    list.push_back(
                        {{"kind", a.kind}, {"buffer", a.buffer}, {"relation", a.relation}});
                s["accesses"] = std::move(list);
            }
            statements.push_back(std::move(s));
        }
        v["statements"] = std::move(statements);
    }
    if (selected(stages, Stage::Deps)) {
        v["dependences"] = {{"flow", k.flow}, {"output", k.output}, {"anti", k.anti}};
    }
    if (selected(stages, Stage::Constraints)) v["constraints"] = k.constraints;
    if (selected(stages, Stage::Schedule)) {
        v["schedule"] = k.schedule;
        v["fell_back"] = k.fell_back;
    }
    if (selected(stages, Stage::Final)) v["final_schedule"] = k.final_schedule;
    if (selected(stages, Stage::Ast)) v["ast"] = k.ast;
    return v;
}

// Polly's JSCoP, one object per kernel.
Value jscop_json(const KernelReport& k, const std::vector<Stage>& stages) {
    Value v = {{"context", "{  :  }"}, {"name", k.name}};
    Value statements = Value::array();
    bool final = selected(stages, Stage::Final);
    bool schedule = final || selected(stages, Stage::Schedule);
    for (std::size_t i = 0; i < k.statements.size(); ++i) {
        const poly::StatementDescription& st = k.statements[i];
        Value s = Value::object();
        if (selected(stages, Stage::Accesses)) {
            Value list = Value::array();
            for (const poly::AccessDescription& a : st.accesses)
                list.push_back(
                    {{"kind", a.kind == "write" ? "write" : "read"}, {"relation", a.relation}});
            s["accesses"] = std::move(list);
        }
        if (selected(stages, Stage::Domains)) s["domain"] = st.domain;
        s["name"] = st.name;
        if (schedule) s["schedule"] = final ? k.final_maps.at(i) : k.schedule_maps.at(i);
        statements.push_back(std::move(s));
    }
    v["statements"] = std::move(statements);
    return v;
}

} // namespace

std::string render(const GraphViews& graph, const Report& report, const std::vector<Stage>& stages,
                   Format format, const std::string& input, const std::string& target) {
    if (format == Format::Json) {
        Value doc = {{"input", input}, {"target", target}};
        if (selected(stages, Stage::Graph)) doc["graph"] = graph.json;
        if (selected(stages, Stage::Partition)) doc["partition"] = report.partition;
        if (selected(stages, Stage::Mapping)) doc["mapping"] = report.mapping;
        bool per_kernel = false;
        for (Stage s : stages)
            per_kernel = per_kernel || (s != Stage::Graph && s != Stage::Partition &&
                                        s != Stage::Mapping && s != Stage::Code && s != Stage::Ptx);
        if (per_kernel) {
            Value kernels = Value::array();
            for (const KernelReport& k : report.kernels)
                kernels.push_back(kernel_json(k, stages));
            doc["kernels"] = std::move(kernels);
        }
        if (selected(stages, Stage::Code)) doc["code"] = report.code;
        if (selected(stages, Stage::Ptx)) doc["ptx"] = report.ptx;
        return json::write(doc) + "\n";
    }
    if (format == Format::Jscop) {
        Value list = Value::array();
        for (const KernelReport& k : report.kernels)
            list.push_back(jscop_json(k, stages));
        return json::write(list) + "\n";
    }
    std::vector<Section> chosen;
    for (Section& s : sections(graph, report, format))
        if (selected(stages, s.stage)) chosen.push_back(std::move(s));
    if (chosen.size() == 1) return with_newline(chosen[0].text);
    std::string out; // YAML: a stream of documents, each opened by "---"
    for (const Section& s : chosen)
        out += std::string(format == Format::Yaml ? "--- " : "") +
               "# hedra-dump: " + std::string(name_of(s.stage)) +
               (s.kernel.empty() ? "" : " " + s.kernel) + "\n" + with_newline(s.text);
    return out;
}

} // namespace hedra::tools
