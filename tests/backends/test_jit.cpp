// Tests of the in-process kernel compiler (backends/openmp/jit_compiler.hpp), its object cache
// and the external-compiler path. Results are checked against naive loops and closed forms.
#include "backends/openmp/jit_compiler.hpp"
#include "core/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using hedra::backend::JitCompiler;
using hedra::backend::JitOptions;
using hedra::backend::KernelCache;

namespace {

// A fresh directory under the temp directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        static int counter = 0;
        path = fs::temp_directory_path() /
               ("hedra_test_jit_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

JitOptions options_in(const fs::path& dir) {
    JitOptions options;
    options.cache_directory = dir;
    return options;
}

const std::string kDotSource = R"(
extern "C" float dot(const float* a, const float* b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}
)";

// Each call sees a different n in `scale`, so sources differ and never share a cache entry.
std::string scaled_source(int scale) {
    return "extern \"C\" long scaled_sum(int n) {\n"
           "    long s = 0;\n"
           "    for (int i = 0; i < n; ++i) s += (long)i * " +
           std::to_string(scale) +
           ";\n"
           "    return s;\n"
           "}\n";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void check_dot(const hedra::backend::CompiledModule& module) {
    auto dot = module.function<float(const float*, const float*, int)>("dot");
    std::vector<float> a(1000), b(1000);
    double expected = 0.0;
    for (int i = 0; i < 1000; ++i) {
        a[i] = static_cast<float>(i % 7) - 3.0f;
        b[i] = 0.5f * static_cast<float>(i % 5);
        expected += static_cast<double>(a[i]) * b[i];
    }
    CHECK(dot(a.data(), b.data(), 1000) == doctest::Approx(expected).epsilon(1e-5));
    CHECK(dot(a.data(), b.data(), 0) == 0.0f);
}

std::string expect_error(const std::function<void()>& action) {
    try {
        action();
    } catch (const hedra::Error& error) {
        return error.what();
    }
    FAIL("expected hedra::Error");
    return "";
}

// The path after "source saved to " in an error message.
fs::path saved_source_path(const std::string& message) {
    auto at = message.find("source saved to ");
    REQUIRE(at != std::string::npos);
    return fs::path(message.substr(at + 16));
}

} // namespace

TEST_CASE("jit: compiles and calls an extern C function") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    auto module = compiler.compile(kDotSource);
    check_dot(*module);
    CHECK_FALSE(module->from_cache());
    CHECK(module->key().size() == 64);
}

TEST_CASE("jit: an OpenMP parallel loop runs on several threads with correct results") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    auto module = compiler.compile(R"(
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_num_threads(void);
extern "C" long thread_sum(int* team_size) {
    long s = 0;
#pragma omp parallel num_threads(4) reduction(+ : s)
    {
        s += omp_get_thread_num() + 1;
        if (omp_get_thread_num() == 0) *team_size = omp_get_num_threads();
    }
    return s;
}
extern "C" void squares(double* out, int n) {
#pragma omp parallel for num_threads(4) schedule(static)
    for (int i = 0; i < n; ++i) out[i] = (double)i * i;
}
extern "C" double parallel_sum(const double* x, int n) {
    double s = 0.0;
#pragma omp parallel for num_threads(4) reduction(+ : s)
    for (int i = 0; i < n; ++i) s += x[i];
    return s;
}
)");
    int team = 0;
    long sum = module->function<long(int*)>("thread_sum")(&team);
    CHECK(team == 4);
    CHECK(sum == 4 * 5 / 2);

    const int n = 100000;
    std::vector<double> out(n, -1.0);
    module->function<void(double*, int)>("squares")(out.data(), n);
    bool all_right = true;
    for (int i = 0; i < n; ++i)
        all_right = all_right && out[i] == double(i) * i;
    CHECK(all_right);
    std::vector<double> ones(n, 1.0);
    CHECK(module->function<double(const double*, int)>("parallel_sum")(ones.data(), n) == n);
}

