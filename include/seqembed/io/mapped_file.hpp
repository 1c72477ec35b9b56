/// @file io/mapped_file.hpp
/// @brief MappedFile: the bytes of a file, memory-mapped read-only (or read into owned memory),
///        kept alive by shared ownership.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "../detail/large_memory.hpp"
#include "detail/path_name.hpp"
#include "detail/system.hpp"
#include "errors.hpp"


namespace seqembed::io {

/// @brief How a file is opened.
struct OpenOptions {
    /// @brief Memory-map the file (true, the default): opening costs no copy and tables view the
    ///        mapped pages (the page cache's 4 KiB pages). false, or a file the system cannot
    ///        map: the file is read once into memory that seqembed owns, on huge pages on Linux
    ///        from 4 MiB, as its own tables (faster random row gathers, at the cost of a copy).
    bool map = true;
    /// @brief The largest header accepted, in bytes: the JSON of a safetensors file, the dict of
    ///        a .npy file. The default is the safetensors reference implementation's cap.
    std::uint64_t max_header_bytes = 100'000'000;
    /// @brief The most entries a safetensors header may hold: tensors, `__metadata__` entries and
    ///        shape dimensions together. Bounds the memory and work a header can ask for.
    std::uint64_t max_header_entries = 1'000'000;
};

/// @brief The bytes of a file, mapped read-only or read into memory, shared by every object
///        that reads them: a table viewing a tensor of the file holds the bytes alive through
///        owner(), so they outlive the MappedFile that opened them.
///
/// While the file is mapped, another process truncating it makes reads of the lost pages fault
/// (SIGBUS on POSIX), as with every memory-mapped reader: do not rewrite a file in place while
/// it is open (seqembed's writers replace files by renaming a new one over them, which is safe).
class MappedFile {
public:
    /// @brief An empty file named "<empty>".
    MappedFile() : MappedFile(nullptr, 0, "<empty>", nullptr, false) {}

    /// @brief Opens a file read-only and maps it (or reads it, see OpenOptions::map).
    /// @param path the file.
    /// @param map whether to try memory-mapping it first.
    /// @return its bytes.
    /// @throws file_error if the file cannot be opened, is not a regular file, or cannot be read.
    static MappedFile open(const std::filesystem::path& path, bool map = true) {
        return open_impl(path, map);
    }

    /// @brief Bytes already in memory, viewed without a copy (tests, fuzzing, a file read by the
    ///        caller).
    /// @param data the first byte (may be null when size is 0).
    /// @param size how many bytes.
    /// @param name what messages call them.
    /// @param owner keeps data alive (held by every table viewing these bytes); null: the caller
    ///        keeps data alive and unchanged while anything reads it.
    /// @return a view of the bytes.
    static MappedFile from_memory(const void* data, std::size_t size, std::string name = "<memory>",
                                  std::shared_ptr<const void> owner = nullptr) {
        return MappedFile(static_cast<const unsigned char*>(data), size, std::move(name),
                          std::move(owner), false);
    }

    /// @brief The first byte (null for an empty file).
    /// @return a pointer valid while this object or any copy of owner() lives.
    const unsigned char* data() const noexcept { return m_data; }
    /// @brief The size in bytes.
    /// @return the file's size when it was opened.
    std::uint64_t size() const noexcept { return m_size; }
    /// @brief The file's path (or the name given to from_memory), as messages show it.
    /// @return the name, UTF-8.
    const std::string& name() const noexcept { return m_name; }
    /// @brief Whether the bytes are a memory mapping of the file.
    /// @return true when mapped, false when read into memory or given by from_memory.
    bool is_mapped() const noexcept { return m_mapped; }
    /// @brief What keeps the bytes alive: hand it to TokenEmbedding::view and friends.
    /// @return the shared owner of the mapping or buffer (null for from_memory without owner).
    const std::shared_ptr<const void>& owner() const noexcept { return m_owner; }

private:
    MappedFile(const unsigned char* data, std::uint64_t size, std::string name,
               std::shared_ptr<const void> owner, bool mapped)
        : m_data(data), m_size(size), m_name(std::move(name)), m_owner(std::move(owner)),
          m_mapped(mapped) {}

