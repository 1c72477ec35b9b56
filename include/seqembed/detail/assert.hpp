/// @file detail/assert.hpp
/// @brief SEQEMBED_ASSERT, for internal invariants (never for user input: that throws).
#pragma once

#include <Eigen/Core>

#ifndef SEQEMBED_ASSERT
/// @brief Checks an internal invariant. Define it before including seqembed to override;
///        it defaults to eigen_assert.
#define SEQEMBED_ASSERT(condition) eigen_assert(condition)
#endif
