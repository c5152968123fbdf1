# `cpack --config build/CPackConfig.cmake` makes crucible_<version>_<arch>.deb for Debian 12:
# the CLI, the workbench, the worker, the OpenCL compiler's library, the bundled resources, the
# desktop entry and icon (packaging/install.cmake). scripts/check_deb.sh builds and checks it.
# crucible-model (component `model`) stays out: it links the libtorch of a pip wheel, which no
# Debian package provides.
set(CPACK_PACKAGE_NAME "crucible")
set(CPACK_PACKAGE_CONTACT "Crucible developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "A desktop workbench (crucible-gui) and CLI (crucible) that verify and profile Triton\n"
  "kernels written for PyTorch reference modules. Candidate code runs only in a sandboxed\n"
  "Python worker, whose environment (torch, triton) crucible-setup-python makes.")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# The programs and the library: dpkg-shlibdeps names the packages of what they link (Qt 6,
# QScintilla, SQLite, libcurl, Gecode, the OpenCL ICD loader). What they only run or load is
# named here: the worker's interpreter and venv, the sandbox, and the OpenCL driver.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-venv, bubblewrap, pocl-opencl-icd")
# torch.compile's CPU baseline builds C++ against Python's headers; without them the baseline is
# timed eager only, with the reason recorded.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, python3-dev")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
# Only the components without a name: everything but crucible-model.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
set(CPACK_GENERATOR "DEB")
include(CPack)
