/// @file io/detail/system.hpp
/// @brief The operating system's file interfaces used by the readers and writers: Win32 on
///        Windows, POSIX elsewhere.
#pragma once

#if defined(_WIN32)
// windows.h without its min and max macros and its rarely used parts; the macros that ask for
// this are the user's again afterwards.
#ifndef NOMINMAX
#define NOMINMAX
#define SEQEMBED_DETAIL_DEFINED_NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#define SEQEMBED_DETAIL_DEFINED_WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#ifdef SEQEMBED_DETAIL_DEFINED_NOMINMAX
#undef NOMINMAX
#undef SEQEMBED_DETAIL_DEFINED_NOMINMAX
#endif
#ifdef SEQEMBED_DETAIL_DEFINED_WIN32_LEAN_AND_MEAN
#undef WIN32_LEAN_AND_MEAN
#undef SEQEMBED_DETAIL_DEFINED_WIN32_LEAN_AND_MEAN
#endif
#else
#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
