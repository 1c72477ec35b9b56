/// @file detail/checks.hpp
/// @brief Checks of user-supplied sizes and values, shared by the components.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "../error.hpp"
#include "../types.hpp"

namespace seqembed::detail {

/// nn.Embedding's padding_idx of a table of `rows` rows: in [-rows, rows), a negative one
/// counting from the end; none stays none.
/// @throws index_error naming `what` for one outside that range.
inline std::optional<std::int64_t> normalized_padding_idx(const char* what, std::optional<std::int64_t> padding_idx,
                                                          Index rows) {
    if (!padding_idx) return std::nullopt;
    if (*padding_idx < -rows || *padding_idx >= rows)
        fail<index_error>(what, " ", *padding_idx, " is outside [", -rows, ", ", rows, ")");
    return *padding_idx < 0 ? *padding_idx + rows : *padding_idx;
}

/// Throws unless 0 < value (a count such as d_model, vocab_size, max_positions).
inline void require_positive(const char* what, Index value) {
    if (value <= 0) fail<value_error>(what, " must be positive, got ", value);
}

/// Throws unless rows x cols elements of Scalar can be addressed with Eigen::Index and bytes.
template <typename Scalar>
void require_addressable(const char* what, Index rows, Index cols) {
    const Index max_elements =
        std::numeric_limits<Index>::max() / static_cast<Index>(sizeof(Scalar));
    if (cols != 0 && rows > max_elements / cols)
        fail<value_error>(what, " of ", rows, " x ", cols, " elements overflows Eigen::Index");
}

/// Throws unless the table has the expected shape.
inline void require_shape(const char* what, Index rows, Index cols, Index expected_rows,
                          Index expected_cols) {
    if (rows != expected_rows || cols != expected_cols)
        fail<shape_error>(what, " is ", rows, " x ", cols, ", expected ", expected_rows, " x ",
                          expected_cols);
}

/// Throws naming the first non-finite element of a row-major table.
template <typename Scalar>
void require_finite(const char* what, const Scalar* data, Index rows, Index cols) {
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) {
            using std::isfinite;
            const auto value = static_cast<double>(data[r * cols + c]);
            if (!isfinite(value))
                fail<value_error>(what, " has the non-finite value ", value, " at (row ", r,
                                  ", column ", c, ")");
        }
}

/// a + b, or throws naming what overflowed.
inline std::int64_t checked_add(const char* what, std::int64_t a, std::int64_t b) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
    if ((b > 0 && a > max - b) || (b < 0 && a < min - b))
        fail<index_error>(what, " overflows: ", a, " + ", b);
    return a + b;
}

/// Throws unless id is a row of a vocab_size-row table.
inline void require_token_id(TokenId id, Index vocab_size, Index batch, Index position) {
    if (id < 0 || id >= vocab_size)
        fail<index_error>("token id ", id, " at (batch ", batch, ", position ", position,
                          ") is outside the vocabulary [0, ", vocab_size, ")");
}

}  // namespace seqembed::detail
