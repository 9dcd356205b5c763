// Symbolic extents (Range::param, `dynamic`): one openmp program serves every value; its results
// equal the reference interpreter's on a static graph of the same values, built separately.
#include "differential.hpp"

#include <functional>

#include "core/expect_error.hpp"
#include "core/graph_file.hpp"
#include "core/symbolic.hpp"

using namespace hedra;

namespace {

HostArray random_array(std::vector<std::int64_t> sizes, unsigned seed, DType dtype = DType::F32) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    HostArray a(std::move(sizes), dtype);
    for (std::int64_t i = 0; i < a.size(); ++i)
        a.set_flat(i, dtype == DType::F32 ? u(gen) : double(gen() % 10));
    return a;
}

using Builder = std::function<std::vector<Array>(const std::vector<Array>&)>;

// The program built on placeholders of `shapes` (symbolic), called with `inputs`, against the
// same builder on static placeholders of the inputs' sizes, run by the reference interpreter.
void check_against_static(const Builder& build, const std::vector<Shape>& shapes,
                          const std::vector<DType>& dtypes, const CompiledProgram& program,
                          const std::vector<HostArray>& inputs) {
    std::vector<Array> ps;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        ps.push_back(placeholder(Shape::of(inputs[i].sizes()), dtypes[i]));
    ComputeOptions ref;
    ref.backend = "reference";
    std::vector<HostArray> want = compile(build(ps), ps, ref)(inputs);
    std::vector<HostArray> got = program(inputs);
    REQUIRE(got.size() == want.size());
    for (std::size_t o = 0; o < got.size(); ++o) {
        REQUIRE(got[o].sizes() == want[o].sizes());
        for (std::int64_t i = 0; i < got[o].size(); ++i)
            REQUIRE(got[o].flat(i) == doctest::Approx(want[o].flat(i)).epsilon(1e-4));
    }
    (void)shapes;
}

std::vector<Array> symbolic_placeholders(const std::vector<Shape>& shapes,
                                         const std::vector<DType>& dtypes) {
    std::vector<Array> ps;
    for (std::size_t i = 0; i < shapes.size(); ++i)
        ps.push_back(placeholder(shapes[i], dtypes[i]));
    return ps;
}

std::uint64_t programs_built() {
    return std::dynamic_pointer_cast<backend::OpenMPBackend>(test::openmp_backend())
        ->stats()
        .programs_compiled;
}

} // namespace

TEST_CASE("symbolic extents: maps, reductions over the batch and a mean, one program") {
    test::openmp_backend();
    const Range batch = dynamic("batch", 96);
    const HostArray w = random_array({24, 40}, 7);
    Builder build = [&](const std::vector<Array>& in) {
        Array x = in[0];
        Array h = tanh(matmul(x, array(w)) * 0.5f);
        return std::vector<Array>{h, sum(h, {0}), mean(x * x), max(x, {1}),
                                  matmul(transpose(x, {1, 0}), h)};
    };
    std::vector<Shape> shapes{Shape{batch, range(24)}};
    std::vector<DType> dtypes{DType::F32};
    ComputeOptions o;
    o.backend = "openmp";
    const std::uint64_t before = programs_built();
    std::vector<Array> ps = symbolic_placeholders(shapes, dtypes);
    CompiledProgram program = compile(build(ps), ps, o);
    for (std::int64_t n : {96, 1, 37, 64, 95})
        check_against_static(build, shapes, dtypes, program, {random_array({n, 24}, unsigned(n))});
    CHECK(programs_built() - before == 1); // one program for every batch
}

TEST_CASE("symbolic extents: two inputs share the batch; broadcasts into it; a count") {
    test::openmp_backend();
    const Range batch = dynamic("batch", 50);
    Builder build = [&](const std::vector<Array>& in) {
        Array x = in[0], labels = in[1];
        Array cls = index_components(x.shape(), 1);
        Array column = view(labels, Shape{x.shape()[0], range(1)}, AffineMap(2, 1, {1, 0}, {0}));
        Array onehot = cast(cls == column, DType::F32);
        Array picked = sum(x * onehot, {1});
        Array bias = full(Shape{range(1), range(12)}, 0.25);
        return std::vector<Array>{sum(picked) / element_count(labels), x + bias,
                                  sum(full(x.shape(), 1.0)), cast(labels, DType::F32) * 2.0f};
    };
    std::vector<Shape> shapes{Shape{batch, range(12)}, Shape{batch}};
    std::vector<DType> dtypes{DType::F32, DType::I32};
    ComputeOptions o;
    o.backend = "openmp";
    std::vector<Array> ps = symbolic_placeholders(shapes, dtypes);
    CompiledProgram program = compile(build(ps), ps, o);
    for (std::int64_t n : {50, 3, 17})
        check_against_static(
            build, shapes, dtypes, program,
            {random_array({n, 12}, unsigned(n)), random_array({n}, unsigned(n + 1), DType::I32)});
}

