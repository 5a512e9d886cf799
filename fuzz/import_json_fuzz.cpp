// Fuzz target: the import reader (db/JsonExchange parseExchange). Any bytes either parse into a
// file whose every result passes the store's own validation, or are refused with DataError; no
// input may crash, exhaust the stack or escape as another exception.
#include <string>

#include "gemmtune/Errors.hpp"
#include "FuzzTarget.hpp"
#include "JsonExchange.hpp"
#include "ParamsJson.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gemmtune::fuzz::require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto file = gemmtune::db::parseExchange(text, "fuzz.json");
    for (const auto& r : file.results) {
      require(gemmtune::db::paramsTextProblem(r.record.params).empty(), "imported params are flat integers");
      gemmtune::db::validateResult(r.record);
    }
  } catch (const gemmtune::DataError&) {
  }
  // The params checker alone, on the same bytes: never throws, never recurses.
  (void)gemmtune::db::paramsTextProblem(text);
  (void)gemmtune::db::paramsForOutput(text);
  return 0;
}
