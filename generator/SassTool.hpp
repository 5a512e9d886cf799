// SassTool: SASS for a CUBIN through cuobjdump or nvdisasm, whichever is installed.
#pragma once

#include <string>

namespace gemmtune {

// Path of nvdisasm, else cuobjdump (PATH, then $CUDA_HOME/bin, then /usr/local/cuda/bin); empty if none.
std::string findSassTool();
// Throws UnavailableError naming how to install the tools when none is found.
std::string disassemble(const std::string& cubin);

}  // namespace gemmtune
