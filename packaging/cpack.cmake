# `cpack -G DEB` from the build folder makes a .deb of the CLI and the worker.
set(CPACK_PACKAGE_NAME "crucible")
set(CPACK_PACKAGE_CONTACT "Crucible developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsqlite3-0, python3, bubblewrap")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR "DEB")
include(CPack)
