// dist::init(): the communicator of this process as its launcher set it up. Under mpirun (or
// any MPI launcher: OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK) the MPI world; alone, a group of
// one. A torchrun-style launch (WORLD_SIZE > 1 without MPI) is refused with what to run instead.
#pragma once

#include <memory>

#include "dist/communicator.hpp"

namespace hedra::dist {

std::shared_ptr<Communicator> init();

// Whether the environment says an MPI launcher started this process.
bool launched_by_mpi();

} // namespace hedra::dist
