# Runs one libFuzzer target for SECONDS on a scratch copy of its committed corpus; any crash,
# leak or sanitizer report fails the test.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${CORPUS}/ DESTINATION ${WORK})
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=1024 -print_final_stats=1
    -artifact_prefix=${WORK}/ ${WORK}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a problem (exit ${result}); the input is in ${WORK}/")
endif()
