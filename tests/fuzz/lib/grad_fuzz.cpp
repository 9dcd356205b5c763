// Gradient fuzzing (see grad_fuzz.hpp).
#include "fuzz/lib/grad_fuzz.hpp"

#include <cmath>
#include <cstdio>

#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_runner.hpp"

namespace hedra::fuzz {

namespace {

using Vectors = std::vector<std::vector<double>>;

std::vector<double> random_vector(std::int64_t n, std::uint64_t seed) {
    return leaf_values(n, DType::F64, ValueKind::Uniform, seed); // [-2, 2)
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}
double abs_dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += std::fabs(a[i] * b[i]);
    return s;
}

std::string fmt(const char* format, double a, double b, double c = 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf, format, a, b, c);
    return buf;
}

std::vector<HostArray> reference(const std::vector<Array>& arrays) {
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    return get_backend("reference")->evaluate(nodes, {});
}

struct Setup {
    FuzzProgram program;
    std::vector<int> params; // Data ops
    Vectors x;               // their values
};

std::optional<Setup> setup(std::uint64_t seed, bool linear) {
    Setup s;
    s.program = generate(seed, grad_generator_options(linear)).program;
    for (std::size_t i = 0; i < s.program.ops.size(); ++i) {
        Op& op = s.program.ops[i];
        if (op.kind != OpKind::Data) continue;
        op.values = op_values(op);
        if (!is_float(op.dtype)) continue; // take's indices: data, not parameters
        s.params.push_back(static_cast<int>(i));
        s.x.push_back(op.values);
    }
    if (s.params.empty()) return std::nullopt;
    return s;
}

BuiltProgram build_at(FuzzProgram p, const std::vector<int>& params, const Vectors& x) {
    for (std::size_t k = 0; k < params.size(); ++k)
        p.ops[static_cast<std::size_t>(params[k])].values = x[k];
    return build(p);
}

// loss = Σ_o sum(out_o · W_o) with W_o fixed by `seed`.
Array loss_of(const std::vector<Array>& outs, std::uint64_t seed) {
    Array total;
    for (std::size_t o = 0; o < outs.size(); ++o) {
        const Array& out = outs[o];
        Array w = array(random_vector(out.size(), seed + 7919 * (o + 1)), out.shape());
        Array term = sum(out * w);
        total = total.valid() ? total + term : term;
    }
    return total;
}

double loss_value(const Setup& s, const Vectors& x, std::uint64_t seed) {
    BuiltProgram b = build_at(s.program, s.params, x);
    return reference({loss_of(b.outputs, seed)}).at(0).flat(0);
}

double central_difference(const Setup& s, const Vectors& v, double h, std::uint64_t seed) {
    Vectors plus = s.x, minus = s.x;
    for (std::size_t k = 0; k < v.size(); ++k)
        for (std::size_t i = 0; i < v[k].size(); ++i) {
            plus[k][i] += h * v[k][i];
            minus[k][i] -= h * v[k][i];
        }
    return (loss_value(s, plus, seed) - loss_value(s, minus, seed)) / (2 * h);
}

// The arrays on openmp against the reference's values; an empty string when they agree.
std::string differential(const std::vector<Array>& arrays, const std::vector<HostArray>& want) {
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    CompileOptions o;
    o.num_threads = 2;
    std::vector<HostArray> got = openmp_backend()->evaluate(nodes, o);
    for (std::size_t k = 0; k < want.size(); ++k) {
        std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
        double scale = 1;
        for (double x : w)
            scale = std::max(scale, std::fabs(x));
        for (std::size_t i = 0; i < w.size(); ++i)
            if (!(std::fabs(g[i] - w[i]) <= 1e-9 * scale) &&
                !(std::isnan(g[i]) && std::isnan(w[i])))
                return "openmp differs from the reference on array " + std::to_string(k) +
                       fmt(" element %.0f: %.17g vs %.17g", static_cast<double>(i), g[i], w[i]);
    }
    return "";
}

} // namespace

GeneratorOptions grad_generator_options(bool linear) {
    GeneratorOptions o;
    o.differentiable = true;
    o.linear = linear;
    o.max_ops = 8;
    o.max_elements = 800;
    return o;
}

const char* grad_status_name(GradStatus s) {
    switch (s) {
    case GradStatus::Pass:
        return "pass";
    case GradStatus::Kink:
        return "kink";
    case GradStatus::Skipped:
        return "skipped";
    case GradStatus::Fail:
        return "fail";
    case GradStatus::Error:
        return "error";
    }
    return "?";
}

