// detail/engine/rotary-inl.hpp: the rotation of rotary position embedding (RoPE), written once
// over the vector layer.
//
// No include guard, by design: kernels-inl.hpp includes this file once per ISA, inside namespace
// seqembed::detail::<isa>_isa and that ISA's target region, and detail/engine/kernels.hpp
// includes it once more for the AVX-512 BF16 backend, whose other kernels are AVX-512's.
// Inlined whatever the compiler's estimate: a block's vectors stay in registers (called, the
// block function cost bfloat16 decode a fifth of its time).
#if defined(__GNUC__) || defined(__clang__)
#define SEQEMBED_DETAIL_BLOCK __attribute__((always_inline)) inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA __attribute__((always_inline))
#else
#define SEQEMBED_DETAIL_BLOCK inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA
#endif

/// The rotation of rotary position embedding (RoPE): a token's heads turned in place by the
/// cos and sin of its table row, pair i of a head being (x[i], x[i + pairs]) (halves) or
/// (x[2i], x[2i + 1]) (interleaved) and becoming
///   x1' = x1 c - x2 s,   x2' = x2 c + x1 s,
/// each product rounded to Compute before the sum, the sum rounded once to Activation. Compute is
/// double for double activations, float for float and bfloat16 ones; table values are converted
/// to Compute first (exactly, or rounded to nearest from a double table).
/// Float and double interleaved vectors compute x c' + swap(x) s' with c' the cosines doubled and
/// s' the sines doubled with the first of each pair negated. bfloat16 activations are read
/// 2 * lanes at a time, split into their even and odd values (V::widen_split), so that no value
/// crosses a lane on the way in or out: interleaved pairs are then (even, odd) as they stand, and
/// halves pair the even values of both halves with cosines in the same split order; a row's
/// cosines and sines stay in registers across its heads when it has up to four blocks. Where the
/// vector layer has a bfloat16 conversion (AVX-512 BF16), blocks of ordinary values are
/// rounded by it, which gives narrow_split's bits (detail/simd/avx512_bf16.hpp). Every path
/// does the same operations on each pair, so every backend gives the scalar one's bits.
template <typename Table, typename Activation>
struct RotaryKernel {
    using Compute = std::conditional_t<std::is_same_v<Activation, double>, double, float>;
    using V = Lanes<Compute>;
    using Reg = typename V::Reg;
    static constexpr int lanes = V::count;
    static constexpr bool split = std::is_same_v<Activation, Eigen::bfloat16>;
    /// Pairs turned per step: the step's cos and sin in Compute live on the stack.
    static constexpr Index step_pairs = 256;
    /// The values a step's cos (or sin) takes on the stack, with the zeros that pad its last
    /// bfloat16 block.
    static constexpr std::size_t step_values = static_cast<std::size_t>(2 * step_pairs + 2 * lanes);
    /// bfloat16 values in a block: 2 * lanes.
    static constexpr std::size_t block_values = static_cast<std::size_t>(2 * lanes);

