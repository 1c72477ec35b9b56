// detail/engine/kernels-inl.hpp: the kernels, written once over the vector layer.
//
// No include guard, by design: detail/engine/kernels.hpp includes this file once per ISA, inside
// namespace seqembed::detail::<isa>_isa and that ISA's target region, after the ISA's vector
// layer (Lanes<Scalar>, MaskWords, stream_fence) is declared there. Everything here is compiled for
// that ISA; nothing here may depend on which one it is.


/// Words first .. first + count - 1 of the mask of `key` (detail/random/dropout_layout.hpp),
/// drawn with this ISA's MaskWords the way `draw` says (one MaskWords::runs() accepts).
inline void mask_words(const DropoutKey& key, std::uint64_t first, Index count, std::uint64_t* out,
                       MaskDraw draw = MaskWords::fastest()) noexcept {
    const MaskWords words(key, draw);
    for (Index k = 0; k < count; ++k) out[k] = words.word(first + static_cast<std::uint64_t>(k));
}

/// A row's dropout bits, 64 at a time from any element: words of this ISA's MaskWords, the last
/// two drawn kept in a MaskCache (the carry's, for the rows after), so that bits read across a
/// word's end draw each word once.
class MaskWindow {
public:
    MaskWindow(const MaskWords& words, MaskCache& cache) noexcept : m_words(words), m_cache(cache) {}

    /// The kept bits of the 64 elements from `element` on, bit i for element + i.
    SEQEMBED_DETAIL_BLOCK std::uint64_t bits(std::uint64_t element) noexcept {
        const std::uint64_t index = element / 64;
        const auto shift = static_cast<unsigned>(element % 64);
        if (shift == 0) return m_words.word(index);  // a word read whole is read once
        return (word(index) >> shift) | (word(index + 1) << (64 - shift));
    }

private:
    /// Word `index`, drawn unless held.
    SEQEMBED_DETAIL_BLOCK std::uint64_t word(std::uint64_t index) noexcept {
        if (index == m_cache.index[1]) return m_cache.word[1];
        if (index == m_cache.index[0]) return m_cache.word[0];
        const std::uint64_t drawn = m_words.word(index);
        m_cache.index[0] = m_cache.index[1];
        m_cache.word[0] = m_cache.word[1];
        m_cache.index[1] = index;
        m_cache.word[1] = drawn;
        return drawn;
    }

    const MaskWords& m_words;
    MaskCache& m_cache;
};

/// No mask: what the row kernel reads where it does not drop.
struct NoMask {
    NoMask(const MaskWords&, MaskCache&) noexcept {}
    std::uint64_t bits(std::uint64_t) const noexcept { return 0; }
};

/// The row kernel: output rows of Scalar from table rows of Storage, written in vectors of
/// Lanes<Scalar>::count lanes aligned to the output, so that each can be streamed. A row's first
/// and last elements that share a vector with the rows beside it are computed one by one into
/// the carried vector, written whole when full (the rows lie end to end) or element by element at
/// the end. Every element is Scalar(table value) * scale, rounded, (+ type) + position, rounded,
/// (LayerNorm,) x the dropout factor: the same operations in every lane and every backend.
/// LayerNorm's mean and variance are sums of 64 partial sums (element j in partial j mod 64, in
/// order of j) added pairwise, whatever the vector width, so they too are the same bits
/// everywhere; the row is read once from memory and its later passes find it in L1.
template <typename Scalar, typename Storage>
struct RowKernel {
    using V = Lanes<Scalar>;
    using Reg = typename V::Reg;
    static constexpr int lanes = V::count;
    static constexpr std::uintptr_t vector_bytes = sizeof(Scalar) * static_cast<std::uintptr_t>(lanes);
    static constexpr Index vectors_per_line = std::max<Index>(1, static_cast<Index>(64 / vector_bytes));

    /// Writes rows[0 .. count); ahead[k] (null for none) is the table row whose lines are requested
    /// while row k is written (the row of a token some way on).
    static void write(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
                      const RowSources<Scalar, Storage>* rows, Index count,
                      const Storage* const* ahead) noexcept {
        const MaskWords words(job.key);  // once for the rows: its round keys take a while
        if (job.normalizing && job.width <= static_cast<Index>(scratch_values)) {
            write_normalized(job, carry, words, rows, count, ahead);
            return;
        }
        for (Index k = 0; k < count; ++k) {
            const RowSources<Scalar, Storage>& row = rows[k];
            const Storage* next = ahead == nullptr ? nullptr : ahead[k];
            if (row.embedding == nullptr) {
                write_zeros(job, carry, row.out);
            } else {
                dispatch_row(job, carry, words, row, next);
            }
        }
    }

    /// Writes what is carried, element by element, and orders the streaming stores before what
    /// follows. Called once after the last row of a pass.
    static void finish(const RowJob<Scalar>& job, RowCarry<Scalar>& carry) noexcept {
        flush(carry);
        if (job.streaming) stream_fence();
    }

private:
    /// Whether evaluation finds LayerNorm's next row's moments between the stores of the row it
    /// writes: for tables of Scalar. Measured (docs/performance.md), it is faster for float
    /// tables, and slower for bfloat16 tables and in training, where the dropout draw's
    /// registers and the moments' do not fit together.
    static constexpr bool moments_between_stores = std::is_same_v<Storage, Scalar>;

