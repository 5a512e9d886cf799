// Quote: user-supplied text inside a one-line message. Control characters and invalid bytes are
// escaped, and long text is cut, so a hostile argument can neither forge terminal output nor
// flood the log (issue 13, defect 6).
#pragma once

#include <string>
#include <string_view>

namespace gemmtune {

inline constexpr std::size_t kQuoteMaxChars = 80;

// 'text' in single quotes; bytes below 0x20, 0x7f and above 0x7e as \xHH (printable ASCII kept);
// beyond kQuoteMaxChars: the start, then "…(N bytes)".
std::string quoteInput(std::string_view text);
// The same escaping without quotes or cutting, for whole messages.
std::string escapedControls(std::string_view text);

}  // namespace gemmtune
