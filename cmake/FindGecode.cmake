# FindGecode: the Gecode constraint solver (Debian: libgecode-dev), which ships no CMake config.
# Defines Gecode_FOUND, Gecode_VERSION and the imported target Gecode::Gecode (the int, search,
# minimodel, kernel and support libraries the task synthesizer uses).

find_path(Gecode_INCLUDE_DIR gecode/kernel.hh)
set(_gecode_components minimodel int search kernel support)
set(_gecode_libraries)
foreach(c IN LISTS _gecode_components)
  find_library(Gecode_${c}_LIBRARY NAMES gecode${c})
  mark_as_advanced(Gecode_${c}_LIBRARY)
  list(APPEND _gecode_libraries Gecode_${c}_LIBRARY)
endforeach()

if(Gecode_INCLUDE_DIR AND EXISTS "${Gecode_INCLUDE_DIR}/gecode/support/config.hpp")
  file(STRINGS "${Gecode_INCLUDE_DIR}/gecode/support/config.hpp" _gecode_version_line
       REGEX "^#define GECODE_VERSION \"[0-9.]+\"")
  string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" Gecode_VERSION "${_gecode_version_line}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Gecode
  REQUIRED_VARS Gecode_INCLUDE_DIR ${_gecode_libraries}
  VERSION_VAR Gecode_VERSION)
mark_as_advanced(Gecode_INCLUDE_DIR)

if(Gecode_FOUND AND NOT TARGET Gecode::Gecode)
  add_library(Gecode::Gecode INTERFACE IMPORTED)
  set_target_properties(Gecode::Gecode PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Gecode_INCLUDE_DIR}")
  foreach(c IN LISTS _gecode_components)
    target_link_libraries(Gecode::Gecode INTERFACE "${Gecode_${c}_LIBRARY}")
  endforeach()
endif()
