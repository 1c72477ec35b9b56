/// @file dropout.hpp
/// @brief Dropout: inverted dropout whose mask depends only on (seed, call, element).
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "detail/checks.hpp"
#include "detail/engine/row_pass.hpp"
#include "detail/large_memory.hpp"
#include "detail/random/dropout_layout.hpp"
#include "detail/random/kept_bits.hpp"
#include "detail/workers.hpp"
#include "detail/stage_access.hpp"
#include "error.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Inverted dropout, as torch.nn.Dropout: in training each element is zeroed with
///        probability p and kept values are multiplied by 1 / (1 - p); in evaluation it is the
///        identity.
///
/// The mask is a pure function of (seed, call number, element index), so it is the same for
/// every thread count, chunking and ISA, and can be recomputed for a backward pass (mask()).
/// Element e of call c is kept when its 16-bit draw is at least round(p * 65536) (p is honoured
/// to 1/65536). The draws come from ARS-5 (AES rounds on a counter, Salmon et al., SC'11) keyed
/// by (seed, 0): element e's is 16-bit lane e % 8 of the block at counter (e / 8, c), drawn with
/// the CPU's AES instructions where it has them (the layout is in
/// detail/random/dropout_layout.hpp). Each training forward that drops anything takes the next
/// call number from an atomic counter, so a const forward is safe from several threads. Copies
/// share that counter: a copy (or a copied pipeline) never repeats another copy's masks. The
/// seeded initialisations draw from Philox, so masks and tables of one seed never share random
/// bits.
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
    explicit Dropout(double p = 0.0, std::uint64_t seed = 0)
        : m_p(checked_p(p)), m_seed(seed), m_calls(std::make_shared<std::atomic<std::uint64_t>>(0)) {}

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
    /// @return the number of training forwards so far (by this layer and every copy of it),
    ///         plus any set_calls start.
    std::uint64_t calls() const noexcept { return m_calls->load(); }
    /// @brief Sets the next call number (to resume a run), for this layer and its copies.
    /// @param next the call number of the next training forward.
    void set_calls(std::uint64_t next) noexcept { m_calls->store(next); }

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
    /// @throws value_error as active_isa() (a bad SEQEMBED_ISA).
    bool keeps(std::uint64_t call, std::uint64_t element) const {
        std::uint64_t word = 0;
        detail::draw_mask(key(call), element / 64, 1, &word);
        return ((word >> (element % 64)) & 1u) != 0;
    }

    /// @brief Applies the mask of call `call` to count values that are elements
    ///        first_element .. first_element + count - 1 of the output, in place: each value is
    ///        multiplied by keep_scale() or by 0, as PyTorch multiplies by its scaled mask (so a
    ///        dropped NaN stays NaN and a dropped negative value becomes -0).
    /// @tparam Scalar float or double.
    /// @param values the values.
    /// @param count how many.
    /// @param call the call number.
    /// @param first_element index of values[0] in the output.
    template <typename Scalar>
    void apply(Scalar* values, Index count, std::uint64_t call, std::uint64_t first_element) const {
        if (count <= 0) return;
        detail::RowPass<Scalar, Scalar> pass(mask_job<Scalar>(call, count, false));
        pass.add({values, values, first_element}, nullptr);
        pass.finish();
    }

    /// @brief The gradient of a training forward's input from the gradient of its output: the
    ///        output's gradient times the mask of that forward's call, scaled by keep_scale(), as
    ///        PyTorch's dropout backward multiplies by its scaled mask.
    /// @tparam Derived a float or double matrix or expression.
    /// @param grad_output the gradient of the output (rows x cols, the forward's shape; its
    ///        elements numbered row by row, as the forward's).
    /// @param call the forward's call number (calls() before it).
    /// @return the gradient of the input.
    /// @throws value_error for a call this layer has not used yet.
    template <typename Derived>
    RowMatrix<typename Derived::Scalar> backward(const Eigen::MatrixBase<Derived>& grad_output, std::uint64_t call) const {
        if (call >= calls())
            detail::fail<value_error>("dropout call ", call, " was never used: this layer's forwards have used calls below ",
                                      calls());
        RowMatrix<typename Derived::Scalar> grad = grad_output;
        apply(grad.data(), grad.size(), call, 0);
        return grad;
    }

    /// @brief The mask of call `call` over a rows x cols output.
    /// @param call the call number.
    /// @param rows rows of the output.
    /// @param cols columns of the output.
    /// @return rows x cols bytes, 1 where the element is kept, 0 where it is zeroed.
    /// @throws value_error for a negative or overflowing size.
    MaskMatrix mask(std::uint64_t call, Index rows, Index cols) const {
        if (rows < 0 || cols < 0)
            detail::fail<value_error>("dropout mask of ", rows, " x ", cols, " has a negative size");
        detail::require_addressable<std::uint8_t>("dropout mask", rows, cols);
        MaskMatrix kept(rows, cols);
        std::vector<std::uint64_t> bits;
        kept_bits(call, static_cast<std::uint64_t>(kept.size()), detail::OneThread{}, bits);
        for (Index e = 0; e < kept.size(); ++e) {
            const auto at = static_cast<std::uint64_t>(e);
            kept.data()[e] = static_cast<std::uint8_t>((bits[static_cast<std::size_t>(at / 64)] >> (at % 64)) & 1u);
        }
        return kept;
    }

    /// @brief Applies dropout to a float or double matrix or expression, its type deduced (see
    ///        the overload below).
    /// @param x the input.
    /// @return the result, same shape.
    template <typename Derived>
    RowMatrix<typename Derived::Scalar> forward(const Eigen::MatrixBase<Derived>& x) const {
        return forward<typename Derived::Scalar>(x);
    }
    /// @brief As forward, into caller memory, the type deduced (see the overload below).
    /// @param x the input.
    /// @param out the output, same shape as x (may be x itself).
    /// @throws shape_error if out's shape differs from x's.
    template <typename Derived>
    void forward_into(const Eigen::MatrixBase<Derived>& x,
                      Eigen::Ref<RowMatrix<typename Derived::Scalar>> out) const {
        forward_into<typename Derived::Scalar>(x, out);
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
        if (!is_active() || out.size() == 0) {
            if (out.data() != x.data()) out = x;
            return;
        }
        // x * 1 is x: the row kernel with a scale of 1 and no position multiplies each value by
        // its factor, row by row (out and x may be blocks of wider matrices).
        const bool streaming = detail::streams_by_default(sizeof(Scalar) * static_cast<std::size_t>(out.size()));
        detail::RowPass<Scalar, Scalar> pass(mask_job<Scalar>(take_call(), out.cols(), streaming));
        for (Index r = 0; r < out.rows(); ++r)
            pass.add({out.row(r).data(), x.row(r).data(), static_cast<std::uint64_t>(r * out.cols())}, nullptr);
        pass.finish();
    }

