// Reference backend: registration, memoization after compute, shared subgraphs, and compiled
// programs over placeholders run several times with new inputs (and their errors).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "hedra.hpp"

using namespace hedra;

namespace {

ComputeOptions reference_options() {
    ComputeOptions options;
    options.backend = "reference";
    return options;
}

HostArray ref(const Array& a) {
    return compute(a, reference_options());
}

void check_values(const HostArray& h, const std::vector<std::int64_t>& sizes,
                  const std::vector<double>& expected) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]));
    }
}

// The message of the hedra::Error `f` throws ("" if it throws nothing).
template <class F>
std::string error_message(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("reference: the backend is registered") {
    auto names = backend_names();
    CHECK(std::find(names.begin(), names.end(), "reference") != names.end());
    auto backend = get_backend("reference");
    REQUIRE(backend);
    CHECK(backend->name() == "reference");
    Array a = array(std::vector<double>{1, 2}, Shape::of({2})) * 3;
    auto hs = backend->evaluate({a.node()}, CompileOptions{});
    REQUIRE(hs.size() == 1);
    check_values(hs[0], {2}, {3, 6});
}

TEST_CASE("reference: compute memoizes its results") {
    Array a = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    Array b = a * 2 + 1;
    CHECK_FALSE(b.value().has_value());
    HostArray first = ref(b);
    check_values(first, {3}, {3, 5, 7});
    auto memo = b.value();
    REQUIRE(memo.has_value());
    check_values(*memo, {3}, {3, 5, 7});
    check_values(ref(b), {3}, {3, 5, 7});
    // An equal array built again is the same node, so it is backed by the result too.
    Array b_again = a * 2 + 1;
    CHECK(b_again.value().has_value());
    // Users of a memoized array read it as a leaf.
    check_values(ref(b + 1), {3}, {4, 6, 8});
    check_values(ref(sum(b)), {}, {15});
}

TEST_CASE("reference: compute evaluates several arrays together") {
    Array a = array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}));
    Array shared = exp(a * 0.5);
    Array x = sum(shared, {0}), y = shared * 2;
    auto hs = compute({x, y, a}, reference_options());
    REQUIRE(hs.size() == 3);
    double e[4];
    for (int i = 0; i < 4; ++i)
        e[i] = std::exp(0.5 * (i + 1));
    CHECK(hs[0].values<float>()[0] == doctest::Approx(e[0] + e[2]).epsilon(1e-6));
    CHECK(hs[0].values<float>()[1] == doctest::Approx(e[1] + e[3]).epsilon(1e-6));
    CHECK(hs[1].values<float>()[3] == doctest::Approx(2 * e[3]).epsilon(1e-6));
    check_values(hs[2], {2, 2}, {1, 2, 3, 4});
    CHECK(x.value().has_value());
}

TEST_CASE("reference: compiled programs run with new inputs") {
    Array p = placeholder(Shape::of({3}), DType::F32, "x");
    Array q = placeholder(Shape::of({3}), DType::F32, "weights");
    Array y = p * q + 1;
    Array z = sum(p);
    CompiledProgram program = compile({y, z}, {p, q}, reference_options());
    CHECK(program.num_inputs() == 2);
    CHECK(program.num_outputs() == 2);

    auto r1 =
        program({HostArray::from<float>({1, 2, 3}, {3}), HostArray::from<float>({4, 5, 6}, {3})});
    REQUIRE(r1.size() == 2);
    check_values(r1[0], {3}, {5, 11, 19});
    check_values(r1[1], {}, {6});
    auto r2 =
        program({HostArray::from<float>({-1, 0, 2}, {3}), HostArray::from<float>({2, 2, 2}, {3})});
    check_values(r2[0], {3}, {-1, 1, 5});
    check_values(r2[1], {}, {1});
    // The first results are unchanged by the second run.
    check_values(r1[0], {3}, {5, 11, 19});

    // Inputs of the wrong sizes or dtype are rejected.
    CHECK_THROWS_AS(
        program({HostArray::from<float>({1, 2}, {2}), HostArray::from<float>({1, 2, 3}, {3})}),
        Error);
    CHECK_THROWS_AS(
        program({HostArray::from<double>({1, 2, 3}, {3}), HostArray::from<float>({1, 2, 3}, {3})}),
        Error);
}

TEST_CASE("reference: placeholders on shifted shapes and as outputs") {
    Array p = placeholder(Shape{range(1, 4)}, DType::I32, "offsets");
    Array y = p + index_components(p.shape(), 0);
    CompiledProgram program = compile({y, p}, {p}, reference_options());
    auto r = program({HostArray::from<std::int32_t>({10, 20, 30}, {3})});
    check_values(r[0], {3}, {11, 22, 33});
    check_values(r[1], {3}, {10, 20, 30});
    auto r2 = program({HostArray::from<std::int32_t>({0, 0, 7}, {3})});
    check_values(r2[0], {3}, {1, 2, 10});
}

TEST_CASE("reference: unbound placeholders are reported by name") {
    Array p = placeholder(Shape::of({3}), DType::F32, "x");
    Array q = placeholder(Shape::of({3}), DType::F32, "weights");
    Array y = p * q;
    std::string m = error_message([&] { compile({y}, {p}, reference_options()); });
    CHECK(m.find("weights") != std::string::npos);
    std::string c = error_message([&] { compute(y, reference_options()); });
    CHECK(c.find("placeholder") != std::string::npos);
}
