// detail/engine/kernels-inl.hpp: the kernels, written once over the vector layer.
//
// No include guard, by design: detail/engine/kernels.hpp includes this file once per ISA, inside
// namespace seqembed::detail::<isa>_isa and that ISA's target region, after the ISA's vector
// layer (Lanes<Scalar>, U32, stream_fence) is declared there. Everything here is compiled for
// that ISA; nothing here may depend on which one it is.


/// One Philox4x32 round under the keys (key0, key1) on Vectors independent vectors of blocks
/// (word[v][w] is word w of vector v's blocks).
template <std::size_t Vectors>
inline void philox_round(typename U32::Reg (&word)[Vectors][4], std::uint32_t key0, std::uint32_t key1) noexcept {
    const typename U32::Reg multiplier0 = U32::set(philox_multiplier0);
    const typename U32::Reg multiplier1 = U32::set(philox_multiplier1);
    const typename U32::Reg round_key0 = U32::set(key0);
    const typename U32::Reg round_key1 = U32::set(key1);
    SEQEMBED_DETAIL_UNROLL_ALL
    for (std::size_t v = 0; v < Vectors; ++v) {
        const typename U32::Reg high0 = U32::mul_high(word[v][0], multiplier0);
        const typename U32::Reg low0 = U32::mul_low(word[v][0], multiplier0);
        const typename U32::Reg high1 = U32::mul_high(word[v][2], multiplier1);
        const typename U32::Reg low1 = U32::mul_low(word[v][2], multiplier1);
        word[v][0] = U32::bit_xor(U32::bit_xor(high1, word[v][1]), round_key0);
        word[v][2] = U32::bit_xor(U32::bit_xor(high0, word[v][3]), round_key1);
        word[v][1] = low1;
        word[v][3] = low0;
    }
}

/// Philox4x32-10's rounds.
inline constexpr int philox_round_count = 10;

/// The keys of round `round` under `seed`: its halves, each advanced by its Weyl constant once
/// a round.
inline std::uint32_t philox_key0(std::uint64_t seed, int round) noexcept {
    return static_cast<std::uint32_t>(seed) + static_cast<std::uint32_t>(round) * philox_weyl0;
}
inline std::uint32_t philox_key1(std::uint64_t seed, int round) noexcept {
    return static_cast<std::uint32_t>(seed >> 32) + static_cast<std::uint32_t>(round) * philox_weyl1;
}

/// How the draw walks the spans: Vectors of blocks in flight, four (Philox's rounds are a chain
/// of dependent multiplies, and four independent chains keep the multipliers busy:
/// docs/performance.md, "Dropout"). Wide vectors take four spans or two a step; narrow ones (the
/// scalar backend's single lane) take a span in parts of four vectors, so that the unrolled
/// rounds stay four chains long. Vector `at` of a step (counted over its parts) is group
/// at % vectors_per_span, lanes from at % vectors_per_span * lanes, of span at / vectors_per_span.
struct DrawSteps {
    static constexpr int lanes = U32::count;
    static constexpr int vectors_per_span = span_blocks / lanes;
    static constexpr int in_flight = 4;
    static_assert(in_flight % vectors_per_span == 0 || vectors_per_span % in_flight == 0,
                  "a step holds whole spans or whole parts of one");
    static constexpr int spans_per_step = vectors_per_span >= in_flight ? 1 : in_flight / vectors_per_span;
    static constexpr int parts_per_span = vectors_per_span >= in_flight ? vectors_per_span / in_flight : 1;
    static_assert(lanes <= DrawAhead::max_lanes, "DrawAhead holds a vector of this ISA's blocks");

    /// The blocks of group `group` of `span` before the rounds: counter (block, call).
    static void start_blocks(typename U32::Reg (&w)[4], const DropoutKey& key, std::uint64_t span, int group) noexcept {
        // 16 s is a multiple of 16: adding a lane (< 16) to its low word never carries.
        const std::uint64_t block = span * span_blocks + static_cast<std::uint64_t>(group * lanes);
        w[0] = U32::iota(static_cast<std::uint32_t>(block));
        w[1] = U32::set(static_cast<std::uint32_t>(block >> 32));
        w[2] = U32::set(static_cast<std::uint32_t>(key.call));
        w[3] = U32::set(static_cast<std::uint32_t>(key.call >> 32));
    }
};

