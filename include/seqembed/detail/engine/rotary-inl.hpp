// detail/engine/rotary-inl.hpp: the rotation of rotary position embedding (RoPE), written once
// over the vector layer.
//
// No include guard, by design: kernels-inl.hpp includes this file once per ISA, inside namespace
// seqembed::detail::<isa>_isa and that ISA's target region, and detail/engine/kernels.hpp
// includes it once more for the AVX-512 BF16 backend, whose other kernels are AVX-512's.
// A block is inlined whatever the compiler's estimate, so that its vectors stay in registers
// rather than pass through memory at a call. A loop over a token's heads with its row's factors
// in registers is never inlined: inlined into rotate(), the compiler keeps the factors of the
// one-vector row on the stack and reloads them for every head.
#if defined(__GNUC__) || defined(__clang__)
#define SEQEMBED_DETAIL_BLOCK __attribute__((always_inline)) inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA __attribute__((always_inline))
#define SEQEMBED_DETAIL_HEADS_LOOP __attribute__((noinline))
#else
#define SEQEMBED_DETAIL_BLOCK inline
#define SEQEMBED_DETAIL_INLINED_LAMBDA
#define SEQEMBED_DETAIL_HEADS_LOOP
#endif

/// The rotation of rotary position embedding (RoPE): a token's heads turned in place by the
/// cos and sin of its table row, pair i of a head being (x[i], x[i + pairs]) (halves) or
/// (x[2i], x[2i + 1]) (interleaved) and becoming
///   x1' = x1 c - x2 s,   x2' = x2 c + x1 s.
/// Float and double activations: each product rounded to Compute before the sum, as Hugging
/// Face's `q * cos + rotate_half(q) * sin` rounds them. bfloat16 activations: the sine's product
/// rounded to float, the cosine's fused with the sum (x1 c + x2 (-s) and x2 c + x1 s, one fused
/// multiply-add each), then one rounding to bfloat16: a rounding fewer, and four operations a
/// block fewer, than the products rounded apart. Compute is double for double activations, float
/// for float and bfloat16 ones; table values are converted to Compute first (exactly, or rounded
/// to nearest from a double table).
/// Float and double interleaved vectors compute x c' + swap(x) s' with c' the cosines doubled and
/// s' the sines doubled with the first of each pair negated. bfloat16 activations are read
/// 2 * lanes at a time, split into their even and odd values (V::widen_split), so that no value
/// crosses a lane on the way in or out: interleaved pairs are then (even, odd) as they stand, and
/// halves pair the even values of both halves with cosines in the same split order; a row's
/// cosines and sines stay in registers across its heads when it has up to four blocks. A halves
/// row short enough for both halves to fit one vector is turned as that vector, x c' + partner
/// s', each value's partner found by a lane swap or permute. Where the vector layer has a
/// bfloat16 conversion (AVX-512 BF16), blocks of ordinary values are rounded by it, which gives
/// narrow_split's bits (detail/simd/avx512_bf16.hpp). Every path does the same operations on each
/// pair, so every backend gives the scalar one's bits (x2 (-s) is -(x2 s) exactly: the table's
/// cosines and sines are finite, never NaN).
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
            if constexpr (split) {
                turn_heads_split(token, pairs, first, cos + first, sin + first, count, interleaved, c, s);
            } else {
                turn_heads(token, pairs, first, cos + first, sin + first, count, interleaved, c, s);
            }
        }
    }

