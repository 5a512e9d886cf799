#include "Markup.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gemmtune::report {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one (overlong
// forms, surrogates and code points past U+10FFFF included).
size_t utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t j) { return static_cast<unsigned char>(s[j]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t j = 1; j < len; ++j) {
    if ((byte(i + j) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + j) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp == 0xFFFE || cp == 0xFFFF) return 0;  // not characters in XML
  return len;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    size_t len = utf8Length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    char c = text[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

std::string num(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

}  // namespace gemmtune::report
