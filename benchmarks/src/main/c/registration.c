/*
 * The C side of Registration: memory registrations (ibv_reg_mr + ibv_dereg_mr of one buffer, 4 KiB to 64 MiB)
 * and RC queue pairs (ibv_create_qp + ibv_destroy_qp) per second on one device: first WARMUP registrations of
 * 4 KiB and WARMUP queue pairs, then each loop run unmeasured for SECONDS; then "ready", and for each line
 * "register SIZE" or "queue-pair 0" on stdin, that loop counted for SECONDS, the clock read once per iteration (as
 * Registration does), printed as
 *   register SIZE OPS_PER_SECOND
 *   queue-pair 0 OPS_PER_SECOND
 * (LabBench holds this program and Registration open and alternates their windows.)
 *
 *   gcc -O2 -o registration registration.c -libverbs
 *   printf 'register 4096\nqueue-pair 0\n' | ./registration rxe0 [SECONDS [WARMUP]]
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "failed: %s\n", #x); exit(1); } } while (0)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static void *buffer;
static size_t size;

static void reg_once(void)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buffer, size,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);

	CHECK(mr);
	CHECK(!ibv_dereg_mr(mr));
}

static void qp_once(void)
{
	struct ibv_qp_init_attr attr = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	CHECK(qp);
	CHECK(!ibv_destroy_qp(qp));
}

/* Runs OP for SECONDS unmeasured (Java's JIT needs it under emulation). */
static void spin(void (*op)(void), double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		op();
}

/* Counts OP for SECONDS. */
static double rate(void (*op)(void), double seconds)
{
	double start = now(), end = start + seconds, t;
	long n = 0;

	do {
		op();
		n++;
	} while ((t = now()) < end);
	return n / (t - start);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 65536, 1 << 20, 64 << 20 };
	double seconds = argc > 2 ? atof(argv[2]) : 2;
	long warmup = argc > 3 ? atol(argv[3]) : 10000;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	CHECK(argc > 1 && list);
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	CHECK(ctx);
	CHECK(pd = ibv_alloc_pd(ctx));
	CHECK(cq = ibv_create_cq(ctx, 32, NULL, NULL, 0));
	CHECK(buffer = aligned_alloc(4096, 64 << 20));
	/* 4 KiB pages, as Registration's: left to transparent huge pages, one process got them and the next not. */
	CHECK(!madvise(buffer, 64 << 20, MADV_NOHUGEPAGE));
	memset(buffer, 1, 64 << 20);
	size = sizes[0];
	for (long i = 0; i < warmup; i++) {
		reg_once();
		qp_once();
	}
	for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size = sizes[i];
		spin(reg_once, seconds);
	}
	spin(qp_once, seconds);
	printf("ready\n");
	fflush(stdout);
	char loop[16];
	size_t bytes;
	while (scanf("%15s %zu", loop, &bytes) == 2) {
		double r;

		if (!strcmp(loop, "register") && bytes > 0 && bytes <= 64 << 20) {
			size = bytes;
			r = rate(reg_once, seconds);
		} else if (!strcmp(loop, "queue-pair")) {
			r = rate(qp_once, seconds);
		} else {
			fprintf(stderr, "no loop %s %zu (register 1..%d, queue-pair 0)\n", loop, bytes, 64 << 20);
			return 1;
		}
		printf("%s %zu %.1f\n", loop, bytes, r);
		fflush(stdout);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
