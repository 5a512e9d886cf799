// Markup: the text rules every piece of the report follows. Strings from the database are
// untrusted (names, command lines, host names), so each one passes through escape() before it
// reaches HTML or SVG; numbers pass through num() so that no locale or NaN leaks into attributes.
#pragma once

#include <string>
#include <string_view>

namespace gemmtune::report {

// Escapes & < > " ' for use in element text and in double- or single-quoted attribute values.
// Invalid UTF-8 and control characters that XML 1.0 forbids become U+FFFD, so the SVG stays
// well-formed whatever bytes the database holds.
std::string escape(std::string_view text);

// A finite number with at most `decimals` places, trailing zeros dropped ("12.5", "3"); a
// non-finite value becomes "0" (an attribute must still parse).
std::string num(double value, int decimals = 2);

// `value` with exactly `decimals` places, for tables and labels ("23.40").
std::string fixed(double value, int decimals);

}  // namespace gemmtune::report