/// The threshold's constants as vectors.
struct ThresholdLanes {
    explicit ThresholdLanes(const DrawThreshold& limit) noexcept
        : byte_mask(U32::set(0xFFu)), tie(U32::set(limit.tie_byte())), coarse_keep(U32::set(limit.coarse_keep)),
          first_tie_kept(U32::set(limit.coarse_keep - 1)), fine_keep(U32::set(limit.fine_keep)), two(U32::set(2)) {}
    typename U32::Reg byte_mask, tie, coarse_keep, first_tie_kept, fine_keep, two;
};

/// The kept bits of one vector of a span's blocks after the rounds, into the span's words from
/// lane `lane0`; its blocks with a second tie into tied_twice. Ties: the threshold has a fine
/// byte, so that the loop over the runs holds no test of it whatever the compiler unswitches.
template <bool Ties>
inline void keep_bits(const typename U32::Reg (&w)[4], const ThresholdLanes& t, int lane0, std::uint64_t (&kept)[4],
                      std::uint32_t& tied_twice) noexcept {
    // A block's threshold is one lower when its first tie is kept (its unused byte, byte 3 of
    // word 3, at least fine_keep): only a tie is one short of coarse_keep.
    const typename U32::Reg threshold =
        Ties ? U32::select(U32::greater_equal_bits(U32::shift_right(w[3], 24), t.fine_keep), t.first_tie_kept,
                           t.coarse_keep)
             : t.coarse_keep;
    typename U32::Reg tie_count = U32::set(0);
    SEQEMBED_DETAIL_UNROLL_ALL
    for (int r = 0; r < span_runs; ++r) {
        const typename U32::Reg coarse = U32::bit_and(U32::shift_right(w[r % 4], 8 * (r / 4)), t.byte_mask);
        kept[r / 4] |= static_cast<std::uint64_t>(U32::greater_equal_bits(coarse, threshold)) << (16 * (r % 4) + lane0);
        if constexpr (Ties) tie_count = U32::count_equal(tie_count, coarse, t.tie);
    }
    if constexpr (Ties) tied_twice |= U32::greater_equal_bits(tie_count, t.two) << lane0;
}

/// A span's bits from its kept bits, its further ties decided.
inline void finish_span(const DropoutKey& key, std::uint64_t span, const std::uint64_t (&kept)[4],
                        std::uint32_t tied_twice, SpanBits& out) noexcept {
    for (int q = 0; q < 4; ++q) out.words[q] = kept[q];
    if (tied_twice != 0) decide_further_ties(key, span, tied_twice, out);
}

/// draw_spans for a threshold with ties (Ties) or without, the step's words in registers.
template <bool Ties>
inline void draw_spans_of(const DropoutKey& key, std::uint64_t first, int count, SpanBits* out) noexcept {
    using G = DrawSteps;
    constexpr std::size_t vectors = static_cast<std::size_t>(G::in_flight);
    const ThresholdLanes lanes_of(key.limit);
    for (int k = 0; k < count; k += G::spans_per_step) {
        std::uint64_t kept[G::spans_per_step][4] = {};
        std::uint32_t tied_twice[G::spans_per_step] = {};
        for (int part = 0; part < G::parts_per_span; ++part) {
            typename U32::Reg word[vectors][4];
            SEQEMBED_DETAIL_UNROLL_ALL
            for (std::size_t v = 0; v < vectors; ++v) {
                const int at = part * G::in_flight + static_cast<int>(v);
                G::start_blocks(word[v], key, first + static_cast<std::uint64_t>(k + at / G::vectors_per_span),
                                at % G::vectors_per_span);
            }
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int round = 0; round < philox_round_count; ++round)
                philox_round<vectors>(word, philox_key0(key.seed, round), philox_key1(key.seed, round));
            SEQEMBED_DETAIL_UNROLL_ALL
            for (std::size_t v = 0; v < vectors; ++v) {
                const int at = part * G::in_flight + static_cast<int>(v);
                const int in_step = at / G::vectors_per_span;
                keep_bits<Ties>(word[v], lanes_of, at % G::vectors_per_span * G::lanes, kept[in_step], tied_twice[in_step]);
            }
        }
        for (int in_step = 0; in_step < G::spans_per_step && k + in_step < count; ++in_step)
            finish_span(key, first + static_cast<std::uint64_t>(k + in_step), kept[in_step], tied_twice[in_step],
                        out[k + in_step]);
    }
}

