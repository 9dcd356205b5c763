// The openmp backend's on-disk caches across processes (issue 3): a second process running the
// same program compiles nothing (no isl: the plan cache; no clang: the object cache), and a
// damaged cache entry (truncated, a flipped byte, a valid entry holding broken source) is
// recompiled, never trusted, with the right result. Each run is a fresh process (the
// process-wide JIT reads $HEDRA_CACHE_DIR once): this test binary run again on the child test
// case below, which writes its counters and whether its results were right to a report file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/plan_cache.hpp"
#include "hedra.hpp"

extern char** environ;

using namespace hedra;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kM = 13, kK = 7, kN = 5;

std::vector<float> values(std::int64_t n, int seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>((static_cast<int>(i) * 5 + seed) % 9) / 4.0f - 1.0f;
    return v;
}

// y = relu(a·b − 0.5) and s = Σ_j y², checked against naive loops.
bool run_program_and_check() {
    Array a = placeholder(Shape::of({kM, kK}), DType::F32, "a");
    Array b = placeholder(Shape::of({kK, kN}), DType::F32, "b");
    Array y = relu(matmul(a, b) - 0.5f);
    Array s = sum(y * y, {1});
    ComputeOptions options;
    options.backend = "openmp";
    CompiledProgram program = compile({y, s}, {a, b}, options);
    std::vector<float> va = values(kM * kK, 1), vb = values(kK * kN, 2);
    std::vector<HostArray> out =
        program({HostArray::from(va, {kM, kK}), HostArray::from(vb, {kK, kN})});
    bool ok = true;
    for (std::int64_t i = 0; i < kM; ++i) {
        double row = 0;
        for (std::int64_t j = 0; j < kN; ++j) {
            double acc = 0;
            for (std::int64_t k = 0; k < kK; ++k)
                acc += double(va[std::size_t(i * kK + k)]) * double(vb[std::size_t(k * kN + j)]);
            double want = std::max(acc - 0.5, 0.0);
            row += want * want;
            ok = ok && std::fabs(out[0].flat(i * kN + j) - want) <= 1e-5;
        }
        ok = ok && std::fabs(out[1].flat(i) - row) <= 1e-4 * (1 + row);
    }
    return ok;
}

// A fresh directory under the temp directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name) {
        path = fs::temp_directory_path() /
               ("hedra_test_cache_process_" + name + "_" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<fs::path> entries(const fs::path& dir, const std::string& extension) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == extension) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

using Report = std::map<std::string, long>;

// Runs the child test case in a fresh process with HEDRA_CACHE_DIR=dir; returns its report.
Report run_child(const fs::path& dir) {
    fs::path report = dir / "report.txt";
    fs::remove(report);
    std::vector<std::string> vars;
    for (char** e = environ; *e; ++e) {
        std::string v = *e;
        if (v.rfind("HEDRA_CACHE_DIR=", 0) != 0 && v.rfind("HEDRA_DUMP=", 0) != 0 &&
            v.rfind("HEDRA_CXX=", 0) != 0)
            vars.push_back(v);
    }
    vars.push_back("HEDRA_CACHE_DIR=" + dir.string());
    vars.push_back("HEDRA_CACHE_TEST_REPORT=" + report.string());
    std::vector<char*> envp;
    for (std::string& v : vars)
        envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--test-case=cache process: child";
    std::vector<char*> argv = {self.data(), filter.data(), const_cast<char*>("--no-version"),
                               nullptr};
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    Report r;
    std::istringstream in(read_bytes(report));
    std::string name;
    long value = 0;
    while (in >> name >> value)
        r[name] = value;
    REQUIRE(r.count("ok") == 1);
    return r;
}

} // namespace

