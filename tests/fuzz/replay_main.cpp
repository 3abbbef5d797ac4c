// main() for the fuzz harnesses in the normal build (no libFuzzer): feeds every file of the given
// directories (or the given files) to LLVMFuzzerTestOneInput, in name order. Registered with CTest
// once per harness, so `make test` replays the committed corpus tests/fuzz/corpus/<harness>/.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  // An empty corpus means a wrong path, not a passing test.
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s CORPUS_DIR_OR_FILE...)\n", argv[0]);
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  // make fuzz calls an input slower than 10 s a hang (libFuzzer -timeout=10); so does the replay.
  constexpr double kHangSeconds = 10;
  std::vector<std::string> hangs;
  for (const auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Named before the call: if it aborts, the last line on stderr is the culprit.
    std::fprintf(stderr, "replay: %s\n", p.string().c_str());
    const auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 1.0) std::fprintf(stderr, "replay: slow input (%.2f s): %s\n", s, p.string().c_str());
    if (s > kHangSeconds) hangs.push_back(p.string());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  for (const auto& h : hangs) std::fprintf(stderr, "replay: BUG: hang (over %.0f s): %s\n", kHangSeconds, h.c_str());
  return hangs.empty() ? 0 : 1;
}
