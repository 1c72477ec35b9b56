// The optimizers against PyTorch's trajectories (tests/fixtures/optim/optim_cases.hpp, from
// tests/reference/generate_optim_fixtures.py): ten steps of Sgd, Adam, AdamW (torch.optim),
// SparseAdam (torch.optim.SparseAdam), LazySgd (torch.optim.SGD per touched row) and
// RowwiseAdagrad (FBGEMM's CPU rule), in float and double, dense and row-sparse gradients; and
// the checks every step makes before it writes.
#include <seqembed/optim.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "isa_support.hpp"
#include "fixtures/optim/optim_cases.hpp"

namespace fx = seqembed_optim_fixtures;
using seqembed::Index;
using seqembed::RowGradient;
using seqembed::RowMatrix;

namespace {

#define SEQEMBED_UNPAREN(...) __VA_ARGS__

template <typename Optimizer>
struct OptionsOf;
template <typename S>
struct OptionsOf<seqembed::optim::Sgd<S>> { using type = seqembed::optim::SgdOptions; static constexpr bool dense = true; };
template <typename S>
struct OptionsOf<seqembed::optim::LazySgd<S>> { using type = seqembed::optim::SgdOptions; static constexpr bool dense = false; };
template <typename S>
struct OptionsOf<seqembed::optim::Adam<S>> { using type = seqembed::optim::AdamOptions; static constexpr bool dense = true; };
template <typename S>
struct OptionsOf<seqembed::optim::AdamW<S>> { using type = seqembed::optim::AdamOptions; static constexpr bool dense = true; };
template <typename S>
struct OptionsOf<seqembed::optim::SparseAdam<S>> { using type = seqembed::optim::SparseAdamOptions; static constexpr bool dense = false; };
template <typename S>
struct OptionsOf<seqembed::optim::RowwiseAdagrad<S>> { using type = seqembed::optim::RowwiseAdagradOptions; static constexpr bool dense = false; };

/// The problem of one precision: its initial weights, and each step's gradient and rate.
template <typename Scalar, typename Problem>
struct Steps {
    RowMatrix<Scalar> initial;
    std::vector<RowGradient<Scalar>> gradients;
    std::vector<double> lrs;

    Steps() : initial(fx::rows, fx::cols) {
        for (Index k = 0; k < initial.size(); ++k) initial.data()[k] = static_cast<Scalar>(Problem::initial[k]);
        std::size_t row_at = 0;
        std::size_t value_at = 0;
        for (int s = 0; s < fx::steps; ++s) {
            RowGradient<Scalar> g;
            g.table_rows = fx::rows;
            g.d_model = fx::cols;
            g.values.resize(Problem::row_counts[s], fx::cols);
            for (int k = 0; k < Problem::row_counts[s]; ++k) {
                g.rows.push_back(Problem::grad_rows[row_at++]);
                for (Index c = 0; c < fx::cols; ++c) g.values(k, c) = static_cast<Scalar>(Problem::grad_values[value_at++]);
            }
            gradients.push_back(g);
            lrs.push_back(Problem::lrs[s]);
        }
    }
};

/// Runs `Optimizer` over the steps (dense gradients when `dense`) and checks the weights after
/// each against the trajectory.
template <typename Optimizer, typename Scalar, typename Problem>
void check_trajectory(const char* name, const typename OptionsOf<Optimizer>::type& options, const double* expected,
                      bool dense) {
    const Steps<Scalar, Problem> steps;
    RowMatrix<Scalar> weights = steps.initial;
    Optimizer optimizer("table", fx::rows, fx::cols, options);
    const double tolerance = std::is_same_v<Scalar, float> ? 4e-6 : 1e-12;
    for (int s = 0; s < fx::steps; ++s) {
        const RowGradient<Scalar>& g = steps.gradients[static_cast<std::size_t>(s)];
        if constexpr (OptionsOf<Optimizer>::dense) {
            if (dense) {
                optimizer.step(weights, RowMatrix<Scalar>(g.to_dense()), steps.lrs[static_cast<std::size_t>(s)]);
            } else {
                optimizer.step(weights, g, steps.lrs[static_cast<std::size_t>(s)]);
            }
        } else {
            optimizer.step(weights, g, steps.lrs[static_cast<std::size_t>(s)]);
        }
        double worst = 0;
        for (Index k = 0; k < weights.size(); ++k) {
            const double want = expected[s * fx::rows * fx::cols + k];
            worst = std::max(worst, std::abs(static_cast<double>(weights.data()[k]) - want) / std::max(1.0, std::abs(want)));
        }
        INFO(name << (std::is_same_v<Scalar, float> ? " float" : " double") << (dense ? " dense" : " row-sparse")
                  << " step " << s + 1 << ": worst relative difference " << worst);
        CHECK(worst <= tolerance);
    }
    CHECK(optimizer.steps() == fx::steps);
}

}  // namespace

