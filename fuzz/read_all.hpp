// Shared by the reader fuzz targets: reads a tensor with narrowing allowed (or integers, ids or
// a mask) and touches every value, so that a read past the data is caught; seqembed::error is an
// accepted outcome.
#pragma once

#include <seqembed/io/tensor.hpp>

namespace seqembed_fuzz {

/// read(options) returns a seqembed::io::Tensor<T> (T a float type or std::int64_t); the sum of
/// its values, or 0 if it threw a seqembed::error.
template <typename T, typename Read>
double read_all(Read&& read) {
    seqembed::io::ReadOptions options;
    options.allow_narrowing = true;
    double sum = 0;
    try {
        const seqembed::io::Tensor<T> tensor = read(options);
        for (seqembed::Index i = 0; i < tensor.size(); ++i) sum += static_cast<double>(tensor.data()[i]);
    } catch (const seqembed::error&) {
    }
    return sum;
}

/// read() returns an Eigen matrix (an IdMatrix or a MaskMatrix); the sum of its values, or 0 if
/// it threw a seqembed::error.
template <typename Read>
double read_matrix(Read&& read) {
    double sum = 0;
    try {
        const auto matrix = read();
        for (seqembed::Index i = 0; i < matrix.size(); ++i) sum += static_cast<double>(matrix.data()[i]);
    } catch (const seqembed::error&) {
    }
    return sum;
}

}  // namespace seqembed_fuzz
