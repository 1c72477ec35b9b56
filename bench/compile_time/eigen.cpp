// bench/compile_time.sh: a small Eigen program, the yardstick.
#include <Eigen/Dense>
#include <cstdio>
int main() {
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(64, 64), b = Eigen::MatrixXf::Random(64, 64);
    Eigen::MatrixXf c = a * b + a.transpose();
    std::printf("%g\n", static_cast<double>(c.rowwise().norm().sum()));
}
