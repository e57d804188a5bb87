// PODCHECK_HD marks a function that host code and CUDA device code both call (__host__ __device__ under
// nvcc, nothing for a C++ compiler): fixtures' counter-based generator and kernels' FastDiv.
#pragma once

#if defined(__CUDACC__)
#define PODCHECK_HD __host__ __device__
#else
#define PODCHECK_HD
#endif
