// Buffers bound for a compiled host program, and its run (see host_program.hpp).
#include "backends/common/host_program.hpp"

#include <algorithm>

#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace hedra::backend {
namespace {

const void* leaf_data(const NodePtr& leaf) {
    if (auto memo = leaf->memo()) return memo->raw();
    HEDRA_INTERNAL_CHECK(leaf->kind == NodeKind::Data, "host program: a leaf without data");
    return leaf->data.raw();
}

std::size_t byte_size(const std::vector<std::int64_t>& sizes, DType t) {
    std::size_t n = dtype_size(t);
    for (std::int64_t s : sizes)
        n *= static_cast<std::size_t>(s);
    return n;
}

// Memory for result buffer `b`: a pooled storage no one else holds, else a new one (pooled
// when `pooled`, i.e. this run holds arena_mutex).
std::shared_ptr<AlignedStorage> result_storage(const HostProgramCode& code, std::size_t b,
                                               bool pooled) {
    std::size_t bytes = byte_size(code.sizes[b], code.dtypes[b]);
    if (!pooled) return std::make_shared<AlignedStorage>(bytes);
    if (code.result_pool.size() <= b) code.result_pool.resize(code.sizes.size());
    auto& pool = code.result_pool[b];
    for (const auto& storage : pool)
        if (storage.use_count() == 1) return storage;
    auto storage = std::make_shared<AlignedStorage>(bytes);
    if (pool.size() < 2)
        pool.push_back(storage);
    else
        pool[0] = std::exchange(pool[1], storage);
    return storage;
}

// The memory a donated input's output is written into: the input's own when its caller gave
// it up and nothing else refers to it, else a copy (the caller may still read the input).
HostArray donated_storage(const HostProgramCode& code, std::size_t b, const HostArray& input,
                          bool given_up) {
    if (given_up && input.unshared()) return input;
    auto storage = std::make_shared<AlignedStorage>(byte_size(code.sizes[b], code.dtypes[b]));
    std::memcpy(storage->data, input.raw(), storage->bytes);
    return HostArray::sole(code.sizes[b], code.dtypes[b], storage, storage->data);
}

} // namespace

std::shared_ptr<HostProgramCode> bind_host_program(const poly::ProgramIR& ir,
                                                   const std::vector<NodePtr>& placeholders,
                                                   const std::vector<NodePtr>& leaves,
                                                   const std::string& backend) {
    auto code = std::make_shared<HostProgramCode>();
    code->num_params = ir.params.size();
    for (const poly::Buffer& b : ir.buffers) {
        std::vector<int> slots;
        for (int p : b.params)
            slots.push_back(p < 0 ? -1 : ir.param_index(p));
        code->param_slots.push_back(std::move(slots));
        code->sizes.push_back(b.sizes);
        code->dtypes.push_back(b.dtype);
        code->bindings.push_back(binding_of(b, placeholders, leaves, backend));
    }
    code->outputs = ir.outputs;
    code->plan = plan_temporaries(ir);
    ProgramMemory& m = code->memory;
    for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
        const poly::Buffer& buffer = ir.buffers[b];
        if (buffer.row_local > 0) {
            ++m.row_local;
        } else if (code->plan.slot[b] >= 0) {
            ++m.temporary_count;
            m.temporaries += buffer.storage_bytes();
        } else if (buffer.role == poly::BufferRole::Input) {
            m.inputs += buffer.bytes();
            if (buffer.donated) m.donated += buffer.bytes();
        }
    }
    for (int b : ir.outputs)
        if (!ir.buffers.at(static_cast<std::size_t>(b)).donated)
            m.results += ir.buffers.at(static_cast<std::size_t>(b)).bytes();
    for (std::size_t bytes : code->plan.slot_bytes)
        m.arena += bytes;
    m.slots = static_cast<int>(code->plan.slot_bytes.size());
    // The last kernel touching each buffer: an output is final after it.
    std::vector<int> last(ir.buffers.size(), -1);
    for (std::size_t k = 0; k < ir.kernels.size(); ++k)
        for (const poly::Statement& st : ir.kernels[k].statements) {
            last[static_cast<std::size_t>(st.write_buffer)] = static_cast<int>(k);
            for (const poly::Statement::TupleWrite& w : st.tuple_writes)
                last[static_cast<std::size_t>(w.buffer)] = static_cast<int>(k);
            for (const poly::Read& r : st.reads)
                if (r.buffer >= 0) last[static_cast<std::size_t>(r.buffer)] = static_cast<int>(k);
        }
    for (std::size_t k = 0; k < ir.kernels.size(); ++k)
        if (ir.kernels[k].loop)
            for (int b : ir.kernels[k].loop->touched)
                last[static_cast<std::size_t>(b)] =
                    std::max(last[static_cast<std::size_t>(b)], static_cast<int>(k));
    code->ready_after.resize(ir.kernels.size());
    for (std::size_t o = 0; o < ir.outputs.size(); ++o) {
        const int k = last[static_cast<std::size_t>(ir.outputs[o])];
        if (k < 0)
            code->ready_at_end.push_back(static_cast<int>(o));
        else
            code->ready_after[static_cast<std::size_t>(k)].push_back(static_cast<int>(o));
    }
    return code;
}

