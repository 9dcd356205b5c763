// dist::init() (see init.hpp).
#include "dist/init.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "dist/mpi_communicator.hpp"

namespace hedra::dist {
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

std::shared_ptr<Communicator> init() {
    if (launched_by_mpi()) return mpi_world();
    if (const int world = env_int("WORLD_SIZE"); world > 1)
        throw Error("dist::init: WORLD_SIZE=" + std::to_string(world) +
                    " (a torchrun-style launch), but hedra's ranks talk through MPI; start them "
                    "with mpirun -np " +
                    std::to_string(world) + " instead");
    return std::make_shared<SelfCommunicator>();
}

} // namespace hedra::dist
