// A GPT cut for PipelineTrainer: what one pipeline rank of a grid runs and holds, its chunks'
// stage functions (nn::gpt_stage of stages rank, rank + ranks, ... of ranks · chunks), how many
// parameters each takes, which of them it takes from the whole list, and where the copy of the
// token embedding that the first and the last stage share sits among them.
#pragma once

#include <memory>
#include <vector>

#include "core/collective.hpp"
#include "distributed/pipeline_parallel.hpp"
#include "nn/gpt.hpp"

namespace hedra::distributed {

struct GptPipelineRank {
    std::vector<StageFunction> stages;     // per chunk (PipelineTrainer's functions)
    std::vector<std::size_t> chunk_params; // per chunk (PipelineOptions::chunk_params)
    std::vector<std::size_t> params;       // into nn::gpt_parameters(config, tp), in order
    int tied = -1; // index in `params` of the token embedding on the first or the last rank
};

// Pipeline rank `rank` of `ranks` with `chunks` interleaved stages each; `tp` splits the stages'
// layers (nn::gpt_stage). The stage functions read tokens and targets as the inputs 0 and 1.
GptPipelineRank gpt_pipeline_rank(const nn::GptConfig& config, int rank, int ranks, int chunks = 1,
                                  std::shared_ptr<CollectiveGroup> tp = nullptr);

} // namespace hedra::distributed
