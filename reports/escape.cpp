#include "reports/escape.hpp"

#include <cstdint>

namespace ropekit {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7), or 0 if the byte starts none.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  const std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  // the second byte's range depends on the first (no overlong forms, no surrogates, nothing past U+10FFFF)
  const unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  const unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

// The code point of a well-formed sequence of n bytes.
std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (std::size_t k = 1; k < n; ++k) v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return v;
}

// Walks text as code points: each line break (CR LF counted once) to on_break, each other control character,
// noncharacter U+FFFE/U+FFFF or invalid byte as U+FFFD to on_text, each other character to on_char.
template <class Break, class Char>
std::string clean(std::string_view text, Break on_break, Char on_char) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {  // one replacement per invalid byte
      out += kReplacement;
      ++i;
      continue;
    }
    const std::uint32_t cp = code_point(text, i, n);
    if (cp == '\r' || cp == '\n') {
      on_break(out, cp);
      i += cp == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      continue;
    }
    if (cp == '\t') out += ' ';
    else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) out += kReplacement;
    else on_char(out, text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  return clean(
      text, [](std::string& out, std::uint32_t) { out += ' '; },
      [](std::string& out, std::string_view c) {
        switch (c[0]) {
          case '&': out += "&amp;"; break;
          case '<': out += "&lt;"; break;
          case '>': out += "&gt;"; break;
          case '"': out += "&quot;"; break;
          case '\'': out += "&apos;"; break;
          default: out += c;
        }
      });
}

std::string markdown_cell(std::string_view text) {
  std::string out = clean(
      text, [](std::string& o, std::uint32_t) { o += ' '; },
      [](std::string& o, std::string_view c) {
        if (c[0] == '|') {
          // GFM reads "\\" as one escaped pair before splitting on '|': double the run of backslashes before it
          std::size_t run = 0;
          while (run < o.size() && o[o.size() - 1 - run] == '\\') ++run;
          o.append(run, '\\');
          o += "\\|";
        } else {
          o += c;
        }
      });
  return out;
}

}  // namespace ropekit
