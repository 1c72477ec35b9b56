/// @file rotary.hpp
/// @brief RotaryEmbedding: rotary position embedding (RoPE), the rotation of query and key pairs
///        by position x frequency that Llama, Mistral, Qwen, Gemma, Phi, GPT-NeoX and GPT-J apply
///        in attention, with every frequency rule of Hugging Face's modeling_rope_utils.py.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/checks.hpp"
#include "detail/engine/exact_sincos.hpp"
#include "detail/engine/kernels.hpp"
#include "detail/row_table.hpp"
#include "detail/rotary/frequencies.hpp"
#include "detail/rotary/storage.hpp"
#include "error.hpp"
#include "padding.hpp"
#include "batch.hpp"
#include "table_options.hpp"
#include "types.hpp"

namespace seqembed {

/// @brief Which dimensions of a head form the pairs that rotate together.
enum class RotaryLayout {
    /// Pair i is (x[i], x[i + rotary_dim/2]): Hugging Face's `rotate_half` (Llama, Mistral, Qwen,
    /// Gemma, Phi, GPT-NeoX in transformers), llama.cpp's NEOX mode.
    halves,
    /// Pair i is (x[2i], x[2i + 1]): Meta's original Llama code (a complex multiply), GPT-J's
    /// `rotate_every_two`, llama.cpp's NORM mode.
    interleaved
};

/// @brief The frequency rule: Hugging Face's `rope_type` (`rope_scaling["rope_type"]`).
enum class RotaryScaling {
    none,     ///< "default": base^(-2i/d).
    linear,   ///< "linear": the default divided by factor (position interpolation).
    dynamic,  ///< "dynamic": NTK-aware, a larger base for sequences past the trained length.
    yarn,     ///< "yarn": interpolation blended by a ramp over the dimensions, and an attention factor.
    llama3,   ///< "llama3": Llama 3.1's blend by wavelength (low_freq_factor, high_freq_factor).
    longrope  ///< "longrope": a factor per frequency (Phi-3), short or long, and an attention factor.
};

/// @brief The configuration of a RotaryEmbedding. Start from a preset and change what differs,
///        or read a model's config.json with seqembed::io::read_rotary_config.
///
/// The fields are Hugging Face's config keys under their own names where there is one.
/// @code
/// auto options = seqembed::RotaryOptions::llama3_1_8b();
/// options.max_positions = 32768;                        // rows precomputed
/// seqembed::RotaryEmbedding<float> rope(options);
/// @endcode
struct RotaryOptions {
    /// @brief Width of one attention head (config `head_dim`, or hidden_size / num_attention_heads);
    ///        even.
    Index head_dim = 128;
    /// @brief The rotated share of a head (GPT-NeoX `rotary_pct`, Phi `partial_rotary_factor`):
    ///        rotary_dim = int(head_dim * partial_rotary_factor), in (0, 1].
    double partial_rotary_factor = 1.0;
    /// @brief The rotated dimensions directly (GPT-J's `rotary_dim`); 0 derives it from
    ///        partial_rotary_factor. Even, at most head_dim. Dimensions past it are not touched.
    Index rotary_dim = 0;
    /// @brief theta (`rope_theta`): frequency i is base^(-2i / rotary_dim) before scaling; > 1.
    double base = 10000.0;
    /// @brief Which dimensions pair up.
    RotaryLayout layout = RotaryLayout::halves;
    /// @brief The frequency rule.
    RotaryScaling scaling = RotaryScaling::none;
    /// @brief `factor` of every scaling rule (>= 1); must stay 1 with RotaryScaling::none.
    double factor = 1.0;
    /// @brief The context the model was trained with: `original_max_position_embeddings` (llama3,
    ///        yarn, longrope) or, for dynamic, `max_position_embeddings`. Required by dynamic,
    ///        yarn, llama3 and longrope.
    Index original_max_position_embeddings = 0;
    /// @brief llama3: wavelengths above original / low_freq_factor are divided by factor.
    double low_freq_factor = 1.0;
    /// @brief llama3: wavelengths below original / high_freq_factor are kept (>= low_freq_factor).
    double high_freq_factor = 4.0;
    /// @brief yarn: `beta_fast` (32 in the paper), the rotations where extrapolation ends.
    double beta_fast = 32.0;
    /// @brief yarn: `beta_slow` (1 in the paper), the rotations where interpolation starts.
    double beta_slow = 1.0;
    /// @brief yarn: `mscale` (DeepSeek); with mscale_all_dim (both nonzero) the attention factor is
    ///        get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim). 0: unset.
    double mscale = 0.0;
    /// @brief yarn: `mscale_all_dim` (DeepSeek). 0: unset.
    double mscale_all_dim = 0.0;
    /// @brief yarn: `truncate` (default true): the correction range floored and ceiled to whole
    ///        dimensions (gpt-oss sets it false).
    bool truncate = true;
    /// @brief yarn and longrope: `attention_factor`, the factor on cos and sin; unset computes
    ///        it as Hugging Face does (YaRN's 0.1 ln(factor) + 1, LongRoPE's
    ///        sqrt(1 + ln(factor) / ln(original_max_position_embeddings))).
    std::optional<double> attention_factor;
    /// @brief longrope: `short_factor`, rotary_dim/2 values, used up to
    ///        original_max_position_embeddings.
    std::vector<double> short_factor;
    /// @brief longrope: `long_factor`, rotary_dim/2 values, used for calls (or a fixed
    ///        sequence_length) past original_max_position_embeddings.
    std::vector<double> long_factor;
    /// @brief The frequencies themselves, rotary_dim/2 float32 values, instead of base and the
    ///        rule (scaling none): ESM-2's inv_freq buffer as its checkpoints store it (rounded
    ///        through float16 in training, so that base^(-2i/d) recomputed differs). Both
    ///        precisions take them as given: exact multiplies the position by each value exactly,
    ///        follow_scalar rounds the product to float32, as torch does. Empty: from base.
    std::vector<float> inverse_frequencies;
    /// @brief Multimodal RoPE (Qwen2-VL's M-RoPE, `mrope_section`): how many of the rotary_dim/2
    ///        frequencies take each of a token's three position ids (temporal, height, width),
    ///        which RotaryEmbedding::apply_multimodal rotates by. All zero (the default): none.
    ///        Otherwise non-negative, and in blocks summing to rotary_dim/2.
    std::array<Index, 3> mrope_section{};
    /// @brief How mrope_section assigns the frequencies. False (Qwen2-VL, Qwen2.5-VL): in blocks,
    ///        the first mrope_section[0] temporal, the next mrope_section[1] height, the rest
    ///        width. True (Qwen3-VL's apply_interleaved_mrope): frequency i takes height when
    ///        i % 3 == 1 and i < 3 mrope_section[1], width when i % 3 == 2 and i < 3
    ///        mrope_section[2], temporal otherwise.
    bool mrope_interleaved = false;
    /// @brief dynamic and longrope: which sequence length the frequencies are for.
    ///
    /// 0 (the default, and what io::read_rotary_config gives): per call, as Hugging Face's
    /// forward: each apply() takes its frequencies from its own largest position + 1 (`seq_len =
    /// max(position_ids) + 1`). longrope: the long factors once that passes
    /// original_max_position_embeddings, the short ones otherwise (both tables built at
    /// construction). dynamic: the default frequencies up to original_max_position_embeddings,
    /// and past it the NTK base for that length, the call's rows computed for it.
    ///
    /// Hugging Face's dynamic module also keeps state between calls: it recomputes inv_freq
    /// only when a call grows past the longest length seen so far and goes back to the default
    /// only for a call shorter than the original length, so a call between the two reuses an
    /// earlier, longer call's frequencies (and newer transformers versions, which record the
    /// length under another attribute, keep the grown frequencies even for short calls after a
    /// long one). seqembed is stateless: every call by its own length, whatever came before; it
    /// equals Hugging Face's output for each call made on a fresh module, and for calls whose
    /// lengths never decrease.
    ///
    /// Nonzero: a fixed length for every call, the frequencies chosen when the object is built:
    /// dynamic uses max(sequence_length, original_max_position_embeddings); longrope takes
    /// long_factor when sequence_length > original_max_position_embeddings.
    Index sequence_length = 0;
    /// @brief Rows of the precomputed table (positions 0 .. max_positions - 1).
    Index max_positions = 4096;
    /// @brief exact (cos and sin of the exact angle, correctly rounded) or follow_scalar
    ///        (Hugging Face's float32 steps up to the angle, then its correctly rounded float32
    ///        cos and sin, whatever type the table stores).
    TablePrecision precision = TablePrecision::exact;
    /// @brief Positions past the table: an error, or rows computed on the fly.
    BeyondTable beyond = BeyondTable::throw_error;

