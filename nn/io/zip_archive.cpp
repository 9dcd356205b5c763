// Zip members through libzip (see zip_archive.hpp), from the bytes already in memory, so that a
// missing or unreadable file has been reported by read_file_bytes and libzip's failures are all
// about the contents.
#include "nn/io/zip_archive.hpp"

#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <memory>

namespace hedra::nn {

namespace {

struct ArchiveCloser {
    void operator()(zip_t* z) const { zip_discard(z); } // read-only: nothing to write back
};
struct MemberCloser {
    void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;
using Member = std::unique_ptr<zip_file_t, MemberCloser>;

// libzip's words for an error, with its code's own message.
std::string libzip_message(zip_error_t* error) {
    return std::string("libzip: ") + zip_error_strerror(error);
}

// The archive over `bytes` (not copied: they outlive it).
Archive open_archive(std::span<const unsigned char> bytes, const FileContext& ctx) {
    if (bytes.empty()) // libzip reads no bytes as an empty archive; numpy writes none such
        ctx.fail("not a zip archive (the file is empty)");
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
    if (!source) {
        std::string message = libzip_message(&error);
        zip_error_fini(&error);
        ctx.fail("cannot read it as a zip archive (" + message + ")");
    }
    zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
    if (!archive) {
        zip_source_free(source);
        const bool not_zip = zip_error_code_zip(&error) == ZIP_ER_NOZIP;
        std::string message = libzip_message(&error);
        zip_error_fini(&error);
        ctx.fail(not_zip ? "not a zip archive (no end-of-central-directory record)"
                         : "corrupt zip archive (" + message + ")");
    }
    zip_error_fini(&error);
    return Archive(archive);
}

// The largest output a deflate stream of `compressed` bytes can have (deflate's best ratio is
// about 1032:1), so that a corrupt size in the directory cannot ask for absurd memory.
std::uint64_t inflate_bound(std::uint64_t compressed) {
    return compressed * 1032 + 1024;
}

// The contents of member `index`, described by `st`.
std::vector<unsigned char> read_member(zip_t* archive, zip_uint64_t index, const zip_stat_t& st,
                                       const std::string& member, const FileContext& ctx) {
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        ctx.fail(member + " is encrypted");
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
        ctx.fail(member + " uses compression method " + std::to_string(st.comp_method) +
                 " (only stored and deflated members are supported)");
    if (st.comp_method == ZIP_CM_STORE && st.comp_size != st.size)
        ctx.fail("stored " + member + " has two sizes");
    if (st.size > inflate_bound(st.comp_size))
        ctx.fail(member + " claims " + std::to_string(st.size) + " bytes, more than its " +
                 std::to_string(st.comp_size) + " compressed bytes can hold");
    Member file(zip_fopen_index(archive, index, 0));
    if (!file) ctx.fail(member + " cannot be opened (libzip: " + zip_strerror(archive) + ")");
    std::vector<unsigned char> out(static_cast<std::size_t>(st.size));
    std::size_t filled = 0;
    unsigned char probe = 0; // one byte past the end: a member longer than the directory says
    for (;;) {
        const bool full = filled == out.size();
        zip_int64_t got = zip_fread(file.get(), full ? &probe : out.data() + filled,
                                    full ? 1 : out.size() - filled);
        if (got < 0) {
            const bool crc = zip_error_code_zip(zip_file_get_error(file.get())) == ZIP_ER_CRC;
            ctx.fail(crc ? member + " fails its crc-32 check"
                         : member + " has corrupt data (libzip: " + zip_file_strerror(file.get()) +
                               ")");
        }
        if (got == 0) break;
        if (full)
            ctx.fail(member + " holds more than the " + std::to_string(out.size()) +
                     " bytes the archive says");
        filled += static_cast<std::size_t>(got);
    }
    if (filled != out.size())
        ctx.fail(member + " inflated to " + std::to_string(filled) +
                 " bytes, but the archive says " + std::to_string(out.size()));
    return out;
}

} // namespace

void for_each_zip_member(
    std::span<const unsigned char> archive_bytes, const FileContext& ctx,
    const std::function<void(const std::string&, std::vector<unsigned char>)>& visit) {
    Archive archive = open_archive(archive_bytes, ctx);
    const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
    if (entries < 0) ctx.fail("corrupt central directory");
    for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(entries); ++i) {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(archive.get(), i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
            ctx.fail("corrupt central directory entry " + std::to_string(i) +
                     " (libzip: " + zip_strerror(archive.get()) + ")");
        std::string name = st.name;
        if (!name.empty() && name.back() == '/') continue; // a directory entry
        visit(name, read_member(archive.get(), i, st, "member '" + name + "'", ctx));
    }
}

} // namespace hedra::nn
