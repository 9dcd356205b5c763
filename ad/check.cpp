// The gradient checkers of check.hpp. Random numbers come from a fixed generator with a
// Box-Muller transform (not std::normal_distribution, whose output differs between standard
// libraries) so that a failing check reproduces anywhere.
#include "ad/check.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "ad/grad.hpp"

namespace hedra {
namespace {

class Normal {
public:
    explicit Normal(std::uint64_t seed) : engine_(seed) {}
    double operator()() {
        double u1 = (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
        double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    HostArray array(const std::vector<std::int64_t>& sizes) {
        HostArray a(sizes, DType::F64);
        for (double& v : a.mutable_values<double>())
            v = (*this)();
        return a;
    }

private:
    std::mt19937_64 engine_;
};

HostArray to_f64(const HostArray& a) {
    HostArray out(a.sizes(), DType::F64);
    auto values = out.mutable_values<double>();
    for (std::int64_t i = 0; i < a.size(); ++i)
        values[i] = a.flat(i);
    return out;
}

// a + s * b, elementwise (f64).
HostArray axpy(const HostArray& a, double s, const HostArray& b) {
    HostArray out(a.sizes(), DType::F64);
    auto values = out.mutable_values<double>();
    for (std::int64_t i = 0; i < a.size(); ++i)
        values[i] = a.flat(i) + s * b.flat(i);
    return out;
}

double dot(const HostArray& a, const HostArray& b) {
    double s = 0.0;
    for (std::int64_t i = 0; i < a.size(); ++i)
        s += a.flat(i) * b.flat(i);
    return s;
}

GradientCheckResult verdict(double analytic, double numeric, const GradientCheckOptions& o) {
    GradientCheckResult r;
    r.analytic = analytic;
    r.numeric = numeric;
    r.error = std::abs(analytic - numeric);
    r.ok = r.error <= o.atol + o.rtol * std::max(std::abs(analytic), std::abs(numeric));
    return r;
}

Array cotangent_for(const Array& y, Normal& normal) {
    if (y.rank() == 0) return constant(1.0, DType::F64);
    return array(normal.array(y.shape().sizes()), y.shape());
}

} // namespace

std::string GradientCheckResult::to_string() const {
    std::ostringstream s;
    s.precision(17);
    s << "analytic " << analytic << " numeric " << numeric << " error " << error << ": "
      << (ok ? "ok" : "MISMATCH");
    return s.str();
}

GradientCheckResult check_gradient(const ArrayFunction& f, const std::vector<Array>& at,
                                   const GradientCheckOptions& options) {
    Normal normal(options.seed);
    std::vector<HostArray> values = compute(at, options.compute);
    std::vector<Array> x, plus, minus, diff_inputs;
    std::vector<HostArray> directions;
    for (std::size_t i = 0; i < at.size(); ++i) {
        if (!is_float(at[i].dtype())) {
            x.push_back(at[i]);
            plus.push_back(at[i]);
            minus.push_back(at[i]);
            continue;
        }
        const Shape& shape = at[i].shape();
        HostArray x0 = to_f64(values[i]);
        HostArray v = normal.array(shape.sizes());
        x.push_back(array(x0, shape));
        plus.push_back(array(axpy(x0, options.step, v), shape));
        minus.push_back(array(axpy(x0, -options.step, v), shape));
        diff_inputs.push_back(x.back());
        directions.push_back(v);
    }
    Array y = f(x);
    Array u = cotangent_for(y, normal);
    std::vector<Array> grads = vjp({y}, {u}, diff_inputs);
    std::vector<Array> outputs{f(plus), f(minus), u};
    outputs.insert(outputs.end(), grads.begin(), grads.end());
    std::vector<HostArray> r = compute(outputs, options.compute);
    double numeric = (dot(r[2], r[0]) - dot(r[2], r[1])) / (2.0 * options.step);
    double analytic = 0.0;
    for (std::size_t i = 0; i < directions.size(); ++i)
        analytic += dot(r[3 + i], directions[i]);
    return verdict(analytic, numeric, options);
}

GradientCheckResult check_linear(const ArrayFunction& f, const std::vector<Array>& like,
                                 const GradientCheckOptions& options) {
    Normal normal(options.seed);
    std::vector<Array> x;
    std::vector<HostArray> xs;
    for (const Array& a : like) {
        xs.push_back(normal.array(a.shape().sizes()));
        x.push_back(array(xs.back(), a.shape()));
    }
    Array y = f(x);
    Array u = cotangent_for(y, normal);
    std::vector<Array> pulled = vjp({y}, {u}, x);
    std::vector<Array> outputs{y, u};
    outputs.insert(outputs.end(), pulled.begin(), pulled.end());
    std::vector<HostArray> r = compute(outputs, options.compute);
    double lhs = dot(r[0], r[1]);
    double rhs = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i)
        rhs += dot(xs[i], r[2 + i]);
    return verdict(rhs, lhs, options);
}

} // namespace hedra
