// hedra-dump's command line: exit statuses (0 ok, 1 bad input, 2 usage, 3 illegal schedule)
// and their messages, every format, schedule files, graph-file input and -o.
#include <doctest/doctest.h>

#include <fstream>

#include "core/graph_file.hpp"
#include "core/json.hpp"
#include "tools/dump_examples.hpp"
#include "tools/run_tool.hpp"

using namespace hedra;
using hedra::test::run_tool;
using hedra::test::scratch_path;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

} // namespace

TEST_CASE("hedra-dump: --help and --version") {
    auto help = run_tool("--help");
    CHECK(help.status == 0);
    CHECK(contains(help.out, "usage: hedra-dump [options] INPUT"));
    CHECK(contains(help.out, "matmul, conv2d, jacobi, softmax, mlp_step"));
    auto version = run_tool("--version");
    CHECK(version.status == 0);
    CHECK(contains(version.out, "hedra-dump (hedra) "));
}

TEST_CASE("hedra-dump --list-passes prints the compiler's pass list, in order") {
    auto list = run_tool("--list-passes");
    CHECK(list.status == 0);
    std::size_t at = 0;
    for (const char* pass :
         {"canonicalize", "partition.decide", "partition.kernels", "narrow-domains", "scop",
          "dependences", "schedule", "tile", "ast", "print", "jit"}) {
        CAPTURE(pass);
        std::size_t found = list.out.find(std::string("\n") + pass + " ", at);
        CHECK(found != std::string::npos);
        if (found != std::string::npos) at = found;
    }
}

TEST_CASE("docs/pipeline.md's pass table is the one --list-passes prints") {
    // The table is the fenced block that starts with the tool's header line.
    std::ifstream in(std::string(HEDRA_DOCS_DIR) + "/pipeline.md");
    REQUIRE(in);
    std::string line, table;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.rfind("# pass (timer)", 0) == 0) inside = true;
        if (inside && line.rfind("```", 0) == 0) break;
        if (inside) table += line + "\n";
    }
    auto list = run_tool("--list-passes");
    REQUIRE(list.status == 0);
    CHECK(table == list.out);
}

TEST_CASE("hedra-dump: bad input exits 1 with a message") {
    auto missing = run_tool("/nonexistent/model.json");
    CHECK(missing.status == 1);
    CHECK(contains(missing.err,
                   "hedra-dump: load_graph_file: cannot open '/nonexistent/model.json'"));

    std::string bad = scratch_path("malformed.json");
    hedra::test::write_text(bad, "{\"format\": \"hedra-graph\",\n  \"version\": }\n");
    auto malformed = run_tool("'" + bad + "'");
    CHECK(malformed.status == 1);
    CHECK(
        contains(malformed.err, bad + ":2:14: syntax error while parsing value - unexpected '}'"));

    std::string wrong = scratch_path("wrong.json");
    hedra::test::write_text(wrong, "{\"format\": \"hedra-graph\", \"version\": 1, \"nodes\": [], "
                                   "\"outputs\": [0]}");
    auto dangling = run_tool("'" + wrong + "'");
    CHECK(dangling.status == 1);
    CHECK(contains(dangling.err, "refers to node 0, which is not defined before it"));

    auto unknown = run_tool("matmull");
    CHECK(unknown.status == 1);
    CHECK(contains(unknown.err, "'matmull' is neither a file nor a built-in example (matmul, "
                                "conv2d, jacobi, softmax, mlp_step, matmul_bf16, rnn_step)"));
    CHECK(unknown.out.empty());
}

