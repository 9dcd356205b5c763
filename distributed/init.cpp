// distributed::init() (see init.hpp).
#include "distributed/init.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "distributed/mpi_communicator.hpp"
#include "distributed/nccl_communicator.hpp"

namespace hedra::distributed {
namespace {

int env_int(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : 0;
}

} // namespace

bool launched_by_mpi() {
    return env_int("OMPI_COMM_WORLD_SIZE") > 0 || env_int("PMI_SIZE") > 0 ||
           std::getenv("PMIX_RANK") != nullptr;
}

int local_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"})
        if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
    return 0;
}

std::shared_ptr<Communicator> init() {
    const char* transport = std::getenv("HEDRA_DIST");
    const std::string chosen = transport ? transport : "";
    if (!chosen.empty() && chosen != "mpi" && chosen != "nccl")
        throw Error("distributed::init: HEDRA_DIST=" + chosen +
                    "; choose mpi (processes on CPUs) or "
                    "nccl (one GPU per process)");
    if (launched_by_mpi()) {
        if (chosen != "nccl") return mpi_world();
        // One GPU per process on each host, unless the launcher's script chose.
        if (!std::getenv("HEDRA_CUDA_DEVICE"))
            setenv("HEDRA_CUDA_DEVICE", std::to_string(local_rank()).c_str(), 1);
        return nccl_world(mpi_world());
    }
    if (const int world = env_int("WORLD_SIZE"); world > 1)
        throw Error("distributed::init: WORLD_SIZE=" + std::to_string(world) +
                    " (a torchrun-style launch), but hedra's ranks talk through MPI; start them "
                    "with mpirun -np " +
                    std::to_string(world) + " instead");
    return std::make_shared<SelfCommunicator>();
}

} // namespace hedra::distributed