namespace {

// What the generated entry calls after each kernel (buffers[number of buffers + 1]).
struct KernelCallback {
    void (*fn)(void*, int) = nullptr;
    void* ctx = nullptr;
};

struct HookRun {
    const HostProgramCode* code;
    const OutputHook* hook;
    const std::vector<void*>* pointers;
    void tell(int output) const {
        hook->ready(
            hook->context, output,
            (*pointers)[static_cast<std::size_t>(code->outputs[static_cast<std::size_t>(output)])]);
    }
};

void after_kernel(void* context, int kernel) {
    const auto* run = static_cast<const HookRun*>(context);
    for (int o : run->code->ready_after.at(static_cast<std::size_t>(kernel)))
        run->tell(o);
    if (run->hook->tick) run->hook->tick(run->hook->context);
}

} // namespace

std::vector<HostArray> run_host_program(const HostProgramCode& code,
                                        const std::vector<HostArray>& inputs,
                                        const std::vector<NodePtr>& leaves, int threads,
                                        const OutputHook* hook, std::vector<HostArray>* give_up) {
    std::unique_lock<std::mutex> lock(code.arena_mutex, std::try_to_lock);
    std::vector<std::unique_ptr<AlignedStorage>> private_arena;
    auto& arena = lock.owns_lock() ? code.arena : private_arena;
    if (arena.size() < code.plan.slot_bytes.size()) {
        arena.resize(code.plan.slot_bytes.size());
        for (std::size_t s = 0; s < arena.size(); ++s)
            if (!arena[s]) arena[s] = std::make_unique<AlignedStorage>(code.plan.slot_bytes[s]);
    }
    std::size_t n = code.sizes.size();
    std::vector<HostArray> owned(n);
    std::vector<void*> pointers(n + 2, nullptr);
    // The symbolic extents' values, from the inputs (the caller checked that they agree).
    std::vector<long long> values(code.num_params, 0);
    for (std::size_t b = 0; b < n && code.num_params > 0; ++b)
        if (code.bindings[b].kind == BufferBinding::Kind::Placeholder)
            for (std::size_t d = 0; d < code.param_slots[b].size(); ++d)
                if (int k = code.param_slots[b][d]; k >= 0)
                    values[static_cast<std::size_t>(k)] =
                        inputs.at(code.bindings[b].index).sizes().at(d);
    pointers[n] = values.data();
    // A result's sizes at these values: its symbolic axes lead (the backend checked), so the
    // first rows of its storage, laid out for the maxima, are the result.
    auto sizes_now = [&](std::size_t b) {
        std::vector<std::int64_t> s = code.sizes[b];
        for (std::size_t d = 0; d < code.param_slots[b].size(); ++d)
            if (int k = code.param_slots[b][d]; k >= 0) s[d] = values[static_cast<std::size_t>(k)];
        return s;
    };
    for (std::size_t b = 0; b < n; ++b) {
        const BufferBinding& bind = code.bindings[b];
        switch (bind.kind) {
        case BufferBinding::Kind::Allocate:
            if (code.plan.slot[b] >= 0) {
                pointers[b] = arena[code.plan.slot[b]]->data;
            } else {
                auto storage = result_storage(code, b, lock.owns_lock());
                owned[b] = HostArray(sizes_now(b), code.dtypes[b], storage, storage->data);
                pointers[b] = storage->data;
            }
            break;
        case BufferBinding::Kind::Placeholder:
            if (bind.donated) {
                owned[b] = donated_storage(code, b, inputs.at(bind.index), give_up != nullptr);
                pointers[b] = const_cast<void*>(owned[b].raw());
            } else {
                pointers[b] = const_cast<void*>(inputs.at(bind.index).raw());
            }
            break;
        case BufferBinding::Kind::Leaf:
            pointers[b] = const_cast<void*>(leaf_data(leaves.at(bind.index)));
            break;
        case BufferBinding::Kind::Local:
            break;
        }
    }
    const bool hooked = hook && hook->ready;
    HookRun run{&code, hook, &pointers};
    KernelCallback callback{after_kernel, &run};
    if (hooked && code.kernel_hooks) pointers[n + 1] = &callback;
    code.entry(pointers.data(), threads);
    if (hooked) {
        if (!code.kernel_hooks)
            for (std::size_t o = 0; o < code.outputs.size(); ++o)
                run.tell(static_cast<int>(o));
        else
            for (int o : code.ready_at_end)
                run.tell(o);
    }
    // The donated inputs written in place are the results now, not the caller's.
    if (give_up)
        for (std::size_t b = 0; b < n; ++b)
            if (code.bindings[b].donated) {
                HostArray& given = give_up->at(code.bindings[b].index);
                if (given.address() == owned[b].address()) given = HostArray();
            }
    std::vector<HostArray> results;
    for (int b : code.outputs)
        results.push_back(owned.at(b));
    return results;
}

} // namespace hedra::backend
