#include "Module.hpp"

namespace gemmtune::library {

Module::Module(const CudaDriver& driver, const std::string& cubin, const std::string& loweredName,
               int dynamicSmemBytes)
    : driver_(driver) {
  driver_.check(driver_.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
  try {
    driver_.check(driver_.cuModuleGetFunction(&function_, module_, loweredName.c_str()), "cuModuleGetFunction");
    // Above the default limit (48 KiB less the static shared memory) a launch needs the opt-in.
    if (dynamicSmemBytes > attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))
      driver_.check(driver_.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               dynamicSmemBytes),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  } catch (...) {
    driver_.cuModuleUnload(module_);
    throw;
  }
}

Module::~Module() {
  // Fails harmlessly when the context is already destroyed or the driver shut down at exit.
  driver_.cuModuleUnload(module_);
}

int Module::attribute(CUfunction_attribute which) const {
  int v = 0;
  driver_.check(driver_.cuFuncGetAttribute(&v, which, function_), "cuFuncGetAttribute");
  return v;
}

}  // namespace gemmtune::library
