/// @file seqembed.hpp
/// @brief The umbrella header: every component of seqembed. Needs Eigen 3.4+ only.
///
/// seqembed turns token ids into the matrix a transformer's first layer reads: token embedding
/// (scaled by sqrt(d_model)), sinusoidal or learned positions, dropout, over padded batches; and
/// the rotary positions (RoPE) that attention applies to queries and keys.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include "version.hpp"
#include "assert.hpp"
#include "error.hpp"
#include "types.hpp"
#include "isa.hpp"
#include "table_options.hpp"
#include "vocabulary_shard.hpp"
#include "token_embedding.hpp"
#include "token_types.hpp"
#include "sinusoidal.hpp"
#include "rotary.hpp"
#include "layer_norm.hpp"
#include "learned_positions.hpp"
#include "no_positions.hpp"
#include "dropout.hpp"
#include "padding.hpp"
#include "batch.hpp"
#include "gradients.hpp"
#include "pipeline.hpp"
#include "text/vocabulary.hpp"
#include "alibi.hpp"
