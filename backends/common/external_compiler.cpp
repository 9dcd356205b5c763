// The external-compiler path: write the source, run the compiler with posix_spawnp (no shell,
// so paths and flags need no quoting), and dlopen the shared object it produced.
#include "backends/common/external_compiler.hpp"

#include "core/error.hpp"

#include <atomic>
#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace hedra::backend {

namespace {

std::filesystem::path writable_directory(const std::filesystem::path& preferred) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (fs::path dir : {preferred / "external", fs::temp_directory_path(ec) / "hedra-external"}) {
        if (dir.empty()) continue;
        fs::create_directories(dir, ec);
        if (fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK) == 0) return dir;
    }
    throw Error("cannot compile kernel with an external compiler: no writable directory for its "
                "files (tried " +
                (preferred / "external").string() + " and the temp directory)");
}

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs argv with stdout and stderr sent to `log`; returns the exit status (or -1).
int run_process(const std::vector<std::string>& args, const std::filesystem::path& log) {
    std::vector<char*> argv;
    for (const auto& arg : args)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    int spawn_error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawn_error != 0) return -1;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

std::shared_ptr<CompiledModule>
compile_with_external_compiler(const std::string& compiler, const std::string& source,
                               const std::vector<std::string>& flags, const std::string& key,
                               const std::filesystem::path& work_directory) {
    static std::atomic<std::uint64_t> counter{0};
    std::filesystem::path dir = writable_directory(work_directory);
    std::string stem = "hedra_kernel_" + key.substr(0, 16);
    std::filesystem::path source_path = dir / (stem + ".cpp");
    // dlopen caches by path: every load gets a fresh file name.
    std::string unique =
        stem + "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    std::filesystem::path library = dir / (unique + ".so");
    std::filesystem::path log = dir / (unique + ".log");
    {
        std::ofstream out(source_path, std::ios::binary | std::ios::trunc);
        out << source;
    }

    std::vector<std::string> args = {compiler};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"-shared", "-o", library.string(), source_path.string()});
    int status = run_process(args, log);
    std::string output = read_text(log);
    std::error_code ec;
    std::filesystem::remove(log, ec);
    if (status != 0) {
        std::filesystem::remove(library, ec);
        throw Error("cannot compile kernel with external compiler '" + compiler +
                    "' (exit status " + std::to_string(status) + "):\n" + output +
                    "source saved to " + source_path.string());
    }

    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::filesystem::remove(library, ec); // the mapping stays valid
    if (handle == nullptr) {
        const char* why = ::dlerror();
        throw Error("cannot load kernel compiled by '" + compiler +
                    "': " + (why ? why : "unknown dlopen error") + "; source saved to " +
                    source_path.string());
    }
    std::shared_ptr<void> owner(handle, [](void* h) { ::dlclose(h); });
    auto resolve = [handle](const std::string& name) { return ::dlsym(handle, name.c_str()); };
    return std::make_shared<CompiledModule>(key, source, resolve, std::move(owner), false);
}

} // namespace hedra::backend
