# What an installed Crucible needs beside its programs (app/ and core/tcl/ install those): the
# bundled examples and tasks (bin/../share/crucible/resources, where the workbench and
# `crucible tasks` look), the pinned Python requirements and crucible-setup-python, which makes
# the worker's environment from them in the user's data folder, the desktop entry and its icon.
# The reward presets and prompt templates are compiled in and not installed.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/examples ${CMAKE_SOURCE_DIR}/resources/tasks
        DESTINATION share/crucible/resources
        PATTERN "__pycache__" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/requirements.txt DESTINATION share/crucible)
install(PROGRAMS ${CMAKE_CURRENT_LIST_DIR}/crucible-setup-python DESTINATION bin)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/crucible.desktop DESTINATION share/applications)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/crucible.svg
        DESTINATION share/icons/hicolor/scalable/apps)