TEST_CASE("symbolic extents: an output whose symbolic axis does not lead, on every backend") {
    test::openmp_backend();
    const Range batch = dynamic("batch", 40);
    Builder build = [&](const std::vector<Array>& in) {
        return std::vector<Array>{transpose(in[0] * 3.0f, {1, 0})};
    };
    std::vector<Shape> shapes{Shape{batch, range(5)}};
    std::vector<DType> dtypes{DType::F32};
    for (std::string backend : {"openmp", "reference"}) {
        ComputeOptions o;
        o.backend = backend;
        std::vector<Array> ps = symbolic_placeholders(shapes, dtypes);
        CompiledProgram program = compile(build(ps), ps, o); // compiled per value
        for (std::int64_t n : {40, 9})
            check_against_static(build, shapes, dtypes, program, {random_array({n, 5}, 3)});
    }
}

TEST_CASE("symbolic extents: errors name the input, the extent and what to do") {
    test::openmp_backend();
    const Range batch = dynamic("batch", 8);
    Array x = placeholder(Shape{batch, range(3)}, DType::F32, "x");
    Array y = placeholder(Shape{batch}, DType::F32, "y");
    CompiledProgram p = compile({sum(x, {1}) + y}, {x, y});
    CHECK_ERROR(p({HostArray({9, 3}, DType::F32), HostArray({9}, DType::F32)}), "input 0",
                "'batch'", "9", "1..8", "larger maximum");
    CHECK_ERROR(p({HostArray({4, 3}, DType::F32), HostArray({5}, DType::F32)}),
                "disagree on 'batch'", "4", "5");
    CHECK_ERROR(p({HostArray({4, 2}, DType::F32), HostArray({4}, DType::F32)}), "input 0",
                "static of size 3");
    CHECK_ERROR(view(x, Shape{range(4), range(3)}, AffineMap::identity(2)), "view", "symbolic",
                "batch<=8");
    CHECK_ERROR((x + full(Shape::of({8, 3}), 1.0)), "broadcast", "batch<=8", "[0,8)");
    CHECK_ERROR(compute(sum(full(Shape{batch}, 1.0))), "compute", "symbolic extent 'batch'",
                "compile()");
    CHECK_ERROR(compile({sum(full(Shape{batch}, 1.0))}, {}), "compile", "'batch'",
                "none of the 0 placeholders");
    CHECK_ERROR(dynamic("n", 0), "dynamic", "'n'", "at least 1");
}

TEST_CASE("symbolic extents: specialize() rebuilds a graph at given values") {
    const Range batch = dynamic("rows", 10);
    Array x = placeholder(Shape{batch, range(2)}, DType::F32, "x");
    Array y = mean(x, {0});
    int param = batch.param;
    std::vector<NodePtr> s = specialize({y.node(), x.node()}, {{param, 4}});
    CHECK(s[1]->shape == Shape::of({4, 2}));
    CHECK(s[1]->id == x.node()->id);
    CHECK(!has_symbolic_extents({s[0]}));
    CHECK(symbolic_params({y.node()}) == std::vector<int>{param});
    CHECK(symbolic_axis_leads(Shape{range(1), batch, range(3)}));
    CHECK(!symbolic_axis_leads(Shape{range(3), batch}));
    CHECK(batch.to_string() == "rows<=10");
}

TEST_CASE("symbolic extents: a graph file keeps them by name") {
    test::openmp_backend();
    const Range batch = dynamic("batch", 12);
    Array x = placeholder(Shape{batch, range(3)}, DType::F32, "x");
    Array y = sum(x * 2.0f, {1}) + mean(x);
    GraphFile g = load_graph(save_graph(std::vector<Array>{y}));
    REQUIRE(g.placeholders.size() == 1);
    CHECK(g.placeholders[0]->shape == x.shape());
    CHECK(g.outputs[0]->shape.to_string() == "(batch<=12)");
    CompiledProgram p = compile(g.output_arrays(), g.placeholder_arrays());
    HostArray in = random_array({5, 3}, 4);
    std::vector<HostArray> got = p({in});
    double total = 0;
    for (std::int64_t i = 0; i < 15; ++i)
        total += in.flat(i);
    REQUIRE(got[0].sizes() == std::vector<std::int64_t>{5});
    for (std::int64_t r = 0; r < 5; ++r) // a naive loop: 2 * row sum + the mean of all
        CHECK(got[0].flat(r) ==
              doctest::Approx(2 * (in.flat(3 * r) + in.flat(3 * r + 1) + in.flat(3 * r + 2)) +
                              total / 15)
                  .epsilon(1e-5));
}