/// The kept bits of spans first .. first + count - 1 of the mask of `key`
/// (detail/random/dropout_layout.hpp): Philox4x32-10 on each span's 16 blocks, U32::count lanes a
/// vector, four vectors at a time, then a byte per element compared with the threshold.
inline void draw_spans(const DropoutKey& key, std::uint64_t first, int count, SpanBits* out) noexcept {
    if (key.limit.fine_keep != 0) {
        draw_spans_of<true>(key, first, count, out);
    } else {
        draw_spans_of<false>(key, first, count, out);
    }
}

/// The state of a draw ahead while a row body is written: the vector of blocks in its rounds, in
/// registers (a local of the kernel whose address is never taken).
struct DrawRegisters {
    typename U32::Reg word[1][4];
    std::uint32_t key0;  // the keys of its next round
    std::uint32_t key1;
    int round;   // its next round; philox_round_count once its rounds are done
    int vector;  // which vector of blocks; DrawingAhead::vectors once the draw is complete
};

/// The draw of a stream's next DrawAhead::spans spans, spread over the vectors the row kernel
/// writes: a step per vector written, a Philox round of one vector of blocks (or, one step in
/// eleven, that vector's kept bits), so that the arithmetic runs between the stores, which wait
/// on memory, instead of stopping them when the stream runs short. One vector of blocks at a
/// time, in registers for the length of a row body (load and save around it, a DrawAhead
/// between rows): four in flight would not fit AVX2's registers beside the row's, and the stores
/// around each round give the out-of-order core its independent work. Vectors of blocks are
/// independent, so the bits are draw_spans'.
struct DrawingAhead {
    using G = DrawSteps;
    /// Vectors of blocks in a draw.
    static constexpr int vectors = DrawAhead::spans * G::vectors_per_span;
    /// Steps per vector of blocks: its rounds, then its kept bits.
    static constexpr int steps_per_vector = philox_round_count + 1;
    /// Steps in a draw.
    static constexpr int steps = vectors * steps_per_vector;

    /// Sets `ahead` to draw the spans from `first_span` on, nothing drawn yet.
    static void start(DrawAhead& ahead, std::uint64_t first_span) noexcept {
        ahead.first_span = first_span;
        ahead.steps_done = 0;
        for (auto& span : ahead.kept)
            for (std::uint64_t& word : span) word = 0;
        for (std::uint32_t& tied : ahead.tied_twice) tied = 0;
    }

    /// The state of `ahead`'s draw, to step in registers.
    SEQEMBED_DETAIL_BLOCK static DrawRegisters load(const DrawAhead& ahead, const DropoutKey& key) noexcept {
        DrawRegisters r;
        r.vector = std::min(ahead.steps_done / steps_per_vector, vectors);
        r.round = r.vector == vectors ? philox_round_count : ahead.steps_done % steps_per_vector;
        if (r.round == 0 && r.vector < vectors) {  // a vector not begun: its blocks
            start_vector(r, ahead, key);
        } else {
            for (int w = 0; w < 4; ++w) r.word[0][w] = U32::load(ahead.words[w]);
            r.key0 = philox_key0(key.seed, r.round);
            r.key1 = philox_key1(key.seed, r.round);
        }
        return r;
    }
    /// Writes the state back to `ahead`.
    SEQEMBED_DETAIL_BLOCK static void save(const DrawRegisters& r, DrawAhead& ahead) noexcept {
        ahead.steps_done = r.vector * steps_per_vector + r.round;
        for (int w = 0; w < 4; ++w) U32::store(ahead.words[w], r.word[0][w]);
    }

