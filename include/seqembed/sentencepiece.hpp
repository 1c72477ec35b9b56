/// @file sentencepiece.hpp
/// @brief The old path of seqembed/text/sentencepiece.hpp (SentencePieceTokenizer), kept for 0.3 only: include
///        <seqembed/text/sentencepiece.hpp>.
#pragma once

#include "text/sentencepiece.hpp"
