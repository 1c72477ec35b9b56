/// @file io/training_state.hpp
/// @brief A training run's state in one safetensors file: tables, optimizer states and counters
///        (step counts, the dropout call counter), so that a resumed run continues bit for bit.
#pragma once

#include "../detail/requirements.hpp"  // first: C++17, no -ffast-math

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../optim.hpp"
#include "../types.hpp"
#include "dtype.hpp"
#include "errors.hpp"
#include "safetensors.hpp"

namespace seqembed::io {

/// @brief A training run's state: named tables, optimizer states and counters, saved together as
///        one safetensors file and read back.
///
/// Layout (stable, readable by any safetensors reader):
/// - a table `name`: an F32 or F64 tensor of its shape;
/// - an optimizer `name`: `name/steps` (I64 scalar) and its state tensors (`name/exp_avg`,
///   `name/exp_avg_sq`, `name/max_exp_avg_sq`, `name/momentum_buffer`, `name/has_buffer`,
///   `name/accumulators`), with `__metadata__` entry `name/optimizer` naming the class;
/// - a counter `name`: an I64 scalar, with `__metadata__` entry `name/counter`.
///
/// Values are copied when added, so the objects may change afterwards. Restoring checks the
/// kind, dtype and shape of each entry and throws before changing the target.
/// @code
/// seqembed::io::TrainingState state;
/// state.add_table("token", pipeline.embedding().table());
/// state.add_optimizer("token", token_step);
/// state.add_counter("dropout_calls", pipeline.dropout().calls());
/// state.save("run/step_1000.safetensors");
/// // later
/// const auto saved = seqembed::io::TrainingState::open("run/step_1000.safetensors");
/// saved.restore_table("token", pipeline.trainable().token->weights);
/// saved.restore_optimizer("token", token_step);
/// @endcode
class TrainingState {
public:
    /// @brief An empty state, to add to and save.
    TrainingState() = default;

    /// @brief Adds a table's values (copied).
    /// @tparam Derived a float or double matrix.
    /// @param name its name, unique in the state.
    /// @param table the values.
    /// @throws value_error for a name already used.
    template <typename Derived>
    void add_table(const std::string& name, const Eigen::MatrixBase<Derived>& table) {
        using Scalar = typename Derived::Scalar;
        static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                      "TrainingState::add_table: a float or double table");
        require_new(name);
        add_matrix(name, RowMatrix<Scalar>(table));
    }

    /// @brief Adds an optimizer's state (copied): its step count and its state tensors.
    /// @tparam Optimizer one of seqembed::optim's optimizers.
    /// @param name its name, unique in the state.
    /// @param optimizer the optimizer.
    /// @throws value_error for a name already used.
    template <typename Optimizer>
    void add_optimizer(const std::string& name, const Optimizer& optimizer) {
        require_new(name);
        add_integer(name + "/steps", optimizer.steps());
        m_metadata[name + "/optimizer"] = kind_of(optimizer);
        add_optimizer_tensors(name, optimizer);
    }

    /// @brief Adds a counter (the dropout layer's calls(), a step number).
    /// @param name its name, unique in the state.
    /// @param value the counter, below 2^63.
    /// @throws value_error for a name already used or a value of 2^63 or more.
    void add_counter(const std::string& name, std::uint64_t value) {
        require_new(name);
        if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            seqembed::detail::fail<value_error>("counter '", name, "' is ", value, ", past the I64 it is saved as");
        add_integer(name, static_cast<std::int64_t>(value));
        m_metadata[name + "/counter"] = "I64";
    }

    /// @brief Writes the state atomically (save_safetensors: no partial file on failure).
    /// @param path the file.
    /// @throws file_error if it cannot be written.
    void save(const std::filesystem::path& path) const { save_safetensors(path, tensors(), m_metadata); }
    /// @brief The file's bytes, in memory.
    /// @return what save writes.
    std::string serialize() const { return serialize_safetensors(tensors(), m_metadata); }

    /// @brief Reads a saved state.
    /// @param path a file save wrote.
    /// @return the state, for the restore functions.
    /// @throws file_error or format_error as SafetensorsFile::open.
    static TrainingState open(const std::filesystem::path& path) {
        TrainingState state;
        state.m_file = std::make_shared<SafetensorsFile>(SafetensorsFile::open(path));
        return state;
    }
    /// @brief Reads a saved state from its bytes (copied).
    /// @param bytes what serialize gave.
    /// @param name the name messages give it.
    /// @return the state.
    /// @throws format_error as SafetensorsFile::from_memory.
    static TrainingState from_bytes(std::string bytes, std::string name = "training state") {
        auto kept = std::make_shared<const std::string>(std::move(bytes));
        TrainingState state;
        state.m_file = std::make_shared<SafetensorsFile>(
            SafetensorsFile::from_memory(kept->data(), kept->size(), std::move(name), kept));
        return state;
    }

