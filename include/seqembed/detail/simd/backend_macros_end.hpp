// detail/simd/backend_macros_end.hpp: the end of backend_macros.hpp's macros (no #pragma once,
// by design: see there).
#undef SEQEMBED_DETAIL_X86_KERNELS
#undef SEQEMBED_DETAIL_AVX512_KERNELS
#undef SEQEMBED_DETAIL_NEON_KERNELS
