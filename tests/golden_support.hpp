// Helpers for comparing seqembed's output with the generated fixtures in reference/.
#pragma once

#include <seqembed/types.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "reference/golden_data.hpp"

namespace golden {

using seqembed_golden::Table;

/// The fixture as a matrix of Scalar (float fixtures convert exactly).
template <typename Scalar>
seqembed::RowMatrix<Scalar> matrix(const Table& table) {
    seqembed::RowMatrix<Scalar> out(table.rows, table.cols);
    for (long i = 0; i < table.rows * table.cols; ++i)
        out.data()[i] = static_cast<Scalar>(table.values[i]);
    return out;
}

/// ids stored as a long array, as a batch x seq id matrix.
inline seqembed::IdMatrix ids(const long* values, long rows, long cols) {
    seqembed::IdMatrix out(rows, cols);
    for (long i = 0; i < rows * cols; ++i) out.data()[i] = values[i];
    return out;
}

/// Distance in units in the last place between two finite values of the same type.
template <typename Scalar>
std::int64_t ulp_distance(Scalar a, Scalar b) {
    using Bits = std::conditional_t<sizeof(Scalar) == 4, std::int32_t, std::int64_t>;
    auto ordered = [](Scalar x) {
        Bits bits;
        std::memcpy(&bits, &x, sizeof bits);
        // Map the sign-magnitude encoding onto a monotonic integer line (+0 and -0 coincide).
        return bits < 0 ? static_cast<std::int64_t>(std::numeric_limits<Bits>::min()) - bits
                        : static_cast<std::int64_t>(bits);
    };
    const std::int64_t distance = ordered(a) - ordered(b);
    return distance < 0 ? -distance : distance;
}

/// The largest ulp distance between two matrices of the same shape.
template <typename Scalar>
std::int64_t max_ulp_distance(const seqembed::RowMatrix<Scalar>& a,
                              const seqembed::RowMatrix<Scalar>& b) {
    std::int64_t worst = 0;
    for (seqembed::Index i = 0; i < a.size(); ++i)
        worst = std::max(worst, ulp_distance(a.data()[i], b.data()[i]));
    return worst;
}

}  // namespace golden
