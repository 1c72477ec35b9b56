/// @file detail/workers.hpp
/// @brief Work shared between threads: this thread and helpers, or OpenMP's pool.
#pragma once

#include <thread>
#include <vector>

#include "../types.hpp"
#include "exceptions.hpp"

namespace seqembed::detail {

/// Runs f(0, count) on this thread: the executor of work without threads.
struct OneThread {
    template <typename Work>
    void operator()(Index count, const Work& f) const {
        f(Index{0}, count);
    }
};

/// Room for the helper threads of `workers` workers (none under OpenMP, which has its pool), so
/// that starting them allocates nothing: reserved before anything changes.
inline std::vector<std::thread> reserved_helpers(Index workers) {
    std::vector<std::thread> helpers;
#if !defined(_OPENMP)
    if (workers > 1) helpers.reserve(static_cast<std::size_t>(workers - 1));
#else
    static_cast<void>(workers);
#endif
    return helpers;
}

/// Runs work(worker) for every worker in [0, workers), on this thread and on helpers (room for
/// them reserved by reserved_helpers), or on OpenMP's pool when built with OpenMP. A helper that
/// cannot start (no thread to be had) leaves its work to this thread. work must not throw.
template <typename Work>
void run_workers(Index workers, std::vector<std::thread>& helpers, const Work& work) {
#if defined(_OPENMP)
    if (workers > 1) {
#pragma omp parallel for num_threads(static_cast<int>(workers)) schedule(static)
        for (Index worker = 0; worker < workers; ++worker) work(worker);
        return;
    }
#endif
    for (Index worker = 1; worker < workers; ++worker) {
        // std::system_error or std::bad_alloc: no thread to be had, this thread does it too
        if (!attempt_succeeds([&] { helpers.emplace_back(work, worker); })) work(worker);
    }
    work(0);
    for (std::thread& helper : helpers) helper.join();
    helpers.clear();
}

/// The first item of worker `worker`'s share when `count` items are split evenly between
/// `workers` workers (the end of its share is the first of the next worker's).
inline Index share_start(Index count, Index worker, Index workers) noexcept { return count * worker / workers; }

}  // namespace seqembed::detail
