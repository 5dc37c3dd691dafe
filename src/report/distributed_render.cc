#include "report/distributed_render.h"

#include <fmt/format.h>

#include "report/format_util.h"
#include "report/html_parts.h"

namespace chokepoint::report {
namespace {

namespace dist = analyses::distributed;
using Json = nlohmann::ordered_json;

Json num(double v) { return std::isfinite(v) ? Json(round_significant(v)) : Json(nullptr); }
Json num(const std::optional<double>& v) { return v ? num(*v) : Json(nullptr); }

std::string path_of(const Distributed& d, size_t i) { return i < d.rank_paths.size() ? d.rank_paths[i] : ""; }

std::string straggler_line(const Distributed& d) {
  const auto& a = d.ranks;
  if (!a.straggler) {
    return fmt::format(
        "No straggler: no rank arrives last at half the collectives with the others waiting 5% of the "
        "step (arrival skew p50 {}, p95 {}).",
        format_ms(a.skew_p50_ms), format_ms(a.skew_p95_ms));
  }
  const auto& s = *a.straggler;
  return fmt::format(
      "Straggler: rank {} (last at {} of the collectives; the others wait {} per step for it); cause: "
      "{}; {}.",
      s.rank, format_pct(100 * s.last_share), format_ms(s.extra_ms), s.cause, s.detail);
}

std::string group_line(const Distributed& d, const dist::CollectiveGroup& g) {
  std::string s = fmt::format("{} {} x{}/step: {} per step, {} exposed, {} per call without waiting",
                              dist::collective_name(g.kind), g.bytes > 0 ? format_bytes(g.bytes) : "(size unknown)",
                              format_number(g.per_step), format_ms(g.ms_per_step), format_ms(g.exposed_ms_per_step),
                              format_ms(g.transfer_ms));
  if (g.bus_gbps) {
    s += fmt::format(", bus {} GB/s", format_number(*g.bus_gbps));
    if (d.ranks.link_gbps)
      s += fmt::format(" ({} of {} {} GB/s)", format_pct(100 * *g.bus_gbps / *d.ranks.link_gbps), d.ranks.link,
                       format_number(*d.ranks.link_gbps));
  }
  return s;
}

std::string rank_cells(const dist::RankRow& r, const char* sep) {
  return fmt::format("{}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{}{sep}{}", r.rank, format_ms(r.step_ms),
                     format_ms(r.compute_ms), format_ms(r.comm_ms), format_ms(r.exposed_comm_ms), format_ms(r.wait_ms),
                     format_ms(r.input_ms), format_ms(r.host_ms), format_pct(100 * r.last_share),
                     r.bound.empty() ? "-" : r.bound, fmt::arg("sep", sep));
}

constexpr const char* kRankHeader[] = {"rank",    "step",       "compute",   "in collectives", "exposed comm",
                                       "waiting", "input idle", "host idle", "last at",        "bound"};

}  // namespace

DistributedText distributed_text(const Distributed& d) {
  const auto& a = d.ranks;
  DistributedText out;
  out.heading = fmt::format("Ranks ({} of world size {}, {} backend; the rest of this report details rank {})",
                            a.ranks.size(), a.world_size, a.backend.empty() ? "unknown" : a.backend, d.detailed_rank);
  std::vector<std::vector<std::string>> rows = {
      std::vector<std::string>(std::begin(kRankHeader), std::end(kRankHeader))};
  for (const auto& r : a.ranks) {
    std::vector<std::string> cells;
    const std::string all = rank_cells(r, "\t");
    for (size_t from = 0;;) {
      const size_t tab = all.find('\t', from);
      cells.push_back(all.substr(from, tab == std::string::npos ? std::string::npos : tab - from));
      if (tab == std::string::npos) break;
      from = tab + 1;
    }
    rows.push_back(std::move(cells));
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      line += std::string(width[c] - row[c].size() + (c == 0 ? 0 : 2), ' ') + row[c];
    }
    out.table.push_back(std::move(line));
  }
  out.notes.push_back(fmt::format("{} collectives matched across ranks; arrival skew p50 {}, p95 {}, max {}",
                                  a.matched_collectives, format_ms(a.skew_p50_ms), format_ms(a.skew_p95_ms),
                                  format_ms(a.skew_max_ms)));
  out.notes.push_back(straggler_line(d));
  for (const auto& g : a.groups) out.notes.push_back(group_line(d, g));
  for (const auto& c : a.clocks) {
    const std::string node = static_cast<size_t>(c.domain) < d.domains.size() ? d.domains[static_cast<size_t>(c.domain)]
                                                                              : "";
    out.notes.push_back(c.matched > 0 ? fmt::format("Clock of {} aligned by {} (spread {}, {} collectives)", node,
                                                    format_ms(-c.offset_ms), format_ms(c.spread_ms), c.matched)
                                      : fmt::format("Clock of {} not aligned: no collective matched", node));
  }
  return out;
}

