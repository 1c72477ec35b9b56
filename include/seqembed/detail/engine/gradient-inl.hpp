// detail/engine/gradient-inl.hpp: the element loops of the backward's sums (detail/backward.hpp).
//
// No include guard, by design: kernels-inl.hpp includes this file once per ISA, inside namespace
// seqembed::detail::<isa>_isa and that ISA's target region. The reads' loops are plain C++ that
// the compiler vectorises for the region's target; LayerNorm's row backward is written in the
// vector layer (Lanes), in WideScalar lanes. Every operation is one IEEE operation per element
// (a product of two floats in double is exact; a product of doubles is rounded on its own,
// never fused into the sum), so every ISA gives the scalar backend's bits. The entry points
// are not inlined into their callers, which would lose what their restrict pointers promise.

/// The element loops of the backward over Scalar values, WideScalar sums.
template <typename Scalar>
struct GradientKernel {
    using Wide = WideScalar<Scalar>;

    /// The `lanes` mask bits of elements [at, at + lanes) from flat kept bits, bit k for element
    /// at + k (the word past the last element's is readable: kept_bits ends in a zero word).
    template <int lanes>
    SEQEMBED_DETAIL_BLOCK static std::uint32_t mask_bits(const std::uint64_t* kept, std::uint64_t at) noexcept {
        const std::uint64_t shift = at % 64;
        std::uint64_t bits = kept[at / 64] >> shift;
        if (shift + lanes > 64) bits |= kept[at / 64 + 1] << (64 - shift);
        return static_cast<std::uint32_t>(bits & ((std::uint64_t{1} << lanes) - 1));
    }

    /// values[j] through its mask, one element at a time.
    SEQEMBED_DETAIL_BLOCK static Scalar masked_value(const Scalar* values, const SpanMask<Scalar>& mask,
                                                     Index j) noexcept {
        if (mask.kept == nullptr) return values[j];
        const std::uint64_t at = mask.first_element + static_cast<std::uint64_t>(j);
        return values[j] * (((mask.kept[at / 64] >> (at % 64)) & 1u) != 0 ? mask.keep_scale : Scalar(0));
    }

    /// out[j] = factor x values[j] + 0 for j in [0, count), each value through its mask: the
    /// whole vectors at aligned addresses with streaming stores, the values before and after
    /// them one by one.
    static void stream_products(Scalar factor, const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                const SpanMask<Scalar>& mask, Index count, Scalar* SEQEMBED_DETAIL_RESTRICT out) noexcept {
        using D = Lanes<Scalar>;
        constexpr auto vector_bytes = static_cast<std::uintptr_t>(D::count) * sizeof(Scalar);
        const auto misalign = static_cast<Index>((reinterpret_cast<std::uintptr_t>(out) % vector_bytes) / sizeof(Scalar));
        const Index head = misalign == 0 ? 0 : std::min<Index>(count, D::count - misalign);
        Index j = 0;
        for (; j < head; ++j) out[j] = factor * masked_value(values, mask, j) + Scalar(0);
        const typename D::Reg factors = D::set(factor);
        const typename D::Reg zero = D::set(Scalar(0));
        if (mask.kept == nullptr) {
            for (; j + D::count <= count; j += D::count)
                D::stream(out + j, D::add(D::mul(D::load(values + j), factors), zero));
            for (; j < count; ++j) out[j] = factor * values[j] + Scalar(0);
            return;
        }
        const SpanMask<Scalar> rest{mask.kept, mask.first_element + static_cast<std::uint64_t>(j), mask.keep_scale};
        each_masked_vector(
            values + j, rest, count - j,
            [&](Index k, typename D::Reg value) { D::stream(out + j + k, D::add(D::mul(value, factors), zero)); },
            [&](Index k, Scalar value) { out[j + k] = factor * value + Scalar(0); });
    }

    /// Runs body(j) for every j in [0, count): blocks of 16 first, a fixed count, which GCC's
    /// -O2 cost model vectorises (it leaves loops of unknown count that would need a remainder
    /// loop), then the rest.
    template <typename Body>
    SEQEMBED_DETAIL_BLOCK static void each_value(Index count, const Body& body) noexcept {
        Index j = 0;
        for (; j + 16 <= count; j += 16)
            for (Index k = 0; k < 16; ++k) body(j + k);
        for (; j < count; ++j) body(j);
    }

