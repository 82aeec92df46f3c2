# Fortran-symbol wrappers of libmpiscope (docs/fortran.md), generated from the
# same function list as the C wrappers. Included by runtime/CMakeLists.txt
# after it defines the target `mpiscope`.
#
# Which symbols are wrapped depends on the MPI's own Fortran layer, so the
# generator is told MPISCOPE_IMPL (openmpi or mpich); another MPI gets no
# Fortran wrappers and a message saying so (its Fortran calls may go uncounted).
set(_mpiscope_fdir ${CMAKE_CURRENT_LIST_DIR})
if(MPISCOPE_IMPL STREQUAL "openmpi" OR MPISCOPE_IMPL STREQUAL "mpich")
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  file(GLOB _mpiscope_flist CONFIGURE_DEPENDS ${_mpiscope_fdir}/../wrappers/functions.*)
  set(_mpiscope_fgen ${CMAKE_CURRENT_BINARY_DIR}/fortran_wrappers.c)
  set(_mpiscope_fsyms ${CMAKE_CURRENT_BINARY_DIR}/fortran_symbols.txt)
  add_custom_command(
    OUTPUT ${_mpiscope_fgen} ${_mpiscope_fsyms}
    COMMAND ${Python3_EXECUTABLE} ${_mpiscope_fdir}/gen_fortran.py
            --impl ${MPISCOPE_IMPL} --list ${_mpiscope_fdir}/../wrappers/functions.py
            --out ${_mpiscope_fgen} --symbols ${_mpiscope_fsyms}
            --mpicc ${CMAKE_C_COMPILER}
    DEPENDS ${_mpiscope_fdir}/gen_fortran.py ${_mpiscope_flist}
    COMMENT "mpiscope: generating Fortran wrappers for ${MPISCOPE_IMPL}"
    VERBATIM)
  foreach(_mpiscope_ftarget mpiscope mpiscope_static)
    if(TARGET ${_mpiscope_ftarget})
      target_sources(${_mpiscope_ftarget} PRIVATE ${_mpiscope_fgen}
                     ${_mpiscope_fdir}/fortran_pcontrol.c)
      target_include_directories(${_mpiscope_ftarget} PRIVATE ${_mpiscope_fdir})
    endif()
  endforeach()
  install(FILES ${_mpiscope_fsyms} DESTINATION share/mpiscope)
else()
  message(STATUS "mpiscope: no Fortran wrappers for MPI '${MPISCOPE_IMPL}' "
                 "(only openmpi and mpich are known); see docs/fortran.md")
endif()
