// Checkpoints of a GPT trained on a process grid that a run on another grid restores: every
// rank's nn::Trainer checkpoint (its stage's parameters, tensor-parallel shards among them, and
// their optimizer state, named as one process names them) joined into the whole model's, one
// array per parameter and state; and the part of a whole checkpoint that a rank of any grid
// restores. The trainers must name their parameters as nn::gpt_parameters() does
// (TrainerOptions::param_names); a state array is joined as its parameter is.
#pragma once

#include "distributed/process_grid.hpp"
#include "nn/gpt.hpp"
#include "nn/trainer.hpp"

namespace hedra::distributed {

// Every rank of `grid` calls it with its trainer's checkpoint; world rank 0 returns the whole
// model's (the replicas of data-parallel rank 0, the tp shards joined, every stage's
// parameters), the others an empty one. The metadata is rank 0's.
nn::TrainerCheckpoint gather_gpt_checkpoint(const nn::GptConfig& config, const ProcessGrid& grid,
                                            const nn::TrainerCheckpoint& local);

// What the rank at (tp_rank, stage) of a grid with `tp` tensor-parallel ranks and `stages`
// pipeline ranks (each running `chunks` interleaved stages) restores from a whole checkpoint:
// its stages' parameters (nn::gpt_pipeline_parameters) and their state, cut to its shard.
nn::TrainerCheckpoint shard_gpt_checkpoint(const nn::GptConfig& config,
                                           const nn::TrainerCheckpoint& whole, int tp, int tp_rank,
                                           int stages, int stage, int chunks = 1);

} // namespace hedra::distributed
