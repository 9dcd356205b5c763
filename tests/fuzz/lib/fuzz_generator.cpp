// The generator's main loop, its random choices, leaves and maps (see fuzz_generator.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_generator_impl.hpp"

namespace hedra::fuzz {

namespace detail {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
    int r = std::max(a.rank(), b.rank());
    if (r > kMaxRank) return std::nullopt;
    std::vector<Range> out(static_cast<std::size_t>(r));
    for (int i = 1; i <= r; ++i) {
        const Range* x = i <= a.rank() ? &a[a.rank() - i] : nullptr;
        const Range* y = i <= b.rank() ? &b[b.rank() - i] : nullptr;
        Range& o = out[static_cast<std::size_t>(r - i)];
        if (!x)
            o = *y;
        else if (!y)
            o = *x;
        else if (*x == *y || y->size == 1)
            o = *x;
        else if (x->size == 1)
            o = *y;
        else
            return std::nullopt;
    }
    return Shape(out);
}

Generator::Generator(std::uint64_t seed, const GeneratorOptions& options)
    : options_(options), rng_(splitmix64(seed ^ 0x5eedull)), seed_(seed) {
    program_.seed = seed;
}

std::int64_t Generator::uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
}

bool Generator::chance(double p) {
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
}

int Generator::weighted(const std::vector<int>& weights) {
    int total = 0;
    for (int w : weights)
        total += w;
    std::int64_t r = uniform(0, total - 1);
    for (std::size_t i = 0; i < weights.size(); ++i) {
        if (r < weights[i]) return static_cast<int>(i);
        r -= weights[i];
    }
    return 0;
}

Range Generator::random_range(std::int64_t max_size) {
    static const std::vector<std::int64_t> sizes = {0, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 64};
    static const std::vector<int> weights = {2, 8, 8, 10, 8, 10, 10, 8, 8, 6, 6, 5, 4, 2};
    std::int64_t size = sizes[static_cast<std::size_t>(weighted(weights))];
    size = std::min(size, max_size);
    std::int64_t start = chance(0.7) ? 0 : uniform(-5, 7);
    std::int64_t step = chance(0.75) ? 1 : pick(std::vector<std::int64_t>{2, 3, 5});
    return Range(start, step, size);
}

Shape Generator::random_shape(int rank) {
    for (int attempt = 0;; ++attempt) {
        std::vector<Range> r;
        std::int64_t cap = attempt < 5 ? 64 : 4;
        for (int d = 0; d < rank; ++d)
            r.push_back(random_range(cap));
        Shape s(r);
        if (s.size() <= options_.max_elements / 2) return s;
    }
}

DType Generator::random_dtype() {
    if (options_.differentiable) return DType::F64;
    static const std::vector<DType> types = {DType::F32, DType::F64, DType::I32, DType::I64,
                                             DType::Bool};
    return types[static_cast<std::size_t>(weighted({40, 20, 15, 10, 15}))];
}

int Generator::add(Op op) {
    program_.ops.push_back(std::move(op));
    try {
        Array a = build_op(program_.ops.back(), values_, nullptr, nullptr);
        if (a.size() > options_.max_elements) {
            dropped_.push_back(std::string(op_kind_name(program_.ops.back().kind)) + ": size");
            program_.ops.pop_back();
            return -1;
        }
        values_.push_back(a);
    } catch (const Error& e) {
        rejections_.push_back(std::string(op_kind_name(program_.ops.back().kind)) + ": " +
                              e.what());
        program_.ops.pop_back();
        return -1;
    }
    int i = num_ops() - 1;
    auto m = analyze_op(program_, i, metas_, values_);
    if (!m && options_.differentiable) m = Meta{Frag::Approx, INFINITY, INFINITY};
    if (!m) {
        dropped_.push_back(std::string(op_kind_name(program_.ops.back().kind)) + ": invalid");
        program_.ops.pop_back();
        values_.pop_back();
        return -1;
    }
    metas_.push_back(*m);
    return i;
}

// ---- leaves ---------------------------------------------------------------------------------

