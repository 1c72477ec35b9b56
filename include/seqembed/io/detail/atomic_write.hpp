/// @file io/detail/atomic_write.hpp
/// @brief Writing a file so that its name never shows a partial file: the bytes go to a new
///        temporary file beside the target, which is flushed to disk and then renamed over the
///        target. Any failure removes the temporary file and leaves the target as it was.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "../../error.hpp"
#include "../errors.hpp"
#include "path_name.hpp"
#include "system.hpp"


namespace seqembed::io::detail {

/// Collects bytes in memory (the fuzz round trip, tests).
struct StringSink {
    std::string bytes;
    void write(const void* data, std::size_t size) {
        bytes.append(static_cast<const char*>(data), size);
    }
};

/// Writes to an open file, throwing file_error naming `name` on failure.
class FileSink {
public:
#if defined(_WIN32)
    using Handle = HANDLE;
#else
    using Handle = int;
#endif
    FileSink(Handle handle, const std::string& name) : m_handle(handle), m_name(name) {}

    void write(const void* data, std::size_t size) {
        const auto* bytes = static_cast<const unsigned char*>(data);
        while (size > 0) {
            const std::size_t chunk = size < (std::size_t{1} << 30) ? size : (std::size_t{1} << 30);
#if defined(_WIN32)
            DWORD written = 0;
            if (!WriteFile(m_handle, bytes, static_cast<DWORD>(chunk), &written, nullptr))
                fail_code("write it", static_cast<int>(GetLastError()));
            const std::size_t done = written;
#else
            const ssize_t written = ::write(m_handle, bytes, chunk);
            if (written < 0) {
                if (errno == EINTR) continue;
                fail_code("write it", errno);
            }
            const auto done = static_cast<std::size_t>(written);
#endif
            if (done == 0) seqembed::detail::fail<file_error>(m_name, ": cannot write it: no progress");
            bytes += done;
            size -= done;
        }
    }

    [[noreturn]] void fail_code(const char* what, int code) const {
        seqembed::detail::fail<file_error>(m_name, ": cannot ", what, ": ",
                                           std::error_code(code, std::system_category()).message());
    }

private:
    Handle m_handle;
    const std::string& m_name;
};

/// Calls body(sink) with a FileSink on a new temporary file beside target, flushes it to disk,
/// and renames it to target. On any exception the temporary file is removed and target is left
/// untouched; the exception propagates.
template <typename Body>
void write_file_atomically(const std::filesystem::path& target, Body&& body) {
    static std::atomic<unsigned> counter{0};
    const std::string name = path_name(target);
    if (target.filename().empty())
        seqembed::detail::fail<file_error>(name, ": cannot write it: the path names no file");
    std::filesystem::path temp = target;
#if defined(_WIN32)
    const auto process = static_cast<unsigned long>(GetCurrentProcessId());
#else
    const auto process = static_cast<unsigned long>(::getpid());
#endif
    temp += ".tmp-" + std::to_string(process) + "-" + std::to_string(counter.fetch_add(1));
#if defined(_WIN32)
    HANDLE handle = CreateFileW(temp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                                FILE_ATTRIBUTE_NORMAL, nullptr);
    if (handle == INVALID_HANDLE_VALUE)
        FileSink(handle, name).fail_code("create a file beside it", static_cast<int>(GetLastError()));
    FileSink sink(handle, name);
    seqembed::detail::run_cleaning_up_on_error(
        [&] {
            body(sink);
            if (!FlushFileBuffers(handle)) sink.fail_code("flush it", static_cast<int>(GetLastError()));
            CloseHandle(handle);
            handle = INVALID_HANDLE_VALUE;
            if (!MoveFileExW(temp.c_str(), target.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
                sink.fail_code("rename the temporary file to it", static_cast<int>(GetLastError()));
        },
        [&] {
            if (handle != INVALID_HANDLE_VALUE) CloseHandle(handle);
            DeleteFileW(temp.c_str());
        });
#else
    int fd;
    do {
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    FileSink sink(fd, name);
    if (fd < 0) sink.fail_code("create a file beside it", errno);
    seqembed::detail::run_cleaning_up_on_error(
        [&] {
            body(sink);
            if (::fsync(fd) != 0) sink.fail_code("flush it to disk", errno);
            const int closed = ::close(fd);
            fd = -1;
            if (closed != 0) sink.fail_code("close it", errno);
            if (::rename(temp.c_str(), target.c_str()) != 0)
                sink.fail_code("rename the temporary file to it", errno);
        },
        [&] {
            if (fd >= 0) ::close(fd);
            ::unlink(temp.c_str());
        });
    // The rename is durable once the directory is flushed too (best effort: some file systems
    // refuse to open or fsync a directory).
    std::filesystem::path directory = target.parent_path();
    if (directory.empty()) directory = ".";
    const int dir = ::open(directory.c_str(), O_RDONLY | O_CLOEXEC);
    if (dir >= 0) {
        (void)::fsync(dir);
        ::close(dir);
    }
#endif
}

}  // namespace seqembed::io::detail
