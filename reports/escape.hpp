#pragma once
// Text from the user (spellings, file names, labels, titles) as it may appear in an SVG figure and in a Markdown
// table: one function per target, so that no writer pastes raw text (a '<' broke the SVG, a '|' or a newline a
// Markdown row, a control character or a stray byte made the file unreadable to XML parsers).

#include <string>
#include <string_view>

namespace ropekit {

/// `text` as SVG/XML character data or attribute value: &, <, >, " and ' as entities; tab, newline and carriage
/// return as a space (a figure's text is one line); every other control character (C0, DEL, C1), U+FFFE, U+FFFF and
/// each byte of invalid UTF-8 (overlong forms, surrogates, beyond U+10FFFF, truncated sequences) as U+FFFD, which
/// XML 1.0 allows (it forbids C0 controls even as character references).
std::string xml_escape(std::string_view text);

/// `text` as one Markdown table cell: '|' escaped as "\|" (with the backslashes before it doubled, so that "\|"
/// stays text), each line break (CR LF, LF or CR) as a space, other control characters and invalid UTF-8 as U+FFFD.
std::string markdown_cell(std::string_view text);

}  // namespace ropekit
