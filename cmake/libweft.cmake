# libweft (shared and static) from the layers' objects, and the install tree:
#   bin/weft, lib/libweft.so*, lib/libweft.a, include/weft/ (include/weft/lua/ holds
#   lua.h, lauxlib.h, lualib.h, luaconf.h, lua.hpp), lib/cmake/Weft/ (Weft::lua,
#   Weft::weft), lib/pkgconfig/weft.pc, share/man/man1/weft.1.
# The layers are compiled once, position-independent with hidden visibility (top-level
# CMakeLists.txt): the executable, libweft.a and libweft.so share those objects, and
# cmake/weft.map decides what the executable and libweft.so export.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WEFT_LAYER_OBJECTS)
foreach(layer weft_frontend weft_gc weft_vm weft_sched weft_runtime weft_capi weft_embed)
  if(TARGET ${layer})
    get_target_property(type ${layer} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND WEFT_LAYER_OBJECTS $<TARGET_OBJECTS:${layer}>)
    endif()
  endif()
endforeach()

set(WEFT_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/weft.map)
# The C API's definitions are the only ones that must be visible to the linker's export
# map; whatever else weft_capi defines, the map keeps local.
if(TARGET weft_capi)
  set_target_properties(weft_capi PROPERTIES CXX_VISIBILITY_PRESET default)
endif()

add_library(weft_shared SHARED ${WEFT_LAYER_OBJECTS})
add_library(weft_static STATIC ${WEFT_LAYER_OBJECTS})
foreach(lib weft_shared weft_static)
  set_target_properties(${lib} PROPERTIES OUTPUT_NAME weft EXPORT_NAME lib${lib})
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${lib} PRIVATE mimalloc Threads::Threads ${CMAKE_DL_LIBS})
endforeach()
set_target_properties(weft_shared PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                                             LINK_DEPENDS ${WEFT_EXPORT_MAP})
target_link_options(weft_shared PRIVATE -Wl,--version-script=${WEFT_EXPORT_MAP})
# Every symbol resolved at link time; clang's sanitizers leave theirs to the executable.
if(NOT WEFT_SANITIZE AND NOT WEFT_TSAN AND NOT WEFT_FUZZ)
  target_link_options(weft_shared PRIVATE -Wl,--no-undefined)
endif()

# The C API (Weft::lua: `#include <lua.h>`) and the C++ API (Weft::weft:
# `#include <weft/weft.hpp>`), each over either library.
foreach(kind shared static)
  set(suffix)
  if(kind STREQUAL "static")
    set(suffix _static)
  endif()
  add_library(weft_lua_api${suffix} INTERFACE)
  set_target_properties(weft_lua_api${suffix} PROPERTIES EXPORT_NAME lua${suffix})
  target_include_directories(weft_lua_api${suffix} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include/weft/lua>
                                                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/weft/lua>)
  target_link_libraries(weft_lua_api${suffix} INTERFACE weft_${kind})
  add_library(weft_cxx_api${suffix} INTERFACE)
  set_target_properties(weft_cxx_api${suffix} PROPERTIES EXPORT_NAME weft${suffix})
  target_compile_features(weft_cxx_api${suffix} INTERFACE cxx_std_20)
  target_link_libraries(weft_cxx_api${suffix} INTERFACE weft_${kind})
endforeach()

set(WEFT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)
install(TARGETS weft_shared weft_static weft_lua_api weft_lua_api_static weft_cxx_api weft_cxx_api_static
        EXPORT WeftTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT WeftTargets NAMESPACE Weft:: DESTINATION ${WEFT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/WeftConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/WeftConfig.cmake INSTALL_DESTINATION ${WEFT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/WeftConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/WeftConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/WeftConfigVersion.cmake
        DESTINATION ${WEFT_CMAKE_DIR})

# weft.pc is configured at install time, so its prefix is the one given to `cmake --install`.
install(CODE "
  set(PROJECT_VERSION ${PROJECT_VERSION})
  set(CMAKE_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(CMAKE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/weft.pc.in ${CMAKE_CURRENT_BINARY_DIR}/weft.pc @ONLY)")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET weft)
  install(TARGETS weft RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/docs/weft.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
