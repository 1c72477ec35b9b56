// What the example programs share on the command line: their exit codes, the error that
// reports a bad command line, reading options as --name value or --name=value, whole numbers
// within limits, and the main() that turns each kind of failure into its message and exit code.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace seqembed_examples {

// Exit codes: 0 done (or --help), 1 the library or the file system refused, 2 bad command line.
constexpr int exit_success = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

/// A command line the program cannot act on; main prints it with a pointer to --help.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Reads the options of argv, each `--name value` or `--name=value` with name one of known,
/// and hands each to set(flag, value); a later repeat wins, as set sees it last.
/// @return false when --help (or -h) was asked for, true otherwise.
/// @throws UsageError for an unknown option, a stray argument, a missing value or --help=...
template <typename Set>
bool read_options(int argc, char** argv, std::initializer_list<const char*> known, Set&& set) {
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        std::optional<std::string> value;
        if (const auto equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = flag.substr(equals + 1);
            flag.resize(equals);
        }
        if (flag == "--help" || flag == "-h") {
            if (value) throw UsageError(flag + " takes no value");
            return false;
        }
        bool is_known = false;
        for (const char* name : known) is_known = is_known || flag == name;
        if (!is_known)
            throw UsageError(flag.rfind("-", 0) == 0 ? "unknown option '" + flag + "'"
                                                     : "unexpected argument '" + flag + "'");
        if (!value) {
            if (i + 1 >= argc) throw UsageError(flag + " needs a value");
            value = argv[++i];
        }
        set(flag, *value);
    }
    return true;
}

/// The whole number text gives for flag, which must lie in [low, high].
/// @throws UsageError naming flag and text when text is not a whole number or lies outside;
///         without an upper limit (high the type's maximum) the message names only the lower.
inline std::uint64_t parse_count(const std::string& flag, const std::string& text, std::uint64_t low = 1,
                                 std::uint64_t high = std::numeric_limits<std::uint64_t>::max()) {
    constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t value = 0;
    const char* const first = text.data();
    const char* const last = first + text.size();
    const auto [end, status] = std::from_chars(first, last, value);
    if (status == std::errc::result_out_of_range)
        throw UsageError(flag + " " + text + " is far too large" +
                         (high == unlimited ? std::string() : " (at most " + std::to_string(high) + ")"));
    if (text.empty() || status != std::errc() || end != last)
        throw UsageError(flag + " expects a positive whole number, got '" + text + "'");
    if (high == unlimited && value < low)
        throw UsageError(flag + " must be at least " + std::to_string(low) + ", got " + text);
    if (value < low || value > high)
        throw UsageError(flag + " must be in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " +
                         text);
    return value;
}

/// The body of an example's main(): settings from parse() (nothing for --help, which prints
/// usage to stdout), then run(settings). A UsageError exits with exit_usage and a pointer to
/// --help; an exception from run (a seqembed error, a file that cannot be written, a lack of
/// memory) exits with exit_failure, its message on stderr after the program's name.
template <typename Parse, typename Run, typename Usage>
int run_main(const char* program, Parse&& parse, Run&& run, Usage&& usage) {
    decltype(parse()) settings;
    try {
        settings = parse();
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program, e.what(), program);
        return exit_usage;
    }
    if (!settings) {
        usage(stdout);
        return exit_success;
    }
    try {
        return run(*settings);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: out of memory\n", program);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", program, e.what());
    }
    return exit_failure;
}

}  // namespace seqembed_examples
