// stencil_stream: time tiling of a chain of stencil sweeps. Ten Jacobi sweeps are ten kernels,
// each a pass over the whole grid in memory (read 16 MB, write 16 MB at 2048² f32), so the
// program is bound by memory bandwidth ten times over. Consecutive kernels K_1..K_m where
// - every statement of K_t is an assignment to K_t's one buffer B_t, and writes its row
//   i0 + c (the first counter, shifted), B_t of rank >= 2, all B_t of the same sizes;
// - K_t reads B_{t-1} only at rows i0 + c + d with |d| <= kMaxStreamShift (a stencil along the
//   rows), and nothing else the chain writes;
// - B_t (t < m) is a temporary that only K_{t+1} reads;
// become one kernel that streams over the rows once: at step I of its one loop, stage t writes
// row I - t*h of B_t (h the largest |d|), after stage t-1 wrote the rows it reads. Every row of
// B_t is then read within 2h steps of being written, so B_t keeps only a window of rows
// (poly::Buffer::row_window, the power of two >= 2h + 1, stored at row mod window), which stays
// in cache: the grid is read from memory once and the result written once for all m sweeps.
// The step loop is sequential; each statement's loops over the rest of the row run inside it
// (vectorized). direct_schedule.hpp builds the schedule; the proof of legality is the
// argument above (a read of row r' + d of B_{t-1} at step r' + t h follows its write at step
// r' + d + (t-1) h <= r' + t h, earlier in the step when equal), and the kernel passes check it
// against isl's dependences.
//
// A stream runs in bands of rows, one thread per band at a time (Statement::stream_bands):
// band b writes the last stage's rows [b R, (b + 1) R), and stage t the rows of the band
// widened by (m - 1 - t) h on each side, those its later stages read, into windows of its own
// (Buffer::window_bands). The widened rows are computed by both neighbouring bands, so the
// bands stay independent (overlapped tiling); there are as many as keep that overlap within
// 1/32 of the rows (band_count), and a stream of one band is the plain one above.
#pragma once

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

inline constexpr int kMaxStreamShift = 4;
inline constexpr int kMaxStreamBands = 16;
inline constexpr std::int64_t kMinBandRows = 32;

void stream_stencils(poly::ProgramIR& program);

} // namespace hedra::sched
