#include "PtxStats.hpp"

namespace gemmtune {

namespace {
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

PtxStats countPtx(std::string_view ptx) {
  PtxStats st;
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(pos, end - pos);
    pos = end + 1;

    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos) continue;
    line.remove_prefix(i);
    if (line[0] == '@') {  // predicate guard: "@%p1 bra ..." or "@!%p1 ld..."
      size_t sp = line.find_first_of(" \t");
      if (sp == std::string_view::npos) continue;
      line.remove_prefix(line.find_first_not_of(" \t", sp) == std::string_view::npos ? line.size()
                                                                                      : line.find_first_not_of(" \t", sp));
    }
    // Instructions are lower-case opcodes ending in ';'; skip directives, labels, braces, comments.
    if (line.empty() || line[0] < 'a' || line[0] > 'z' || line.find(';') == std::string_view::npos) continue;
    ++st.total;
    if (startsWith(line, "ld.global")) ++st.ldGlobal;
    else if (startsWith(line, "st.global")) ++st.stGlobal;
    else if (startsWith(line, "ld.shared")) ++st.ldShared;
    else if (startsWith(line, "st.shared")) ++st.stShared;
    else if (startsWith(line, "fma.rn.f32")) ++st.fma;
    else if (startsWith(line, "bar.sync") || startsWith(line, "barrier.sync")) ++st.barSync;
  }
  return st;
}

}  // namespace gemmtune