    /// @brief Copies a saved float table into `table` (a trainable table, say).
    /// @param name the table's name.
    /// @param table where it goes, of the saved shape.
    /// @throws value_error for a missing name; format_error for another dtype or shape; the
    ///         table is then unchanged.
    void restore_table(const std::string& name, Eigen::Ref<RowMatrix<float>> table) const {
        restore_matrix<float>(name, table);
    }
    /// @brief Copies a saved double table into `table`.
    /// @param name the table's name.
    /// @param table where it goes, of the saved shape.
    /// @throws as the float overload.
    void restore_table(const std::string& name, Eigen::Ref<RowMatrix<double>> table) const {
        restore_matrix<double>(name, table);
    }

    /// @brief Restores an optimizer's state (its step count and state tensors).
    /// @tparam Optimizer the class add_optimizer saved.
    /// @param name the optimizer's name.
    /// @param optimizer where it goes, made for the same table shape.
    /// @throws value_error for a missing name; format_error for another optimizer class, dtype or
    ///         shape; the optimizer is then unchanged.
    template <typename Optimizer>
    void restore_optimizer(const std::string& name, Optimizer& optimizer) const {
        const std::string kind = metadata(name + "/optimizer");
        if (kind != kind_of(optimizer))
            fail_format(name, "holds the state of ", kind, ", not of ", kind_of(optimizer));
        restore_optimizer_tensors(name, integer(name + "/steps"), optimizer);
    }

    /// @brief A saved counter.
    /// @param name its name.
    /// @return its value.
    /// @throws value_error for a missing name; format_error for a negative value.
    std::uint64_t counter(const std::string& name) const {
        metadata(name + "/counter");
        const std::int64_t value = integer(name);
        if (value < 0) fail_format(name, "is negative (", value, ")");
        return static_cast<std::uint64_t>(value);
    }

private:
    // --- what each optimizer saves
    template <typename S>
    static std::string kind_of(const optim::Sgd<S>&) { return std::string("Sgd<") + scalar_name<S>() + ">"; }
    template <typename S>
    static std::string kind_of(const optim::LazySgd<S>&) { return std::string("LazySgd<") + scalar_name<S>() + ">"; }
    template <typename S, bool Decoupled>
    static std::string kind_of(const optim::BasicAdam<S, Decoupled>&) {
        return std::string(Decoupled ? "AdamW<" : "Adam<") + scalar_name<S>() + ">";
    }
    template <typename S>
    static std::string kind_of(const optim::SparseAdam<S>&) { return std::string("SparseAdam<") + scalar_name<S>() + ">"; }
    template <typename S>
    static std::string kind_of(const optim::RowwiseAdagrad<S>&) {
        return std::string("RowwiseAdagrad<") + scalar_name<S>() + ">";
    }
    template <typename S>
    static const char* scalar_name() { return std::is_same_v<S, float> ? "float" : "double"; }

    template <typename S>
    void add_optimizer_tensors(const std::string& name, const optim::Sgd<S>& o) {
        add_matrix(name + "/momentum_buffer", o.momentum_buffer());
    }
    template <typename S>
    void add_optimizer_tensors(const std::string& name, const optim::LazySgd<S>& o) {
        add_matrix(name + "/momentum_buffer", o.momentum_buffer());
        auto flags = std::make_shared<std::vector<std::uint8_t>>();
        if (o.momentum_buffer().size() != 0)
            for (Index r = 0; r < o.momentum_buffer().rows(); ++r) flags->push_back(o.has_buffer(r) ? 1 : 0);
        m_tensors.push_back(NamedTensor::view(name + "/has_buffer", flags->data(),
                                              {static_cast<std::int64_t>(flags->size())}));
        m_kept.push_back(flags);
    }
    template <typename S, bool Decoupled>
    void add_optimizer_tensors(const std::string& name, const optim::BasicAdam<S, Decoupled>& o) {
        add_matrix(name + "/exp_avg", o.exp_avg());
        add_matrix(name + "/exp_avg_sq", o.exp_avg_sq());
        add_matrix(name + "/max_exp_avg_sq", o.max_exp_avg_sq());
    }
    template <typename S>
    void add_optimizer_tensors(const std::string& name, const optim::SparseAdam<S>& o) {
        add_matrix(name + "/exp_avg", o.exp_avg());
        add_matrix(name + "/exp_avg_sq", o.exp_avg_sq());
    }
    template <typename S>
    void add_optimizer_tensors(const std::string& name, const optim::RowwiseAdagrad<S>& o) {
        add_matrix(name + "/accumulators", RowMatrix<S>(o.accumulators().transpose()));
    }

