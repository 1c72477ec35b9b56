// Bit-for-bit comparison of matrices, for tests where NaN, -0.0 and the last bit all count.
#pragma once

#include <seqembed/types.hpp>

#include <cstddef>
#include <cstring>

/// True when the two matrices have the same shape and hold the same bytes.
template <typename Scalar>
bool bit_equal(const seqembed::RowMatrix<Scalar>& a, const seqembed::RowMatrix<Scalar>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    // memcmp must not see the null data pointer of an empty matrix.
    return a.size() == 0 || std::memcmp(a.data(), b.data(),
                                        sizeof(Scalar) * static_cast<std::size_t>(a.size())) == 0;
}
