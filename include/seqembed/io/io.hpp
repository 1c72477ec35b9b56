/// @file io/io.hpp
/// @brief Everything of seqembed's file support: safetensors and .npy, read (memory-mapped,
///        validated) and written (atomically), and model configs (models, rotary options). Link
///        the seqembed::io CMake target (it needs nlohmann_json); `seqembed/seqembed.hpp` does
///        not include these headers.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include "dtype.hpp"
#include "errors.hpp"
#include "mapped_file.hpp"
#include "model.hpp"
#include "models.hpp"
#include "npy.hpp"
#include "rotary_config.hpp"
#include "safetensors.hpp"
#include "tensor.hpp"
#include "training_state.hpp"
#include "vision_positions.hpp"
