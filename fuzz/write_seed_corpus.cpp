// Writes the fuzzers' seed corpora into fuzz/corpus/<target>/: every bad-input case of
// tests/io/bad_files.hpp (those under 64 KiB, the fuzzers' -max_len) and the valid fixture
// files of tests/io/fixtures/. Run it after changing either and commit the result:
//   cmake --build build/dev --target seqembed_io_write_seed_corpus
//   build/dev/tests/io/seqembed_io_write_seed_corpus fuzz/corpus tests/io/fixtures
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "bad_files.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <fuzz/corpus> <tests/io/fixtures>\n", argv[0]);
        return 2;
    }
    const fs::path corpus = argv[1], fixtures = argv[2];
    for (const char* target : {"safetensors", "npy", "roundtrip"}) fs::create_directories(corpus / target);
    int written = 0;
    for (const auto& c : io_cases::bad_files()) {
        if (c.bytes.size() > 65536) continue;
        const std::string name = "bad-" + std::to_string(c.item) + "-" + c.label;
        write(corpus / (c.npy ? "npy" : "safetensors") / name, c.bytes);
        ++written;
    }
    for (const auto& entry : fs::directory_iterator(fixtures)) {
        const std::string ext = entry.path().extension().string();
        if (ext != ".safetensors" && ext != ".npy") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string name = "valid-" + entry.path().filename().string();
        if (ext == ".npy") {
            write(corpus / "npy" / name, bytes);
        } else {
            write(corpus / "safetensors" / name, bytes);
            write(corpus / "roundtrip" / name, bytes);
        }
        written += ext == ".npy" ? 1 : 2;
    }
    std::printf("wrote %d seed files into %s\n", written, argv[1]);
    return 0;
}
