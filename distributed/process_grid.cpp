// The process grid (see process_grid.hpp).
#include "distributed/process_grid.hpp"

#include <cctype>
#include <sstream>

#include "core/error.hpp"
#include "distributed/collective_group.hpp"

namespace hedra::distributed {

std::string GridShape::to_string() const {
    return "dp " + std::to_string(dp) + " x tp " + std::to_string(tp) + " x pp " +
           std::to_string(pp);
}

GridShape parse_grid(const std::string& text) {
    auto fail = [&] {
        throw Error("parse_grid: '" + text +
                    "' is not a grid; write the axes as dp2,tp2,pp1 (or tp=2,pp=2, or 2x2x1 for "
                    "dp x tp x pp), each at least 1");
    };
    GridShape g;
    if (text.find('x') != std::string::npos && text.find_first_of("dtp") == std::string::npos) {
        int dims[3] = {0, 0, 0};
        char x1 = 0, x2 = 0;
        std::istringstream in(text);
        if (!(in >> dims[0] >> x1 >> dims[1] >> x2 >> dims[2]) || x1 != 'x' || x2 != 'x') fail();
        in >> std::ws;
        if (!in.eof()) fail();
        g = {dims[0], dims[1], dims[2]};
    } else {
        std::istringstream in(text);
        std::string item;
        bool any = false;
        while (std::getline(in, item, ',')) {
            if (item.size() < 3) fail();
            std::string axis = item.substr(0, 2), value = item.substr(item[2] == '=' ? 3 : 2);
            if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) fail();
            const int v = std::stoi(value);
            if (axis == "dp")
                g.dp = v;
            else if (axis == "tp")
                g.tp = v;
            else if (axis == "pp")
                g.pp = v;
            else
                fail();
            any = true;
        }
        if (!any) fail();
    }
    if (g.dp < 1 || g.tp < 1 || g.pp < 1) fail();
    return g;
}

ProcessGrid::ProcessGrid(std::shared_ptr<Communicator> world, GridShape shape)
    : shape_(shape), world_(std::move(world)) {
    if (!world_) throw Error("ProcessGrid: no communicator given");
    if (shape_.dp < 1 || shape_.tp < 1 || shape_.pp < 1 || shape_.size() != world_->size())
        throw Error("ProcessGrid: a grid of " + shape_.to_string() + " = " +
                    std::to_string(shape_.size()) + " ranks over a group of " +
                    std::to_string(world_->size()) +
                    "; choose axes whose product is the number of ranks (mpirun -np)");
    const int r = world_->rank();
    tp_rank_ = r % shape_.tp;
    dp_rank_ = (r / shape_.tp) % shape_.dp;
    pp_rank_ = r / (shape_.tp * shape_.dp);
    // Each axis: the ranks equal in the other two coordinates.
    tp_ = world_->split(dp_rank_ + shape_.dp * pp_rank_, tp_rank_);
    dp_ = world_->split(tp_rank_ + shape_.tp * pp_rank_, dp_rank_);
    pp_ = world_->split(tp_rank_ + shape_.tp * dp_rank_, pp_rank_);
    tp_group_ = collective_group(tp_, "tp");
}

int ProcessGrid::world_rank(int dp_rank, int tp_rank, int pp_rank) const {
    if (dp_rank < 0 || dp_rank >= shape_.dp || tp_rank < 0 || tp_rank >= shape_.tp || pp_rank < 0 ||
        pp_rank >= shape_.pp)
        throw Error("ProcessGrid::world_rank: coordinates (dp " + std::to_string(dp_rank) +
                    ", tp " + std::to_string(tp_rank) + ", pp " + std::to_string(pp_rank) +
                    ") are outside the grid " + shape_.to_string());
    return tp_rank + shape_.tp * (dp_rank + shape_.dp * pp_rank);
}

} // namespace hedra::distributed
