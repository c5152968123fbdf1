# One set of warnings for every target this project builds, tests included. CRUCIBLE_WERROR
# turns them into errors; the presets switch it on, so a warning fails the build and CI (pass
# -DCRUCIBLE_WERROR=OFF to build with a compiler newer than Debian 12's, whose new warnings the
# code has not met yet).
option(CRUCIBLE_WERROR "Treat compiler warnings as errors" OFF)
add_compile_options(-Wall -Wextra -Wpedantic)
if(CRUCIBLE_WERROR)
  add_compile_options(-Werror)
endif()
