/// @file dropout.hpp
/// @brief Dropout: inverted dropout whose mask depends only on (seed, call, element).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "detail/checks.hpp"
#include "detail/philox.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Inverted dropout, as torch.nn.Dropout: in training each element is zeroed with
///        probability p and kept values are multiplied by 1 / (1 - p); in evaluation it is the
///        identity.
///
/// The mask is a pure function of (seed, call number, element index): element e of call c is
/// kept when a 16-bit draw from Philox4x32-10, keyed by the seed at counter (e / 8, c), is at
/// least round(p * 65536). So the mask is the same for every thread count and chunking, can be
/// recomputed for a backward pass (mask()), and p is honoured to 1/65536. Each training forward
/// takes the next call number from an atomic counter, so a const forward is safe from several
/// threads.
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
    Dropout(const Dropout& other) noexcept
        : m_p(other.m_p), m_seed(other.m_seed), m_training(other.m_training),
          m_calls(other.m_calls.load()) {}
    /// @brief Copies the configuration, the mode and the call counter.
    Dropout& operator=(const Dropout& other) noexcept {
        m_p = other.m_p;
        m_seed = other.m_seed;
        m_training = other.m_training;
        m_calls.store(other.m_calls.load());
        return *this;
    }
    ~Dropout() = default;

    /// @brief Probability of zeroing an element.
    double p() const noexcept { return m_p; }
    /// @brief Key of the mask.
    std::uint64_t seed() const noexcept { return m_seed; }
    /// @brief True in training mode.
    bool is_training() const noexcept { return m_training; }
    /// @brief Switches between training (drop) and evaluation (identity).
    /// @param training the new mode.
    void set_training(bool training) noexcept { m_training = training; }
    /// @brief True when a forward would change values (training with p > 0).
    bool is_active() const noexcept { return m_training && threshold() != 0; }
    /// @brief Number of training forwards so far: the next call number.
    std::uint64_t calls() const noexcept { return m_calls.load(); }
    /// @brief Sets the next call number (to resume a run).
    /// @param next the call number of the next training forward.
    void set_calls(std::uint64_t next) noexcept { m_calls.store(next); }
    /// @brief Takes a call number for one training forward (what forward does).
    std::uint64_t take_call() const noexcept { return m_calls.fetch_add(1); }

    /// @brief The factor applied to kept values: 1 / (1 - p) in Scalar, as PyTorch computes it.
    /// @tparam Scalar the element type.
    template <typename Scalar>
    Scalar keep_scale() const noexcept {
        return Scalar(1) / static_cast<Scalar>(1.0 - m_p);
    }

    /// @brief 16-bit draws below this are dropped.
    std::uint32_t threshold() const noexcept {
        return static_cast<std::uint32_t>(std::lround(m_p * 65536.0));
    }

    /// @brief Whether element `element` is kept by call `call`.
    /// @param call the call number.
    /// @param element index of the element in the row-major output.
    bool keeps(std::uint64_t call, std::uint64_t element) const noexcept {
        const detail::PhiloxBlock bits = detail::philox_block(m_seed, call, element >> 3);
        const std::uint32_t lane = static_cast<std::uint32_t>(element & 7);
        const std::uint32_t draw = (bits[lane >> 1] >> (16 * (lane & 1))) & 0xFFFFu;
        return draw >= threshold();
    }

    /// @brief Applies the mask of call `call` to count values that are elements
    ///        first_element .. first_element + count - 1 of the output, in place.
    /// @tparam Scalar the element type.
    /// @param values the values.
    /// @param count how many.
    /// @param call the call number.
    /// @param first_element index of values[0] in the output.
    template <typename Scalar>
    void apply(Scalar* values, Index count, std::uint64_t call, std::uint64_t first_element) const {
        constexpr int batch = detail::philox_batch;
        constexpr int span = 8 * batch;  // elements covered by one batch of blocks
        const std::uint32_t limit = threshold();
        const auto scale = keep_scale<Scalar>();
        std::uint32_t words[4][batch];
        std::uint32_t draws[span];
        // Walk the elements span by span, aligned on the output's span grid so that every call
        // sees the same blocks whatever its chunk.
        Index done = 0;
        while (done < count) {
            const std::uint64_t element = first_element + static_cast<std::uint64_t>(done);
            const std::uint64_t span_start = element / span * span;
            detail::philox_blocks(m_seed, call, span_start / 8, words);
            for (int i = 0; i < batch; ++i)
                for (int lane = 0; lane < 8; ++lane)
                    draws[8 * i + lane] = (words[lane >> 1][i] >> (16 * (lane & 1))) & 0xFFFFu;
            const auto skip = static_cast<Index>(element - span_start);
            const Index take = std::min<Index>(span - skip, count - done);
            Scalar* out = values + done;
            const std::uint32_t* draw = draws + skip;
            for (Index j = 0; j < take; ++j) out[j] = draw[j] >= limit ? out[j] * scale : Scalar(0);
            done += take;
        }
    }

    /// @brief The mask of call `call` over a rows x cols output: 1 kept, 0 dropped.
    /// @param call the call number.
    /// @param rows rows of the output.
    /// @param cols columns of the output.
    MaskMatrix mask(std::uint64_t call, Index rows, Index cols) const {
        MaskMatrix kept(rows, cols);
        for (Index r = 0; r < rows; ++r)
            for (Index c = 0; c < cols; ++c)
                kept(r, c) = keeps(call, static_cast<std::uint64_t>(r * cols + c)) ? 1 : 0;
        return kept;
    }

    /// @brief Applies dropout to x: the identity in evaluation, the next call's mask in training.
    /// @tparam Scalar float or double.
    /// @param x the input.
    /// @return the result, same shape.
    template <typename Scalar>
    RowMatrix<Scalar> forward(const Eigen::Ref<const RowMatrix<Scalar>>& x) const {
        RowMatrix<Scalar> out(x.rows(), x.cols());
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
        if (is_active()) apply(out.data(), out.size(), take_call(), 0);
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
