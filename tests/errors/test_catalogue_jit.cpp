// Bad-input catalogue, part 3: the kernel compiler. A compiler that fails or does not exist, a
// kernel that does not compile or does not link, a process-global flag, a missing entry point.
// Each must throw hedra::Error that names the compiler or the kernel and says where the failing
// source was saved, so the user can rerun the compiler by hand.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "backends/openmp/jit_compiler.hpp"
#include "core/expect_error.hpp"

using namespace hedra;
using namespace hedra::backend;

namespace {

std::filesystem::path scratch(const char* name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("hedra_catalogue_" + std::string(name) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

const char* kGood = "extern \"C\" int hedra_catalogue_f() { return 42; }\n";

} // namespace

TEST_CASE("catalogue: a failing or missing external compiler") {
    auto dir = scratch("external");
    JitOptions o;
    o.cache_directory = dir;
    o.external_compiler = "/bin/false";
    JitCompiler failing(o);
    CHECK_ERROR(failing.compile(kGood), "cannot compile kernel with external compiler '/bin/false'",
                "exit status 1", "source saved to", dir.c_str());
    o.external_compiler = "/nonexistent/bin/c++";
    JitCompiler missing(o);
    CHECK_ERROR(missing.compile(kGood), "external compiler '/nonexistent/bin/c++'",
                "source saved to");
    std::filesystem::remove_all(dir);
}

TEST_CASE("catalogue: kernels that do not compile or link, in process") {
    auto dir = scratch("jit");
    JitOptions o;
    o.cache_directory = dir;
    JitCompiler jit(o);
    CHECK_ERROR(jit.compile("extern \"C\" int f( { return 1; }\n"), "cannot compile kernel",
                "error:", "source saved to", dir.c_str());
    CHECK_ERROR(jit.compile("extern \"C\" int hedra_undefined_g();\n"
                            "extern \"C\" int f2() { return hedra_undefined_g(); }\n"),
                "cannot link kernel", "hedra_undefined_g", "source saved to");
    CHECK_ERROR(jit.compile(kGood, {"-mllvm", "-some-option"}), "-mllvm", "process-global");
    auto module = jit.compile(kGood);
    CHECK(module->function<int()>("hedra_catalogue_f")() == 42);
    CHECK_ERROR(module->function<int()>("hedra_catalogue_missing"),
                "no symbol 'hedra_catalogue_missing'", "compiled kernel");
    std::filesystem::remove_all(dir);
}

TEST_CASE("catalogue: no writable directory for the compiler's files") {
    // The cache directory cannot be created (below a regular file) and $TMPDIR is not a
    // directory either: a failing kernel still gives hedra::Error (not a filesystem exception)
    // and the compiler's files go somewhere that can be written.
    auto dir = scratch("no_writable_dir");
    std::string file = (dir / "file").string();
    std::ofstream(file) << "x";
    const char* old = std::getenv("TMPDIR");
    std::string saved = old ? old : "";
    setenv("TMPDIR", file.c_str(), 1);
    JitOptions o;
    o.cache_directory = std::filesystem::path(file) / "cache";
    {
        JitCompiler jit(o);
        CHECK_ERROR(jit.compile("this is not C++"), "cannot compile kernel");
        o.external_compiler = "/bin/false";
        JitCompiler external(o);
        CHECK_ERROR(external.compile(kGood), "external compiler '/bin/false'", "exit status 1");
    }
    if (old) setenv("TMPDIR", saved.c_str(), 1);
    else unsetenv("TMPDIR");
    std::filesystem::remove_all(dir);
}
