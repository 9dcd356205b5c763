// The naive kernel-IR interpreter used as a test oracle (see ir_interpreter.hpp).
#include "scheduler/ir_interpreter.hpp"

#include <stdexcept>
#include <string>

namespace hedra::test {

namespace {

ScalarValue load(const HostArray& a, std::int64_t i) {
    auto k = static_cast<std::size_t>(i);
    ScalarValue v;
    v.dtype = a.dtype();
    switch (a.dtype()) {
    case DType::Bool:
        v.i = a.values<bool>()[k] ? 1 : 0;
        break;
    case DType::I32:
        v.i = a.values<std::int32_t>()[k];
        break;
    case DType::I64:
        v.i = a.values<std::int64_t>()[k];
        break;
    case DType::F32:
        v.f = a.values<float>()[k];
        break;
    case DType::F64:
        v.f = a.values<double>()[k];
        break;
    case DType::BF16:
    case DType::F16:
        v.f = a.flat(i);
        break;
    }
    return v;
}

void store(HostArray& a, std::int64_t i, const ScalarValue& v) {
    auto k = static_cast<std::size_t>(i);
    switch (a.dtype()) {
    case DType::Bool:
        a.mutable_values<bool>()[k] = v.i != 0;
        break;
    case DType::I32:
        a.mutable_values<std::int32_t>()[k] = static_cast<std::int32_t>(v.i);
        break;
    case DType::I64:
        a.mutable_values<std::int64_t>()[k] = v.i;
        break;
    case DType::F32:
        a.mutable_values<float>()[k] = static_cast<float>(v.f);
        break;
    case DType::F64:
        a.mutable_values<double>()[k] = v.f;
        break;
    case DType::BF16:
    case DType::F16:
        a.set_flat(i, v.f);
        break;
    }
}

struct Storage {
    std::vector<std::int64_t> sizes;
    std::vector<ScalarValue> values;
    std::string name;

    std::int64_t offset(const std::vector<std::int64_t>& index) const {
        if (index.size() != sizes.size())
            throw std::runtime_error("ir interpreter: access rank mismatch on " + name);
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < sizes.size(); ++d) {
            if (index[d] < 0 || index[d] >= sizes[d])
                throw std::runtime_error("ir interpreter: out-of-bounds access on " + name +
                                         " axis " + std::to_string(d) + " index " +
                                         std::to_string(index[d]));
            flat = flat * sizes[d] + index[d];
        }
        return flat;
    }
};

ScalarExpr combiner_of(const poly::Statement& s, DType t) {
    if (s.reduce_op == ReduceOp::Custom) return s.combiner;
    ScalarOp op = ScalarOp::Add;
    switch (s.reduce_op) {
    case ReduceOp::Sum:
        op = ScalarOp::Add;
        break;
    case ReduceOp::Prod:
        op = ScalarOp::Mul;
        break;
    case ReduceOp::Max:
        op = ScalarOp::Max;
        break;
    case ReduceOp::Min:
        op = ScalarOp::Min;
        break;
    case ReduceOp::And:
        op = ScalarOp::And;
        break;
    case ReduceOp::Or:
        op = ScalarOp::Or;
        break;
    case ReduceOp::Custom:
        break;
    }
    return scalar_binary(op, scalar_input(0, t), scalar_input(1, t));
}

// Calls f(counters) for every point of the box, in lexicographic order.
template <class F>
void for_each_point(const std::vector<std::int64_t>& extents, F f) {
    for (std::int64_t e : extents)
        if (e <= 0) return;
    std::vector<std::int64_t> i(extents.size(), 0);
    while (true) {
        f(i);
        int d = static_cast<int>(extents.size()) - 1;
        while (d >= 0 && ++i[d] == extents[d])
            i[d--] = 0;
        if (d < 0) return;
    }
}

void run_statement(const poly::ProgramIR& p, const poly::Statement& s,
                   std::vector<Storage>& buffers) {
    Storage& out = buffers.at(static_cast<std::size_t>(s.write_buffer));
    DType t = p.buffers.at(static_cast<std::size_t>(s.write_buffer)).dtype;
    ScalarExpr combine = s.kind == poly::StatementKind::Update ? combiner_of(s, t) : nullptr;
    std::vector<ScalarValue> inputs(s.reads.size());
    for_each_point(s.extents, [&](const std::vector<std::int64_t>& i) {
        for (std::size_t k = 0; k < s.reads.size(); ++k) {
            const poly::Read& r = s.reads[k];
            std::vector<std::int64_t> at = r.access.apply(i);
            if (r.buffer < 0) {
                inputs[k] = ScalarValue{DType::I64, at.at(0), 0.0};
            } else {
                const Storage& src = buffers.at(static_cast<std::size_t>(r.buffer));
                inputs[k] = src.values[static_cast<std::size_t>(src.offset(at))];
            }
        }
        ScalarValue v = evaluate(s.value, inputs);
        auto w = static_cast<std::size_t>(out.offset(s.write_access.apply(i)));
        out.values[w] = combine ? evaluate(combine, {out.values[w], v}) : v;
    });
}

} // namespace

std::vector<HostArray> interpret_ir(const poly::ProgramIR& program,
                                    const std::vector<HostArray>& placeholder_values) {
    std::vector<Storage> buffers;
    for (const poly::Buffer& b : program.buffers) {
        Storage s{b.sizes, {}, b.name};
        std::int64_t n = 1;
        for (std::int64_t e : b.sizes)
            n *= e;
        s.values.assign(static_cast<std::size_t>(n), ScalarValue{b.dtype, 0, 0.0});
        buffers.push_back(std::move(s));
    }
    for (std::size_t k = 0; k < program.inputs.size(); ++k) {
        const poly::Buffer& b = program.buffers.at(static_cast<std::size_t>(program.inputs[k]));
        HostArray value;
        if (k < placeholder_values.size())
            value = placeholder_values[k];
        else if (auto memo = b.node->memo())
            value = *memo;
        else if (b.node->kind == NodeKind::Data)
            value = b.node->data;
        else
            throw std::runtime_error("ir interpreter: input " + b.name + " is not bound");
        if (value.sizes() != b.sizes || value.dtype() != b.dtype)
            throw std::runtime_error("ir interpreter: input " + b.name + " has wrong sizes/dtype");
        Storage& s = buffers[static_cast<std::size_t>(program.inputs[k])];
        for (std::int64_t i = 0; i < value.size(); ++i)
            s.values[static_cast<std::size_t>(i)] = load(value, i);
    }
    for (const poly::Kernel& kernel : program.kernels)
        for (const poly::Statement& s : kernel.statements)
            run_statement(program, s, buffers);
    std::vector<HostArray> results;
    for (int o : program.outputs) {
        const poly::Buffer& b = program.buffers.at(static_cast<std::size_t>(o));
        HostArray a(b.sizes, b.dtype);
        const Storage& s = buffers[static_cast<std::size_t>(o)];
        for (std::size_t i = 0; i < s.values.size(); ++i)
            store(a, static_cast<std::int64_t>(i), s.values[i]);
        results.push_back(std::move(a));
    }
    return results;
}

} // namespace hedra::test
