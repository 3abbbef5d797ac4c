// Include first in a .cpp whose arithmetic emulates another program's roundings: every a * b + c is then two
// roundings, as in torch (one kernel per tensor op) and ggml's scalar code. Without it, -march=native lets GCC fuse
// them into FMAs (one rounding) and the float32 emulation of the scaling schemes drifts by an ulp. Not a header to
// include from other headers: the pragma holds for the rest of the translation unit.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
