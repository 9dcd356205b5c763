// The MPI communicator: the processes mpirun started (MPI_COMM_WORLD, duplicated), with MPI's
// collectives; start_all_reduce uses MPI_Iallreduce. MPI is initialized (thread level
// MPI_THREAD_FUNNELED: hedra calls MPI from the thread that runs the step) on the first call and
// finalized at exit.
#pragma once

#include <memory>

#include "distributed/communicator.hpp"

namespace hedra::distributed {

// Whether hedra was built with MPI (find_package(MPI)); mpi_world() throws if not.
bool mpi_available();
std::shared_ptr<Communicator> mpi_world();

} // namespace hedra::distributed