    /// Runs body(j, value) for every j in [0, count), value values[j] through its mask, in
    /// blocks of 16 as each_value: a block's 16 mask bits are read at once, and each value is
    /// multiplied by its factor in the loop that uses it (a buffer of masked values cost the
    /// backward more than the multiplications: its stores wait behind the streaming stores).
    template <typename Body>
    SEQEMBED_DETAIL_BLOCK static void each_masked(const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                  const SpanMask<Scalar>& mask, Index count, const Body& body) noexcept {
        if (mask.kept == nullptr) {
            each_value(count, [&](Index j) { body(j, values[j]); });
            return;
        }
        const Scalar keep = mask.keep_scale;
        Index j = 0;
        for (; j + 16 <= count; j += 16) {
            const std::uint32_t bits = mask_bits<16>(mask.kept, mask.first_element + static_cast<std::uint64_t>(j));
            for (Index k = 0; k < 16; ++k)
                body(j + k, values[j + k] * ((bits & (std::uint32_t{1} << k)) != 0 ? keep : Scalar(0)));
        }
        for (; j < count; ++j) body(j, masked_value(values, mask, j));
    }

    /// Whether reads through a mask run in explicit vectors (each_masked_vector): on every backend
    /// but the scalar one, whose compiled loops (each_masked) are the reference.
    static constexpr bool masked_in_vectors = Lanes<Scalar>::count > 1;
    /// Whether the reads that keep Wide sums do too: for float, on a backend whose float vector
    /// widens into two of its double vectors (each_masked_wide).
    static constexpr bool widened_in_vectors = masked_in_vectors && !std::is_same_v<Wide, Scalar> &&
                                               Lanes<Scalar>::count == 2 * Lanes<Wide>::count;

    /// Runs vector(j, v) for each whole vector of Lanes<Scalar> in [0, count), v its values
    /// through their mask (value x keep_scale or x 0, in Scalar, as each_masked), and single(j,
    /// value) for each value after them. The mask's bits are read a 64-bit word per 64 values and
    /// select each vector's factor in a register (kept_or_zero): each_masked's compiled loop
    /// shifted and tested them lane by lane, a third slower with its row in L1.
    template <typename Vector, typename Single>
    SEQEMBED_DETAIL_BLOCK static void each_masked_vector(const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                         const SpanMask<Scalar>& mask, Index count, const Vector& vector,
                                                         const Single& single) noexcept {
        using D = Lanes<Scalar>;
        const typename D::Reg keep = D::set(mask.keep_scale);
        constexpr Index word_values = 64;
        constexpr std::uint64_t lane_bits = (std::uint64_t{1} << D::count) - 1;
        const auto shift = static_cast<unsigned>(mask.first_element % 64);
        const std::uint64_t* word = mask.kept + mask.first_element / 64;
        Index j = 0;
        for (; j + word_values <= count; j += word_values, ++word) {
            // The word after the last element's is readable (kept_bits ends in a zero word).
            std::uint64_t bits = word[0] >> shift;
            if (shift != 0) bits |= word[1] << (64 - shift);
            SEQEMBED_DETAIL_UNROLL_ALL
            for (Index k = 0; k < word_values; k += D::count) {
                vector(j + k, D::mul(D::load(values + j + k),
                                     D::kept_or_zero(static_cast<std::uint32_t>(bits & lane_bits), keep)));
                bits >>= D::count;
            }
        }
        for (; j + D::count <= count; j += D::count) {
            const std::uint32_t bits = mask_bits<D::count>(mask.kept, mask.first_element + static_cast<std::uint64_t>(j));
            vector(j, D::mul(D::load(values + j), D::kept_or_zero(bits, keep)));
        }
        for (; j < count; ++j) single(j, masked_value(values, mask, j));
    }

