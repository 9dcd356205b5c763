// A very large scalar expression is printed as several noinline functions of bounded size
// (c_segments.hpp), so that clang's register allocator sees small functions; the values are
// checked end to end by tests/core/test_scalar_dag.cpp (k = 2000 on openmp).
#include <doctest/doctest.h>

#include "backends/common/c_segments.hpp"
#include "core/scalar_dag.hpp"
#include "core/sym.hpp"

using namespace hedra;
using namespace hedra::backend;

TEST_CASE("a large expression is split into bounded noinline segments") {
    Sym y(scalar_input(0, DType::F32));
    for (int i = 0; i < 2000; ++i)
        y = tanh(y) * 0.5f + y * 0.5f;
    const ScalarExpr& e = y.expr();
    REQUIRE(worth_segmenting(e));
    CHECK_FALSE(worth_segmenting(scalar_unary(ScalarOp::Tanh, scalar_input(0, DType::F32))));
    std::string body;
    SegmentedValue s = print_segmented(
        e, [](int k) { return "b0[i" + std::to_string(k) + "]"; }, "    ", "hd_k0_S1", body);
    const std::size_t operations = topological_order(e).size() - 1 - 4000; // input, constants
    const std::size_t expected = (operations + kSegmentNodes - 1) / kSegmentNodes;
    std::size_t functions = 0, lines = 0, longest = 0;
    for (std::size_t at = 0; (at = s.functions.find("noinline", at)) != std::string::npos; ++at)
        ++functions;
    CHECK(functions == expected);
    // Each function computes at most kSegmentNodes values (plus the stores of its slots).
    std::size_t pos = 0;
    while ((pos = s.functions.find("\n", pos)) != std::string::npos) {
        ++pos;
        if (s.functions.compare(pos, 4, "}\n") == 0 || s.functions.compare(pos, 1, "}") == 0) {
            longest = std::max(longest, lines);
            lines = 0;
        } else if (s.functions.compare(pos, 10, "    const ") == 0) {
            ++lines;
        }
    }
    CHECK(longest <= kSegmentNodes);
    CHECK(longest > 0);
    // The kernel body reads the input once, calls every segment in order, and the value is a
    // slot.
    CHECK(body.find("= b0[i0];") != std::string::npos);
    CHECK(body.find("hd_k0_S1_0(") < body.find("hd_k0_S1_1("));
    CHECK(body.find("hd_k0_S1_" + std::to_string(expected - 1) + "(") != std::string::npos);
    CHECK(s.value.rfind("hd_sf[", 0) == 0);
    // Deterministic: the same expression prints the same functions.
    std::string again;
    CHECK(print_segmented(
              e, [](int k) { return "b0[i" + std::to_string(k) + "]"; }, "    ", "hd_k0_S1", again)
              .functions == s.functions);
}
