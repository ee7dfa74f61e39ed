/**
 * Java against C: {@link io.rdma4j.benchmarks.DataPathBenchmark} in the lab on rxe0 beside {@code datapath.c}, and
 * {@link io.rdma4j.benchmarks.HostDataPathBenchmark} on the host through the stub provider beside
 * {@code stub-loops.c} ({@link io.rdma4j.benchmarks.HostBench}, {@code benchmarks/host-bench}).
 */
package io.rdma4j.benchmarks;
