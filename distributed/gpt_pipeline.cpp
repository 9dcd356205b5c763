// A GPT cut for PipelineTrainer (see gpt_pipeline.hpp).
#include "distributed/gpt_pipeline.hpp"

namespace hedra::distributed {

GptPipelineRank gpt_pipeline_rank(const nn::GptConfig& config, int rank, int ranks, int chunks,
                                  std::shared_ptr<CollectiveGroup> tp) {
    GptPipelineRank out;
    out.params = nn::gpt_pipeline_parameters(config, rank, ranks, chunks);
    const int stages = ranks * chunks;
    for (int j = 0; j < chunks; ++j) {
        const int stage = j * ranks + rank;
        out.chunk_params.push_back(nn::gpt_stage_parameters(config, stage, stages).size());
        out.stages.push_back([config, stage, stages, tp](const std::vector<Array>& params,
                                                         const Array& received,
                                                         const std::vector<Array>& in) {
            return nn::gpt_stage(config, stage, stages, params, received, in.at(0), in.at(1), tp);
        });
    }
    // Stage 0 takes wte first; the last stage (the last chunk's) takes its copy first.
    if (ranks > 1 && rank == 0) out.tied = 0;
    if (ranks > 1 && rank == ranks - 1)
        out.tied = static_cast<int>(out.params.size() - out.chunk_params.back());
    return out;
}

} // namespace hedra::distributed
