// The dump sink and the pass timer (see dump.hpp). A compile's number is taken when its scope
// opens; the step counter lives in the scope's thread-local state, so concurrent compiles on
// different threads number their files independently.
#include "core/dump.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "core/error.hpp"
#include "core/graph_dot.hpp"

namespace hedra::dump {
namespace {

bool flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::string_view(v) != "0";
}

struct ActiveCompile {
    int number = 0;
    int step = 0;
    int depth = 0;
};
thread_local ActiveCompile active;
std::atomic<int> compiles{0};

std::string padded(int value, int width) {
    std::string s = std::to_string(value);
    return s.size() < static_cast<std::size_t>(width)
               ? std::string(static_cast<std::size_t>(width) - s.size(), '0') + s
               : s;
}

struct PassTotal {
    std::string name;
    long long calls = 0;
    long long ns = 0;
};

struct PassTable {
    std::mutex mutex;
    std::vector<PassTotal> passes; // in order of first use
    bool registered = false;
};

PassTable& pass_table() {
    static PassTable* table = new PassTable; // read at exit: never destroyed
    return *table;
}

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void print_table_at_exit() {
    std::string t = pass_time_table();
    if (!t.empty()) std::fputs(t.c_str(), stderr);
}

} // namespace

bool enabled() {
    return flag("HEDRA_DUMP");
}

CompileScope::CompileScope() {
    if (!enabled()) return;
    counted_ = true;
    if (active.depth++ == 0) {
        active.number = ++compiles;
        active.step = 0;
    }
}

CompileScope::~CompileScope() {
    if (counted_ && --active.depth == 0) active.number = 0;
}

int CompileScope::number() const {
    return active.number;
}

void write_stage(std::string_view stage, std::string_view extension, std::string_view text,
                 std::string_view kernel) {
    if (!enabled()) return;
    CompileScope scope; // joins the active compile, or opens one for this stage alone
    std::string name = padded(active.number, 4) + "-" + padded(++active.step, 3) + "-" +
                       (kernel.empty() ? "" : std::string(kernel) + "-") + std::string(stage) +
                       "." + std::string(extension);
    const char* env = std::getenv("HEDRA_DUMP");
    std::string dir = env ? env : "-";
    if (dir == "-" || dir == "1") {
        std::cerr << "== hedra dump: " << name << " ==\n" << text;
        if (!text.empty() && text.back() != '\n') std::cerr << '\n';
        return;
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::path path = std::filesystem::path(dir) / name;
    std::ofstream out(path, std::ios::binary);
    if (!out)
        throw Error("HEDRA_DUMP: cannot write '" + path.string() + "'" +
                    (ec ? " (" + ec.message() + ")" : std::string()));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!text.empty() && text.back() != '\n') out << '\n';
}

void write_graph(const std::vector<NodePtr>& outputs) {
    if (!enabled()) return;
    write_stage("graph", "txt", to_string(outputs));
    write_stage("graph", "dot", to_dot(outputs));
}

bool time_passes_enabled() {
    return flag("HEDRA_TIME_PASSES");
}

PassTimer::PassTimer(const char* pass) : pass_(pass) {
    if (time_passes_enabled()) start_ns_ = now_ns();
}

PassTimer::~PassTimer() {
    if (start_ns_ < 0) return;
    long long elapsed = now_ns() - start_ns_;
    PassTable& t = pass_table();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.registered) {
        t.registered = true;
        std::atexit(print_table_at_exit);
    }
    for (PassTotal& p : t.passes)
        if (p.name == pass_) {
            ++p.calls;
            p.ns += elapsed;
            return;
        }
    t.passes.push_back({pass_, 1, elapsed});
}

std::string pass_time_table() {
    PassTable& t = pass_table();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (t.passes.empty()) return "";
    std::string s = "hedra: time per pass (HEDRA_TIME_PASSES)\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-24s %8s %12s %12s\n", "pass", "calls", "total ms",
                  "mean ms");
    s += line;
    long long total = 0;
    for (const PassTotal& p : t.passes) {
        total += p.ns;
        std::snprintf(line, sizeof line, "  %-24s %8lld %12.3f %12.3f\n", p.name.c_str(), p.calls,
                      p.ns / 1e6, p.ns / 1e6 / static_cast<double>(p.calls));
        s += line;
    }
    std::snprintf(line, sizeof line, "  %-24s %8s %12.3f\n", "total", "", total / 1e6);
    return s + line;
}

void reset_pass_times() {
    PassTable& t = pass_table();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.passes.clear();
}

} // namespace hedra::dump
