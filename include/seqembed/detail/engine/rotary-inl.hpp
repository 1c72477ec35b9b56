// detail/engine/rotary-inl.hpp: the rotation of rotary position embedding (RoPE), written once
// over the vector layer.
//
// No include guard, by design: kernels-inl.hpp includes this file once per ISA, inside namespace
// seqembed::detail::<isa>_isa and that ISA's target region, and detail/engine/kernels.hpp
// includes it once more for the AVX-512 BF16 backend, whose other kernels are AVX-512's.
// The helpers of a block are inlined whatever the compiler's estimate (SEQEMBED_DETAIL_BLOCK,
// detail/engine/kernels.hpp), so that a block's vectors and its factors stay in registers rather
// than pass through memory at a call.

/// The rotation of rotary position embedding (RoPE): a token's heads turned in place by the
/// cos and sin of its table row, pair i of a head being (x[i], x[i + pairs]) (halves) or
/// (x[2i], x[2i + 1]) (interleaved) and becoming
///   x1' = x1 c - x2 s,   x2' = x2 c + x1 s.
/// Float and double activations: each product rounded to Compute before the sum, as Hugging
/// Face's `q * cos + rotate_half(q) * sin` rounds them. bfloat16 activations: the sine's product
/// rounded to float, the cosine's fused with the sum (x1 c + x2 (-s) and x2 c + x1 s, one fused
/// multiply-add each), then one rounding to bfloat16. Compute is double for double activations,
/// float for float and bfloat16 ones; table values are converted to Compute first (exactly, or
/// rounded to nearest from a double table).
///
/// One engine for every layout and activation type:
/// - A block is `regs` vectors of Compute holding block_values activations: one load for float
///   and double, or, for bfloat16 activations (and wherever a vector has one lane), a split
///   read (V::widen_split, V::load_split) that puts values 0, 2, 4, ... in one vector and
///   1, 3, 5, ... in the other, so that no value crosses a lane on the way in or out.
/// - Every value is turned by one primitive, turned(x, partner, c, s) = x c + partner s, with s
///   the sine negated where x is a pair's first value: halves take x1 and x2 from two blocks,
///   interleaved pairs find the partner in their own block (the other split vector, or the
///   neighbouring lane), and where the vector layer permutes across a split block
///   (V::permutes_pairs) a halves row of up to half a block is one block whose values find
///   their partners by a lane permutation.
/// - A row of a head is cut into whole blocks; when its length is not a multiple of a block, the
///   last block ends at the row's end, overlapping the one before, and the two are read before
///   either is written (the values they share come out the same from both). Only a row shorter
///   than a block is read and written under masks.
/// - A row's factors (cosines and sines; halves negate the sines where they are used) are built
///   once per token, before its heads, and heads are turned one after the other, in memory
///   order. A row whose factors take at most 16 vectors where a vector is 64 bytes (32
///   registers), 8 otherwise, builds them straight into registers and holds them across the
///   heads (held_blocks); a longer one lays them out on the stack, a split block's in a slot of
///   their own (its order depends on where it starts, and the overlapping block starts
///   anywhere), otherwise in the row's order (for halves from a table of Compute, the table's
///   row itself), and reads them in each block. Which applies follows from the pairs, the
///   layout and the vector width alone.
/// Where the vector layer rounds bfloat16 with the CPU's conversion (V::converts_bfloat16,
/// AVX-512 BF16), a block goes through it when its factors and activations are ordinary (the
/// results then cannot be subnormal, and the conversion gives narrow_split's bits:
/// detail/simd/avx512_bf16.hpp), through narrow_split otherwise. So every backend gives the
/// scalar one's bits. The negated sines pass through keep_rounded_each_time: folded into a product,
/// AArch64's fnmul negates the product, a NaN's sign too (x2 (-s) is -(x2 s) exactly otherwise:
/// the table's cosines and sines are finite).
template <typename Table, typename Activation>
struct RotaryKernel {
    using Compute = std::conditional_t<std::is_same_v<Activation, double>, double, float>;
    using V = Lanes<Compute>;
    using Reg = typename V::Reg;
    static constexpr int lanes = V::count;
    /// Whether activations are bfloat16, widened to float on the way in.
    static constexpr bool widens = std::is_same_v<Activation, Eigen::bfloat16>;
    /// Whether a block is read split into even and odd values (bfloat16, or one-lane vectors,
    /// for which the split order is the row's own).
    static constexpr bool split = widens || lanes == 1;
    /// Vectors in a block.
    static constexpr int regs = split ? 2 : 1;
    /// Activations in a block.
    static constexpr Index block_values = static_cast<Index>(regs) * lanes;
    /// Whether a halves row of up to half a block is read as one block, each value's partner
    /// found by a lane permutation (V::partner_split), rather than as two blocks under masks.
    static constexpr bool packs() noexcept {
        if constexpr (widens) {
            return V::permutes_pairs;
        } else {
            return false;
        }
    }
    /// Whether the vector layer rounds bfloat16 results with the CPU's conversion.
    static constexpr bool converts() noexcept {
        if constexpr (widens) {
            return V::converts_bfloat16;
        } else {
            return false;
        }
    }

