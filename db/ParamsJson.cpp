#include "ParamsJson.hpp"

#include <cctype>
#include <limits>

namespace gemmtune::db {

namespace {

bool isParamName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_')) return false;
  return true;
}

}  // namespace

nlohmann::json parseJsonMaxDepth(std::string_view text, int maxDepth, std::string* lastKey) {
  using Event = nlohmann::json::parse_event_t;
  // The callback sees each value's depth as it starts, so nothing deeper is ever allocated.
  auto limit = [maxDepth, lastKey](int depth, Event event, nlohmann::json& parsed) {
    if ((event == Event::object_start || event == Event::array_start) && depth > maxDepth) throw TooDeepJson{};
    if (event == Event::key && lastKey) *lastKey = parsed.get<std::string>();
    return true;
  };
  return nlohmann::json::parse(text.begin(), text.end(), limit);
}

std::string paramsProblem(const nlohmann::json& params) {
  if (!params.is_object()) return "expected an object of NAME: integer";
  if (params.size() > kMaxParams) return "more than " + std::to_string(kMaxParams) + " parameters";
  for (const auto& [name, value] : params.items()) {
    if (!isParamName(name)) return "parameter names are letters, digits and '_' (at most 32)";
    if (!value.is_number_integer()) return "parameter values must be integers";
    if (value.is_number_unsigned() ? value.get<std::uint64_t>() > std::numeric_limits<int>::max()
                                   : value.get<std::int64_t>() < 1 ||
                                         value.get<std::int64_t>() > std::numeric_limits<int>::max())
      return "parameter values must be between 1 and 2147483647";
  }
  return {};
}

std::string paramsTextProblem(std::string_view text) {
  try {
    return paramsProblem(parseJsonMaxDepth(text, 0));
  } catch (const TooDeepJson&) {
    return "expected a flat object (no nested values)";
  } catch (const nlohmann::json::exception&) {
    return "not valid JSON";
  }
}

nlohmann::json paramsForOutput(std::string_view text) {
  try {
    auto params = parseJsonMaxDepth(text, 0);
    if (paramsProblem(params).empty()) return params;
  } catch (const TooDeepJson&) {
  } catch (const nlohmann::json::exception&) {
  }
  return nlohmann::json::object();
}

}  // namespace gemmtune::db
