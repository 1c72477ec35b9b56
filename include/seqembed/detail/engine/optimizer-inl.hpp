// detail/engine/optimizer-inl.hpp: the element loops of the optimizers' steps, written once over
// the vector layer.
//
// No include guard, by design: kernels-inl.hpp includes this file once per ISA, inside namespace
// seqembed::detail::<isa>_isa and that ISA's target region. Every operation is one IEEE
// operation per element, each product rounded before the sum that reads it (keep_rounded), so
// every ISA gives the scalar backend's bits.

/// The element loops of the optimizers over Scalar values.
template <typename Scalar>
struct OptimizerKernel {
    using D = Lanes<Scalar>;
    using Reg = typename D::Reg;

    /// One Adam step on count values of a row, in torch.optim's order: with d the gradient
    /// (negated under maximize), m += (d - m)(1 - beta1), v += (d d - v)(1 - beta2), then
    /// w = w + (-step_size)(m / (sqrt(v) + eps)).
    static void adam_row(Scalar* w, Scalar* m, Scalar* v, const Scalar* g, Index count,
                         const AdamConstants<Scalar>& constants) noexcept {
        const Reg keep1 = D::set(constants.keep1);
        const Reg keep2 = D::set(constants.keep2);
        const Reg eps = D::set(constants.eps);
        const Reg minus_step = D::set(-constants.step_size);
        const bool maximize = constants.maximize;
        const auto update = [&](Reg d, Reg& w_lanes, Reg& m_lanes, Reg& v_lanes) SEQEMBED_DETAIL_INLINED_LAMBDA {
            if (maximize) d = D::negate(d);
            Reg first_update = D::mul(D::sub(d, m_lanes), keep1);
            D::keep_rounded(first_update);
            Reg square = D::mul(d, d);
            D::keep_rounded(square);
            Reg second_update = D::mul(D::sub(square, v_lanes), keep2);
            D::keep_rounded(second_update);
            m_lanes = D::add(first_update, m_lanes);
            v_lanes = D::add(second_update, v_lanes);
            Reg change = D::mul(minus_step, D::div(m_lanes, D::add(D::sqrt(v_lanes), eps)));
            D::keep_rounded(change);
            w_lanes = D::add(w_lanes, change);
        };
        Index j = 0;
        for (; j + D::count <= count; j += D::count) {
            Reg w_lanes = D::load(w + j);
            Reg m_lanes = D::load(m + j);
            Reg v_lanes = D::load(v + j);
            update(D::load(g + j), w_lanes, m_lanes, v_lanes);
            D::store(w + j, w_lanes);
            D::store(m + j, m_lanes);
            D::store(v + j, v_lanes);
        }
        if (j < count) {
            const int used = static_cast<int>(count - j);
            Reg w_lanes = D::load_first(w + j, used);
            Reg m_lanes = D::load_first(m + j, used);
            Reg v_lanes = D::load_first(v + j, used);
            update(D::load_first(g + j, used), w_lanes, m_lanes, v_lanes);
            D::store_first(w + j, used, w_lanes);
            D::store_first(m + j, used, m_lanes);
            D::store_first(v + j, used, v_lanes);
        }
    }

