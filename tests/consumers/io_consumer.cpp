// A consumer of seqembed::io: writes a safetensors file, maps it back as a token embedding and
// embeds one id. Exit status 0 when the row is the one written, times sqrt(d_model). It includes
// the header it uses, as a user does: every route builds it, and io.hpp (every loader) took
// twice as long to compile; the strict matrix compiles io.hpp alone and every header together.
#include <seqembed/io/safetensors.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

int main() {
    const auto path = std::filesystem::temp_directory_path() / "seqembed_io_consumer.safetensors";
    seqembed::RowMatrix<float> table(3, 4);
    table << 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;
    seqembed::io::save_safetensors(path, {{"embed", table}});
    const auto embedding = seqembed::io::token_embedding_from_file<float>(path, "embed");
    std::filesystem::remove(path);
    seqembed::IdMatrix ids(1, 1);
    ids << 2;
    const seqembed::RowMatrix<float> row = embedding.forward(ids);
    const bool ok = embedding.is_view() && row(0, 3) == 11.0f * std::sqrt(4.0f);
    std::printf("seqembed::io consumer: %s\n", ok ? "OK" : "wrong row");
    return ok ? 0 : 1;
}