    /// LayerNorm rows that fit the scratch rows, written in order. The moments of row k + 1 are
    /// found before row k is written, so that the end of one row's reductions (dependent
    /// additions, the square root and the division) overlaps the other's output pass instead of
    /// stalling it; in evaluation with moments_between_stores, as row k is written, a group of
    /// 64 values per 64 values written (MomentsSteps), so that the next row's reads run between
    /// this row's stores instead of apart from them. The moments are the same bits either way.
    static void write_normalized(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, const MaskWords& words,
                                 const RowSources<Scalar, Storage>* rows, Index count,
                                 const Storage* const* ahead) noexcept {
        alignas(64) Scalar scratch[2][scratch_values];
        Moments moments[2] = {};
        const auto find = [&](Index k) {
            moments[k % 2] = with_sources(job, rows[k], [&](const auto& sums) {
                return find_moments(sums, job.width, job.epsilon, scratch[k % 2]);
            });
        };
        if (count > 0 && rows[0].embedding != nullptr) find(0);
        for (Index k = 0; k < count; ++k) {
            const RowSources<Scalar, Storage>& row = rows[k];
            const Storage* next = ahead == nullptr ? nullptr : ahead[k];
            const bool next_found = k + 1 < count && rows[k + 1].embedding != nullptr;
            if (row.embedding == nullptr) {
                write_zeros(job, carry, row.out);
                if (next_found) find(k + 1);
                continue;
            }
            const Normalized<KeptSums> values(job, KeptSums{scratch[k % 2]}, moments[k % 2]);
            if constexpr (moments_between_stores) {
                if (next_found && !job.dropping) {
                    MomentsSteps<SourceSums<any_count>> steps(SourceSums<any_count>(job, rows[k + 1]), job.width,
                                                              job.epsilon, scratch[(k + 1) % 2]);
                    write_row<false>(job, carry, words, row, next, values, &steps);
                    moments[(k + 1) % 2] = steps.finish();
                    continue;
                }
            }
            if (next_found) find(k + 1);
            dispatch_dropping(job, carry, words, row, next, values);
        }
    }

    static void dispatch_row(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, const MaskWords& words,
                             const RowSources<Scalar, Storage>& row, const Storage* ahead) noexcept {
        if (job.normalizing) {  // a row too wide to keep (write_normalized has the others): summed again
            const SourceSums<any_count> sums(job, row);
            const Moments moments = find_moments(sums, job.width, job.epsilon, nullptr);
            dispatch_dropping(job, carry, words, row, ahead, Normalized<SourceSums<any_count>>(job, sums, moments));
        } else {
            with_sources(job, row, [&](const auto& sums) {
                dispatch_dropping(job, carry, words, row, ahead, sums);
                return 0;
            });
        }
    }

    /// Nothing to do alongside a row's stores.
    struct NothingAlongside {
        void step() noexcept {}
    };

    template <typename Values>
    static void dispatch_dropping(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, const MaskWords& words,
                                  const RowSources<Scalar, Storage>& row, const Storage* ahead,
                                  const Values& values) noexcept {
        NothingAlongside* const nothing = nullptr;
        if (job.dropping) {
            write_row<true>(job, carry, words, row, ahead, values, nothing);
        } else {
            write_row<false>(job, carry, words, row, ahead, values, nothing);
        }
    }

    static Reg load_table(const Storage* p) noexcept {
        if constexpr (std::is_same_v<Storage, Scalar>) {
            return V::load(p);
        } else {
            return V::widen(p);
        }
    }

    static Scalar table_value(const Storage* p) noexcept {
        if constexpr (std::is_same_v<Storage, Scalar>) {
            return *p;
        } else {
            return scalar_isa::Lanes<Scalar>::widen(p);
        }
    }

    /// How many rows a SourceSums adds when that is known only at run time.
    static constexpr int any_count = -1;

    /// A row's sums from its sources: v = Scalar(embedding[j]) * scale, rounded, then + each
    /// added row in order. Added is the number of added rows, known at compile time so that the
    /// loops hold no test (one instantiation per count: a further source adds one), or any_count
    /// for rows summed rarely enough that a loop over the count costs nothing measurable.
    template <int Added>
    struct SourceSums {
        SourceSums(const RowJob<Scalar>& job, const RowSources<Scalar, Storage>& row) noexcept
            : embedding(row.embedding), count(Added == any_count ? row.added_count : Added), scale(job.scale),
              scales(V::set(job.scale)) {
            for (int k = 0; k < RowSources<Scalar, Storage>::max_added; ++k) added[k] = row.added[k];
        }
        Scalar scalar(Index j) const noexcept {
            Scalar value = table_value(embedding + j) * scale;
            keep_rounded(value);
            for_each_added([&](const Scalar* row) { value = value + row[j]; });
            return value;
        }
        Reg vector(Index j) const noexcept {
            Reg value = V::mul(load_table(embedding + j), scales);
            V::keep_rounded(value);
            for_each_added([&](const Scalar* row) { value = V::add(value, V::load(row + j)); });
            return value;
        }
        /// Calls add(row) for each added row, in order: unrolled when the count is known.
        template <typename Add>
        void for_each_added(Add&& add) const noexcept {
            if constexpr (Added == any_count) {
                for (int k = 0; k < count; ++k) add(added[k]);
            } else {
                for_each_of(add, std::make_integer_sequence<int, Added>{});
            }
        }
        template <typename Add, int... K>
        void for_each_of(Add& add, std::integer_sequence<int, K...>) const noexcept {
            (add(added[K]), ...);
        }
        const Storage* embedding;
        const Scalar* added[RowSources<Scalar, Storage>::max_added];
        int count;
        Scalar scale;
        Reg scales;
    };