    /// One step of the draw, when one is left.
    SEQEMBED_DETAIL_BLOCK static void step(DrawRegisters& r, DrawAhead& ahead, const DropoutKey& key) noexcept {
        if (r.round < philox_round_count) {
            philox_round<1>(r.word, r.key0, r.key1);
            r.key0 += philox_weyl0;
            r.key1 += philox_weyl1;
            ++r.round;
        } else if (r.vector < vectors) {
            for (int w = 0; w < 4; ++w) U32::store(ahead.words[w], r.word[0][w]);
            keep_and_start_next(ahead, key, r.vector);
            if (++r.vector < vectors) {
                for (int w = 0; w < 4; ++w) r.word[0][w] = U32::load(ahead.words[w]);
                r.round = 0;
                r.key0 = philox_key0(key.seed, 0);
                r.key1 = philox_key1(key.seed, 0);
            }
        }
    }

    /// Completes the draw of `ahead` and writes its spans to out[0 .. DrawAhead::spans); `ahead`
    /// is then empty. A draw not begun is drawn whole by draw_spans.
    static void finish(DrawAhead& ahead, const DropoutKey& key, SpanBits* out) noexcept {
        if (ahead.steps_done == 0) {
            draw_spans(key, ahead.first_span, DrawAhead::spans, out);
        } else {
            DrawRegisters r = load(ahead, key);
            while (r.vector < vectors) step(r, ahead, key);
            for (int k = 0; k < DrawAhead::spans; ++k)
                finish_span(key, ahead.first_span + static_cast<std::uint64_t>(k), ahead.kept[k],
                            ahead.tied_twice[k], out[k]);
        }
        ahead.first_span = ~std::uint64_t{0};
        ahead.steps_done = steps;
    }

    /// The blocks of vector r.vector before its rounds.
    SEQEMBED_DETAIL_BLOCK static void start_vector(DrawRegisters& r, const DrawAhead& ahead, const DropoutKey& key) noexcept {
        G::start_blocks(r.word[0], key, ahead.first_span + static_cast<std::uint64_t>(r.vector / G::vectors_per_span),
                        r.vector % G::vectors_per_span);
        r.round = 0;
        r.key0 = philox_key0(key.seed, 0);
        r.key1 = philox_key1(key.seed, 0);
    }

    /// The kept bits of vector `vector` after its rounds, its words read from ahead.words, where
    /// the next vector's starting words are left. Called, not inlined: one step in eleven, whose
    /// threshold vectors would otherwise hold registers across the row's loop.
    SEQEMBED_DETAIL_NOINLINE static void keep_and_start_next(DrawAhead& ahead, const DropoutKey& key, int vector) noexcept {
        typename U32::Reg word[4];
        for (int w = 0; w < 4; ++w) word[w] = U32::load(ahead.words[w]);
        if (vector + 1 < vectors) {
            typename U32::Reg next[4];
            G::start_blocks(next, key, ahead.first_span + static_cast<std::uint64_t>((vector + 1) / G::vectors_per_span),
                            (vector + 1) % G::vectors_per_span);
            for (int w = 0; w < 4; ++w) U32::store(ahead.words[w], next[w]);
        }
        const ThresholdLanes lanes_of(key.limit);
        const int span = vector / G::vectors_per_span;
        const int lane0 = vector % G::vectors_per_span * G::lanes;
        if (key.limit.fine_keep != 0) {
            keep_bits<true>(word, lanes_of, lane0, ahead.kept[span], ahead.tied_twice[span]);
        } else {
            keep_bits<false>(word, lanes_of, lane0, ahead.kept[span], ahead.tied_twice[span]);
        }
    }
};