    /// each_masked_vector for widened_in_vectors, each Scalar vector handed on as two Wide ones:
    /// vector(j, x) for each Wide vector, single(j, x) for each value after the whole Scalar
    /// vectors, x made Wide (exactly).
    template <typename Vector, typename Single>
    SEQEMBED_DETAIL_BLOCK static void each_masked_wide(const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                       const SpanMask<Scalar>& mask, Index count, const Vector& vector,
                                                       const Single& single) noexcept {
        each_masked_vector(
            values, mask, count,
            [&](Index j, typename Lanes<Scalar>::Reg v) {
                WideReg low;
                WideReg high;
                WideLanes::widen_halves(v, low, high);
                vector(j, low);
                vector(j + WideLanes::count, high);
            },
            [&](Index j, Scalar value) { single(j, static_cast<Wide>(value)); });
    }

    /// Runs body(j, factor x values[j]) for every j in [0, count), each value through its mask,
    /// each product in Wide rounded on its own (exact for float; for double, kept from fusing
    /// with what body adds it to).
    template <typename Body>
    SEQEMBED_DETAIL_BLOCK static void each_product(Index count, Wide factor, const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                   const SpanMask<Scalar>& mask, const Body& body) noexcept {
        if constexpr (!std::is_same_v<Wide, Scalar>) {
            each_masked(values, mask, count, [&](Index j, Scalar value) { body(j, factor * static_cast<Wide>(value)); });
        } else {
            Index j = 0;
            for (; j + 16 <= count; j += 16) {
                Wide products[16];
                for (Index k = 0; k < 16; ++k) products[k] = factor * masked_value(values, mask, j + k);
                keep_in_memory(products);
                for (Index k = 0; k < 16; ++k) body(j + k, products[k]);
            }
            for (; j < count; ++j) {
                Wide product = factor * masked_value(values, mask, j);
                keep_rounded(product);
                body(j, product);
            }
        }
    }

    /// Lanes of Wide values, in which LayerNorm's backward runs (doubles for a float row).
    using WideLanes = Lanes<Wide>;
    using WideReg = typename WideLanes::Reg;
    /// Values a row's sums in norm_row hold apart (value j in lane j % 16), and the registers of
    /// WideLanes that hold them.
    static constexpr int norm_lanes = 16;
    static constexpr int norm_regs = norm_lanes / WideLanes::count;
    /// norm_regs as an array's size.
    static constexpr auto norm_reg_array = static_cast<std::size_t>(norm_regs);
    static_assert(norm_lanes % WideLanes::count == 0 && norm_lanes % Lanes<Scalar>::count == 0,
                  "a backend's vectors divide LayerNorm's 16 lanes");

    /// WideLanes::count values from p, each made a Wide (exactly).
    SEQEMBED_DETAIL_BLOCK static WideReg wide_lanes(const Scalar* p) noexcept {
        if constexpr (std::is_same_v<Scalar, Wide>)
            return WideLanes::load(p);
        else
            return WideLanes::widen(p);
    }

    /// Stores WideLanes::count values to p, each rounded to Scalar.
    SEQEMBED_DETAIL_BLOCK static void store_scalars(Scalar* p, WideReg v) noexcept {
        if constexpr (std::is_same_v<Scalar, Wide>)
            WideLanes::store(p, v);
        else
            WideLanes::store_narrowed(p, v);
    }

    /// Values [j, j + 16) of g through its mask: g + j itself without a mask, else `block`,
    /// filled with the products g x (keep_scale or 0) in Scalar.
    SEQEMBED_DETAIL_BLOCK static const Scalar* masked_block(const Scalar* g, const SpanMask<Scalar>& mask, Index j,
                                                            Scalar* block) noexcept {
        using D = Lanes<Scalar>;
        if (mask.kept == nullptr) return g + j;
        const std::uint32_t bits = mask_bits<norm_lanes>(mask.kept, mask.first_element + static_cast<std::uint64_t>(j));
        const typename D::Reg keep = D::set(mask.keep_scale);
        for (int r = 0; r < norm_lanes / D::count; ++r)
            D::store(block + r * D::count,
                     D::mul(D::load(g + j + r * D::count), D::kept_or_zero(bits >> (r * D::count), keep)));
        return block;
    }

