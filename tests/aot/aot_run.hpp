// Runs a command through the shell for tests/aot and returns its exit status and output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hedra::test {

struct CommandRun {
    int status = -1;
    std::string out, err;
};

inline std::string read_file_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A fresh folder of this process for `name`.
inline std::filesystem::path aot_scratch(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("hedra_aot_tests_" + std::to_string(::getpid())) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline CommandRun run_command(const std::string& command) {
    const auto dir = aot_scratch("run");
    const std::string out = (dir / "out").string(), err = (dir / "err").string();
    const int rc = std::system((command + " > '" + out + "' 2> '" + err + "'").c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file_text(out), read_file_text(err)};
}

} // namespace hedra::test
