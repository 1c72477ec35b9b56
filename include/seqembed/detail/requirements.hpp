/// @file detail/requirements.hpp
/// @brief What a translation unit must give seqembed, checked before anything else is parsed:
///        C++17, and floating point as IEEE 754 defines it (no -ffast-math).
///
/// Every public header includes this file first, so that a build missing a requirement gets one
/// message saying which, rather than a page of errors from deeper in the headers.
#pragma once

#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define SEQEMBED_DETAIL_CPLUSPLUS _MSVC_LANG
#else
#define SEQEMBED_DETAIL_CPLUSPLUS __cplusplus
#endif

#if SEQEMBED_DETAIL_CPLUSPLUS < 201703L
#error "seqembed needs C++17: compile with -std=c++17 or later (CMake: link seqembed::seqembed, or target_compile_features(<target> PRIVATE cxx_std_17); MSVC: /std:c++17 /Zc:__cplusplus)"
// The compiler would go on to report every C++17 construct below; a missing file stops it here.
#include <seqembed_stops_here_see_the_error_above>
#endif
#undef SEQEMBED_DETAIL_CPLUSPLUS

// -ffast-math lets the compiler reassociate and contract the error-free arithmetic that makes
// the sinusoidal tables exact, and -ffinite-math-only (part of it) turns std::isfinite into
// `true`, which removes the checks that reject NaN and infinite weights.
#if defined(__FAST_MATH__) || defined(_M_FP_FAST) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__ > 0)
#error "seqembed is compiled without -ffast-math and -ffinite-math-only: they break its exact tables and its NaN checks. Compile the sources that include seqembed without them (CMake: set_source_files_properties(<file> PROPERTIES COMPILE_OPTIONS -fno-fast-math)); what seqembed returns can be used from fast-math code."
#include <seqembed_stops_here_see_the_error_above>
#endif
