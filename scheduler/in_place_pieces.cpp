// Temporaries written straight into the box they are copied to (see in_place_pieces.hpp).
#include "scheduler/in_place_pieces.hpp"

#include <algorithm>
#include <set>

namespace hedra::sched {

namespace {

// Whether `access` is i -> i + offset over the same rank.
bool is_translation(const AffineMap& access) {
    if (access.in_rank() != access.out_rank()) return false;
    for (int r = 0; r < access.out_rank(); ++r)
        for (int d = 0; d < access.in_rank(); ++d)
            if (access.coeff(r, d) != (r == d ? 1 : 0)) return false;
    return true;
}

bool plain_statement(const poly::Statement& st) {
    return st.kind == poly::StatementKind::Assign && st.write_indirect.empty() &&
           st.tuple_writes.empty() && st.stream_stage < 0 && !poly::has_indirect(st);
}

// Buffer `b` removed, the indices after it shifted down.
void erase_buffer(poly::ProgramIR& program, int b) {
    auto shift = [b](int& x) {
        if (x > b) --x;
    };
    for (poly::Kernel& k : program.kernels)
        for (poly::Statement& st : k.statements) {
            shift(st.write_buffer);
            for (poly::Read& r : st.reads)
                shift(r.buffer);
            for (poly::Statement::TupleWrite& w : st.tuple_writes)
                shift(w.buffer);
        }
    for (int& o : program.outputs)
        shift(o);
    for (int& i : program.inputs)
        shift(i);
    program.buffers.erase(program.buffers.begin() + b);
}

// The copy at statements[c] of kernel k, if its source can be written in place; the source.
int in_place_source(const poly::ProgramIR& program, int k, std::size_t c) {
    const poly::Kernel& kernel = program.kernels[static_cast<std::size_t>(k)];
    const poly::Statement& copy = kernel.statements[c];
    if (!poly::is_copy(copy) || copy.stream_stage >= 0 || !is_translation(copy.write_access))
        return -1;
    const poly::Read& r = copy.reads[0];
    const int b = r.buffer, f = copy.write_buffer;
    if (b < 0 || b == f || !r.access.is_identity()) return -1;
    const poly::Buffer& source = program.buffers[static_cast<std::size_t>(b)];
    const poly::Buffer& target = program.buffers[static_cast<std::size_t>(f)];
    if (source.role != poly::BufferRole::Temporary || source.row_local > 0 ||
        source.row_window > 0 || target.row_window > 0 || target.row_local > 0 ||
        source.dtype != target.dtype || copy.extents != source.sizes)
        return -1;
    // A symbolic axis (a batch) is the same one in both, and not shifted.
    auto param = [](const poly::Buffer& x, std::size_t d) {
        return d < x.params.size() ? x.params[d] : -1;
    };
    for (std::size_t d = 0; d < source.sizes.size(); ++d)
        if (param(source, d) != param(target, d) ||
            (param(source, d) >= 0 && copy.write_access.offset(static_cast<int>(d)) != 0))
            return -1;
    // Every other statement of the program that touches B: a writer, reading neither B nor F,
    // all of them in one kernel (this one, before the copy, or an earlier one that holds
    // nothing else); or a reader after the copy (in this kernel or a later one), which then
    // reads F's box. Nothing writes F after the copy, so the box keeps B's values.
    int writer_kernel = -1;
    std::set<int> read_by_writers;
    for (std::size_t kk = 0; kk < program.kernels.size(); ++kk)
        for (std::size_t s = 0; s < program.kernels[kk].statements.size(); ++s) {
            if (int(kk) == k && s == c) continue;
            const poly::Statement& st = program.kernels[kk].statements[s];
            const bool after = int(kk) > k || (int(kk) == k && s > c);
            bool reads_b = false;
            for (const poly::Read& x : st.reads)
                reads_b = reads_b || x.buffer == b;
            for (const poly::Statement::TupleWrite& w : st.tuple_writes)
                if (w.buffer == b || w.buffer == f) return -1;
            if ((reads_b && !after) || (st.write_buffer == f && (after || int(kk) != k))) return -1;
            if (st.write_buffer != b) continue;
            if (after || (writer_kernel >= 0 && writer_kernel != int(kk)) || !plain_statement(st))
                return -1;
            writer_kernel = static_cast<int>(kk);
            for (const poly::Read& x : st.reads) {
                if (x.buffer == f) return -1;
                read_by_writers.insert(x.buffer);
            }
        }
    if (writer_kernel < 0) return -1;
    // What the writers move past must not write what they read: the rest of their kernel
    // (which then must hold only them), the kernels in between, this kernel before the copy
    // from the first writer on (what comes before them stays before them).
    auto writes_read = [&](const poly::Statement& st) {
        return st.write_buffer != b && read_by_writers.count(st.write_buffer) > 0;
    };
    for (int kk = writer_kernel; kk <= k; ++kk) {
        const std::vector<poly::Statement>& sts =
            program.kernels[static_cast<std::size_t>(kk)].statements;
        std::size_t first = 0;
        if (kk == k && writer_kernel == k)
            while (first < c && sts[first].write_buffer != b)
                ++first;
        for (std::size_t s = first; s < (kk == k ? c : sts.size()); ++s) {
            if (writes_read(sts[s])) return -1;
            if (kk == writer_kernel && writer_kernel != k && sts[s].write_buffer != b) return -1;
        }
    }
    return b;
}

// The copy at statements[c] of kernel k rewritten: B's writers write F in its place (moved
// from an earlier kernel of their own, which goes), B's readers read F's box, B erased.
void apply(poly::ProgramIR& program, int k, std::size_t c, int b) {
    int writer_kernel = -1;
    for (std::size_t kk = 0; kk < program.kernels.size() && writer_kernel < 0; ++kk)
        for (const poly::Statement& st : program.kernels[kk].statements)
            if (st.write_buffer == b) writer_kernel = static_cast<int>(kk);
    std::vector<poly::Statement>& sts = program.kernels[static_cast<std::size_t>(k)].statements;
    const poly::Statement copy = sts[c];
    auto retarget = [&](poly::Statement w) {
        w.write_buffer = copy.write_buffer;
        w.write_access = copy.write_access.compose(w.write_access);
        return w;
    };
    std::vector<poly::Statement> writers, rest;
    std::size_t before = 0; // statements that stay ahead of the writers
    for (std::size_t s = 0; s < sts.size(); ++s) {
        if (s == c) continue;
        if (s < c && sts[s].write_buffer == b) {
            writers.push_back(retarget(sts[s]));
        } else {
            before += s < c;
            rest.push_back(std::move(sts[s]));
        }
    }
    if (writer_kernel != k)
        for (const poly::Statement& w :
             program.kernels[static_cast<std::size_t>(writer_kernel)].statements)
            writers.push_back(retarget(w));
    sts = std::move(rest);
    sts.insert(sts.begin() + static_cast<std::ptrdiff_t>(before),
               std::make_move_iterator(writers.begin()), std::make_move_iterator(writers.end()));
    if (writer_kernel != k) program.kernels.erase(program.kernels.begin() + writer_kernel);
    for (poly::Kernel& kernel : program.kernels)
        for (poly::Statement& st : kernel.statements)
            for (poly::Read& r : st.reads)
                if (r.buffer == b) {
                    r.buffer = copy.write_buffer;
                    r.access = copy.write_access.compose(r.access);
                }
    erase_buffer(program, b);
}

} // namespace

void write_pieces_in_place(poly::ProgramIR& program) {
    if (poly::has_loops(program)) return; // a scan's loop reads what its statements do not show
    for (bool changed = true; changed;) { // kernels and statements move: look again
        changed = false;
        for (int k = 0; k < static_cast<int>(program.kernels.size()) && !changed; ++k) {
            const std::size_t n = program.kernels[static_cast<std::size_t>(k)].statements.size();
            for (std::size_t c = 0; c < n && !changed; ++c)
                if (const int b = in_place_source(program, k, c); b >= 0) {
                    apply(program, k, c, b);
                    changed = true;
                }
        }
    }
}

} // namespace hedra::sched