    /// Rotates the first 2 * pairs dimensions of every head of the token's Q and K rows; cos and
    /// sin hold the row's pairs values, prepared once for both.
    static void rotate(const Table* cos, const Table* sin, Index pairs, bool interleaved,
                       const TokenHeads<Activation>& token) noexcept {
        if (interleaved) {
            turn_row<true>(cos, sin, pairs, token);
        } else if (packs() && 2 * pairs <= block_values) {
            turn_packed(cos, sin, pairs, token);
        } else {
            turn_row<false>(cos, sin, pairs, token);
        }
    }

private:
    /// block_values activations (or fewer, zeros after them) in Compute: vector r's lane k is
    /// the block's value at(r, k).
    struct Block {
        Reg r[static_cast<std::size_t>(regs)];
    };
    /// Where lane k of vector r of a block lies in the block.
    static constexpr Index at(int r, int k) noexcept {
        return split ? 2 * static_cast<Index>(k) + r : static_cast<Index>(r) * lanes + k;
    }
    /// A block's factors, lane for lane: cosines and sines. Interleaved, `sines` already holds
    /// each pair's first value's sine negated; halves negate the sines where they are used.
    struct Factors {
        Block cosines, sines;
        /// Whether every cosine and sine is zero or 2^-33 or more in magnitude (asked only
        /// where the vector layer converts bfloat16).
        bool ordinary;
    };
    /// A turned block, not yet written: the first values (halves: x1') and, for halves, the
    /// second (x2'); whether the CPU's conversion may round them.
    struct Turned {
        Block first, second;
        bool by_cpu;
    };

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

    static Compute to_compute(Table value) noexcept {
        if constexpr (std::is_same_v<Table, Eigen::bfloat16> || std::is_same_v<Table, Eigen::half>) {
            return static_cast<Compute>(static_cast<float>(value));
        } else {
            return static_cast<Compute>(value);
        }
    }

