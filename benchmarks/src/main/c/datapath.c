/*
 * The C side of DataPathBenchmark: the same two RC queue pairs in one process, connected through the device
 * by its first RoCE v2 GID, and the same two operations, timed over N iterations after a warm-up round.
 *
 *   gcc -O2 -o datapath datapath.c -libverbs && ./datapath rxe0 [iterations]
 */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "failed: %s\n", #x); exit(1); } } while (0)

static struct ibv_cq *cq;

static void await(int expected)
{
	struct ibv_wc wc[4];

	for (int seen = 0; seen < expected;) {
		int n = ibv_poll_cq(cq, 4, wc);

		CHECK(n >= 0);
		for (int i = 0; i < n; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS);
		seen += n;
	}
}

static void connect_qp(struct ibv_qp *qp, uint32_t dest, union ibv_gid *gid, int gid_index, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };

	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
			     | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
			     | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "rxe0";
	long iters = argc > 2 ? atol(argv[2]) : 100000;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = NULL;

	CHECK(list);
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	CHECK(dev);
	struct ibv_context *ctx = ibv_open_device(dev);
	CHECK(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(cq);
	struct ibv_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *requester = ibv_create_qp(pd, &init);
	struct ibv_qp *responder = ibv_create_qp(pd, &init);
	CHECK(requester && responder);

	struct ibv_port_attr port;
	CHECK(!ibv_query_port(ctx, 1, &port));
	int gid_index = -1;
	union ibv_gid gid;
	for (int i = 0; i < port.gid_tbl_len && gid_index < 0; i++) {
		struct ibv_gid_entry entry;

		if (!ibv_query_gid_ex(ctx, 1, i, &entry, 0) && entry.gid_type == IBV_GID_TYPE_ROCE_V2) {
			gid_index = i;
			gid = entry.gid;
		}
	}
	CHECK(gid_index >= 0);
	connect_qp(requester, responder->qp_num, &gid, gid_index, port.active_mtu);
	connect_qp(responder, requester->qp_num, &gid, gid_index, port.active_mtu);

	struct ibv_sge out = { .addr = (uintptr_t) buf, .length = 8, .lkey = mr->lkey };
	struct ibv_sge in = { .addr = (uintptr_t) buf + 1024, .length = 64, .lkey = mr->lkey };
	struct ibv_send_wr write = { .wr_id = 1, .sg_list = &out, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t) buf + 2048, .rkey = mr->rkey } };
	struct ibv_send_wr send = { .wr_id = 2, .sg_list = &out, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr recv = { .wr_id = 3, .sg_list = &in, .num_sge = 1 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *bad_recv;

	for (int round = 0; round < 2; round++) { /* round 0 warms up */
		double start = now_ns();

		for (long i = 0; i < iters; i++) {
			CHECK(!ibv_post_send(requester, &write, &bad));
			await(1);
		}
		double middle = now_ns();

		for (long i = 0; i < iters; i++) {
			CHECK(!ibv_post_recv(responder, &recv, &bad_recv));
			CHECK(!ibv_post_send(requester, &send, &bad));
			await(2);
		}
		double end = now_ns();

		if (round == 1) {
			printf("C  rdmaWrite    %10.1f ns/op\n", (middle - start) / iters);
			printf("C  sendReceive  %10.1f ns/op\n", (end - middle) / iters);
		}
	}
	ibv_destroy_qp(requester);
	ibv_destroy_qp(responder);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
