// bench/compile_time.sh: the umbrella header alone.
#include <seqembed/seqembed.hpp>

int main() { return 0; }
