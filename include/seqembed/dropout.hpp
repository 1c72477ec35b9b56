/// @file dropout.hpp
/// @brief Dropout: inverted dropout whose mask depends only on (seed, call, element).
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>

#include "detail/checks.hpp"
#include "detail/dropout_draws.hpp"
#include "detail/large_memory.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Inverted dropout, as torch.nn.Dropout: in training each element is zeroed with
///        probability p and kept values are multiplied by 1 / (1 - p); in evaluation it is the
///        identity.
///
/// The mask is a pure function of (seed, call number, element index), so it is the same for
/// every thread count and chunking and can be recomputed for a backward pass (mask()). Element e
/// of call c is kept when its 16-bit draw is at least round(p * 65536) (p is honoured to
/// 1/65536). The draws come from Philox4x32-10 keyed by the seed, at counter (block, c), read a
/// byte at a time: a coarse byte per element, 240 elements per 16 blocks, and a fine byte for
/// the one element in 256 whose coarse byte ties with the threshold's high byte, from a byte of
/// the block no element uses (or, for a block's further ties, from another block; the layout is
/// in detail/dropout_draws.hpp). Each training forward that
/// drops anything takes the next call number from an atomic counter, so a const forward is safe
/// from several threads. Call numbers stay below 2^63: the streams above are the seeded
/// initialisations', so masks and tables of one seed never share random bits.
/// @code
/// seqembed::Dropout dropout(0.1, /*seed=*/42);
/// dropout.set_training(true);
/// seqembed::RowMatrix<float> y = dropout.forward(x);      // call 0
/// seqembed::MaskMatrix kept = dropout.mask(0, x.rows(), x.cols());
/// @endcode
class Dropout {
public:
    /// @brief A dropout layer, in evaluation mode.
    /// @param p probability of zeroing an element, in [0, 1).
    /// @param seed key of the mask.
    /// @throws value_error for p outside [0, 1) or NaN.
    explicit Dropout(double p = 0.0, std::uint64_t seed = 0) : m_p(checked_p(p)), m_seed(seed) {}

    /// @brief Copies the configuration, the mode and the call counter.
    /// @param other the layer to copy.
    Dropout(const Dropout& other) noexcept
        : m_p(other.m_p), m_seed(other.m_seed), m_training(other.m_training),
          m_calls(other.m_calls.load()) {}
    /// @brief Copies the configuration, the mode and the call counter.
    /// @param other the layer to copy.
    /// @return this layer.
    Dropout& operator=(const Dropout& other) noexcept {
        m_p = other.m_p;
        m_seed = other.m_seed;
        m_training = other.m_training;
        m_calls.store(other.m_calls.load());
        return *this;
    }
    ~Dropout() = default;

    /// @brief Probability of zeroing an element.
    /// @return p, in [0, 1).
    double p() const noexcept { return m_p; }
    /// @brief Key of the mask.
    /// @return the seed given at construction.
    std::uint64_t seed() const noexcept { return m_seed; }
    /// @brief Whether the layer is in training mode.
    /// @return true in training mode, false in evaluation mode.
    bool is_training() const noexcept { return m_training; }
    /// @brief Switches between training (drop) and evaluation (identity).
    /// @param training the new mode.
    void set_training(bool training) noexcept { m_training = training; }
    /// @brief Whether a forward would change values.
    /// @return true in training mode with round(p * 65536) > 0.
    bool is_active() const noexcept { return m_training && threshold() != 0; }
    /// @brief The call number the next training forward will take.
    /// @return the number of training forwards so far, plus any set_calls start.
    std::uint64_t calls() const noexcept { return m_calls.load(); }
    /// @brief Sets the next call number (to resume a run).
    /// @param next the call number of the next training forward.
    void set_calls(std::uint64_t next) noexcept { m_calls.store(next); }
    /// @brief Takes a call number for one training forward (what forward does).
    /// @return the call number taken; the counter moves past it.
    std::uint64_t take_call() const noexcept { return m_calls.fetch_add(1); }

    /// @brief The factor applied to kept values.
    /// @tparam Scalar the element type.
    /// @return Scalar(1) / Scalar(1 - p), as PyTorch computes it in the tensor's type.
    template <typename Scalar>
    Scalar keep_scale() const noexcept {
        return Scalar(1) / static_cast<Scalar>(1.0 - m_p);
    }

    /// @brief The drop threshold.
    /// @return round(p * 65536): 16-bit draws below it are dropped.
    std::uint32_t threshold() const noexcept {
        return static_cast<std::uint32_t>(std::lround(m_p * 65536.0));
    }

    /// @brief Whether element `element` is kept by call `call`.
    /// @param call the call number.
    /// @param element index of the element in the row-major output.
    /// @return true if the element is kept (and scaled), false if it is zeroed.
    bool keeps(std::uint64_t call, std::uint64_t element) const noexcept {
        float factor = 0.0f;
        factors<float>(call).write(&factor, 1, element);
        return factor != 0.0f;
    }

