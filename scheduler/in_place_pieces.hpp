// in_place_pieces: a temporary whose only use is to be copied whole into a box of another
// buffer (a padded buffer's interior: the gradient routed back through a max pool, padded for
// the next convolution's input gradient) is written there directly. The copy is a statement
// `F[i + offset] = B[i]` over all of B; B's writers are statements of the same kernel before
// it. They then write F at the offset instead, in the copy's place (so the statements that
// write the rest of F still come first and what they wrote inside the box stays dead), and B
// is gone: no memory, no pass over it, and the writers keep their own loop nest (fused with
// the copy, the strided writes of a pooling adjoint put a parity test on every element).
// B's other readers (a convolution's weight gradient reads the same pooling adjoint) read the
// box of F instead. Applies when B is a plain temporary (not row-local or windowed; a symbolic
// axis only where F has the same one, unshifted) of F's dtype, read only after the copy, its
// writers are Assigns that read neither F nor anything the statements between them and the
// copy write, nothing writes F after the copy, and the copy is a pure translation.
#pragma once

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

void write_pieces_in_place(poly::ProgramIR& program);

} // namespace hedra::sched