    /// Reads the block at p: whole, or its first `used` values (fewer than block_values) under
    /// masks and zeros after them.
    SEQEMBED_DETAIL_BLOCK static Block read(const Activation* p, Index used) noexcept {
        Block b;
        if constexpr (widens) {
            if (used == block_values) {
                V::widen_split(p, b.r[0], b.r[1]);
            } else {
                V::widen_split_first(p, static_cast<int>(used), b.r[0], b.r[1]);
            }
        } else {
            // split with one lane: vector r is value r.
            for (int r = 0; r < regs; ++r) {
                const Index from = static_cast<Index>(r) * lanes;
                const Index left = std::max(Index(0), std::min(Index(lanes), used - from));
                b.r[r] = left == lanes ? V::load(p + from) : V::load_first(p + from, static_cast<int>(left));
            }
        }
        return b;
    }
    /// Writes the first `used` values of b at p (all block_values, or fewer under masks), by the
    /// CPU's conversion when by_cpu.
    SEQEMBED_DETAIL_BLOCK static void write(Activation* p, Index used, const Block& b, bool by_cpu) noexcept {
        if constexpr (widens) {
            const bool whole = used == block_values;
            if constexpr (converts()) {
                if (by_cpu && whole) return V::narrow_split_converted(p, b.r[0], b.r[1]);
                if (by_cpu) return V::narrow_split_converted_first(p, static_cast<int>(used), b.r[0], b.r[1]);
            }
            (void)by_cpu;
            if (whole) {
                V::narrow_split(p, b.r[0], b.r[1]);
            } else {
                V::narrow_split_first(p, static_cast<int>(used), b.r[0], b.r[1]);
            }
        } else {
            (void)by_cpu;
            for (int r = 0; r < regs; ++r) {
                const Index from = static_cast<Index>(r) * lanes;
                const Index left = std::max(Index(0), std::min(Index(lanes), used - from));
                if (left == lanes) {
                    V::store(p + from, b.r[r]);
                } else {
                    V::store_first(p + from, static_cast<int>(left), b.r[r]);
                }
            }
        }
    }
    /// Whether the CPU's conversion may round the block of `used` activations at p (and at
    /// second, for halves' x2): ordinary factors and activations (V::ordinary_bfloat16, the
    /// first `used` values alone for a block of fewer).
    SEQEMBED_DETAIL_BLOCK static bool by_cpu(bool ordinary, const Activation* p, const Activation* second,
                                             Index used) noexcept {
        if constexpr (converts()) {
            if (!ordinary) return false;
            const bool whole = used == block_values;
            if (second == nullptr)
                return whole ? V::ordinary_bfloat16(p) : V::ordinary_bfloat16_first(p, static_cast<int>(used));
            return whole ? V::ordinary_bfloat16(p, second)
                         : V::ordinary_bfloat16_first(p, second, static_cast<int>(used));
        } else {
            (void)ordinary, (void)p, (void)second, (void)used;
            return false;
        }
    }

    /// The rotation of one vector: x c + partner s, the sine's product rounded before the sum;
    /// the cosine's rounded too for float and double activations, fused into the sum for
    /// bfloat16 ones. When both products are NaN (a pair of two NaNs), the sum is x c's: the
    /// operands' order is fixed (V::add_in_order), which a compiler's commuted addition is not.
    SEQEMBED_DETAIL_BLOCK static Reg turned(Reg x, Reg partner, Reg cosine, Reg sine) noexcept {
        Reg swapped = V::mul(partner, sine);
        V::keep_rounded(swapped);
        if constexpr (widens) {
            return V::mul_add(x, cosine, swapped);
        } else {
            Reg straight = V::mul(x, cosine);
            V::keep_rounded(straight);
            return V::add_in_order(straight, swapped);
        }
    }
    /// turned() lane for lane over a block.
    SEQEMBED_DETAIL_BLOCK static Block turned(const Block& x, const Block& partner, const Block& c,
                                              const Block& s) noexcept {
        Block y;
        for (int r = 0; r < regs; ++r) y.r[r] = turned(x.r[r], partner.r[r], c.r[r], s.r[r]);
        return y;
    }
    /// A block of sines negated, each kept apart from the product it goes into (see above), and
    /// negated where it is used: held across the heads, the negated sines would take as many
    /// registers again as the sines.
    SEQEMBED_DETAIL_BLOCK static Block negated(const Block& s) noexcept {
        Block n;
        for (int r = 0; r < regs; ++r) {
            n.r[r] = V::negate(s.r[r]);
            V::keep_rounded_each_time(n.r[r]);
        }
        return n;
    }
    /// Each value's partner in an interleaved block: the other split vector, or the
    /// neighbouring lane.
    SEQEMBED_DETAIL_BLOCK static Block partners(const Block& x) noexcept {
        Block p;
        if constexpr (split) {
            p.r[0] = x.r[1];
            p.r[1] = x.r[0];
        } else {
            p.r[0] = V::swap_pairs(x.r[0]);
        }
        return p;
    }