    /// Rotates the first 2 * pairs dimensions of every head of the token's Q and K rows; cos and
    /// sin hold the row's pairs values, prepared once for both.
    static void rotate(const Table* cos, const Table* sin, Index pairs, bool interleaved,
                       const TokenHeads<Activation>& token) noexcept {
        alignas(64) Compute c[step_values];
        alignas(64) Compute s[step_values];
        for (Index first = 0; first < pairs; first += step_pairs) {
            const Index count = std::min(step_pairs, pairs - first);
            const Compute* cosines = c;
            const Compute* sines = s;
            if constexpr (split) {
                if (!interleaved) {
                    turn_heads_halves_split(token, pairs, first, cos + first, sin + first, count, c, s);
                    continue;
                }
                convert(cos + first, sin + first, count, c, s);
                pad(c, s, count, lanes);
            } else if (interleaved) {
                for (Index i = 0; i < count; ++i) {
                    const Compute cosine = to_compute(cos[first + i]);
                    const Compute sine = to_compute(sin[first + i]);
                    c[2 * i] = cosine;
                    c[2 * i + 1] = cosine;
                    s[2 * i] = -sine;
                    s[2 * i + 1] = sine;
                }
            } else if constexpr (std::is_same_v<Table, Compute>) {
                cosines = cos + first;  // the table's own row, as it stands
                sines = sin + first;
            } else {
                convert(cos + first, sin + first, count, c, s);
            }
            if constexpr (split) {
                const bool ordinary = ordinary_factors(c, s, round_up(count, lanes));
                for_each_head(token, [&](Activation* head) {
                    turn_interleaved_split(head + 2 * first, cosines, sines, count, ordinary);
                });
            } else if (interleaved) {
                for_each_head(token, [&](Activation* head) { turn_interleaved(head + 2 * first, cosines, sines, count); });
            } else {
                for_each_head(token, [&](Activation* head) {
                    turn_halves(head + first, head + pairs + first, cosines, sines, count);
                });
            }
        }
    }

private:
    /// Calls turn(head) for each head of the token's Q row, then of its K row. The fields are
    /// read once, into locals: read from `token` after each head's stores, they cost float
    /// decode a third of its time (GCC 12 read them again).
    template <typename Turn>
    SEQEMBED_DETAIL_BLOCK static void for_each_head(const TokenHeads<Activation>& token, Turn&& turn) noexcept {
        Activation* const q = token.q;
        Activation* const k = token.k;
        const Index q_heads = token.q_heads;
        const Index k_heads = token.k_heads;
        const Index head_dim = token.head_dim;
        for (Index h = 0; h < q_heads; ++h) turn(q + h * head_dim);
        for (Index h = 0; h < k_heads; ++h) turn(k + h * head_dim);
    }
    static Index round_up(Index count, Index multiple) noexcept { return (count + multiple - 1) / multiple * multiple; }
    /// Whether every one of the count cosines and sines is zero or 2^-39 or more in magnitude
    /// (V::ordinary_factors): with activations of 2^-63 or more, no product is then subnormal
    /// and no result either. Asked only where the vector layer converts bfloat16.
    static bool ordinary_factors(const Compute* c, const Compute* s, Index count) noexcept {
        if constexpr (V::converts_bfloat16) {
            return V::ordinary_factors(c, s, count);
        } else {
            (void)c, (void)s, (void)count;
            return false;
        }
    }
    /// As ordinary_factors, for count vectors of cosines and of sines in registers.
    static bool ordinary_factors(const Reg* c, const Reg* s, std::size_t count) noexcept {
        if constexpr (V::converts_bfloat16) {
            return V::ordinary_factors(c, s, count);
        } else {
            (void)c, (void)s, (void)count;
            return false;
        }
    }
    static Compute to_compute(Table value) noexcept {
        if constexpr (std::is_same_v<Table, Eigen::bfloat16> || std::is_same_v<Table, Eigen::half>) {
            return static_cast<Compute>(static_cast<float>(value));
        } else {
            return static_cast<Compute>(value);
        }
    }
    /// c[i], s[i]: the count values of cos and sin in Compute.
    static void convert(const Table* cos, const Table* sin, Index count, Compute* c, Compute* s) noexcept {
        for (Index i = 0; i < count; ++i) {
            c[i] = to_compute(cos[i]);
            s[i] = to_compute(sin[i]);
        }
    }
    /// Zeros after the first `used` values of c and s, up to a multiple of `block`.
    static void pad(Compute* c, Compute* s, Index used, Index block) noexcept {
        for (Index i = used; i % block != 0; ++i) {
            c[i] = Compute(0);
            s[i] = Compute(0);
        }
    }
    /// As convert, each block of 2 * lanes values split as widen_split splits them: the even
    /// ones, then the odd ones; the last block padded with zeros.
    static void convert_split(const Table* cos, const Table* sin, Index count, Compute* c, Compute* s) noexcept {
        Index block = 0;
        if constexpr (std::is_same_v<Table, Compute>) {  // whole blocks split in registers
            for (; block + 2 * lanes <= count; block += 2 * lanes) {
                Reg even, odd;
                V::load_split(cos + block, even, odd);
                V::store(c + block, even);
                V::store(c + block + lanes, odd);
                V::load_split(sin + block, even, odd);
                V::store(s + block, even);
                V::store(s + block + lanes, odd);
            }
        }
        for (; block < count; block += 2 * lanes) {
            for (Index k = 0; k < lanes; ++k) {
                for (Index parity = 0; parity < 2; ++parity) {
                    const Index from = block + 2 * k + parity;
                    c[block + parity * lanes + k] = from < count ? to_compute(cos[from]) : Compute(0);
                    s[block + parity * lanes + k] = from < count ? to_compute(sin[from]) : Compute(0);
                }
            }
        }
    }
    /// A vector of `used` values (lanes, or fewer and zeros after them: the last pairs of a
    /// row, read with a mask) of activations or of c and s.
    static Reg load_used(const Compute* p, int used) noexcept {
        static_assert(std::is_same_v<Activation, Compute>, "bfloat16 activations go through widen_split");
        return used == lanes ? V::load(p) : V::load_first(p, used);
    }
    /// Writes the first `used` lanes of value.
    static void store_used(Compute* p, int used, Reg value) noexcept {
        if (used == lanes) {
            V::store(p, value);
        } else {
            V::store_first(p, used, value);
        }
    }
    static Compute load_one(const Activation* p) noexcept { return static_cast<Compute>(*p); }
    static void store_one(Activation* p, Compute value) noexcept { *p = static_cast<Activation>(value); }

