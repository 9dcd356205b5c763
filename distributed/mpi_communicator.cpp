// The MPI communicator (see mpi_communicator.hpp).
#include "distributed/mpi_communicator.hpp"

#include "core/error.hpp"

#if HEDRA_HAS_MPI
#include <mpi.h>
#endif

namespace hedra::distributed {

#if HEDRA_HAS_MPI
namespace {

void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Error(std::string("mpi: ") + call + " failed: " + std::string(text, length));
}

// MPI_Init on first use, MPI_Finalize when the process exits.
class MpiSession {
public:
    static void ensure() { static MpiSession session; }
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

private:
    MpiSession() {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized) {
            int provided = 0;
            check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
                  "MPI_Init_thread");
            owned_ = true;
        }
    }
    ~MpiSession() {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (owned_ && !finalized) MPI_Finalize();
    }
    bool owned_ = false;
};

MPI_Datatype mpi_type(DType t) {
    switch (t) {
    case DType::F32:
        return MPI_FLOAT;
    case DType::F64:
        return MPI_DOUBLE;
    case DType::I32:
        return MPI_INT32_T;
    case DType::I64:
        return MPI_INT64_T;
    case DType::Bool:
    case DType::BF16:
    case DType::F16:
        break;
    }
    internal_error("mpi: a dtype the checks exclude");
}

int count_of(std::int64_t n) {
    if (n > 0x7fffffff)
        throw Error("mpi: a collective of " + std::to_string(n) +
                    " elements; MPI counts stop at 2^31 - 1, split the array");
    return static_cast<int>(n);
}

// A non-blocking MPI collective in flight.
class MpiInFlight : public InFlight {
public:
    explicit MpiInFlight(bool receive = false) : receive_(receive) {}
    MPI_Request* request() { return &request_; }
    // A send's memory must not go before the send finishes; a receive that is given up (an
    // error unwinding the step) is cancelled rather than waited for.
    ~MpiInFlight() override {
        if (request_ == MPI_REQUEST_NULL) return;
        if (receive_) MPI_Cancel(&request_);
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }
    bool done() override {
        int flag = 0;
        check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        return flag != 0;
    }
    void wait() override { check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait"); }

private:
    MPI_Request request_ = MPI_REQUEST_NULL;
    bool receive_ = false;
};

class MpiCommunicator : public Communicator {
public:
    MpiCommunicator() {
        MpiSession::ensure();
        check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    explicit MpiCommunicator(MPI_Comm owned) : comm_(owned) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    MpiCommunicator(const MpiCommunicator&) = delete;
    MpiCommunicator& operator=(const MpiCommunicator&) = delete;
    std::shared_ptr<Communicator> split(int color, int key) override {
        if (color < 0) throw Error("split: color " + std::to_string(color) + " must be >= 0");
        MPI_Comm part = MPI_COMM_NULL;
        check(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
        return std::make_shared<MpiCommunicator>(part);
    }
    ~MpiCommunicator() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Comm_free(&comm_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "mpi"; }
    void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }
    std::unique_ptr<InFlight> start_sum_in_place(void* data, std::int64_t count,
                                                 DType dtype) override {
        auto flight = std::make_unique<MpiInFlight>();
        check(MPI_Iallreduce(MPI_IN_PLACE, data, count_of(count), mpi_type(dtype), MPI_SUM, comm_,
                             flight->request()),
              "MPI_Iallreduce");
        return flight;
    }
    std::unique_ptr<InFlight> start_reduce_in_place(void* data, std::int64_t count, DType dtype,
                                                    int root) override {
        check_root(root, "start_reduce_in_place");
        auto flight = std::make_unique<MpiInFlight>();
        check(MPI_Ireduce(rank_ == root ? MPI_IN_PLACE : data, data, count_of(count),
                          mpi_type(dtype), MPI_SUM, root, comm_, flight->request()),
              "MPI_Ireduce");
        return flight;
    }
    std::unique_ptr<InFlight> start_send(const void* data, std::size_t bytes, int dest,
                                         int tag) override {
        check_root(dest, "start_send");
        auto flight = std::make_unique<MpiInFlight>();
        check(MPI_Isend(data, count_of(static_cast<std::int64_t>(bytes)), MPI_BYTE, dest, tag,
                        comm_, flight->request()),
              "MPI_Isend");
        return flight;
    }
    void receive(void* data, std::size_t bytes, int source, int tag) override {
        check_root(source, "receive");
        check(MPI_Recv(data, count_of(static_cast<std::int64_t>(bytes)), MPI_BYTE, source, tag,
                       comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
    }
    std::unique_ptr<InFlight> start_receive(void* data, std::size_t bytes, int source,
                                            int tag) override {
        check_root(source, "start_receive");
        auto flight = std::make_unique<MpiInFlight>(true);
        check(MPI_Irecv(data, count_of(static_cast<std::int64_t>(bytes)), MPI_BYTE, source, tag,
                        comm_, flight->request()),
              "MPI_Irecv");
        return flight;
    }
    std::unique_ptr<InFlight> start_broadcast_in_place(void* data, std::size_t bytes,
                                                       int root) override {
        check_root(root, "start_broadcast_in_place");
        auto flight = std::make_unique<MpiInFlight>();
        check(MPI_Ibcast(data, count_of(static_cast<std::int64_t>(bytes)), MPI_BYTE, root, comm_,
                         flight->request()),
              "MPI_Ibcast");
        return flight;
    }

protected:
    void sum_raw(const void* in, void* out, std::int64_t count, DType dtype) override {
        check(MPI_Allreduce(in, out, count_of(count), mpi_type(dtype), MPI_SUM, comm_),
              "MPI_Allreduce");
    }
    void broadcast_raw(void* data, std::size_t bytes, int root) override {
        check(MPI_Bcast(data, count_of(static_cast<std::int64_t>(bytes)), MPI_BYTE, root, comm_),
              "MPI_Bcast");
    }
    void all_gather_raw(const void* in, void* out, std::size_t bytes) override {
        const int n = count_of(static_cast<std::int64_t>(bytes));
        check(MPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, comm_), "MPI_Allgather");
    }
    void reduce_scatter_raw(const void* in, void* out, std::int64_t count, DType dtype) override {
        check(MPI_Reduce_scatter_block(in, out, count_of(count), mpi_type(dtype), MPI_SUM, comm_),
              "MPI_Reduce_scatter_block");
    }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1;
};

} // namespace

bool mpi_available() {
    return true;
}

std::shared_ptr<Communicator> mpi_world() {
    return std::make_shared<MpiCommunicator>();
}

#else

bool mpi_available() {
    return false;
}

std::shared_ptr<Communicator> mpi_world() {
    throw Error(
        "mpi: hedra was built without MPI; install libopenmpi-dev (scripts/install_deps.sh) "
        "and configure again");
}

#endif

} // namespace hedra::distributed
