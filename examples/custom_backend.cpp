// custom_backend: a backend written outside the library, registered by name and used like the
// built-in ones (docs/backends.md explains the interface, core/backend.hpp declares it).
// "tracing" wraps another backend: it counts the nodes of every graph it is asked to compile,
// by kind, and the runs of every compiled program, then lets the wrapped backend do the work.
// The program below runs a matmul, a Jacobi sweep and a compiled softmax through it and checks
// the values against plain loops.
#include "hedra.hpp"

#include <cmath>
#include <cstdio>
#include <map>

using namespace hedra;

namespace {

struct Trace {
    int compiles = 0;
    int runs = 0;
    std::map<std::string, int> nodes; // by kind, over every compiled graph
};

// A compiled program that counts its runs and delegates them.
class TracingProgram : public Program {
public:
    TracingProgram(std::unique_ptr<Program> inner, Trace& trace)
        : inner_(std::move(inner)), trace_(trace) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        ++trace_.runs;
        return inner_->run(inputs);
    }

private:
    std::unique_ptr<Program> inner_;
    Trace& trace_;
};

class TracingBackend : public Backend {
public:
    TracingBackend(std::string wrapped, Trace& trace)
        : wrapped_(std::move(wrapped)), trace_(trace) {}
    std::string name() const override { return "tracing"; }

    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders,
                                     const CompileOptions& options) override {
        ++trace_.compiles;
        for (const NodePtr& n : topological_order(outputs))
            ++trace_.nodes[node_kind_name(n->kind)];
        auto inner = get_backend(wrapped_)->compile(outputs, placeholders, options);
        return std::make_unique<TracingProgram>(std::move(inner), trace_);
    }
    // evaluate() keeps Backend's default: compile, then run once.

private:
    std::string wrapped_;
    Trace& trace_;
};

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%-44s %s\n", what, ok ? "ok" : "FAILED");
    failures += !ok;
}

} // namespace

int main() {
    Trace trace;
    register_backend("tracing",
                     [&trace] { return std::make_shared<TracingBackend>("reference", trace); });
    ComputeOptions use_tracing;
    use_tracing.backend = "tracing";

    // C = A B through the tracing backend.
    const int m = 3, k = 4, n = 2;
    std::vector<double> a(m * k), b(k * n);
    for (int i = 0; i < m * k; ++i)
        a[i] = 0.5 * i - 1.0;
    for (int i = 0; i < k * n; ++i)
        b[i] = (i % 3) - 1.0;
    HostArray c =
        compute(matmul(array(a, Shape::of({m, k})), array(b, Shape::of({k, n}))), use_tracing);
    bool matmul_ok = true;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0;
            for (int p = 0; p < k; ++p)
                want += a[i * k + p] * b[p * n + j];
            matmul_ok = matmul_ok && std::fabs(c.at({i, j}) - want) < 1e-12;
        }
    check(matmul_ok, "matmul through 'tracing'");

    // A Jacobi sweep: overwrite the interior of u with the mean of its neighbours.
    const int g = 5;
    std::vector<double> u0(g * g);
    for (int i = 0; i < g * g; ++i)
        u0[i] = (i * 7) % 5;
    Array u = array(u0, Shape::of({g, g}));
    Shape interior{range(1, g - 1), range(1, g - 1)};
    auto at = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    Array sweep = overwrite({u, (at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1)) * 0.25});
    HostArray v = compute(sweep, use_tracing);
    bool jacobi_ok = true;
    for (int i = 0; i < g; ++i)
        for (int j = 0; j < g; ++j) {
            bool edge = i == 0 || j == 0 || i == g - 1 || j == g - 1;
            double want = edge ? u0[i * g + j]
                               : 0.25 * (u0[(i - 1) * g + j] + u0[(i + 1) * g + j] +
                                         u0[i * g + j - 1] + u0[i * g + j + 1]);
            jacobi_ok = jacobi_ok && std::fabs(v.at({i, j}) - want) < 1e-12;
        }
    check(jacobi_ok, "jacobi sweep through 'tracing'");

    // A compiled program: softmax of each row, run twice with new inputs.
    Array x = placeholder(Shape::of({2, 3}), DType::F64, "x");
    Array e = exp(x - max(x, {1}, true));
    CompiledProgram softmax = compile({e / sum(e, {1}, true)}, {x}, use_tracing);
    bool softmax_ok = true;
    for (double scale : {1.0, -2.0}) {
        std::vector<double> in{1, 2, 3, 0, 0, 0};
        for (double& value : in)
            value *= scale;
        HostArray y = softmax({HostArray::from(in, {2, 3})})[0];
        for (int r = 0; r < 2; ++r) {
            double total = 0;
            for (int j = 0; j < 3; ++j)
                total += std::exp(in[r * 3 + j]);
            for (int j = 0; j < 3; ++j)
                softmax_ok =
                    softmax_ok && std::fabs(y.at({r, j}) - std::exp(in[r * 3 + j]) / total) < 1e-12;
        }
    }
    check(softmax_ok, "compiled softmax through 'tracing', 2 runs");

    std::printf("tracing: %d compiles, %d runs; nodes:", trace.compiles, trace.runs);
    for (const auto& [kind, count] : trace.nodes)
        std::printf(" %s %d", kind.c_str(), count);
    std::printf("\n");
    check(trace.compiles == 3 && trace.runs == 4, "3 compiles and 4 runs were traced");
    check(trace.nodes["reduce"] == 3 && trace.nodes["fuse"] == 1,
          "the graphs' reductions and fuse");
    return failures == 0 ? 0 : 1;
}
