// Puts the live panel at the bottom of a terminal the child also writes to. The panel's
// rows are taken out of the scroll region (DECSTBM, as apt's progress bar does), so the
// child's output scrolls above it and is never overwritten; each redraw is one write(2),
// which the tty applies whole between the child's writes. end() gives the rows back.
#pragma once

#include <string>
#include <vector>

namespace chokepoint::live {

class PanelTerminal {
 public:
  explicit PanelTerminal(int fd) : fd_(fd) {}
  ~PanelTerminal() { end(); }

  // Rows and columns of the terminal (false when fd is not a terminal).
  bool size(int* rows, int* cols) const;
  // Draws `lines` (already cut to the width); reserves the rows on first use and again
  // when the height changes or after resized().
  void draw(const std::vector<std::string>& lines);
  void resized() { dirty_ = true; }
  // Clears the panel and restores the full scroll region.
  void end();

 private:
  void reserve(int height, int rows);
  void write_all(const std::string& s) const;

  int fd_;
  int height_ = 0;  // rows reserved
  int rows_ = 0;
  bool dirty_ = false;
};

}  // namespace chokepoint::live