    /// @brief The factors of call `call` (keep_scale() or 0 per element), drawn span by span:
    ///        what apply() multiplies by, for callers that fuse the multiplication into their own
    ///        pass (InputPipeline does). One object serves consecutive rows of one call.
    /// @tparam Scalar the element type.
    /// @param call the call number.
    /// @return the factors' source, with write(factors, count, first_element) and
    ///         apply(values, count, first_element).
    template <typename Scalar>
    detail::MaskFactors<Scalar> factors(std::uint64_t call) const noexcept {
        return detail::MaskFactors<Scalar>(m_seed, call, threshold(), keep_scale<Scalar>());
    }

    /// @brief Applies the mask of call `call` to count values that are elements
    ///        first_element .. first_element + count - 1 of the output, in place: each value is
    ///        multiplied by keep_scale() or by 0, as PyTorch multiplies by its scaled mask (so a
    ///        dropped NaN stays NaN and a dropped negative value becomes -0).
    /// @tparam Scalar the element type.
    /// @param values the values.
    /// @param count how many.
    /// @param call the call number.
    /// @param first_element index of values[0] in the output.
    template <typename Scalar>
    void apply(Scalar* values, Index count, std::uint64_t call, std::uint64_t first_element) const {
        factors<Scalar>(call).apply(values, count, first_element);
    }

    /// @brief The mask of call `call` over a rows x cols output.
    /// @param call the call number.
    /// @param rows rows of the output.
    /// @param cols columns of the output.
    /// @return rows x cols bytes, 1 where the element is kept, 0 where it is zeroed.
    MaskMatrix mask(std::uint64_t call, Index rows, Index cols) const {
        if (rows < 0 || cols < 0)
            detail::fail<value_error>("dropout mask of ", rows, " x ", cols, " has a negative size");
        detail::require_addressable<std::uint8_t>("dropout mask", rows, cols);
        MaskMatrix kept(rows, cols);
        // The mask is where the factors are nonzero, a row at a time.
        Eigen::Matrix<float, 1, Eigen::Dynamic> row(cols);
        detail::MaskFactors<float> draws = factors<float>(call);
        for (Index r = 0; r < rows; ++r) {
            draws.write(row.data(), cols, static_cast<std::uint64_t>(r * cols));
            kept.row(r) = (row.array() != 0.0f).cast<std::uint8_t>();
        }
        return kept;
    }

    /// @brief Applies dropout to a float matrix (see the template overload).
    /// @param x the input.
    /// @return the result, same shape.
    RowMatrix<float> forward(const Eigen::Ref<const RowMatrix<float>>& x) const {
        return forward<float>(x);
    }
    /// @brief Applies dropout to a double matrix (see the template overload).
    /// @param x the input.
    /// @return the result, same shape.
    RowMatrix<double> forward(const Eigen::Ref<const RowMatrix<double>>& x) const {
        return forward<double>(x);
    }
    /// @brief As forward, into caller memory (see the template overload).
    /// @param x the input.
    /// @param out the output, same shape as x (may be x itself).
    /// @throws shape_error if out's shape differs from x's.
    void forward_into(const Eigen::Ref<const RowMatrix<float>>& x,
                      Eigen::Ref<RowMatrix<float>> out) const {
        forward_into<float>(x, out);
    }
    /// @brief As forward, into caller memory (see the template overload).
    /// @param x the input.
    /// @param out the output, same shape as x (may be x itself).
    /// @throws shape_error if out's shape differs from x's.
    void forward_into(const Eigen::Ref<const RowMatrix<double>>& x,
                      Eigen::Ref<RowMatrix<double>> out) const {
        forward_into<double>(x, out);
    }

    /// @brief Applies dropout to x: the identity in evaluation, the next call's mask in training
    ///        (a training forward with round(p * 65536) = 0, p below 2^-17, changes nothing
    ///        and takes no call number).
    /// @tparam Scalar float or double.
    /// @param x the input.
    /// @return the result, same shape.
    template <typename Scalar>
    RowMatrix<Scalar> forward(const Eigen::Ref<const RowMatrix<Scalar>>& x) const {
        RowMatrix<Scalar> out = detail::new_output<Scalar>(x.rows(), x.cols());
        forward_into<Scalar>(x, out);
        return out;
    }

    /// @brief As forward, into caller memory (which may be x itself) without allocating.
    /// @tparam Scalar float or double.
    /// @param x the input.
    /// @param out the output, same shape as x.
    /// @throws shape_error if out's shape differs from x's.
    template <typename Scalar>
    void forward_into(const Eigen::Ref<const RowMatrix<Scalar>>& x,
                      Eigen::Ref<RowMatrix<Scalar>> out) const {
        detail::require_shape("output of Dropout::forward_into", out.rows(), out.cols(), x.rows(),
                              x.cols());
        if (out.data() != x.data()) out = x;
        if (!is_active()) return;
        // Row by row: out may be a block of a wider matrix, its rows not adjacent in memory.
        detail::MaskFactors<Scalar> draws = factors<Scalar>(take_call());
        for (Index r = 0; r < out.rows(); ++r)
            draws.apply(out.row(r).data(), out.cols(), static_cast<std::uint64_t>(r * out.cols()));
    }

private:
    static double checked_p(double p) {
        if (!(p >= 0.0 && p < 1.0))
            detail::fail<value_error>("dropout probability p = ", p, " is outside [0, 1)");
        return p;
    }

    double m_p;
    std::uint64_t m_seed;
    bool m_training = false;
    mutable std::atomic<std::uint64_t> m_calls{0};
};

}  // namespace seqembed