void distributed_markdown(const Distributed& d, std::ostream& out) {
  const auto& a = d.ranks;
  out << "## Ranks\n\n"
      << fmt::format("{} ranks of world size {} ({} backend); the rest of this report details rank {}.\n\n",
                     a.ranks.size(), a.world_size, a.backend.empty() ? "unknown" : a.backend, d.detailed_rank);
  out << "|";
  for (const char* h : kRankHeader) out << ' ' << h << " |";
  out << "\n|";
  for (size_t i = 0; i < std::size(kRankHeader); ++i) out << (i == 0 ? "---|" : "---:|");
  out << '\n';
  for (const auto& r : a.ranks) out << "| " << rank_cells(r, " | ") << " |\n";
  out << '\n'
      << fmt::format("{} collectives matched; arrival skew p50 {}, p95 {}, max {}.\n\n", a.matched_collectives,
                     format_ms(a.skew_p50_ms), format_ms(a.skew_p95_ms), format_ms(a.skew_max_ms))
      << straggler_line(d) << "\n\n";
  for (const auto& g : a.groups) out << "- " << group_line(d, g) << '\n';
  if (!a.groups.empty()) out << '\n';
  for (const auto& c : a.clocks) {
    out << fmt::format("- clock domain {} shifted by {} (spread {}, {} collectives)\n", c.domain,
                       format_ms(-c.offset_ms), format_ms(c.spread_ms), c.matched);
  }
  if (!a.clocks.empty()) out << '\n';
}

Json distributed_json(const Distributed& d, bool timings) {
  const auto& a = d.ranks;
  Json ranks = Json::array();
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const auto& r = a.ranks[i];
    ranks.push_back(Json{{"rank", r.rank},
                         {"path", path_of(d, i)},
                         {"step_ms", num(r.step_ms)},
                         {"compute_ms", num(r.compute_ms)},
                         {"comm_ms", num(r.comm_ms)},
                         {"exposed_comm_ms", num(r.exposed_comm_ms)},
                         {"wait_ms", num(r.wait_ms)},
                         {"input_idle_ms", num(r.input_ms)},
                         {"host_idle_ms", num(r.host_ms)},
                         {"last_share", num(r.last_share)},
                         {"bound", r.bound},
                         {"sm_clock_mhz", num(r.sm_clock_mhz)}});
  }
  Json groups = Json::array();
  for (const auto& g : a.groups) {
    groups.push_back(
        Json{{"collective", dist::collective_name(g.kind)},
             {"bytes", g.bytes > 0 ? Json(g.bytes) : Json(nullptr)},
             {"per_step", num(g.per_step)},
             {"ms_per_step", num(g.ms_per_step)},
             {"exposed_ms_per_step", num(g.exposed_ms_per_step)},
             {"transfer_ms", num(g.transfer_ms)},
             {"bus_gbps", num(g.bus_gbps)},
             {"link_pct", g.bus_gbps && a.link_gbps ? num(100 * *g.bus_gbps / *a.link_gbps) : Json(nullptr)}});
  }
  Json j{{"world_size", a.world_size},
         {"backend", a.backend.empty() ? Json(nullptr) : Json(a.backend)},
         {"detailed_rank", d.detailed_rank},
         {"step_ms", num(a.step_ms)},
         {"compute_ms", num(a.compute_ms)},
         {"comm_ms", num(a.comm_ms)},
         {"exposed_comm_ms", num(a.exposed_comm_ms)},
         {"matched_collectives", a.matched_collectives},
         {"skew_ms", Json{{"p50", num(a.skew_p50_ms)}, {"p95", num(a.skew_p95_ms)}, {"max", num(a.skew_max_ms)}}},
         {"link", a.link.empty() ? Json(nullptr) : Json(a.link)},
         {"link_gbps", num(a.link_gbps)},
         {"ranks", ranks},
         {"collectives", groups}};
  if (a.straggler) {
    const auto& s = *a.straggler;
    j["straggler"] = Json{{"rank", s.rank},   {"last_share", num(s.last_share)}, {"extra_ms", num(s.extra_ms)},
                          {"cause", s.cause}, {"cause_ms", num(s.cause_ms)},     {"detail", s.detail}};
  } else {
    j["straggler"] = nullptr;
  }
  Json clocks = Json::array();
  for (const auto& c : a.clocks) {
    clocks.push_back(
        Json{{"domain", c.domain},
             {"path", static_cast<size_t>(c.domain) < d.domains.size() ? Json(d.domains[static_cast<size_t>(c.domain)])
                                                                       : Json(nullptr)},
             {"offset_ms", num(c.offset_ms)},
             {"spread_ms", num(c.spread_ms)},
             {"matched", c.matched}});
  }
  j["clock_alignment"] = clocks;
  if (timings) j["summarize_seconds"] = num(d.summarize_seconds), j["workers"] = d.workers;
  return j;
}

std::string html_distributed_section(const Report& r) {
  if (!r.distributed) return "";
  const Distributed& d = *r.distributed;
  std::string s = "<section id=\"ranks\"><h2>Ranks</h2><p>" +
                  html::esc(fmt::format("{} ranks, {} backend; the rest of this report details rank {}.",
                                        d.ranks.ranks.size(), d.ranks.backend.empty() ? "unknown" : d.ranks.backend,
                                        d.detailed_rank)) +
                  "</p><table class=\"sortable\"><thead><tr>";
  for (const char* h : kRankHeader) s += std::string("<th>") + h + "</th>";
  s += "</tr></thead><tbody>";
  for (const auto& row : d.ranks.ranks) {
    const std::string cells = rank_cells(row, "\t");
    s += "<tr>";
    size_t from = 0;
    while (true) {
      const size_t tab = cells.find('\t', from);
      s += "<td>" + html::esc(cells.substr(from, tab == std::string::npos ? std::string::npos : tab - from)) + "</td>";
      if (tab == std::string::npos) break;
      from = tab + 1;
    }
    s += "</tr>";
  }
  s += "</tbody></table><p>" + html::esc(straggler_line(d)) + "</p><ul>";
  for (const auto& g : d.ranks.groups) s += "<li>" + html::esc(group_line(d, g)) + "</li>";
  s += "</ul></section>\n";
  return s;
}

}  // namespace chokepoint::report
