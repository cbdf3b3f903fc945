# Installs dlgauge.pc (the SDK headers) and dlgauge-nn.pc (the engine and
# its link line) for plugins built with make, Meson or Bazel.  Their prefix
# is relative to the .pc file (${pcfiledir}), so `cmake --install --prefix P`
# and a moved prefix both work.
get_property(_dlg_have_dnnl GLOBAL PROPERTY DLG_NN_HAVE_DNNL)
set(DLG_NN_PC_LIBS "")
if(_dlg_have_dnnl)
  string(APPEND DLG_NN_PC_LIBS " -ldnnl")
  if(OpenMP_C_FLAGS)
    string(APPEND DLG_NN_PC_LIBS " ${OpenMP_C_FLAGS}")
  endif()
endif()
string(APPEND DLG_NN_PC_LIBS " -lm")
if(CMAKE_DL_LIBS)
  string(APPEND DLG_NN_PC_LIBS " -l${CMAKE_DL_LIBS}")
endif()
file(RELATIVE_PATH DLG_PC_UP /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" DLG_PC_UP "${DLG_PC_UP}")
foreach(_pc dlgauge dlgauge-nn)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
