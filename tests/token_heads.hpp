// Heads for the rotation kernels, for the tests that call them directly.
#pragma once

#include <seqembed/detail/engine/rows.hpp>
#include <seqembed/types.hpp>

/// Heads for the rotation kernel: q's alone.
template <typename Activation>
seqembed::detail::TokenHeads<Activation> q_heads_only(Activation* q, seqembed::Index heads, seqembed::Index head_dim) {
    seqembed::detail::TokenHeads<Activation> token;
    token.q = q;
    token.q_heads = heads;
    token.head_dim = head_dim;
    return token;
}