    /// The factors of a split block from `start` of a row (pairs for halves, values
    /// interleaved), whose first `used` values are the row's and the rest zeros, into c and s
    /// lane for lane (vector r at r lanes): interleaved, a pair's first value takes its sine
    /// negated.
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static void split_factors(const Table* cos, const Table* sin, Index start, Index used,
                                                    Compute* c, Compute* s) noexcept {
        if constexpr (std::is_same_v<Table, Compute>) {
            if (used == block_values) {
                Reg cosines[2], sines[2];
                if constexpr (Interleaved) {  // pair k of the block in lane k of both vectors
                    cosines[0] = cosines[1] = V::load(cos + start / 2);
                    sines[1] = V::load(sin + start / 2);
                    sines[0] = V::negate(sines[1]);
                } else {
                    V::load_split(cos + start, cosines[0], cosines[1]);
                    V::load_split(sin + start, sines[0], sines[1]);
                }
                for (int r = 0; r < 2; ++r) {
                    V::store(c + static_cast<Index>(r) * lanes, cosines[r]);
                    V::store(s + static_cast<Index>(r) * lanes, sines[r]);
                }
                return;
            }
        }
        for (int r = 0; r < regs; ++r) {
            for (int k = 0; k < lanes; ++k) {
                const Index value = at(r, k);
                const Index lane = static_cast<Index>(r) * lanes + k;
                const Index pair = Interleaved ? (start + value) / 2 : start + value;
                const bool used_value = value < used;
                const Compute sine = used_value ? to_compute(sin[pair]) : Compute(0);
                c[lane] = used_value ? to_compute(cos[pair]) : Compute(0);
                s[lane] = Interleaved && (start + value) % 2 == 0 ? -sine : sine;
            }
        }
    }
    /// The factors of `count` row units from `from` (pairs for halves, values interleaved) in
    /// the row's order, into c and s: interleaved, a pair's cosine twice and its sine negated
    /// then as it is.
    template <bool Interleaved>
    static void row_factors(const Table* cos, const Table* sin, Index from, Index count, Compute* c,
                            Compute* s) noexcept {
        if constexpr (Interleaved) {
            const Table* const cosines = cos + from / 2;  // from is even
            const Table* const sines = sin + from / 2;
            for (Index i = 0; i < count / 2; ++i) {
                const Compute sine = to_compute(sines[i]);
                c[2 * i] = c[2 * i + 1] = to_compute(cosines[i]);
                s[2 * i] = -sine;
                s[2 * i + 1] = sine;
            }
        } else {
            for (Index i = 0; i < count; ++i) {
                c[i] = to_compute(cos[from + i]);
                s[i] = to_compute(sin[from + i]);
            }
        }
    }

    /// Reads and turns the block of `used` values from `start` of a head's row (halves: x1 at
    /// head, x2 at head + pairs); `ordinary` is f.ordinary, or true where that is known.
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static Turned turn(const Activation* head, Index pairs, Index start, Index used,
                                             const Factors& f, bool ordinary) noexcept {
        Turned out;
        if constexpr (Interleaved) {
            (void)pairs;
            const Block x = read(head + start, used);
            out.first = turned(x, partners(x), f.cosines, f.sines);
            out.second = out.first;  // unused
            out.by_cpu = by_cpu(ordinary, head + start, nullptr, used);
        } else {
            const Block x1 = read(head + start, used);
            const Block x2 = read(head + pairs + start, used);
            out.first = turned(x1, x2, f.cosines, negated(f.sines));
            out.second = turned(x2, x1, f.cosines, f.sines);
            out.by_cpu = by_cpu(ordinary, head + start, head + pairs + start, used);
        }
        return out;
    }
    /// Writes what turn() turned.
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static void put(Activation* head, Index pairs, Index start, Index used,
                                          const Turned& t) noexcept {
        write(head + start, used, t.first, t.by_cpu);
        if constexpr (!Interleaved) write(head + pairs + start, used, t.second, t.by_cpu);
    }

    /// Row units (pairs for halves, values interleaved) whose factors are built at a time.
    static constexpr Index step_units = 256;
    /// Compute values of one kind of factor on the stack: a step's blocks and the one that
    /// overlaps them.
    static constexpr std::size_t step_values = static_cast<std::size_t>(step_units + block_values);

