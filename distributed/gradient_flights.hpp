// The collectives of a data-parallel step's gradients, started as the backward pass makes each
// gradient final. A FlightPlan fixes, identically on every rank (MPI and NCCL need every rank to
// start the same collectives in the same order): the order in which the gradients' collectives
// start, how small gradients are packed into buckets (one collective each, so that a per-call
// latency is paid once for many biases), and where each gradient's sum goes (every rank, or the
// rank that owns the parameter when the optimizer state is sharded). A gradient that fills a
// bucket alone is summed in place, with no copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "distributed/communicator.hpp"

namespace hedra::distributed {

// The time of one collective over `bytes`: latency + bytes / bandwidth (a ring's 2(n-1)/n
// factor folded into the bandwidth measured on this group).
struct CollectiveCost {
    double latency_seconds = 20e-6;
    double bytes_per_second = 5e9;
    double seconds(double bytes) const { return latency_seconds + bytes / bytes_per_second; }
    // The bucket size at which the latency is a quarter of a collective's time: smaller buckets
    // pay mostly latency, larger ones start late and hide less under the backward pass.
    std::size_t bucket_bytes() const;
};

// Measures the group's latency and bandwidth with a few all-reduces (rank 0's figures, on every
// rank, so plans agree). A group of one costs nothing.
CollectiveCost measure_cost(Communicator& comm);

struct FlightPlan {
    struct Bucket {
        std::vector<std::size_t> params; // in start order
        int root = -1;                   // -1: summed on every rank; else reduced to this rank
        DType dtype = DType::F32;
        std::int64_t count = 0; // elements in all
    };
    std::vector<Bucket> buckets;        // in start order
    std::vector<std::size_t> bucket_of; // per parameter
    std::vector<std::int64_t> counts;   // per parameter: its elements
};

// Buckets the parameters' gradients in `order`: consecutive gradients with one root and dtype
// share a bucket while it holds under `bucket_bytes`; 0 puts each in its own. `roots` per
// parameter (-1 or a rank); empty: all -1.
FlightPlan plan_flights(const std::vector<HostArray>& params, const std::vector<std::size_t>& order,
                        const std::vector<int>& roots, std::size_t bucket_bytes);

// One step's collectives: hook() goes to Trainer::gradients (or ready() is called for every
// gradient after it), finish() waits for all and leaves every gradient's sum in its memory
// (on its root's only, for reduced buckets).
class GradientFlights {
public:
    GradientFlights(Communicator& comm, const FlightPlan& plan, std::size_t num_params);
    OutputHook hook(); // output 1 + i is parameter i's gradient
    void ready(std::size_t param, void* data);
    void finish();
    // Parameters in the order their gradients became final (for the next steps' plan).
    const std::vector<std::size_t>& arrival() const { return arrival_; }

private:
    void start_ready();
    void progress();
    static void on_ready(void* context, int output, void* data);
    static void on_tick(void* context);

    Communicator& comm_;
    const FlightPlan& plan_;
    std::vector<void*> data_;       // per parameter, once final
    std::size_t next_ = 0;          // the next bucket to start
    std::vector<HostArray> packed_; // per bucket of several gradients: its buffer
    std::vector<std::unique_ptr<InFlight>> flights_;
    std::vector<std::size_t> arrival_;
};

} // namespace hedra::distributed