private:
    friend struct detail::StageAccess;

    /// The kept bits of call `call`'s mask over elements [0, count), flat (detail::kept_bits),
    /// into `kept`, the groups of spans shared between the executor's workers.
    template <typename Parallel>
    void kept_bits(std::uint64_t call, std::uint64_t count, const Parallel& parallel,
                   std::vector<std::uint64_t>& kept) const {
        detail::kept_bits(key(call), count, parallel, kept);
    }

    /// Takes a call number for one training forward; the shared counter moves past it.
    std::uint64_t take_call() const noexcept { return m_calls->fetch_add(1); }

    /// What the mask of call `call` is a function of.
    detail::DropoutKey key(std::uint64_t call) const noexcept {
        return {m_seed, call, threshold()};
    }

    /// A row-kernel job that multiplies rows of `width` values by call `call`'s factors.
    template <typename Scalar>
    detail::RowJob<Scalar> mask_job(std::uint64_t call, Index width, bool streaming) const noexcept {
        detail::RowJob<Scalar> job;
        job.width = width;
        job.scale = Scalar(1);
        job.streaming = streaming;
        job.dropping = true;
        job.key = key(call);
        job.keep_scale = keep_scale<Scalar>();
        return job;
    }

    static double checked_p(double p) {
        if (!(p >= 0.0 && p < 1.0))
            detail::fail<value_error>("dropout probability p = ", p, " is outside [0, 1)");
        return p;
    }

    double m_p;
    std::uint64_t m_seed;
    bool m_training = false;
    std::shared_ptr<std::atomic<std::uint64_t>> m_calls;  // shared by copies
};

}  // namespace seqembed
