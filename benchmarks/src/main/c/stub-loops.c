/*
 * The C baseline of HostDataPathBenchmark: the same seven loops, through the inline ibv_post_send and ibv_poll_cq
 * of <infiniband/verbs.h>, the registration verbs and the queue pair verbs, against stub-provider.c (linked as
 * libibverbs.so.1). Prints one line per case:
 *   c CASE NS_PER_OP
 * the median of ROUNDS rounds of ITERATIONS operations each (clock_gettime around a round, not an operation).
 *
 * Usage: stub-loops [ITERATIONS] [ROUNDS]   (default 2000000 5)
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAIN 16

static struct ibv_qp *qp;
static struct ibv_cq *cq;
static struct ibv_pd *pd;
static char buffer[4096] __attribute__((aligned(4096)));
static struct ibv_send_wr one, chain[CHAIN], signaled[CHAIN], refilled[CHAIN];
static struct ibv_sge sge, refilled_sges[CHAIN];
static struct ibv_mr *buffer_mr;
static struct ibv_wc wc[CHAIN];
static volatile uint64_t sink;

static void post(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	if (ibv_post_send(qp, wr, &bad)) {
		fprintf(stderr, "ibv_post_send failed\n");
		exit(1);
	}
}

static void post_one(void)
{
	post(&one);
}

static void post_chain(void)
{
	post(chain);
}

/* A chain of 16 filled anew, each RDMA WRITE from its own 8 bytes, as HostDataPathBenchmark.refill. */
static void refill_and_post(void)
{
	for (int i = 0; i < CHAIN; i++) {
		refilled_sges[i] = (struct ibv_sge){.addr = (uintptr_t)buffer + 8 * i, .length = 8, .lkey = buffer_mr->lkey};
		refilled[i] = (struct ibv_send_wr){.wr_id = i, .next = i + 1 < CHAIN ? &refilled[i + 1] : NULL,
						   .sg_list = &refilled_sges[i], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
						   .wr.rdma = {.remote_addr = (uintptr_t)buffer + 2048 + 8 * i,
							       .rkey = buffer_mr->rkey}};
	}
	post(refilled);
}

static void post_and_poll(void)
{
	post(signaled);
	uint64_t acc = 0;
	for (int seen = 0; seen < CHAIN;) {
		int n = ibv_poll_cq(cq, CHAIN, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "completion %s\n", ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			acc += wc[i].wr_id + wc[i].byte_len;
		}
		seen += n;
	}
	sink += acc;
}

static void register_memory(void *memory)
{
	struct ibv_mr *mr = ibv_reg_mr_iova2(pd, memory, 4096, (uintptr_t)memory, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || ibv_dereg_mr(mr)) {
		fprintf(stderr, "registration failed\n");
		exit(1);
	}
}

static void register_and_close(void)
{
	register_memory(buffer);
}

/* As allocateMemory: page-aligned, zeroed memory, registered, deregistered, freed. */
static void allocate_and_close(void)
{
	void *memory;
	if (posix_memalign(&memory, 4096, 4096)) {
		fprintf(stderr, "posix_memalign failed\n");
		exit(1);
	}
	memset(memory, 0, 4096);
	register_memory(memory);
	free(memory);
}

/* As Registration's and HostDataPathBenchmark's: an RC queue pair of 16 + 16 requests, created and destroyed. */
static void create_and_close_queue_pair(void)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp *created = ibv_create_qp(pd, &attr);
	if (!created || ibv_destroy_qp(created)) {
		fprintf(stderr, "queue pair create + destroy failed\n");
		exit(1);
	}
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void measure(const char *name, void (*op)(void), long iterations, int rounds)
{
	double ns[rounds];
	for (long i = 0; i < iterations; i++)
		op(); /* warm-up: caches and branch predictors, as JMH's warm-up does for Java */
	for (int r = 0; r < rounds; r++) {
		double start = now();
		for (long i = 0; i < iterations; i++)
			op();
		ns[r] = (now() - start) / iterations;
	}
	qsort(ns, rounds, sizeof(double), compare);
	printf("c %s %.2f\n", name, ns[rounds / 2]);
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 2000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *context = ibv_open_device(list[0]);
	pd = ibv_alloc_pd(context);
	buffer_mr = ibv_reg_mr_iova2(pd, buffer, sizeof(buffer), (uintptr_t)buffer, IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(context, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
	};
	qp = ibv_create_qp(pd, &attr);
	if (!qp || !buffer_mr) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	sge = (struct ibv_sge){.addr = (uintptr_t)buffer, .length = 8, .lkey = buffer_mr->lkey};
	one = (struct ibv_send_wr){.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				   .wr.rdma = {.remote_addr = (uintptr_t)buffer + 2048, .rkey = buffer_mr->rkey}};
	for (int i = 0; i < CHAIN; i++) {
		chain[i] = one;
		chain[i].wr_id = i;
		chain[i].next = i + 1 < CHAIN ? &chain[i + 1] : NULL;
		signaled[i] = chain[i];
		signaled[i].send_flags = IBV_SEND_SIGNALED;
		signaled[i].next = i + 1 < CHAIN ? &signaled[i + 1] : NULL;
	}
	measure("postOne", post_one, iterations, rounds);
	measure("postChainOf16", post_chain, iterations / CHAIN, rounds);
	measure("postAndPoll16", post_and_poll, iterations / CHAIN, rounds);
	measure("refillAndPost16", refill_and_post, iterations / CHAIN, rounds);
	measure("registerAndClose4K", register_and_close, iterations / CHAIN, rounds);
	measure("allocateAndClose4K", allocate_and_close, iterations / CHAIN, rounds);
	measure("createAndCloseQueuePair", create_and_close_queue_pair, iterations / CHAIN, rounds);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(buffer_mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(context);
	ibv_free_device_list(list);
	return 0;
}