    /// Reads `used` bfloat16 values (a block, or fewer and zeros after them) split as
    /// V::widen_split splits them: the last pairs of a row take the same operations as the
    /// others, in registers.
    static void read_split(const Activation* p, Index used, Reg& even, Reg& odd) noexcept {
        if (used == static_cast<Index>(block_values)) {
            V::widen_split(p, even, odd);
        } else {
            V::widen_split_first(p, static_cast<int>(used), even, odd);
        }
    }
    /// Writes the first `used` values of what read_split read.
    static void write_split(Activation* p, Index used, Reg even, Reg odd) noexcept {
        if (used == static_cast<Index>(block_values)) {
            V::narrow_split(p, even, odd);
        } else {
            V::narrow_split_first(p, static_cast<int>(used), even, odd);
        }
    }

    /// (x1 c - x2 s, x2 c + x1 s), each product rounded before the sum.
    static void turned(Reg x1, Reg x2, Reg cosine, Reg sine, Reg& y1, Reg& y2) noexcept {
        Reg x1c = V::mul(x1, cosine);
        Reg x2s = V::mul(x2, sine);
        Reg x2c = V::mul(x2, cosine);
        Reg x1s = V::mul(x1, sine);
        V::keep_rounded(x1c);
        V::keep_rounded(x2s);
        V::keep_rounded(x2c);
        V::keep_rounded(x1s);
        y1 = V::sub(x1c, x2s);
        y2 = V::add(x2c, x1s);
    }

    /// x c + partner s, each product rounded before the sum: x1 c - x2 s and x2 c + x1 s at once
    /// where s holds the sines negated in x1's lanes and partner holds each value's partner.
    static Reg turned_with(Reg x, Reg partner, Reg cosine, Reg sine) noexcept {
        Reg straight = V::mul(x, cosine);
        Reg swapped = V::mul(partner, sine);
        V::keep_rounded(straight);
        V::keep_rounded(swapped);
        return V::add(straight, swapped);
    }

    /// Pairs (first[i], second[i]).
    static void turn_halves(Activation* first, Activation* second, const Compute* c, const Compute* s,
                            Index count) noexcept {
        struct Turned {
            Reg y1, y2;
        };
        for_each_block(
            count, lanes,
            [&](Index i, Index used) {
                Turned out;
                const auto n = static_cast<int>(used);
                turned(load_used(first + i, n), load_used(second + i, n), load_used(c + i, n), load_used(s + i, n),
                       out.y1, out.y2);
                return out;
            },
            [&](Index i, Index used, const Turned& out) {
                store_used(first + i, static_cast<int>(used), out.y1);
                store_used(second + i, static_cast<int>(used), out.y2);
            });
    }

