// SHA-256 through OpenSSL (see hash.hpp).
#include "backends/common/hash.hpp"

#include <openssl/evp.h>

#include "core/error.hpp"

namespace hedra::backend {

std::string sha256_hex(std::string_view bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
        throw Error("OpenSSL failed to compute a SHA-256 digest");
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

} // namespace hedra::backend
