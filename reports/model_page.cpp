#include "reports/model_page.hpp"

#include <functional>
#include <variant>

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "reports/model_tables.hpp"
#include "reports/plot.hpp"
#include "reports/table.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/models/model_layers.hpp"

namespace ropekit {

namespace {

// The page as blocks, rendered to Markdown or HTML. Text is plain but for `code` spans.
struct PageBlock {
  enum Kind { heading, paragraph, table, bullets, figure } kind;
  std::string text;                 // heading, paragraph; figure: its caption
  Table tab;                        // table
  std::vector<std::string> items;   // bullets
  std::string svg, svg_name;        // figure
  int level = 2;                    // heading
};

std::string cell_text(const Cell& c) {
  return std::visit(Overloaded{
                        [](std::monostate) { return std::string(); },
                        [](const std::string& s) { return s; },
                        [](double v) { return format_significant(v, 6); },
                        [](std::int64_t v) { return std::to_string(v); },
                        [](bool b) { return std::string(b ? "true" : "false"); },
                    },
                    c);
}

// Escaped text with `code` spans as <code>.
std::string html_text(const std::string& text) {
  std::string out, escaped = xml_escape(text);
  bool code = false;
  for (char c : escaped) {
    if (c == '`') out += (code = !code) ? "<code>" : "</code>";
    else out += c;
  }
  if (code) out += "</code>";
  return out;
}

std::string html_table(const Table& t) {
  std::string out = "<div class=\"wide\"><table>\n<thead><tr>";
  for (const auto& c : t.columns) out += "<th>" + xml_escape(c) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + xml_escape(cell_text(c)) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table></div>\n";
}

// The SVG as an element of the HTML body (an XML declaration, if any, dropped), its ids (clip paths) prefixed with
// "<prefix>-" and their references with them: ids must be unique in the page, where each plot has its "panel0".
std::string inline_svg(const std::string& svg, const std::string& prefix) {
  const auto at = svg.find("<svg");
  std::string out = at == std::string::npos ? svg : svg.substr(at);
  std::vector<std::string> ids;
  for (std::size_t i = 0; (i = out.find(" id=\"", i)) != std::string::npos; i += 5)
    ids.push_back(out.substr(i + 5, out.find('"', i + 5) - (i + 5)));
  for (const auto& id : ids)
    for (const auto& [from, to] : {std::pair{" id=\"" + id + "\"", " id=\"" + prefix + "-" + id + "\""},
                                   std::pair{"url(#" + id + ")", "url(#" + prefix + "-" + id + ")"},
                                   std::pair{"href=\"#" + id + "\"", "href=\"#" + prefix + "-" + id + "\""}})
      for (std::size_t i = 0; (i = out.find(from, i)) != std::string::npos; i += to.size()) out.replace(i, from.size(), to);
  return out;
}

std::string render_html(const std::vector<PageBlock>& blocks, const std::string& title) {
  int figures = 0;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n"
      "body {{ font-family: sans-serif; margin: 2em; max-width: 100em; }}\n"
      "table {{ border-collapse: collapse; margin: 1em 0; font-size: 90%; }}\n"
      "th, td {{ border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }}\n"
      "th {{ background: #eee; }}\n .wide {{ overflow-x: auto; }}\n figure {{ margin: 1em 0; }}\n svg {{ max-width: 100%; height: auto; }}\n"
      "</style>\n</head>\n<body>\n",
      xml_escape(title));
  for (const auto& b : blocks) {
    switch (b.kind) {
      case PageBlock::heading: out += fmt::format("<h{0}>{1}</h{0}>\n", b.level, html_text(b.text)); break;
      case PageBlock::paragraph: out += "<p>" + html_text(b.text) + "</p>\n"; break;
      case PageBlock::table: out += html_table(b.tab); break;
      case PageBlock::bullets:
        out += "<ul>\n";
        for (const auto& i : b.items) out += "<li>" + html_text(i) + "</li>\n";
        out += "</ul>\n";
        break;
      case PageBlock::figure:
        out += "<figure>\n" + inline_svg(b.svg, fmt::format("plot{}", ++figures)) + "<figcaption>" + html_text(b.text) + "</figcaption>\n</figure>\n";
        break;
    }
  }
  return out + "</body>\n</html>\n";
}

std::string render_markdown(const std::vector<PageBlock>& blocks) {
  std::string out;
  for (const auto& b : blocks) {
    switch (b.kind) {
      case PageBlock::heading: out += fmt::format("{} {}\n\n", std::string(b.level, '#'), b.text); break;
      case PageBlock::paragraph: out += b.text + "\n\n"; break;
      case PageBlock::table: out += to_markdown(b.tab) + "\n"; break;
      case PageBlock::bullets:
        for (const auto& i : b.items) out += "- " + i + "\n";
        out += "\n";
        break;
      case PageBlock::figure: out += fmt::format("![{}]({})\n\n", b.text, b.svg_name); break;
    }
  }
  return out;
}

// User text inside a Markdown paragraph or list: one line, '|' harmless; a backtick would end a code span.
std::string code(const std::string& s) {
  std::string t = markdown_cell(s);
  for (char& c : t)
    if (c == '`') c = '\'';
  return "`" + t + "`";
}

std::string position_cell(const FirstPosition& f) {
  return f.position ? fmt::format("{}", static_cast<std::int64_t>(*f.position)) : std::string("none");
}

// A value per layer type: "v" for one layer type, "name: v; name: v" for several.
std::string per_layer(const FileReport& f, const std::function<std::string(const LayerReport&)>& value) {
  std::string out;
  for (const auto& r : f.report.layers) {
    const std::string v = value(r);
    if (f.report.layers.size() == 1) return v;
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", r.layer.name, v.empty() ? "-" : v);
  }
  return out;
}

}  // namespace

