/// @file detail/exceptions.hpp
/// @brief How seqembed raises its errors, with C++ exceptions or without them.
///
/// With exceptions (the default) every error is a seqembed::error thrown by fail(). Built with
/// -fno-exceptions, or with SEQEMBED_NOEXCEPTION defined, fail() writes the same message to
/// stderr and calls std::abort(): an error still names what and where, and nothing runs on with
/// a wrong answer. The few places that contain an exception (a thread that cannot be started,
/// an allocation that fails, a file written half-way) go through the helpers here, so that no
/// other header spells try or catch.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <new>
#include <exception>
#include <sstream>
#include <string>

#if (defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)) && \
    !defined(SEQEMBED_NOEXCEPTION)
#define SEQEMBED_DETAIL_EXCEPTIONS 1
#else
#define SEQEMBED_DETAIL_EXCEPTIONS 0
#endif

namespace seqembed::detail {

/// Whether this build reports errors by throwing (true) or by aborting with the message.
inline constexpr bool errors_throw = SEQEMBED_DETAIL_EXCEPTIONS != 0;

/// Raises Error with "seqembed: " followed by the streamed parts: throws it, or without
/// exceptions writes the message and a newline to stderr and aborts.
template <typename Error, typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
    std::ostringstream message;
    message << "seqembed: ";
    (message << ... << parts);
#if SEQEMBED_DETAIL_EXCEPTIONS
    throw Error(message.str());
#else
    const std::string text = message.str() + "\n";
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    std::abort();
#endif
}

/// Runs work(); a std::bad_alloc from it becomes Error "seqembed: <parts>". Without exceptions
/// the allocator aborts before this could see it.
template <typename Error, typename Work, typename... Parts>
void run_or_fail_on_bad_alloc(Work&& work, const Parts&... parts) {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        work();
    } catch (const std::bad_alloc&) {
        fail<Error>(parts...);
    }
#else
    ((void)parts, ...);
    work();
#endif
}

/// Returns work(); a Caught from it becomes Error "seqembed: <parts><its message>" (its own
/// "seqembed: " dropped), for errors that must name where a bad value came from. Without
/// exceptions work() aborts with its own message.
template <typename Error, typename Caught, typename Work, typename... Parts>
decltype(auto) run_renaming_error(Work&& work, const Parts&... parts) {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        return work();
    } catch (const Caught& caught) {
        const std::string message = caught.what();
        const std::string prefix = "seqembed: ";
        fail<Error>(parts..., message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message);
    }
#else
    ((void)parts, ...);
    return work();
#endif
}

/// Runs attempt() and says whether it finished: false if it threw anything (which is dropped).
/// Without exceptions a failure aborts inside attempt(), so it always finishes.
template <typename Attempt>
bool attempt_succeeds(Attempt&& attempt) noexcept {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        attempt();
        return true;
    } catch (...) {
        return false;
    }
#else
    attempt();
    return true;
#endif
}

/// Runs attempt() and gives what it threw (null when it finished), to rethrow elsewhere: on
/// another thread, or after others' work. Without exceptions a failure aborts inside attempt().
template <typename Attempt>
std::exception_ptr attempt_capturing(Attempt&& attempt) noexcept {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        attempt();
        return nullptr;
    } catch (...) {
        return std::current_exception();
    }
#else
    attempt();
    return nullptr;
#endif
}

/// Runs work(); if it throws, runs clean_up() and rethrows. Without exceptions a failure aborts
/// inside work(), and clean_up() does not run.
template <typename Work, typename CleanUp>
void run_cleaning_up_on_error(Work&& work, CleanUp&& clean_up) {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        work();
    } catch (...) {
        clean_up();
        throw;
    }
#else
    (void)clean_up;
    work();
#endif
}

/// Which of seqembed's errors a failure was, to raise the same kind elsewhere (on another
/// process, after its ranks agreed that one failed).
enum class FailureKind : int { none, index, shape, value, file, error, out_of_memory, other };

/// What an attempt threw, by kind, with its message.
struct Failure {
    FailureKind kind = FailureKind::none;
    std::string message;
};

/// Runs attempt() and says what it threw, if anything: one of seqembed's errors, an allocation
/// that failed, or another std::exception (anything else is rethrown). Without exceptions a
/// failure aborts inside attempt(), so the kind is always none.
template <typename Attempt, typename IndexError, typename ShapeError, typename ValueError, typename FileError,
          typename Error>
Failure attempt_describing(Attempt&& attempt) {
#if SEQEMBED_DETAIL_EXCEPTIONS
    try {
        attempt();
        return {};
    } catch (const IndexError& caught) {
        return {FailureKind::index, caught.what()};
    } catch (const ShapeError& caught) {
        return {FailureKind::shape, caught.what()};
    } catch (const ValueError& caught) {
        return {FailureKind::value, caught.what()};
    } catch (const FileError& caught) {
        return {FailureKind::file, caught.what()};
    } catch (const Error& caught) {
        return {FailureKind::error, caught.what()};
    } catch (const std::bad_alloc&) {
        return {FailureKind::out_of_memory, "out of memory"};
    } catch (const std::exception& caught) {
        return {FailureKind::other, caught.what()};
    }
#else
    attempt();
    return {};
#endif
}

}  // namespace seqembed::detail

#undef SEQEMBED_DETAIL_EXCEPTIONS