    /// @brief Hugging Face's "default" RoPE: halves, no scaling.
    /// @param head_dim width of a head (even).
    /// @param base theta.
    /// @return the options, with max_positions 4096.
    static RotaryOptions hugging_face(Index head_dim = 128, double base = 10000.0) {
        RotaryOptions options;
        options.head_dim = head_dim;
        options.base = base;
        return options;
    }
    /// @brief Llama 2 7B (and 13B, 70B): head_dim 128, theta 10000, 4096 positions.
    /// @return the options (halves, as the transformers checkpoints store the weights; Meta's
    ///         original consolidated checkpoints need layout = RotaryLayout::interleaved).
    static RotaryOptions llama2_7b() {
        RotaryOptions options = hugging_face(128, 10000.0);
        options.max_positions = 4096;
        return options;
    }
    /// @brief Llama 3 8B: head_dim 128, theta 500000, 8192 positions, no scaling.
    /// @return the options.
    static RotaryOptions llama3_8b() {
        RotaryOptions options = hugging_face(128, 500000.0);
        options.max_positions = 8192;
        return options;
    }
    /// @brief Llama 3.1 8B (and 3.1 70B, 405B): theta 500000 with the llama3 rule (factor 8,
    ///        low_freq_factor 1, high_freq_factor 4, original 8192), 131072 positions.
    /// @return the options (the table: 131072 x 128 values, 64 MiB in float).
    static RotaryOptions llama3_1_8b() {
        RotaryOptions options = hugging_face(128, 500000.0);
        options.scaling = RotaryScaling::llama3;
        options.factor = 8.0;
        options.low_freq_factor = 1.0;
        options.high_freq_factor = 4.0;
        options.original_max_position_embeddings = 8192;
        options.max_positions = 131072;
        return options;
    }
    /// @brief Mistral 7B v0.2/v0.3 and Qwen2-7B style: head_dim 128, theta 1e6, 32768 positions.
    /// @return the options.
    static RotaryOptions theta_1e6() {
        RotaryOptions options = hugging_face(128, 1000000.0);
        options.max_positions = 32768;
        return options;
    }
    /// @brief GPT-NeoX and Pythia: halves over the first rotary_pct of each head, theta 10000,
    ///        2048 positions.
    /// @param head_dim width of a head (GPT-NeoX-20B: 96; Pythia 6.9B: 128).
    /// @param rotary_pct the rotated share (`rotary_pct`, 0.25).
    /// @return the options.
    static RotaryOptions gpt_neox(Index head_dim = 96, double rotary_pct = 0.25) {
        RotaryOptions options = hugging_face(head_dim, 10000.0);
        options.partial_rotary_factor = rotary_pct;
        options.max_positions = 2048;
        return options;
    }
    /// @brief GPT-J 6B: interleaved pairs over the first 64 of 256 dimensions, theta 10000,
    ///        2048 positions.
    /// @return the options.
    static RotaryOptions gptj_6b() {
        RotaryOptions options = hugging_face(256, 10000.0);
        options.rotary_dim = 64;
        options.layout = RotaryLayout::interleaved;
        options.max_positions = 2048;
        return options;
    }
    /// @brief Phi-2: halves over 32 of 80 dimensions (partial_rotary_factor 0.4), theta 10000,
    ///        2048 positions.
    /// @return the options.
    static RotaryOptions phi2() {
        RotaryOptions options = hugging_face(80, 10000.0);
        options.partial_rotary_factor = 0.4;
        options.max_positions = 2048;
        return options;
    }
};

/// @brief Rotary position embedding: cos and sin tables for max_positions positions, and the
///        rotation of Q and K by them, in place.
///
/// Each table row holds, for one position p, cos(p f_i) and sin(p f_i) (times the rule's
/// attention scaling) for the rotary_dim/2 frequencies f_i of the options' rule. Hugging Face
/// duplicates them to head_dim; they are stored once here.
///
/// Precision. TablePrecision::exact: f_i is the rule's real-valued frequency evaluated in long
/// double, the angle p f_i is carried in double-double and its cos and sin (times the real
/// attention factor) rounded once to the stored type. A float table is the correctly rounded
/// value (bar one within about 1e-16 of a rounding boundary) at positions far beyond any context
/// (the angle's error, about p f 2^-64, is 2^-34 at 2^30), and within half an ulp plus that
/// error up to 2^53; tests/test_rotary.cpp finds every fixture value (positions to
/// 999999, every rule) equal to mpmath's, where Hugging Face's float32 formula is 3.7e-3 off at
/// position 131071 and 3.7e-2 at 999999 for Llama 3's theta 500000. A double table is within
/// 4 ulp + k p f s 2^-64 of the exact value (s the attention factor; k = 2 for most rules, 32
/// for YaRN with truncate = false, 2^12 for LongRoPE, whose factor lists are doubles): below
/// 5.4e-14 at position 999999 on x86-64 (long double is IEEE quad on AArch64 Linux, tighter).
/// TablePrecision::follow_scalar: Hugging Face's float32 steps up to the angle (inv_freq as
/// modeling_rope_utils.py computes it, with correctly rounded float32 powers, and the rounded
/// float32 angle position x inv_freq), then the correctly rounded float32 cos and sin of that
/// angle, times the attention scaling in float32: the same bits on every platform and ISA, and
/// the same rounding errors as the framework's table up to the last step. PyTorch's own CPU cos
/// and sin (glibc's cosf and sinf in its scalar kernels, SLEEF's in its vector ones) are not
/// correctly rounded: they differ from these values by one ulp in about 1% (glibc) to 4-6%
/// (SLEEF) of a Llama table's values (docs/precision.md). Tables stored as bfloat16 or half are
/// rounded once from the float values (to nearest even); a double table in follow mode holds the
/// float32 values.
///
/// Frequencies per call. Dynamic NTK and LongRoPE choose their frequencies, in Hugging Face's
/// forward, from the largest position of each call (RotaryOptions::sequence_length 0, the
/// default): every apply() does the same, from the largest position of its own positions (for
/// the batch overload, those positions_of gives), stateless (RotaryOptions::sequence_length
/// says how that differs from Hugging Face's dynamic module). LongRoPE's short and long tables
/// are both built at construction; dynamic NTK's table holds the default frequencies, for calls
/// within original_max_position_embeddings, and a longer call computes its rows for its own
/// length. The table views (cos_table, rows) show the stored tables; forward_into gives the rows
/// of any call.
///
/// Applying. apply() rotates Q (tokens x q_heads*head_dim) and K (tokens x k_heads*head_dim)
/// in place by each token's position: Hugging Face's `q * cos + rotate_half(q) * sin` in the
/// activations' arithmetic, every product rounded before the sum (no FMA), so that float
/// activations give Hugging Face's float32 formula's output on the same table bit for bit. bfloat16
/// activations are widened to float and rotated in float with the table in float, as
/// x1 c + x2 (-s) and x2 c + x1 s with the sine's product rounded and the cosine's fused into the
/// sum, then rounded once to bfloat16: one rounding fewer than Hugging Face's float32 formula on
/// the upcast values, and far more accurate than its bfloat16 arithmetic (which rounds the table,
/// each product and the sum to bfloat16).
/// @tparam Scalar the table's stored type: float, double, Eigen::bfloat16 or Eigen::half.
/// @code
/// seqembed::RotaryEmbedding<float> rope(seqembed::RotaryOptions::llama3_1_8b());
/// // q: tokens x (32 * 128), k: tokens x (8 * 128), row-major; one position per token.
/// rope.apply(q, k, /*q_heads=*/32, /*k_heads=*/8, positions);
/// // A padded batch (batch x seq ids), decoding step offsets per sequence:
/// rope.apply(q, k, 32, 8, ids, seqembed::Padding::from_mask(attention_mask), seqembed::StepOffsets(decoded));
/// @endcode
template <typename Scalar = float>
class RotaryEmbedding {
    static_assert(detail::rotary::is_table_type<Scalar>,
                  "RotaryEmbedding<Scalar>: Scalar must be float, double, Eigen::bfloat16 or Eigen::half");

public:
    /// @brief The options type.
    using Options = RotaryOptions;
    /// @brief One position per token (rows of Q and K).
    using PositionVector = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;
    /// @brief Three position ids per token (temporal, height, width: rows), one column per token.
    using MultimodalPositions = Eigen::Matrix<std::int64_t, 3, Eigen::Dynamic, Eigen::RowMajor>;
    /// @brief A read-only view of table rows: count x rotary_dim/2, row-major, its rows
    ///        rotary_dim values apart (cos and sin of a position are stored side by side).
    using TableView = Eigen::Map<const RowMatrix<Scalar>, Eigen::Unaligned, Eigen::OuterStride<>>;
    /// @brief The cos and sin views of the same rows.
    struct Rows {
        TableView cos;  ///< count x rotary_dim/2 cosines.
        TableView sin;  ///< count x rotary_dim/2 sines.
    };

    /// @brief Computes the frequencies and the tables.
    /// @param options the rule, its parameters, the layout, precision and table length.
    /// @throws value_error naming the option for: head_dim odd or <= 0; rotary_dim odd, <= 0 or
    ///         past head_dim, or disagreeing with partial_rotary_factor; partial_rotary_factor
    ///         outside (0, 1]; base <= 1; factor < 1 (or != 1 without scaling); a missing
    ///         original_max_position_embeddings; llama3 factors not 0 < low < high; yarn betas
    ///         <= 0; an attention_factor <= 0 or given to a rule without one; longrope lists
    ///         whose lengths differ from rotary_dim/2 or that hold a value <= 0; dynamic with
    ///         rotary_dim 2; a negative sequence_length; any NaN or infinity; max_positions <= 0
    ///         or a table too large for memory.
    explicit RotaryEmbedding(const RotaryOptions& options)
        : m_options(checked(options)),
          m_pairs(m_options.rotary_dim / 2),
          m_per_call(chooses_per_call(m_options)),
          m_table("rotary table", stored_rows(m_options), m_options.rotary_dim) {
        detail::run_or_fail_on_bad_alloc<value_error>([&] { plan_frequencies(); }, "rotary frequencies of ",
                                                      m_options.rotary_dim, " dimensions do not fit in memory");
        auto table = m_table.writable();
        for (Index p = 0; p < m_table.rows(); ++p) compute_row(*m_base, p, table.row(p).data());
        if (m_long) m_long_table.emplace(build_table(*this, *m_long, m_options.max_positions));
    }

    /// @brief The configuration, with rotary_dim filled in.
    /// @return the options given to the constructor (rotary_dim derived when it was 0).
    const RotaryOptions& options() const noexcept { return m_options; }
    /// @brief Width of a head.
    /// @return options().head_dim.
    Index head_dim() const noexcept { return m_options.head_dim; }
    /// @brief The rotated dimensions of a head (the first rotary_dim; the rest pass unchanged).
    /// @return an even number in [2, head_dim].
    Index rotary_dim() const noexcept { return m_options.rotary_dim; }
    /// @brief Frequencies (pairs) per head.
    /// @return rotary_dim() / 2: the columns of cos_table() and sin_table().
    Index pairs() const noexcept { return m_pairs; }
    /// @brief The positions apply() takes under BeyondTable::throw_error.
    /// @return options().max_positions: positions 0 .. max_positions() - 1.
    Index max_positions() const noexcept { return m_options.max_positions; }
    /// @brief Whether the frequencies depend on the call: dynamic NTK and LongRoPE with
    ///        sequence_length 0 (the default), which choose them from each call's largest
    ///        position as Hugging Face's forward does.
    /// @return true for those rules with sequence_length 0; false for every other rule and for
    ///         a fixed sequence_length.
    bool per_call() const noexcept { return m_per_call; }
    /// @brief The factor on cos and sin (YaRN's and LongRoPE's attention factor; 1 otherwise), as
    ///        Hugging Face computes it (a Python float). LongRoPE's is the same for short and long
    ///        calls (computed from its factor: config.json's, or max_position_embeddings /
    ///        original_max_position_embeddings).
    /// @return the factor, > 0.
    double attention_scaling() const noexcept { return m_attention_scaling; }
    /// @brief Hugging Face's `inv_freq` of the stored table, float32 as its torch ops compute it
    ///        (what follow mode uses): in per-call mode those of calls within
    ///        original_max_position_embeddings (dynamic: the default rule's; longrope: the short
    ///        factors').
    /// @return pairs() values.
    const std::vector<float>& inverse_frequencies() const noexcept { return m_base->inv_freq; }
    /// @brief Hugging Face's `inv_freq` for a call whose largest position is call_length - 1
    ///        (in fixed mode and for rules without per-call frequencies, inverse_frequencies()).
    /// @param call_length the call's largest position + 1 (Hugging Face's seq_len), >= 0.
    /// @return pairs() values (a copy).
    /// @throws value_error for a negative call_length.
    std::vector<float> inverse_frequencies(std::int64_t call_length) const {
        return frequencies_of_call(checked_call_length(call_length))->inv_freq;
    }
    /// @brief The rule's real-valued frequencies of the stored table (what exact mode uses),
    ///        rounded to double.
    /// @return pairs() values.
    const std::vector<double>& frequencies() const noexcept { return m_base->frequency; }
    /// @brief The real-valued frequencies for a call whose largest position is call_length - 1.
    /// @param call_length the call's largest position + 1, >= 0.
    /// @return pairs() values (a copy).
    /// @throws value_error for a negative call_length.
    std::vector<double> frequencies(std::int64_t call_length) const {
        return frequencies_of_call(checked_call_length(call_length))->frequency;
    }

