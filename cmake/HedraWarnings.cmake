# Warnings and sanitizers, applied to hedra's own targets through hedra_options.
add_library(hedra_options INTERFACE)
target_compile_options(hedra_options INTERFACE -Wall -Wextra)
if(HEDRA_SANITIZE)
  target_compile_options(hedra_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(hedra_options INTERFACE -fsanitize=address,undefined)
endif()
if(HEDRA_TSAN)
  target_compile_options(hedra_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(hedra_options INTERFACE -fsanitize=thread)
endif()