    /// The sum of the 16 lanes of `partial`: lanes 2k and 2k + 1 added, then the same over the
    /// halves until one is left.
    SEQEMBED_DETAIL_BLOCK static Wide lane_total(const WideReg (&partial)[norm_reg_array]) noexcept {
        Wide values[norm_lanes];
        for (int r = 0; r < norm_regs; ++r) WideLanes::store(values + r * WideLanes::count, partial[r]);
        for (int n = norm_lanes / 2; n >= 1; n /= 2)
            for (int k = 0; k < n; ++k) values[k] = values[2 * k] + values[2 * k + 1];
        return values[0];
    }

    /// LayerNorm's backward of one row, in Wide: from the row's input x and the gradient g of its
    /// output (through `mask`), writes the gradient of x to dx and adds g x x_hat and g to the
    /// sums of gamma's and beta's gradients. The mean and the biased variance are x's, as the
    /// forward normalised with. The four sums over the row (x; (x - mean)^2; g x gamma, and
    /// g x gamma x x_hat, the last two divided by the width) run in 16 lanes, value j in lane
    /// j % 16, the lanes added pairwise (lane_total), then the values past the last whole block
    /// in order. Every product is rounded on its own (kept from fusing with what it is added
    /// to), so every ISA gives the scalar backend's bits.
    SEQEMBED_DETAIL_NOINLINE static void norm_row(const Scalar* SEQEMBED_DETAIL_RESTRICT x,
                                                  const Scalar* SEQEMBED_DETAIL_RESTRICT g, const SpanMask<Scalar>& mask,
                                                  const Scalar* SEQEMBED_DETAIL_RESTRICT gamma, Scalar epsilon,
                                                  Index width, Scalar* SEQEMBED_DETAIL_RESTRICT dx,
                                                  Wide* SEQEMBED_DETAIL_RESTRICT gamma_sum,
                                                  Wide* SEQEMBED_DETAIL_RESTRICT beta_sum) noexcept {
        using W = WideLanes;
        constexpr Index step = W::count;
        const Index whole = width / norm_lanes * norm_lanes;
        const auto wide = [](Scalar value) { return static_cast<Wide>(value); };
        const auto count = static_cast<Wide>(width);
        WideReg partial[norm_reg_array];

        for (WideReg& lanes : partial) lanes = W::set(Wide(0));
        for (Index j = 0; j < whole; j += norm_lanes)
            for (int r = 0; r < norm_regs; ++r) partial[r] = W::add(partial[r], wide_lanes(x + j + r * step));
        Wide sum = lane_total(partial);
        for (Index j = whole; j < width; ++j) sum += wide(x[j]);
        const Wide mean = sum / count;
        const WideReg means = W::set(mean);

        for (WideReg& lanes : partial) lanes = W::set(Wide(0));
        for (Index j = 0; j < whole; j += norm_lanes)
            for (int r = 0; r < norm_regs; ++r) {
                const WideReg centred = W::sub(wide_lanes(x + j + r * step), means);
                WideReg square = W::mul(centred, centred);
                W::keep_rounded(square);
                partial[r] = W::add(partial[r], square);
            }
        sum = lane_total(partial);
        for (Index j = whole; j < width; ++j) {
            Wide square = (wide(x[j]) - mean) * (wide(x[j]) - mean);
            keep_rounded(square);
            sum += square;
        }
        const Wide rstd = Wide(1) / std::sqrt(sum / count + wide(epsilon));
        const WideReg rstds = W::set(rstd);

        // x_hat, g x gamma and their product; g x x_hat; each rounded on its own.
        Scalar block[norm_lanes];
        WideReg scaled_partial[norm_reg_array];
        for (int r = 0; r < norm_regs; ++r) scaled_partial[r] = partial[r] = W::set(Wide(0));
        for (Index j = 0; j < whole; j += norm_lanes) {
            const Scalar* g_block = masked_block(g, mask, j, block);
            for (int r = 0; r < norm_regs; ++r) {
                const Index at = j + r * step;
                const WideReg x_hat = W::mul(W::sub(wide_lanes(x + at), means), rstds);
                const WideReg g_lanes = wide_lanes(g_block + r * step);
                WideReg scaled = W::mul(g_lanes, wide_lanes(gamma + at));
                W::keep_rounded(scaled);
                WideReg projected = W::mul(scaled, x_hat);
                W::keep_rounded(projected);
                WideReg weighted = W::mul(g_lanes, x_hat);
                W::keep_rounded(weighted);
                scaled_partial[r] = W::add(scaled_partial[r], scaled);
                partial[r] = W::add(partial[r], projected);
                W::store(gamma_sum + at, W::add(W::load(gamma_sum + at), weighted));
                W::store(beta_sum + at, W::add(W::load(beta_sum + at), g_lanes));
            }
        }
        Wide scaled_sum = lane_total(scaled_partial);
        Wide projected_sum = lane_total(partial);
        for (Index j = whole; j < width; ++j) {
            const Wide g_value = wide(masked_value(g, mask, j));
            const Wide x_hat = (wide(x[j]) - mean) * rstd;
            Wide scaled = g_value * wide(gamma[j]);
            keep_rounded(scaled);
            Wide projected = scaled * x_hat;
            keep_rounded(projected);
            Wide weighted = g_value * x_hat;
            keep_rounded(weighted);
            scaled_sum += scaled;
            projected_sum += projected;
            gamma_sum[j] += weighted;
            beta_sum[j] += g_value;
        }
        const Wide scaled_mean = scaled_sum / count;
        const Wide projected_mean = projected_sum / count;
        const WideReg scaled_means = W::set(scaled_mean);
        const WideReg projected_means = W::set(projected_mean);

        // dx = rstd ((g x gamma - its mean) - x_hat x the projection's mean).
        for (Index j = 0; j < whole; j += norm_lanes) {
            const Scalar* g_block = masked_block(g, mask, j, block);
            for (int r = 0; r < norm_regs; ++r) {
                const Index at = j + r * step;
                const WideReg x_hat = W::mul(W::sub(wide_lanes(x + at), means), rstds);
                WideReg scaled = W::mul(wide_lanes(g_block + r * step), wide_lanes(gamma + at));
                W::keep_rounded(scaled);
                WideReg shifted = W::mul(x_hat, projected_means);
                W::keep_rounded(shifted);
                store_scalars(dx + at, W::mul(rstds, W::sub(W::sub(scaled, scaled_means), shifted)));
            }
        }
        for (Index j = whole; j < width; ++j) {
            const Wide x_hat = (wide(x[j]) - mean) * rstd;
            Wide scaled = wide(masked_value(g, mask, j)) * wide(gamma[j]);
            keep_rounded(scaled);
            Wide shifted = x_hat * projected_mean;
            keep_rounded(shifted);
            dx[j] = static_cast<Scalar>(rstd * ((scaled - scaled_mean) - shifted));
        }
    }

