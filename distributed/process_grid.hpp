// A process grid: dp × tp × pp ranks, as Megatron-LM lays them out. Tensor-parallel ranks are
// adjacent (rank = tp_rank + tp · (dp_rank + dp · pp_rank)), so the group that exchanges most
// (an all-reduce per layer) shares a node; pipeline stages are the slowest axis, so a stage's
// neighbours are on other nodes only when the model is cut there. Each axis has its own
// communicator: the ranks that differ only along it.
#pragma once

#include <memory>
#include <string>

#include "core/collective.hpp"
#include "distributed/communicator.hpp"

namespace hedra::distributed {

struct GridShape {
    int dp = 1; // data parallel: replicas, each a share of the batch
    int tp = 1; // tensor parallel: each layer's matrices split
    int pp = 1; // pipeline parallel: the layers split into stages
    int size() const { return dp * tp * pp; }
    std::string to_string() const; // "dp 2 x tp 2 x pp 1"
};

// "dp2,tp2", "tp=2,pp=2", "2x2x1" (dp × tp × pp); an axis not named is 1. Throws
// hedra::Error saying what it expected.
GridShape parse_grid(const std::string& text);

class ProcessGrid {
public:
    // Every rank of `world` calls it (it splits collectively); shape.size() must equal
    // world->size().
    ProcessGrid(std::shared_ptr<Communicator> world, GridShape shape);

    const GridShape& shape() const { return shape_; }
    int dp_rank() const { return dp_rank_; }
    int tp_rank() const { return tp_rank_; }
    int pp_rank() const { return pp_rank_; }
    const std::shared_ptr<Communicator>& world() const { return world_; }
    const std::shared_ptr<Communicator>& dp() const { return dp_; }
    const std::shared_ptr<Communicator>& tp() const { return tp_; }
    const std::shared_ptr<Communicator>& pp() const { return pp_; }
    // The tensor-parallel communicator as the group of a graph's all-reduces.
    const std::shared_ptr<CollectiveGroup>& tp_group() const { return tp_group_; }
    // The world rank of grid coordinates.
    int world_rank(int dp_rank, int tp_rank, int pp_rank) const;

private:
    GridShape shape_;
    std::shared_ptr<Communicator> world_, dp_, tp_, pp_;
    std::shared_ptr<CollectiveGroup> tp_group_;
    int dp_rank_ = 0, tp_rank_ = 0, pp_rank_ = 0;
};

} // namespace hedra::distributed
