// hedra-aot's command line: every flag documented, a graph file compiled into a header, sources
// and a library, and bad input (a graph file that does not load, a generator that throws, an
// unknown target) refused with a clear message and a non-zero status.
#include <doctest/doctest.h>

#include "aot/aot_run.hpp"
#include "hedra.hpp"

namespace {

using hedra::test::run_command;
const std::string kTool = "'" HEDRA_AOT_TOOL "'";
const std::string kGenerators = "'" HEDRA_AOT_TEST_GENERATORS "'";

} // namespace

TEST_CASE("hedra-aot --help documents every flag") {
    auto r = run_command(kTool + " --help");
    CHECK(r.status == 0);
    for (const char* flag :
         {"--graph", "--generator", "--param", "--list-generators", "--name", "--output-dir",
          "--target", "--namespace", "--no-library", "--compiler", "--archiver", "--march",
          "--cuda-arch", "--cuda-multiprocessors", "--help"})
        CHECK_MESSAGE(r.out.find(flag) != std::string::npos, flag);
}

TEST_CASE("hedra-aot writes the header, the sources and the library of a graph file") {
    using namespace hedra;
    const auto dir = test::aot_scratch("graph");
    Array x = placeholder(Shape{dynamic("rows", 50), range(4)}, DType::F32, "x");
    save_graph_file((dir / "row_sums.json").string(), {sum(x * 2.0f, {1})}, {x});
    auto r = run_command(kTool + " --graph '" + (dir / "row_sums.json").string() + "' -o '" +
                         (dir / "out").string() + "'");
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const std::string header = test::read_file_text(dir / "out" / "row_sums.h");
    CHECK(header.find("int row_sums_c(\n    int64_t rows,\n    const float* x,\n    float* "
                      "output0,\n    void* workspace,\n    int num_threads);") !=
          std::string::npos);
    CHECK(header.find("//   x       f32  [rows<=50, 4]\n") != std::string::npos);
    CHECK(header.find("#define ROW_SUMS_ROWS_MAX 50") != std::string::npos);
    CHECK(header.find("namespace hedra_aot {") != std::string::npos);
    CHECK(std::filesystem::file_size(dir / "out" / "librow_sums.a") > 0);
    const std::string source = test::read_file_text(dir / "out" / "row_sums.program.cpp");
    CHECK(source.find("#include") == std::string::npos); // self-contained: math inlined
    CHECK(source.find("extern \"C\" void hedra_aot_row_sums(void** ") != std::string::npos);
}

TEST_CASE("hedra-aot refuses bad input with a message and a non-zero status") {
    const auto dir = hedra::test::aot_scratch("bad");
    SUBCASE("a graph file that does not exist") {
        auto r = run_command(kTool + " --graph /nonexistent/g.json -o '" + dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("hedra-aot: cannot load the graph file") != std::string::npos);
    }
    SUBCASE("a graph file that does not parse") {
        std::ofstream(dir / "bad.json")
            << "{\"format\": \"hedra-graph\", \"version\": 1, \"nodes\": [";
        auto r = run_command(kTool + " --graph '" + (dir / "bad.json").string() + "' -o '" +
                             dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("bad.json") != std::string::npos);
    }
    SUBCASE("an unknown target") {
        auto r = run_command(kTool + " --graph g.json --target metal -o '" + dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("unknown target 'metal' (known: openmp, cuda)") != std::string::npos);
    }
    SUBCASE("the cuda target and a symbolic size") {
        auto r = run_command(kGenerators + " --generator scale_and_sum --target cuda -o '" +
                             dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("compiles static sizes only, and 'scale_and_sum' has the symbolic size "
                         "'n'") != std::string::npos);
    }
    SUBCASE("a generator that throws") {
        auto r = run_command(kGenerators + " --generator always_throws -o '" + dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("the generator 'always_throws' failed: this generator always fails") !=
              std::string::npos);
    }
    SUBCASE("an unknown generator") {
        auto r = run_command(kGenerators + " --generator nope -o '" + dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find(
                  "no generator 'nope' (known: always_throws, cuda_demo, mlp_step, scale_and_sum, "
                  "with_weights)") != std::string::npos);
    }
    SUBCASE("a generator parameter that is no integer") {
        auto r = run_command(kGenerators + " --generator scale_and_sum --param max=lots -o '" +
                             dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("'max' must be an integer, got 'lots'") != std::string::npos);
    }
    SUBCASE("an unknown flag") {
        CHECK(run_command(kTool + " --bogus").status == 2);
    }
    SUBCASE("neither a graph nor a generator") {
        CHECK(run_command(kTool + " -o '" + dir.string() + "'").status == 2);
    }
    SUBCASE("a name that is no C identifier") {
        auto r = run_command(kGenerators + " --generator scale_and_sum --name 3d -o '" +
                             dir.string() + "'");
        CHECK(r.status == 1);
        CHECK(r.err.find("the name '3d' is not a C identifier") != std::string::npos);
    }
}