    /// One Adam or AdamW step on count values of a row, in torch.optim.Adam's order: with d the
    /// gradient (zero where g is null; negated under maximize), AdamW first multiplies w by its
    /// decay, Adam adds decay w to d; m = m beta1 + (1 - beta1) d, v = v beta2 + ((1 - beta2) d) d;
    /// with AMSGrad (v_max not null) v_max = max(v_max, v) takes v's place below; then
    /// w = w + ((-step_size) m) / (sqrt(v) / correction2 + eps).
    static void dense_adam_row(Scalar* w, Scalar* m, Scalar* v, Scalar* v_max, const Scalar* g, Index count,
                               const DenseAdamConstants<Scalar>& constants) noexcept {
        const Reg beta1 = D::set(constants.beta1);
        const Reg beta2 = D::set(constants.beta2);
        const Reg keep1 = D::set(constants.keep1);
        const Reg keep2 = D::set(constants.keep2);
        const Reg eps = D::set(constants.eps);
        const Reg decay = D::set(constants.decay);
        const Reg minus_step = D::set(-constants.step_size);
        const Reg correction2 = D::set(constants.correction2);
        const auto update = [&](Reg d, Reg& w_lanes, Reg& m_lanes, Reg& v_lanes, Reg& max_lanes)
                                SEQEMBED_DETAIL_INLINED_LAMBDA {
            if (constants.maximize) d = D::negate(d);
            if (constants.decoupled) {
                w_lanes = D::mul(w_lanes, decay);
                D::keep_rounded(w_lanes);
            } else if (constants.l2) {
                Reg decay_term = D::mul(decay, w_lanes);
                D::keep_rounded(decay_term);
                d = D::add(d, decay_term);
            }
            Reg m_kept = D::mul(m_lanes, beta1);
            D::keep_rounded(m_kept);
            Reg m_added = D::mul(keep1, d);
            D::keep_rounded(m_added);
            m_lanes = D::add(m_kept, m_added);
            Reg v_kept = D::mul(v_lanes, beta2);
            D::keep_rounded(v_kept);
            Reg v_added = D::mul(keep2, d);
            D::keep_rounded(v_added);
            v_added = D::mul(v_added, d);
            D::keep_rounded(v_added);
            v_lanes = D::add(v_kept, v_added);
            Reg second = v_lanes;
            if (v_max != nullptr) {
                max_lanes = D::max(max_lanes, v_lanes);
                second = max_lanes;
            }
            const Reg denominator = D::add(D::div(D::sqrt(second), correction2), eps);
            w_lanes = D::add(w_lanes, D::div(D::mul(minus_step, m_lanes), denominator));
        };
        const Reg zero = D::set(Scalar(0));
        Index j = 0;
        for (; j + D::count <= count; j += D::count) {
            Reg w_lanes = D::load(w + j);
            Reg m_lanes = D::load(m + j);
            Reg v_lanes = D::load(v + j);
            Reg max_lanes = v_max != nullptr ? D::load(v_max + j) : zero;
            update(g != nullptr ? D::load(g + j) : zero, w_lanes, m_lanes, v_lanes, max_lanes);
            D::store(w + j, w_lanes);
            D::store(m + j, m_lanes);
            D::store(v + j, v_lanes);
            if (v_max != nullptr) D::store(v_max + j, max_lanes);
        }
        if (j < count) {
            const int used = static_cast<int>(count - j);
            Reg w_lanes = D::load_first(w + j, used);
            Reg m_lanes = D::load_first(m + j, used);
            Reg v_lanes = D::load_first(v + j, used);
            Reg max_lanes = v_max != nullptr ? D::load_first(v_max + j, used) : zero;
            update(g != nullptr ? D::load_first(g + j, used) : zero, w_lanes, m_lanes, v_lanes, max_lanes);
            D::store_first(w + j, used, w_lanes);
            D::store_first(m + j, used, m_lanes);
            D::store_first(v + j, used, v_lanes);
            if (v_max != nullptr) D::store_first(v_max + j, used, max_lanes);
        }
    }

    /// One SGD step on count values of a row, in torch.optim.SGD's order: with d the gradient
    /// (zero where g is null; negated under maximize), d += weight_decay w; the momentum buffer
    /// b = d on the row's first update (fresh), else b = b momentum + (1 - dampening) d; then
    /// d = d + momentum b (Nesterov) or b; w = w + (-lr) d. b is null without momentum.
    static void sgd_row(Scalar* w, const Scalar* g, Scalar* b, bool fresh, Index count,
                        const SgdConstants<Scalar>& constants) noexcept {
        const Reg decay = D::set(constants.weight_decay);
        const Reg momentum = D::set(constants.momentum);
        const Reg keep = D::set(constants.keep);
        const Reg minus_lr = D::set(constants.minus_lr);
        const auto update = [&](Reg d, Reg& w_lanes, Reg& b_lanes) SEQEMBED_DETAIL_INLINED_LAMBDA {
            if (constants.maximize) d = D::negate(d);
            if (constants.decays) {
                Reg decay_term = D::mul(decay, w_lanes);
                D::keep_rounded(decay_term);
                d = D::add(d, decay_term);
            }
            if (constants.has_momentum) {
                if (fresh) {
                    b_lanes = d;
                } else {
                    Reg kept = D::mul(b_lanes, momentum);
                    D::keep_rounded(kept);
                    Reg added = D::mul(keep, d);
                    D::keep_rounded(added);
                    b_lanes = D::add(kept, added);
                }
                if (constants.nesterov) {
                    Reg push = D::mul(momentum, b_lanes);
                    D::keep_rounded(push);
                    d = D::add(d, push);
                } else {
                    d = b_lanes;
                }
            }
            Reg change = D::mul(minus_lr, d);
            D::keep_rounded(change);
            w_lanes = D::add(w_lanes, change);
        };
        const Reg zero = D::set(Scalar(0));
        Index j = 0;
        for (; j + D::count <= count; j += D::count) {
            Reg w_lanes = D::load(w + j);
            Reg b_lanes = b != nullptr ? D::load(b + j) : zero;
            update(g != nullptr ? D::load(g + j) : zero, w_lanes, b_lanes);
            D::store(w + j, w_lanes);
            if (b != nullptr) D::store(b + j, b_lanes);
        }
        if (j < count) {
            const int used = static_cast<int>(count - j);
            Reg w_lanes = D::load_first(w + j, used);
            Reg b_lanes = b != nullptr ? D::load_first(b + j, used) : zero;
            update(g != nullptr ? D::load_first(g + j, used) : zero, w_lanes, b_lanes);
            D::store_first(w + j, used, w_lanes);
            if (b != nullptr) D::store_first(b + j, used, b_lanes);
        }
    }