TEST_CASE("cache process: child") {
    const char* report = std::getenv("HEDRA_CACHE_TEST_REPORT");
    if (report == nullptr) return; // only as a child of the tests below
    bool ok = run_program_and_check();
    auto omp = std::dynamic_pointer_cast<backend::OpenMPBackend>(get_backend("openmp"));
    REQUIRE(omp != nullptr);
    backend::OpenMPStats stats = omp->stats();
    backend::CacheStats objects = backend::JitCompiler::instance().cache_stats();
    backend::CacheStats plans = backend::PlanCache::instance().stats();
    std::ofstream out(report);
    out << "ok " << ok << "\nprograms_compiled " << stats.programs_compiled << "\nprograms_lowered "
        << stats.programs_lowered << "\nclang_runs " << objects.misses << "\nobject_hits "
        << objects.hits << "\nobject_corrupt " << objects.corrupt << "\nplan_hits " << plans.hits
        << "\nplan_corrupt " << plans.corrupt << "\n";
}

TEST_CASE("cache process: a second process running the same program compiles nothing") {
    TempDir dir("second");
    Report first = run_child(dir.path);
    CHECK(first["ok"] == 1);
    CHECK(first["programs_compiled"] == 1);
    CHECK(first["programs_lowered"] == 1);
    CHECK(first["clang_runs"] == 1);
    CHECK(entries(dir.path, ".plan").size() == 1);
    CHECK(entries(dir.path, ".o").size() == 1);
    Report second = run_child(dir.path);
    CHECK(second["ok"] == 1);
    CHECK(second["programs_compiled"] == 1); // built from the caches...
    CHECK(second["programs_lowered"] == 0);  // ...without isl
    CHECK(second["clang_runs"] == 0);        // ...and without clang
    CHECK(second["plan_hits"] == 1);
    CHECK(second["object_hits"] == 1);
}

TEST_CASE("cache process: corrupted cache entries are recompiled and the result is right") {
    TempDir dir("corrupt");
    REQUIRE(run_child(dir.path)["ok"] == 1);
    REQUIRE(entries(dir.path, ".plan").size() == 1);
    REQUIRE(entries(dir.path, ".o").size() == 1);
    const fs::path plan = entries(dir.path, ".plan")[0], object = entries(dir.path, ".o")[0];
    const std::string plan_bytes = read_bytes(plan), object_bytes = read_bytes(object);

    SUBCASE("a flipped byte in the plan: lowered again (the object cache still hits)") {
        std::string bytes = plan_bytes;
        bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
        write_bytes(plan, bytes);
        Report r = run_child(dir.path);
        CHECK(r["ok"] == 1);
        CHECK(r["plan_corrupt"] == 1);
        CHECK(r["programs_lowered"] == 1);
        CHECK(r["clang_runs"] == 0);
    }
    SUBCASE("a flipped byte in the object: compiled again (the plan still hits)") {
        std::string bytes = object_bytes;
        bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x10);
        write_bytes(object, bytes);
        Report r = run_child(dir.path);
        CHECK(r["ok"] == 1);
        CHECK(r["object_corrupt"] == 1);
        CHECK(r["programs_lowered"] == 0);
        CHECK(r["clang_runs"] == 1);
    }
    SUBCASE("both truncated: everything again") {
        write_bytes(plan, plan_bytes.substr(0, plan_bytes.size() / 3));
        write_bytes(object, object_bytes.substr(0, 20));
        Report r = run_child(dir.path);
        CHECK(r["ok"] == 1);
        CHECK(r["plan_corrupt"] == 1);
        CHECK(r["object_corrupt"] == 1);
        CHECK(r["programs_lowered"] == 1);
        CHECK(r["clang_runs"] == 1);
    }
    SUBCASE("a well-formed plan entry holding source that does not compile: lowered again") {
        std::string key = plan.stem().string();
        write_bytes(plan, backend::encode_cache_entry(key, "this is not C++ {"));
        Report r = run_child(dir.path);
        CHECK(r["ok"] == 1);
        CHECK(r["plan_hits"] == 1);
        CHECK(r["programs_lowered"] == 1);
    }
    // After any repair, the next process compiles nothing again.
    Report again = run_child(dir.path);
    CHECK(again["ok"] == 1);
    CHECK(again["programs_lowered"] == 0);
    CHECK(again["clang_runs"] == 0);
}
