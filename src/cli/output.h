// Where a command's report goes and how it looks: shared by the subcommands.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/duration.h"  // parse_duration_ns, for the commands
#include "base/status.h"

namespace chokepoint::cli {

// Prints "chokepoint COMMAND: MESSAGE" on stderr, with the control characters of the
// message (file names, names from the input quoted in an error) shown as escapes.
void say(const std::string& command, const std::string& message);

// ANSI colour for stdout? mode is "auto", "always" or "never"; auto means a terminal, no
// NO_COLOR, TERM not "dumb", and not writing to a file.
bool want_color(const std::string& mode, bool to_file);
// The same for a report written to `fd` (run and watch print theirs on stderr).
bool want_color_on(const std::string& mode, bool to_file, int fd);

// Terminal width for text reports: $COLUMNS when set (at least 60), else `fallback`.
int text_width(int fallback = 100);

// Writes `text` to stdout (path "" or "-") or to `path` through base/safe_write.h: a
// regular file is written to a new temporary file beside the destination and renamed
// over it, so a crash never leaves half a report; a symbolic link is refused, and so is
// the same file as one of `inputs` (see input_files()); a FIFO, a terminal or /dev/null
// is written in place. Says on stderr where the report went (unless quiet) or why it
// could not be written; returns false on failure.
bool write_output(const std::string& command, const std::string& path, const std::string& text, bool quiet,
                  const std::vector<std::string>& inputs = {});

// The same for output too big to hold in memory (a trace export): `write` streams it into
// the stream it is given (the temporary file, or stdout). When `write` fails, the
// temporary file is removed and its message said on stderr.
using StreamWriter = std::function<Status(std::ostream&)>;
bool write_output_stream(const std::string& command, const std::string& path, const StreamWriter& write, bool quiet,
                         const std::vector<std::string>& inputs = {});

// The files an output must never replace, for inputs `paths`: each path, and each regular
// file directly inside a path that is a directory (a directory of traces, a recording).
std::vector<std::string> input_files(const std::vector<std::string>& paths);

}  // namespace chokepoint::cli
