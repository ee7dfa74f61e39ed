/*
 * The clock of the lab benchmark's Java side: the CPU's cycle counter, read as perftest's get_cycles() reads it,
 * so that rdma4j's Perf and perftest time with the same clock. (In the lab guest System.nanoTime reads the HPET
 * through the emulator, microseconds a call; the cycle counter costs nanoseconds.)
 *
 *   gcc -O2 -shared -fPIC -o libcycles.so cycles.c
 */
#include <stdint.h>

uint64_t rdma4j_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t low, high;

	__asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
	return (uint64_t)high << 32 | low;
#elif defined(__aarch64__)
	uint64_t value;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(value));
	return value;
#else
#error "no cycle counter for this architecture (perftest's get_clock.h lists more)"
#endif
}
