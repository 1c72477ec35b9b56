# The warnings every consumer program is compiled with (GCC and Clang; MSVC gets none of them),
# read by common.cmake for the consumer projects and by run_consumer.cmake for the builds from
# pkg-config's flags alone. Stricter than seqembed's own targets (seqembed_strict): a user's
# project may turn on any of these, and seqembed's headers must not be the reason a -Werror build
# fails, unless they are marked as system headers.
set(SEQEMBED_CONSUMER_STRICT_FLAGS
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
  -Wdouble-promotion -Wcast-align -Wundef -Werror)