    /// Turns count pairs (or values) in blocks of `width`: turn(i, used) reads the block at i
    /// and turns it, write(i, used, turned) stores what it turned. Blocks are whole when count
    /// is width or more: the last one ends at count, overlapping the one before when count is
    /// not a multiple of width, and both are turned before either is written (the values they
    /// share come out the same from both). Fewer values make one block of count, which takes
    /// masks: a masked access whose vector reaches into values stored just before waits for
    /// that store (heads of 80 took seven times as long per value as heads of 128).
    template <typename Turn, typename Write>
    SEQEMBED_DETAIL_BLOCK static void for_each_block(Index count, Index width, Turn&& turn, Write&& write) noexcept {
        if (count < width) {
            if (count > 0) write(0, count, turn(0, count));
            return;
        }
        Index i = 0;
        for (; i + 2 * width <= count; i += width) write(i, width, turn(i, width));
        if (i + width == count) return write(i, width, turn(i, width));
        const auto before_last = turn(i, width);
        const auto last = turn(count - width, width);
        write(i, width, before_last);
        write(count - width, width, last);
    }

    /// Whether the CPU's conversion rounds the block of `used` activations at first and second
    /// (the same block twice when interleaved) to narrow_split's bits: where the vector layer has
    /// one, for blocks with ordinary factors and activations (V::ordinary_bfloat16, its first
    /// values alone for a block of fewer).
    SEQEMBED_DETAIL_BLOCK static bool converted(const Activation* first, const Activation* second, Index used,
                                                bool ordinary) noexcept {
        if constexpr (V::converts_bfloat16) {
            if (used == static_cast<Index>(block_values)) return ordinary && V::ordinary_bfloat16(first, second);
            return ordinary && V::ordinary_bfloat16_first(first, second, static_cast<int>(used));
        } else {
            (void)first, (void)second, (void)used, (void)ordinary;
            return false;
        }
    }
    /// Writes a turned block of `used` values: by the CPU's conversion when it is `converted`,
    /// otherwise by narrow_split.
    SEQEMBED_DETAIL_BLOCK static void write_turned(Activation* p, Index used, bool converted, Reg even,
                                                   Reg odd) noexcept {
        if constexpr (V::converts_bfloat16) {
            if (converted && used == static_cast<Index>(block_values)) return V::narrow_split_converted(p, even, odd);
            if (converted) return V::narrow_split_converted_first(p, static_cast<int>(used), even, odd);
        }
        write_split(p, used, even, odd);
    }

    /// Pairs (first[i], second[i]) of bfloat16 values for i below used (a block, or fewer), with
    /// the block's cosines and sines split as convert_split splits them.
    SEQEMBED_DETAIL_BLOCK static void turn_halves_block(Activation* first, Activation* second, Index used, Reg cos_even, Reg cos_odd,
                                  Reg sin_even, Reg sin_odd, bool ordinary) noexcept {
        Reg even1, odd1, even2, odd2;
        read_split(first, used, even1, odd1);
        read_split(second, used, even2, odd2);
        turned(even1, even2, cos_even, sin_even, even1, even2);
        turned(odd1, odd2, cos_odd, sin_odd, odd1, odd2);
        const bool by_cpu = converted(first, second, used, ordinary);
        write_turned(first, used, by_cpu, even1, odd1);
        write_turned(second, used, by_cpu, even2, odd2);
    }

    /// Pairs (first[i], second[i]) of bfloat16 values; c and s as convert_split ordered them.
    static void turn_halves_split(Activation* first, Activation* second, const Compute* c, const Compute* s,
                                  Index count, bool ordinary) noexcept {
        constexpr auto whole = static_cast<Index>(block_values);
        for (Index i = 0; i < count; i += whole)
            turn_halves_block(first + i, second + i, std::min(whole, count - i), V::load(c + i), V::load(c + i + lanes),
                              V::load(s + i), V::load(s + i + lanes), ordinary);
    }