    /// A row's sums as find_moments kept them in a scratch row.
    struct KeptSums {
        Scalar scalar(Index j) const noexcept { return kept[j]; }
        Reg vector(Index j) const noexcept { return V::load(kept + j); }
        const Scalar* kept;
    };

    /// Calls visit with the SourceSums of a row's count of added rows.
    template <typename Visit>
    static decltype(auto) with_sources(const RowJob<Scalar>& job, const RowSources<Scalar, Storage>& row,
                                       Visit&& visit) noexcept {
        return with_count<0>(job, row, visit);
    }
    template <int Added, typename Visit>
    static decltype(auto) with_count(const RowJob<Scalar>& job, const RowSources<Scalar, Storage>& row,
                                     Visit& visit) noexcept {
        if constexpr (Added < RowSources<Scalar, Storage>::max_added) {
            if (row.added_count != Added) return with_count<Added + 1>(job, row, visit);
        }
        return visit(SourceSums<Added>(job, row));
    }

    /// LayerNorm's mean and 1 / sqrt(variance + epsilon) of a row.
    struct Moments {
        Scalar mean;
        Scalar rstd;
    };

    /// A row normalized: ((v - mean) * rstd) * gamma[j] + beta[j], each product rounded, v from
    /// Sums.
    template <typename Sums>
    struct Normalized {
        Normalized(const RowJob<Scalar>& job, const Sums& row_sums, Moments moments) noexcept
            : sums(row_sums), gamma(job.gamma), beta(job.beta), mean(moments.mean), rstd(moments.rstd),
              means(V::set(moments.mean)), rstds(V::set(moments.rstd)) {}
        Scalar scalar(Index j) const noexcept {
            Scalar scaled = (sums.scalar(j) - mean) * rstd;
            keep_rounded(scaled);
            Scalar weighted = scaled * gamma[j];
            keep_rounded(weighted);
            return weighted + beta[j];
        }
        Reg vector(Index j) const noexcept {
            Reg scaled = V::mul(V::sub(sums.vector(j), means), rstds);
            V::keep_rounded(scaled);
            Reg weighted = V::mul(scaled, V::load(gamma + j));
            V::keep_rounded(weighted);
            return V::add(weighted, V::load(beta + j));
        }
        Sums sums;
        const Scalar* gamma;
        const Scalar* beta;
        Scalar mean;
        Scalar rstd;
        Reg means;
        Reg rstds;
    };

    /// Partial sums of a row's LayerNorm reductions: element j goes to partial j mod 64, enough
    /// independent chains of additions to keep the adders busy with 16-lane vectors.
    static constexpr int partial_sums = 64;
    /// Values of the stack row that keeps a row's sums between LayerNorm's passes (16 KiB).
    static constexpr std::size_t scratch_values = 16384 / sizeof(Scalar);
    static_assert(partial_sums % lanes == 0, "a vector's lanes must divide the partial sums");

    /// Vectors holding the partial sums: sums[k] holds partials k * lanes .. k * lanes + lanes - 1.
    static constexpr int partial_vectors = partial_sums / lanes;
    using PartialVectors = Reg[static_cast<std::size_t>(partial_vectors)];

