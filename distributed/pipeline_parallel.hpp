// Pipeline parallelism: a model cut into stages, one per rank of a pipeline communicator (the pp
// axis of a ProcessGrid), each a forward program that passes its activation on and a backward
// program that passes the activation's gradient back, run over micro-batches in the 1F1B order
// (after at most p − s − 1 forwards, stage s alternates one forward and one backward, so it
// stashes at most p − s micro-batches' activations). The activations and their gradients go
// point to point between neighbouring stages (MPI_Isend / MPI_Recv, or in-process mailboxes);
// the gradients of the micro-batches are summed inside the backward program; the update is
// the stage's own nn::Trainer::apply_gradients, after the gradients of tied parameters (a
// GPT's token embedding, read by the first and the last stage) are summed between their
// stages and, with data parallelism, every gradient is averaged over the replicas. Clipping
// takes the whole model's norm (the stages' squared norms summed).
//
// Interleaved stages (PipelineOptions::chunks = v > 1, Megatron-LM's virtual pipeline): the
// model is cut into p·v stages and rank r runs the v of them r, r + p, ..., r + (v − 1)p, each a
// chunk with its own programs, in Megatron's interleaved 1F1B order (forwards over chunk 0 for
// p micro-batches, then chunk 1 for the same, ...; backwards in the reverse chunk order). The
// bubble shrinks v times, to (p − 1)/(v·m) of the step, for v times the messages.
//
// A stage's backward reads what its forward computed (the stash): the forward program returns
// every value of its graph that the gradient's graph reads (views are recomputed from their
// sources), the backward program takes them as inputs. The last stage runs its forward and
// backward as one program per micro-batch.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/compute.hpp"
#include "distributed/communicator.hpp"
#include "nn/trainer.hpp"

namespace hedra::distributed {

// One stage: from this stage's parameters, the activation received from the previous stage
// (an empty Array on the first) and the micro-batch's inputs (as the input specs give them),
// the activation sent to the next stage or, on the last stage, the loss (rank 0, the mean
// over the micro-batch's rows).
using StageFunction = std::function<Array(const std::vector<Array>& params, const Array& received,
                                          const std::vector<Array>& inputs)>;

struct PipelineOptions {
    int micro_batches = 4;
    // Interleaved stages: how many chunks (virtual stages) each rank runs; with more than one,
    // micro_batches must be a multiple of the ranks.
    int chunks = 1;
    // With chunks > 1: how many of the parameters each chunk takes, in order (the parameters
    // are the chunks' concatenated).
    std::vector<std::size_t> chunk_params;
    // The sizes of the activations between stages for one micro-batch, f32 (a GPT's
    // (micro-batch, T, C)); the same at every boundary.
    std::vector<std::int64_t> activation;
    // Indices of this stage's parameters that another stage also holds (a tied embedding):
    // their gradients are summed over `tied_group` before the update, and only the group's
    // rank 0 counts them in the clipping norm.
    std::vector<int> tied;
    std::shared_ptr<Communicator> tied_group;
    // Data parallelism over whole pipelines: each replica takes its rows of the global batch and
    // the gradients are averaged over `dp`.
    std::shared_ptr<Communicator> dp;
    // Tensor parallelism inside the stages: the group the stage function splits its layers
    // over, and which parameters are shards (for the clipping norm).
    std::shared_ptr<CollectiveGroup> tp;
    std::vector<bool> tp_sharded;
};

// Where a step's time went on this rank (seconds).
struct PipelineTiming {
    double compute = 0;   // running this stage's programs
    double waiting = 0;   // in receive, for a neighbour (the bubble, and the transfers)
    double reduction = 0; // summing tied and data-parallel gradients, and the update
};

class PipelineTrainer {
public:
    // Every rank of `pp` constructs its stage: rank s of pp is stage s. `inputs` are the specs of
    // one micro-batch's inputs (the leading axis its rows); `params` this stage's parameters;
    // the optimizer and options as nn::Trainer takes them (its loss is the pipeline's).
    PipelineTrainer(std::shared_ptr<Communicator> pp, StageFunction stage,
                    std::vector<nn::InputSpec> inputs, std::vector<HostArray> params,
                    std::shared_ptr<const nn::Optimizer> optimizer, nn::TrainerOptions options,
                    PipelineOptions pipeline);
    // Interleaved: chunk j's function (virtual stage j·p + rank of p·v), one per chunk;
    // `params` the chunks' parameters concatenated (PipelineOptions::chunk_params says where
    // each starts), tied indices into that list.
    PipelineTrainer(std::shared_ptr<Communicator> pp, std::vector<StageFunction> chunks,
                    std::vector<nn::InputSpec> inputs, std::vector<HostArray> params,
                    std::shared_ptr<const nn::Optimizer> optimizer, nn::TrainerOptions options,
                    PipelineOptions pipeline);

    // One update from the global batch (every input's leading axis: the replicas' rows, each
    // cut into micro_batches micro-batches); every rank returns the mean loss.
    double step(const std::vector<HostArray>& global_inputs, double lr);
    // The mean loss of a global batch (of the step's shapes) without a gradient or an update:
    // forward programs only, the micro-batches through the stages in order; every rank returns
    // it.
    double evaluate(const std::vector<HostArray>& global_inputs);
    // Seconds spent building and compiling this rank's programs so far.
    double compile_seconds() const { return compile_seconds_; }

    int stage() const { return stage_; }
    int stages() const { return stages_; }
    int chunks() const { return static_cast<int>(chunk_fns_.size()); }
    const nn::Trainer& local() const { return trainer_; }
    nn::Trainer& local() { return trainer_; }
    const PipelineTiming& last_timing() const { return timing_; }

private:
    struct Programs;
    std::shared_ptr<Programs> build(int chunk, const std::vector<HostArray>& micro_inputs);
    // Chunk `chunk`'s part of `all` (the parameters, or arrays in their order).
    std::vector<HostArray> chunk_part(const std::vector<HostArray>& all, int chunk) const;
    // Chunk `chunk`'s forward alone: the activation sent, or the loss on the last stage.
    CompiledProgram build_evaluation(int chunk, const std::vector<HostArray>& micro_inputs);
    // The global batch's micro-batches (this replica's rows), after checking it against the
    // input specs; `op` names the caller in errors.
    std::vector<std::vector<HostArray>> micro_batches(const std::vector<HostArray>& global,
                                                      const char* op) const;

    std::shared_ptr<Communicator> pp_;
    std::vector<StageFunction> chunk_fns_;
    std::vector<std::size_t> chunk_begin_; // per chunk, then the end: its parameters' range
    std::vector<nn::InputSpec> inputs_;
    PipelineOptions pipeline_;
    nn::Trainer trainer_;
    int stage_ = 0, stages_ = 1;
    std::vector<std::shared_ptr<Programs>> programs_; // per chunk
    std::vector<CompiledProgram> evaluation_;         // per chunk
    double compile_seconds_ = 0;
    PipelineTiming timing_;
};

} // namespace hedra::distributed