    /// Two blocks of pairs (first_a[i], second_a[i]) and (first_b[i], second_b[i]), whole, all
    /// read before either is written: they may overlap, and the values they share come out the
    /// same from both (the same inputs, and either rounding gives narrow_split's bits).
    SEQEMBED_DETAIL_BLOCK static void turn_halves_block_pair(Activation* first_a, Activation* second_a,
                                                             Activation* first_b, Activation* second_b,
                                                             const Reg* cos_a, const Reg* sin_a, const Reg* cos_b,
                                                             const Reg* sin_b, bool ordinary) noexcept {
        constexpr auto whole = static_cast<Index>(block_values);
        Reg even1a, odd1a, even2a, odd2a, even1b, odd1b, even2b, odd2b;
        V::widen_split(first_a, even1a, odd1a);
        V::widen_split(second_a, even2a, odd2a);
        V::widen_split(first_b, even1b, odd1b);
        V::widen_split(second_b, even2b, odd2b);
        const bool by_cpu_a = converted(first_a, second_a, whole, ordinary);
        const bool by_cpu_b = converted(first_b, second_b, whole, ordinary);
        turned(even1a, even2a, cos_a[0], sin_a[0], even1a, even2a);
        turned(odd1a, odd2a, cos_a[1], sin_a[1], odd1a, odd2a);
        turned(even1b, even2b, cos_b[0], sin_b[0], even1b, even2b);
        turned(odd1b, odd2b, cos_b[1], sin_b[1], odd1b, odd2b);
        write_turned(first_a, whole, by_cpu_a, even1a, odd1a);
        write_turned(second_a, whole, by_cpu_a, even2a, odd2a);
        write_turned(first_b, whole, by_cpu_b, even1b, odd1b);
        write_turned(second_b, whole, by_cpu_b, even2b, odd2b);
    }

    /// turn_halves_split over every head of the token, for a row of Blocks blocks: the row's
    /// cosines and sines are read into registers once for all heads (read from memory in each
    /// block, they cost a third of bfloat16 decode's time), split in registers straight from a
    /// Compute table, otherwise through c and s (convert_split). Every block is whole when the
    /// row has one at least: the last one ends at count, overlapping the one before when count
    /// is not a multiple of a block (heads of 80 or 96). A block of fewer values takes masks,
    /// and a masked access whose vector reaches into values written just before waits for that
    /// store: heads of 80 took seven times as long as heads of 128 per value.
    template <std::size_t Blocks>
    static void turn_heads_halves_blocks(const TokenHeads<Activation>& token, Index pairs, Index first,
                                         const Table* cos, const Table* sin, Index count, Compute* c,
                                         Compute* s) noexcept {
        constexpr auto whole = static_cast<Index>(block_values);
        // Where block b starts in the row: b whole blocks in, the last one whole blocks from
        // the end (or at the start, holding all count values, when the row has fewer).
        Index starts[Blocks];
        SEQEMBED_DETAIL_UNROLL_ALL
        for (std::size_t b = 0; b < Blocks; ++b) starts[b] = static_cast<Index>(b) * whole;
        starts[Blocks - 1] = std::max(Index(0), count - whole);
        const Index last_used = std::min(count, whole);
        // Block b's cosines: even values in cosines[2 b], odd ones in cosines[2 b + 1]; sines alike.
        Reg cosines[2 * Blocks], sines[2 * Blocks];
        bool from_table = false;
        if constexpr (std::is_same_v<Table, Compute>) {
            from_table = last_used == whole;
            if (from_table) {
                SEQEMBED_DETAIL_UNROLL_ALL
                for (std::size_t b = 0; b < Blocks; ++b) {
                    V::load_split(cos + starts[b], cosines[2 * b], cosines[2 * b + 1]);
                    V::load_split(sin + starts[b], sines[2 * b], sines[2 * b + 1]);
                }
            }
        }
        if (!from_table) {
            SEQEMBED_DETAIL_UNROLL_ALL
            for (std::size_t b = 0; b < Blocks; ++b) {
                const Index at = static_cast<Index>(b) * whole;
                convert_split(cos + starts[b], sin + starts[b], std::min(whole, count - starts[b]), c + at, s + at);
                cosines[2 * b] = V::load(c + at);
                cosines[2 * b + 1] = V::load(c + at + lanes);
                sines[2 * b] = V::load(s + at);
                sines[2 * b + 1] = V::load(s + at + lanes);
            }
        }
        const bool ordinary = ordinary_factors(cosines, sines, 2 * Blocks);
        const auto turn_head = [&](Activation* head, Index last, bool ordinary_row) SEQEMBED_DETAIL_INLINED_LAMBDA {
            Activation* const row = head + first;
            if constexpr (Blocks == 1) {
                turn_halves_block(row, row + pairs, last, cosines[0], cosines[1], sines[0], sines[1], ordinary_row);
            } else {
                SEQEMBED_DETAIL_UNROLL_ALL
                for (std::size_t b = 0; b + 2 < Blocks; ++b)
                    turn_halves_block(row + starts[b], row + pairs + starts[b], whole, cosines[2 * b],
                                      cosines[2 * b + 1], sines[2 * b], sines[2 * b + 1], ordinary_row);
                constexpr std::size_t a = Blocks - 2;
                constexpr std::size_t z = Blocks - 1;
                turn_halves_block_pair(row + starts[a], row + pairs + starts[a], row + starts[z],
                                       row + pairs + starts[z], cosines + 2 * a, sines + 2 * a, cosines + 2 * z,
                                       sines + 2 * z, ordinary_row);
            }
        };
        if constexpr (V::converts_bfloat16) {
            // The common row, whole blocks of ordinary factors, in a loop of its own whose blocks
            // ask only whether their activations are ordinary (a fifth of the rest's branches).
            if (ordinary && last_used == whole) {
                return for_each_head(token, [&](Activation* head)
                                                SEQEMBED_DETAIL_INLINED_LAMBDA { turn_head(head, whole, true); });
            }
        }
        for_each_head(token, [&](Activation* head)
                                 SEQEMBED_DETAIL_INLINED_LAMBDA { turn_head(head, last_used, ordinary); });
    }