    /// @brief The sequence length a call of these positions has: its largest position + 1
    ///        (Hugging Face's `seq_len = max(position_ids) + 1`), negative (padded) positions left
    ///        out. Dynamic NTK and LongRoPE in per-call mode choose their frequencies from it.
    /// @param positions one per token (-1 for padding, as positions_of gives them).
    /// @return max + 1, or 0 when no position is >= 0.
    static std::int64_t call_length(const Eigen::Ref<const PositionVector>& positions) noexcept {
        std::int64_t largest = -1;
        for (Index r = 0; r < positions.size(); ++r) largest = std::max(largest, positions[r]);
        return largest + 1;
    }

    /// @brief The stored table's cosines, row p for position p. In fixed mode, and for rules
    ///        without per-call frequencies, all max_positions rows; in per-call mode the table of
    ///        calls within original_max_position_embeddings (dynamic: the default frequencies;
    ///        longrope: the short factors), min(max_positions, original_max_position_embeddings)
    ///        rows, as no such call reaches further. Rows of longer calls: rows(first, count,
    ///        call_length) or forward_into(first, cos, sin, call_length).
    /// @return a view (no copy), valid while this object lives.
    TableView cos_table() const noexcept { return view_of(m_table, 0, m_table.rows(), 0, m_pairs); }
    /// @brief The stored table's sines (see cos_table()).
    /// @return a view (no copy), valid while this object lives.
    TableView sin_table() const noexcept { return view_of(m_table, 0, m_table.rows(), m_pairs, m_pairs); }
    /// @brief count rows of the stored table (see cos_table()) from row first, as cos and sin
    ///        views (no copy).
    /// @param first the first position.
    /// @param count how many positions.
    /// @return the views, count x pairs each.
    /// @throws index_error if [first, first + count) is not inside the stored table, whatever
    ///         options.beyond says (use forward_into for rows past the table).
    Rows rows(std::int64_t first, Index count) const { return stored_views(m_table, first, count, "table"); }
    /// @brief count stored rows from row first, as a call whose largest position is
    ///        call_length - 1 reads them: in per-call mode, LongRoPE's long table for a call past
    ///        original_max_position_embeddings; otherwise as rows(first, count).
    /// @param first the first position.
    /// @param count how many positions.
    /// @param call_length the call's largest position + 1, >= 0.
    /// @return the views, count x pairs each (no copy).
    /// @throws value_error for a negative call_length; index_error if such a call's rows are
    ///         not stored (dynamic NTK past original_max_position_embeddings computes them per
    ///         call: use forward_into) or [first, first + count) is outside the table.
    Rows rows(std::int64_t first, Index count, std::int64_t call_length) const {
        const CallRows call = call_rows(checked_call_length(call_length));
        if (call.table == nullptr)
            detail::fail<index_error>("rotary rows of a dynamic call of length ", call_length,
                                      " are not stored (past original_max_position_embeddings ",
                                      m_options.original_max_position_embeddings,
                                      " they are computed per call): use forward_into with the call length");
        return stored_views(*call.table, first, count, call.table == &m_table ? "table" : "long table");
    }

    /// @brief The cos and sin rows of positions first .. first + cos.rows() - 1 into caller
    ///        memory, as Hugging Face's forward gives them for these position ids: in per-call
    ///        mode the call's length is first + cos.rows() (its largest position + 1). Rows are
    ///        computed past the table when options.beyond allows it.
    /// @param first the first position, >= 0.
    /// @param cos count x pairs.
    /// @param sin count x pairs (the same count).
    /// @throws shape_error for other shapes; index_error for negative positions, positions past
    ///         the table under BeyondTable::throw_error, or past 2^53.
    void forward_into(std::int64_t first, Eigen::Ref<RowMatrix<Scalar>> cos, Eigen::Ref<RowMatrix<Scalar>> sin) const {
        if (!require_rows(first, cos, sin)) return;
        copy_rows(first, first + cos.rows(), cos, sin);
    }
    /// @brief As forward_into(first, cos, sin), the rows as a call whose largest position is
    ///        call_length - 1 reads them (a decoding step: the rows of its new tokens, with the
    ///        length of the whole sequence).
    /// @param first the first position, >= 0.
    /// @param cos count x pairs.
    /// @param sin count x pairs (the same count).
    /// @param call_length the call's largest position + 1: at least first + count.
    /// @throws shape_error for other shapes; value_error for a call_length below first + count;
    ///         index_error as forward_into(first, cos, sin).
    void forward_into(std::int64_t first, Eigen::Ref<RowMatrix<Scalar>> cos, Eigen::Ref<RowMatrix<Scalar>> sin,
                      std::int64_t call_length) const {
        if (!require_rows(first, cos, sin)) return;
        if (call_length < first + cos.rows())
            detail::fail<value_error>("rotary call_length ", call_length, " is below the rows' end ", first, " + ",
                                      cos.rows(), ": a call's length is its largest position + 1");
        copy_rows(first, call_length, cos, sin);
    }

    /// @name Applying the rotation
    /// Q is tokens x (q_heads * head_dim) and K tokens x (k_heads * head_dim), row-major (blocks
    /// of a wider matrix, such as a fused QKV projection, are fine: rows may be apart). Q and K
    /// must not share values (each would be rotated twice). Either may be empty (size 0), and is
    /// then left alone. Every argument is checked before anything is written: an error leaves Q
    /// and K as they were.
    /// @{