ReportPage render_report_page(const std::vector<FileReport>& files, const ReportPageOptions& o) {
  ReportPage page;
  std::vector<PageBlock> blocks;
  // A numbered section: its heading, what its columns mean, the table.
  const auto table_section = [&](const std::string& heading, const std::string& text, const Table& t) {
    blocks.push_back({PageBlock::heading, heading, {}, {}, {}, {}});
    blocks.push_back({PageBlock::paragraph, text, {}, {}, {}, {}});
    blocks.push_back({PageBlock::table, {}, t, {}, {}, {}});
  };
  const std::string title = "Models report: the positional encodings of your model files, layer type by layer type";
  blocks.push_back({PageBlock::heading, title, {}, {}, {}, {}, 1});
  std::vector<std::string> header;
  if (!o.command.empty()) header.push_back("command: " + code(o.command));
  for (std::size_t k = 0; k < files.size(); ++k)
    header.push_back(fmt::format("file {}: {} ({}, {} layer type{})", k + 1, code(files[k].path), files[k].model.format,
                                 files[k].model.layer_types.size(), files[k].model.layer_types.size() == 1 ? "" : "s"));
  blocks.push_back({PageBlock::bullets, {}, {}, header, {}, {}});

  // 1. Side by side: one column per file.
  Table side;
  side.columns = {"quantity"};
  for (std::size_t k = 0; k < files.size(); ++k) side.columns.push_back(fmt::format("{}: {}", k + 1, files[k].given));
  const auto g4 = [](double v) { return format_significant(v, 4); };
  const auto tol_text = [](double t) { return format_significant(t, 3); };
  std::vector<std::pair<std::string, std::function<std::string(const FileReport&)>>> rows = {
      {"model_type", [](const FileReport& f) { return f.model.model_type; }},
      {"layer types", [](const FileReport& f) {
         std::string s;
         for (const auto& l : f.model.layer_types)
           s += (s.empty() ? "" : "; ") + (l.layers ? fmt::format("{} x {}", l.name.empty() ? "all" : l.name, l.layers)
                                                    : (l.name.empty() ? "all" : l.name));
         return s;
       }},
      {"encoding", [](const FileReport& f) {
         return per_layer(f, [](const LayerReport& r) {
           // A GGUF's explicit frequencies spell 64 numbers: cut (`ropekit model FILE` prints them all).
           const std::string e = spelling(r.layer.encoding);
           return e.size() <= 100 ? e : e.substr(0, 80) + fmt::format("... ({} characters)", e.size());
         });
       }},
      {"context", [&](const FileReport& f) { return per_layer(f, [&](const LayerReport& r) { return format_number(r.context); }); }},
      {"visible lags", [](const FileReport& f) {
         return per_layer(f, [](const LayerReport& r) { return std::to_string(r.visible_lags); });
       }},
      {"min kernel (at lag)", [&](const FileReport& f) {
         return per_layer(f, [&](const LayerReport& r) {
           return r.rotary ? fmt::format("{} ({})", g4(r.min_kernel), r.min_kernel_lag)
                           : r.family == "nope" ? std::string("1 (NoPE)") : std::string();
         });
       }},
      {"first negative lag", [](const FileReport& f) {
         return per_layer(f, [](const LayerReport& r) {
           return !r.rotary ? std::string() : r.first_negative_lag ? std::to_string(*r.first_negative_lag) : std::string("none");
         });
       }},
      {"base / Men et al.'s bound", [&](const FileReport& f) {
         return per_layer(f, [&](const LayerReport& r) {
           if (!r.rotary) return std::string();
           if (!r.base) return std::string("explicit frequencies");
           return fmt::format("{} / {}", format_number(*r.base), r.base_bound ? g4(*r.base_bound) : std::string("none <= 1e12"));
         });
       }},
      {"pairs turning within orig / context", [](const FileReport& f) {
         return per_layer(f, [](const LayerReport& r) {
           return r.rotary ? fmt::format("{} / {} of {}", r.turns_within_orig, r.turns_within_context, r.pairs) : std::string();
         });
       }},
      {"precision pipeline, dtype", [](const FileReport& f) {
         return fmt::format("{}, {} ({})", pipeline_name(f.pipeline.kind), dtype_name(f.pipeline.dtype), f.dtype_source);
       }},
  };
  const std::vector<double> tolerances = files.empty() ? std::vector<double>{} : files.front().tolerances;
  for (std::size_t i = 0; i < tolerances.size(); ++i) {
    rows.push_back({fmt::format("first position, phase > {} / tables' phase > {}", tol_text(tolerances[i]),
                                tol_text(tolerances[i])),
                    [i](const FileReport& f) {
                      return per_layer(f, [i](const LayerReport& r) {
                        if (i >= r.precision.size()) return r.rotary ? std::string("not modelled") : std::string();
                        return position_cell(r.precision[i].phase) + " / " + position_cell(r.precision[i].table_phase);
                      });
                    }});
  }
  for (const auto& [name, value] : rows) {
    std::vector<Cell> row{name};
    for (const auto& f : files) row.push_back(value(f));
    side.add_row(row);
  }
  table_section("1. Side by side",
                "One column per file; a model with several layer types gives each one's value after its name.",
                side);

  // 2. Summary and 3. kernels: the tables of `ropekit probe models`, the model named by its file's number.
  Table summary = model_summary_table(), kernels = model_kernels_table();
  for (std::size_t k = 0; k < files.size(); ++k)
    for (const auto& r : files[k].report.layers) {
      add_summary_row(summary, std::to_string(k + 1), r);
      add_kernels_row(kernels, std::to_string(k + 1), r);
    }
  table_section("2. Summary",
                "As `ropekit probe models` reports the built-in checkpoints (`model` is the file's number). "
                "`context` is max_position_embeddings (or orig x factor where a scheme stretches past it); "
                "`visible_lags` the largest lag the layer sees (its sliding window W - 1 or chunk C - 1, else the "
                "context - 1). `pairs` rotating pairs, of which `turns_within_orig` complete a turn (wavelength "
                "2 pi / theta) within the scheme's original context and `turns_within_context` within the "
                "extended one. `min_kernel` is the minimum of Phi over every visible lag, `first_negative_lag` the "
                "first lag where Phi < 0. `men_base_bound` (Men et al. 2024): the smallest base, on a grid of 16 "
                "per decade from 10 up to 1e12, for which the layer's kernel stays >= 0 on every visible lag.",
                summary);
  table_section("3. Kernels at selected lags",
                "Phi(Dp) for isotropic content (blank: the layer cannot see that lag). NoPE layers: Phi = 1; ALiBi layers "
                "(a bias, no rotation): blank.",
                kernels);

  // 4. Precision.
  Table prec;
  prec.columns = {"model", "layer_type", "pipeline", "dtype"};
  for (const double t : tolerances) {
    prec.columns.push_back(fmt::format("phase > {}", tol_text(t)));
    prec.columns.push_back(fmt::format("tables' phase > {}", tol_text(t)));
  }
  prec.columns.push_back("note");
  for (std::size_t k = 0; k < files.size(); ++k)
    for (const auto& r : files[k].report.layers) {
      if (!r.rotary) continue;
      std::vector<Cell> row{std::to_string(k + 1), r.layer.name, std::string(pipeline_name(files[k].pipeline.kind)),
                            std::string(dtype_name(table_dtype(files[k].pipeline)))};
      for (std::size_t i = 0; i < tolerances.size(); ++i) {
        if (i < r.precision.size()) {
          row.push_back(position_cell(r.precision[i].phase));
          row.push_back(position_cell(r.precision[i].table_phase));
        } else {
          row.insert(row.end(), {Cell(), Cell()});
        }
      }
      row.push_back(r.precision_note);
      prec.add_row(row);
    }
  table_section("4. Precision: first positions past a tolerance",
                "Each file in its dtype: a config.json through transformers' pipeline in its `torch_dtype` / "
                "`dtype` (bf16 when it names none), a GGUF file through llama.cpp's (fp32 tables). Phase: the "
                "first position whose largest |angle - p theta_exact| over the pairs passes the tolerance (the "
                "angle is computed in fp32 whatever the dtype); tables' phase: the same for the phase the cos/sin "
                "tables carry in the dtype. Exact searches over positions 0 .. 2^31 - 1 (`ropekit precision "
                "--tolerance`); none: not passed there.",
                prec);

  // 5. Plots, one per file with a rotary layer type.
  blocks.push_back({PageBlock::heading, "5. Kernels over the visible lags", {}, {}, {}, {}});
  bool any_plot = false;
  for (std::size_t k = 0; k < files.size(); ++k) {
    std::vector<PlotSeries> series;
    for (const auto& r : files[k].report.layers) {
      if (!r.rotary) continue;
      PlotSeries line;
      line.label = files[k].report.layers.size() > 1 ? r.layer.name : model_file_name(files[k].given);  // never a whole path
      line.x = r.plot_lags;
      line.y = r.plot_kernel;
      series.push_back(line);
    }
    if (series.empty()) continue;
    PlotOptions po;
    po.title = fmt::format("Kernels of {} over the lags each layer type sees", model_file_name(files[k].given));
    po.xlabel = "lag Dp";
    po.ylabel = "Phi(Dp) = tr G / tr G(0)";
    po.log_x = true;
    const std::string name = fmt::format("{}-{}.svg", o.svg_stem, k + 1);
    const std::string caption = fmt::format("File {}: {}", k + 1, files[k].given);
    if (o.html) {
      blocks.push_back({PageBlock::figure, caption, {}, {}, svg_line_plot(series, po), {}});
    } else if (!o.svg_stem.empty()) {
      page.svgs.push_back({name, svg_line_plot(series, po)});
      blocks.push_back({PageBlock::figure, caption, {}, {}, {}, name});
    }
    any_plot = true;
  }
  if (!any_plot)
    blocks.push_back({PageBlock::paragraph, "No rotary layer type: nothing to plot.", {}, {}, {}, {}});
  else if (!o.html && o.svg_stem.empty())
    blocks.push_back({PageBlock::paragraph,
                      "No plots: Markdown on standard output (or `--no-plots`). Give `--out FILE.md` for one SVG per "
                      "file beside it, or `--format html` for one page with them inline.",
                      {}, {}, {}, {}});

  // 6. Framework notes.
  blocks.push_back({PageBlock::heading, "6. How frameworks read these files", {}, {}, {}, {}});
  for (std::size_t k = 0; k < files.size(); ++k) {
    std::vector<std::string> items;
    for (const auto& r : files[k].report.layers)
      for (const auto& n : r.notes) items.push_back(fmt::format("{}: {}", r.layer.name.empty() ? "all" : r.layer.name, n));
    for (const auto& n : files[k].report.notes) items.push_back("(file): " + n);
    for (const auto& n : files[k].dtype_notes) items.push_back("(precision): " + n);
    blocks.push_back({PageBlock::paragraph, fmt::format("File {}: {}", k + 1, code(files[k].given)), {}, {}, {}, {}});
    if (items.empty()) items.push_back("no notes");
    if (!o.html)
      for (auto& i : items) i = markdown_cell(i);
    blocks.push_back({PageBlock::bullets, {}, {}, items, {}, {}});
  }
  page.text = o.html ? render_html(blocks, title) : render_markdown(blocks);
  return page;
}

}  // namespace ropekit
