/// @file assert.hpp
/// @brief SEQEMBED_ASSERT, the check of seqembed's internal invariants.
///
/// Internal invariants only: bad input from the user always throws a seqembed::error, whatever
/// this macro does.
#pragma once

#include "detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <Eigen/Core>

#ifndef SEQEMBED_ASSERT
/// @brief Checks an internal invariant of seqembed (never user input, which throws).
///
/// Defaults to eigen_assert, so it is active unless NDEBUG or EIGEN_NO_DEBUG is defined.
/// Define it before including any seqembed header to route it elsewhere:
/// @code
/// #define SEQEMBED_ASSERT(condition) my_check(condition, #condition)
/// #include <seqembed/seqembed.hpp>
/// @endcode
/// @param condition an expression that must be true.
#define SEQEMBED_ASSERT(condition) eigen_assert(condition)
#endif