    /// @brief Rotates each row of q and k by its own position.
    /// @param q tokens x (q_heads * head_dim), rotated in place.
    /// @param k tokens x (k_heads * head_dim), rotated in place (k_heads may differ from q_heads:
    ///        grouped-query attention).
    /// @param q_heads heads in q (> 0 unless q is empty).
    /// @param k_heads heads in k (> 0 unless k is empty).
    /// @param positions one position per row, >= 0.
    /// @throws shape_error if q or k has other than positions.size() rows or other than
    ///         heads x head_dim columns; value_error for a head count <= 0; index_error for a
    ///         negative position, one past the table under BeyondTable::throw_error, or one past
    ///         2^53.
    void apply(Eigen::Ref<RowMatrix<float>> q, Eigen::Ref<RowMatrix<float>> k, Index q_heads, Index k_heads,
               const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<float>(q, k, q_heads, k_heads, positions);
    }
    /// @brief As apply for float, over double activations (computed in double).
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions one per row.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<double>> q, Eigen::Ref<RowMatrix<double>> k, Index q_heads, Index k_heads,
               const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<double>(q, k, q_heads, k_heads, positions);
    }
    /// @brief As apply for float, over bfloat16 activations (computed in float with the cosine's
    ///        product fused into the sum, rounded once).
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions one per row.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<Eigen::bfloat16>> q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> k, Index q_heads,
               Index k_heads, const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<Eigen::bfloat16>(q, k, q_heads, k_heads, positions);
    }

    /// @brief Rotates the rows of a batch x seq batch (row b * seq + t is token t of sequence b)
    ///        by the positions the pipeline gives its tokens: padded tokens are left alone, real
    ///        ones take their number (PositionNumbering) plus their sequence's step offset.
    /// @param q (batch * seq) x (q_heads * head_dim), rotated in place.
    /// @param k (batch * seq) x (k_heads * head_dim), rotated in place.
    /// @param q_heads heads in q.
    /// @param k_heads heads in k.
    /// @param ids the batch's token ids (their shape, and the padding id for Padding::by_id).
    /// @param padding which tokens are real (Padding::none(), right, left, from_mask, by_id).
    /// @param offsets added to the positions of each sequence (tokens already decoded).
    /// @param numbering real_tokens (the number of real tokens before it, as Hugging Face's
    ///        generate() derives position_ids from the attention mask) or sequence_index (its
    ///        index in the row, padding included, as a forward without position_ids).
    /// @throws shape_error, value_error and index_error as the positions overload, naming the
    ///         token by (batch, position); shape_error or value_error for padding or offsets that
    ///         do not fit the ids.
    void apply(Eigen::Ref<RowMatrix<float>> q, Eigen::Ref<RowMatrix<float>> k, Index q_heads, Index k_heads,
               const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
               PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<float>(q, k, q_heads, k_heads, ids, padding, offsets, numbering);
    }
    /// @brief The batch overload over double activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param ids the batch's ids. @param padding real tokens.
    /// @param offsets per sequence. @param numbering how tokens are numbered.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<double>> q, Eigen::Ref<RowMatrix<double>> k, Index q_heads, Index k_heads,
               const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
               PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<double>(q, k, q_heads, k_heads, ids, padding, offsets, numbering);
    }
    /// @brief The batch overload over bfloat16 activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param ids the batch's ids. @param padding real tokens.
    /// @param offsets per sequence. @param numbering how tokens are numbered.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<Eigen::bfloat16>> q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> k, Index q_heads,
               Index k_heads, const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
               PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<Eigen::bfloat16>(q, k, q_heads, k_heads, ids, padding, offsets, numbering);
    }

    /// @brief Rotates the rows of a batch by the positions an InputPipeline with the same
    ///        numbering gives its tokens (padded tokens are left alone): explicit position ids
    ///        as they stand, or the numbering's rule after the past tokens an attention mask
    ///        covers (Batch::padding over past + current tokens), plus the step offsets. Per-call
    ///        rules (dynamic NTK, LongRoPE) choose their frequencies from the largest position
    ///        of every token, padded ones included, as Hugging Face takes max(position_ids) + 1.
    /// @param q (batch * seq) x (q_heads * head_dim), rotated in place.
    /// @param k (batch * seq) x (k_heads * head_dim), rotated in place.
    /// @param q_heads heads in q.
    /// @param k_heads heads in k.
    /// @param batch the ids, padding, offsets and position ids (token types are not read).
    /// @param numbering the rule without position ids: real_tokens (the default, as generate()
    ///        derives position ids from the mask) or sequence_index (past + t, as the rotary
    ///        decoders' forward without position_ids; io::Model::positions gives those).
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as the other batch overload; index_error for a real token's negative position.
    void apply(Eigen::Ref<RowMatrix<float>> q, Eigen::Ref<RowMatrix<float>> k, Index q_heads, Index k_heads,
               const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
               TokenId padding_id = 0) const {
        apply_positions_of<float>(q, k, q_heads, k_heads, batch, numbering, padding_id);
    }
    /// @brief The Batch overload over double activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param batch the batch. @param numbering the rule.
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<double>> q, Eigen::Ref<RowMatrix<double>> k, Index q_heads, Index k_heads,
               const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
               TokenId padding_id = 0) const {
        apply_positions_of<double>(q, k, q_heads, k_heads, batch, numbering, padding_id);
    }
    /// @brief The Batch overload over bfloat16 activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param batch the batch. @param numbering the rule.
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as the float overload.
    void apply(Eigen::Ref<RowMatrix<Eigen::bfloat16>> q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> k, Index q_heads,
               Index k_heads, const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
               TokenId padding_id = 0) const {
        apply_positions_of<Eigen::bfloat16>(q, k, q_heads, k_heads, batch, numbering, padding_id);
    }
    /// @}

    /// @name Backward
    /// The transpose of apply, for training: the gradients of the rotated Q and K turned back
    /// into the gradients of Q and K before the rotation. The gradient of a rotated pair is the
    /// pair rotated by the negative angle: the same cosines, the sines negated, with the
    /// frequencies the forward chose (per-call rules choose them from the same positions), the
    /// same layout, partial rotation and grouped-query heads, through the same kernel and
    /// dispatch, so that every backend gives the scalar backend's bits. Each overload takes
    /// what the matching apply took.
    /// @{

    /// @brief The backward of apply(q, k, q_heads, k_heads, positions).
    /// @param grad_q the gradient of the rotated q, turned in place into that of q.
    /// @param grad_k the gradient of the rotated k, turned in place into that of k.
    /// @param q_heads heads in q. @param k_heads heads in k. @param positions one per row.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<float>> grad_q, Eigen::Ref<RowMatrix<float>> grad_k, Index q_heads,
                        Index k_heads, const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<float>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }
    /// @brief The backward over double activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions one per row.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<double>> grad_q, Eigen::Ref<RowMatrix<double>> grad_k, Index q_heads,
                        Index k_heads, const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<double>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }
    /// @brief The backward over bfloat16 activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions one per row.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_k,
                        Index q_heads, Index k_heads, const Eigen::Ref<const PositionVector>& positions) const {
        apply_positions<Eigen::bfloat16>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }
    /// @brief The backward of the batch overload of apply.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param ids the batch's ids. @param padding real tokens.
    /// @param offsets per sequence. @param numbering how tokens are numbered.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<float>> grad_q, Eigen::Ref<RowMatrix<float>> grad_k, Index q_heads,
                        Index k_heads, const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
                        PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<float>(grad_q, grad_k, q_heads, k_heads, ids, padding, offsets, numbering, true);
    }
    /// @brief The batch backward over double activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param ids the batch's ids. @param padding real tokens.
    /// @param offsets per sequence. @param numbering how tokens are numbered.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<double>> grad_q, Eigen::Ref<RowMatrix<double>> grad_k, Index q_heads,
                        Index k_heads, const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
                        PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<double>(grad_q, grad_k, q_heads, k_heads, ids, padding, offsets, numbering, true);
    }
    /// @brief The batch backward over bfloat16 activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param ids the batch's ids. @param padding real tokens.
    /// @param offsets per sequence. @param numbering how tokens are numbered.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_k,
                        Index q_heads, Index k_heads, const TokenIds& ids, const Padding& padding,
                        const StepOffsets& offsets = 0,
                        PositionNumbering numbering = PositionNumbering::real_tokens) const {
        apply_batch<Eigen::bfloat16>(grad_q, grad_k, q_heads, k_heads, ids, padding, offsets, numbering, true);
    }
    /// @brief The backward of the Batch overload of apply.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param batch the batch. @param numbering the rule.
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<float>> grad_q, Eigen::Ref<RowMatrix<float>> grad_k, Index q_heads,
                        Index k_heads, const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
                        TokenId padding_id = 0) const {
        apply_positions_of<float>(grad_q, grad_k, q_heads, k_heads, batch, numbering, padding_id, true);
    }
    /// @brief The Batch backward over double activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param batch the batch. @param numbering the rule.
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<double>> grad_q, Eigen::Ref<RowMatrix<double>> grad_k, Index q_heads,
                        Index k_heads, const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
                        TokenId padding_id = 0) const {
        apply_positions_of<double>(grad_q, grad_k, q_heads, k_heads, batch, numbering, padding_id, true);
    }
    /// @brief The Batch backward over bfloat16 activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param batch the batch. @param numbering the rule.
    /// @param padding_id the id non_padding_ids skips.
    /// @throws as apply.
    void apply_backward(Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_k,
                        Index q_heads, Index k_heads, const Batch& batch,
                        PositionNumbering numbering = PositionNumbering::real_tokens, TokenId padding_id = 0) const {
        apply_positions_of<Eigen::bfloat16>(grad_q, grad_k, q_heads, k_heads, batch, numbering, padding_id, true);
    }
    /// @}

    /// @name Multimodal positions (M-RoPE)
    /// Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's rotation: each token has three position ids
    /// (temporal, height, width; equal for text), and frequency i turns by the one
    /// options().mrope_section gives it (multimodal_axis). Each frequency's cosine and sine are
    /// those of its own position, as Hugging Face computes every axis's angles and then picks
    /// (apply_multimodal_rotary_pos_emb, apply_interleaved_mrope). Positions come as
    /// io::Model::multimodal_positions computes them, 3 x tokens (row a the axis, column r the
    /// token: row r of Q and K). Per-call rules choose their frequencies from the largest of all
    /// 3 x tokens. Every argument is checked before anything is written.
    /// @{

    /// @brief Whether the options give an mrope_section.
    /// @return true when apply_multimodal can be called.
    bool multimodal() const noexcept {
        const std::array<Index, 3>& section = m_options.mrope_section;
        return section[0] != 0 || section[1] != 0 || section[2] != 0;
    }
    /// @brief Which position id frequency i turns by.
    /// @param i a frequency, in [0, rotary_dim / 2).
    /// @return 0 (temporal), 1 (height) or 2 (width); 0 for every i without an mrope_section.
    Index multimodal_axis(Index i) const noexcept {
        const std::array<Index, 3>& section = m_options.mrope_section;
        if (m_options.mrope_interleaved) {
            if (i % 3 == 1 && i < 3 * section[1]) return 1;
            if (i % 3 == 2 && i < 3 * section[2]) return 2;
            return 0;
        }
        if (i < section[0] || !multimodal()) return 0;
        return i < section[0] + section[1] ? 1 : 2;
    }

    /// @brief Rotates row r of q and k, frequency i by the angle of position positions(axis(i), r).
    /// @param q tokens x (q_heads * head_dim), rotated in place.
    /// @param k tokens x (k_heads * head_dim), rotated in place.
    /// @param q_heads heads in q.
    /// @param k_heads heads in k.
    /// @param positions 3 x tokens, each >= 0.
    /// @throws value_error without an mrope_section; shape_error, value_error and index_error as
    ///         apply(q, k, q_heads, k_heads, positions), naming the axis and the token.
    void apply_multimodal(Eigen::Ref<RowMatrix<float>> q, Eigen::Ref<RowMatrix<float>> k, Index q_heads,
                          Index k_heads, const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<float>(q, k, q_heads, k_heads, positions, false);
    }
    /// @brief As apply_multimodal for float, over double activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions 3 x tokens.
    /// @throws as the float overload.
    void apply_multimodal(Eigen::Ref<RowMatrix<double>> q, Eigen::Ref<RowMatrix<double>> k, Index q_heads,
                          Index k_heads, const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<double>(q, k, q_heads, k_heads, positions, false);
    }
    /// @brief As apply_multimodal for float, over bfloat16 activations.
    /// @param q rotated in place. @param k rotated in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions 3 x tokens.
    /// @throws as the float overload.
    void apply_multimodal(Eigen::Ref<RowMatrix<Eigen::bfloat16>> q, Eigen::Ref<RowMatrix<Eigen::bfloat16>> k,
                          Index q_heads, Index k_heads, const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<Eigen::bfloat16>(q, k, q_heads, k_heads, positions, false);
    }
    /// @brief The backward of apply_multimodal: the gradients turned by the negative angles.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions what apply_multimodal took.
    /// @throws as apply_multimodal.
    void apply_multimodal_backward(Eigen::Ref<RowMatrix<float>> grad_q, Eigen::Ref<RowMatrix<float>> grad_k,
                                   Index q_heads, Index k_heads,
                                   const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<float>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }
    /// @brief The backward of apply_multimodal over double activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions what apply_multimodal took.
    /// @throws as apply_multimodal.
    void apply_multimodal_backward(Eigen::Ref<RowMatrix<double>> grad_q, Eigen::Ref<RowMatrix<double>> grad_k,
                                   Index q_heads, Index k_heads,
                                   const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<double>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }
    /// @brief The backward of apply_multimodal over bfloat16 activations.
    /// @param grad_q turned in place. @param grad_k turned in place. @param q_heads heads in q.
    /// @param k_heads heads in k. @param positions what apply_multimodal took.
    /// @throws as apply_multimodal.
    void apply_multimodal_backward(Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_q,
                                   Eigen::Ref<RowMatrix<Eigen::bfloat16>> grad_k, Index q_heads, Index k_heads,
                                   const Eigen::Ref<const MultimodalPositions>& positions) const {
        apply_multimodal_of<Eigen::bfloat16>(grad_q, grad_k, q_heads, k_heads, positions, true);
    }

    /// @brief The cosines and sines apply_multimodal turns each token by (Hugging Face's cos and
    ///        sin after the sections are picked, their first rotary_dim/2 columns).
    /// @param positions 3 x tokens.
    /// @param cos tokens x rotary_dim/2.
    /// @param sin tokens x rotary_dim/2.
    /// @throws as apply_multimodal; shape_error for other shapes of cos and sin.
    void multimodal_rows_into(const Eigen::Ref<const MultimodalPositions>& positions,
                              Eigen::Ref<RowMatrix<Scalar>> cos, Eigen::Ref<RowMatrix<Scalar>> sin) const {
        require_multimodal(positions);
        if (cos.rows() != positions.cols() || sin.rows() != positions.cols() || cos.cols() != m_pairs ||
            sin.cols() != m_pairs)
            detail::fail<shape_error>("multimodal cos and sin are ", cos.rows(), " x ", cos.cols(), " and ",
                                      sin.rows(), " x ", sin.cols(), ", expected tokens x rotary_dim / 2 = ",
                                      positions.cols(), " x ", m_pairs);
        MultimodalRow row(*this, positions);
        for (Index r = 0; r < positions.cols(); ++r) {
            const Scalar* values = row.of(positions.col(r));
            std::copy(values, values + m_pairs, cos.row(r).data());
            std::copy(values + m_pairs, values + 2 * m_pairs, sin.row(r).data());
        }
    }
    /// @}

    /// @brief The position of every token of a batch, as the Batch overload of apply takes them
    ///        and as an InputPipeline with the same numbering numbers them.
    /// @param batch the ids, padding, offsets and position ids.
    /// @param numbering the rule without position ids.
    /// @param padding_id the id non_padding_ids skips.
    /// @return batch * seq values: the position of row b * seq + t, or -1 for a padded token.
    /// @throws shape_error or value_error for inputs that do not fit the ids; index_error if an
    ///         offset makes a position overflow, or for a real token's negative position.
    static PositionVector positions_of(const Batch& batch, PositionNumbering numbering = PositionNumbering::real_tokens,
                                       TokenId padding_id = 0) {
        detail::require_batch_fits(batch);
        PositionVector out(batch.ids.size());
        const Index seq = batch.ids.cols();
        detail::for_each_position(batch, numbering, padding_id, 0, batch.ids.rows(),
                                  [&](Index b, Index t, bool real, std::int64_t position) {
                                      if (real && position < 0)
                                          detail::fail<index_error>("rotary position ", position, " of token (batch ",
                                                                    b, ", position ", t, ") is negative");
                                      out[b * seq + t] = real ? position : -1;
                                  });
        return out;
    }

    /// @brief The position of every token of a batch, as the batch overload of apply takes them.
    /// @param ids batch x seq ids.
    /// @param padding which tokens are real.
    /// @param offsets per sequence.
    /// @param numbering how tokens are numbered.
    /// @return batch * seq values: the position of row b * seq + t, or -1 for a padded token.
    /// @throws shape_error or value_error for padding or offsets that do not fit the ids;
    ///         index_error if an offset makes a position overflow or negative.
    static PositionVector positions_of(const TokenIds& ids, const Padding& padding, const StepOffsets& offsets = 0,
                                       PositionNumbering numbering = PositionNumbering::real_tokens) {
        return positions_of(Batch(ids, padding, offsets), numbering);
    }