    /// The sum of the partial sums, added pairwise in a fixed order: partial k + partial k + half
    /// for half = 32, 16, ..., 1. The halves of a vector or more are vector additions, the rest
    /// the vector layer's pairwise lane sum: the same additions on every ISA.
    SEQEMBED_DETAIL_BLOCK static Scalar add_partials(PartialVectors& sums) noexcept {
        SEQEMBED_DETAIL_UNROLL_ALL
        for (int half = partial_vectors / 2; half >= 1; half /= 2) {
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int k = 0; k < half; ++k) sums[k] = V::add(sums[k], sums[k + half]);
        }
        return V::pairwise_sum(sums[0]);
    }

    /// Adds the values of a row's tail (j >= whole, not a whole vector of partials) to partial
    /// j mod 64, through memory.
    template <typename TailValue>
    static void add_tail(PartialVectors& sums, Index whole, Index width, TailValue&& value) noexcept {
        if (whole == width) return;
        alignas(64) Scalar partial[partial_sums];
        for (int k = 0; k < partial_vectors; ++k) V::store(partial + k * lanes, sums[k]);
        for (Index j = whole; j < width; ++j) partial[j % partial_sums] += value(j);
        for (int k = 0; k < partial_vectors; ++k) sums[k] = V::load(partial + k * lanes);
    }

    /// LayerNorm's mean and 1 / sqrt(variance + epsilon) of a row's sums (biased variance, as
    /// torch.nn.LayerNorm), in Scalar. One pass sums the offsets d = v - shift from the mean of
    /// the row's first 64 values, and their squares: mean = shift + mean(d) and variance =
    /// mean(d^2) - mean(d)^2, which loses little to cancellation while mean(d)^2 is at most a
    /// quarter of mean(d^2) (the shift within about half a standard deviation of the mean: nearly
    /// every row). Otherwise, and for rows narrower than 64, a second pass sums the squares of
    /// the values centred on the mean. With a scratch row (width values), the first pass keeps
    /// the sums there and the second reads them instead of the sources. The first pass goes a
    /// group of 64 values a step (step()), so that write_normalized can take the next row's
    /// steps between the stores of the row it writes; finish() takes the steps left and the rest.
    template <typename Sums>
    struct MomentsSteps {
        SEQEMBED_DETAIL_BLOCK MomentsSteps(const Sums& row_sums, Index row_width, Scalar row_epsilon,
                                           Scalar* row_scratch) noexcept
            : sums_of(row_sums), width(row_width), whole(row_width / partial_sums * partial_sums),
              epsilon(row_epsilon), scratch(row_scratch), next(whole), shifts(V::set(Scalar(0))) {
            if (whole == 0) return;  // the centred pass alone, in finish
            PartialVectors first;
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int k = 0; k < partial_vectors; ++k) {
                first[k] = sums_of.vector(k * lanes);
                if (scratch != nullptr) V::store(scratch + k * lanes, first[k]);
                sums[k] = first[k];
            }
            shift = add_partials(sums) / static_cast<Scalar>(partial_sums);
            shifts = V::set(shift);
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int k = 0; k < partial_vectors; ++k) {
                sums[k] = V::set(Scalar(0));
                squares[k] = V::set(Scalar(0));
                accumulate(k, first[k]);
            }
            next = partial_sums;
        }

        /// Adds the next 64 values of the first pass, when some are left.
        SEQEMBED_DETAIL_BLOCK void step() noexcept {
            if (next >= whole) return;
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int k = 0; k < partial_vectors; ++k) {
                const Reg value = sums_of.vector(next + k * lanes);
                if (scratch != nullptr) V::store(scratch + next + k * lanes, value);
                accumulate(k, value);
            }
            next += partial_sums;
        }

        /// The moments, the first pass's steps left taken first.
        SEQEMBED_DETAIL_BLOCK Moments finish() noexcept {
            while (next < whole) step();
            const auto count = static_cast<Scalar>(width);
            Scalar mean = Scalar(0);
            Scalar variance = Scalar(0);
            bool centred = whole == 0;
            if (centred) {
                for (Reg& sum : sums) sum = V::set(Scalar(0));
                add_tail(sums, whole, width, [&](Index j) {
                    const Scalar value = sums_of.scalar(j);
                    if (scratch != nullptr) scratch[j] = value;
                    return value;
                });
                mean = add_partials(sums) / count;
            } else {
                Scalar tail_offsets[partial_sums];
                add_tail(sums, whole, width, [&](Index j) {
                    const Scalar value = sums_of.scalar(j);
                    if (scratch != nullptr) scratch[j] = value;
                    return tail_offsets[j - whole] = value - shift;
                });
                add_tail(squares, whole, width, [&](Index j) {
                    const Scalar offset = tail_offsets[j - whole];
                    Scalar square = offset * offset;
                    keep_rounded(square);
                    return square;
                });
                const Scalar mean_offset = add_partials(sums) / count;
                const Scalar mean_square = add_partials(squares) / count;
                Scalar offset_square = mean_offset * mean_offset;
                keep_rounded(offset_square);
                mean = shift + mean_offset;
                variance = mean_square - offset_square;
                // Written so that a NaN takes the second pass too.
                centred = !(offset_square * Scalar(4) <= mean_square);
            }
            if (centred) {
                variance = scratch != nullptr ? centred_variance(KeptSums{scratch}, width, mean)
                                              : centred_variance(sums_of, width, mean);
            }
            return {mean, Scalar(1) / std::sqrt(variance + epsilon)};
        }

        SEQEMBED_DETAIL_BLOCK void accumulate(int k, Reg value) noexcept {
            const Reg offset = V::sub(value, shifts);
            Reg square = V::mul(offset, offset);
            V::keep_rounded(square);
            sums[k] = V::add(sums[k], offset);
            squares[k] = V::add(squares[k], square);
        }

        const Sums sums_of;  // a copy, which the scratch stores cannot alias
        Index width;
        Index whole;  // values in whole groups of 64
        Scalar epsilon;
        Scalar* scratch;
        Index next;  // the first value of the next step
        Scalar shift = Scalar(0);
        Reg shifts;
        PartialVectors sums;
        PartialVectors squares;
    };

    /// The moments of a row's sums, in one go (MomentsSteps).
    template <typename Sums>
    static Moments find_moments(const Sums& row_sums, Index width, Scalar epsilon, Scalar* scratch) noexcept {
        MomentsSteps<Sums> steps(row_sums, width, epsilon, scratch);
        return steps.finish();
    }

    /// The mean of the squares of a row's sums centred on `mean`, summed as find_moments sums.
    template <typename Sums>
    static Scalar centred_variance(const Sums& sums_of, Index width, Scalar mean) noexcept {
        const Index whole = width / partial_sums * partial_sums;
        const Reg means = V::set(mean);
        PartialVectors sums;
        for (Reg& sum : sums) sum = V::set(Scalar(0));
        for (Index j = 0; j < whole; j += partial_sums) {
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int k = 0; k < partial_vectors; ++k) {
                const Reg centred = V::sub(sums_of.vector(j + k * lanes), means);
                Reg square = V::mul(centred, centred);
                V::keep_rounded(square);
                sums[k] = V::add(sums[k], square);
            }
        }
        add_tail(sums, whole, width, [&](Index j) {
            const Scalar centred = sums_of.scalar(j) - mean;
            Scalar square = centred * centred;
            keep_rounded(square);
            return square;
        });
        return add_partials(sums) / static_cast<Scalar>(width);
    }

    template <bool Dropping>
    static Scalar dropped(const RowJob<Scalar>& job, Scalar value, std::uint32_t kept) noexcept {
        if constexpr (Dropping) value = value * ((kept & 1u) != 0 ? job.keep_scale : Scalar(0));
        return value;
    }

    /// The lines of the table row ahead (null for none), requested while a row is written: one
    /// per line written, from the line that holds the row's first byte (a row that starts inside
    /// a line ends inside one more: requested from its start, that last line would be missed),
    /// and those left after the row.
    struct AheadLines {
        AheadLines(const Storage* ahead, Index width) noexcept
            : next(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(ahead) & ~std::uintptr_t{63})),
              end(ahead == nullptr ? nullptr : reinterpret_cast<const char*>(ahead + width)) {}
        /// Before the row's vector `vector` is written.
        void before(Index vector) noexcept {
            if (next < end && vector % vectors_per_line == 0) {
                request_line(next);
                next += 64;
            }
        }
        /// After the row: the lines not requested yet.
        void finish() noexcept {
            for (; next < end; next += 64) request_line(next);
        }
        const char* next;
        const char* end;
    };

    /// One row. Streaming or cached stores are a test per vector, not a template flag: the test
    /// costs nothing measurable beside a store, and halves the kernel's instantiations.
    /// `alongside`, when given, takes a step() per partial_vectors vectors of the row's body
    /// written (LayerNorm's next row: write_normalized).
    template <bool Dropping, typename Values, typename Alongside>
    static void write_row(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, const MaskWords& words,
                          const RowSources<Scalar, Storage>& row, const Storage* ahead,
                          const Values& row_values, Alongside* alongside) noexcept {
        const Index width = job.width;
        const bool streaming = job.streaming;
        Scalar* const out = row.out;
        const Values values = row_values;  // a local copy, which the stores below cannot alias
        std::conditional_t<Dropping, MaskWindow, NoMask> mask(words, carry.mask);
        const auto misalign = static_cast<int>(
            (reinterpret_cast<std::uintptr_t>(out) % vector_bytes) / sizeof(Scalar));
        if (misalign != 0 && width > 0 && width % lanes == 0) {
            write_row_joined<Dropping>(job, carry, words, row, ahead, values, alongside, misalign);
            return;
        }
        Index j = 0;
        if (misalign != 0) {  // the head: the rest of a vector the previous row began
            const Index head = std::min<Index>(lanes - misalign, width);
            Scalar* held = claim(carry, out - misalign, misalign, misalign + static_cast<int>(head));
            // The head's bits read once (it is shorter than a vector, so than 64 values).
            std::uint64_t kept = 0;
            if constexpr (Dropping) kept = mask.bits(row.first_element);
            for (; j < head; ++j, kept >>= 1)
                held[misalign + j] = dropped<Dropping>(job, values.scalar(j), static_cast<std::uint32_t>(kept & 1u));
            settle_either(job, carry);
        }

        // The body: whole vectors at aligned addresses.
        AheadLines lines(ahead, width);
        const Reg keep = V::set(job.keep_scale);
        Index vector = 0;
        const auto write_vector = [&](std::uint64_t kept) {
            lines.before(vector);
            Reg value = values.vector(j);
            if constexpr (Dropping) value = V::mul(value, V::kept_or_zero(static_cast<std::uint32_t>(kept), keep));
            if (streaming) {
                V::stream(out + j, value);
            } else {
                V::store(out + j, value);
            }
            j += lanes;
            if constexpr (!std::is_same_v<Alongside, NothingAlongside>) {
                if (vector % partial_vectors == 0) alongside->step();
            }
            ++vector;
        };
        if constexpr (Dropping) {
            // The mask's bits 64 at a time, a vector's lanes from each read.
            constexpr Index per_read = 64 / lanes;
            std::uint64_t kept = 0;
            for (Index left = 0; j + lanes <= width; --left, kept >>= lanes % 64) {
                if (left == 0) {
                    kept = mask.bits(row.first_element + static_cast<std::uint64_t>(j));
                    left = per_read;
                }
                write_vector(kept);
            }
        } else {
            while (j + lanes <= width) write_vector(0);
        }

        if (j < width) {  // the tail: the start of a vector the next row may finish
            const auto tail = static_cast<int>(width - j);
            Scalar* held = claim(carry, out + j, 0, tail);
            std::uint64_t kept = 0;  // the tail's bits read once, as the head's
            if constexpr (Dropping) kept = mask.bits(row.first_element + static_cast<std::uint64_t>(j));
            for (int lane = 0; lane < tail; ++lane, ++j, kept >>= 1)
                held[lane] = dropped<Dropping>(job, values.scalar(j), static_cast<std::uint32_t>(kept & 1u));
            settle_either(job, carry);
        }
        lines.finish();
    }

    /// One row of whole vectors (width a positive multiple of lanes) at an output `misalign`
    /// lanes past a vector's start, as every row is when the rows lie end to end: its vectors
    /// computed as though it were aligned, each aligned vector of the output joined from two of
    /// them (V::join), so that nothing is computed value by value. The first aligned vector
    /// takes its first lanes from the carried vector (the previous row's last values), and the
    /// last lanes of the row are carried to the next.
    template <bool Dropping, typename Values, typename Alongside>
    static void write_row_joined(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, const MaskWords& words,
                                 const RowSources<Scalar, Storage>& row, const Storage* ahead,
                                 const Values& values, Alongside* alongside, int misalign) noexcept {
        const Index width = job.width;
        const bool streaming = job.streaming;
        Scalar* const base = row.out - misalign;  // the aligned vector the row begins in
        const int shift = lanes - misalign;
        std::conditional_t<Dropping, MaskWindow, NoMask> mask(words, carry.mask);
        AheadLines lines(ahead, width);
        const Reg keep = V::set(job.keep_scale);
        // The carried lanes [0, misalign) moved to the top, where join takes them from.
        Scalar* held = claim(carry, base, misalign, lanes);
        const Reg carried = V::load(held);
        Reg previous = V::join(carried, carried, misalign);
        constexpr Index per_read = 64 / lanes;
        std::uint64_t kept = 0;
        Index vector = 0;
        for (Index j = 0, left = 0; j < width; j += lanes, ++vector, --left) {
            if constexpr (Dropping) {
                if (left == 0) {
                    kept = mask.bits(row.first_element + static_cast<std::uint64_t>(j));
                    left = per_read;
                } else {
                    kept >>= lanes % 64;
                }
            }
            lines.before(vector);
            Reg value = values.vector(j);
            if constexpr (Dropping) value = V::mul(value, V::kept_or_zero(static_cast<std::uint32_t>(kept), keep));
            const Reg joined = V::join(previous, value, shift);
            if (j == 0) {
                V::store(held, joined);
                settle_either(job, carry);
            } else if (streaming) {
                V::stream(base + j, joined);
            } else {
                V::store(base + j, joined);
            }
            previous = value;
            if constexpr (!std::is_same_v<Alongside, NothingAlongside>) {
                if (vector % partial_vectors == 0) alongside->step();
            }
        }
        held = claim(carry, base + width, 0, misalign);
        V::store(held, V::join(previous, previous, shift));
        lines.finish();
    }

    /// A padded token's row: zeros, through the same stores.
    static void write_zeros(const RowJob<Scalar>& job, RowCarry<Scalar>& carry, Scalar* out) noexcept {
        const Index width = job.width;
        const auto misalign = static_cast<int>(
            (reinterpret_cast<std::uintptr_t>(out) % vector_bytes) / sizeof(Scalar));
        Index j = 0;
        if (misalign != 0) {
            const Index head = std::min<Index>(lanes - misalign, width);
            Scalar* held = claim(carry, out - misalign, misalign, misalign + static_cast<int>(head));
            for (; j < head; ++j) held[misalign + j] = Scalar(0);
            settle_either(job, carry);
        }
        const Reg zero = V::set(Scalar(0));
        for (; j + lanes <= width; j += lanes) {
            if (job.streaming) {
                V::stream(out + j, zero);
            } else {
                V::store(out + j, zero);
            }
        }
        if (j < width) {
            const auto tail = static_cast<int>(width - j);
            Scalar* held = claim(carry, out + j, 0, tail);
            for (int lane = 0; lane < tail; ++lane) held[lane] = Scalar(0);
            settle_either(job, carry);
        }
    }

    /// The carried vector's lanes, for lanes [from, to) of the vector at `base`: the one carried
    /// when it continues it, else a new one (what was carried is written out first).
    static Scalar* claim(RowCarry<Scalar>& carry, Scalar* base, int from, int to) noexcept {
        if (carry.base == base && carry.to == from) {
            carry.to = to;
        } else {
            flush(carry);
            carry.base = base;
            carry.from = from;
            carry.to = to;
        }
        return carry.lanes;
    }

    /// Writes the carried vector whole once all its lanes are there.
    template <bool Streaming>
    static void settle(RowCarry<Scalar>& carry) noexcept {
        if (carry.from != 0 || carry.to != lanes) return;
        if constexpr (Streaming) {
            V::stream(carry.base, V::load(carry.lanes));
        } else {
            V::store(carry.base, V::load(carry.lanes));
        }
        carry.base = nullptr;
    }

    static void settle_either(const RowJob<Scalar>& job, RowCarry<Scalar>& carry) noexcept {
        if (job.streaming) {
            settle<true>(carry);
        } else {
            settle<false>(carry);
        }
    }

    /// Writes the carried lanes element by element (the vector is not whole: its other lanes
    /// belong to no row of this pass).
    static void flush(RowCarry<Scalar>& carry) noexcept {
        if (carry.base == nullptr) return;
        for (int lane = carry.from; lane < carry.to; ++lane) carry.base[lane] = carry.lanes[lane];
        carry.base = nullptr;
    }
};