/// Reads a row's dropout bits from the stream of drawn spans, drawing further spans as the rows
/// move on.
class MaskCursor {
public:
    MaskCursor(const DropoutKey& key, KeptStream& stream) noexcept : m_key(key), m_stream(stream) {}

    /// Moves to element `element` of the output.
    void seek(std::uint64_t element) noexcept {
        const KeptStream& s = m_stream;
        if (s.first == ~std::uint64_t{0} || element < s.first || element - s.first + 64 > KeptStream::size) {
            refill(element);
        }
        m_bit = element - m_stream.first;
    }
    /// The kept bits of the 64 elements from here, bit i for the i-th.
    std::uint64_t bits() const noexcept { return bits_at(m_stream.words, m_bit); }
    /// Moves `count` (<= 64) elements on.
    void step(unsigned count) noexcept { move_to(m_bit + count); }
    /// Where the cursor is in the stream (for loops that keep it in a register).
    std::uint64_t position() const noexcept { return m_bit; }
    /// The stream's words.
    const std::uint64_t* words() const noexcept { return m_stream.words; }
    /// Moves to stream position `bit` (as `position()` counts it before any refill), drawing
    /// further spans when fewer than 64 bits are left; returns the new position.
    std::uint64_t move_to(std::uint64_t bit) noexcept {
        m_bit = bit;
        if (m_bit + 64 > KeptStream::size) seek(m_stream.first + m_bit);
        return m_bit;
    }
    /// The 64 bits of `words` from bit `bit` on.
    static std::uint64_t bits_at(const std::uint64_t* words, std::uint64_t bit) noexcept {
        const std::uint64_t* word = words + bit / 64;
        const unsigned shift = static_cast<unsigned>(bit % 64);
        // (x << 1) << (63 - shift) is x << (64 - shift), and 0 for a shift of 0.
        return (word[0] >> shift) | ((word[1] << 1) << (63 - shift));
    }

private:
    /// Draws the spans from the one holding `element` on into the stream.
    void refill(std::uint64_t element) noexcept {
        KeptStream& s = m_stream;
        const std::uint64_t span = element / span_elements;
        SpanBits drawn[KeptStream::spans];
        const bool reuse = s.first != ~std::uint64_t{0} && span == s.first / span_elements + KeptStream::spans - 1;
        if (reuse) {  // the usual move: on from the stream's last span, already drawn
            drawn[0] = s.last;
            if (s.ahead.first_span == span + 1) {  // drawn (or begun) while the stream was read
                DrawingAhead::finish(s.ahead, m_key, drawn + 1);
            } else {
                draw_spans(m_key, span + 1, DrawAhead::spans, drawn + 1);
            }
        } else {
            draw_spans(m_key, span, KeptStream::spans, drawn);
        }
        for (std::uint64_t& word : s.words) word = 0;
        for (int k = 0; k < KeptStream::spans; ++k) {
            const std::uint64_t at = static_cast<std::uint64_t>(k) * span_elements;
            for (int q = 0; q < 4; ++q) {
                const std::uint64_t bit = at + static_cast<std::uint64_t>(64 * q);
                const std::uint64_t value = drawn[k].words[q];
                s.words[bit / 64] |= value << (bit % 64);
                if (bit % 64 != 0) s.words[bit / 64 + 1] |= value >> (64 - bit % 64);
            }
        }
        s.first = span * span_elements;
        s.last = drawn[KeptStream::spans - 1];
        DrawingAhead::start(s.ahead, span + KeptStream::spans);
    }

