/**
 * How llama-server is built on node-llama-cpp's prebuilt libraries: a small CMake project configures
 * the bundled llama.cpp tree as usual, then points the server's targets at the prebuilt `libllama`,
 * `libllama-common`, `libggml` and `libggml-base` instead of the tree's own. Only the server, the
 * multimodal library (`mtmd`) and a few vendored helpers are compiled (about 70 steps of the tree's
 * 300); no ggml backend is compiled, because ggml loads node-llama-cpp's CPU-variant and GPU
 * modules at run time.
 */
import type { PrebuiltLibraries } from './prebuilt.js';

/** Bumped when the recipe changes, so a cached build made by an older recipe is rebuilt. */
export const RECIPE_VERSION = 1;

export const WRAPPER_CMAKE = `cmake_minimum_required(VERSION 3.14)
project(hearth-llama-server C CXX)
find_package(Threads REQUIRED)

# The llama.cpp tree, configured as usual; the server's targets are re-pointed below.
add_subdirectory(\${HEARTH_LLAMA_SOURCE} llama.cpp)

set(HEARTH_PREBUILT_llama "\${HEARTH_PREBUILT_DIR}/\${HEARTH_LIB_llama}")
set(HEARTH_PREBUILT_ggml "\${HEARTH_PREBUILT_DIR}/\${HEARTH_LIB_ggml}")
set(HEARTH_PREBUILT_ggml-base "\${HEARTH_PREBUILT_DIR}/\${HEARTH_LIB_ggml_base}")
set(HEARTH_PREBUILT_llama-common "\${HEARTH_PREBUILT_DIR}/\${HEARTH_LIB_llama_common}")
set(HEARTH_REPLACED llama ggml ggml-base llama-common)

function(hearth_replace_list out)
  set(result "")
  foreach(item IN LISTS ARGN)
    foreach(name IN LISTS HEARTH_REPLACED)
      if(item STREQUAL name)
        set(item "hearth-prebuilt-\${name}")
      elseif(item STREQUAL "$<LINK_ONLY:\${name}>")
        set(item "$<LINK_ONLY:hearth-prebuilt-\${name}>")
      endif()
    endforeach()
    list(APPEND result "\${item}")
  endforeach()
  set(\${out} "\${result}" PARENT_SCOPE)
endfunction()

# One interface target per prebuilt library: the tree target's headers and definitions, the
# prebuilt file to link, and of its own links only the other prebuilt libraries and header-only
# vendored code (the prebuilt file carries the rest).
foreach(name IN LISTS HEARTH_REPLACED)
  add_library(hearth-prebuilt-\${name} INTERFACE)
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_FEATURES INTERFACE_COMPILE_OPTIONS)
    get_target_property(value \${name} \${property})
    if(value)
      set_property(TARGET hearth-prebuilt-\${name} PROPERTY \${property} "\${value}")
    endif()
  endforeach()
  get_target_property(links \${name} INTERFACE_LINK_LIBRARIES)
  if(NOT links)
    set(links "")
  endif()
  set(kept "")
  foreach(item IN LISTS links)
    if(item IN_LIST HEARTH_REPLACED OR item STREQUAL "Threads::Threads")
      list(APPEND kept "\${item}")
    elseif(TARGET "\${item}")
      get_target_property(type "\${item}" TYPE)
      if(type STREQUAL "INTERFACE_LIBRARY")
        list(APPEND kept "\${item}")
      endif()
    endif()
  endforeach()
  hearth_replace_list(kept \${kept})
  set_property(TARGET hearth-prebuilt-\${name} PROPERTY INTERFACE_LINK_LIBRARIES "\${HEARTH_PREBUILT_\${name}};\${kept}")
endforeach()

foreach(target mtmd server-context llama-server-impl llama-server)
  foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(value \${target} \${property})
    if(value)
      hearth_replace_list(value \${value})
      set_property(TARGET \${target} PROPERTY \${property} "\${value}")
    endif()
  endforeach()
endforeach()
`;

/**
 * The tree's switches for llama-server alone, static (one self-contained binary): the server and
 * what it needs on; its web UI, tests, examples, curl and TLS off. Both builds use them.
 */
export const SERVER_SWITCHES = [
  '-DBUILD_SHARED_LIBS=OFF',
  '-DLLAMA_BUILD_COMMON=ON',
  '-DLLAMA_BUILD_TOOLS=ON',
  '-DLLAMA_BUILD_SERVER=ON',
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_APP=OFF',
  '-DLLAMA_CURL=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_BUILD_BORINGSSL=OFF',
];

/** The configure arguments: the tree's switches as node-llama-cpp builds its binaries, plus the server on and its web UI off. */
export function configureArguments(source: string, libraries: PrebuiltLibraries): string[] {
  return [
    '-DCMAKE_BUILD_TYPE=Release',
    // The prebuilt libraries are found through the environment at run time, not a path baked in.
    '-DCMAKE_SKIP_RPATH=ON',
    `-DHEARTH_LLAMA_SOURCE=${source}`,
    `-DHEARTH_PREBUILT_DIR=${libraries.dir}`,
    `-DHEARTH_LIB_llama=${libraries.llama}`,
    `-DHEARTH_LIB_ggml=${libraries.ggml}`,
    `-DHEARTH_LIB_ggml_base=${libraries.ggmlBase}`,
    `-DHEARTH_LIB_llama_common=${libraries.llamaCommon}`,
    // Static helpers (mtmd, the server's own libraries) make one self-contained binary.
    ...SERVER_SWITCHES,
    // Nothing of ggml is compiled; these only keep its configure step from looking for OpenMP or GPU toolkits.
    '-DGGML_NATIVE=OFF',
    '-DGGML_OPENMP=OFF',
    '-DGGML_BACKEND_DL=OFF',
    '-DGGML_CCACHE=OFF',
  ];
}
