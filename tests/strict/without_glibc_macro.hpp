// Forced first (-include): the C library is glibc, but seqembed must not rely on knowing it.
#include <cstdlib>
#undef __GLIBC__
