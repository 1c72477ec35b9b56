// bench/pairs: two builds of seqembed in one program, timed call by call in alternation.
//   pairs [rounds] [workload...]     (pairs.sh builds and runs it; 41 rounds by default)
// For each workload, both sides are set up alike, run once (their results hashed: the same bits
// or not), then called in pairs, old-new and new-old in turn, each call timed. The host's speed
// moves both calls of a pair alike, so the median of the pairs' ratios new / old and its
// quartiles measure the change where the medians of separate runs move more than it does.
// Where each side's memory lands moves its time too (a build against itself measured 0.93x to
// 1.08x with one set-up), so the rounds run in four blocks, each with both sides set up afresh,
// the side set up first taking turns.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "workload.hpp"

namespace {

// The value at fraction q of sorted values.
double quantile(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

// The block of rounds a round is in.
int block_of(int round, int rounds, int blocks) { return round * blocks / rounds; }

void compare(int workload, int rounds) {
    constexpr int blocks = 4;
    bool same = true;
    void* old_side = nullptr;
    void* new_side = nullptr;
    const auto release = [&] {
        if (old_side != nullptr) destroy_old(old_side);
        if (new_side != nullptr) destroy_new(new_side);
        old_side = new_side = nullptr;
    };
    std::vector<double> old_ms, new_ms, ratios;
    for (int round = 0; round < rounds; ++round) {
        const int block = block_of(round, rounds, blocks);
        if (round == 0 || block != block_of(round - 1, rounds, blocks)) {
            release();
            if (block % 2 == 0) {
                old_side = make_old(workload);
                new_side = make_new(workload);
            } else {
                new_side = make_new(workload);
                old_side = make_old(workload);
            }
            run_old(old_side);
            run_new(new_side);
            same = same && hash_old(old_side) == hash_new(new_side);
        }
        double old_time = 0;
        double new_time = 0;
        if (round % 2 == 0) {
            old_time = run_old(old_side);
            new_time = run_new(new_side);
        } else {
            new_time = run_new(new_side);
            old_time = run_old(old_side);
        }
        old_ms.push_back(old_time);
        new_ms.push_back(new_time);
        ratios.push_back(new_time / old_time);
    }
    release();
    std::printf("%-18s old %7.2f ms  new %7.2f ms  new/old %.3f (quartiles %.3f-%.3f)  %s\n",
                pairs::workload_names[workload], quantile(old_ms, 0.5), quantile(new_ms, 0.5), quantile(ratios, 0.5),
                quantile(ratios, 0.25), quantile(ratios, 0.75), same ? "same bits" : "OTHER BITS");
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 41;
    std::vector<int> workloads;
    for (int k = 2; k < argc; ++k)
        for (int w = 0; w < pairs::workload_count; ++w)
            if (std::strcmp(argv[k], pairs::workload_names[w]) == 0) workloads.push_back(w);
    if (workloads.empty())
        for (int w = 0; w < pairs::workload_count; ++w) workloads.push_back(w);
    std::printf("%d pairs per workload (medians; the ratio is the median of the pairs' ratios)\n", rounds);
    for (const int workload : workloads) compare(workload, rounds);
    return 0;
}