    [[noreturn]] static void fail_system(const std::string& name, const char* what, int code) {
        seqembed::detail::fail<file_error>(name, ": cannot ", what, ": ",
                                 std::error_code(code, std::system_category()).message());
    }

#if defined(_WIN32)
    struct Handle {
        HANDLE handle = INVALID_HANDLE_VALUE;
        ~Handle() { if (handle != INVALID_HANDLE_VALUE && handle != nullptr) CloseHandle(handle); }
    };
    static MappedFile open_impl(const std::filesystem::path& path, bool map) {
        const std::string name = detail::path_name(path);
        Handle file;
        file.handle = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE,
                                  nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
        if (file.handle == INVALID_HANDLE_VALUE)
            fail_system(name, "open it", static_cast<int>(GetLastError()));
        LARGE_INTEGER size{};
        if (!GetFileSizeEx(file.handle, &size)) fail_system(name, "read its size", static_cast<int>(GetLastError()));
        const auto bytes = static_cast<std::uint64_t>(size.QuadPart);
        if (bytes == 0) return MappedFile(nullptr, 0, name, nullptr, false);
        if (map) {
            Handle mapping;
            mapping.handle = CreateFileMappingW(file.handle, nullptr, PAGE_READONLY, 0, 0, nullptr);
            if (mapping.handle != nullptr) {
                void* view = MapViewOfFile(mapping.handle, FILE_MAP_READ, 0, 0, 0);
                if (view != nullptr) {
                    std::shared_ptr<const void> owner(view, [](const void* p) {
                        UnmapViewOfFile(p);
                    });
                    return MappedFile(static_cast<const unsigned char*>(view), bytes, name,
                                      std::move(owner), true);
                }
            } else {
                mapping.handle = INVALID_HANDLE_VALUE;
            }
        }
        auto buffer = allocate(name, bytes);
        auto* out = static_cast<unsigned char*>(buffer.get());
        std::uint64_t done = 0;
        while (done < bytes) {
            const DWORD chunk = static_cast<DWORD>(std::min<std::uint64_t>(bytes - done, 1u << 30));
            DWORD got = 0;
            if (!ReadFile(file.handle, out + done, chunk, &got, nullptr))
                fail_system(name, "read it", static_cast<int>(GetLastError()));
            if (got == 0) seqembed::detail::fail<file_error>(name, ": the file shrank while it was read");
            done += got;
        }
        return from_buffer(std::move(buffer), bytes, name);
    }
#else
    struct Descriptor {
        int fd = -1;
        ~Descriptor() { if (fd >= 0) ::close(fd); }
    };
    static MappedFile open_impl(const std::filesystem::path& path, bool map) {
        const std::string name = detail::path_name(path);
        Descriptor file;
        do {
            file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        } while (file.fd < 0 && errno == EINTR);
        if (file.fd < 0) fail_system(name, "open it", errno);
        struct stat info {};
        if (::fstat(file.fd, &info) != 0) fail_system(name, "read its size", errno);
        if (!S_ISREG(info.st_mode)) seqembed::detail::fail<file_error>(name, ": not a regular file");
        const auto bytes = static_cast<std::uint64_t>(info.st_size);
        if (bytes == 0) return MappedFile(nullptr, 0, name, nullptr, false);
        if (map && bytes <= static_cast<std::uint64_t>(SIZE_MAX)) {
            void* view = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ, MAP_PRIVATE, file.fd, 0);
            if (view != MAP_FAILED) {
                const auto length = static_cast<std::size_t>(bytes);
                std::shared_ptr<const void> owner(view, [length](const void* p) {
                    ::munmap(const_cast<void*>(p), length);
                });
                return MappedFile(static_cast<const unsigned char*>(view), bytes, name,
                                  std::move(owner), true);
            }
        }
        auto buffer = allocate(name, bytes);
        auto* out = static_cast<unsigned char*>(buffer.get());
        std::uint64_t done = 0;
        while (done < bytes) {
            const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(bytes - done, 1u << 30));
            const ssize_t got = ::read(file.fd, out + done, chunk);
            if (got < 0) {
                if (errno == EINTR) continue;
                fail_system(name, "read it", errno);
            }
            if (got == 0) seqembed::detail::fail<file_error>(name, ": the file shrank while it was read");
            done += static_cast<std::uint64_t>(got);
        }
        return from_buffer(std::move(buffer), bytes, name);
    }
#endif

    using Buffer = std::unique_ptr<void, seqembed::detail::TableMemoryDeleter>;

    /// Memory for a file read whole: the allocation of the tables seqembed owns (64-byte
    /// aligned, on huge pages from 4 MiB), which a file mapping cannot have.
    static Buffer allocate(const std::string& name, std::uint64_t bytes) {
        Buffer buffer;
        if (bytes <= static_cast<std::uint64_t>(SIZE_MAX))
            buffer = seqembed::detail::allocate_table_memory(static_cast<std::size_t>(bytes));
        if (!buffer) seqembed::detail::fail<file_error>(name, ": ", bytes, " bytes do not fit in memory");
        return buffer;
    }

    static MappedFile from_buffer(Buffer buffer, std::uint64_t bytes, const std::string& name) {
        const auto* data = static_cast<const unsigned char*>(buffer.get());
        return MappedFile(data, bytes, name, std::shared_ptr<const void>(std::move(buffer)), false);
    }

    const unsigned char* m_data;
    std::uint64_t m_size;
    std::string m_name;
    std::shared_ptr<const void> m_owner;
    bool m_mapped;
};

}  // namespace seqembed::io
