// hedra.distributed: data-parallel training over MPI from a script started by mpirun (one
// process per rank), as distributed/ gives it to C++: init() (the launcher's group), a
// Communicator's collectives, and DataParallelTrainer over an nn.Trainer. Where the C++
// library was built without MPI these names raise hedra.Error saying how to get it, since a
// group of one is all such a build could offer.
#include <dlfcn.h>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "distributed/communicator.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/init.hpp"
#include "distributed/mpi_communicator.hpp"
#include "hedra_python.hpp"
#include "nn/io/safetensors.hpp"
#include "python_types.hpp"

namespace hedra::python {

using namespace nb::literals;
namespace dist = hedra::distributed;

namespace {

void require_mpi(const char* op) {
    if (dist::mpi_available()) return;
    throw Error(std::string("hedra.distributed.") + op +
                ": this hedra was built without MPI, so it has no data-parallel ranks; install "
                "MPI (libopenmpi-dev and openmpi-bin, as scripts/install_deps.sh does), rebuild "
                "and reinstall the C++ library (cmake --build build; cmake --install build "
                "--prefix build/install) and reinstall the module (bash scripts/python_setup.sh)");
}

// OpenMPI opens its components (plugins) with dlopen, and they look up libmpi's symbols in the
// global namespace; Python loaded this extension, and libmpi with it, RTLD_LOCAL. Promoting the
// already loaded libmpi to RTLD_GLOBAL (as mpi4py does) before MPI_Init lets them resolve. The
// handle is not closed: libmpi stays loaded for the process's life either way.
void promote_mpi_symbols() {
    for (const char* name : {"libmpi.so.40", "libmpi.so.12", "libmpi.so"})
        if (dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD)) return;
}

dist::Reduction to_reduction(const std::string& op) {
    if (op == "sum") return dist::Reduction::Sum;
    if (op == "mean") return dist::Reduction::Mean;
    throw Error("hedra.distributed: reduction '" + op + "'; use 'sum' or 'mean'");
}

void bind_communicator(nb::module_& d) {
    nb::class_<dist::Communicator>(d, "Communicator",
                                   "A group of ranks and its collectives (results equal on every "
                                   "rank bit for bit). Every rank calls each collective in the "
                                   "same order with arrays of the same sizes and dtype.")
        .def_prop_ro("rank", &dist::Communicator::rank)
        .def_prop_ro("size", &dist::Communicator::size)
        .def_prop_ro("name", &dist::Communicator::name, "'mpi', 'nccl' or 'self'.")
        .def(
            "all_reduce",
            [](dist::Communicator& c, ArrayLike a, const std::string& op) -> NumpyArray {
                return NumpyArray(to_numpy(c.all_reduce(to_host_array(a), to_reduction(op))));
            },
            "a"_a, "op"_a = "sum", "Element-wise sum ('sum') or mean ('mean') over all ranks.")
        .def(
            "broadcast",
            [](dist::Communicator& c, ArrayLike a, int root) -> NumpyArray {
                return NumpyArray(to_numpy(c.broadcast(to_host_array(a), root)));
            },
            "a"_a, "root"_a = 0, "Rank root's array on every rank.")
        .def(
            "all_gather",
            [](dist::Communicator& c, ArrayLike a) -> NumpyArray {
                return NumpyArray(to_numpy(c.all_gather(to_host_array(a))));
            },
            "a"_a, "Every rank's array stacked along a new leading axis.")
        .def("barrier", &dist::Communicator::barrier);
}

void bind_data_parallel(nb::module_& d) {
    nb::class_<dist::DataParallelTrainer>(
        d, "DataParallelTrainer",
        "An nn.Trainer run data-parallel: every rank passes the same global batch and takes its "
        "rows of it (the inputs whose InputSpec leads with -1), the gradients are summed across "
        "ranks, and every rank applies the same update (parameters equal bit for bit). The "
        "initial parameters are rank 0's.")
        .def(
            "__init__",
            [](dist::DataParallelTrainer* t, std::shared_ptr<dist::Communicator> comm,
               const nn::Trainer& trainer, bool overlap, bool shard_optimizer_state,
               std::int64_t bucket_bytes) {
                require_mpi("DataParallelTrainer");
                if (!comm)
                    throw Error("hedra.distributed.DataParallelTrainer: no communicator; pass "
                                "hedra.distributed.init()");
                dist::DataParallelOptions options;
                options.overlap = overlap;
                options.shard_optimizer_state = shard_optimizer_state;
                options.bucket_bytes = bucket_bytes;
                new (t) dist::DataParallelTrainer(std::move(comm), trainer, options);
            },
            "comm"_a, "trainer"_a, "overlap"_a = true, "shard_optimizer_state"_a = false,
            "bucket_bytes"_a = dist::kMeasuredBuckets,
            "Copies `trainer` (its compiled programs are shared). overlap: all-reduce during the "
            "backward pass; shard_optimizer_state: ZeRO stage 1; bucket_bytes: -1 measured, 0 one "
            "collective per gradient.")
        .def(
            "step",
            [](dist::DataParallelTrainer& t, ArraySequence inputs, std::optional<double> lr) {
                return t.step(to_host_arrays(inputs),
                              lr ? *lr : t.local().optimizer().learning_rate());
            },
            "inputs"_a, "lr"_a = nb::none(),
            "One update on the global batch (lr: the optimizer's unless given); returns the "
            "global batch's mean loss before it.")
        .def(
            "evaluate_loss",
            [](dist::DataParallelTrainer& t, ArraySequence inputs) {
                return t.evaluate_loss(to_host_arrays(inputs));
            },
            "inputs"_a, "The global batch's mean loss at the current parameters.")
        .def(
            "evaluate",
            [](dist::DataParallelTrainer& t,
               ArraySequence inputs) -> std::pair<double, NumpyArrayList> {
                nn::StepResult r = t.evaluate(to_host_arrays(inputs));
                return {r.loss.flat(0), NumpyArrayList(to_numpy_list(r.outputs))};
            },
            "inputs"_a,
            "(loss, [outputs]) over the global batch: float outputs as means, integer ones summed.")
        .def(
            "shard",
            [](const dist::DataParallelTrainer& t, std::int64_t batch) { return t.shard(batch); },
            "batch"_a, "The rows [first, last) of a global batch of `batch` rows this rank takes.")
        .def(
            "local_inputs",
            [](const dist::DataParallelTrainer& t, ArraySequence inputs) {
                return NumpyArrayList(to_numpy_list(t.local_inputs(to_host_arrays(inputs))));
            },
            "inputs"_a, "This rank's share of the inputs.")
        .def_prop_ro(
            "params",
            [](const dist::DataParallelTrainer& t) {
                return NumpyArrayList(to_numpy_list(t.local().params()));
            },
            "The parameters (equal on every rank).")
        .def_prop_ro("local", nb::overload_cast<>(&dist::DataParallelTrainer::local),
                     nb::rv_policy::reference_internal, "This rank's nn.Trainer.")
        .def_prop_ro("communicator", &dist::DataParallelTrainer::communicator,
                     nb::rv_policy::reference_internal)
        .def_prop_ro("communication_seconds", &dist::DataParallelTrainer::communication_seconds)
        .def_prop_ro("optimizer_state_bytes", &dist::DataParallelTrainer::optimizer_state_bytes)
        .def(
            "checkpoint",
            [](const dist::DataParallelTrainer& t) {
                nn::TrainerCheckpoint c = t.checkpoint();
                return CheckpointTuple(checkpoint_tuple(c.names, c.arrays, c.metadata));
            },
            "({name: array}, metadata) as one process's Trainer.checkpoint() gives it. "
            "Collective: every rank calls it.")
        .def("save_checkpoint", &dist::DataParallelTrainer::save_checkpoint, "path"_a,
             "checkpoint() written by rank 0 as safetensors. Collective.")
        .def(
            "restore",
            [](dist::DataParallelTrainer& t, nb::dict arrays,
               std::map<std::string, std::string> metadata) {
                nn::TrainerCheckpoint c;
                for (auto [k, v] : arrays) {
                    c.names.push_back(nb::cast<std::string>(k));
                    c.arrays.push_back(to_host_array(v));
                }
                c.metadata = std::move(metadata);
                t.restore(c);
            },
            "arrays"_a, "metadata"_a,
            "Takes checkpoint()'s ({name: array}, metadata) on every rank (each keeps its part of "
            "a sharded state).")
        .def(
            "load_checkpoint",
            [](dist::DataParallelTrainer& t, const std::string& path) {
                nn::SafetensorsFile f = nn::load_safetensors(path);
                t.restore({f.names, f.arrays, f.metadata});
            },
            "path"_a, "restore() from a safetensors file save_checkpoint() wrote.");
}

} // namespace

void bind_distributed(nb::module_& m) {
    nb::module_ d = m.def_submodule(
        "distributed", "Data-parallel training over MPI: run the script under mpirun -np N.");
    d.def("mpi_available", &dist::mpi_available,
          "Whether the C++ library was built with MPI (the other names need it).");
    d.def("launched_by_mpi", &dist::launched_by_mpi,
          "Whether an MPI launcher (mpirun) started this process.");
    d.def("local_rank", &dist::local_rank, "The rank of this process among those of its host.");
    d.def(
        "init",
        []() {
            require_mpi("init");
            if (dist::launched_by_mpi()) promote_mpi_symbols();
            return dist::init();
        },
        "The communicator of this process: the MPI world under mpirun, else a group of one.");
    bind_communicator(d);
    bind_data_parallel(d);
}

} // namespace hedra::python