    /// apply's roles through a mask in explicit vectors, for masked_in_vectors: a row's only read
    /// into a row that is not streamed and a pair's first read in Scalar vectors, the roles with
    /// Wide sums in Wide vectors for widened_in_vectors (apply_widened). The same operations as
    /// apply's loops. False for a role left to them.
    SEQEMBED_DETAIL_BLOCK static bool apply_in_vectors(ReadRole role, Scalar factor,
                                                       const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                       const SpanMask<Scalar>& mask, Index count,
                                                       Wide* SEQEMBED_DETAIL_RESTRICT sum,
                                                       Scalar* SEQEMBED_DETAIL_RESTRICT out) noexcept {
        using D = Lanes<Scalar>;
        using Reg = typename D::Reg;
        if (role == ReadRole::only) {
            const Reg factors = D::set(factor);
            const Reg zero = D::set(Scalar(0));
            each_masked_vector(
                values, mask, count, [&](Index j, Reg v) { D::store(out + j, D::add(D::mul(v, factors), zero)); },
                [&](Index j, Scalar value) { out[j] = factor * value + Scalar(0); });
            return true;
        }
        if (role == ReadRole::first_of_two) {
            each_masked_vector(
                values, mask, count, [&](Index j, Reg v) { D::store(out + j, v); },
                [&](Index j, Scalar value) { out[j] = value; });
            return true;
        }
        if constexpr (widened_in_vectors) return apply_widened(role, factor, values, mask, count, sum, out);
        return false;
    }

