// Per-kernel timing tables (see kernel_profile.hpp).
#include "backends/common/kernel_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string_view>

#include "core/scalar_dag.hpp"
namespace hedra::backend {
namespace {

struct ProfiledProgram {
    std::vector<KernelProfileInfo> kernels;
    const long long* counters = nullptr;
    std::shared_ptr<const void> owner;
    std::string clock;
};

struct Registry {
    std::mutex mutex;
    std::vector<ProfiledProgram> programs;
    bool registered = false;
};

Registry& registry() {
    static Registry r;
    return r;
}

void print_at_exit() {
    std::string s = profile_table();
    if (!s.empty()) std::cerr << s << std::flush;
}

// Scalar operations of one evaluation of `e`, each distinct node once (leaves and casts are free).
double operations(const ScalarExpr& e) {
    if (!e) return 0;
    double n = 0;
    for (const ScalarExpr& x : topological_order(e))
        n += !(x->op == ScalarOp::Input || x->op == ScalarOp::Const || x->op == ScalarOp::Cast);
    return n;
}

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "[";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + "]";
}

std::string describe(const poly::ProgramIR& program, const poly::Kernel& kernel) {
    std::vector<std::pair<std::string, int>> parts; // repeated statements (fuse pieces) once
    for (const poly::Statement& st : kernel.statements) {
        bool init = st.kind == poly::StatementKind::Assign && st.reads.empty() &&
                    kernel.statements.size() > 1;
        if (init) continue; // reduction inits and fills say little
        std::string s = program.buffers.at(st.write_buffer).name;
        s += st.kind == poly::StatementKind::Update
                 ? std::string(" ") + reduce_op_name(st.reduce_op) + " "
                 : " = ";
        s += sizes_string(st.extents);
        std::string reads;
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0) reads += " " + program.buffers.at(r.buffer).name;
        if (!reads.empty()) s += " <-" + reads;
        if (!parts.empty() && parts.back().first == s)
            ++parts.back().second;
        else
            parts.emplace_back(s, 1);
    }
    std::string s;
    for (const auto& [text, count] : parts)
        s += (s.empty() ? "" : "; ") + (count > 1 ? std::to_string(count) + "x " : "") + text;
    return s.empty() ? "fill" : s;
}

} // namespace

bool profile_enabled() {
    static const bool on = [] {
        const char* v = std::getenv("HEDRA_PROFILE");
        return v && *v && std::string_view(v) != "0";
    }();
    return on;
}

int profile_clock() {
    const char* v = std::getenv("HEDRA_PROFILE");
    return v && std::string_view(v) == "cpu" ? 2 : 1;
}

std::vector<KernelProfileInfo> describe_kernels(const poly::ProgramIR& program) {
    std::vector<KernelProfileInfo> out;
    std::vector<const poly::Kernel*> kernels;
    for (const poly::Kernel& k : program.kernels)
        kernels.push_back(&k);
    for (const poly::Kernel* k : poly::nested_kernels(program))
        kernels.push_back(k);
    for (const poly::Kernel* kp : kernels) {
        const poly::Kernel& k = *kp;
        KernelProfileInfo info{k.name,
                               k.loop ? "scan loop of " + std::to_string(k.loop->kernels.size()) +
                                            " kernels"
                                      : describe(program, k),
                               0};
        for (const poly::Statement& st : k.statements) {
            double n = 1;
            for (std::int64_t e : st.extents)
                n *= static_cast<double>(e);
            double ops = operations(st.value) + (st.kind == poly::StatementKind::Update);
            info.flops += n * ops;
        }
        out.push_back(std::move(info));
    }
    return out;
}

void register_profile(std::vector<KernelProfileInfo> kernels, const long long* counters,
                      std::shared_ptr<const void> owner, std::string clock) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.registered) {
        r.registered = true;
        std::atexit(print_at_exit);
    }
    r.programs.push_back({std::move(kernels), counters, std::move(owner), std::move(clock)});
}

std::string profile_table() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::string s;
    char line[512];
    for (std::size_t p = 0; p < r.programs.size(); ++p) {
        const ProfiledProgram& prog = r.programs[p];
        std::vector<std::size_t> order;
        long long total = 0, runs = 0;
        for (std::size_t k = 0; k < prog.kernels.size(); ++k) {
            if (prog.counters[2 * k + 1] == 0) continue;
            order.push_back(k);
            total += prog.counters[2 * k];
            runs = std::max(runs, prog.counters[2 * k + 1]);
        }
        if (order.empty()) continue;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return prog.counters[2 * a] > prog.counters[2 * b];
        });
        std::snprintf(line, sizeof line,
                      "hedra: program %zu, %zu kernels, %lld runs, %.3f ms per run "
                      "(HEDRA_PROFILE, %s time)\n  %-6s %7s %10s %9s %6s %8s  %s\n",
                      p + 1, order.size(), runs, total / 1e6 / static_cast<double>(runs),
                      !prog.clock.empty()    ? prog.clock.c_str()
                      : profile_clock() == 2 ? "cpu"
                                             : "wall",
                      "kernel", "calls", "total ms", "ms/call", "%", "GFLOP/s", "computes");
        s += line;
        for (std::size_t k : order) {
            long long ns = prog.counters[2 * k], calls = prog.counters[2 * k + 1];
            double gflops = ns > 0 ? prog.kernels[k].flops * static_cast<double>(calls) / ns : 0;
            std::snprintf(line, sizeof line, "  %-6s %7lld %10.3f %9.4f %6.1f %8.2f  %s\n",
                          prog.kernels[k].name.c_str(), calls, ns / 1e6,
                          ns / 1e6 / static_cast<double>(calls),
                          total > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total)
                                    : 0.0,
                          gflops, prog.kernels[k].summary.substr(0, 300).c_str());
            s += line;
        }
    }
    return s;
}

} // namespace hedra::backend