// The rotation of rotary position embedding: its own file, which the AVX-512 BF16 backend
// (detail/engine/kernels.hpp) also includes on its own.
#include "rotary-inl.hpp"

// The element loops of the backward's sums and of the optimizers' steps.
#include "gradient-inl.hpp"
#include "optimizer-inl.hpp"

/// a * b, rounded before whatever it feeds.
template <typename D>
inline typename D::Reg rounded_product(typename D::Reg a, typename D::Reg b) noexcept {
    typename D::Reg p = D::mul(a, b);
    D::keep_rounded(p);
    return p;
}

/// terms[0] + z (terms[1] + z (... + z terms[7])), each product rounded.
template <typename D>
inline typename D::Reg horner8(typename D::Reg z, const double (&terms)[8]) noexcept {
    typename D::Reg sum = D::set(terms[7]);
    for (int k = 6; k >= 0; --k) sum = D::add(D::set(terms[k]), rounded_product<D>(z, sum));
    return sum;
}

/// sin and cos of position * f for exact_sin_cos_block frequencies at once, for an integer
/// position below 2^26 in magnitude (detail/engine/exact_sincos.hpp has the error analysis):
/// position * f is exact as high + middle products plus a tiny low product; pi/2 in four parts of
/// at most 26 bits makes quadrant * part exact; Taylor polynomials to degree 17 (sin) and 18
/// (cos) on |r| <= pi/4. Every product is rounded before the sum it feeds, in every backend.
inline void exact_sin_cos_block(double position, const double* high, const double* middle,
                                const double* low, double* sines, double* cosines) noexcept {
    using D = Lanes<double>;
    using R = typename D::Reg;
    constexpr double half_pi_1 = 0x1.921fb5p+0;
    constexpr double half_pi_2 = 0x1.110b46p-26;
    constexpr double half_pi_3 = 0x1.1a6263p-54;
    constexpr double half_pi_4 = 0x1.8a2e03707344ap-81;
    constexpr double two_over_pi = 0x1.45f306dc9c883p-1;
    constexpr double round_magic = 0x1.8p52;  // (x + m) - m rounds x to an integer, |x| < 2^51
    // sin r = r + r z (s1 + z (s2 + ...)), cos r = 1 - z/2 + z^2 (c2 + z (c3 + ...)), z = r^2.
    constexpr double sine_terms[8] = {-1.0 / 6,        1.0 / 120,        -1.0 / 5040,
                                      1.0 / 362880,    -1.0 / 39916800,  1.0 / 6227020800,
                                      -1.0 / 1307674368000, 1.0 / 355687428096000};
    constexpr double cosine_terms[8] = {1.0 / 24,         -1.0 / 720,        1.0 / 40320,
                                        -1.0 / 3628800,   1.0 / 479001600,   -1.0 / 87178291200,
                                        1.0 / 20922789888000, -1.0 / 6402373705728000};
    const R p = D::set(position);
    const R magic = D::set(round_magic);
    for (int i = 0; i < exact_sin_cos_block_size; i += D::count) {
        const R exact_high = rounded_product<D>(p, D::load(high + i));
        const R exact_middle = rounded_product<D>(p, D::load(middle + i));
        const R angle = D::add(exact_high, exact_middle);
        const R angle_tail =
            D::add(D::add(D::sub(exact_high, angle), exact_middle), rounded_product<D>(p, D::load(low + i)));

        const R quadrant = D::sub(D::add(rounded_product<D>(angle, D::set(two_over_pi)), magic), magic);
        const R first = D::sub(angle, rounded_product<D>(quadrant, D::set(half_pi_1)));  // exact (Sterbenz)
        const R second = rounded_product<D>(quadrant, D::set(half_pi_2));               // exact
        const R reduced = D::sub(first, second);
        const R bent = D::sub(reduced, first);
        const R reduced_error = D::sub(D::sub(first, D::sub(reduced, bent)), D::add(second, bent));
        const R tail = D::sub(D::sub(D::add(reduced_error, angle_tail), rounded_product<D>(quadrant, D::set(half_pi_3))),
                              rounded_product<D>(quadrant, D::set(half_pi_4)));
        const R r = D::add(reduced, tail);
        const R r_tail = D::sub(tail, D::sub(r, reduced));

        const R z = rounded_product<D>(r, r);
        const R sin_r0 = D::add(r, rounded_product<D>(rounded_product<D>(r, z), horner8<D>(z, sine_terms)));
        const R cos_r0 = D::add(D::sub(D::set(1.0), rounded_product<D>(D::set(0.5), z)),
                                rounded_product<D>(rounded_product<D>(z, z), horner8<D>(z, cosine_terms)));
        const R sin_r = D::add(sin_r0, rounded_product<D>(cos_r0, r_tail));
        const R cos_r = D::sub(cos_r0, rounded_product<D>(sin_r0, r_tail));

        // quadrant mod 4, as a double in {0, 1, 2, 3}.
        const R quarter = D::sub(D::add(D::sub(rounded_product<D>(quadrant, D::set(0.25)), D::set(0.375)), magic), magic);
        const R q = D::sub(quadrant, rounded_product<D>(D::set(4.0), quarter));
        const typename D::Mask one = D::equal(q, D::set(1.0));
        const typename D::Mask odd = D::either(one, D::equal(q, D::set(3.0)));
        const R base_sin = D::select(odd, cos_r, sin_r);
        const R base_cos = D::select(odd, sin_r, cos_r);
        D::store(sines + i, D::select(D::greater_equal(q, D::set(2.0)), D::negate(base_sin), base_sin));
        D::store(cosines + i, D::select(D::either(one, D::equal(q, D::set(2.0))), D::negate(base_cos), base_cos));
    }
}