    /// apply_in_vectors's roles that read or write Wide sums, for widened_in_vectors.
    SEQEMBED_DETAIL_BLOCK static bool apply_widened(ReadRole role, Scalar factor, const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                                    const SpanMask<Scalar>& mask, Index count,
                                                    Wide* SEQEMBED_DETAIL_RESTRICT sum,
                                                    Scalar* SEQEMBED_DETAIL_RESTRICT out) noexcept {
        using W = WideLanes;
        const auto f = static_cast<Wide>(factor);
        const WideReg factors = W::set(f);
        const WideReg zero = W::set(Wide(0));
        switch (role) {
            case ReadRole::first:
                each_masked_wide(
                    values, mask, count, [&](Index j, WideReg x) { W::store(sum + j, W::add(W::mul(factors, x), zero)); },
                    [&](Index j, Wide x) { sum[j] = f * x + Wide(0); });
                return true;
            case ReadRole::middle:
                each_masked_wide(
                    values, mask, count,
                    [&](Index j, WideReg x) { W::store(sum + j, W::add(W::load(sum + j), W::mul(factors, x))); },
                    [&](Index j, Wide x) { sum[j] += f * x; });
                return true;
            case ReadRole::last:
                each_masked_wide(
                    values, mask, count,
                    [&](Index j, WideReg x) { W::store_narrowed(out + j, W::add(W::load(sum + j), W::mul(factors, x))); },
                    [&](Index j, Wide x) { out[j] = static_cast<Scalar>(sum[j] + f * x); });
                return true;
            case ReadRole::last_of_two:
                each_masked_wide(
                    values, mask, count,
                    [&](Index j, WideReg x) {
                        const WideReg first = W::add(W::mul(factors, W::widen(out + j)), zero);
                        W::store_narrowed(out + j, W::add(first, W::mul(factors, x)));
                    },
                    [&](Index j, Wide x) { out[j] = static_cast<Scalar>((f * static_cast<Wide>(out[j]) + Wide(0)) + f * x); });
                return true;
            default:
                return false;
        }
    }

    /// Carries out one read's role over `count` values: values the read's values (each through
    /// `mask` as it is read), sum its row's sums, out its row's gradient. With `streaming`, out
    /// is a gradient row the pass does not read again, and a row's only read writes its whole
    /// aligned vectors with streaming stores (no read for ownership); the caller then calls
    /// fence() before another thread reads them.
    SEQEMBED_DETAIL_NOINLINE static void apply(ReadRole role, Scalar factor, const Scalar* SEQEMBED_DETAIL_RESTRICT values,
                                               const SpanMask<Scalar>& mask, Index count,
                                               Wide* SEQEMBED_DETAIL_RESTRICT sum, Scalar* SEQEMBED_DETAIL_RESTRICT out,
                                               bool streaming) noexcept {
        const auto f = static_cast<Wide>(factor);
        if constexpr (masked_in_vectors) {
            if (mask.kept != nullptr && !(role == ReadRole::only && streaming) &&
                apply_in_vectors(role, factor, values, mask, count, sum, out))
                return;
        }
        switch (role) {
            case ReadRole::only:
                // 0 + f x value rounded once is the Scalar product plus 0: the Wide product of two
                // Scalars is exact for float, and adding 0 only turns -0 into +0.
                if (streaming) {
                    stream_products(factor, values, mask, count, out);
                } else {
                    each_masked(values, mask, count, [&](Index j, Scalar value) { out[j] = factor * value + Scalar(0); });
                }
                break;
            case ReadRole::first:
                each_masked(values, mask, count,
                            [&](Index j, Scalar value) { sum[j] = f * static_cast<Wide>(value) + Wide(0); });
                break;
            case ReadRole::middle:
                each_product(count, f, values, mask, [&](Index j, Wide product) { sum[j] += product; });
                break;
            case ReadRole::last:
                each_product(count, f, values, mask,
                             [&](Index j, Wide product) { out[j] = static_cast<Scalar>(sum[j] + product); });
                break;
            case ReadRole::first_of_two:
                each_masked(values, mask, count, [&](Index j, Scalar value) { out[j] = value; });
                break;
            case ReadRole::last_of_two:
                // Only for pairs_in_place: both products exact, so no contraction changes a bit.
                each_masked(values, mask, count, [&](Index j, Scalar value) {
                    out[j] = static_cast<Scalar>((f * static_cast<Wide>(out[j]) + Wide(0)) + f * static_cast<Wide>(value));
                });
                break;
        }
    }
};
