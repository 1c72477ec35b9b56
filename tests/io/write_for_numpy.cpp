// Writes, into the directory given as argument, the files that
// `tests/reference/generate_io_fixtures.py --check <directory>` reads back with numpy.load and
// torch: writer.safetensors, writer_integers.safetensors and the writer_*.npy arrays.
#include <cstdio>
#include <exception>

#include "writer_cases.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <directory>\n", argv[0]);
        return 2;
    }
    try {
        const std::filesystem::path directory = argv[1];
        std::filesystem::create_directories(directory);
        const io_cases::WriterTensors tensors;
        seqembed::io::save_safetensors(directory / "writer.safetensors", tensors.named(), io_cases::writer_metadata());
        seqembed::io::save_safetensors(directory / "writer_integers.safetensors", io_cases::WriterIntegers().named());
        io_cases::WriterArrays().save(directory);
        std::printf("wrote writer.safetensors, writer_integers.safetensors and %zu .npy files into %s\n",
                    io_cases::WriterArrays::names().size(), argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
