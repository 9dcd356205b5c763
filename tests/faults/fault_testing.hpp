// Helpers for the fault tests: scratch directories, cache entry surgery, and child processes.
// Faults that need a fresh process (the process-wide JIT reads $HEDRA_CXX and $HEDRA_CACHE_DIR
// once) run the test binary itself again on one test case with extra environment variables;
// such "child" test cases do nothing unless $HEDRA_FAULT_ROLE names them.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/openmp/openmp_backend.hpp"
#include "hedra.hpp"

extern char** environ;

namespace hedra::test {

namespace fs = std::filesystem;

// A fresh empty directory under the temp directory, unique to this process.
inline fs::path scratch_directory(const std::string& name) {
    fs::path dir =
        fs::temp_directory_path() / ("hedra_faults_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

inline std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// The cache entries of a directory with `extension` (".o": kernel objects, ".plan": lowered
// programs), sorted.
inline std::vector<fs::path> cache_entries(const fs::path& dir,
                                           const std::string& extension = ".o") {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == extension) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Temp files a writer left behind (*.tmp.*).
inline int leftover_temp_files(const fs::path& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        n += e.path().filename().string().find(".tmp.") != std::string::npos;
    return n;
}

inline std::map<pid_t, std::string>& child_logs() {
    static std::map<pid_t, std::string> logs;
    return logs;
}
inline int& children_started() {
    static int n = 0;
    return n;
}
inline std::string child_log_path(int n) {
    return (fs::temp_directory_path() /
            ("hedra_faults_child_" + std::to_string(::getpid()) + "_" + std::to_string(n) + ".log"))
        .string();
}

// Starts this test binary on test case `test_case` with `env` added; returns its pid.
inline pid_t spawn_child(const std::string& test_case,
                         const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> vars;
    for (char** e = environ; *e; ++e) {
        std::string v = *e;
        bool replaced = false;
        for (const auto& [k, val] : env)
            replaced = replaced || v.rfind(k + "=", 0) == 0;
        if (!replaced) vars.push_back(v);
    }
    for (const auto& [k, v] : env)
        vars.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& v : vars)
        envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--test-case=" + test_case;
    std::vector<char*> argv = {self.data(), filter.data(), const_cast<char*>("--no-version"),
                               nullptr};
    // The child's report goes to a log beside it, shown by wait_child when it fails.
    std::string log = child_log_path(static_cast<int>(children_started()++));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    child_logs()[pid] = log;
    return pid;
}

// The exit status of a child (-1 if it did not exit normally, e.g. a crash).
inline int wait_child(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::string log = child_logs()[pid];
    child_logs().erase(pid);
    if (code != 0)
        MESSAGE("child process " << pid << " failed (status " << code << "):\n" << read_bytes(log));
    fs::remove(log);
    return code;
}

inline int run_child(const std::string& test_case,
                     const std::vector<std::pair<std::string, std::string>>& env) {
    return wait_child(spawn_child(test_case, env));
}

// Whether this process is the child that plays `role`.
inline bool child_role(const char* role) {
    const char* r = std::getenv("HEDRA_FAULT_ROLE");
    return r != nullptr && std::string(r) == role;
}

inline ComputeOptions openmp_options() {
    static const bool registered = [] {
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        return true;
    }();
    (void)registered;
    ComputeOptions o;
    o.backend = "openmp";
    return o;
}

// A small program with a reduction, a window view and transcendental functions; `salt` makes
// a structurally different program (a different kernel) per value.
inline Array fault_program(int salt) {
    std::vector<float> v(48);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>((static_cast<int>(i) * 7 + salt) % 11) / 4.0f - 1.0f;
    Array x = array(v, Shape::of({6, 8}));
    Array w = view(x, Shape::of({6, 3, 6}), AffineMap(3, 2, {1, 0, 0, 0, 1, 1}, {0, 0}));
    return sum(tanh(w) * static_cast<float>(salt + 1) + exp(w * 0.5f), {1 + salt % 2});
}

// The program's values by the reference interpreter (no compiler involved).
inline std::vector<double> reference_values(const Array& a) {
    std::vector<NodePtr> nodes = {a.node()};
    return get_backend("reference")->evaluate(nodes, {}).at(0).to_doubles();
}

inline bool close_to(const std::vector<double>& got, const std::vector<double>& want) {
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])))) return false;
    return true;
}

} // namespace hedra::test