/// This ISA's kernels, as the dispatch point (detail/engine/kernels.hpp) hands them out.
struct Backend {
    template <typename Scalar, typename Storage>
    static void write_rows(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
                           const RowSources<Scalar, Storage>* rows, Index count,
                           const Storage* const* ahead) noexcept {
        RowKernel<Scalar, Storage>::write(job, carry, rows, count, ahead);
    }
    template <typename Scalar, typename Storage>
    static void finish_rows(const RowJob<Scalar>& job, RowCarry<Scalar>& carry) noexcept {
        RowKernel<Scalar, Storage>::finish(job, carry);
    }
    template <typename Scalar>
    static void apply_read(ReadRole role, Scalar factor, const Scalar* values, const SpanMask<Scalar>& mask,
                           Index count, WideScalar<Scalar>* sum, Scalar* out, bool streaming) noexcept {
        GradientKernel<Scalar>::apply(role, factor, values, mask, count, sum, out, streaming);
    }
    template <typename Scalar>
    static void norm_row(const Scalar* x, const Scalar* g, const SpanMask<Scalar>& mask, const Scalar* gamma,
                         Scalar epsilon, Index width, Scalar* dx, WideScalar<Scalar>* gamma_sum,
                         WideScalar<Scalar>* beta_sum) noexcept {
        GradientKernel<Scalar>::norm_row(x, g, mask, gamma, epsilon, width, dx, gamma_sum, beta_sum);
    }
    static void fence() noexcept { stream_fence(); }
    template <typename Scalar>
    static void adam_row(Scalar* w, Scalar* m, Scalar* v, const Scalar* g, Index count,
                         const AdamConstants<Scalar>& constants) noexcept {
        OptimizerKernel<Scalar>::adam_row(w, m, v, g, count, constants);
    }
    template <typename Scalar>
    static void dense_adam_row(Scalar* w, Scalar* m, Scalar* v, Scalar* v_max, const Scalar* g, Index count,
                               const DenseAdamConstants<Scalar>& constants) noexcept {
        OptimizerKernel<Scalar>::dense_adam_row(w, m, v, v_max, g, count, constants);
    }
    template <typename Scalar>
    static void sgd_row(Scalar* w, const Scalar* g, Scalar* b, bool fresh, Index count,
                        const SgdConstants<Scalar>& constants) noexcept {
        OptimizerKernel<Scalar>::sgd_row(w, g, b, fresh, count, constants);
    }
    template <typename Scalar>
    static Scalar square_sum(const Scalar* w, const Scalar* g, Index count, Scalar decay, bool l2) noexcept {
        return OptimizerKernel<Scalar>::square_sum(w, g, count, decay, l2);
    }
    template <typename Scalar>
    static void scale_and_subtract(Scalar* w, const Scalar* g, Index count, Scalar correction,
                                   Scalar multiplier) noexcept {
        OptimizerKernel<Scalar>::scale_and_subtract(w, g, count, correction, multiplier);
    }
    template <typename Scalar>
    static Scalar largest_magnitude(const Scalar* values, Index count) noexcept {
        return OptimizerKernel<Scalar>::largest_magnitude(values, count);
    }
    static void draw_mask(const DropoutKey& key, std::uint64_t first, Index count, std::uint64_t* out) noexcept {
        mask_words(key, first, count, out);
    }
    static void sin_cos(double position, const double* high, const double* middle, const double* low,
                        double* sines, double* cosines) noexcept {
        exact_sin_cos_block(position, high, middle, low, sines, cosines);
    }
    template <typename Table, typename Activation>
    static void rotate(const Table* cos, const Table* sin, Index pairs, bool interleaved,
                       const TokenHeads<Activation>& token) noexcept {
        RotaryKernel<Table, Activation>::rotate(cos, sin, pairs, interleaved, token);
    }
};

