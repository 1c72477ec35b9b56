// The names README.md's C++ blocks use without declaring them: the inputs and activations that a
// program of the reader's would already hold. Declared only (the blocks are compiled, not run), in
// a namespace that each block's function brings in with a using-directive, so that a block which
// declares a name of its own shadows nothing of this file's.
//
//   input_ids, attention_mask, token_type_ids, position_ids   batch x seq, as a tokenizer returns
//   q, k                                                       tokens x (heads * head_dim) activations
//
// README's prose names the same list ("A tour"): change both together.
#pragma once

#include <seqembed/seqembed.hpp>

namespace readme_names {

extern seqembed::IdMatrix input_ids;
extern seqembed::IdMatrix attention_mask;
extern seqembed::IdMatrix token_type_ids;
extern seqembed::IdMatrix position_ids;
extern seqembed::RowMatrix<float> q;
extern seqembed::RowMatrix<float> k;

}  // namespace readme_names
