#include "Quote.hpp"

#include <cstdio>

namespace gemmtune {

namespace {

void appendEscaped(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

}  // namespace

std::string escapedControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // UTF-8 sequences pass (names may be non-ASCII); C0 controls and DEL do not.
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f)
      appendEscaped(out, c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string quoteInput(std::string_view text) {
  std::string out = "'";
  std::size_t shown = 0;
  for (unsigned char c : text) {
    if (shown == kQuoteMaxChars) break;
    ++shown;
    if (c < 0x20 || c > 0x7e || c == '\\')
      appendEscaped(out, c);
    else
      out += static_cast<char>(c);
  }
  out += "'";
  if (text.size() > shown) out += "…(" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace gemmtune
