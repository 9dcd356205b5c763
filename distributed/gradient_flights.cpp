// Gradient collectives during the backward pass (see gradient_flights.hpp).
#include "distributed/gradient_flights.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.hpp"

namespace hedra::distributed {

std::size_t CollectiveCost::bucket_bytes() const {
    const double b = 3.0 * latency_seconds * bytes_per_second;
    return static_cast<std::size_t>(std::clamp(b, 1024.0, 64.0 * 1024 * 1024));
}

CollectiveCost measure_cost(Communicator& comm) {
    if (comm.size() == 1) return {0.0, 1e30};
    using Clock = std::chrono::steady_clock;
    // The sums training runs: in place, over memory already written. (A new result array per
    // call would time its page faults too: measured here, a 4 MB sum took 6 ms that way against
    // 0.3-0.5 ms in place.)
    auto seconds_per = [&](std::int64_t count, int reps) {
        HostArray a({count}, DType::F32);
        std::memset(a.raw_mutable(), 0, a.bytes());
        comm.start_sum_in_place(a.raw_mutable(), count, DType::F32)->wait(); // connection setup
        comm.barrier();
        const auto start = Clock::now();
        for (int i = 0; i < reps; ++i)
            comm.start_sum_in_place(a.raw_mutable(), count, DType::F32)->wait();
        return std::chrono::duration<double>(Clock::now() - start).count() / reps;
    };
    const double small = seconds_per(1, 20);
    const std::int64_t big = 1 << 20;
    const double large = seconds_per(big, 8);
    HostArray figures({2}, DType::F64);
    figures.set_flat(0, small);
    figures.set_flat(1, 4.0 * static_cast<double>(big) / std::max(large - small, 1e-9));
    figures = comm.broadcast(figures, 0);
    return {figures.flat(0), figures.flat(1)};
}

FlightPlan plan_flights(const std::vector<HostArray>& params, const std::vector<std::size_t>& order,
                        const std::vector<int>& roots, std::size_t bucket_bytes) {
    if (order.size() != params.size())
        internal_error("plan_flights: an order that does not list every parameter once");
    FlightPlan plan;
    plan.bucket_of.assign(params.size(), 0);
    for (const HostArray& a : params)
        plan.counts.push_back(a.size());
    std::size_t open_bytes = 0;
    bool open = false;
    for (std::size_t p : order) {
        const HostArray& a = params.at(p);
        const int root = roots.empty() ? -1 : roots[p];
        const std::size_t bytes = a.bytes();
        const bool joins = open && plan.buckets.back().root == root &&
                           plan.buckets.back().dtype == a.dtype() &&
                           open_bytes + bytes <= bucket_bytes;
        if (!joins) {
            plan.buckets.push_back({{}, root, a.dtype(), 0});
            open_bytes = 0;
        }
        FlightPlan::Bucket& b = plan.buckets.back();
        b.params.push_back(p);
        b.count += a.size();
        open_bytes += bytes;
        open = open_bytes < bucket_bytes;
        plan.bucket_of[p] = plan.buckets.size() - 1;
    }
    return plan;
}

GradientFlights::GradientFlights(Communicator& comm, const FlightPlan& plan, std::size_t num_params)
    : comm_(comm), plan_(plan), data_(num_params, nullptr), packed_(plan.buckets.size()) {}

OutputHook GradientFlights::hook() {
    return OutputHook{on_ready, this, on_tick};
}

void GradientFlights::on_ready(void* context, int output, void* data) {
    auto* f = static_cast<GradientFlights*>(context);
    if (output < 1 || output > static_cast<int>(f->data_.size())) return; // the loss, extras
    f->ready(static_cast<std::size_t>(output - 1), data);
}

void GradientFlights::on_tick(void* context) {
    static_cast<GradientFlights*>(context)->progress();
}

void GradientFlights::ready(std::size_t param, void* data) {
    if (data_.at(param)) return;
    data_[param] = data;
    arrival_.push_back(param);
    start_ready();
}

void GradientFlights::progress() {
    for (auto& flight : flights_)
        flight->done();
}

namespace {

// A gradient whose memory an earlier parameter's gradient already has (one array returned
// twice): it is summed once, through the first.
bool aliases_earlier(const std::vector<void*>& data, std::size_t param) {
    for (std::size_t q = 0; q < data.size(); ++q)
        if (q < param && data[q] == data[param]) return true;
    return false;
}

} // namespace

void GradientFlights::start_ready() {
    for (; next_ < plan_.buckets.size(); ++next_) {
        const FlightPlan::Bucket& b = plan_.buckets[next_];
        if (!std::all_of(b.params.begin(), b.params.end(), [&](std::size_t p) { return data_[p]; }))
            return;
        const auto start = [&](void* data) {
            flights_.push_back(b.root < 0
                                   ? comm_.start_sum_in_place(data, b.count, b.dtype)
                                   : comm_.start_reduce_in_place(data, b.count, b.dtype, b.root));
        };
        if (b.params.size() == 1) {
            // Every rank skips an alias alike: the program (so its outputs' sharing) is the same.
            if (!aliases_earlier(data_, b.params[0])) start(data_[b.params[0]]);
            continue;
        }
        HostArray& buffer = packed_[next_];
        buffer = HostArray({b.count}, b.dtype);
        auto* out = static_cast<unsigned char*>(buffer.raw_mutable());
        const std::size_t element = dtype_size(b.dtype);
        for (std::size_t p : b.params) {
            const std::size_t size = static_cast<std::size_t>(plan_.counts[p]) * element;
            if (aliases_earlier(data_, p))
                std::memset(out, 0, size);
            else
                std::memcpy(out, data_[p], size);
            out += size;
        }
        start(buffer.raw_mutable());
    }
}

void GradientFlights::finish() {
    start_ready();
    if (next_ != plan_.buckets.size())
        internal_error("GradientFlights: the program did not report every gradient");
    for (auto& flight : flights_)
        flight->wait();
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) {
        const FlightPlan::Bucket& b = plan_.buckets[i];
        if (b.params.size() == 1 || (b.root >= 0 && b.root != comm_.rank())) continue;
        const auto* in = static_cast<const unsigned char*>(packed_[i].raw());
        for (std::size_t p : b.params) {
            const std::size_t size =
                static_cast<std::size_t>(plan_.counts[p]) * dtype_size(b.dtype);
            if (!aliases_earlier(data_, p)) std::memcpy(data_[p], in, size);
            in += size;
        }
    }
}

} // namespace hedra::distributed
