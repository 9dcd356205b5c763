// In-process ranks (see in_process.hpp): every collective is an exchange of every rank's bytes
// through shared memory, then local arithmetic in rank order.
#include "distributed/in_process.hpp"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "core/error.hpp"

namespace hedra::distributed {
namespace {

using Bytes = std::vector<unsigned char>;

// Every rank's contribution, published once all have arrived and kept until all have copied.
class Exchange {
public:
    explicit Exchange(int ranks) : ranks_(ranks), slots_(static_cast<std::size_t>(ranks)) {}

    std::vector<Bytes> all(int rank, Bytes mine) {
        std::unique_lock<std::mutex> lock(mutex_);
        slots_[static_cast<std::size_t>(rank)] = std::move(mine);
        arrive(lock, arrived_, generation_);
        std::vector<Bytes> copy = slots_;
        arrive(lock, copied_, copy_generation_); // no rank overwrites a slot before all copied
        return copy;
    }
    void barrier() {
        std::unique_lock<std::mutex> lock(mutex_);
        arrive(lock, arrived_, generation_);
    }
    // Point to point: a copy queued for (source, dest, tag), taken in order.
    void post(int source, int dest, int tag, Bytes message) {
        std::lock_guard<std::mutex> lock(mutex_);
        mail_[{source, dest, tag}].push_back(std::move(message));
        changed_.notify_all();
    }
    Bytes take(int source, int dest, int tag) {
        std::unique_lock<std::mutex> lock(mutex_);
        auto& queue = mail_[{source, dest, tag}];
        changed_.wait(lock, [&] { return !queue.empty(); });
        Bytes message = std::move(queue.front());
        queue.pop_front();
        return message;
    }
    // The exchange of the ranks of `color` in split number `split` (made by the first to ask).
    std::shared_ptr<Exchange> part(std::uint64_t split, int color, int ranks) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::shared_ptr<Exchange>& e = parts_[{split, color}];
        if (!e) e = std::make_shared<Exchange>(ranks);
        return e;
    }

private:
    void arrive(std::unique_lock<std::mutex>& lock, int& count, std::uint64_t& generation) {
        const std::uint64_t mine = generation;
        if (++count == ranks_) {
            count = 0;
            ++generation;
            changed_.notify_all();
            return;
        }
        changed_.wait(lock, [&] { return generation != mine; });
    }

