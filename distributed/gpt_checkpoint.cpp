// GPT checkpoints across grids (see gpt_checkpoint.hpp).
#include "distributed/gpt_checkpoint.hpp"

#include <cstring>
#include <map>

#include "core/error.hpp"

namespace hedra::distributed {
namespace {

constexpr int kEntryTag = 31;

// The parameter an entry belongs to (its index in gpt_parameters()), or -1: a parameter's name,
// or "optimizer.<name>.<state>".
int parameter_of(const std::vector<nn::GptParameter>& params, const std::string& entry) {
    const std::string name =
        entry.rfind("optimizer.", 0) == 0 ? entry.substr(std::string("optimizer.").size()) : entry;
    int best = -1;
    std::size_t longest = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const std::string& p = params[i].name;
        const bool match =
            name == p || (name.size() > p.size() && name.rfind(p, 0) == 0 && name[p.size()] == '.');
        if (match && p.size() > longest) best = static_cast<int>(i), longest = p.size();
    }
    return best;
}

void send_bytes(Communicator& c, const void* data, std::size_t bytes, int dest) {
    HostArray n({1}, DType::I64);
    n.set_flat(0, static_cast<double>(bytes));
    c.start_send(n.raw(), n.bytes(), dest, kEntryTag)->wait();
    if (bytes > 0) c.start_send(data, bytes, dest, kEntryTag)->wait();
}

std::vector<unsigned char> receive_bytes(Communicator& c, int source) {
    HostArray n({1}, DType::I64);
    c.receive(n.raw_mutable(), n.bytes(), source, kEntryTag);
    std::vector<unsigned char> out(static_cast<std::size_t>(n.flat(0)));
    if (!out.empty()) c.receive(out.data(), out.size(), source, kEntryTag);
    return out;
}

// An entry as bytes: name, dtype, sizes, then the elements.
void send_entry(Communicator& c, const std::string& name, const HostArray& a, int dest) {
    send_bytes(c, name.data(), name.size(), dest);
    std::vector<std::int64_t> head{static_cast<std::int64_t>(a.dtype())};
    head.insert(head.end(), a.sizes().begin(), a.sizes().end());
    send_bytes(c, head.data(), head.size() * sizeof(std::int64_t), dest);
    send_bytes(c, a.raw(), a.bytes(), dest);
}

std::pair<std::string, HostArray> receive_entry(Communicator& c, int source) {
    std::vector<unsigned char> name = receive_bytes(c, source);
    std::vector<unsigned char> head = receive_bytes(c, source);
    std::vector<std::int64_t> h(head.size() / sizeof(std::int64_t));
    std::memcpy(h.data(), head.data(), head.size());
    HostArray a(std::vector<std::int64_t>(h.begin() + 1, h.end()), static_cast<DType>(h[0]));
    std::vector<unsigned char> data = receive_bytes(c, source);
    if (data.size() != a.bytes())
        throw Error("gather_gpt_checkpoint: an entry of rank " + std::to_string(source) +
                    " came with " + std::to_string(data.size()) + " bytes for " +
                    std::to_string(a.bytes()));
    if (!data.empty()) std::memcpy(a.raw_mutable(), data.data(), data.size());
    return {std::string(name.begin(), name.end()), a};
}

} // namespace

nn::TrainerCheckpoint gather_gpt_checkpoint(const nn::GptConfig& config, const ProcessGrid& grid,
                                            const nn::TrainerCheckpoint& local) {
    Communicator& world = *grid.world();
    const GridShape shape = grid.shape();
    if (local.names.size() != local.arrays.size())
        throw Error("gather_gpt_checkpoint: " + std::to_string(local.names.size()) + " names for " +
                    std::to_string(local.arrays.size()) + " arrays");
    // Data-parallel replica 0 of every (tp, stage) sends its entries to world rank 0.
    if (world.rank() != 0) {
        if (grid.dp_rank() == 0) {
            HostArray count({1}, DType::I64);
            count.set_flat(0, static_cast<double>(local.names.size()));
            world.start_send(count.raw(), count.bytes(), 0, kEntryTag)->wait();
            for (std::size_t i = 0; i < local.names.size(); ++i)
                send_entry(world, local.names[i], local.arrays[i], 0);
        }
        return {};
    }
    const std::vector<nn::GptParameter> params = nn::gpt_parameters(config);
    // name -> the shard of each tp rank (the first stage holding it wins).
    std::map<std::string, std::vector<HostArray>> shards;
    std::vector<std::string> order;
    auto take = [&](const std::string& name, const HostArray& a, int tp_rank) {
        auto [it, fresh] = shards.try_emplace(name, std::size_t(shape.tp));
        if (fresh) order.push_back(name);
        HostArray& slot = it->second[std::size_t(tp_rank)];
        if (!slot.address()) slot = a;
    };
    for (int pp = 0; pp < shape.pp; ++pp)
        for (int tp = 0; tp < shape.tp; ++tp) {
            const int r = grid.world_rank(0, tp, pp);
            if (r == 0) {
                for (std::size_t i = 0; i < local.names.size(); ++i)
                    take(local.names[i], local.arrays[i], tp);
                continue;
            }
            HostArray count({1}, DType::I64);
            world.receive(count.raw_mutable(), count.bytes(), r, kEntryTag);
            for (std::int64_t k = 0; k < static_cast<std::int64_t>(count.flat(0)); ++k) {
                auto [name, a] = receive_entry(world, r);
                take(name, a, tp);
            }
        }
    nn::TrainerCheckpoint whole;
    whole.metadata = local.metadata;
    for (const std::string& name : order) {
        const std::vector<HostArray>& s = shards.at(name);
        const int p = parameter_of(params, name);
        whole.names.push_back(name);
        whole.arrays.push_back(p < 0 ? s[0] : nn::gpt_unshard_parameter(config, std::size_t(p), s));
    }
    return whole;
}

nn::TrainerCheckpoint shard_gpt_checkpoint(const nn::GptConfig& config,
                                           const nn::TrainerCheckpoint& whole, int tp, int tp_rank,
                                           int stages, int stage, int chunks) {
    const std::vector<nn::GptParameter> params = nn::gpt_parameters(config);
    const std::vector<std::size_t> mine =
        nn::gpt_pipeline_parameters(config, stage, stages, chunks);
    std::vector<bool> held(params.size(), false);
    for (std::size_t i : mine)
        held[i] = true;
    nn::TrainerCheckpoint out;
    out.metadata = whole.metadata;
    for (std::size_t i = 0; i < whole.names.size(); ++i) {
        const int p = parameter_of(params, whole.names[i]);
        if (p >= 0 && !held[std::size_t(p)]) continue;
        out.names.push_back(whole.names[i]);
        out.arrays.push_back(
            p < 0 ? whole.arrays[i]
                  : nn::gpt_shard_parameter(config, std::size_t(p), whole.arrays[i], tp, tp_rank));
    }
    return out;
}

} // namespace hedra::distributed
