// Golden dumps: every stage (graph, partition, isl domains, accesses, dependences, schedule
// constraints, schedules, loop AST, C source) of matmul, a convolution, Jacobi and softmax as
// hedra-dump prints them, and their CUDA source and GPU mapping (also of a bf16 matmul, on tensor
// cores), compared with tests/tools/golden/*.txt. A change in the compiler that changes a dump
// shows up here as a diff to review; after reviewing, regenerate with HEDRA_UPDATE_GOLDEN=1
// (docs/env_vars.md). Also: every example dumps deterministically (two runs, identical bytes).
#include <doctest/doctest.h>

#include <cstdlib>

#include "tools/dump_examples.hpp"
#include "tools/run_tool.hpp"

using hedra::test::run_tool;

namespace {

// The first line where `got` and `want` differ, for a readable failure.
std::string first_difference(const std::string& got, const std::string& want) {
    std::size_t line = 1, start = 0;
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        if (got[i] != want[i]) {
            auto end_of = [&](const std::string& s) {
                auto e = s.find('\n', start);
                return s.substr(start, e == std::string::npos ? std::string::npos : e - start);
            };
            return "line " + std::to_string(line) + ":\n  got:  " + end_of(got) +
                   "\n  want: " + end_of(want);
        }
        if (got[i] == '\n') {
            ++line;
            start = i + 1;
        }
    }
    return "one is a prefix of the other (" + std::to_string(got.size()) + " vs " +
           std::to_string(want.size()) + " bytes)";
}

void check_golden(const std::string& example, const std::string& options = "",
                  const std::string& suffix = "") {
    // The goldens are AVX2 code on every machine (hedra-dump inherits the variable).
    setenv("HEDRA_CPU_TARGET", "avx2", 1);
    auto run = run_tool(example + options);
    if (run.status == 2 && run.err.find("not built into this hedra-dump") != std::string::npos) {
        MESSAGE("skipped: " << run.err);
        return;
    }
    REQUIRE(run.status == 0);
    std::string path = HEDRA_GOLDEN_DIR "/" + example + suffix + ".txt";
    if (const char* update = std::getenv("HEDRA_UPDATE_GOLDEN"); update && *update) {
        hedra::test::write_text(path, run.out);
        MESSAGE("updated " << path);
        return;
    }
    std::string want = hedra::test::read_text(path);
    REQUIRE_MESSAGE(!want.empty(),
                    "missing golden file " << path << "; run with HEDRA_UPDATE_GOLDEN=1");
    INFO("golden " << path << " differs at " << first_difference(run.out, want)
                   << "\n(review, then regenerate with HEDRA_UPDATE_GOLDEN=1)");
    CHECK(run.out == want);
}

} // namespace

TEST_CASE("golden dump: matmul") {
    check_golden("matmul");
}

TEST_CASE("golden dump: jacobi") {
    check_golden("jacobi");
}

TEST_CASE("golden dump: conv2d") {
    check_golden("conv2d");
}

TEST_CASE("golden dump: softmax") {
    check_golden("softmax");
}

TEST_CASE("golden CUDA source: matmul, conv2d, jacobi, softmax, matmul_bf16") {
    for (const char* example : {"matmul", "conv2d", "jacobi", "softmax", "matmul_bf16"}) {
        CAPTURE(example);
        check_golden(example, " --target=cuda --dump=code", ".cuda");
    }
}

// What the GPU mapping passes decided for them (tiles, staging, strategies, threads): a change in
// a policy shows up here as a diff to review, beside the source it prints.
TEST_CASE("golden GPU mapping: matmul, conv2d, jacobi, softmax, matmul_bf16") {
    for (const char* example : {"matmul", "conv2d", "jacobi", "softmax", "matmul_bf16"}) {
        CAPTURE(example);
        check_golden(example, " --target=cuda --dump=mapping", ".mapping");
    }
}

TEST_CASE("dumps are deterministic: the same bytes on every run") {
    for (const hedra::tools::Example& e : hedra::tools::examples()) {
        INFO(e.name);
        for (const char* format : {"text", "json"}) {
            std::string args = std::string(e.name) + " --format=" + format;
            auto first = run_tool(args), second = run_tool(args);
            REQUIRE(first.status == 0);
            CHECK(first.out == second.out);
            CHECK(!first.out.empty());
        }
    }
}
