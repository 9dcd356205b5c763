// write_aot_library (aot_library.hpp): files, compiles and the archive.
#include "aot/aot_library.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "aot/aot_cuda.hpp"
#include "core/error.hpp"

namespace hedra::aot {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush())
        throw Error("hedra-aot: cannot write '" + path.string() +
                    "'; check that its folder is writable");
}

// Runs `argv` and returns its exit status; its output (stdout and stderr) goes to `output`.
int run_command(const std::vector<std::string>& argv, std::string& output) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) throw Error("hedra-aot: cannot create a pipe to run " + argv[0]);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fds[1], 1);
        dup2(pipe_fds[1], 2);
        close(pipe_fds[0]);
        std::vector<char*> args;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        std::fprintf(stderr, "cannot run %s\n", args[0]);
        _exit(127);
    }
    close(pipe_fds[1]);
    std::array<char, 4096> chunk;
    for (ssize_t got; (got = read(pipe_fds[0], chunk.data(), chunk.size())) > 0;)
        output.append(chunk.data(), static_cast<std::size_t>(got));
    close(pipe_fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void run_or_throw(const std::vector<std::string>& argv) {
    std::string output;
    if (run_command(argv, output) == 0) return;
    std::string line;
    for (const std::string& a : argv)
        line += (line.empty() ? "" : " ") + a;
    throw Error("hedra-aot: this command failed:\n  " + line + "\n" + output);
}

} // namespace

std::vector<fs::path> write_aot_library(const AotProgram& p, const fs::path& directory,
                                        const HeaderOptions& header,
                                        const LibraryOptions& options) {
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec)
        throw Error("hedra-aot: cannot create the output folder '" + directory.string() +
                    "': " + ec.message());
    const bool cuda = p.target == "cuda";
    const fs::path h = directory / (p.name + ".h"),
                   program = directory / (p.name + (cuda ? ".program.cu" : ".program.cpp")),
                   wrapper = directory / (p.name + ".cpp"),
                   library = directory / ("lib" + p.name + ".a");
    write_file(h, aot_header(p, header));
    write_file(program, p.source);
    write_file(wrapper, cuda ? aot_cuda_wrapper(p) : aot_wrapper(p));
    std::vector<fs::path> written = {h, program, wrapper};
    if (cuda) { // the image the library embeds, for reference (PTX text, or a cubin)
        written.push_back(directory / (p.name + (p.cubin ? ".cubin" : ".ptx")));
        write_file(written.back(), p.cubin ? p.image : p.image.substr(0, p.image.size() - 1));
    }
    if (!options.build) return written;

    const std::string compiler = options.compiler.empty() ? HEDRA_CLANG_PATH : options.compiler;
    const std::string archiver =
        options.archiver.empty() ? (fs::path(HEDRA_CLANG_PATH).parent_path() / "llvm-ar").string()
                                 : options.archiver;
    std::vector<std::string> compile = {compiler, "-c"};
    for (const std::string& flag : p.flags)
        compile.push_back(flag == "-march=native" ? "-march=" + options.march : flag);
    const fs::path program_o = directory / (p.name + ".program.o"),
                   wrapper_o = directory / (p.name + ".o");
    std::vector<std::string> objects = {wrapper_o.string()};
    if (!cuda) {
        std::vector<std::string> compile_program = compile;
        compile_program.insert(compile_program.end(),
                               {"-x", "c++", program.string(), "-o", program_o.string()});
        run_or_throw(compile_program);
        objects.push_back(program_o.string());
    }
    run_or_throw({compiler, "-c", "-std=c++17", "-O2", "-fPIC", "-I", directory.string(),
                  wrapper.string(), "-o", wrapper_o.string()});
    fs::remove(library, ec);
    std::vector<std::string> archive = {archiver, "rcs", library.string()};
    archive.insert(archive.end(), objects.begin(), objects.end());
    run_or_throw(archive);
    fs::remove(program_o, ec);
    fs::remove(wrapper_o, ec);
    written.push_back(library);
    return written;
}

} // namespace hedra::aot
