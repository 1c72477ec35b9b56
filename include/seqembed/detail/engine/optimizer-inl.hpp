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
};