    template <typename S>
    void restore_optimizer_tensors(const std::string& name, std::int64_t steps, optim::Sgd<S>& o) const {
        o.set_state(steps, matrix<S>(name + "/momentum_buffer"));
    }
    template <typename S>
    void restore_optimizer_tensors(const std::string& name, std::int64_t steps, optim::LazySgd<S>& o) const {
        const Tensor<std::int64_t> flags = file().integers(name + "/has_buffer");
        std::vector<bool> has_buffer;
        for (Index r = 0; r < flags.size(); ++r) has_buffer.push_back(flags.data()[r] != 0);
        o.set_state(steps, matrix<S>(name + "/momentum_buffer"), std::move(has_buffer));
    }
    template <typename S, bool Decoupled>
    void restore_optimizer_tensors(const std::string& name, std::int64_t steps, optim::BasicAdam<S, Decoupled>& o) const {
        o.set_state(steps, matrix<S>(name + "/exp_avg"), matrix<S>(name + "/exp_avg_sq"),
                    matrix<S>(name + "/max_exp_avg_sq"));
    }
    template <typename S>
    void restore_optimizer_tensors(const std::string& name, std::int64_t steps, optim::SparseAdam<S>& o) const {
        o.set_state(steps, matrix<S>(name + "/exp_avg"), matrix<S>(name + "/exp_avg_sq"));
    }
    template <typename S>
    void restore_optimizer_tensors(const std::string& name, std::int64_t steps, optim::RowwiseAdagrad<S>& o) const {
        const RowMatrix<S> row = matrix<S>(name + "/accumulators");
        o.set_state(steps, typename optim::RowwiseAdagrad<S>::Column(row.transpose()));
    }

    // --- the tensors
    template <typename Scalar>
    void restore_matrix(const std::string& name, Eigen::Ref<RowMatrix<Scalar>>& table) const {
        const RowMatrix<Scalar> saved = matrix<Scalar>(name);
        if (saved.rows() != table.rows() || saved.cols() != table.cols())
            fail_format(name, "is ", saved.rows(), " x ", saved.cols(), ", the table ", table.rows(), " x ",
                        table.cols());
        table = saved;
    }
    void require_new(const std::string& name) const {
        if (m_file) seqembed::detail::fail<value_error>("TrainingState: a state read from a file is not added to");
        for (const NamedTensor& t : m_tensors)
            if (t.name() == name || t.name().rfind(name + "/", 0) == 0)
                seqembed::detail::fail<value_error>("TrainingState: the name '", name, "' is already used");
    }
    template <typename S>
    void add_matrix(const std::string& name, const RowMatrix<S>& values) {
        auto copy = std::make_shared<RowMatrix<S>>(values);
        m_tensors.push_back(NamedTensor::view(name, copy->data(), {static_cast<std::int64_t>(copy->rows()),
                                                                    static_cast<std::int64_t>(copy->cols())}));
        m_kept.push_back(copy);
    }
    void add_integer(const std::string& name, std::int64_t value) {
        auto kept = std::make_shared<std::int64_t>(value);
        m_tensors.push_back(NamedTensor::view(name, kept.get(), {}));
        m_kept.push_back(kept);
    }
    const std::vector<NamedTensor>& tensors() const {
        if (m_file) seqembed::detail::fail<value_error>("TrainingState: a state read from a file is not saved again");
        return m_tensors;
    }

    const SafetensorsFile& file() const {
        if (!m_file) seqembed::detail::fail<value_error>("TrainingState: only a state read by open or from_bytes restores");
        return *m_file;
    }
    const TensorInfo& entry(const std::string& name) const {
        if (!file().contains(name))
            seqembed::detail::fail<value_error>("training state ", file().path(), " has no entry '", name, "'");
        return file().info(name);
    }
    std::string metadata(const std::string& key) const {
        const auto& all = file().metadata();
        const auto found = all.find(key);
        if (found == all.end())
            seqembed::detail::fail<value_error>("training state ", file().path(), " has no entry '",
                                                key.substr(0, key.rfind('/')), "' of that kind (no '", key, "')");
        return found->second;
    }
    template <typename S>
    RowMatrix<S> matrix(const std::string& name) const {
        const TensorInfo& info = entry(name);
        if (info.dtype_name != dtype_name(dtype_of<S>()))
            fail_format(name, "is ", info.dtype_name, ", restored as ", dtype_name(dtype_of<S>()),
                        ": a resumed run needs the dtype it saved");
        if (info.shape.size() != 2) fail_format(name, "has rank ", info.shape.size(), ", not 2");
        const Tensor<S> values = file().tensor<S>(name);
        RowMatrix<S> out(static_cast<Index>(info.shape[0]), static_cast<Index>(info.shape[1]));
        for (Index k = 0; k < out.size(); ++k) out.data()[k] = values.data()[k];
        return out;
    }
    std::int64_t integer(const std::string& name) const {
        const TensorInfo& info = entry(name);
        if (!info.shape.empty() || info.dtype_name != "I64") fail_format(name, "is not an I64 scalar");
        return file().integers(name).scalar();
    }
    template <typename... Parts>
    [[noreturn]] void fail_format(const std::string& name, const Parts&... parts) const {
        seqembed::detail::fail<format_error>("training state ", file().path(), ": '", name, "' ", parts...);
    }

    std::vector<NamedTensor> m_tensors;
    std::vector<std::shared_ptr<const void>> m_kept;  // the values m_tensors view
    std::map<std::string, std::string> m_metadata;
    std::shared_ptr<const SafetensorsFile> m_file;
};

}  // namespace seqembed::io
