# embed_files(OUT file...): a .cpp defining ropekit::embedded_file(name) over the files' text,
# so the built-in probes carry the paper's configs and expected numbers inside the binary.
function(embed_files out)
  set(body "#include <string_view>\n#include <stdexcept>\n#include <string>\nnamespace ropekit {\n")
  string(APPEND body "std::string_view embedded_file(std::string_view name) {\n")
  foreach(f ${ARGN})
    file(READ ${CMAKE_SOURCE_DIR}/${f} text)
    string(APPEND body "  if (name == \"${f}\") return R\"ropekit_embed(${text})ropekit_embed\";\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${f})
  endforeach()
  string(APPEND body "  throw std::out_of_range(\"no embedded file: \" + std::string(name));\n}\n}  // namespace ropekit\n")
  file(GENERATE OUTPUT ${out} CONTENT "${body}")
endfunction()
