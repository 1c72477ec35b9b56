// Built with -fsanitize=thread by the g++ test build: a program that includes seqembed must start
// (nothing of seqembed may run before main: resolvers that the loader runs before ThreadSanitizer
// is set up, as GCC's target_clones had, crashed it) and run the pipeline's workers, and two
// callers of one pipeline, without a race ThreadSanitizer can see, giving one thread's values.
// AVX2 and AVX-512 streaming stores are not instrumented, so the lines workers share are checked
// by the bit-for-bit tests instead.
#include <seqembed/seqembed.hpp>

#include <cstdio>
#include <thread>
#include <vector>

int main() {
    seqembed::IdMatrix ids(6, 200);
    for (seqembed::Index i = 0; i < ids.size(); ++i) ids.data()[i] = (i * 7) % 300;
    ids.row(2).tail(20).setConstant(0);
    int failures = 0;
    for (const auto stores : {seqembed::OutputStores::cached, seqembed::OutputStores::streaming}) {
        seqembed::PipelineOptions options;
        options.dropout = 0.1;
        options.output_stores = stores;
        const auto pipeline_with = [&](int threads) {
            seqembed::PipelineOptions chosen = options;
            chosen.threads = threads;
            seqembed::InputPipeline<float> pipeline(seqembed::TokenEmbedding<float>(300, 256),
                                                    seqembed::SinusoidalPositionalEncoding<float>(256), chosen);
            pipeline.set_training(true);
            return pipeline;
        };
        // The masks of calls 0 and 1, from one thread.
        const auto single = pipeline_with(1);
        const seqembed::RowMatrix<float> first = single.forward(ids, seqembed::Padding::by_id(0));
        const seqembed::RowMatrix<float> second = single.forward(ids, seqembed::Padding::by_id(0));
        // Two callers at once (const calls are thread-safe), each with three workers: between
        // them they take calls 0 and 1.
        const auto shared = pipeline_with(3);
        seqembed::RowMatrix<float> mine, theirs;
        std::thread other([&] { theirs = shared.forward(ids, seqembed::Padding::by_id(0)); });
        mine = shared.forward(ids, seqembed::Padding::by_id(0));
        other.join();
        const bool same = (mine == first && theirs == second) || (mine == second && theirs == first);
        if (!same || first == second) ++failures;
    }
    std::printf("%s\n", failures == 0 ? "thread sanitizer smoke: OK" : "thread sanitizer smoke: FAILED");
    return failures == 0 ? 0 : 1;
}