    const DropoutKey& m_key;
    KeptStream& m_stream;
    std::uint64_t m_bit = 0;  // of the element the cursor is at, in the stream
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
        if (job.normalizing && job.width <= static_cast<Index>(scratch_values)) {
            write_normalized(job, carry, rows, count, ahead);
            return;
        }
        for (Index k = 0; k < count; ++k) {
            const RowSources<Scalar, Storage>& row = rows[k];
            const Storage* next = ahead == nullptr ? nullptr : ahead[k];
            if (row.embedding == nullptr) {
                write_zeros(job, carry, row.out);
            } else {
                dispatch_row(job, carry, row, next);
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

    /// Whether training draws the mask's next spans a step per vector written (DrawingAhead)
    /// rather than whole when the stream runs short: over tables of 4 bytes or more, whose loop
    /// waits on memory long enough to hide the draw's rounds. Over bfloat16 tables (half the
    /// bytes to read, and the widening's work) the whole draw measured faster, with AVX2 and
    /// AVX-512 alike (docs/performance.md).
    static constexpr bool draws_ahead = sizeof(Storage) >= sizeof(float);

    /// LayerNorm rows that fit the scratch rows, written in order. The moments of row k + 1 are
    /// found before row k is written, so that the end of one row's reductions (dependent
    /// additions, the square root and the division) overlaps the other's output pass instead of
    /// stalling it; in evaluation with moments_between_stores, as row k is written, a group of
    /// 64 values per 64 values written (MomentsSteps), so that the next row's reads run between
    /// this row's stores instead of apart from them. The moments are the same bits either way.
    static void write_normalized(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
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
                    write_row<false>(job, carry, row, next, values, &steps);
                    moments[(k + 1) % 2] = steps.finish();
                    continue;
                }
            }
            if (next_found) find(k + 1);
            dispatch_dropping(job, carry, row, next, values);
        }
    }

    static void dispatch_row(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
                             const RowSources<Scalar, Storage>& row, const Storage* ahead) noexcept {
        if (job.normalizing) {  // a row too wide to keep (write_normalized has the others): summed again
            const SourceSums<any_count> sums(job, row);
            const Moments moments = find_moments(sums, job.width, job.epsilon, nullptr);
            dispatch_dropping(job, carry, row, ahead, Normalized<SourceSums<any_count>>(job, sums, moments));
        } else {
            with_sources(job, row, [&](const auto& sums) {
                dispatch_dropping(job, carry, row, ahead, sums);
                return 0;
            });
        }
    }

    /// Nothing to do alongside a row's stores.
    struct NothingAlongside {
        void step() noexcept {}
    };

    template <typename Values>
    static void dispatch_dropping(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
                                  const RowSources<Scalar, Storage>& row, const Storage* ahead,
                                  const Values& values) noexcept {
        NothingAlongside* const nothing = nullptr;
        if (job.dropping) {
            write_row<true>(job, carry, row, ahead, values, nothing);
        } else {
            write_row<false>(job, carry, row, ahead, values, nothing);
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

    /// One row. Streaming or cached stores are a test per vector, not a template flag: the test
    /// costs nothing measurable beside a store, and halves the kernel's instantiations.
    /// `alongside`, when given, takes a step() per partial_vectors vectors of the row's body
    /// written (LayerNorm's next row: write_normalized).
    template <bool Dropping, typename Values, typename Alongside>
    static void write_row(const RowJob<Scalar>& job, RowCarry<Scalar>& carry,
                          const RowSources<Scalar, Storage>& row, const Storage* ahead,
                          const Values& row_values, Alongside* alongside) noexcept {
        const Index width = job.width;
        const bool streaming = job.streaming;
        Scalar* const out = row.out;
        const Values values = row_values;  // a local copy, which the stores below cannot alias
        MaskCursor mask(job.key, carry.mask);
        const auto misalign = static_cast<int>(
            (reinterpret_cast<std::uintptr_t>(out) % vector_bytes) / sizeof(Scalar));
        Index j = 0;
        if (misalign != 0) {  // the head: the rest of a vector the previous row began
            const Index head = std::min<Index>(lanes - misalign, width);
            Scalar* held = claim(carry, out - misalign, misalign, misalign + static_cast<int>(head));
            if constexpr (Dropping) mask.seek(row.first_element);
            // The head's bits read once (it is shorter than a vector, so than 64 values).
            std::uint64_t kept = 0;
            if constexpr (Dropping) kept = mask.bits();
            for (; j < head; ++j, kept >>= 1)
                held[misalign + j] = dropped<Dropping>(job, values.scalar(j), static_cast<std::uint32_t>(kept & 1u));
            if constexpr (Dropping) mask.step(static_cast<unsigned>(head));
            settle_either(job, carry);
        } else if constexpr (Dropping) {
            mask.seek(row.first_element);
        }

        // The body: whole vectors at aligned addresses. One line of the row ahead is requested per
        // line written, from the line that holds its first byte (a row that starts inside a line
        // ends inside one more: requested from its start, that last line would be missed).
        const char* next_line =
            reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(ahead) & ~std::uintptr_t{63});
        const char* const ahead_end =
            ahead == nullptr ? nullptr : reinterpret_cast<const char*>(ahead + width);
        const Reg keep = V::set(job.keep_scale);
        Index vector = 0;
        const auto write_vector = [&](std::uint64_t kept) {
            if (next_line < ahead_end && vector % vectors_per_line == 0) {
                request_line(next_line);
                next_line += 64;
            }
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
            // The mask's bits 64 at a time, a vector's lanes from each read; the position in the
            // stream stays in a register, and further spans are drawn only when it runs short.
            // The draw of the spans after the stream's advances a step per vector written.
            constexpr Index per_read = 64 / lanes;
            std::uint64_t bit = mask.position();
            const std::uint64_t* words = mask.words();
            // Without draws_ahead, a refill draws its spans whole (DrawingAhead::finish of a draw
            // not begun).
            DrawAhead& drawing = carry.mask.ahead;
            DrawRegisters draw{};
            const auto load = [&] {
                if constexpr (draws_ahead) draw = DrawingAhead::load(drawing, job.key);
            };
            const auto save = [&] {
                if constexpr (draws_ahead) DrawingAhead::save(draw, drawing);
            };
            const auto step = [&] {
                if constexpr (draws_ahead) DrawingAhead::step(draw, drawing, job.key);
            };
            load();
            for (; j + per_read * lanes <= width; bit += 64) {
                if (bit + 64 > KeptStream::size) {
                    save();
                    bit = mask.move_to(bit);
                    load();
                }
                std::uint64_t kept = MaskCursor::bits_at(words, bit);
                for (Index k = 0; k < per_read; ++k, kept >>= lanes % 64) {
                    step();
                    write_vector(kept);
                }
            }
            for (; j + lanes <= width; bit += lanes) {
                if (bit + 64 > KeptStream::size) {
                    save();
                    bit = mask.move_to(bit);
                    load();
                }
                step();
                write_vector(MaskCursor::bits_at(words, bit));
            }
            save();
            mask.move_to(bit);
        } else {
            while (j + lanes <= width) write_vector(0);
        }

        if (j < width) {  // the tail: the start of a vector the next row may finish
            const auto tail = static_cast<int>(width - j);
            Scalar* held = claim(carry, out + j, 0, tail);
            std::uint64_t kept = 0;  // the tail's bits read once, as the head's
            if constexpr (Dropping) kept = mask.bits();
            for (int lane = 0; lane < tail; ++lane, ++j, kept >>= 1)
                held[lane] = dropped<Dropping>(job, values.scalar(j), static_cast<std::uint32_t>(kept & 1u));
            settle_either(job, carry);
        }
        for (; next_line < ahead_end; next_line += 64) request_line(next_line);
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
    static const Scalar* gradient_values(const GradientRows<Scalar>& rows, Index row, Index width, Index first,
                                         Index count, Scalar* buffer) noexcept {
        return GradientKernel<Scalar>::values(rows, row, width, first, count, buffer);
    }
    template <typename Scalar>
    static void apply_read(ReadRole role, Scalar factor, const Scalar* values, Index count, WideScalar<Scalar>* sum,
                           Scalar* out) noexcept {
        GradientKernel<Scalar>::apply(role, factor, values, count, sum, out);
    }
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
    static void draw(const DropoutKey& key, std::uint64_t first, int count, SpanBits* out) noexcept {
        draw_spans(key, first, count, out);
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