    const int ranks_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Bytes> slots_;
    std::map<std::pair<std::uint64_t, int>, std::shared_ptr<Exchange>> parts_;
    std::map<std::tuple<int, int, int>, std::deque<Bytes>> mail_;
    int arrived_ = 0, copied_ = 0;
    std::uint64_t generation_ = 0, copy_generation_ = 0;
};

template <class T>
void sum_parts(const std::vector<Bytes>& parts, std::size_t offset, void* out, std::int64_t count) {
    auto* o = static_cast<T*>(out);
    for (std::int64_t i = 0; i < count; ++i) {
        T total{};
        for (const Bytes& p : parts) {
            T v;
            std::memcpy(&v, p.data() + offset + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
            total = static_cast<T>(total + v);
        }
        o[i] = total;
    }
}

void sum_parts(DType t, const std::vector<Bytes>& parts, std::size_t offset, void* out,
               std::int64_t count) {
    switch (t) {
    case DType::F32:
        return sum_parts<float>(parts, offset, out, count);
    case DType::F64:
        return sum_parts<double>(parts, offset, out, count);
    case DType::I32:
        return sum_parts<std::int32_t>(parts, offset, out, count);
    case DType::I64:
        return sum_parts<std::int64_t>(parts, offset, out, count);
    case DType::Bool:
    case DType::BF16:
    case DType::F16:
        break;
    }
    internal_error("in-process sum of a dtype the checks exclude");
}

// A message already queued for its receiver.
class Delivered : public InFlight {
public:
    bool done() override { return true; }
    void wait() override {}
};

class InProcessCommunicator : public Communicator {
public:
    InProcessCommunicator(std::shared_ptr<Exchange> exchange, int rank, int size)
        : exchange_(std::move(exchange)), rank_(rank), size_(size) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "in-process"; }
    void barrier() override { exchange_->barrier(); }
    std::unique_ptr<InFlight> start_send(const void* data, std::size_t bytes, int dest,
                                         int tag) override {
        check_root(dest, "start_send");
        const auto* p = static_cast<const unsigned char*>(data);
        exchange_->post(rank_, dest, tag, Bytes(p, p + bytes)); // copied: done at once
        return std::make_unique<Delivered>();
    }
    void receive(void* data, std::size_t bytes, int source, int tag) override {
        check_root(source, "receive");
        Bytes message = exchange_->take(source, rank_, tag);
        if (message.size() != bytes)
            throw Error("receive: rank " + std::to_string(rank_) + " expected " +
                        std::to_string(bytes) + " bytes from rank " + std::to_string(source) +
                        " (tag " + std::to_string(tag) + "), got " +
                        std::to_string(message.size()));
        std::memcpy(data, message.data(), bytes);
    }
    std::shared_ptr<Communicator> split(int color, int key) override {
        if (color < 0) throw Error("split: color " + std::to_string(color) + " must be >= 0");
        const int mine[2] = {color, key};
        std::vector<Bytes> all = share(mine, sizeof mine);
        int ranks = 0, rank = 0;
        for (int r = 0; r < size_; ++r) {
            int theirs[2];
            std::memcpy(theirs, all[static_cast<std::size_t>(r)].data(), sizeof theirs);
            if (theirs[0] != color) continue;
            ++ranks;
            if (theirs[1] < key || (theirs[1] == key && r < rank_)) ++rank;
        }
        return std::make_shared<InProcessCommunicator>(exchange_->part(splits_++, color, ranks),
                                                       rank, ranks);
    }

protected:
    void sum_raw(const void* in, void* out, std::int64_t count, DType dtype) override {
        sum_parts(dtype, share(in, static_cast<std::size_t>(count) * dtype_size(dtype)), 0, out,
                  count);
    }
    void broadcast_raw(void* data, std::size_t bytes, int root) override {
        std::vector<Bytes> parts = share(data, bytes);
        std::memcpy(data, parts.at(static_cast<std::size_t>(root)).data(), bytes);
    }
    void all_gather_raw(const void* in, void* out, std::size_t bytes) override {
        std::vector<Bytes> parts = share(in, bytes);
        for (std::size_t r = 0; r < parts.size(); ++r)
            std::memcpy(static_cast<unsigned char*>(out) + r * bytes, parts[r].data(), bytes);
    }
    void reduce_scatter_raw(const void* in, void* out, std::int64_t count, DType dtype) override {
        const std::size_t part = static_cast<std::size_t>(count) * dtype_size(dtype);
        std::vector<Bytes> parts = share(in, part * static_cast<std::size_t>(size_));
        sum_parts(dtype, parts, part * static_cast<std::size_t>(rank_), out, count);
    }

private:
    std::vector<Bytes> share(const void* data, std::size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        return exchange_->all(rank_, Bytes(p, p + bytes));
    }

    std::shared_ptr<Exchange> exchange_;
    int rank_, size_;
    std::uint64_t splits_ = 0; // every rank splits in the same order
};

} // namespace

std::vector<std::shared_ptr<Communicator>> in_process_group(int ranks) {
    if (ranks < 1)
        throw Error("in_process_group: " + std::to_string(ranks) + " ranks; give at least 1");
    auto exchange = std::make_shared<Exchange>(ranks);
    std::vector<std::shared_ptr<Communicator>> group;
    for (int r = 0; r < ranks; ++r)
        group.push_back(std::make_shared<InProcessCommunicator>(exchange, r, ranks));
    return group;
}

} // namespace hedra::distributed
