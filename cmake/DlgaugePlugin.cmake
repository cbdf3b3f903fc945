# dlg_add_plugin(<target> SOURCES <files...> [LIBS <libs...>])
# Builds a dlgauge plugin: a MODULE library with hidden visibility (only the
# entry symbol is exported), no "lib" prefix, placed where dlgauge finds it.
function(dlg_add_plugin target)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DLG_PLUGIN_OUTPUT_DIR) # in dlgauge's own tree: beside the other plugins
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DLG_PLUGIN_OUTPUT_DIR})
  endif()
  if(TARGET dlgauge_sdk)
    target_link_libraries(${target} PRIVATE dlgauge_sdk)
  elseif(TARGET dlgauge::sdk)
    target_link_libraries(${target} PRIVATE dlgauge::sdk)
  endif()
  if(P_LIBS)
    target_link_libraries(${target} PRIVATE ${P_LIBS})
  endif()
  # Unresolved symbols are load-time errors we want at link time instead;
  # the static libraries a plugin links (the nn engine, data formats) stay
  # inside it: their symbols are not exported beside the entry point.
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL)
  if(DLG_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${DLG_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
