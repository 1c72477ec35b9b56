# seqembed_mpi_launcher(<flags variable> <environment variable>): what the tests and examples
# give MPI's launcher (MPIEXEC_EXECUTABLE) beside its rank count. For Open MPI's: more ranks than
# cores (--oversubscribe, on a 2-core machine), running as root in CI's containers (its two
# OMPI_ALLOW_RUN_AS_ROOT variables), and the shared-memory transport's single-copy mechanism off
# (it needs ptrace rights a container may lack). The ranks on this machine inherit the
# launcher's environment (SEQEMBED_ISA among it).
function(seqembed_mpi_launcher flags_variable environment_variable)
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version OUTPUT_VARIABLE _version ERROR_QUIET)
  set(_flags "")
  set(_environment "")
  if(_version MATCHES "Open MPI|OpenRTE")
    set(_flags --oversubscribe)
    set(_environment OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                     OMPI_MCA_btl_vader_single_copy_mechanism=none)
  endif()
  set(${flags_variable} ${_flags} ${MPIEXEC_PREFLAGS} PARENT_SCOPE)
  set(${environment_variable} ${_environment} PARENT_SCOPE)
endfunction()
