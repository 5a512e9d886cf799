#include "CaptureMode.hpp"

#include "CudaDriver.hpp"

namespace gemmtune {

RelaxedCaptureMode::RelaxedCaptureMode(const CudaDriver& driver) : driver_(driver) {
  exchanged_ = driver_.cuThreadExchangeStreamCaptureMode(&previous_) == CUDA_SUCCESS;
}

RelaxedCaptureMode::~RelaxedCaptureMode() {
  if (exchanged_) driver_.cuThreadExchangeStreamCaptureMode(&previous_);
}

}  // namespace gemmtune
