# Ahead-of-time libraries (docs/aot.md), in the build tree and in the installed package:
#   hedra_add_aot_generator(<exe> SOURCES <files>...)
#     an executable of generators (HEDRA_AOT_GENERATOR), linked with hedra::aot_main: hedra-aot
#     with those generators known. It runs at build time only; the product never links it.
#   hedra_add_aot_library(<name> GENERATOR <exe> [FUNCTION <generator>] [PARAMS k=v...]
#                         | GRAPH <file>  [TARGET openmp] [NAMESPACE <ns>])
#     runs hedra-aot at build time and gives the INTERFACE target <name>: <name>.h and
#     lib<name>.a (the generated code, compiled with the JIT's clang and flags) and libomp;
#     for TARGET cuda, the library embeds the kernels' image and opens libcuda with dlopen.
include_guard(GLOBAL)

function(hedra_add_aot_generator name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES")
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE hedra::aot_main)
endfunction()

# The file-level and target-level dependency on an executable target, imported or not.
function(_hedra_aot_depends target out)
  get_target_property(real ${target} ALIASED_TARGET)
  get_target_property(imported ${target} IMPORTED)
  if(imported)
    set(${out} $<TARGET_FILE:${target}> PARENT_SCOPE)
  elseif(real)
    set(${out} ${real} PARENT_SCOPE)
  else()
    set(${out} ${target} PARENT_SCOPE)
  endif()
endfunction()

function(hedra_add_aot_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "GENERATOR;FUNCTION;GRAPH;TARGET;NAMESPACE" "PARAMS")
  if(NOT ARG_TARGET)
    set(ARG_TARGET openmp)
  endif()
  if((ARG_GENERATOR AND ARG_GRAPH) OR (NOT ARG_GENERATOR AND NOT ARG_GRAPH))
    message(FATAL_ERROR "hedra_add_aot_library(${name}): give GENERATOR <exe> or GRAPH <file>")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.aot)
  if(ARG_GENERATOR)
    if(NOT ARG_FUNCTION)
      set(ARG_FUNCTION ${name})
    endif()
    set(command $<TARGET_FILE:${ARG_GENERATOR}> --generator ${ARG_FUNCTION})
    foreach(param IN LISTS ARG_PARAMS)
      list(APPEND command --param ${param})
    endforeach()
    _hedra_aot_depends(${ARG_GENERATOR} depends)
  else()
    get_filename_component(graph ${ARG_GRAPH} ABSOLUTE)
    set(command $<TARGET_FILE:hedra::hedra-aot> --graph ${graph})
    _hedra_aot_depends(hedra::hedra-aot depends)
    list(APPEND depends ${graph})
  endif()
  if(ARG_NAMESPACE)
    list(APPEND command --namespace ${ARG_NAMESPACE})
  endif()
  if(ARG_TARGET STREQUAL "cuda")
    set(outputs ${dir}/${name}.h ${dir}/${name}.program.cu ${dir}/${name}.cpp ${dir}/lib${name}.a)
    set(runtime ${CMAKE_DL_LIBS}) # the library opens libcuda with dlopen
  else()
    set(outputs ${dir}/${name}.h ${dir}/${name}.program.cpp ${dir}/${name}.cpp ${dir}/lib${name}.a)
    set(runtime ${HEDRA_AOT_LIBOMP})
  endif()
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${command} --name ${name} --target ${ARG_TARGET} --output-dir ${dir}
    DEPENDS ${depends} COMMENT "hedra-aot: ${name}" VERBATIM)
  add_custom_target(${name}_hedra_aot DEPENDS ${outputs})
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_hedra_aot)
  target_include_directories(${name} INTERFACE ${dir})
  target_link_libraries(${name} INTERFACE ${dir}/lib${name}.a ${runtime})
endfunction()
