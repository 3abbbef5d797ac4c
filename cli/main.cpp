// ropekit: numerical analysis of rotary positional encodings. See README.md.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return ropekit::run_cli(argc, argv); }
