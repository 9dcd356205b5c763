// The generator's scans: a loop over an axis of an existing array (a few steps: the compiled
// loop is sequential, and the tolerance grows with every step), carrying one or two values
// whose step is a random map over the carries, the step's slice, maybe a closure and maybe a
// sum, a matmul or a scan of its own (see fuzz_program.hpp, Op's scan fields).
#include <algorithm>

#include "fuzz/lib/fuzz_generator_impl.hpp"

namespace hedra::fuzz::detail {

namespace {

constexpr std::int64_t kMaxSteps = 6;
constexpr std::int64_t kMaxCarry = 400; // elements of one carry

bool fits(const Shape& into, const Shape& s) {
    auto b = broadcast_shapes(into, s);
    return b && *b == into;
}

} // namespace

int Generator::scan(int a) {
    const int rank = value(a).rank();
    if (rank == 0) return -1;
    const bool diff = options_.differentiable;
    if (diff && !is_float(value(a).dtype())) return -1; // take's indices
    int axis = chance(0.75) ? 0 : static_cast<int>(uniform(0, rank - 1));
    const Range along = value(a).shape()[axis];
    if (along.is_dynamic() || along.size == 0) return -1;
    int xs = a;
    if (along.size > kMaxSteps || chance(0.2)) { // fewer steps: a selection along the axis
        std::int64_t m = uniform(1, std::min(kMaxSteps, along.size));
        std::vector<Range> r = value(a).shape().ranges();
        r[static_cast<std::size_t>(axis)] =
            Range(along.index(uniform(0, along.size - m)), along.step, m);
        Op sel;
        sel.kind = OpKind::ReshapeShape;
        sel.inputs = {a};
        sel.shape = Shape(r);
        xs = add(sel);
        if (xs < 0) return -1;
    }
    std::vector<Range> cr = value(xs).shape().ranges();
    cr.erase(cr.begin() + axis);
    const Shape carry(cr);
    if (carry.size() > kMaxCarry) return -1;
    const DType xt = value(xs).dtype();
    const DType ct = chance(0.5) ? xt : random_dtype();

    Op op;
    op.kind = OpKind::Scan;
    op.inputs = {xs};
    op.carries = chance(0.3) ? 2 : 1;
    for (int k = 0; k < op.carries; ++k) {
        int init = -1;
        if (chance(0.3)) { // a smaller array broadcast to the carry's shape
            int b = find([&](int i) {
                return value(i).shape() != carry && value(i).size() <= kMaxCarry &&
                       fits(carry, value(i).shape());
            });
            if (b >= 0) {
                Op bc;
                bc.kind = OpKind::BroadcastTo;
                bc.inputs = {b};
                bc.shape = carry;
                init = cast_to(add(bc), ct);
            }
        }
        if (init < 0) init = array_of_shape(carry, ct, chance(0.5) ? xs : -1);
        if (init < 0 || value(init).shape() != carry || value(init).dtype() != ct) return -1;
        op.inputs.push_back(init);
    }
    if (chance(0.35)) {
        int c = find([&](int i) { return i != xs && fits(carry, value(i).shape()); });
        if (c >= 0 && (!diff || is_float(value(c).dtype()))) {
            op.closure = true;
            op.inputs.push_back(c);
        }
    }
    const bool ranked = carry.rank() > 0 && carry[0].size > 0;
    switch (weighted({50, is_float(xt) ? 15 : 0,
                      is_float(ct) && carry.rank() > 0 && !options_.linear ? 15 : 0,
                      is_float(xt) && ranked ? 6 : 0})) {
    case 1:
        op.extra = ScanExtra::Sum;
        break;
    case 2: {
        std::int64_t n = carry[carry.rank() - 1].size;
        int m = data(Shape{range(n), carry[carry.rank() - 1]}, ct);
        if (m >= 0) {
            op.extra = ScanExtra::Matmul;
            op.inputs.push_back(m);
        }
        break;
    }
    case 3:
        op.extra = ScanExtra::Inner;
        break;
    default:
        break;
    }

    // The step's operands for random_expr's single-step check (add() checks all steps).
    std::vector<Meta> metas;
    std::vector<Sym> syms;
    auto operand = [&](const Meta& m, DType t) {
        syms.emplace_back(scalar_input(static_cast<int>(syms.size()), t));
        metas.push_back(m);
    };
    for (int k = 0; k < op.carries; ++k)
        operand(meta(op.inputs[static_cast<std::size_t>(1 + k)]), ct);
    operand(meta(xs), xt);
    if (op.closure)
        operand(meta(op.inputs[static_cast<std::size_t>(1 + op.carries)]),
                value(op.inputs[static_cast<std::size_t>(1 + op.carries)]).dtype());
    if (op.extra != ScanExtra::None) // a sum: approximate
        operand(Meta{Frag::Approx, meta(xs).mag * static_cast<double>(carry.size() + 1), 1e-6},
                op.extra == ScanExtra::Matmul ? ct : xt);
    // An approximate operand makes float carries approximate from the second step on: check the
    // expressions on such carries (most would compare one and be dropped otherwise).
    if (std::any_of(metas.begin(), metas.end(),
                    [](const Meta& m) { return m.frag == Frag::Approx; }) &&
        is_float(ct))
        for (int k = 0; k < op.carries; ++k)
            metas[static_cast<std::size_t>(k)].frag = Frag::Approx;
    const int n = static_cast<int>(syms.size());
    static const std::vector<ScanValue> values = {ScanValue::Carry, ScanValue::Ys,
                                                  ScanValue::States};
    op.scan_value = values[static_cast<std::size_t>(weighted({40, 35, 25}))];
    op.component = static_cast<int>(uniform(0, op.carries - 1));
    op.reverse = chance(0.3);
    op.axis = chance(0.3) ? axis - rank : axis;
    for (int attempt = 0; attempt < 3; ++attempt) {
        op.step.clear();
        for (int k = 0; k <= op.carries; ++k) {
            Expr e = options_.linear ? linear_expr(n)
                     : diff          ? smooth_expr(n)
                                     : random_expr(n, metas, syms);
            if (k < op.carries && build_expr(e, syms).dtype() != ct) e = Expr::cast(e, ct);
            op.step.push_back(e);
        }
        int s = add(op);
        if (s >= 0) return s;
    }
    return -1;
}

} // namespace hedra::fuzz::detail