TEST_CASE("Optimizers follow PyTorch's (and FBGEMM's) trajectories over ten steps", "[optim]") {
#define SEQEMBED_CHECK_CASE(name, optimizer, options)                                                                    \
    {                                                                                                                    \
        using FloatOptimizer = seqembed::optim::optimizer<float>;                                                        \
        using DoubleOptimizer = seqembed::optim::optimizer<double>;                                                      \
        const typename OptionsOf<FloatOptimizer>::type chosen = SEQEMBED_UNPAREN options;                                \
        for (bool dense : {false, true}) {                                                                               \
            if (dense && !OptionsOf<FloatOptimizer>::dense) continue;                                                    \
            check_trajectory<FloatOptimizer, float, fx::Problem_float>(#name, chosen, fx::name##_float, dense);          \
            check_trajectory<DoubleOptimizer, double, fx::Problem_double>(#name, chosen, fx::name##_double, dense);      \
        }                                                                                                                \
    }
    SEQEMBED_OPTIM_CASES(SEQEMBED_CHECK_CASE)
#undef SEQEMBED_CHECK_CASE
}

TEMPLATE_TEST_CASE("Every ISA's finite scan names the first NaN or infinity of a gradient, wherever it is",
                   "[optim][bad-input][isa]", float, double) {
    // Rows of widths around the vector sizes and the scan's four vectors a step; one bad value at
    // every column of the last row, among finite values that include the largest, subnormals and
    // -0 (v - v is 0 for each).
    using T = TestType;
    const T bad_values[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                            std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
    for (const Index width : {1, 3, 8, 15, 16, 17, 33, 64, 65, 77}) {
        RowGradient<T> g;
        g.table_rows = 9;
        g.d_model = width;
        g.rows = {2, 5, 8};
        g.values = RowMatrix<T>::Constant(3, width, T(0.5));
        g.values(0, 0) = std::numeric_limits<T>::max();
        g.values(1, width - 1) = -std::numeric_limits<T>::max();
        g.values(2, 0) = std::numeric_limits<T>::denorm_min();
        g.values(0, width / 2) = T(-0.0);
        for_each_isa([&](seqembed::Isa) {
            seqembed::optim::LazySgd<T> sgd("embedding", 9, width);
            RowMatrix<T> weights = RowMatrix<T>::Zero(9, width);
            sgd.step(weights, g, 0.0);
            for (Index c = 0; c < width; ++c)
                for (const T bad_value : bad_values) {
                    CAPTURE(width, c, bad_value);
                    RowGradient<T> bad = g;
                    bad.values(2, c) = bad_value;
                    CHECK_THROWS_WITH(sgd.step(weights, bad, 0.1),
                                      Catch::Matchers::Contains("row 8, column " + std::to_string(c) + " is"));
                }
            // The dense scan, over the rows of a table-shaped gradient.
            seqembed::optim::Sgd<T> dense("positions", 3, width);
            RowMatrix<T> small = RowMatrix<T>::Zero(3, width);
            dense.step(small, g.values, 0.0);
            for (Index c = 0; c < width; ++c)
                for (const T bad_value : bad_values) {
                    CAPTURE(width, c, bad_value);
                    RowMatrix<T> bad = g.values;
                    bad(1, c) = bad_value;
                    CHECK_THROWS_WITH(dense.step(small, bad, 0.1),
                                      Catch::Matchers::Contains("row 1, column " + std::to_string(c) + " is"));
                }
        });
    }
}

TEST_CASE("An optimizer step checks everything before it writes", "[optim][bad-input]") {
    RowMatrix<float> weights = RowMatrix<float>::Ones(4, 3);
    RowGradient<float> g;
    g.table_rows = 4;
    g.d_model = 3;
    g.rows = {1, 3};
    g.values = RowMatrix<float>::Ones(2, 3);
    seqembed::optim::SparseAdam<float> adam("token table", 4, 3);
    adam.step(weights, g, 0.1);
    const RowMatrix<float> after_one = weights;
    const RowMatrix<float> moment = adam.exp_avg();

    RowGradient<float> bad = g;
    bad.values(1, 2) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(adam.step(weights, bad, 0.1),
                      Catch::Matchers::Contains("token table") && Catch::Matchers::Contains("row 3, column 2"));
    bad = g;
    bad.rows = {3, 1};
    CHECK_THROWS_AS(adam.step(weights, bad, 0.1), seqembed::value_error);
    bad.rows = {1, 4};
    CHECK_THROWS_AS(adam.step(weights, bad, 0.1), seqembed::index_error);
    CHECK_THROWS_WITH(adam.step(weights, g, -0.1), Catch::Matchers::Contains("learning rate"));
    CHECK_THROWS_AS(adam.step(weights, g, std::numeric_limits<double>::infinity()), seqembed::value_error);
    RowMatrix<float> other = RowMatrix<float>::Ones(5, 3);
    CHECK_THROWS_AS(adam.step(other, g, 0.1), seqembed::shape_error);
    // Nothing changed: not the weights, the moments or the step count.
    CHECK(weights == after_one);
    CHECK(adam.exp_avg() == moment);
    CHECK(adam.steps() == 1);

    // With check_finite off, NaN propagates as in PyTorch.
    seqembed::optim::SgdOptions unchecked;
    unchecked.check_finite = false;
    seqembed::optim::Sgd<float> sgd("positions", 4, 3, unchecked);
    RowMatrix<float> nan_gradient = RowMatrix<float>::Zero(4, 3);
    nan_gradient(2, 1) = std::numeric_limits<float>::quiet_NaN();
    sgd.step(weights, nan_gradient, 0.1);
    CHECK(std::isnan(weights(2, 1)));
    CHECK(weights(0, 0) == after_one(0, 0));

    seqembed::optim::SgdOptions nesterov;
    nesterov.nesterov = true;
    CHECK_THROWS_AS(seqembed::optim::Sgd<float>("t", 4, 3, nesterov), seqembed::value_error);
    seqembed::optim::AdamOptions betas;
    betas.beta1 = 1.0;
    CHECK_THROWS_AS(seqembed::optim::Adam<float>("t", 4, 3, betas), seqembed::value_error);
    CHECK_THROWS_AS(seqembed::optim::RowwiseAdagrad<float>("t", 0, 3), seqembed::value_error);
}

TEST_CASE("Lazy optimizers leave the rows a gradient does not list as they were", "[optim]") {
    RowMatrix<double> weights = RowMatrix<double>::Constant(5, 2, 3.0);
    RowGradient<double> g;
    g.table_rows = 5;
    g.d_model = 2;
    g.rows = {2};
    g.values = RowMatrix<double>::Constant(1, 2, 1.0);
    seqembed::optim::SgdOptions momentum;
    momentum.momentum = 0.9;
    momentum.weight_decay = 0.1;
    seqembed::optim::LazySgd<double> lazy("t", 5, 2, momentum);
    seqembed::optim::RowwiseAdagrad<double> adagrad("t", 5, 2);
    seqembed::optim::SparseAdam<double> adam("t", 5, 2);
    for (int s = 0; s < 3; ++s) {
        RowMatrix<double> a = weights, b = weights, c = weights;
        lazy.step(a, g, 0.1);
        adagrad.step(b, g, 0.1);
        adam.step(c, g, 0.1);
        for (const RowMatrix<double>* m : {&a, &b, &c}) {
            CHECK((m->row(2).array() != 3.0).all());
            CHECK((m->topRows(2).array() == 3.0).all());
            CHECK((m->bottomRows(2).array() == 3.0).all());
        }
    }
    CHECK(lazy.has_buffer(2));
    CHECK(!lazy.has_buffer(1));
    CHECK(adagrad.accumulators()[0] == 0.0);
    CHECK(adagrad.accumulators()[2] == 3.0);  // mean of 1^2 over the row, three times
}

namespace {

// The ISA tests' table (6 x 37: a width that is no multiple of a vector) after three calls of
// step(weights, gradient), each gradient listing rows 1, 3 and 4.
template <typename Scalar, typename Step>
seqembed::RowMatrix<Scalar> after_three_steps(const Step& step) {
    const seqembed::Index rows = 6, cols = 37;
    seqembed::RowMatrix<Scalar> weights(rows, cols);
    for (seqembed::Index k = 0; k < weights.size(); ++k)
        weights.data()[k] = static_cast<Scalar>(std::sin(0.37 * static_cast<double>(k)));
    for (int at = 0; at < 3; ++at) {
        seqembed::RowGradient<Scalar> gradient;
        gradient.table_rows = rows;
        gradient.d_model = cols;
        gradient.rows = {1, 3, 4};
        gradient.values.resize(3, cols);
        for (seqembed::Index k = 0; k < gradient.values.size(); ++k)
            gradient.values.data()[k] = static_cast<Scalar>(std::cos(1.3 * static_cast<double>(k + 7 * at)));
        step(weights, gradient);
    }
    return weights;
}

// SparseAdam's rows after three steps with the ISA in force (the last lanes loaded and stored
// masked), with or without maximize.
template <typename Scalar>
seqembed::RowMatrix<Scalar> sparse_adam_after_steps(bool maximize) {
    seqembed::optim::SparseAdamOptions options;
    options.maximize = maximize;
    seqembed::optim::SparseAdam<Scalar> adam("t", 6, 37, options);
    return after_three_steps<Scalar>([&](auto& weights, const auto& gradient) { adam.step(weights, gradient, 0.05); });
}

// LazySgd's table (listed rows only) and Sgd's (every row, rows not listed a zero gradient) after
// three steps with the ISA in force: the first sets the momentum buffers, the next two use them.
template <typename Scalar>
std::pair<seqembed::RowMatrix<Scalar>, seqembed::RowMatrix<Scalar>> sgd_after_steps(
    const seqembed::optim::SgdOptions& options) {
    seqembed::optim::LazySgd<Scalar> lazy("t", 6, 37, options);
    seqembed::optim::Sgd<Scalar> dense("t", 6, 37, options);
    return {after_three_steps<Scalar>([&](auto& weights, const auto& gradient) { lazy.step(weights, gradient, 0.05); }),
            after_three_steps<Scalar>([&](auto& weights, const auto& gradient) { dense.step(weights, gradient, 0.05); })};
}

// RowwiseAdagrad's table after three steps with the ISA in force (two blocks of 16 partial sums,
// then 5 values).
template <typename Scalar>
seqembed::RowMatrix<Scalar> rowwise_adagrad_after_steps(seqembed::optim::WeightDecayMode mode) {
    seqembed::optim::RowwiseAdagradOptions options;
    options.weight_decay = mode == seqembed::optim::WeightDecayMode::none ? 0.0 : 0.03;
    options.weight_decay_mode = mode;
    seqembed::optim::RowwiseAdagrad<Scalar> adagrad("t", 6, 37, options);
    return after_three_steps<Scalar>(
        [&](auto& weights, const auto& gradient) { adagrad.step(weights, gradient, 0.05); });
}

// Adam's (or AdamW's) table after three steps over every row with the ISA in force (rows not
// listed a zero gradient).
template <typename Scalar, bool Decoupled>
seqembed::RowMatrix<Scalar> dense_adam_after_steps(const seqembed::optim::AdamOptions& options) {
    seqembed::optim::BasicAdam<Scalar, Decoupled> adam("t", 6, 37, options);
    return after_three_steps<Scalar>(
        [&](auto& weights, const auto& gradient) { adam.step(weights, gradient, 0.05); });
}

}  // namespace

TEST_CASE("Adam's and AdamW's row step gives the scalar ISA's bits on every ISA", "[optim][isa]") {
    using seqembed::optim::AdamOptions;
    // beta1, beta2, eps, weight decay, AMSGrad, maximize
    const std::vector<AdamOptions> cases = {{0.9, 0.999, 1e-8, 0.0, false, false, true},
                                            {0.8, 0.99, 1e-6, 0.02, true, false, true},
                                            {0.9, 0.999, 1e-8, 0.01, false, true, true}};
    for (const AdamOptions& options : cases) {
        INFO("weight decay " << options.weight_decay << ", AMSGrad " << options.amsgrad << ", maximize "
                             << options.maximize);
        std::vector<seqembed::RowMatrix<float>> adam;
        std::vector<seqembed::RowMatrix<double>> adamw;
        for_each_isa([&](seqembed::Isa) {
            adam.push_back(dense_adam_after_steps<float, false>(options));
            adamw.push_back(dense_adam_after_steps<double, true>(options));
        });
        REQUIRE(!adam.empty());
        for (const auto& other : adam) CHECK(other == adam.front());
        for (const auto& other : adamw) CHECK(other == adamw.front());
    }
}

TEST_CASE("RowwiseAdagrad's row step gives the scalar ISA's bits on every ISA", "[optim][isa]") {
    using seqembed::optim::WeightDecayMode;
    for (const WeightDecayMode mode : {WeightDecayMode::none, WeightDecayMode::l2, WeightDecayMode::decoupled}) {
        INFO("weight decay mode " << static_cast<int>(mode));
        std::vector<seqembed::RowMatrix<float>> floats;
        std::vector<seqembed::RowMatrix<double>> doubles;
        for_each_isa([&](seqembed::Isa) {
            floats.push_back(rowwise_adagrad_after_steps<float>(mode));
            doubles.push_back(rowwise_adagrad_after_steps<double>(mode));
        });
        REQUIRE(!floats.empty());
        for (const auto& other : floats) CHECK(other == floats.front());
        for (const auto& other : doubles) CHECK(other == doubles.front());
        CHECK(floats.front().row(0) == rowwise_adagrad_after_steps<float>(WeightDecayMode::none).row(0));
        if (mode != WeightDecayMode::none)
            CHECK(floats.front().row(1) != rowwise_adagrad_after_steps<float>(WeightDecayMode::none).row(1));
    }
}

TEST_CASE("LazySgd's and Sgd's row step gives the scalar ISA's bits on every ISA", "[optim][isa]") {
    using seqembed::optim::SgdOptions;
    // momentum, dampening, weight decay, Nesterov, maximize
    const std::vector<SgdOptions> cases = {{0.0, 0.0, 0.0, false, false, true},
                                           {0.9, 0.0, 0.0, false, false, true},
                                           {0.9, 0.3, 0.01, false, true, true},
                                           {0.8, 0.0, 0.02, true, false, true},
                                           {0.0, 0.0, 0.05, false, true, true}};
    for (const SgdOptions& options : cases) {
        INFO("momentum " << options.momentum << ", dampening " << options.dampening << ", weight decay "
                         << options.weight_decay << ", Nesterov " << options.nesterov << ", maximize "
                         << options.maximize);
        std::vector<std::pair<seqembed::RowMatrix<float>, seqembed::RowMatrix<float>>> floats;
        std::vector<std::pair<seqembed::RowMatrix<double>, seqembed::RowMatrix<double>>> doubles;
        for_each_isa([&](seqembed::Isa) {
            floats.push_back(sgd_after_steps<float>(options));
            doubles.push_back(sgd_after_steps<double>(options));
        });
        REQUIRE(!floats.empty());
        for (const auto& other : floats) {
            CHECK(other.first == floats.front().first);
            CHECK(other.second == floats.front().second);
        }
        for (const auto& other : doubles) {
            CHECK(other.first == doubles.front().first);
            CHECK(other.second == doubles.front().second);
        }
        // Listed rows are the same for both; LazySgd leaves the others, Sgd moves them only
        // through momentum or weight decay.
        const auto& [lazy, dense] = doubles.front();
        CHECK(lazy.row(1) == dense.row(1));
        const bool moves_unlisted = options.weight_decay != 0.0;
        CHECK((lazy.row(0) != dense.row(0)) == moves_unlisted);
    }
}

TEST_CASE("SparseAdam's row step gives the scalar ISA's bits on every ISA", "[optim][isa]") {
    for (const bool maximize : {false, true}) {
        std::vector<seqembed::RowMatrix<float>> floats;
        std::vector<seqembed::RowMatrix<double>> doubles;
        for_each_isa([&](seqembed::Isa) {
            floats.push_back(sparse_adam_after_steps<float>(maximize));
            doubles.push_back(sparse_adam_after_steps<double>(maximize));
        });
        REQUIRE(!floats.empty());
        for (const auto& other : floats) CHECK(other == floats.front());
        for (const auto& other : doubles) CHECK(other == doubles.front());
        CHECK(floats.front().row(0) == sparse_adam_after_steps<float>(!maximize).row(0));  // rows never listed
        CHECK(floats.front().row(1) != sparse_adam_after_steps<float>(!maximize).row(1));
    }
}
