/// @file io/errors.hpp
/// @brief format_error, which the file readers throw for bytes that break a format, beside the
///        exceptions of error.hpp (file_error among them).
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <string>

#include "../error.hpp"

namespace seqembed {

/// @brief A file whose bytes break its format: a safetensors or .npy file that is truncated,
///        malformed, inconsistent, or holds a dtype seqembed does not read.
///
/// The message names the file, the tensor where there is one, and the problem:
/// `seqembed: model.safetensors: tensor 'wte': shape [50257, 768] of F32 needs 154389504 bytes,
/// data_offsets [0, 154389500] hold 154389500`.
class format_error : public error {
public:
    /// @brief Builds the error from a complete message.
    /// @param message the file, the tensor and what is wrong with them.
    explicit format_error(const std::string& message) : error(message) {}
};

}  // namespace seqembed
