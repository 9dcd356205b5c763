// Runs the hedra-dump binary (its path comes from CMake as HEDRA_DUMP_TOOL) through the shell
// and returns its exit status and output; and small file helpers for the tool tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hedra::test {

// A directory of this test process, removed at exit.
inline const std::filesystem::path& scratch_dir() {
    struct Dir {
        std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("hedra_tool_tests_" + std::to_string(::getpid()));
        ~Dir() {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    };
    static Dir dir;
    std::filesystem::create_directories(dir.path);
    return dir.path;
}

inline std::string scratch_path(const std::string& name) {
    return (scratch_dir() / name).string();
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

struct ToolRun {
    int status = -1;
    std::string out, err;
};

// `args` is shell text (quote paths); `env` is prepended ("HEDRA_DUMP=/tmp/x").
inline ToolRun run_tool(const std::string& args, const std::string& env = "") {
    static int counter = 0;
    std::string out = scratch_path("out" + std::to_string(counter)),
                err = scratch_path("err" + std::to_string(counter++));
    std::string command = env + (env.empty() ? "" : " ") + "'" HEDRA_DUMP_TOOL "' " + args +
                          " > '" + out + "' 2> '" + err + "'";
    int rc = std::system(command.c_str());
    ToolRun r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
}

} // namespace hedra::test
