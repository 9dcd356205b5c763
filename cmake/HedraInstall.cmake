# install() and hedraConfig.cmake, so that find_package(hedra) works for a consumer.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES hedra.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hedra)
foreach(layer core polyhedral scheduler backends ad nn distributed aot)
  install(DIRECTORY ${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hedra/${layer}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.def") # .def: X-macro tables headers include
endforeach()

install(TARGETS hedra hedra_options hedra_core hedra_polyhedral hedra_scheduler hedra_backends
                hedra_ad hedra_nn hedra_nn_io hedra_backend_common hedra_jit hedra_openmp hedra_c
                hedra_distributed hedra_aot hedra_aot_main
        EXPORT hedraTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hedra)
install(EXPORT hedraTargets NAMESPACE hedra:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hedra)

configure_package_config_file(cmake/hedraConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/hedraConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hedra)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/hedraConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hedraConfig.cmake cmake/HedraAot.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/hedraConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hedra)