GradResult check_gradient_program(std::uint64_t seed) {
    auto s = setup(seed, false);
    if (!s) return {GradStatus::Skipped, "no parameters", ""};
    GradResult r;
    r.reproducer = to_cpp(s->program, "gradient fuzz seed " + std::to_string(seed));
    try {
        BuiltProgram b = build_at(s->program, s->params, s->x);
        for (const Array& o : b.outputs)
            if (o.dtype() != DType::F64) return {GradStatus::Skipped, "a non-f64 output", ""};
        Array loss = loss_of(b.outputs, seed);
        std::vector<Array> params;
        for (int i : s->params)
            params.push_back(b.values[static_cast<std::size_t>(i)]);
        std::vector<Array> grads = grad(loss, params);
        std::vector<Array> all = grads;
        all.push_back(loss);
        std::vector<HostArray> values = reference(all);
        double l0 = values.back().flat(0);
        Vectors v;
        double analytic = 0;
        for (std::size_t k = 0; k < params.size(); ++k) {
            v.push_back(random_vector(params[k].size(), seed * 31 + k));
            analytic += dot(values[k].to_doubles(), v.back());
        }
        if (!std::isfinite(l0) || !std::isfinite(analytic))
            return {GradStatus::Skipped, "loss or gradient not finite", ""};
        auto close = [&](double a, double n) {
            return std::fabs(a - n) <=
                   1e-5 * (std::fabs(a) + std::fabs(n)) + 1e-8 * (1 + std::fabs(l0));
        };
        const double h = 1e-5;
        double numeric = central_difference(*s, v, h, seed);
        if (!close(analytic, numeric)) {
            double finer = central_difference(*s, v, h / 8, seed);
            if (!(std::fabs(finer - numeric) <=
                  1e-4 * (std::fabs(finer) + std::fabs(numeric)) + 1e-8 * (1 + std::fabs(l0))))
                return {GradStatus::Kink,
                        fmt("central differences %.10g (h) and %.10g (h/8)", numeric, finer), ""};
            if (!close(analytic, finer)) {
                r.status = GradStatus::Fail;
                r.message = fmt("directional derivative: grad %.12g, central difference %.12g "
                                "(loss %.6g)",
                                analytic, finer, l0);
                return r;
            }
        }
        std::string diff = differential(all, values);
        if (!diff.empty()) {
            r.status = GradStatus::Fail;
            r.message = "gradient graph: " + diff;
        }
    } catch (const Error& e) {
        r.status = GradStatus::Error;
        r.message = e.what();
    }
    return r;
}

GradResult check_linear_program(std::uint64_t seed) {
    auto s = setup(seed, true);
    if (!s) return {GradStatus::Skipped, "no parameters", ""};
    GradResult r;
    r.reproducer = to_cpp(s->program, "linear fuzz seed " + std::to_string(seed));
    try {
        BuiltProgram b = build_at(s->program, s->params, s->x);
        std::vector<Array> cotangents, params;
        Vectors y;
        for (std::size_t o = 0; o < b.outputs.size(); ++o) {
            const Array& out = b.outputs[o];
            if (out.dtype() != DType::F64) return {GradStatus::Skipped, "a non-f64 output", ""};
            y.push_back(random_vector(out.size(), seed * 131 + o));
            cotangents.push_back(array(y.back(), out.shape()));
        }
        for (int i : s->params)
            params.push_back(b.values[static_cast<std::size_t>(i)]);
        std::vector<Array> pulled = vjp(b.outputs, cotangents, params);
        std::vector<Array> all = b.outputs;
        all.insert(all.end(), pulled.begin(), pulled.end());
        std::vector<HostArray> values = reference(all);
        double lhs = 0, rhs = 0, mag = 0;
        for (std::size_t o = 0; o < b.outputs.size(); ++o) {
            lhs += dot(values[o].to_doubles(), y[o]);
            mag += abs_dot(values[o].to_doubles(), y[o]);
        }
        for (std::size_t k = 0; k < params.size(); ++k) {
            std::vector<double> g = values[b.outputs.size() + k].to_doubles();
            rhs += dot(s->x[k], g);
            mag += abs_dot(s->x[k], g);
        }
        if (!(std::fabs(lhs - rhs) <= 1e-10 * mag + 1e-300)) {
            r.status = GradStatus::Fail;
            r.message = fmt("dot-product identity: <Lx, y> = %.17g, <x, L^T y> = %.17g "
                            "(magnitude %.3g)",
                            lhs, rhs, mag);
            return r;
        }
        std::string diff = differential(all, values);
        if (!diff.empty()) {
            r.status = GradStatus::Fail;
            r.message = "vjp graph: " + diff;
        }
    } catch (const Error& e) {
        r.status = GradStatus::Error;
        r.message = e.what();
    }
    return r;
}

} // namespace hedra::fuzz