    /// The factors at `offset` of c and s.
    SEQEMBED_DETAIL_BLOCK static Factors factors_at(const Compute* c, const Compute* s, Index offset,
                                                    bool ordinary) noexcept {
        Factors f;
        for (int r = 0; r < regs; ++r) {
            const Index at_r = offset + static_cast<Index>(r) * lanes;
            f.cosines.r[r] = V::load(c + at_r);
            f.sines.r[r] = V::load(s + at_r);
            V::keep_rounded(f.sines.r[r]);
        }
        f.ordinary = ordinary;
        return f;
    }
    /// The factors of the whole block from `start` of a row (pairs for halves, values
    /// interleaved), built in registers: loaded from the table where its values are Compute and
    /// in the block's order, otherwise converted through a block's room on the stack.
    template <bool Interleaved>
    SEQEMBED_DETAIL_BLOCK static Factors factors_of(const Table* cos, const Table* sin, Index start) noexcept {
        Factors f;
        if constexpr (std::is_same_v<Table, Compute> && (split || !Interleaved)) {
            if constexpr (!split) {
                f.cosines.r[0] = V::load(cos + start);
                f.sines.r[0] = V::load(sin + start);
            } else if constexpr (Interleaved) {  // pair k of the block in lane k of both vectors
                f.cosines.r[0] = f.cosines.r[1] = V::load(cos + start / 2);
                f.sines.r[1] = V::load(sin + start / 2);
                f.sines.r[0] = V::negate(f.sines.r[1]);
            } else {
                V::load_split(cos + start, f.cosines.r[0], f.cosines.r[1]);
                V::load_split(sin + start, f.sines.r[0], f.sines.r[1]);
            }
            for (int r = 0; r < regs; ++r) V::keep_rounded(f.sines.r[r]);
        } else {
            alignas(64) Compute c[static_cast<std::size_t>(block_values)];
            alignas(64) Compute s[static_cast<std::size_t>(block_values)];
            if constexpr (split) {
                split_factors<Interleaved>(cos, sin, start, block_values, c, s);
            } else {
                row_factors<Interleaved>(cos, sin, start, block_values, c, s);
            }
            f = factors_at(c, s, 0, false);
        }
        f.ordinary = false;
        if constexpr (converts())
            f.ordinary = V::ordinary_factors(f.cosines.r, f.sines.r, static_cast<std::size_t>(regs));
        return f;
    }