private:
    static constexpr std::int64_t max_exact_position = detail::max_exact_position;

    // ---- options --------------------------------------------------------------------------

    static const char* rule_name(RotaryScaling scaling) noexcept {
        switch (scaling) {
            case RotaryScaling::none: return "none";
            case RotaryScaling::linear: return "linear";
            case RotaryScaling::dynamic: return "dynamic";
            case RotaryScaling::yarn: return "yarn";
            case RotaryScaling::llama3: return "llama3";
            case RotaryScaling::longrope: return "longrope";
        }
        return "unknown";
    }

    static void require_finite_option(const char* name, double value) {
        if (!std::isfinite(value)) detail::fail<value_error>("rotary option ", name, " is ", value, ", not finite");
    }

    static void require_positive_option(const char* name, double value) {
        require_finite_option(name, value);
        if (!(value > 0)) detail::fail<value_error>("rotary option ", name, " is ", value, ", must be positive");
    }

    static void require_factor_list(const char* name, const std::vector<double>& values, Index pairs) {
        if (static_cast<Index>(values.size()) != pairs)
            detail::fail<value_error>("longrope ", name, " has ", values.size(), " values, expected rotary_dim/2 = ",
                                      pairs);
        for (std::size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(values[i]) || !(values[i] > 0))
                detail::fail<value_error>("longrope ", name, "[", i, "] is ", values[i], ", must be finite and positive");
    }

    static RotaryOptions checked(RotaryOptions options) {
        if (options.head_dim <= 0 || options.head_dim % 2 != 0)
            detail::fail<value_error>("rotary head_dim ", options.head_dim,
                                      " must be positive and even (RoPE rotates pairs of dimensions)");
        require_finite_option("partial_rotary_factor", options.partial_rotary_factor);
        if (!(options.partial_rotary_factor > 0 && options.partial_rotary_factor <= 1))
            detail::fail<value_error>("rotary partial_rotary_factor ", options.partial_rotary_factor,
                                      " is outside (0, 1]");
        // Python's int(head_dim * partial_rotary_factor): the double product, truncated.
        const auto from_factor = static_cast<Index>(
            std::trunc(static_cast<double>(options.head_dim) * options.partial_rotary_factor));
        if (options.rotary_dim == 0) {
            options.rotary_dim = from_factor;
        } else if (options.partial_rotary_factor != 1.0 && options.rotary_dim != from_factor) {
            detail::fail<value_error>("rotary_dim ", options.rotary_dim, " disagrees with partial_rotary_factor ",
                                      options.partial_rotary_factor, " (head_dim ", options.head_dim, " x ",
                                      options.partial_rotary_factor, " = ", from_factor, "); set one of them");
        }
        if (options.rotary_dim <= 0 || options.rotary_dim % 2 != 0 || options.rotary_dim > options.head_dim)
            detail::fail<value_error>("rotary_dim ", options.rotary_dim, " must be even and in [2, head_dim = ",
                                      options.head_dim, "]");
        require_finite_option("base", options.base);
        if (!(options.base > 1))
            detail::fail<value_error>("rotary base (rope_theta) ", options.base, " must be greater than 1");
        require_finite_option("factor", options.factor);
        const RotaryScaling rule = options.scaling;
        if (rule == RotaryScaling::none) {
            if (options.factor != 1.0)
                detail::fail<value_error>("rotary factor ", options.factor,
                                          " is given without a scaling rule (scaling = none); set scaling or "
                                          "leave factor at 1");
        } else if (!(options.factor >= 1)) {
            detail::fail<value_error>("rotary factor ", options.factor, " of the ", rule_name(rule),
                                      " rule must be at least 1");
        }
        const bool needs_original = rule == RotaryScaling::dynamic || rule == RotaryScaling::yarn ||
                                    rule == RotaryScaling::llama3 || rule == RotaryScaling::longrope;
        if (options.original_max_position_embeddings < 0 ||
            (needs_original && options.original_max_position_embeddings == 0))
            detail::fail<value_error>("rotary original_max_position_embeddings ",
                                      options.original_max_position_embeddings, " must be positive for the ",
                                      rule_name(rule), " rule");
        if (options.sequence_length < 0)
            detail::fail<value_error>("rotary sequence_length ", options.sequence_length, " is negative");
        if (rule == RotaryScaling::dynamic && options.rotary_dim == 2)
            detail::fail<value_error>("the dynamic rule needs rotary_dim > 2 (its exponent is dim / (dim - 2))");
        if (rule == RotaryScaling::llama3) {
            require_positive_option("low_freq_factor", options.low_freq_factor);
            require_positive_option("high_freq_factor", options.high_freq_factor);
            // Equal factors (Llama 4 Scout's 1 and 1) leave no band between the two wavelengths.
            if (!(options.high_freq_factor >= options.low_freq_factor))
                detail::fail<value_error>("llama3 high_freq_factor ", options.high_freq_factor,
                                          " must be at least low_freq_factor ", options.low_freq_factor);
        }
        if (rule == RotaryScaling::yarn) {
            require_positive_option("beta_fast", options.beta_fast);
            require_positive_option("beta_slow", options.beta_slow);
            require_finite_option("mscale", options.mscale);
            require_finite_option("mscale_all_dim", options.mscale_all_dim);
        } else if (options.mscale != 0 || options.mscale_all_dim != 0) {
            detail::fail<value_error>("rotary mscale and mscale_all_dim apply to the yarn rule only, not ",
                                      rule_name(rule));
        }
        if (options.attention_factor) {
            if (rule != RotaryScaling::yarn && rule != RotaryScaling::longrope)
                detail::fail<value_error>("rotary attention_factor applies to the yarn and longrope rules only, not ",
                                          rule_name(rule));
            require_positive_option("attention_factor", *options.attention_factor);
            if (!std::isfinite(static_cast<float>(*options.attention_factor)))
                detail::fail<value_error>("rotary attention_factor ", *options.attention_factor,
                                          " overflows float32");
        }
        const Index pairs = options.rotary_dim / 2;
        const std::array<Index, 3>& section = options.mrope_section;
        if (section[0] != 0 || section[1] != 0 || section[2] != 0) {
            // Blocks split the frequencies (Hugging Face's split of mrope_section * 2 needs the
            // sum); the interleaving reads only the height's and width's counts, clipped.
            if (section[0] < 0 || section[1] < 0 || section[2] < 0 ||
                (!options.mrope_interleaved && section[0] + section[1] + section[2] != pairs))
                detail::fail<value_error>("rotary mrope_section [", section[0], ", ", section[1], ", ", section[2],
                                          "] must be non-negative",
                                          options.mrope_interleaved ? "" : " and sum to rotary_dim / 2 = ",
                                          options.mrope_interleaved ? std::string() : std::to_string(pairs));
        } else if (options.mrope_interleaved) {
            detail::fail<value_error>("rotary mrope_interleaved needs an mrope_section");
        }
        if (!options.inverse_frequencies.empty()) {
            if (rule != RotaryScaling::none)
                detail::fail<value_error>("rotary inverse_frequencies are the frequencies themselves: they take no ",
                                          rule_name(rule), " rule (scaling none)");
            if (static_cast<Index>(options.inverse_frequencies.size()) != pairs)
                detail::fail<value_error>("rotary inverse_frequencies has ", options.inverse_frequencies.size(),
                                          " values, expected rotary_dim / 2 = ", pairs);
            for (std::size_t i = 0; i < options.inverse_frequencies.size(); ++i)
                if (!std::isfinite(options.inverse_frequencies[i]) || !(options.inverse_frequencies[i] > 0))
                    detail::fail<value_error>("rotary inverse_frequencies[", i, "] is ",
                                              options.inverse_frequencies[i], ", not a finite positive float");
        }
        if (rule == RotaryScaling::longrope) {
            require_factor_list("short_factor", options.short_factor, pairs);
            require_factor_list("long_factor", options.long_factor, pairs);
        } else if (!options.short_factor.empty() || !options.long_factor.empty()) {
            detail::fail<value_error>("rotary short_factor and long_factor apply to the longrope rule only, not ",
                                      rule_name(rule));
        }
        detail::require_positive("rotary max_positions", options.max_positions);
        detail::require_addressable<Scalar>("rotary table", options.max_positions, options.rotary_dim);
        return options;
    }

    // ---- frequencies ------------------------------------------------------------------------

    /// One set of frequencies: Hugging Face's float32 inv_freq (follow mode) and the rule's real
    /// ones (exact mode), split for the kernel.
    struct FrequencySet {
        std::vector<float> inv_freq;                  // follow: Hugging Face's float32 inv_freq
        std::vector<double> frequency;                // exact, rounded to double (for users)
        std::vector<detail::DoubleDouble> split;      // exact, as hi + lo
        std::vector<double> high;                     // exact, split for the kernel, padded
        std::vector<double> middle;
        std::vector<double> low;
        double max_frequency = 0;
    };

    /// Whether the rule's frequencies depend on the call (dynamic and longrope with
    /// sequence_length 0).
    static bool chooses_per_call(const RotaryOptions& options) noexcept {
        return (options.scaling == RotaryScaling::dynamic || options.scaling == RotaryScaling::longrope) &&
               options.sequence_length == 0;
    }

    /// Rows of the table built at construction: in per-call mode only the positions a call
    /// within the trained length reaches.
    static Index stored_rows(const RotaryOptions& options) noexcept {
        if (!chooses_per_call(options)) return options.max_positions;
        return std::min(options.max_positions, options.original_max_position_embeddings);
    }

    /// Whether a call of this length (its largest position + 1) takes the rule's long
    /// frequencies: past the trained length, in per-call mode.
    bool is_long_call(std::int64_t call_length) const noexcept {
        return m_per_call && call_length > m_options.original_max_position_embeddings;
    }

    /// Which halves of a FrequencySet to compute: a dynamic call needs only its precision's.
    enum class Parts { both, follow, exact };

    /// The frequencies of the rule for sequence length `length` (dynamic: max(length, original);
    /// longrope: long_factor past original), the attention scaling apart.
    FrequencySet frequency_set(Index length, Parts parts = Parts::both) const {
        namespace rotary = detail::rotary;
        const RotaryOptions& o = m_options;
        const Index dim = o.rotary_dim;
        const auto base = static_cast<long double>(o.base);
        const auto factor = static_cast<long double>(o.factor);
        std::vector<long double> exact;
        FrequencySet set;
        switch (o.scaling) {
            case RotaryScaling::none:
                if (!o.inverse_frequencies.empty()) {  // given: both precisions take them as they are
                    set.inv_freq = o.inverse_frequencies;
                    exact.assign(o.inverse_frequencies.begin(), o.inverse_frequencies.end());
                    break;
                }
                set.inv_freq = rotary::follow_default(o.base, dim);
                exact = rotary::exact_default(base, dim);
                break;
            case RotaryScaling::linear:
                set.inv_freq = rotary::follow_linear(o.base, dim, o.factor);
                exact = rotary::exact_linear(base, dim, factor);
                break;
            case RotaryScaling::dynamic:
                if (parts != Parts::exact)
                    set.inv_freq =
                        rotary::follow_dynamic(o.base, dim, o.factor, length, o.original_max_position_embeddings);
                if (parts != Parts::follow)
                    exact = rotary::exact_dynamic(base, dim, factor, length, o.original_max_position_embeddings);
                break;
            case RotaryScaling::yarn:
                set.inv_freq = rotary::follow_yarn(o.base, dim, o.factor, o.beta_fast, o.beta_slow,
                                                   o.original_max_position_embeddings, o.truncate);
                exact = rotary::exact_yarn(base, dim, factor, static_cast<long double>(o.beta_fast),
                                           static_cast<long double>(o.beta_slow), o.original_max_position_embeddings,
                                           o.truncate);
                break;
            case RotaryScaling::llama3:
                set.inv_freq = rotary::follow_llama3(o.base, dim, o.factor, o.low_freq_factor, o.high_freq_factor,
                                                     o.original_max_position_embeddings);
                exact = rotary::exact_llama3(base, dim, factor, static_cast<long double>(o.low_freq_factor),
                                             static_cast<long double>(o.high_freq_factor),
                                             o.original_max_position_embeddings);
                break;
            case RotaryScaling::longrope: {
                const std::vector<double>& ext =
                    length > o.original_max_position_embeddings ? o.long_factor : o.short_factor;
                set.inv_freq = rotary::follow_longrope(o.base, dim, ext);
                exact = rotary::exact_longrope(base, dim, ext);
                break;
            }
        }

        const auto pairs = static_cast<std::size_t>(m_pairs);
        if (exact.empty()) {  // the follow half alone
            for (std::size_t i = 0; i < pairs; ++i)
                if (!std::isfinite(set.inv_freq[i]) || !(set.inv_freq[i] > 0))
                    detail::fail<value_error>("rotary frequency ", i, " of the ", rule_name(o.scaling),
                                              " rule is not a finite positive float32 (", set.inv_freq[i],
                                              "): check the options");
            return set;
        }
        const bool has_follow = !set.inv_freq.empty();
        const std::size_t padded = (pairs + block - 1) / block * block;
        set.frequency.resize(pairs);
        set.split.resize(pairs);
        set.high.assign(padded, 0.0);
        set.middle.assign(padded, 0.0);
        set.low.assign(padded, 0.0);
        for (std::size_t i = 0; i < pairs; ++i) {
            const long double value = exact[i];
            const float value32 = has_follow ? set.inv_freq[i] : 1.0f;
            if (!std::isfinite(value) || !(value > 0) || !std::isfinite(value32) || !(value32 > 0))
                detail::fail<value_error>("rotary frequency ", i, " of the ", rule_name(o.scaling),
                                          " rule is not a finite positive number (", static_cast<double>(value),
                                          "; float32 ", value32, "): check the options");
            const auto hi = static_cast<double>(value);
            set.frequency[i] = hi;
            set.split[i] = {hi, static_cast<double>(value - static_cast<long double>(hi))};
            const detail::SplitFrequency split = detail::split_frequency(set.split[i]);
            set.high[i] = split.high;
            set.middle[i] = split.middle;
            set.low[i] = split.low;
            set.max_frequency = std::max(set.max_frequency, hi);
        }
        return set;
    }

    /// The attention scaling (the same for every call: LongRoPE's comes from its factor, as
    /// Hugging Face computes it)
    /// and the frequencies of the table(s) built at construction.
    void plan_frequencies() {
        namespace rotary = detail::rotary;
        const RotaryOptions& o = m_options;
        const auto factor = static_cast<long double>(o.factor);
        m_attention_scaling = 1.0;
        m_exact_scaling = 1;
        if (o.scaling == RotaryScaling::yarn) {
            m_attention_scaling =
                o.attention_factor.value_or(rotary::yarn_attention_factor(o.factor, o.mscale, o.mscale_all_dim));
            m_exact_scaling = o.attention_factor
                                  ? static_cast<long double>(*o.attention_factor)
                                  : rotary::exact_yarn_attention_factor(factor, static_cast<long double>(o.mscale),
                                                                        static_cast<long double>(o.mscale_all_dim));
        } else if (o.scaling == RotaryScaling::longrope) {
            m_attention_scaling = o.attention_factor.value_or(
                rotary::longrope_attention_factor(o.factor, o.original_max_position_embeddings));
            m_exact_scaling = o.attention_factor
                                  ? static_cast<long double>(*o.attention_factor)
                                  : rotary::exact_longrope_attention_factor(factor, o.original_max_position_embeddings);
        }
        m_scale32 = static_cast<float>(m_attention_scaling);
        if (!(m_attention_scaling > 0) || !std::isfinite(m_scale32))
            detail::fail<value_error>("rotary attention scaling ", m_attention_scaling, " of the ",
                                      rule_name(o.scaling), " rule is not a finite positive float");
        // Per call, the stored table is that of calls within the trained length (length 0 picks
        // the default or short frequencies); a fixed sequence_length picks them for good.
        m_base = std::make_shared<const FrequencySet>(frequency_set(m_per_call ? 0 : o.sequence_length));
        if (m_per_call && o.scaling == RotaryScaling::longrope)
            m_long = std::make_shared<const FrequencySet>(frequency_set(o.original_max_position_embeddings + 1));
    }

    // ---- tables -----------------------------------------------------------------------------

    static constexpr Index block = detail::exact_sin_cos_block_size;
    // The vector kernel reduces angles exactly while the quadrant stays below 2^26 (its pi/2 in
    // 26-bit parts); past that each exact value goes through exact_sin_or_cos. (Follow rows hand
    // their float32 angles to sin_cos_of_float_angles, which reduces large ones itself.)
    static constexpr double kernel_angle_limit = 0x1p25;

    /// Builds the table of `frequencies` (rows positions 0 .. rows - 1).
    static detail::RowTable<Scalar> build_table(const RotaryEmbedding& rope, const FrequencySet& frequencies,
                                                Index rows) {
        detail::RowTable<Scalar> table("rotary table", rows, rope.m_options.rotary_dim);
        auto writable = table.writable();
        for (Index p = 0; p < rows; ++p) rope.compute_row(frequencies, p, writable.row(p).data());
        return table;
    }

    static TableView view_of(const detail::RowTable<Scalar>& table, Index first, Index count, Index column,
                             Index pairs) noexcept {
        return TableView(table.row(first) + column, count, pairs, Eigen::OuterStride<>(2 * pairs));
    }

    /// Views of count rows of a stored table from row first (what names the table in messages).
    Rows stored_views(const detail::RowTable<Scalar>& table, std::int64_t first, Index count, const char* what) const {
        if (first < 0 || count < 0 || first > table.rows() || count > table.rows() - first)
            detail::fail<index_error>("rotary rows [", first, ", ", first, " + ", count, ") are not inside the ", what,
                                      " of ", table.rows(), " rows",
                                      table.rows() == max_positions() ? " (max_positions)" : "");
        return {view_of(table, static_cast<Index>(first), count, 0, m_pairs),
                view_of(table, static_cast<Index>(first), count, m_pairs, m_pairs)};
    }

    static std::int64_t checked_call_length(std::int64_t call_length) {
        if (call_length < 0) detail::fail<value_error>("rotary call_length ", call_length, " is negative");
        return call_length;
    }

    /// Throws unless cos and sin are count x pairs and positions first .. first + count - 1 can
    /// be given; whether there is a row to give.
    bool require_rows(std::int64_t first, const Eigen::Ref<RowMatrix<Scalar>>& cos,
                      const Eigen::Ref<RowMatrix<Scalar>>& sin) const {
        detail::require_shape("sin of RotaryEmbedding::forward_into", sin.rows(), sin.cols(), cos.rows(), m_pairs);
        detail::require_shape("cos of RotaryEmbedding::forward_into", cos.rows(), cos.cols(), sin.rows(), m_pairs);
        if (cos.rows() == 0) return false;
        const std::int64_t last = detail::checked_add("rotary position", first, cos.rows() - 1);
        require_position(first, "the first row");
        require_position(last, "the last row");
        return true;
    }

    /// Both halves of the frequencies a call of this length uses (for the accessors).
    std::shared_ptr<const FrequencySet> frequencies_of_call(std::int64_t call_length) const {
        if (!is_long_call(call_length) || m_options.scaling != RotaryScaling::dynamic)
            return call_rows(call_length).frequencies;
        return std::make_shared<const FrequencySet>(frequency_set(static_cast<Index>(call_length)));
    }

    /// A few recent lengths' dynamic NTK frequencies, shared by copies of the object.
    struct FrequencyCache {
        static constexpr std::size_t capacity = 8;
        std::mutex mutex;
        std::vector<std::pair<std::int64_t, std::shared_ptr<const FrequencySet>>> entries;
    };

    /// What one call reads: a stored table (for its rows) and the frequencies of rows computed
    /// on the fly (past the table, or every row of a dynamic call past the trained length).
    struct CallRows {
        const detail::RowTable<Scalar>* table = nullptr;
        std::shared_ptr<const FrequencySet> frequencies;
    };

    /// The rows of a call whose largest position is call_length - 1.
    CallRows call_rows(std::int64_t call_length) const {
        if (!is_long_call(call_length)) return {&m_table, m_base};
        if (m_options.scaling == RotaryScaling::longrope) return {&*m_long_table, m_long};
        // Dynamic NTK past the trained length: frequencies for this length (the precision's half
        // only, and from the cache when a recent call had this length), rows computed.
        return {nullptr, grown_frequencies(call_length)};
    }

    /// Dynamic NTK's frequencies for a call of this length past the trained length. Computing
    /// them takes rotary_dim/2 long double powers, the cost of rotating a decoding step's token
    /// dozens of times over, and every layer of a model asks for the same length in turn: the
    /// last few lengths are kept, behind a mutex.
    std::shared_ptr<const FrequencySet> grown_frequencies(std::int64_t call_length) const {
        FrequencyCache& cache = *m_cache;
        {
            const std::lock_guard<std::mutex> lock(cache.mutex);
            for (const auto& [length, set] : cache.entries)
                if (length == call_length) return set;
        }
        std::shared_ptr<const FrequencySet> grown;
        detail::run_or_fail_on_bad_alloc<value_error>(
            [&] {
                const Parts parts = m_options.precision == TablePrecision::exact ? Parts::exact : Parts::follow;
                grown = std::make_shared<const FrequencySet>(frequency_set(static_cast<Index>(call_length), parts));
                const std::lock_guard<std::mutex> lock(cache.mutex);
                if (cache.entries.size() == FrequencyCache::capacity) cache.entries.erase(cache.entries.begin());
                cache.entries.emplace_back(call_length, grown);
            },
            "rotary frequencies of ", m_options.rotary_dim, " dimensions do not fit in memory");
        return grown;
    }

    /// Writes position's row ([cos | sin], rotary_dim values) of `frequencies` to out.
    void compute_row(const FrequencySet& frequencies, std::int64_t position, Scalar* out) const {
        if (m_options.precision == TablePrecision::exact)
            compute_exact_row(frequencies, position, out);
        else
            compute_follow_row(frequencies, position, out);
    }

    void compute_exact_row(const FrequencySet& frequencies, std::int64_t position, Scalar* out) const {
        namespace rotary = detail::rotary;
        alignas(64) double sines[block];
        alignas(64) double cosines[block];
        const auto p = static_cast<double>(position);
        const bool kernel =
            p < detail::fast_path_position_limit && p * frequencies.max_frequency < kernel_angle_limit;
        for (Index first = 0; first < m_pairs; first += block) {
            const Index count = std::min(block, m_pairs - first);
            const auto at = static_cast<std::size_t>(first);
            if (kernel) {
                detail::exact_sin_cos(p, frequencies.high.data() + at, frequencies.middle.data() + at,
                                      frequencies.low.data() + at, sines, cosines);
            } else {
                for (Index i = 0; i < count; ++i) {
                    const detail::DoubleDouble frequency = frequencies.split[at + static_cast<std::size_t>(i)];
                    sines[i] = detail::exact_sin_or_cos(p, frequency, false);
                    cosines[i] = detail::exact_sin_or_cos(p, frequency, true);
                }
            }
            if (m_exact_scaling == 1) {
                for (Index i = 0; i < count; ++i) {
                    out[first + i] = rotary::from_exact<Scalar>(cosines[i]);
                    out[m_pairs + first + i] = rotary::from_exact<Scalar>(sines[i]);
                }
            } else {
                // The product in long double, rounded once to the stored type.
                for (Index i = 0; i < count; ++i) {
                    out[first + i] = rotary::from_exact<Scalar>(m_exact_scaling * static_cast<long double>(cosines[i]));
                    out[m_pairs + first + i] =
                        rotary::from_exact<Scalar>(m_exact_scaling * static_cast<long double>(sines[i]));
                }
            }
        }
    }

    void compute_follow_row(const FrequencySet& frequencies, std::int64_t position, Scalar* out) const {
        namespace rotary = detail::rotary;
        alignas(64) float angles[block];
        alignas(64) double sines[block];
        alignas(64) double cosines[block];
        // position_ids.float(), and one rounded float32 product per frequency (the outer product),
        // then the correctly rounded float32 cos and sin of that angle.
        const auto p = static_cast<float>(position);
        for (Index first = 0; first < m_pairs; first += block) {
            const Index count = std::min(block, m_pairs - first);
            for (Index i = 0; i < count; ++i) angles[i] = frequencies.inv_freq[static_cast<std::size_t>(first + i)] * p;
            detail::sin_cos_of_float_angles(angles, static_cast<int>(count), sines, cosines);
            for (Index i = 0; i < count; ++i) {
                auto c = static_cast<float>(cosines[i]);
                auto s = static_cast<float>(sines[i]);
                if (m_scale32 != 1.0f) {
                    c = c * m_scale32;
                    s = s * m_scale32;
                }
                out[first + i] = rotary::from_follow<Scalar>(c);
                out[m_pairs + first + i] = rotary::from_follow<Scalar>(s);
            }
        }
    }

    /// The row of a checked position within a call: the stored table's, or computed into
    /// scratch.
    const Scalar* position_row(const CallRows& rows, std::int64_t position, std::vector<Scalar>& scratch) const {
        if (rows.table != nullptr && position < rows.table->rows()) return rows.table->row(static_cast<Index>(position));
        scratch.resize(static_cast<std::size_t>(m_options.rotary_dim));
        compute_row(*rows.frequencies, position, scratch.data());
        return scratch.data();
    }

    /// Copies the rows of positions first .. first + cos.rows() - 1, as a call of call_length
    /// reads them, to cos and sin (shapes checked).
    void copy_rows(std::int64_t first, std::int64_t call_length, Eigen::Ref<RowMatrix<Scalar>>& cos,
                   Eigen::Ref<RowMatrix<Scalar>>& sin) const {
        const CallRows rows = call_rows(call_length);
        std::vector<Scalar> scratch;
        for (Index r = 0; r < cos.rows(); ++r) {
            const Scalar* row = position_row(rows, first + r, scratch);
            std::copy(row, row + m_pairs, cos.row(r).data());
            std::copy(row + m_pairs, row + 2 * m_pairs, sin.row(r).data());
        }
    }

    // ---- positions --------------------------------------------------------------------------

    /// Throws unless position can be rotated by (where names the token for the message).
    template <typename... Where>
    void require_position(std::int64_t position, const Where&... where) const {
        if (position < 0) detail::fail<index_error>("rotary position ", position, " of ", where..., " is negative");
        if (position >= max_positions()) {
            if (m_options.beyond == BeyondTable::throw_error)
                detail::fail<index_error>("rotary position ", position, " of ", where...,
                                          " is past the table of ", max_positions(),
                                          " rows (max_positions); raise max_positions or set beyond = "
                                          "BeyondTable::compute");
            if (position > max_exact_position)
                detail::fail<index_error>("rotary position ", position, " of ", where...,
                                          " is beyond 2^53, where positions are no longer exact");
        }
    }

    // ---- applying ---------------------------------------------------------------------------

    /// Throws unless x (q or k) fits tokens rows of heads x head_dim; whether it is rotated.
    template <typename A>
    bool require_activations(const char* name, const Eigen::Ref<RowMatrix<A>>& x, Index heads, Index tokens,
                             const char* tokens_from) const {
        if (x.size() == 0) return false;
        if (x.rows() != tokens)
            detail::fail<shape_error>(name, " is ", x.rows(), " x ", x.cols(), ", but ", tokens_from, " give ", tokens,
                                      " tokens (one row each)");
        if (heads <= 0) detail::fail<value_error>(name, "_heads is ", heads, ", must be positive for a non-empty ", name);
        if (x.cols() / heads != head_dim() || x.cols() % heads != 0)
            detail::fail<shape_error>(name, " is ", x.rows(), " x ", x.cols(), ", expected ", tokens, " x (", name,
                                      "_heads ", heads, " x head_dim ", head_dim(), ")");
        return true;
    }

    template <typename A>
    void require_same_tokens(const Eigen::Ref<RowMatrix<A>>& q, const Eigen::Ref<RowMatrix<A>>& k) const {
        if (q.size() != 0 && k.size() != 0 && q.rows() != k.rows())
            detail::fail<shape_error>("q is ", q.rows(), " x ", q.cols(), " and k is ", k.rows(), " x ", k.cols(),
                                      ": both need one row per token");
    }

    /// Rotates row `row` of q and k by position (checked) in one call of the engine's rotation
    /// kernel (detail/engine/kernels-inl.hpp, RotaryKernel), which prepares the table row once
    /// for both.
    template <typename A>
    void rotate_token(detail::RotateFunction<Scalar, A> rotate, const CallRows& rows, Eigen::Ref<RowMatrix<A>>& q,
                      Eigen::Ref<RowMatrix<A>>& k, bool rotate_q, bool rotate_k, Index q_heads, Index k_heads,
                      Index row, std::int64_t position, std::vector<Scalar>& scratch,
                      std::vector<Scalar>* negated_sines) const {
        const Scalar* values = position_row(rows, position, scratch);
        const Scalar* sines = values + m_pairs;
        if (negated_sines != nullptr) {  // the transpose: the rotation by the negative angle
            for (Index i = 0; i < m_pairs; ++i) (*negated_sines)[static_cast<std::size_t>(i)] = -sines[i];
            sines = negated_sines->data();
        }
        const bool interleaved = m_options.layout == RotaryLayout::interleaved;
        detail::TokenHeads<A> token;
        token.head_dim = head_dim();
        if (rotate_q) {
            token.q = q.row(row).data();
            token.q_heads = q_heads;
        }
        if (rotate_k) {
            token.k = k.row(row).data();
            token.k_heads = k_heads;
        }
        rotate(values, sines, m_pairs, interleaved, token);
    }

    /// Rotates every row whose position (checked) is not negative, with the rows a call of
    /// these positions reads: the one place where dynamic NTK and LongRoPE choose their
    /// frequencies, from the largest position of the vector, wherever the positions came from.
    template <typename A>
    void rotate_rows(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, bool rotate_q, bool rotate_k,
                     Index q_heads, Index k_heads, const Eigen::Ref<const PositionVector>& positions,
                     bool transpose) const {
        rotate_rows<A>(q, k, rotate_q, rotate_k, q_heads, k_heads, positions, call_length(positions), transpose);
    }

    /// Rotates the rows whose position is >= 0, with the frequencies of a call of `length`; by
    /// the negative angles when `transpose` (the backward: the same cosines, the sines negated).
    template <typename A>
    void rotate_rows(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, bool rotate_q, bool rotate_k,
                     Index q_heads, Index k_heads, const Eigen::Ref<const PositionVector>& positions,
                     std::int64_t length, bool transpose) const {
        if (!rotate_q && !rotate_k) return;
        const detail::RotateFunction<Scalar, A> rotate = detail::rotary_kernel<Scalar, A>();
        const CallRows rows = call_rows(length);
        // Rows past the stored table are computed into scratch, allocated before the first row is
        // turned: a failure leaves q and k as they were. (length is past every rotated position.)
        std::vector<Scalar> scratch;
        if (rows.table == nullptr || length > rows.table->rows())
            scratch.resize(static_cast<std::size_t>(m_options.rotary_dim));
        std::vector<Scalar> negated_sines(transpose ? static_cast<std::size_t>(m_pairs) : 0);
        for (Index r = 0; r < positions.size(); ++r)
            if (positions[r] >= 0)
                rotate_token<A>(rotate, rows, q, k, rotate_q, rotate_k, q_heads, k_heads, r, positions[r], scratch,
                                transpose ? &negated_sines : nullptr);
    }

    template <typename A>
    void apply_positions(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, Index q_heads, Index k_heads,
                         const Eigen::Ref<const PositionVector>& positions, bool transpose = false) const {
        const Index tokens = positions.size();
        require_same_tokens<A>(q, k);
        const bool rotate_q = require_activations<A>("q", q, q_heads, tokens, "the positions");
        const bool rotate_k = require_activations<A>("k", k, k_heads, tokens, "the positions");
        for (Index r = 0; r < tokens; ++r) require_position(positions[r], "row ", r);
        rotate_rows<A>(q, k, rotate_q, rotate_k, q_heads, k_heads, positions, transpose);
    }

    template <typename A>
    void apply_batch(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, Index q_heads, Index k_heads,
                     const TokenIds& ids, const Padding& padding, const StepOffsets& offsets,
                     PositionNumbering numbering, bool transpose = false) const {
        apply_positions_of<A>(q, k, q_heads, k_heads, Batch(ids, padding, offsets), numbering, 0, transpose);
    }

    template <typename A>
    void apply_positions_of(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, Index q_heads, Index k_heads,
                            const Batch& batch, PositionNumbering numbering, TokenId padding_id,
                            bool transpose = false) const {
        detail::require_batch_fits(batch);
        const Index tokens = batch.ids.size();
        require_same_tokens<A>(q, k);
        const bool rotate_q = require_activations<A>("q", q, q_heads, tokens, "the batch x seq ids");
        const bool rotate_k = require_activations<A>("k", k, k_heads, tokens, "the batch x seq ids");
        const PositionVector positions = positions_of(batch, numbering, padding_id);
        const Index seq = batch.ids.cols();
        for (Index row = 0; row < tokens; ++row)
            if (positions[row] >= 0) require_position(positions[row], "token (batch ", row / seq, ", position ", row % seq, ")");
        // Hugging Face chooses a call's frequencies from every token's position id, padded ones
        // included (right padding under sequence_index numbers them past the real ones).
        std::int64_t largest = -1;
        detail::for_each_position(batch, numbering, padding_id, 0, batch.ids.rows(),
                                  [&](Index, Index, bool, std::int64_t position) { largest = std::max(largest, position); });
        rotate_rows<A>(q, k, rotate_q, rotate_k, q_heads, k_heads, positions,
                       largest == std::numeric_limits<std::int64_t>::max() ? largest : largest + 1, transpose);
    }

    /// Throws unless the options give an mrope_section and `positions` may be rotated by.
    void require_multimodal(const Eigen::Ref<const MultimodalPositions>& positions) const {
        if (!multimodal())
            detail::fail<value_error>("rotary apply_multimodal needs options with an mrope_section (Qwen2-VL's "
                                      "[16, 24, 24], Qwen3-VL's [24, 20, 20] with mrope_interleaved)");
        static constexpr const char* axes[3] = {"temporal", "height", "width"};
        for (Index a = 0; a < 3; ++a)
            for (Index r = 0; r < positions.cols(); ++r) require_position(positions(a, r), axes[a], " id of row ", r);
    }

    /// One token's [cos | sin] row of a multimodal call: frequency i's values from the row of
    /// its axis's position, each axis's row read as a call of the positions' largest + 1 reads it.
    class MultimodalRow {
    public:
        MultimodalRow(const RotaryEmbedding& rope, const Eigen::Ref<const MultimodalPositions>& positions)
            : m_rope(rope), m_rows(rope.call_rows(positions.size() == 0 ? 0 : positions.maxCoeff() + 1)),
              m_values(static_cast<std::size_t>(rope.m_options.rotary_dim)) {
            for (std::vector<Scalar>& scratch : m_scratch) scratch.reserve(static_cast<std::size_t>(rope.m_options.rotary_dim));
        }
        /// The row of a token whose three positions are `ids`: valid until the next call.
        template <typename Column>
        const Scalar* of(const Column& ids) {
            const Index pairs = m_rope.m_pairs;
            const Scalar* axis_rows[3];
            for (Index a = 0; a < 3; ++a)
                axis_rows[a] = m_rope.position_row(m_rows, ids(a), m_scratch[static_cast<std::size_t>(a)]);
            for (Index i = 0; i < pairs; ++i) {
                const Scalar* from = axis_rows[m_rope.multimodal_axis(i)];
                m_values[static_cast<std::size_t>(i)] = from[i];
                m_values[static_cast<std::size_t>(pairs + i)] = from[pairs + i];
            }
            return m_values.data();
        }

    private:
        const RotaryEmbedding& m_rope;
        CallRows m_rows;
        std::vector<Scalar> m_scratch[3];
        std::vector<Scalar> m_values;
    };

    template <typename A>
    void apply_multimodal_of(Eigen::Ref<RowMatrix<A>>& q, Eigen::Ref<RowMatrix<A>>& k, Index q_heads, Index k_heads,
                             const Eigen::Ref<const MultimodalPositions>& positions, bool transpose) const {
        const Index tokens = positions.cols();
        require_same_tokens<A>(q, k);
        const bool rotate_q = require_activations<A>("q", q, q_heads, tokens, "the positions' columns");
        const bool rotate_k = require_activations<A>("k", k, k_heads, tokens, "the positions' columns");
        require_multimodal(positions);
        if (!rotate_q && !rotate_k) return;
        const detail::RotateFunction<Scalar, A> rotate = detail::rotary_kernel<Scalar, A>();
        MultimodalRow row(*this, positions);  // allocates before the first row is turned
        std::vector<Scalar> negated_sines(transpose ? static_cast<std::size_t>(m_pairs) : 0);
        const bool interleaved = m_options.layout == RotaryLayout::interleaved;
        for (Index r = 0; r < tokens; ++r) {
            const Scalar* values = row.of(positions.col(r));
            const Scalar* sines = values + m_pairs;
            if (transpose) {  // the rotation by the negative angle
                for (Index i = 0; i < m_pairs; ++i) negated_sines[static_cast<std::size_t>(i)] = -sines[i];
                sines = negated_sines.data();
            }
            detail::TokenHeads<A> token;
            token.head_dim = head_dim();
            if (rotate_q) {
                token.q = q.row(r).data();
                token.q_heads = q_heads;
            }
            if (rotate_k) {
                token.k = k.row(r).data();
                token.k_heads = k_heads;
            }
            rotate(values, sines, m_pairs, interleaved, token);
        }
    }

    RotaryOptions m_options;
    Index m_pairs;
    bool m_per_call;                   // dynamic and longrope choose their frequencies per call
    double m_attention_scaling = 1.0;  // Hugging Face's Python float
    long double m_exact_scaling = 1;   // the same factor over the reals (exact mode)
    float m_scale32 = 1.0f;            // follow mode: f32(attention_scaling)
    // The frequencies of m_table: fixed mode's, or per call those of calls within the trained
    // length (default, short factors). Shared so that a call holds them or frequencies of its
    // own alike; never written after construction.
    std::shared_ptr<const FrequencySet> m_base;
    // Per-call longrope: the long factors' frequencies and table (every position).
    std::shared_ptr<const FrequencySet> m_long;
    std::optional<detail::RowTable<Scalar>> m_long_table;
    // Per-call dynamic NTK: the frequencies of recent call lengths past the trained length.
    std::shared_ptr<FrequencyCache> m_cache = std::make_shared<FrequencyCache>();
    // [cos | sin] per position, pairs values each: 64-byte aligned rows, huge pages when large.
    detail::RowTable<Scalar> m_table;
};

}  // namespace seqembed