TEST_CASE("jit: a compile error throws hedra::Error with the diagnostics and the saved source") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    const std::string source = "extern \"C\" int f() { return undefined_name; }\n";
    std::string message = expect_error([&] { compiler.compile(source); });
    CHECK(message.find("cannot compile kernel") != std::string::npos);
    CHECK(message.find("use of undeclared identifier 'undefined_name'") != std::string::npos);
    CHECK(message.find("1 error generated") != std::string::npos);
    fs::path saved = saved_source_path(message);
    REQUIRE(fs::exists(saved));
    std::ifstream in(saved);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == source);
    fs::remove(saved);
}

TEST_CASE("jit: an undefined function and a missing symbol throw hedra::Error") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    std::string link = expect_error([&] {
        compiler.compile("extern \"C\" int hedra_no_such_fn(int);\n"
                         "extern \"C\" int f(int x) { return hedra_no_such_fn(x) + 1; }\n");
    });
    CHECK(link.find("cannot link kernel") != std::string::npos);
    CHECK(link.find("hedra_no_such_fn") != std::string::npos);
    CHECK(link.find("source saved to") != std::string::npos);

    auto module = compiler.compile(kDotSource);
    std::string missing = expect_error([&] { module->symbol("dot_product"); });
    CHECK(missing.find("no symbol 'dot_product'") != std::string::npos);
    CHECK(missing.find("source saved to") != std::string::npos);
    fs::remove(saved_source_path(missing));
}

TEST_CASE("jit: flags change the cache key, and -mllvm is refused") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    auto flags = JitCompiler::default_flags();
    CHECK(compiler.cache_key(kDotSource, flags) == compiler.cache_key(kDotSource, flags));
    auto o1 = flags;
    o1.push_back("-O1");
    CHECK(compiler.cache_key(kDotSource, flags) != compiler.cache_key(kDotSource, o1));
    CHECK(compiler.cache_key(kDotSource, flags) != compiler.cache_key(kDotSource + " ", flags));
    check_dot(*compiler.compile(kDotSource, {"-O1"}));
    std::string message = expect_error([&] { compiler.compile(kDotSource, {"-mllvm"}); });
    CHECK(message.find("process-global") != std::string::npos);
}

TEST_CASE("jit: a second compile of the same source is a fast cache hit") {
    TempDir dir;
    auto start = std::chrono::steady_clock::now();
    double cold = 0.0;
    {
        JitCompiler compiler(options_in(dir.path));
        start = std::chrono::steady_clock::now();
        auto module = compiler.compile(kDotSource);
        cold = seconds_since(start);
        CHECK(compiler.cache_stats().misses == 1);
        CHECK(compiler.cache_stats().hits == 0);
        CHECK(fs::exists(compiler.cache().entry_path(module->key())));
    }
    JitCompiler compiler(options_in(dir.path)); // a new process would see the same directory
    double warm = 1e9;
    for (int round = 0; round < 3; ++round) { // the best of 3, as the machine may be busy
        start = std::chrono::steady_clock::now();
        auto module = compiler.compile(kDotSource);
        warm = std::min(warm, seconds_since(start));
        CHECK(module->from_cache());
        check_dot(*module);
    }
    CHECK(compiler.cache_stats().hits == 3);
    CHECK(compiler.cache_stats().misses == 0);
    CHECK(warm * 5 < cold);
    MESSAGE("dot kernel: cold in-process compile " << cold * 1e3 << " ms, cache hit " << warm * 1e3
                                                   << " ms");
}

TEST_CASE("jit: a truncated or corrupted cache entry is detected and recompiled") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    auto first = compiler.compile(kDotSource);
    fs::path entry = compiler.cache().entry_path(first->key());
    auto size = fs::file_size(entry);

    SUBCASE("truncated") {
        fs::resize_file(entry, size / 2);
    }
    SUBCASE("overwritten") {
        std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(static_cast<std::streamoff>(size - 64));
        std::string junk(32, '\x5a');
        file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    SUBCASE("empty") {
        fs::resize_file(entry, 0);
    }

    auto second = compiler.compile(kDotSource);
    CHECK_FALSE(second->from_cache());
    CHECK(compiler.cache_stats().corrupt == 1);
    CHECK(compiler.cache_stats().misses == 2);
    check_dot(*second);
    CHECK(fs::file_size(entry) == size); // rewritten whole
    auto third = compiler.compile(kDotSource);
    CHECK(third->from_cache());
    check_dot(*third);
}