    /// Turns every head's row (pairs halves, or 2 pairs values interleaved): whole blocks, the
    /// last one overlapping the one before when the row is not a multiple of a block, or one
    /// block under masks when the row is shorter than a block. The row is taken step_units at a
    /// time (a stretch is never shorter than a block unless the row is), each stretch's factors
    /// built once, then every head turned by them head after head, in memory order.
    template <bool Interleaved>
    static void turn_row(const Table* cos, const Table* sin, Index pairs, const TokenHeads<Activation>& token) noexcept {
        constexpr Index whole = block_values;
        const Index length = Interleaved ? 2 * pairs : pairs;
        // A stretch's factors, when not held in registers: split blocks each in its own slot,
        // block_values apart (a split block's order depends on where it starts); otherwise in
        // the row's order, a block's factors where the block starts (the table's own row, for
        // halves from a table of Compute).
        alignas(64) Compute cosine_room[step_values];
        alignas(64) Compute sine_room[step_values];
        for (Index from = 0; from < length;) {
            Index count = length - from;
            if (count > step_units) count = count - step_units >= whole ? step_units : step_units - whole;
            const bool short_row = count < whole;  // the whole row, shorter than a block
            const auto full = static_cast<std::size_t>(count / whole);
            const bool overlap = !short_row && count % whole != 0;
            const Index last = short_row ? 0 : from + count - whole;
            if (!short_row && count == length &&
                held<Interleaved>(full + (overlap ? 1 : 0), token, cos, sin, pairs, last))
                return;
            const Compute* cosines = cosine_room;
            const Compute* sines = sine_room;
            bool ordinary = false;
            // Where the factors of block b from `start` are (the overlapping block is b = full).
            const auto offset = [&](std::size_t b, Index start) SEQEMBED_DETAIL_INLINED_LAMBDA {
                return split ? static_cast<Index>(b) * whole : start - from;
            };
            if constexpr (split) {
                const std::size_t blocks = short_row ? 1 : full + (overlap ? 1 : 0);
                for (std::size_t b = 0; b < blocks; ++b) {
                    const Index start = b == full ? last : from + static_cast<Index>(b) * whole;
                    const Index at_b = offset(b, start);
                    split_factors<Interleaved>(cos, sin, start, short_row ? count : whole, cosine_room + at_b,
                                               sine_room + at_b);
                }
                if constexpr (converts())
                    ordinary = V::ordinary_factors(cosine_room, sine_room, static_cast<std::ptrdiff_t>(blocks) * whole);
            } else if (short_row) {
                row_factors<Interleaved>(cos, sin, 0, count, cosine_room, sine_room);
                for (Index v = count; v < whole; ++v) cosine_room[v] = sine_room[v] = Compute(0);
            } else if constexpr (std::is_same_v<Table, Compute> && !Interleaved) {
                cosines = cos + from;
                sines = sin + from;
            } else {
                row_factors<Interleaved>(cos, sin, from, count, cosine_room, sine_room);
            }
            const auto factors = [&](std::size_t b, Index start) SEQEMBED_DETAIL_INLINED_LAMBDA {
                return factors_at(cosines, sines, offset(b, start), ordinary);
            };
            if (short_row) {
                const Factors f = factors(0, 0);
                for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                    put<Interleaved>(head, pairs, 0, count, turn<Interleaved>(head, pairs, 0, count, f, f.ordinary));
                });
                return;
            }
            const std::size_t alone = overlap ? full - 1 : full;  // blocks turned one at a time
            for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                for (std::size_t b = 0; b < alone; ++b) {
                    const Index start = from + static_cast<Index>(b) * whole;
                    put<Interleaved>(head, pairs, start, whole,
                                     turn<Interleaved>(head, pairs, start, whole, factors(b, start), ordinary));
                }
                if (overlap) {  // both read before either is written
                    const Index start = from + static_cast<Index>(alone) * whole;
                    const Turned before = turn<Interleaved>(head, pairs, start, whole, factors(alone, start), ordinary);
                    const Turned after = turn<Interleaved>(head, pairs, last, whole, factors(full, last), ordinary);
                    put<Interleaved>(head, pairs, start, whole, before);
                    put<Interleaved>(head, pairs, last, whole, after);
                }
            });
            from += count;
        }
    }

    /// Blocks of factors held in registers across the heads: as many as take 16 vectors (two a
    /// vector of a block) where a vector is 64 bytes (32 registers), 8 otherwise, which leaves
    /// room for the blocks themselves.
    static constexpr std::size_t held_blocks =
        static_cast<std::size_t>((static_cast<std::size_t>(lanes) * sizeof(Compute) >= 64 ? 16 : 8) / (2 * regs));

    /// Turns every head's row of `blocks` blocks (the last one, which may overlap the one before,
    /// starting at `last`) with the row's factors held in registers, when there are at most
    /// held_blocks; whether it did.
    template <bool Interleaved, std::size_t Blocks = 1>
    SEQEMBED_DETAIL_BLOCK static bool held(std::size_t blocks, const TokenHeads<Activation>& token, const Table* cos,
                                           const Table* sin, Index pairs, Index last) noexcept {
        if constexpr (Blocks <= held_blocks) {
            if (blocks == Blocks) {
                in_registers<Interleaved, Blocks>(token, cos, sin, pairs, last);
                return true;
            }
            return held<Interleaved, Blocks + 1>(blocks, token, cos, sin, pairs, last);
        } else {
            (void)blocks, (void)token, (void)cos, (void)sin, (void)pairs, (void)last;
            return false;
        }
    }

    /// The heads loop of turn_row for a row of Blocks blocks (counting the overlapping one), the
    /// whole row in one stretch: its factors built in registers once for all heads. Read from
    /// memory in each block, a factor's load can wait for the head's store just before it
    /// whenever their addresses agree in their low 12 bits, which the heads' addresses decide.
    template <bool Interleaved, std::size_t Blocks>
    static void in_registers(const TokenHeads<Activation>& token, const Table* cos, const Table* sin, Index pairs,
                             Index last) noexcept {
        constexpr Index whole = block_values;
        // The last block ends at the row's end (without an overlap, that is where it starts).
        const auto start_of = [&](std::size_t b) SEQEMBED_DETAIL_INLINED_LAMBDA {
            return b + 1 == Blocks ? last : static_cast<Index>(b) * whole;
        };
        Factors held_factors[Blocks];
        bool ordinary = true;
        SEQEMBED_DETAIL_UNROLL_ALL
        for (std::size_t b = 0; b < Blocks; ++b) {
            held_factors[b] = factors_of<Interleaved>(cos, sin, start_of(b));
            ordinary = ordinary && held_factors[b].ordinary;
        }
        const auto turn_heads = [&](bool ordinary_row) SEQEMBED_DETAIL_INLINED_LAMBDA {
            for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                const auto turn_block = [&](std::size_t b) SEQEMBED_DETAIL_INLINED_LAMBDA {
                    return turn<Interleaved>(head, pairs, start_of(b), whole, held_factors[b], ordinary_row);
                };
                // All but the last two blocks alone; those two both read before either is
                // written, whether or not they overlap.
                SEQEMBED_DETAIL_UNROLL_ALL
                for (std::size_t b = 0; b + 2 < Blocks; ++b)
                    put<Interleaved>(head, pairs, start_of(b), whole, turn_block(b));
                if constexpr (Blocks >= 2) {
                    constexpr std::size_t a = Blocks - 2;
                    const Turned before = turn_block(a);
                    const Turned after = turn_block(Blocks - 1);
                    put<Interleaved>(head, pairs, start_of(a), whole, before);
                    put<Interleaved>(head, pairs, start_of(Blocks - 1), whole, after);
                } else {
                    put<Interleaved>(head, pairs, start_of(0), whole, turn_block(0));
                }
            });
        };
        // Ordinary factors (the common row) in a loop of their own, whose blocks ask only
        // whether their activations are ordinary.
        if (converts() && ordinary) return turn_heads(true);
        turn_heads(ordinary);
    }

    /// Turns every head's halves row of up to half a block (2 pairs values at most
    /// block_values) as one block, whole or under masks: x1 and x2 side by side, each value's
    /// partner picked by lane permutes, and the factors laid out to match (a pair's sine negated
    /// for its x1).
    static void turn_packed(const Table* cos, const Table* sin, Index pairs,
                            const TokenHeads<Activation>& token) noexcept {
        if constexpr (packs()) {
            const Index used = 2 * pairs;
            alignas(64) Compute c[static_cast<std::size_t>(block_values)];
            alignas(64) Compute s[static_cast<std::size_t>(block_values)];
            for (int r = 0; r < regs; ++r) {
                for (int k = 0; k < lanes; ++k) {
                    const Index value = at(r, k);
                    const Index lane = static_cast<Index>(r) * lanes + k;
                    const bool used_value = value < used;
                    const Index pair = value < pairs ? value : (used_value ? value - pairs : 0);
                    const Compute sine = used_value ? to_compute(sin[pair]) : Compute(0);
                    c[lane] = used_value ? to_compute(cos[pair]) : Compute(0);
                    s[lane] = value < pairs ? -sine : sine;
                }
            }
            bool ordinary = false;
            if constexpr (converts()) ordinary = V::ordinary_factors(c, s, block_values);
            const Factors f = factors_at(c, s, 0, ordinary);
            const auto partners = V::partners_of(static_cast<int>(pairs));
            for_each_head(token, [&](Activation* head) SEQEMBED_DETAIL_INLINED_LAMBDA {
                const Block x = read(head, used);
                Block p;
                V::partner_split(partners, x.r[0], x.r[1], p.r[0], p.r[1]);
                write(head, used, turned(x, p, f.cosines, f.sines), by_cpu(f.ordinary, head, nullptr, used));
            });
        } else {
            (void)cos, (void)sin, (void)pairs, (void)token;
        }
    }
};

