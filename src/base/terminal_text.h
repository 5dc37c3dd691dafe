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
//   - the bidi and line-breaking format characters (U+061C, U+200E, U+200F,
//     U+2028..U+202E, U+2066..U+2069), which reorder what is shown: "\u202e";
//   - every byte that is not part of valid UTF-8 (a raw 0x9b, a truncated sequence, an
//     overlong form, a surrogate): "\x9b".
// The result is valid UTF-8 without any control character; a string that needs no escape
// comes back unchanged.
std::string escape_controls(std::string_view s);

// True when escape_controls(s) would change `s`.
bool has_controls(std::string_view s);

// Columns `s` takes on a terminal: one per code point, two for East Asian wide ones (CJK,
// Hangul, full-width forms, emoji); an invalid byte counts one.
size_t display_columns(std::string_view s);

// The longest prefix of `s` that fits in `columns`, never cut inside a UTF-8 sequence
// (a line cut by bytes can end in half a "·" and print garbage).
std::string_view cut_to_columns(std::string_view s, size_t columns);

}  // namespace chokepoint