TEST_CASE("jit: cache entries round-trip and reject another key") {
    std::string object = "\x7f"
                         "ELF some bytes";
    std::string entry = hedra::backend::encode_cache_entry("abc", object);
    CHECK(hedra::backend::decode_cache_entry("abc", entry) == object);
    CHECK_FALSE(hedra::backend::decode_cache_entry("abd", entry).has_value());
    CHECK_FALSE(hedra::backend::decode_cache_entry("abc", entry + "x").has_value());
    CHECK_FALSE(hedra::backend::decode_cache_entry("abc", entry.substr(0, 10)).has_value());
}

TEST_CASE("jit: an unwritable cache directory still compiles, caching in memory") {
    TempDir dir;
    fs::path blocker = dir.path / "a_file";
    std::ofstream(blocker) << "not a directory";
    JitCompiler compiler(options_in(blocker / "cache")); // cannot be created, even by root
    auto module = compiler.compile(kDotSource);
    check_dot(*module);
    CHECK_FALSE(compiler.cache().persistent());
    CHECK(compiler.cache_stats().store_failures == 1);
    auto again = compiler.compile(kDotSource);
    CHECK(again->from_cache());
    check_dot(*again);

    JitCompiler memory_only(JitOptions{});
    check_dot(*memory_only.compile(kDotSource));
}

TEST_CASE("jit: the default cache directory follows HEDRA_CACHE_DIR and XDG_CACHE_HOME") {
    auto saved = [](const char* name) -> std::optional<std::string> {
        const char* value = std::getenv(name);
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
    auto restore = [](const char* name, const std::optional<std::string>& value) {
        if (value)
            ::setenv(name, value->c_str(), 1);
        else
            ::unsetenv(name);
    };
    auto hedra_dir = saved("HEDRA_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME");
    ::setenv("HEDRA_CACHE_DIR", "/some/where", 1);
    CHECK(KernelCache::default_directory() == fs::path("/some/where"));
    ::unsetenv("HEDRA_CACHE_DIR");
    ::setenv("XDG_CACHE_HOME", "/xdg", 1);
    CHECK(KernelCache::default_directory() == fs::path("/xdg/hedra"));
    restore("HEDRA_CACHE_DIR", hedra_dir);
    restore("XDG_CACHE_HOME", xdg);
}

TEST_CASE("jit: threads compile different sources concurrently") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    const int threads = 4;
    std::vector<long> results(threads, -1);
    std::vector<std::string> errors(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            try {
                auto module = compiler.compile(scaled_source(t + 2));
                results[t] = module->function<long(int)>("scaled_sum")(1000);
            } catch (const std::exception& error) {
                errors[t] = error.what();
            }
        });
    }
    for (auto& worker : workers)
        worker.join();
    for (int t = 0; t < threads; ++t) {
        CHECK(errors[t] == "");
        CHECK(results[t] == long(t + 2) * 999 * 1000 / 2);
    }
    CHECK(compiler.cache_stats().misses == threads);
}

TEST_CASE("jit: modules can be released and the same source compiled again") {
    TempDir dir;
    JitCompiler compiler(options_in(dir.path));
    for (int round = 0; round < 3; ++round) {
        auto module = compiler.compile(kDotSource);
        check_dot(*module);
    }
    CHECK(compiler.cache_stats().hits == 2);
}

TEST_CASE("jit: an external compiler builds and loads a shared object") {
    const char* clang = "/usr/lib/llvm-14/bin/clang++";
    if (!fs::exists(clang)) return;
    TempDir dir;
    JitOptions options = options_in(dir.path);
    options.external_compiler = clang;
    JitCompiler compiler(options);
    check_dot(*compiler.compile(kDotSource));
    std::string message =
        expect_error([&] { compiler.compile("extern \"C\" int f() { return nope; }\n"); });
    CHECK(message.find("external compiler") != std::string::npos);
    CHECK(message.find("nope") != std::string::npos);
    CHECK(fs::exists(saved_source_path(message)));
}
