// ParamsJson: the `params` column and exchange field, {"BM": 64, "BN": 64, ...}. It comes from
// files and databases we did not write, so it is checked before it is kept and parsed with a
// depth limit before it is printed: a 70 000-deep object once overflowed the stack of export and
// `results --json` (issue 13, defect 2).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gemmtune::db {

inline constexpr std::size_t kMaxParams = 32;

// Empty when `params` is a flat object of at most kMaxParams keys — each a name of letters,
// digits and '_' (at most 32 characters) — with integer values in [1, 2^31 - 1]; else what is
// wrong, in a few words.
std::string paramsProblem(const nlohmann::json& params);
// The same check on stored text; invalid JSON and nesting are problems too.
std::string paramsTextProblem(std::string_view text);
// For output: the stored object when it passes the check, else an empty object.
nlohmann::json paramsForOutput(std::string_view text);

// json::parse with nesting refused beyond `maxDepth` levels (the document itself is level 0)
// before anything deeper is built; throws TooDeepJson. Other parse errors as json::parse.
// `lastKey`, when given, holds the last object key read: where a parse error happened.
struct TooDeepJson {};
nlohmann::json parseJsonMaxDepth(std::string_view text, int maxDepth, std::string* lastKey = nullptr);

}  // namespace gemmtune::db
