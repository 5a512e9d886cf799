#include "ExitCodes.hpp"

namespace gemmtune {

ExitCode exitCodeOf(const Error& e) noexcept {
  if (auto* coded = dynamic_cast<const CodedError*>(&e)) return coded->code();
  if (dynamic_cast<const UsageError*>(&e)) return kExitUsage;
  if (dynamic_cast<const DataError*>(&e)) return kExitDataError;
  if (dynamic_cast<const NoGpuError*>(&e) || dynamic_cast<const UnavailableError*>(&e)) return kExitUnavailable;
  if (dynamic_cast<const IoError*>(&e)) return kExitIoError;
  if (dynamic_cast<const GpuUnhealthyError*>(&e)) return kExitGpuUnhealthy;
  return kExitFailure;
}

void throwWithExitCode(int code, const std::string& message) {
  switch (code) {
    case kExitUsage: throw UsageError(message);
    case kExitDataError: throw DataError(message);
    case kExitUnavailable: throw UnavailableError(message);
    case kExitIoError: throw IoError(message);
    case kExitGpuUnhealthy: throw GpuUnhealthyError(message);
    default: throw Error(message);
  }
}

}  // namespace gemmtune