private:
    /// Calls turn(head) for each head of the token's Q row, then of its K row. The fields are
    /// read once, into locals: the compiler cannot tell that a head's stores leave `token` alone,
    /// and would read them again after each head.
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
    /// Whether every one of the count cosines and sines is zero or 2^-33 or more in magnitude
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
    SEQEMBED_DETAIL_BLOCK static void read_split(const Activation* p, Index used, Reg& even, Reg& odd) noexcept {
        if (used == static_cast<Index>(block_values)) {
            V::widen_split(p, even, odd);
        } else {
            V::widen_split_first(p, static_cast<int>(used), even, odd);
        }
    }
    /// Writes the first `used` values of what read_split read.
    SEQEMBED_DETAIL_BLOCK static void write_split(Activation* p, Index used, Reg even, Reg odd) noexcept {
        if (used == static_cast<Index>(block_values)) {
            V::narrow_split(p, even, odd);
        } else {
            V::narrow_split_first(p, static_cast<int>(used), even, odd);
        }
    }

    /// (x1 c - x2 s, x2 c + x1 s): for bfloat16 activations x1 c + x2 (-s) and x2 c + x1 s with
    /// the sine's products rounded and the cosine's fused into the sums; otherwise each product
    /// rounded before the sum.
    static void turned(Reg x1, Reg x2, Reg cosine, Reg sine, Reg& y1, Reg& y2) noexcept {
        if constexpr (split) {
            // -(x2 s), exactly (the sines are finite). The negated sines are opaque: folded into
            // the product, AArch64's fnmul negates the product, a NaN's sign too.
            Reg negated = V::negate(sine);
            V::keep_rounded(negated);
            y1 = turned_with(x1, x2, cosine, negated);
            y2 = turned_with(x2, x1, cosine, sine);
            return;
        }
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

    /// x c + partner s: x1 c - x2 s and x2 c + x1 s at once where s holds the sines negated in
    /// x1's lanes and partner holds each value's partner; rounded as turned() rounds.
    static Reg turned_with(Reg x, Reg partner, Reg cosine, Reg sine) noexcept {
        if constexpr (split) {
            Reg swapped = V::mul(partner, sine);
            V::keep_rounded(swapped);
            return V::mul_add(x, cosine, swapped);
        }
        Reg straight = V::mul(x, cosine);
        Reg swapped = V::mul(partner, sine);
        V::keep_rounded(straight);
        V::keep_rounded(swapped);
        return V::add(straight, swapped);
    }

    /// Turns the count pairs from `first` of every head of the token, float or double
    /// activations; cos and sin are the table row's from `first`, c and s room for them.
    static void turn_heads(const TokenHeads<Activation>& token, Index pairs, Index first, const Table* cos,
                           const Table* sin, Index count, bool interleaved, Compute* c, Compute* s) noexcept {
        const Compute* cosines = c;
        const Compute* sines = s;
        if (interleaved) {
            for (Index i = 0; i < count; ++i) {
                const Compute cosine = to_compute(cos[i]);
                const Compute sine = to_compute(sin[i]);
                c[2 * i] = cosine;
                c[2 * i + 1] = cosine;
                s[2 * i] = -sine;
                s[2 * i + 1] = sine;
            }
            for_each_head(token, [&](Activation* head) { turn_interleaved(head + 2 * first, cosines, sines, count); });
            return;
        }
        if constexpr (std::is_same_v<Table, Compute>) {
            cosines = cos;  // the table's own row, as it stands
            sines = sin;
        } else {
            convert(cos, sin, count, c, s);
        }
        for_each_head(token, [&](Activation* head) { turn_halves(head + first, head + pairs + first, cosines, sines, count); });
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
    /// As converted, for the block of `used` activations at p alone (interleaved pairs).
    SEQEMBED_DETAIL_BLOCK static bool converted(const Activation* p, Index used, bool ordinary) noexcept {
        if constexpr (V::converts_bfloat16) {
            if (used == static_cast<Index>(block_values)) return ordinary && V::ordinary_bfloat16(p);
            return ordinary && V::ordinary_bfloat16_first(p, static_cast<int>(used));
        } else {
            (void)p, (void)used, (void)ordinary;
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

    /// A block of bfloat16 pairs, read and turned, not yet written: halves, up to 2 * lanes
    /// pairs, x1 in (even1, odd1) and x2 in (even2, odd2) as widen_split split them; interleaved,
    /// up to lanes pairs, x1 in even1 and x2 in odd1 (one vector's even and odd values).
    struct TurnedBlock {
        Reg even1, odd1, even2, odd2;
        bool by_cpu;
    };
    /// A block's cosines (or sines): [0] for interleaved pairs or halves' even values, [1] for
    /// halves' odd ones.
    struct BlockFactors {
        Reg r[2];
        Reg operator[](std::size_t i) const noexcept { return r[i]; }
    };
    /// Pairs in a whole block: 2 * lanes for halves, lanes interleaved.
    template <bool Interleaved>
    static constexpr Index block_pairs = Interleaved ? lanes : 2 * lanes;
    /// Vectors of cosines (and of sines) a block takes: even and odd values for halves, one
    /// interleaved.
    template <bool Interleaved>
    static constexpr std::size_t block_factors = Interleaved ? 1 : 2;

    /// Reads and turns the `used` pairs from `start` of a head's rotated row (halves: x1 at row,
    /// x2 at row + pairs; interleaved: pair i at row + 2 i): a whole block, or fewer under masks.
    /// Its factors: c[0] and s[0], and c[1] and s[1] for halves' odd values, passed by value (by
    /// pointer, the compiler keeps the row's factors in memory and spills the block).
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static TurnedBlock turn_block(const Activation* row, Index pairs, Index start, Index used,
                                                       BlockFactors c, BlockFactors s, bool ordinary) noexcept {
        TurnedBlock out;
        if constexpr (Interleaved) {
            (void)pairs;
            read_split(row + 2 * start, 2 * used, out.even1, out.odd1);
            turned(out.even1, out.odd1, c[0], s[0], out.even1, out.odd1);
            out.by_cpu = converted(row + 2 * start, 2 * used, ordinary);
            out.even2 = out.odd2 = V::set(Compute(0));  // unused: set, as the block is copied
        } else {
            read_split(row + start, used, out.even1, out.odd1);
            read_split(row + pairs + start, used, out.even2, out.odd2);
            turned(out.even1, out.even2, c[0], s[0], out.even1, out.even2);
            turned(out.odd1, out.odd2, c[1], s[1], out.odd1, out.odd2);
            out.by_cpu = converted(row + start, row + pairs + start, used, ordinary);
        }
        return out;
    }
    /// Writes what turn_block turned from `start`.
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static void write_block(Activation* row, Index pairs, Index start, Index used,
                                                  const TurnedBlock& block) noexcept {
        if constexpr (Interleaved) {
            (void)pairs;
            write_turned(row + 2 * start, 2 * used, block.by_cpu, block.even1, block.odd1);
        } else {
            write_turned(row + start, used, block.by_cpu, block.even1, block.odd1);
            write_turned(row + pairs + start, used, block.by_cpu, block.even2, block.odd2);
        }
    }

    /// Pairs (row[i], row[pairs + i]) of bfloat16 values for i below count, block by block; c and
    /// s as convert_split ordered them.
    static void turn_halves_split(Activation* row, Index pairs, const Compute* c, const Compute* s, Index count,
                                  bool ordinary) noexcept {
        constexpr auto whole = static_cast<Index>(block_values);
        for (Index i = 0; i < count; i += whole) {
            const Index used = std::min(whole, count - i);
            const BlockFactors cosines{{V::load(c + i), V::load(c + i + lanes)}};
            const BlockFactors sines{{V::load(s + i), V::load(s + i + lanes)}};
            write_block<false>(row, pairs, i, used, turn_block<false>(row, pairs, i, used, cosines, sines, ordinary));
        }
    }

    /// The factors of the block of `used` pairs from cos and sin (the table's row, converted to
    /// Compute), split as the block's activations are; the last block of a row of fewer is
    /// padded with zeros.
    template <bool Interleaved>
    static void load_factors(const Table* cos, const Table* sin, Index used, Reg* c, Reg* s, Compute* c_room,
                             Compute* s_room) noexcept {
        if constexpr (std::is_same_v<Table, Compute>) {
            if (used == block_pairs<Interleaved>) {
                if constexpr (Interleaved) {
                    c[0] = V::load(cos);
                    s[0] = V::load(sin);
                } else {
                    V::load_split(cos, c[0], c[1]);
                    V::load_split(sin, s[0], s[1]);
                }
                return;
            }
        }
        if constexpr (Interleaved) {
            convert(cos, sin, used, c_room, s_room);
            pad(c_room, s_room, used, lanes);
        } else {
            convert_split(cos, sin, used, c_room, s_room);
        }
        SEQEMBED_DETAIL_UNROLL_ALL
        for (std::size_t r = 0; r < block_factors<Interleaved>; ++r) {
            c[r] = V::load(c_room + static_cast<Index>(r) * lanes);
            s[r] = V::load(s_room + static_cast<Index>(r) * lanes);
        }
    }

    /// Turns the count pairs from `first` of every head of the token, for a row of Blocks blocks:
    /// the row's cosines and sines are read into registers once for all heads (read from memory
    /// in each block, they cost a third of bfloat16 decode's time), split in registers straight
    /// from a Compute table, otherwise through c and s. Every block is whole when the row has one
    /// at least: the last one ends at count, overlapping the one before when count is not a
    /// multiple of a block (heads of 80 or 96), and both are read before either is written (the
    /// values they share come out the same from both: the same inputs, and either rounding gives
    /// narrow_split's bits): a masked access whose vector reaches into values written just
    /// before waits for that store (heads of 80 took seven times as long as heads of 128 per
    /// value). Only a row shorter than a block takes masks.
    template <bool Interleaved, std::size_t Blocks>
    SEQEMBED_DETAIL_HEADS_LOOP static void turn_heads_blocks(const TokenHeads<Activation>& token, Index pairs, Index first, const Table* cos,
                                  const Table* sin, Index count, Compute* c, Compute* s) noexcept {
        constexpr Index whole = block_pairs<Interleaved>;
        constexpr std::size_t factors = block_factors<Interleaved>;
        // Where block b starts in the row: b whole blocks in, the last one whole blocks from
        // the end (or at the start, holding all count pairs, when the row has fewer).
        Index starts[Blocks];
        SEQEMBED_DETAIL_UNROLL_ALL
        for (std::size_t b = 0; b < Blocks; ++b) starts[b] = static_cast<Index>(b) * whole;
        starts[Blocks - 1] = std::max(Index(0), count - whole);
        // Block b's cosines in cosines[factors b] on, its sines in sines[factors b] on.
        Reg cosines[factors * Blocks], sines[factors * Blocks];
        SEQEMBED_DETAIL_UNROLL_ALL
        for (std::size_t b = 0; b < Blocks; ++b) {
            const Index at = static_cast<Index>(b * factors) * lanes;
            load_factors<Interleaved>(cos + starts[b], sin + starts[b], std::min(whole, count - starts[b]),
                                      cosines + factors * b, sines + factors * b, c + at, s + at);
        }
        const bool ordinary = ordinary_factors(cosines, sines, factors * Blocks);
        const Index offset = Interleaved ? 2 * first : first;  // of the row in the head
        // Block b's factors, as values.
        const auto factors_of = [](const Reg* regs, std::size_t b) SEQEMBED_DETAIL_INLINED_LAMBDA {
            return BlockFactors{{regs[factors * b], regs[factors * b + factors - 1]}};
        };
        // A row of whole blocks, every head at once.
        const auto turn_head = [&](Activation* head, bool ordinary_row) SEQEMBED_DETAIL_INLINED_LAMBDA {
            Activation* const row = head + offset;
            if constexpr (Blocks == 1) {
                write_block<Interleaved>(row, pairs, 0, whole,
                                         turn_block<Interleaved>(row, pairs, 0, whole, factors_of(cosines, 0),
                                                                 factors_of(sines, 0), ordinary_row));
            } else {
                SEQEMBED_DETAIL_UNROLL_ALL
                for (std::size_t b = 0; b + 2 < Blocks; ++b)
                    write_block<Interleaved>(row, pairs, starts[b], whole,
                                             turn_block<Interleaved>(row, pairs, starts[b], whole,
                                                                     factors_of(cosines, b), factors_of(sines, b),
                                                                     ordinary_row));
                constexpr std::size_t a = Blocks - 2;
                constexpr std::size_t z = Blocks - 1;
                const TurnedBlock before_last = turn_block<Interleaved>(
                    row, pairs, starts[a], whole, factors_of(cosines, a), factors_of(sines, a), ordinary_row);
                const TurnedBlock last_block = turn_block<Interleaved>(
                    row, pairs, starts[z], whole, factors_of(cosines, z), factors_of(sines, z), ordinary_row);
                write_block<Interleaved>(row, pairs, starts[a], whole, before_last);
                write_block<Interleaved>(row, pairs, starts[z], whole, last_block);
            }
        };
        if (Blocks == 1 && count < whole) {
            // One block of fewer pairs, under masks. A masked store's vector reaches past its
            // values, into the next head when the row ends less than a vector before the head
            // does (heads of 48), and a load there waits until that store reaches the cache:
            // each such head is read before the one before it is written.
            const auto turn_used = [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                return turn_block<Interleaved>(head + offset, pairs, 0, count, factors_of(cosines, 0),
                                               factors_of(sines, 0), ordinary);
            };
            const Index last_store = Interleaved ? 2 * first : pairs + first;  // in the head
            if (last_store + static_cast<Index>(block_values) <= token.head_dim) {
                return for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                    write_block<Interleaved>(head + offset, pairs, 0, count, turn_used(head));
                });
            }
            Activation* pending = nullptr;
            TurnedBlock turned_before{};
            for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                const TurnedBlock now = turn_used(head);
                if (pending != nullptr) write_block<Interleaved>(pending, pairs, 0, count, turned_before);
                pending = head + offset;
                turned_before = now;
            });
            if (pending != nullptr) write_block<Interleaved>(pending, pairs, 0, count, turned_before);
            return;
        }
        if constexpr (V::converts_bfloat16) {
            // The common row, whole blocks of ordinary factors, in a loop of its own whose blocks
            // ask only whether their activations are ordinary (a fifth of the rest's branches).
            if (ordinary) {
                return for_each_head(token, [&](Activation* head)
                                                SEQEMBED_DETAIL_INLINED_LAMBDA { turn_head(head, true); });
            }
        }
        for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA { turn_head(head, ordinary); });
    }

    /// turn_halves_split over every head of the token for rows of `lanes` pairs (Phi-2's and
    /// Pythia-6.9B's 16 rotated pairs on AVX-512): both halves are one vector of 2 * lanes
    /// values, read and written whole. Split into even and odd values, a value's partner sits
    /// in the other half of its vector (swap_halves), so each vector is turned as
    /// x c' + swap_halves(x) s', with c' the cosines twice and s' the sines negated for the first
    /// half: x1 c - x2 s and x2 c + x1 s, each product rounded before the sum as elsewhere.
    SEQEMBED_DETAIL_HEADS_LOOP static void turn_heads_halves_one_vector(const TokenHeads<Activation>& token, const Table* cos,
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
            const bool by_cpu = converted(head, static_cast<Index>(block_values), ordinary);
            write_turned(head, static_cast<Index>(block_values), by_cpu,
                         turned_with(even, V::swap_halves(even), cos_even, sin_even),
                         turned_with(odd, V::swap_halves(odd), cos_odd, sin_odd));
        });
    }

    /// turn_halves_split over every head of the token for a row of fewer than `lanes` pairs
    /// (Pythia's 8 rotated pairs, StableLM's 10, GPT-NeoX-20B's 12 on AVX-512), in heads that hold
    /// a whole vector: x1 and x2 are the vector's first 2 count values, read whole, each value's
    /// partner picked by lane permutes (V::partner_split), turned as x c' + partner s' (c' the
    /// cosines twice, s' the sines negated for x1: one_vector's products and sums) and written
    /// under a mask. Once a block each, under masks, they would take a whole block's work and
    /// more.
    SEQEMBED_DETAIL_HEADS_LOOP static void turn_heads_halves_short(const TokenHeads<Activation>& token,
                                                                   const Table* cos, const Table* sin, Index count,
                                                                   Compute* c, Compute* s) noexcept {
        // Value 2k + parity of the vector is pair (2k + parity) mod count, in x1 below count;
        // the values past 2 count are not written, and take zeros.
        for (Index parity = 0; parity < 2; ++parity) {
            for (Index k = 0; k < lanes; ++k) {
                const Index value = 2 * k + parity;
                const bool rotated = value < 2 * count;
                const Index pair = value < count ? value : (rotated ? value - count : 0);
                const Compute sine = rotated ? to_compute(sin[pair]) : Compute(0);
                c[parity * lanes + k] = rotated ? to_compute(cos[pair]) : Compute(0);
                s[parity * lanes + k] = value < count ? -sine : sine;
            }
        }
        const BlockFactors cosines{{V::load(c), V::load(c + lanes)}};
        const BlockFactors sines{{V::load(s), V::load(s + lanes)}};
        const bool ordinary = ordinary_factors(cosines.r, sines.r, 2);
        const auto partners = V::partners_of(static_cast<int>(count));
        const Index used = 2 * count;
        for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
            Reg even, odd, partner_even, partner_odd;
            V::widen_split(head, even, odd);
            V::partner_split(partners, even, odd, partner_even, partner_odd);
            even = turned_with(even, partner_even, cosines[0], sines[0]);
            odd = turned_with(odd, partner_odd, cosines[1], sines[1]);
            write_turned(head, used, converted(head, used, ordinary), even, odd);
        });
    }

    /// Turns the count pairs from `first` of every head of the token, bfloat16 activations; cos
    /// and sin are the table row's from `first`, c and s room for them split: rows of up to four
    /// blocks (128 pairs halves, 64 interleaved, on AVX-512) with their cosines and sines in
    /// registers, longer ones from memory.
    static void turn_heads_split(const TokenHeads<Activation>& token, Index pairs, Index first, const Table* cos,
                                 const Table* sin, Index count, bool interleaved, Compute* c, Compute* s) noexcept {
        if (interleaved) return turn_heads_split<true>(token, pairs, first, cos, sin, count, c, s);
        if constexpr (lanes >= 2) {
            if (pairs == lanes) return turn_heads_halves_one_vector(token, cos, sin, c, s);  // first is 0
        }
        if constexpr (V::permutes_pairs) {
            if (pairs < lanes && token.head_dim >= static_cast<Index>(block_values))  // count is pairs
                return turn_heads_halves_short(token, cos, sin, count, c, s);
        }
        turn_heads_split<false>(token, pairs, first, cos, sin, count, c, s);
    }
    template <bool Interleaved>
    static void turn_heads_split(const TokenHeads<Activation>& token, Index pairs, Index first, const Table* cos,
                                 const Table* sin, Index count, Compute* c, Compute* s) noexcept {
        switch (round_up(count, block_pairs<Interleaved>) / block_pairs<Interleaved>) {
            case 1: return turn_heads_blocks<Interleaved, 1>(token, pairs, first, cos, sin, count, c, s);
            case 2: return turn_heads_blocks<Interleaved, 2>(token, pairs, first, cos, sin, count, c, s);
            case 3: return turn_heads_blocks<Interleaved, 3>(token, pairs, first, cos, sin, count, c, s);
            case 4: return turn_heads_blocks<Interleaved, 4>(token, pairs, first, cos, sin, count, c, s);
            default: break;
        }
        if constexpr (Interleaved) {
            convert(cos, sin, count, c, s);
            pad(c, s, count, lanes);
            const bool ordinary = ordinary_factors(c, s, round_up(count, lanes));
            for_each_head(token, [&](Activation* head) { turn_interleaved_split(head + 2 * first, c, s, count, ordinary); });
        } else {
            convert_split(cos, sin, count, c, s);
            const bool ordinary = ordinary_factors(c, s, round_up(count, static_cast<Index>(block_values)));
            for_each_head(token, [&](Activation* head) {
                turn_halves_split(head + first, pairs, c, s, count, ordinary);
            });
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
        for_each_block(
            count, lanes,
            [&](Index i, Index used) {
                const Reg cosine = V::load(c + i);
                const Reg sine = V::load(s + i);
                return turn_block<true>(x, 0, i, used, BlockFactors{{cosine, cosine}}, BlockFactors{{sine, sine}},
                                        ordinary);
            },
            [&](Index i, Index used, const TurnedBlock& out) { write_block<true>(x, 0, i, used, out); });
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
#undef SEQEMBED_DETAIL_HEADS_LOOP
