/// @file text/detail/vocab.hpp
/// @brief A model's vocabulary (token to id and back) and the tokens a model gives a word.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../types.hpp"

namespace seqembed::text::detail {

/// A token of a text: its id, its string, and the bytes [begin, end) of the input it covers.
struct Piece {
    TokenId id;
    std::string token;
    std::size_t begin;
    std::size_t end;
};

/// The vocabulary of a model: token to id and id to token.
struct Vocab {
    std::unordered_map<std::string, TokenId> ids;
    std::vector<std::string> tokens;  // by id; "" where an id has no token

    /// The id of `token`, or -1.
    TokenId find(const std::string& token) const {
        const auto found = ids.find(token);
        return found == ids.end() ? TokenId{-1} : found->second;
    }
};

}  // namespace seqembed::text::detail