TEST_CASE("hedra-dump: usage errors exit 2") {
    struct Case {
        const char* args;
        const char* message;
    };
    for (Case c :
         {Case{"matmul --frobnicate", "argument was not expected: --frobnicate"},
          Case{"matmul --dump=colors", "unknown stage 'colors' in --dump"},
          Case{"matmul --format=xml", "unknown format 'xml'"},
          Case{"matmul --format=dot --dump=code", "--format=dot does not apply to stage 'code'"},
          Case{"matmul --tile-sizes=0", "--tile-sizes takes positive integers"},
          Case{"matmul --tile-sizes=a,b", "--tile-sizes takes positive integers"},
          Case{"", "no input"}, Case{"matmul jacobi", "more than one input"},
          Case{"matmul --dump", "--dump: 1 required TEXT missing"},
          Case{"matmul --dump ''", "option '--dump' needs a value"},
          Case{"matmul --target=tpu", "unknown target 'tpu'"},
          Case{"matmul --target=reference --dump=code", "stage 'code' does not exist"},
          Case{"matmul --target=reference --save-schedule=x", "no isl schedules"}}) {
        INFO(c.args);
        auto r = run_tool(c.args);
        CHECK(r.status == 2);
        CHECK(contains(r.err, c.message));
        CHECK(contains(r.err, "(see hedra-dump --help)"));
        CHECK(r.out.empty());
    }
}

TEST_CASE("hedra-dump: schedules saved, loaded, and rejected when illegal") {
    std::string saved = scratch_path("matmul.schedule.json");
    auto save = run_tool("matmul --dump=code --save-schedule='" + saved + "'");
    REQUIRE(save.status == 0);
    std::string schedules = hedra::test::read_text(saved);
    CHECK(contains(schedules, "\"format\": \"hedra-schedules\""));
    REQUIRE(contains(schedules, "[(i2)]"));

    auto load = run_tool("matmul --dump=code --load-schedule='" + saved + "'");
    CHECK(load.status == 0);
    CHECK(load.out == save.out);

    // The reduction loop run backwards: the updates S1[.., k] -> S1[.., k+1] are out of order.
    std::string reversed = scratch_path("reversed.schedule.json");
    hedra::test::write_text(reversed, replace_all(schedules, "[(i2)]", "[(-i2)]"));
    auto illegal = run_tool("matmul --load-schedule='" + reversed + "'");
    CHECK(illegal.status == 3);
    CHECK(contains(illegal.err, "the schedule of kernel k0 in '" + reversed + "' is illegal"));
    CHECK(contains(illegal.err, "violates the dependences { S1[i0, i1, i2] -> S1["));
    CHECK(illegal.out.empty());

    auto wrong_kernel = run_tool("jacobi --load-schedule='" + saved + "'");
    CHECK(wrong_kernel.status == 1);
    CHECK(contains(wrong_kernel.err, "does not fit the kernel"));

    std::string garbage = scratch_path("garbage.schedule.json");
    hedra::test::write_text(garbage, replace_all(schedules, "domain:", "domian:"));
    auto unreadable = run_tool("matmul --load-schedule='" + garbage + "'");
    CHECK(unreadable.status == 1);
    CHECK(contains(unreadable.err, "is not an isl schedule"));

    auto absent = run_tool("matmul --load-schedule=/nonexistent/s.json");
    CHECK(absent.status == 1);
    CHECK(contains(absent.err, "cannot open the schedule file '/nonexistent/s.json'"));
}

