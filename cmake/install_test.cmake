# CTest install_example (cmake -P): `cmake --install` into PREFIX, build examples/ against the installed package,
# run the program and compare its kernel with the installed command's; then the installed command's fit-params
# (its Ceres module from lib/ropekit) from another directory through a symlink, as a user's ~/.local/bin link.
# Arguments: -DBUILD=<build dir> -DSOURCE=<source dir> -DPREFIX=<scratch prefix>.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${BUILD}/install-test-cwd)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${BUILD}/install-test-example ${BUILD}/install-test-cwd)
file(MAKE_DIRECTORY ${BUILD}/install-test-cwd)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
foreach(f bin/ropekit lib/cmake/ropekit/ropekitConfig.cmake include/ropekit/ropekit/encoding.hpp
          include/ropekit/ropekit/version.hpp include/ropekit/targets/target.hpp)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE}/examples -B ${BUILD}/install-test-example -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${BUILD}/install-test-example)
run(${BUILD}/install-test-example/kernel_example)
set(example "${out}")
# The installed command's kernel at lag 1000 (CSV: encoding,lag,kernel,...) must be the example's line "1000 <k>".
set(spelling "rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)")
run(${PREFIX}/bin/ropekit kernel --encoding ${spelling} --lags 1000 --format csv)
string(REGEX MATCH ",1000,([^,]+)," m "${out}")
if(NOT m OR NOT example MATCHES "\n1000 ${CMAKE_MATCH_1}\n")
  message(FATAL_ERROR "the example printed\n${example}\nthe installed command\n${out}")
endif()
file(CREATE_LINK ${PREFIX}/bin/ropekit ${BUILD}/install-test-cwd/rk SYMBOLIC)
run(${BUILD}/install-test-cwd/rk fit-params --encoding damped:dim=16,base=100,gamma=1e-4 --free gamma
    --target kernel:damped:dim=16,base=100,gamma=3e-3)
if(NOT out MATCHES "CONVERGENCE")
  message(FATAL_ERROR "fit-params through a symlink of the installed command printed\n${out}")
endif()
message(STATUS "installed, example built and run, fit-params through a symlink: ok")