int Generator::data(const Shape& s, DType t) {
    Op op;
    op.kind = OpKind::Data;
    op.shape = s;
    op.dtype = t;
    op.seed = rng_() >> 1;
    if (t == DType::Bool)
        op.values_kind = ValueKind::Bool;
    else if (is_integer(t))
        op.values_kind = chance(0.7) ? ValueKind::SmallInt : ValueKind::WideInt;
    else if (options_.differentiable)
        op.values_kind = ValueKind::Uniform;
    else
        op.values_kind = std::vector<ValueKind>{ValueKind::Uniform, ValueKind::Dyadic,
                                                ValueKind::Special}[weighted({50, 35, 15})];
    return add(op);
}

int Generator::leaf() {
    int rank = num_ops() == 0 ? weighted({2, 15, 45, 30, 8}) : weighted({8, 25, 35, 22, 10});
    int kind = options_.differentiable ? 0 : weighted({70, 10, 10, 10});
    Op op;
    switch (kind) {
    case 1:
        op.kind = OpKind::Iota;
        op.shape = random_shape(std::max(rank, 1));
        op.axis = static_cast<int>(uniform(0, op.shape.rank() - 1));
        return add(op);
    case 2:
        op.kind = OpKind::Constant;
        op.dtype = random_dtype();
        op.value = random_literal().value;
        return add(op);
    case 3:
        op.kind = OpKind::Full;
        op.shape = random_shape(rank);
        op.dtype = random_dtype();
        op.value = random_literal().value;
        return add(op);
    default:
        return data(random_shape(rank), random_dtype());
    }
}

int Generator::cast_to(int i, DType t) {
    if (i < 0 || value(i).dtype() == t) return i;
    Op op;
    op.kind = OpKind::Cast;
    op.inputs = {i};
    op.dtype = t;
    int c = add(op);
    return c >= 0 ? c : data(value(i).shape(), t);
}

int Generator::array_of_shape(const Shape& s, DType t, int hint) {
    int choice = weighted({50, 20, 20, 10});
    if (choice == 0 && hint >= 0 && value(hint).shape().rank() == s.rank() &&
        value(hint).shape().contains(s)) {
        Op op;
        op.kind = OpKind::ReshapeShape;
        op.inputs = {hint};
        op.shape = s;
        int r = add(op);
        if (r >= 0) return cast_to(r, t);
    }
    if (choice == 1) {
        int e = find([&](int i) { return value(i).shape() == s; });
        if (e >= 0) return cast_to(e, t);
    }
    if (choice == 3 && !options_.differentiable) {
        Op op;
        op.kind = OpKind::Full;
        op.shape = s;
        op.dtype = t;
        op.value = random_literal().value;
        int r = add(op);
        if (r >= 0) return r;
    }
    return data(s, t);
}

// ---- maps -----------------------------------------------------------------------------------

int Generator::map_over(const std::vector<int>& arrays) {
    Op op;
    op.kind = OpKind::Map;
    std::vector<Meta> metas;
    std::vector<Sym> syms;
    for (int a : arrays) {
        if (a >= 0) {
            op.operands.push_back({static_cast<int>(op.inputs.size())});
            op.inputs.push_back(a);
            metas.push_back(meta(a));
            syms.emplace_back(scalar_input(static_cast<int>(syms.size()), value(a).dtype()));
        } else {
            Expr l = random_literal();
            op.operands.push_back({-1, l.literal, l.value});
            metas.push_back({Frag::Exact, std::fabs(l.value), 0});
            syms.push_back(build_expr(l, {}));
        }
    }
    int n = static_cast<int>(arrays.size());
    op.expr = options_.linear           ? linear_expr(n)
              : options_.differentiable ? smooth_expr(n)
                                        : random_expr(n, metas, syms);
    return add(op);
}