TEST_CASE("hedra-dump: formats") {
    auto json_run = run_tool("softmax --format=json");
    REQUIRE(json_run.status == 0);
    json::Value doc = json::parse(json_run.out, "stdout").root;
    CHECK(doc["graph"]["format"] == "hedra-graph");
    REQUIRE(doc["kernels"].size() >= 1);
    CHECK(doc["kernels"][0]["statements"][0]["domain"].is_string());
    CHECK(contains(doc["code"].get<std::string>(), "hedra_program"));

    auto jscop = run_tool("matmul --format=jscop");
    REQUIRE(jscop.status == 0);
    json::Value scops = json::parse(jscop.out, "stdout").root;
    REQUIRE(scops.size() == 1);
    const json::Value& s1 = scops[0]["statements"][1];
    CHECK(s1["name"] == "S1");
    CHECK(contains(s1["domain"].get<std::string>(), "S1[i0, i1, i2]"));
    CHECK(s1["accesses"].size() == 4);
    CHECK(contains(s1["schedule"].get<std::string>(), "S1[i0, i1, i2] -> ["));

    auto dot = run_tool("conv2d --format=dot");
    REQUIRE(dot.status == 0);
    CHECK(dot.out.rfind("digraph hedra {", 0) == 0);
    CHECK(contains(dot.out, "-> out0;"));

    auto yaml = run_tool("jacobi --format=yaml --dump=final-schedule");
    REQUIRE(yaml.status == 0);
    CHECK(yaml.out.rfind("domain: \"{ S0[", 0) == 0);

    // The cuda target, where the toolkit was found at configure time: graph, partition, code.
    auto cuda = run_tool("matmul --target=cuda --dump=code");
    if (cuda.status == 0)
        CHECK(contains(cuda.out, "__global__"));
    else
        CHECK(contains(cuda.err, "target 'cuda' is not built into this hedra-dump"));
    // Its PTX (NVRTC, when asked for): the contraction's fused multiply-adds; no PTX elsewhere.
    if (cuda.status == 0) {
        auto ptx = run_tool("matmul --target=cuda --dump=ptx");
        if (ptx.status == 0) {
            CHECK(contains(ptx.out, ".entry k0_0("));
            CHECK(contains(ptx.out, "fma.rn.f32"));
        } else {
            INFO("status " << ptx.status << ", stderr: " << ptx.err);
            CHECK(contains(ptx.err, "NVRTC")); // no libnvrtc on this machine
        }
    }
    auto no_ptx = run_tool("matmul --dump=ptx");
    CHECK(no_ptx.status == 2);
    CHECK(contains(no_ptx.err, "use --target=cuda"));
    // The GPU mapping passes' decisions: the cuda target's, in JSON too; not openmp's.
    if (cuda.status == 0) {
        auto mapping = run_tool("matmul --target=cuda --dump=mapping --format=json");
        REQUIRE(mapping.status == 0);
        CHECK(contains(mapping.out, "\"mapping\""));
        CHECK(contains(mapping.out, "k0 contraction m="));
    }
    auto no_mapping = run_tool("matmul --dump=mapping");
    CHECK(no_mapping.status == 2);
    CHECK(contains(no_mapping.err, "GPU mapping passes"));
    CHECK(run_tool("matmul --dump=all").status == 0); // all: not the cuda target's stages

    auto reference = run_tool("mlp_step --target=reference");
    CHECK(reference.status == 0);
    CHECK(reference.out.rfind("%0 = ", 0) == 0);
    CHECK(contains(reference.out, "placeholder #2 'labels'"));
}

TEST_CASE("hedra-dump: tile sizes, -o, and a graph file as input") {
    auto tiled = run_tool("matmul --dump=final-schedule --tile-sizes=8,16");
    REQUIRE(tiled.status == 0);
    CHECK(contains(tiled.out, "floor((i0)/8)"));

    std::string out = scratch_path("out.cpp");
    auto to_file = run_tool("matmul --dump=code -o '" + out + "'");
    CHECK(to_file.status == 0);
    CHECK(to_file.out.empty());
    CHECK(contains(hedra::test::read_text(out), "hedra_program"));

    // The same program from a file: every stage after the graph is identical.
    tools::ExampleGraph g = tools::find_example("conv2d")->build();
    std::string file = scratch_path("conv2d.json");
    save_graph_file(file, g.outputs, g.placeholders);
    std::string stages = "--dump=partition,domains,accesses,deps,constraints,schedule,"
                         "final-schedule,ast,code";
    auto from_file = run_tool("'" + file + "' " + stages);
    auto builtin = run_tool("conv2d " + stages);
    REQUIRE(from_file.status == 0);
    CHECK(from_file.out == builtin.out);
}

TEST_CASE("hedra-dump: a scan's loop around its kernels in the partition, schedule and AST") {
    auto r = run_tool("rnn_step --dump=partition,schedule,ast");
    REQUIRE(r.status == 0);
    CHECK(contains(r.out, "scan loop: t from 0 to T-1, T = 6"));
    CHECK(contains(r.out, "scan loop: t from T-1 down to 0, T = 6"));
    CHECK(contains(r.out, "# inside for (t0 = 0; t0 < 6; t0 += 1) // scan loop"));
    CHECK(contains(r.out, "for (t0 = 6 - 1; t0 >= 0; t0 -= 1) { // scan loop"));
}
