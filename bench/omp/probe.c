/*
 * omp/probe.c - configure-time check that clang can build and link an
 * OpenMP program (libomp present); bench/meson.build compiles it only.
 * Invariants and concurrency: none.
 */
#include <omp.h>

int main(void)
{
	return omp_get_max_threads() > 0 ? 0 : 1;
}