int Generator::map() {
    int a = any_array();
    if (a < 0) return -1;
    std::vector<int> operands = {a};
    Shape target = value(a).shape();
    int arity = 1 + weighted({35, 35, 20, 10});
    for (int k = 1; k < arity; ++k) {
        int choice = weighted({30, 45, 15, options_.differentiable ? 0 : 10});
        if (choice == 3) {
            operands.push_back(-1); // a literal operand
            continue;
        }
        int b = -1;
        if (choice == 0)
            b = find([&](int i) {
                auto s = broadcast_shapes(target, value(i).shape());
                return s && s->size() <= options_.max_elements;
            });
        if (choice == 2 && !options_.differentiable) {
            Op c;
            c.kind = OpKind::Constant;
            c.dtype = random_dtype();
            c.value = random_literal().value;
            b = add(c);
        }
        if (b < 0) { // a new leaf whose shape broadcasts against the target
            std::vector<Range> r(target.ranges().begin() +
                                     std::min(target.rank(), weighted({60, 25, 15})),
                                 target.ranges().end());
            for (Range& x : r)
                if (chance(0.3)) x = Range(chance(0.5) ? 0 : uniform(-3, 3), 1, 1);
            b = data(Shape(r), random_dtype());
        }
        if (b < 0) continue;
        if (auto s = broadcast_shapes(target, value(b).shape())) {
            target = *s;
            operands.push_back(b);
        }
    }
    return map_over(operands);
}

// ---- the main loop --------------------------------------------------------------------------

int Generator::step() {
    int a = any_array();
    if (a < 0) return leaf();
    bool diff = options_.differentiable;
    int kind = weighted({30, 6, 6, 10, 3, 14, 5, 5, 3, options_.linear ? 0 : 4, 3, 3, 2, 2,
                         diff ? 0 : 3, options_.linear ? 0 : 3, 5, options_.scans ? 3 : 0});
    switch (kind) {
    case 0:
        return map();
    case 1:
        return reshape_transform(a);
    case 2:
        return reshape_shape(a);
    case 3:
        return view(a);
    case 4:
        return broadcast(a);
    case 5:
        return reduce(a);
    case 6:
        return fuse(a);
    case 7:
        return overwrite(a);
    case 8:
        return stack(a);
    case 9:
        return matmul(a);
    case 10:
        return transpose(a);
    case 11:
        return pad(a);
    case 12:
        return flatten(a);
    case 13:
        return unflatten(a);
    case 14:
        return cast(a);
    case 15:
        return take(a);
    case 17:
        return scan(a);
    default:
        return leaf();
    }
}

void Generator::choose_outputs() {
    // The sinks (ops nobody reads), latest first, so that most of what was built is live.
    std::vector<bool> used(program_.ops.size(), false);
    for (const Op& op : program_.ops)
        for (int k : op.inputs)
            used[static_cast<std::size_t>(k)] = true;
    std::vector<int>& outs = program_.outputs;
    outs.push_back(num_ops() - 1);
    int limit = static_cast<int>(uniform(2, 4));
    for (int i = num_ops() - 2; i >= 0 && static_cast<int>(outs.size()) < limit; --i)
        if (!used[static_cast<std::size_t>(i)] &&
            program_.ops[static_cast<std::size_t>(i)].kind != OpKind::Data)
            outs.push_back(i);
}

Generated Generator::run() {
    int leaves = static_cast<int>(uniform(1, 2));
    for (int k = 0; k < leaves; ++k)
        leaf();
    int steps = static_cast<int>(uniform(options_.min_ops, options_.max_ops));
    static const bool trace = std::getenv("HEDRA_FUZZ_TRACE") != nullptr;
    for (int k = 0; k < steps; ++k) {
        int before = num_ops();
        int r = step();
        if (trace) std::fprintf(stderr, "step %d: %d (ops %d -> %d)\n", k, r, before, num_ops());
    }
    if (num_ops() == 0) data(Shape::of({3}), random_dtype());
    choose_outputs();
    if (!options_.differentiable && chance(options_.placeholder_probability))
        for (Op& op : program_.ops)
            if (op.kind == OpKind::Data && chance(0.6)) op.placeholder = true;
    return {without_dead_ops(program_), rejections_, dropped_};
}

} // namespace detail

Generated generate(std::uint64_t seed, const GeneratorOptions& options) {
    return detail::Generator(seed, options).run();
}

} // namespace hedra::fuzz
