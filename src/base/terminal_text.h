// Text from input data (kernel, thread, device, process and file names, argv, messages
// that quote them) made safe to show on a terminal or in Markdown. A trace or a process
// name is written by someone else: printed raw, "\x1b]0;...\x07" sets the terminal's
// title, "\x1b]52;c;...\x07" writes the clipboard, "\x1b[2J" clears the screen, and a C1
// CSI (U+009B) does the same on terminals that honour 8-bit controls.
#pragma once

#include <string>
#include <string_view>

namespace chokepoint {

// `s` with every control character replaced by a visible escape, and valid printable
// UTF-8 left as it is:
//   - C0 controls (U+0000..U+001F, newline and tab included: in a name they are data,
//     not layout) and DEL: "\x1b", "\x0a", "\x7f";
//   - C1 controls encoded as UTF-8 (U+0080..U+009F): "\u009b";
//   - every byte that is not part of valid UTF-8 (a raw 0x9b, a truncated sequence, an
//     overlong form, a surrogate): "\x9b".
// The result is valid UTF-8 without any control character; a string that needs no escape
// comes back unchanged.
std::string escape_controls(std::string_view s);

// True when escape_controls(s) would change `s`.
bool has_controls(std::string_view s);

}  // namespace chokepoint
