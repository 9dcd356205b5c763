// distributed::init(): the communicator of this process as its launcher set it up. Under mpirun (or
// any MPI launcher: OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK) the MPI world, or with
// HEDRA_DIST=nccl NCCL over it (MPI only exchanges NCCL's unique id; each process takes the GPU
// of its local rank unless HEDRA_CUDA_DEVICE says otherwise); alone, a group of one. A
// torchrun-style launch (WORLD_SIZE > 1 without MPI) is refused with what to run instead.
#pragma once

#include <memory>

#include "distributed/communicator.hpp"

namespace hedra::distributed {

std::shared_ptr<Communicator> init();

// The rank of this process among those of its host (0 when no launcher says).
int local_rank();

// Whether the environment says an MPI launcher started this process.
bool launched_by_mpi();

} // namespace hedra::distributed
