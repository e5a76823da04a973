# cmake --install build --prefix P:
#   bin/gpy                       the command-line program
#   lib/libgpy.so(.0.2, .0.2.0)   the library (not with GPY_LLVM_STATIC=ON)
#   lib/libgpy.a                  the same objects, static (+ the compiler with GPY_LLVM_STATIC=ON)
#   lib/gpy/gpy_jit.so            the kernel compiler, found relative to libgpy at run time
#   include/gpy.h                 the whole public API (no internal header)
#   lib/pkgconfig/gpy.pc          pkg-config --cflags --libs gpy
#   lib/cmake/gpy/                find_package(gpy CONFIG) → gpy::gpy
include(CMakePackageConfigHelpers)

install(TARGETS gpy_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/gpy.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(GPY_INSTALL_TARGETS gpy)
if(NOT GPY_LLVM_STATIC)
  list(APPEND GPY_INSTALL_TARGETS gpy_shared)
  install(TARGETS gpy_jit LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gpy)
endif()
install(TARGETS ${GPY_INSTALL_TARGETS} EXPORT gpyTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(GPY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpy)
install(EXPORT gpyTargets NAMESPACE gpy:: DESTINATION ${GPY_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/gpyConfig.cmake.in
  ${CMAKE_BINARY_DIR}/gpyConfig.cmake INSTALL_DESTINATION ${GPY_CMAKE_DIR})
# 0.x: a minor version may change the ABI (its soname is MAJOR.MINOR too)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gpyConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gpyConfig.cmake ${CMAKE_BINARY_DIR}/gpyConfigVersion.cmake
  DESTINATION ${GPY_CMAKE_DIR})

# pkg-config: prefix relative to the .pc file, so that a moved prefix works
file(RELATIVE_PATH GPY_PC_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" GPY_PC_PREFIX "${GPY_PC_PREFIX}")
set(GPY_PC_LIBS "")
set(GPY_PC_RPATH "-Wl,-rpath,\${libdir} ") # libgpy.so found at run time where it was linked
set(GPY_PC_LIBS_PRIVATE "-lgmp -lpcre2-8 -lm -ldl -lpthread")
if(GPY_LLVM_STATIC)
  # libgpy.a only: everything it needs goes on Libs; -u pulls the compiler in
  execute_process(COMMAND ${LLVM_TOOLS_BINARY_DIR}/llvm-config --link-static --ldflags --libs core orcjit
    nvptxcodegen nvptxdesc nvptxinfo x86codegen x86desc x86info x86asmparser passes bitreader bitwriter
    irreader linker target analysis support native
    OUTPUT_VARIABLE GPY_PC_LLVM OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" " " GPY_PC_LLVM "${GPY_PC_LLVM}")
  set(GPY_PC_RPATH "")
  set(GPY_PC_LIBS "-Wl,-u,gpy_jit_entry ${GPY_PC_LLVM} -lz -lzstd -lstdc++ ${GPY_PC_LIBS_PRIVATE}")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/gpy.pc.in ${CMAKE_BINARY_DIR}/gpy.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/gpy.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
