// Stale rows as the listing commands judge them (`gemmtune results`, `gemmtune report`): the
// cache-key parts staleReasons() compares, the GPU fingerprint the row's GPU model is tuned under
// now, and the row's own consistency (its instance name must name a configuration of its family).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CacheKey.hpp"
#include "Family.hpp"
#include "ResultStore.hpp"

namespace gemmtune::serving {

// Serving reads what db stores.
using namespace gemmtune::db;

// GPU name -> the fingerprint that GPU model was tuned under last (latest run, then latest id):
// rows of an older fingerprint of the same model are stale (a driver or board change moved its
// limits).
using CurrentFingerprints = std::map<std::string, std::string>;
CurrentFingerprints currentFingerprints(const std::vector<StoredGpu>& gpus);

// The configuration a stored row was measured as. A row rejected by a static constraint has a
// name parseName() refuses (it enforces the constraints); its configuration is rebuilt from the
// family and the stored parameters. Ok rows are never rebuilt: they must parse. nullopt when
// neither gives a configuration of that name.
std::optional<Config> storedConfig(const StoredResult& row);

// A row of cuBLAS as a candidate (db::isCublasRow) has no configuration, template source or NVRTC
// options: it goes stale with the driver, the NVRTC release and the tuner's method, as any row does.

struct StoredRowCheck {
  std::optional<Config> config;           // storedConfig(row); none for a cuBLAS row
  std::vector<std::string> staleReasons;  // one short phrase each; empty when the row is current
};

// Judges one stored row against the present environment and the current fingerprints (a GPU
// name missing from `current` counts as changed). A cuBLAS row (isCublasRow) is current without
// a configuration.
StoredRowCheck checkStoredRow(const StoredResult& row, const PresentEnvironment& present,
                              const CurrentFingerprints& current);

}  // namespace gemmtune::serving