    /// turn_halves_split over every head of the token for rows of `lanes` pairs (GPT-NeoX's,
    /// Pythia's and Phi-2's 16 rotated pairs on AVX-512): both halves are one vector of 2 * lanes
    /// values, read and written whole. Split into even and odd values, a value's partner sits
    /// in the other half of its vector (swap_halves), so each vector is turned as
    /// x c' + swap_halves(x) s', with c' the cosines twice and s' the sines negated for the first
    /// half: x1 c - x2 s and x2 c + x1 s, each product rounded before the sum as elsewhere.
    static void turn_heads_halves_one_vector(const TokenHeads<Activation>& token, const Table* cos,
                                             const Table* sin, Compute* c, Compute* s) noexcept {
        // c and s hold c' and s' for the even values, then for the odd ones: value 2k + parity
        // of the vector is pair (2k + parity) mod lanes, in the first half below lanes.
        for (Index parity = 0; parity < 2; ++parity) {
            for (Index k = 0; k < lanes; ++k) {
                const Index value = 2 * k + parity;
                const Index pair = value % lanes;
                const Compute sine = to_compute(sin[pair]);
                c[parity * lanes + k] = to_compute(cos[pair]);
                s[parity * lanes + k] = value < lanes ? -sine : sine;
            }
        }
        const Reg cos_even = V::load(c);
        const Reg cos_odd = V::load(c + lanes);
        const Reg sin_even = V::load(s);
        const Reg sin_odd = V::load(s + lanes);
        const bool ordinary = ordinary_factors(&cos_even, &sin_even, 1) && ordinary_factors(&cos_odd, &sin_odd, 1);
        for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
            Reg even, odd;
            V::widen_split(head, even, odd);
            const bool by_cpu = converted(head, head, static_cast<Index>(block_values), ordinary);
            write_turned(head, static_cast<Index>(block_values), by_cpu,
                         turned_with(even, V::swap_halves(even), cos_even, sin_even),
                         turned_with(odd, V::swap_halves(odd), cos_odd, sin_odd));
        });
    }

    /// Turns the count pairs from `first` of every head of the token, bfloat16 halves; cos and
    /// sin are the table row's from `first`, c and s room for them split: rows of up to four
    /// blocks (128 pairs on AVX-512) with their cosines and sines in registers, longer ones from
    /// memory.
    static void turn_heads_halves_split(const TokenHeads<Activation>& token, Index pairs, Index first,
                                        const Table* cos, const Table* sin, Index count, Compute* c,
                                        Compute* s) noexcept {
        if constexpr (lanes >= 2) {
            if (pairs == lanes) return turn_heads_halves_one_vector(token, cos, sin, c, s);  // first is 0
        }
        switch (round_up(count, static_cast<Index>(block_values)) / static_cast<Index>(block_values)) {
            case 1: return turn_heads_halves_blocks<1>(token, pairs, first, cos, sin, count, c, s);
            case 2: return turn_heads_halves_blocks<2>(token, pairs, first, cos, sin, count, c, s);
            case 3: return turn_heads_halves_blocks<3>(token, pairs, first, cos, sin, count, c, s);
            case 4: return turn_heads_halves_blocks<4>(token, pairs, first, cos, sin, count, c, s);
            default: {
                convert_split(cos, sin, count, c, s);
                const bool ordinary = ordinary_factors(c, s, round_up(count, static_cast<Index>(block_values)));
                for_each_head(token, [&](Activation* head) {
                    turn_halves_split(head + first, head + pairs + first, c, s, count, ordinary);
                });
            }
        }
    }

    /// Pairs (x[2i], x[2i + 1]); c and s as rotate() doubled them.
    static void turn_interleaved(Activation* x, const Compute* c, const Compute* s, Index count) noexcept {
        const Index values = 2 * count;
        if constexpr (lanes >= 2) {
            for_each_block(
                values, lanes,
                [&](Index j, Index used) {
                    const auto n = static_cast<int>(used);
                    const Reg value = load_used(x + j, n);
                    return turned_with(value, V::swap_pairs(value), load_used(c + j, n), load_used(s + j, n));
                },
                [&](Index j, Index used, Reg out) { store_used(x + j, static_cast<int>(used), out); });
        } else {
            for (Index j = 0; j < values; j += 2) turn_pair(x + j, x + j + 1, c[j], s[j + 1]);
        }
    }

    /// Pairs (x[2i], x[2i + 1]) of bfloat16 values; c and s in order, padded to whole vectors.
    static void turn_interleaved_split(Activation* x, const Compute* c, const Compute* s, Index count,
                                       bool ordinary) noexcept {
        struct Turned {
            Reg x1, x2;
            bool by_cpu;
        };
        for_each_block(
            count, lanes,
            [&](Index i, Index pairs_used) {
                Turned out;
                const Index used = 2 * pairs_used;
                read_split(x + 2 * i, used, out.x1, out.x2);
                turned(out.x1, out.x2, V::load(c + i), V::load(s + i), out.x1, out.x2);
                out.by_cpu = converted(x + 2 * i, x + 2 * i, used, ordinary);
                return out;
            },
            [&](Index i, Index pairs_used, const Turned& out) {
                write_turned(x + 2 * i, 2 * pairs_used, out.by_cpu, out.x1, out.x2);
            });
    }

    static void turn_pair(Activation* first, Activation* second, Compute cosine, Compute sine) noexcept {
        const Compute x1 = load_one(first);
        const Compute x2 = load_one(second);
        Compute x1c = x1 * cosine;
        Compute x2s = x2 * sine;
        Compute x2c = x2 * cosine;
        Compute x1s = x1 * sine;
        keep_rounded(x1c);
        keep_rounded(x2s);
        keep_rounded(x2c);
        keep_rounded(x1s);
        store_one(first, x1c - x2s);
        store_one(second, x2c + x1s);
    }
};

#undef SEQEMBED_DETAIL_BLOCK
#undef SEQEMBED_DETAIL_INLINED_LAMBDA
