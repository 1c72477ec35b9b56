/// @file error.hpp
/// @brief The exceptions seqembed throws: for bad input, and for files the system refuses.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <stdexcept>
#include <string>

namespace seqembed {

/// @brief Base of every exception seqembed throws for bad input.
///
/// Messages start with "seqembed:" and name the argument, its value and the limit it broke,
/// for example "seqembed: token id 40001 at (batch 3, position 17) is outside the vocabulary
/// [0, 32000)". Catch this type to handle every seqembed error at once.
class error : public std::runtime_error {
public:
    /// @brief Builds an error with a complete message (it should begin with "seqembed:").
    /// @param message what went wrong, naming the value and the limit.
    explicit error(const std::string& message) : std::runtime_error(message) {}
};

/// @brief A token id or a position outside the table it indexes.
class index_error : public error {
public:
    /// @brief Builds the error from a complete message.
    /// @param message what went wrong, naming the index and the valid range.
    explicit index_error(const std::string& message) : error(message) {}
};

/// @brief Matrices, tables or masks whose shapes do not fit together.
class shape_error : public error {
public:
    /// @brief Builds the error from a complete message.
    /// @param message the shape found and the shape expected.
    explicit shape_error(const std::string& message) : error(message) {}
};

/// @brief A configuration value out of its domain (d_model = 0, dropout p = 1, NaN, ...).
class value_error : public error {
public:
    /// @brief Builds the error from a complete message.
    /// @param message the value found and the domain expected.
    explicit value_error(const std::string& message) : error(message) {}
};

/// @brief The operating system refused a file operation: a file that cannot be opened, read,
///        written, flushed or renamed (a bad path, a full disk). The message names the file and
///        the system's reason. The weight file readers and writers (seqembed::io) and
///        Vocabulary::from_file throw it.
class file_error : public error {
public:
    /// @brief Builds the error from a complete message.
    /// @param message the file, the operation and the system's reason.
    explicit file_error(const std::string& message) : error(message) {}
};

}  // namespace seqembed

#include "detail/exceptions.hpp"  // detail::fail, which throws these
