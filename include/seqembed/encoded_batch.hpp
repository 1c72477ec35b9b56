/// @file encoded_batch.hpp
/// @brief The old path of seqembed/text/encoded_batch.hpp (EncodedBatch), kept for 0.3 only: include
///        <seqembed/text/encoded_batch.hpp>.
#pragma once

#include "text/encoded_batch.hpp"
