# Every dependency is a Debian package (scripts/install-deps.sh installs them) or, on the GPU machine,
# its Ubuntu 24.04 equivalent. Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04) are both accepted.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(Boost REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(PNG REQUIRED)  # libpng-dev: the heat map pictures (app/png_image.cpp)
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(PODCHECK_CBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas /usr/include/x86_64-linux-gnu
  REQUIRED)

# One imported target per dependency so that module CMakeLists stay short.
add_library(podcheck_hdf5 INTERFACE)
target_include_directories(podcheck_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(podcheck_hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
target_compile_definitions(podcheck_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} H5_USE_110_API)
add_library(podcheck::hdf5 ALIAS podcheck_hdf5)

add_library(podcheck_blas INTERFACE)
target_include_directories(podcheck_blas SYSTEM INTERFACE ${PODCHECK_CBLAS_INCLUDE_DIR})
target_link_libraries(podcheck_blas INTERFACE ${BLAS_LIBRARIES})
add_library(podcheck::blas ALIAS podcheck_blas)

set(PODCHECK_HAVE_CUDA OFF)
if(PODCHECK_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      # sm_80 and sm_90a machine code (Hopper's wgmma prefill path, kernels/pod/wgmma_sm90.cuh) plus compute_90
      # PTX for later GPUs (mma.sync paths only). CMake's CUDAARCHS environment variable, where set, chooses
      # instead (CI, which has no GPU, compiles sm_90a alone: .ci/run says why).
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90a-real 90-virtual)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PODCHECK_HAVE_CUDA ON)
  else()
    message(STATUS "podcheck: nvcc not found; kernels/ is not built (GPU tests are reported as skipped)")
  endif()
endif()

# Common warnings for our own targets (not global flags).
function(podcheck_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
    if(PODCHECK_WERROR)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()