    /// The sum of the squares of count values d (d = g + decay w under L2 weight decay, else g),
    /// for row-wise Adagrad: value j goes to partial sum j % 16, and the 16 partial sums are added
    /// in order, whatever the ISA's vector width.
    static Scalar square_sum(const Scalar* w, const Scalar* g, Index count, Scalar decay, bool l2) noexcept {
        constexpr int partials = 16;
        constexpr int regs = partials / D::count;
        static_assert(regs * D::count == partials, "a vector holds a divisor of 16 values");
        const Reg decay_lanes = D::set(decay);
        Reg sums[static_cast<std::size_t>(regs)];
        for (Reg& sum : sums) sum = D::set(Scalar(0));
        const auto add_square = [&](Reg& sum, Reg d, Reg w_lanes) SEQEMBED_DETAIL_INLINED_LAMBDA {
            if (l2) {
                Reg decay_term = D::mul(decay_lanes, w_lanes);
                D::keep_rounded(decay_term);
                d = D::add(d, decay_term);
            }
            Reg square = D::mul(d, d);
            D::keep_rounded(square);
            sum = D::add(sum, square);
        };
        Index j = 0;
        for (; j + partials <= count; j += partials)
            for (int r = 0; r < regs; ++r) add_square(sums[r], D::load(g + j + r * D::count), D::load(w + j + r * D::count));
        for (int r = 0; r < regs && j + r * D::count < count; ++r) {  // the last values: the rest lanes add +0
            const Index at = j + r * D::count;
            const int used = static_cast<int>(std::min<Index>(D::count, count - at));
            add_square(sums[r], D::load_first(g + at, used), D::load_first(w + at, used));
        }
        Scalar lanes[static_cast<std::size_t>(partials)];
        for (int r = 0; r < regs; ++r) D::store(lanes + r * D::count, sums[r]);
        Scalar total = lanes[0];
        for (int k = 1; k < partials; ++k) total += lanes[k];
        return total;
    }

    /// The largest magnitude of count values, or NaN when one is not finite: v - v is 0 for a
    /// finite v and NaN for a NaN or an infinity, so a sum of the differences finds those, and
    /// max(v, -v) is |v| for the others. Four chains of each, so that the operations' latency
    /// does not bound a row held in cache.
    static Scalar largest_magnitude(const Scalar* values, Index count) noexcept {
        constexpr int chains = 4;
        Reg sums[chains];
        Reg tops[chains];
        for (int c = 0; c < chains; ++c) sums[c] = tops[c] = D::set(Scalar(0));
        const auto add = [&](int c, Reg v) SEQEMBED_DETAIL_INLINED_LAMBDA {
            sums[c] = D::add(sums[c], D::sub(v, v));
            tops[c] = D::max(tops[c], D::max(v, D::negate(v)));
        };
        Index j = 0;
        for (; j + chains * D::count <= count; j += chains * D::count) {
            SEQEMBED_DETAIL_UNROLL_ALL
            for (int c = 0; c < chains; ++c) add(c, D::load(values + j + c * D::count));
        }
        for (; j < count; j += D::count) {
            const int used = static_cast<int>(std::min<Index>(D::count, count - j));
            add(0, used == D::count ? D::load(values + j) : D::load_first(values + j, used));
        }
        Scalar sum_lanes[static_cast<std::size_t>(D::count)];
        Scalar top_lanes[static_cast<std::size_t>(D::count)];
        D::store(sum_lanes, D::add(D::add(sums[0], sums[1]), D::add(sums[2], sums[3])));
        D::store(top_lanes, D::max(D::max(tops[0], tops[1]), D::max(tops[2], tops[3])));
        Scalar largest = Scalar(0);
        for (int lane = 0; lane < D::count; ++lane) {
            if (!(sum_lanes[lane] == Scalar(0))) return std::numeric_limits<Scalar>::quiet_NaN();
            largest = std::max(largest, top_lanes[lane]);
        }
        return largest;
    }

    /// w = correction w - g multiplier over count values, each product rounded on its own.
    static void scale_and_subtract(Scalar* w, const Scalar* g, Index count, Scalar correction,
                                   Scalar multiplier) noexcept {
        const Reg correction_lanes = D::set(correction);
        const Reg multiplier_lanes = D::set(multiplier);
        const auto update = [&](Reg w_lanes, Reg g_lanes) SEQEMBED_DETAIL_INLINED_LAMBDA {
            Reg kept = D::mul(correction_lanes, w_lanes);
            D::keep_rounded(kept);
            Reg change = D::mul(g_lanes, multiplier_lanes);
            D::keep_rounded(change);
            return D::sub(kept, change);
        };
        Index j = 0;
        for (; j + D::count <= count; j += D::count) D::store(w + j, update(D::load(w + j), D::load(g + j)));
        if (j < count) {
            const int used = static_cast<int>(count - j);
            D::store_first(w + j, used, update(D::load_first(w + j, used), D::load_first(g + j, used)));
        }
    }
};
