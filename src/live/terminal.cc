#include "live/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace chokepoint::live {

bool PanelTerminal::size(int* rows, int* cols) const {
  winsize ws{};
  if (ioctl(fd_, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return false;
  *rows = ws.ws_row;
  *cols = ws.ws_col;
  return true;
}

void PanelTerminal::write_all(const std::string& s) const {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd_, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal went away: nothing to do
    done += static_cast<size_t>(n);
  }
}

void PanelTerminal::reserve(int height, int rows) {
  std::string s;
  if (height_ > 0) {
    // Clear the old panel rows before moving the boundary.
    s += "\0337\033[r";
    for (int r = rows_ - height_ + 1; r <= rows_; ++r) s += "\033[" + std::to_string(r) + ";1H\033[2K";
    s += "\0338";
  }
  // Scroll the content up by the panel height so nothing is hidden under it, then set
  // the region (which homes the cursor) and put the cursor back inside it.
  s += std::string(static_cast<size_t>(height), '\n');
  s += "\033[" + std::to_string(height) + "A";
  s += "\0337";
  s += "\033[1;" + std::to_string(rows - height) + "r";
  s += "\0338";
  write_all(s);
  height_ = height;
  rows_ = rows;
  dirty_ = false;
}

void PanelTerminal::draw(const std::vector<std::string>& lines) {
  int rows = 0, cols = 0;
  if (!size(&rows, &cols)) return;
  const int height = static_cast<int>(lines.size());
  if (height == 0 || height >= rows) return;
  if (dirty_ || height != height_ || rows != rows_) reserve(height, rows);
  std::string s = "\0337";
  for (int i = 0; i < height; ++i) {
    s += "\033[" + std::to_string(rows - height + 1 + i) + ";1H\033[2K";
    s += lines[static_cast<size_t>(i)];
  }
  s += "\0338";
  write_all(s);
}

void PanelTerminal::end() {
  if (height_ == 0) return;
  std::string s = "\0337\033[r";
  for (int r = rows_ - height_ + 1; r <= rows_; ++r) s += "\033[" + std::to_string(r) + ";1H\033[2K";
  s += "\0338";
  write_all(s);
  height_ = 0;
}

}  // namespace chokepoint::live
