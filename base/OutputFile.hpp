// OutputFile: how every command writes a file the user names (export, report -o, ptx -o).
// "-" is standard output. A regular file (or a missing one) is written next to its target and
// renamed over it, so readers never see half a file and a failed or interrupted write leaves the
// old file. A symlink's target is replaced, never the link. Anything else that exists — a FIFO, a
// device, a terminal — is written in place: renaming over it would destroy a special file
// (issue 13, defect 1). Every write is checked: a full disk or a closed pipe is an IoError (74).
#pragma once

#include <filesystem>
#include <string_view>

namespace gemmtune {

// Throws IoError "cannot write <what> to <target>: <reason>"; `what` is e.g. "the report".
void writeOutputFile(const std::filesystem::path& target, std::string_view bytes, std::string_view what);

// Writes all of `bytes` to standard output and flushes; throws IoError on any failure.
void writeStdout(std::string_view bytes, std::string_view what);

}  // namespace gemmtune
