#include "tune/search.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace chokepoint::tune {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

struct StopSearch {};

class Searcher {
 public:
  Searcher(const Space& s, const SearchOptions& o, const Evaluate& e, const Clock& now, SearchResult& r)
      : s_(s), o_(o), evaluate_(e), now_(now), r_(r), t0_(now()) {
    for (size_t i = 0; i < r_.trials.size(); ++i) {
      next_id_ = std::max(next_id_, r_.trials[i].id + 1);
      Config c;
      if (r_.trials[i].finished() && s_.find(r_.trials[i].config, &c)) {
        done_[s_.key(c)] = i;
        ++r_.resumed;
      }
    }
  }

  // The trial of `c`, run now unless it has been (throws StopSearch when the search must end).
  const Trial& trial(const Config& c) {
    const std::string key = s_.key(c);
    if (auto it = done_.find(key); it != done_.end()) {
      // A resumed trial counts once the search reaches it: a resumed search takes the
      // same path as the one it continues, up to where that one stopped.
      note_measured(r_.trials[it->second]);
      return r_.trials[it->second];
    }
    if (o_.budget_s > 0 && now_() - t0_ >= o_.budget_s) stop("budget");
    if (o_.max_trials > 0 && r_.run + r_.resumed >= o_.max_trials) stop("max_trials");
    std::optional<double> best;
    if (best_ > kNone) best = best_;
    Trial t = evaluate_(c, next_id_++, best);
    t.config = s_.assignment(c);
    r_.trials.push_back(t);
    ++r_.run;
    const Trial& saved = r_.trials.back();
    if (saved.outcome == Outcome::kInterrupted) stop("interrupted");
    done_[key] = r_.trials.size() - 1;
    note_measured(saved);
    if (!measured_any_) {
      if (saved.outcome == Outcome::kNoMetric) stop("no_metric");
      if (saved.outcome == Outcome::kFailed || saved.outcome == Outcome::kTimeout) {
        if (++failures_ >= 3) stop("failing");
      }
    }
    return saved;
  }

  double score(const Config& c) {
    const Trial& t = trial(c);
    const bool counts = t.outcome == Outcome::kOk || t.outcome == Outcome::kEarlyStop;
    return counts && t.throughput ? *t.throughput : kNone;
  }

  // The best configuration so far (the start when nothing measured).
  Config best_config(const Config& fallback) const {
    Config c;
    if (r_.best && s_.find(r_.trials[*r_.best].config, &c)) return c;
    return fallback;
  }

