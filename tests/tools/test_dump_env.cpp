// HEDRA_DUMP=DIR: a compile by the openmp backend writes one numbered file per stage, a cache
// hit writes nothing, the next compile gets the next number; HEDRA_TIME_PASSES=1 collects a
// table of time per pass (printed at exit).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/dump.hpp"
#include "hedra.hpp"
#include "tools/run_tool.hpp"

using namespace hedra;

namespace {

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> names;
    if (!std::filesystem::exists(dir)) return names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() { unsetenv(name_); }
    const char* name_;
};

} // namespace

TEST_CASE("HEDRA_DUMP: one numbered file per stage of each compile") {
    std::string dir = hedra::test::scratch_path("dumps");
    std::filesystem::remove_all(dir);
    ScopedEnv env("HEDRA_DUMP", dir);
    // Shapes no other test compiles, so the backend's program cache misses.
    Array a = placeholder(Shape::of({7, 5}), DType::F32, "a");
    Array b = placeholder(Shape::of({5, 3}), DType::F32, "b");
    Array c = matmul(a, b);
    CompiledProgram program = compile({c}, {a, b}, ComputeOptions{});
    std::vector<std::string> names = files_in(dir);
    REQUIRE(names.size() == 24);
    std::string prefix = names[0].substr(0, 5); // "0001-" unless an earlier test dumped
    std::vector<std::string> want{"001-graph.txt",
                                  "002-graph.dot",
                                  "003-partition.decide.txt",
                                  "004-partition.cap-expressions.txt",
                                  "005-partition.store-shared-maps.txt",
                                  "006-partition.distribute-fuses.txt",
                                  "007-partition.unroll-reductions.txt",
                                  "008-partition.wide-sums.txt",
                                  "009-partition.epilogues.txt",
                                  "010-partition.buffers.txt",
                                  "011-partition.kernels.txt",
                                  "012-partition.fuse-rows.txt",
                                  "013-partition.in-place-pieces.txt",
                                  "014-partition.split-reductions.txt",
                                  "015-partition.stream-stencils.txt",
                                  "016-partition.txt",
                                  "017-k0-domains.txt",
                                  "018-k0-accesses.txt",
                                  "019-k0-deps.txt",
                                  "020-k0-constraints.yaml",
                                  "021-k0-schedule.yaml",
                                  "022-k0-final-schedule.yaml",
                                  "023-k0-ast.txt",
                                  "024-code.cpp"};
    for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(names[i] == prefix + want[i]);
    // The partition's steps write their decisions: after "decide" the sum is materialized and
    // its product inlined; after "buffers" the sum has its output buffer.
    std::string decided = hedra::test::read_text(dir + "/" + prefix + "003-partition.decide.txt");
    CHECK(decided.find("reduce (7,3): output materialized") != std::string::npos);
    CHECK(decided.find("map (7,3,5): inlined") != std::string::npos);
    std::string buffers = hedra::test::read_text(dir + "/" + prefix + "010-partition.buffers.txt");
    CHECK(buffers.find("reduce (7,3): output materialized buffer=b2") != std::string::npos);
    CHECK(hedra::test::read_text(dir + "/" + prefix + "001-graph.txt") == to_string({c.node()}));
    CHECK(hedra::test::read_text(dir + "/" + prefix + "002-graph.dot").rfind("digraph", 0) == 0);
    std::string domains = hedra::test::read_text(dir + "/" + prefix + "017-k0-domains.txt");
    CHECK(
        domains.find("S1 := { S1[i0, i1, i2] : 0 <= i0 <= 6 and 0 <= i1 <= 2 and 0 <= i2 <= 4 }") !=
        std::string::npos);
    CHECK(hedra::test::read_text(dir + "/" + prefix + "024-code.cpp").find("hedra_program") !=
          std::string::npos);

    // The same graph again: a cache hit compiles nothing and writes nothing.
    Array c2 = matmul(a, b);
    CompiledProgram again = compile({c2}, {a, b}, ComputeOptions{});
    CHECK(files_in(dir).size() == 24);

    // Another graph: the next compile number.
    Array d = placeholder(Shape::of({9}), DType::F32, "d");
    compile({exp(d) + 1.0}, {d}, ComputeOptions{});
    std::vector<std::string> after = files_in(dir);
    REQUIRE(after.size() > 11);
    int first = std::stoi(prefix), next = std::stoi(after.back().substr(0, 4));
    CHECK(next == first + 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("HEDRA_DUMP: nothing is written when it is unset or 0") {
    std::string dir = hedra::test::scratch_path("no_dumps");
    std::filesystem::remove_all(dir);
    {
        ScopedEnv env("HEDRA_DUMP", "0");
        CHECK_FALSE(dump::enabled());
        dump::write_stage("graph", "txt", "x");
    }
    CHECK_FALSE(dump::enabled());
    CHECK(files_in(dir).empty());
}

TEST_CASE("HEDRA_DUMP: an unwritable directory is an error") {
    ScopedEnv env("HEDRA_DUMP", "/proc/hedra-cannot-write-here");
    CHECK_THROWS_AS(dump::write_stage("graph", "txt", "x"), Error);
}

TEST_CASE("HEDRA_TIME_PASSES: time per pass") {
    ScopedEnv env("HEDRA_TIME_PASSES", "1");
    dump::reset_pass_times();
    Array x = placeholder(Shape::of({11, 13}), DType::F32, "x");
    compile({sum(x * x, {1})}, {x}, ComputeOptions{});
    std::string table = dump::pass_time_table();
    for (const char* pass :
         {"partition", "scop", "dependences", "schedule", "tile", "ast", "print", "jit", "total"}) {
        INFO(pass);
        CHECK(table.find(pass) != std::string::npos);
    }
    auto run = hedra::test::run_tool("matmul --dump=graph", "HEDRA_TIME_PASSES=1");
    CHECK(run.status == 0);
    CHECK(run.err.find("hedra: time per pass (HEDRA_TIME_PASSES)") != std::string::npos);
}
