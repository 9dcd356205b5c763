# Warnings and sanitizers, applied to hedra's own targets through hedra_options.
add_library(hedra_options INTERFACE)
target_compile_options(hedra_options INTERFACE -Wall -Wextra)
# g++ 12 reports false -Wrestrict positives inside std::string's operator+ at -O2 and above
# (GCC bug 105651); they are not in hedra's code.
target_compile_options(hedra_options INTERFACE $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
if(HEDRA_SANITIZE)
  target_compile_options(hedra_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(hedra_options INTERFACE -fsanitize=address,undefined)
endif()
if(HEDRA_TSAN)
  target_compile_options(hedra_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(hedra_options INTERFACE -fsanitize=thread)
endif()
