/// @file vocabulary.hpp
/// @brief The old path of seqembed/text/vocabulary.hpp (Vocabulary), kept for 0.3 only: include
///        <seqembed/text/vocabulary.hpp>.
#pragma once

#include "text/vocabulary.hpp"