  // Largest batch index that fits with the others as in `c`; the batch search.
  size_t batch_limit(Config c) {
    const size_t b = s_.batch, n = s_.params[b].values.size();
    auto fits = [&](size_t i) {
      c[b] = i;
      const bool ok = trial(c).outcome != Outcome::kOom;
      (ok ? r_.max_fit_batch : r_.oom_batch) = s_.params[b].values[i];
      return ok;
    };
    if (fits(n - 1)) return n - 1;
    long lo = -1, hi = static_cast<long>(n) - 1;  // lo fits (-1: none known), hi does not
    while (hi - lo > 1) {
      const long mid = lo + (hi - lo + 1) / 2;
      if (fits(static_cast<size_t>(mid))) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    r_.oom_batch = s_.params[b].values[static_cast<size_t>(hi)];
    r_.max_fit_batch = lo < 0 ? "" : s_.params[b].values[static_cast<size_t>(lo)];
    if (lo < 0) stop("all_oom");
    return static_cast<size_t>(lo);
  }

  // A line search along parameter p from `c` over indices 0..last; returns the best index.
  size_t line(Config c, size_t p, size_t last, bool global) {
    std::map<size_t, double> seen;
    auto eval = [&](size_t i) {
      if (seen.count(i) == 0) {
        c[p] = i;
        seen[i] = score(c);
      }
    };
    auto best_index = [&] {
      return std::max_element(seen.begin(), seen.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
    };
    const size_t start = std::min(c[p], last);
    eval(start);
    if (!s_.params[p].ordered) {
      for (size_t i = 0; i <= last; ++i) eval(i);
      return best_index();
    }
    if (!global) {  // climb to a better neighbour while there is one
      for (size_t b = start;;) {
        if (b > 0) eval(b - 1);
        if (b < last) eval(b + 1);
        const size_t nb = best_index();
        if (nb == b) return b;
        b = nb;
      }
    }
    for (size_t i : {size_t{0}, last / 2, last}) eval(i);
    for (;;) {
      const size_t b = best_index();
      auto it = seen.find(b);
      std::vector<size_t> add;
      if (it != seen.begin() && b - std::prev(it)->first > 1) add.push_back((std::prev(it)->first + b) / 2);
      if (std::next(it) != seen.end() && std::next(it)->first - b > 1) add.push_back((b + std::next(it)->first) / 2);
      if (add.empty()) return b;
      for (size_t i : add) eval(i);
    }
  }

  void coordinate() {
    Config start(s_.params.size(), 0);
    for (size_t p = 0; p < s_.params.size(); ++p) {
      if (s_.params[p].ordered) start[p] = (s_.params[p].values.size() - 1) / 2;
    }
    if (s_.batch < s_.params.size()) start[s_.batch] = batch_limit(start);
    // Lists first (a precision, an optimizer: they move the whole curve, a trial a
    // value), then the ordered parameters, the batch size last (the others decide how
    // fast a batch goes).
    std::vector<size_t> order;
    for (const bool ordered : {false, true}) {
      for (size_t p = 0; p < s_.params.size(); ++p) {
        if (p != s_.batch && s_.params[p].ordered == ordered) order.push_back(p);
      }
    }
    if (s_.batch < s_.params.size()) order.push_back(s_.batch);
    for (int round = 0; round < 4; ++round) {
      const std::string before = s_.key(best_config(start));
      for (size_t p : order) {
        Config c = best_config(start);
        // Along the batch size too, the whole range: what fits depends on the others (the
        // precision), and out of memory scores lowest, so the bracketing closes in on the limit.
        line(c, p, s_.params[p].values.size() - 1, round == 0);
      }
      if (s_.key(best_config(start)) == before && round > 0) break;
    }
  }

  void grid() {
    Config c(s_.params.size(), 0);
    for (;;) {
      (void)trial(c);
      size_t p = s_.params.size();
      while (p > 0) {
        --p;
        if (++c[p] < s_.params[p].values.size()) break;
        c[p] = 0;
        if (p == 0) return;
      }
      if (s_.params.empty()) return;
    }
  }

 private:
  [[noreturn]] void stop(const char* why) {
    r_.stopped = why;
    throw StopSearch{};
  }

  void note_measured(const Trial& t) {
    if (t.outcome != Outcome::kOk || !t.throughput) return;
    measured_any_ = true;
    if (*t.throughput > best_) {
      best_ = *t.throughput;
      r_.best = static_cast<size_t>(&t - r_.trials.data());
    }
  }

  const Space& s_;
  const SearchOptions& o_;
  const Evaluate& evaluate_;
  const Clock& now_;
  SearchResult& r_;
  const double t0_;
  std::map<std::string, size_t> done_;  // key -> index of its finished trial
  double best_ = kNone;
  bool measured_any_ = false;
  int failures_ = 0;
  int next_id_ = 1;
};

// The batch limit with the best configuration's other values (the batch search found
// it with the start's): the largest batch that ran, the smallest out of memory.
void fit_at_best(const Space& s, SearchResult& r) {
  Config best;
  if (!s.find(r.trials[*r.best].config, &best)) return;
  std::optional<size_t> fit, oom;
  for (const Trial& t : r.trials) {
    Config c;
    if (!t.finished() || !s.find(t.config, &c)) continue;
    bool same = true;
    for (size_t p = 0; p < c.size(); ++p) same = same && (p == s.batch || c[p] == best[p]);
    if (!same) continue;
    if (t.outcome == Outcome::kOom) {
      if (!oom || c[s.batch] < *oom) oom = c[s.batch];
    } else if (!fit || c[s.batch] > *fit) {
      fit = c[s.batch];
    }
  }
  if (fit) r.max_fit_batch = s.params[s.batch].values[*fit];
  r.oom_batch = oom ? s.params[s.batch].values[*oom] : "";
}

}  // namespace

SearchResult search(const Space& space, const SearchOptions& options, const Evaluate& evaluate,
                    std::vector<Trial> resumed, const Clock& now) {
  SearchResult r;
  r.strategy = options.grid ? "grid" : "coordinate";
  r.trials = std::move(resumed);
  r.trials.reserve(r.trials.size() + space.grid_size() + 1);  // note_measured keeps indices
  Searcher s(space, options, evaluate, now, r);
  try {
    if (options.grid) {
      s.grid();
    } else {
      s.coordinate();
    }
  } catch (const StopSearch&) {  // r.stopped says why
  }
  // The best of all trials, resumed ones the search did not reach included.
  for (size_t i = 0; i < r.trials.size(); ++i) {
    const Trial& t = r.trials[i];
    if (t.outcome == Outcome::kOk && t.throughput && (!r.best || *t.throughput > *r.trials[*r.best].throughput)) {
      r.best = i;
    }
  }
  if (r.best && space.batch < space.params.size()) fit_at_best(space, r);
  return r;
}

std::vector<size_t> pareto_front(const std::vector<Trial>& trials) {
  std::vector<size_t> front;
  auto eligible = [&](size_t i) {
    return trials[i].outcome == Outcome::kOk && trials[i].throughput && trials[i].peak_memory_bytes;
  };
  for (size_t i = 0; i < trials.size(); ++i) {
    if (!eligible(i)) continue;
    const double ti = *trials[i].throughput, mi = *trials[i].peak_memory_bytes;
    bool dominated = false;
    for (size_t j = 0; j < trials.size() && !dominated; ++j) {
      if (j == i || !eligible(j)) continue;
      const double tj = *trials[j].throughput, mj = *trials[j].peak_memory_bytes;
      dominated = tj >= ti && mj <= mi && (tj > ti || mj < mi || j < i);
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(),
            [&](size_t a, size_t b) { return *trials[a].peak_memory_bytes < *trials[b].peak_memory_bytes; });
  return front;
}

}  // namespace chokepoint::tune
