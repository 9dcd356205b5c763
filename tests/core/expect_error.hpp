// CHECK_ERROR(expr, "word", ...): expr must throw hedra::Error whose message contains every word.
// (doctest's CHECK_THROWS_WITH_AS with doctest::Contains checks only one substring.)
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "core/error.hpp"

namespace hedra::test {

template <class F>
void check_error(F&& f, std::initializer_list<const char*> words, const char* expr) {
    try {
        f();
        FAIL_CHECK("expected hedra::Error from: " << expr);
    } catch (const hedra::Error& e) {
        std::string message = e.what();
        for (const char* w : words)
            CHECK_MESSAGE(message.find(w) != std::string::npos,
                          "'" << w << "' missing from the message of " << expr << ": " << message);
    }
}

} // namespace hedra::test

#define CHECK_ERROR(expr, ...)                                                                     \
    ::hedra::test::check_error([&] { (void)(expr); }, {__VA_ARGS__}, #expr)
